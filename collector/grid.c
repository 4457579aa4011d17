/* The alignment grid: a ring of cells of `step` seconds on CLOCK_REALTIME.
 * Every input covers an interval and is spread over the cells it overlaps
 * in proportion to the overlap, so nothing depends on agents and meters
 * ticking in step with the grid or with each other. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "erg_collector.h"

void erg_grid_init(struct erg_grid *g, unsigned step) {
  memset(g, 0, sizeof *g);
  g->step = step ? step : 5;
}

void erg_grid_free(struct erg_grid *g) {
  for (int i = 0; i < ERG_GRID_SLOTS; i++) {
    free(g->cells[i].keys);
    free(g->cells[i].extra);
  }
  memset(g->cells, 0, sizeof g->cells);
}

static void cell_reset(struct erg_grid_cell *c, int64_t t0) {
  struct erg_grid_key *keys = c->keys;
  struct erg_grid_key_extra *extra = c->extra;
  size_t cap = c->cap;
  memset(c, 0, sizeof *c);
  c->keys = keys;
  c->extra = extra;
  c->cap = cap;
  c->t0 = t0;
}

/* The cell starting at t0, or NULL (with the overlap counted as dropped)
 * when it is already final or too far ahead. */
static struct erg_grid_cell *grid_cell(struct erg_grid *g, int64_t t0, double overlap_s) {
  if (g->next_final == 0)
    g->next_final = t0;
  if (t0 < g->next_final) {
    g->late_seconds_dropped += (uint64_t)ceil(overlap_s);
    return NULL;
  }
  if (t0 >= g->next_final + (int64_t)g->step * ERG_GRID_SLOTS) {
    g->future_seconds_dropped += (uint64_t)ceil(overlap_s);
    return NULL;
  }
  struct erg_grid_cell *c = &g->cells[(t0 / g->step) % ERG_GRID_SLOTS];
  if (c->t0 != t0)
    cell_reset(c, t0);
  return c;
}

struct grid_overlap {
  struct erg_grid_cell *cell;
  double seconds, fraction;
};

/* The cells that [t0, t1) overlaps, with the overlap in seconds and as a
 * fraction of the interval. Intervals are at most an hour (wire check), so
 * they span at most ERG_GRID_SLOTS cells that are still open. */
static size_t grid_overlaps(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns,
                            struct grid_overlap *out) {
  double a = (double)t0_ns / 1e9, b = (double)t1_ns / 1e9;
  int64_t s = (int64_t)g->step;
  size_t n = 0;
  if (b <= a)
    return 0;
  for (int64_t c0 = (int64_t)floor(a / s) * s; c0 < b; c0 += s) {
    double lo = a > c0 ? a : (double)c0;
    double hi = b < c0 + s ? b : (double)(c0 + s);
    if (hi <= lo)
      continue;
    struct erg_grid_cell *cell = grid_cell(g, c0, hi - lo);
    if (cell && n < ERG_GRID_SLOTS)
      out[n++] = (struct grid_overlap){cell, hi - lo, (hi - lo) / (b - a)};
  }
  return n;
}

void erg_grid_add_energy(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns, double joules) {
  struct grid_overlap ov[ERG_GRID_SLOTS];
  size_t n = grid_overlaps(g, t0_ns, t1_ns, ov);
  for (size_t i = 0; i < n; i++) {
    ov[i].cell->meter_joules += joules * ov[i].fraction;
    ov[i].cell->meter_seconds += ov[i].seconds;
  }
}

/* Key i of the cell (added when new), or -1 when out of memory. */
static long cell_key(struct erg_grid_cell *c, const char *key) {
  /* Linear search: a cell holds a node's few dozen active commands. */
  for (size_t i = 0; i < c->nkeys; i++)
    if (strncmp(c->keys[i].key, key, sizeof c->keys[i].key - 1) == 0)
      return (long)i;
  if (c->nkeys == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 16;
    struct erg_grid_key *k = realloc(c->keys, cap * sizeof *k);
    if (k)
      c->keys = k;
    struct erg_grid_key_extra *e = k ? realloc(c->extra, cap * sizeof *e) : NULL;
    if (!e)
      return -1;
    c->extra = e;
    c->cap = cap;
  }
  struct erg_grid_key *k = &c->keys[c->nkeys];
  erg_strlcpy(k->key, key, sizeof k->key);
  k->cpu_seconds = 0;
  c->extra[c->nkeys] = (struct erg_grid_key_extra){0, 0, 0};
  return (long)c->nkeys++;
}

static void cell_add_proc(struct erg_grid_cell *c, const struct erg_grid_proc *p, double f) {
  long i = cell_key(c, p->key);
  if (i < 0)
    return;
  c->keys[i].cpu_seconds += p->cpu_seconds * f;
  c->extra[i].disk_bytes += p->disk_bytes * f;
  c->extra[i].instructions += p->instructions * f;
  c->extra[i].cycles += p->cycles * f;
  c->disk_bytes += p->disk_bytes * f;
  c->instructions += p->instructions * f;
  c->cycles += p->cycles * f;
  c->seen |= (p->disk_bytes > 0) << ERG_FEAT_DISK | (p->instructions > 0) << ERG_FEAT_INSTRUCTIONS |
             (p->cycles > 0) << ERG_FEAT_CYCLES;
}

void erg_grid_add_procs(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns,
                        double busy_cpu_seconds, double system_cpu_seconds,
                        const struct erg_grid_proc *procs, size_t nprocs) {
  struct grid_overlap ov[ERG_GRID_SLOTS];
  size_t n = grid_overlaps(g, t0_ns, t1_ns, ov);
  for (size_t i = 0; i < n; i++) {
    struct erg_grid_cell *c = ov[i].cell;
    double f = ov[i].fraction;
    c->agent_seconds += ov[i].seconds;
    c->busy_cpu_seconds += busy_cpu_seconds * f;
    c->system_cpu_seconds += system_cpu_seconds * f;
    c->seen |= 1u << ERG_FEAT_CPU;
    for (size_t k = 0; k < nprocs; k++)
      cell_add_proc(c, &procs[k], f);
  }
}

void erg_grid_add_sample(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns,
                         double busy_cpu_seconds, double system_cpu_seconds,
                         const char *const *keys, const double *cpu_seconds, size_t nkeys) {
  struct erg_grid_proc *p = calloc(nkeys ? nkeys : 1, sizeof *p);
  if (!p)
    return;
  for (size_t k = 0; k < nkeys; k++)
    p[k] = (struct erg_grid_proc){.key = keys[k], .cpu_seconds = cpu_seconds[k]};
  erg_grid_add_procs(g, t0_ns, t1_ns, busy_cpu_seconds, system_cpu_seconds, p, nkeys);
  free(p);
}

const char *const erg_feature_names[ERG_NFEATURES] = {
    "cpu_seconds_per_second", "disk_bytes_per_second", "instructions_per_second",
    "cycles_per_second"};

int erg_feature_index(const char *name) {
  for (int i = 0; i < ERG_NFEATURES; i++)
    if (!strcmp(erg_feature_names[i], name))
      return i;
  return -1;
}

void erg_grid_key_rates(const struct erg_grid_cell *c, size_t i, unsigned step, double *x) {
  const struct erg_grid_key_extra *e = c->extra ? &c->extra[i] : NULL;
  x[ERG_FEAT_CPU] = c->keys[i].cpu_seconds / step;
  x[ERG_FEAT_DISK] = e ? e->disk_bytes / step : 0;
  x[ERG_FEAT_INSTRUCTIONS] = e ? e->instructions / step : 0;
  x[ERG_FEAT_CYCLES] = e ? e->cycles / step : 0;
}

void erg_grid_node_rates(const struct erg_grid_cell *c, unsigned step, double *x) {
  x[ERG_FEAT_CPU] = c->busy_cpu_seconds / step;
  x[ERG_FEAT_DISK] = c->disk_bytes / step;
  x[ERG_FEAT_INSTRUCTIONS] = c->instructions / step;
  x[ERG_FEAT_CYCLES] = c->cycles / step;
}

/* [system] is the node's busy CPU time that no process accounts for; its
 * other counters are the processes' sums by construction, so none is left. */
void erg_grid_system_rates(const struct erg_grid_cell *c, unsigned step, double *x) {
  double keys = 0;
  for (size_t i = 0; i < c->nkeys; i++)
    keys += c->keys[i].cpu_seconds;
  double rest = c->busy_cpu_seconds - keys;
  x[ERG_FEAT_CPU] = rest > 0 ? rest / step : 0;
  x[ERG_FEAT_DISK] = x[ERG_FEAT_INSTRUCTIONS] = x[ERG_FEAT_CYCLES] = 0;
}

size_t erg_grid_finalize(struct erg_grid *g, int64_t now, unsigned settle_seconds,
                         erg_grid_cell_fn fn, void *user) {
  size_t n = 0;
  if (g->next_final == 0)
    return 0;
  while (g->next_final + (int64_t)g->step + (int64_t)settle_seconds <= now) {
    int64_t t0 = g->next_final;
    struct erg_grid_cell *c = &g->cells[(t0 / g->step) % ERG_GRID_SLOTS];
    if (c->t0 != t0)
      cell_reset(c, t0); /* nothing arrived for this cell */
    struct erg_grid_result r = {.t0 = t0, .step = g->step, .cell = c};
    double half = g->step * 0.5;
    if (c->meter_seconds < half)
      r.flags |= ERG_CELL_NO_METER;
    if (c->agent_seconds < half)
      r.flags |= ERG_CELL_NO_AGENT;
    r.measured_watts = (r.flags & ERG_CELL_NO_METER) ? NAN : c->meter_joules / c->meter_seconds;
    fn(user, &r);
    cell_reset(c, -1);
    g->next_final += g->step;
    n++;
  }
  return n;
}

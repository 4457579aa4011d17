// SPDX-License-Identifier: GPL-3.0-or-later
/* The alignment grid: a ring of cells of `step` seconds on CLOCK_REALTIME.
 * Every input covers an interval and is spread over the cells it overlaps
 * in proportion to the overlap, so nothing depends on agents and meters
 * ticking in step with the grid or with each other. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "erg_collector.h"
#include "grid_int.h"

void erg_grid_init(struct erg_grid *g, unsigned step) {
  memset(g, 0, sizeof *g);
  g->step = step ? step : 5;
  g->nfeeds = 1;
}

int erg_grid_set_feeds(struct erg_grid *g, int nfeeds) {
  if (nfeeds < 0 || nfeeds > ERG_MAX_FEEDS)
    return -1;
  free(g->feed_acc);
  g->feed_acc = NULL;
  g->nfeeds = nfeeds;
  return 0;
}

/* The feeds' accumulators of a ring slot, or NULL before any energy. */
static struct erg_feed_acc *grid_feeds(const struct erg_grid *g, size_t slot) {
  return g->feed_acc ? &g->feed_acc[slot * (size_t)g->nfeeds] : NULL;
}

/* ---- interned keys ----
 * A sample's keys are interned once per grid, so a cell stores pointers
 * and finds a key by its hash instead of comparing strings with every key
 * it holds (a node can have thousands of (command, job, unit, ...) keys). A
 * name lives while an open cell may use it: last_t0 is the newest cell it
 * went into, and names older than the oldest open cell are swept. */
struct grid_name {
  struct grid_name *next;
  uint64_t hash;
  int64_t last_t0;
  char s[];
};

struct grid_names {
  struct grid_name **slots;
  size_t mask, count;
};

static uint64_t grid_hash(const char *s) {
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    h = (h ^ *p) * 1099511628211ULL;
  return h;
}

static struct grid_name *name_of(const char *s) {
  return (struct grid_name *)(s - offsetof(struct grid_name, s));
}

static int names_grow(struct grid_names *t) {
  size_t n = t->slots ? (t->mask + 1) * 2 : 256;
  struct grid_name **slots = calloc(n, sizeof *slots);
  if (!slots)
    return -1;
  for (size_t i = 0; t->slots && i <= t->mask; i++)
    for (struct grid_name *e = t->slots[i], *next; e; e = next) {
      next = e->next;
      e->next = slots[e->hash & (n - 1)];
      slots[e->hash & (n - 1)] = e;
    }
  free(t->slots);
  t->slots = slots;
  t->mask = n - 1;
  return 0;
}

static struct grid_name *grid_intern(struct erg_grid *g, const char *key, int64_t t0) {
  if (!g->names && !(g->names = calloc(1, sizeof *g->names)))
    return NULL;
  struct grid_names *t = g->names;
  if ((!t->slots || t->count > t->mask) && names_grow(t) != 0 && !t->slots)
    return NULL;
  uint64_t h = grid_hash(key);
  struct grid_name **head = &t->slots[h & t->mask];
  for (struct grid_name *e = *head; e; e = e->next)
    if (e->hash == h && !strcmp(e->s, key)) {
      if (e->last_t0 < t0)
        e->last_t0 = t0;
      return e;
    }
  size_t len = strlen(key);
  struct grid_name *e = malloc(sizeof *e + len + 1);
  if (!e)
    return NULL;
  memcpy(e->s, key, len + 1);
  e->hash = h;
  e->last_t0 = t0;
  e->next = *head;
  *head = e;
  t->count++;
  return e;
}

/* Frees the names no open cell can hold: all cells before next_final were
 * finalised and emptied. */
static void grid_sweep(struct erg_grid *g) {
  struct grid_names *t = g->names;
  for (size_t i = 0; t && t->slots && i <= t->mask; i++)
    for (struct grid_name **pp = &t->slots[i]; *pp;) {
      struct grid_name *e = *pp;
      if (e->last_t0 < g->next_final) {
        *pp = e->next;
        free(e);
        t->count--;
      } else {
        pp = &e->next;
      }
    }
}

static void cell_free(struct erg_grid_cell *c) {
  free(c->cand);
  free(c->keys);
  free(c->extra);
  free(c->index);
  memset(c, 0, sizeof *c);
}

void erg_grid_free(struct erg_grid *g) {
  for (int i = 0; i < ERG_GRID_SLOTS; i++)
    cell_free(&g->cells[i]);
  free(g->feed_acc);
  g->feed_acc = NULL;
  erg_tailwin_free(g);
  g->next_final = INT64_MAX;
  grid_sweep(g);
  if (g->names)
    free(g->names->slots);
  free(g->names);
  g->names = NULL;
  g->next_final = 0;
}

static void cell_reset(struct erg_grid *g, struct erg_grid_cell *c, int64_t t0) {
  struct erg_feed_acc *fa = grid_feeds(g, grid_slot(g, t0));
  if (fa)
    memset(fa, 0, (size_t)g->nfeeds * sizeof *fa);
  struct erg_grid_key *keys = c->keys;
  struct erg_grid_key_extra *extra = c->extra;
  uint32_t *index = c->index;
  size_t cap = c->cap;
  free(c->cand);
  memset(c, 0, sizeof *c);
  c->keys = keys;
  c->extra = extra;
  c->index = index;
  c->cap = cap;
  c->t0 = t0;
  if (index)
    memset(index, 0, 2 * cap * sizeof *index);
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
  struct erg_grid_cell *c = &g->cells[grid_slot(g, t0)];
  if (c->t0 != t0)
    cell_reset(g, c, t0);
  return c;
}

struct grid_overlap {
  struct erg_grid_cell *cell;
  double seconds, fraction;
};

/* The cells of `step` seconds that [a, b) (s) overlaps: each one's start
 * and the overlap [lo, hi), in time order. Pure: what to do with each is
 * the caller's. */
typedef void (*grid_span_fn)(void *user, int64_t c0, double lo, double hi);
static void grid_walk(unsigned step, double a, double b, grid_span_fn fn, void *user) {
  int64_t s = (int64_t)step;
  if (!(b > a))
    return;
  for (int64_t c0 = (int64_t)floor(a / s) * s; c0 < b; c0 += s) {
    double lo = a > c0 ? a : (double)c0, hi = b < c0 + s ? b : (double)(c0 + s);
    if (hi > lo)
      fn(user, c0, lo, hi);
  }
}

struct overlaps_ctx {
  struct erg_grid *g;
  double span;
  struct grid_overlap *out;
  size_t n;
};

static void overlaps_span(void *user, int64_t c0, double lo, double hi) {
  struct overlaps_ctx *x = user;
  struct erg_grid_cell *cell = grid_cell(x->g, c0, hi - lo);
  if (cell && x->n < ERG_GRID_SLOTS)
    x->out[x->n++] = (struct grid_overlap){cell, hi - lo, (hi - lo) / x->span};
}

/* The cells that [t0, t1) overlaps, with the overlap in seconds and as a
 * fraction of the interval, opened (or the overlap counted as dropped).
 * Intervals are at most an hour (wire check), so they span at most
 * ERG_GRID_SLOTS cells that are still open. */
static size_t grid_overlaps(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns,
                            struct grid_overlap *out) {
  double a = (double)t0_ns / 1e9, b = (double)t1_ns / 1e9;
  struct overlaps_ctx x = {g, b - a, out, 0};
  grid_walk(g->step, a, b, overlaps_span, &x);
  return x.n;
}

/* Each feed is accounted apart: two outlets of a dual-PSU node each cover
 * the whole cell, and their joules over their seconds would average the
 * outlets, not add them. */
void erg_grid_add_energy(struct erg_grid *g, int feed, uint64_t t0_ns, uint64_t t1_ns,
                         double joules) {
  if (feed < 0 || feed >= g->nfeeds)
    return;
  if (!g->feed_acc &&
      !(g->feed_acc = calloc((size_t)ERG_GRID_SLOTS * (size_t)g->nfeeds, sizeof *g->feed_acc)))
    return;
  struct grid_overlap ov[ERG_GRID_SLOTS];
  size_t n = grid_overlaps(g, t0_ns, t1_ns, ov);
  for (size_t i = 0; i < n; i++) {
    struct erg_feed_acc *fa = &grid_feeds(g, grid_slot(g, ov[i].cell->t0))[feed];
    fa->joules += joules * ov[i].fraction;
    fa->seconds += ov[i].seconds;
  }
}

void erg_grid_add_sample_var(struct erg_grid *g, int feed, uint64_t t0_ns, uint64_t t1_ns,
                             double var_joules2) {
  if (feed < 0 || feed >= g->nfeeds || !g->feed_acc || !(var_joules2 > 0))
    return;
  struct grid_overlap ov[ERG_GRID_SLOTS];
  size_t n = grid_overlaps(g, t0_ns, t1_ns, ov);
  for (size_t i = 0; i < n; i++)
    grid_feeds(g, grid_slot(g, ov[i].cell->t0))[feed].sample_var_joules2 +=
        var_joules2 * ov[i].fraction;
}

/* Σ over feeds of the variance of each feed's mean power. */
static double grid_sample_var_watts2(const struct erg_grid *g, int64_t t0) {
  const struct erg_feed_acc *fa = grid_feeds(g, grid_slot(g, t0));
  double v = 0;
  for (int f = 0; fa && f < g->nfeeds; f++)
    if (fa[f].seconds > 0)
      v += fa[f].sample_var_joules2 / (fa[f].seconds * fa[f].seconds);
  return v;
}

void erg_grid_touch(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns) {
  struct grid_overlap ov[ERG_GRID_SLOTS];
  grid_overlaps(g, t0_ns, t1_ns, ov);
}

/* Σ over feeds of each feed's mean power, or NAN when a feed covered less
 * than half the cell: a dead PSU feed must not silently halve the node. */
static double grid_measured_watts(const struct erg_grid *g, int64_t t0) {
  const struct erg_feed_acc *fa = grid_feeds(g, grid_slot(g, t0));
  double watts = 0;
  if (!fa || g->nfeeds == 0)
    return NAN;
  for (int f = 0; f < g->nfeeds; f++) {
    if (fa[f].seconds < g->step * 0.5)
      return NAN;
    watts += fa[f].joules / fa[f].seconds;
  }
  /* A residual (inlet - outlets) read at slightly different moments can
   * dip below 0 while the load moves: no meter draws less than nothing. */
  return watts < 0 ? 0 : watts;
}

double erg_grid_open_watts(const struct erg_grid *g, int64_t t0) {
  return t0 < 0 || g->step == 0 ? NAN : grid_measured_watts(g, t0);
}

const struct erg_grid_cell *erg_grid_open_cell(const struct erg_grid *g, int64_t t0) {
  if (t0 < 0 || g->step == 0)
    return NULL;
  const struct erg_grid_cell *c = &g->cells[grid_slot(g, t0)];
  return c->t0 == t0 ? c : NULL;
}

/* Doubles the cell's arrays and rebuilds its index (2 * cap slots, a
 * power of two, so probing by hash & mask stays short). */
static int cell_grow(struct erg_grid_cell *c) {
  size_t cap = c->cap ? c->cap * 2 : 16;
  struct erg_grid_key *k = realloc(c->keys, cap * sizeof *k);
  if (k)
    c->keys = k;
  struct erg_grid_key_extra *e = k ? realloc(c->extra, cap * sizeof *e) : NULL;
  if (e)
    c->extra = e;
  uint32_t *ix = e ? calloc(2 * cap, sizeof *ix) : NULL;
  if (!ix)
    return -1;
  free(c->index);
  c->index = ix;
  c->cap = cap;
  for (size_t i = 0; i < c->nkeys; i++) {
    size_t j = name_of(c->keys[i].key)->hash & (2 * cap - 1);
    while (ix[j])
      j = (j + 1) & (2 * cap - 1);
    ix[j] = (uint32_t)i + 1;
  }
  return 0;
}

/* Index of the interned key in the cell (added when new), or -1 when out
 * of memory. */
static long cell_key(struct erg_grid_cell *c, const struct grid_name *name) {
  if (c->nkeys == c->cap && cell_grow(c) != 0)
    return -1;
  size_t mask = 2 * c->cap - 1, j = name->hash & mask;
  for (; c->index[j]; j = (j + 1) & mask)
    if (c->keys[c->index[j] - 1].key == name->s)
      return (long)c->index[j] - 1;
  c->index[j] = (uint32_t)c->nkeys + 1;
  c->keys[c->nkeys] = (struct erg_grid_key){name->s, 0};
  c->extra[c->nkeys] = (struct erg_grid_key_extra){0};
  return (long)c->nkeys++;
}

/* f: the sample's fraction in the cell; curve_per_cpu: the sample's curve
 * power per busy CPU-second per second (W·s of curve energy per CPU-s). */
static void cell_add_proc(struct erg_grid_cell *c, const struct grid_name *name,
                          const struct erg_grid_proc *p, double f, double curve_per_cpu) {
  long i = name ? cell_key(c, name) : -1;
  if (i < 0)
    return;
  c->keys[i].cpu_seconds += p->cpu_seconds * f;
  c->extra[i].curve_joules += p->cpu_seconds * f * curve_per_cpu;
  c->extra[i].disk_bytes += p->disk_bytes * f;
  c->extra[i].instructions += p->instructions * f;
  c->extra[i].cycles += p->cycles * f;
  c->extra[i].gpu_joules += p->gpu_joules * f;
  c->disk_bytes += p->disk_bytes * f;
  c->instructions += p->instructions * f;
  c->cycles += p->cycles * f;
  c->seen |= (p->disk_bytes > 0) << ERG_FEAT_DISK | (p->instructions > 0) << ERG_FEAT_INSTRUCTIONS |
             (p->cycles > 0) << ERG_FEAT_CYCLES;
}

struct tails_ctx {
  struct erg_grid *g;
  double tail[ERG_NDERIVED];
};

static void tails_span(void *user, int64_t c0, double lo, double hi) {
  struct tails_ctx *x = user;
  struct erg_grid_cell *c = grid_open_cell(x->g, c0);
  if (!c)
    return;
  for (int d = 0; d < ERG_NDERIVED; d++)
    c->tail_seconds[d] += x->tail[d] * (hi - lo);
  c->tail_covered_seconds += hi - lo;
  c->tail_ncpu = x->g->ncpu;
}

/* The curve's tails at the utilisation of [t0_ns, t1_ns) (busy CPU s in
 * it), added to each cell it overlaps for its seconds there: a cell's mean
 * of them is what the meter shows of a load that changes within the cell.
 * Only cells the sample already opened (no drop counted twice). Returns
 * the curve's energy there (J) with the grid's curve_coef, 0 without. */
static double grid_add_tails(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns,
                             double busy_cpu_seconds) {
  struct tails_ctx x = {.g = g};
  double a = (double)t0_ns / 1e9, b = (double)t1_ns / 1e9, watts = 0;
  if (!(g->ncpu > 0 && b > a))
    return 0;
  for (int d = 0; d < ERG_NDERIVED; d++) {
    if (!isfinite(x.tail[d] = erg_derived_value(d, busy_cpu_seconds / (b - a), g->ncpu)))
      return 0;
    watts += g->curve_coef[d] > 0 ? g->curve_coef[d] * x.tail[d] : 0;
  }
  grid_walk(g->step, a, b, tails_span, &x);
  return isfinite(watts) ? watts * (b - a) : 0;
}

void erg_grid_add_procs_sliced(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns,
                               double busy_cpu_seconds, double system_cpu_seconds,
                               const struct erg_grid_proc *procs, size_t nprocs,
                               const struct erg_grid_slice *slices, size_t nslices) {
  struct grid_overlap ov[ERG_GRID_SLOTS];
  size_t n = grid_overlaps(g, t0_ns, t1_ns, ov);
  if (n == 0)
    return;
  /* Intern each key once for all the cells the sample spans. */
  int64_t newest = ov[n - 1].cell->t0;
  struct grid_name **names = malloc((nprocs ? nprocs : 1) * sizeof *names);
  if (!names)
    return;
  for (size_t k = 0; k < nprocs; k++)
    names[k] = grid_intern(g, procs[k].key ? procs[k].key : "", newest);
  /* The tails per slice when the agent sub-sampled (issue 38: the load
   * changes within a sample, the power follows it), else the sample's. */
  double curve_joules = 0, curve_span = 0, span = (double)(t1_ns - t0_ns) / 1e9;
  if (nslices) {
    for (size_t i = 0; i < nslices; i++) {
      curve_joules +=
          grid_add_tails(g, slices[i].t0_ns, slices[i].t1_ns, slices[i].busy_cpu_seconds);
      if (slices[i].t1_ns > slices[i].t0_ns)
        curve_span += (double)(slices[i].t1_ns - slices[i].t0_ns) / 1e9;
    }
    /* ... and over windows of the meter's updates, to choose from. */
    erg_tailwin_add_slices(g, slices, nslices);
  } else {
    curve_joules = grid_add_tails(g, t0_ns, t1_ns, busy_cpu_seconds);
    curve_span = span;
  }
  /* The curve's mean power over the sample per busy CPU-second per
   * second: each key's CPU time × it is its share of the curve's energy,
   * the sample's CPU shares applied to the sample's power. */
  double per_cpu = curve_span > 0 && busy_cpu_seconds > 0
                       ? curve_joules / curve_span / (busy_cpu_seconds / span)
                       : 0;
  for (size_t i = 0; i < n; i++) {
    struct erg_grid_cell *c = ov[i].cell;
    double f = ov[i].fraction;
    c->agent_seconds += ov[i].seconds;
    c->curve_joules += busy_cpu_seconds * f * per_cpu;
    c->busy_cpu_seconds += busy_cpu_seconds * f;
    c->system_cpu_seconds += system_cpu_seconds * f;
    c->seen |= 1u << ERG_FEAT_CPU;
    for (size_t k = 0; k < nprocs; k++)
      cell_add_proc(c, names[k], &procs[k], f, per_cpu);
  }
  free(names);
}

void erg_grid_add_procs(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns, double busy_cpu_seconds,
                        double system_cpu_seconds, const struct erg_grid_proc *procs,
                        size_t nprocs) {
  erg_grid_add_procs_sliced(g, t0_ns, t1_ns, busy_cpu_seconds, system_cpu_seconds, procs, nprocs,
                            NULL, 0);
}

void erg_grid_add_gpu(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns, double joules,
                      double idle_joules) {
  struct grid_overlap ov[ERG_GRID_SLOTS];
  size_t n = grid_overlaps(g, t0_ns, t1_ns, ov);
  for (size_t i = 0; i < n; i++) {
    ov[i].cell->gpu_joules += joules * ov[i].fraction;
    ov[i].cell->gpu_idle_joules += idle_joules * ov[i].fraction;
    ov[i].cell->gpu_seconds += ov[i].seconds;
    ov[i].cell->seen |= 1u << ERG_FEAT_GPU;
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
    "cycles_per_second", "gpu_watts"};

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
  x[ERG_FEAT_GPU] = e ? e->gpu_joules / step : 0;
}

/* The node's GPU board energy over the cell (joules: its gpu_joules or
 * gpu_idle_joules): where GPU readings covered less of it than the
 * agent's samples did (the GPUs lost mid-cell), the boards drew on at the
 * power they were read at; the part no reading covered is nobody's
 * ([system]). */
static double grid_gpu_joules(const struct erg_grid_cell *c, double joules) {
  double agent = c->agent_seconds;
  if (c->gpu_seconds > 0 && c->gpu_seconds < agent)
    return joules * agent / c->gpu_seconds;
  return joules;
}

void erg_grid_node_rates(const struct erg_grid_cell *c, unsigned step, double *x) {
  x[ERG_FEAT_CPU] = c->busy_cpu_seconds / step;
  x[ERG_FEAT_DISK] = c->disk_bytes / step;
  x[ERG_FEAT_INSTRUCTIONS] = c->instructions / step;
  x[ERG_FEAT_CYCLES] = c->cycles / step;
  x[ERG_FEAT_GPU] = grid_gpu_joules(c, c->gpu_joules) / step;
}

/* [system] is the node's busy CPU time and GPU board energy that no
 * process accounts for (an idle GPU's power, processes gone or outside
 * the agent's scope); its other counters are the processes' sums by
 * construction, so none is left. */
void erg_grid_system_rates(const struct erg_grid_cell *c, unsigned step, double *x) {
  double keys = 0, gpu = 0;
  for (size_t i = 0; i < c->nkeys; i++) {
    keys += c->keys[i].cpu_seconds;
    gpu += c->extra ? c->extra[i].gpu_joules : 0;
  }
  double rest = c->busy_cpu_seconds - keys, gpu_rest = grid_gpu_joules(c, c->gpu_joules) - gpu;
  x[ERG_FEAT_CPU] = rest > 0 ? rest / step : 0;
  x[ERG_FEAT_DISK] = x[ERG_FEAT_INSTRUCTIONS] = x[ERG_FEAT_CYCLES] = 0;
  x[ERG_FEAT_GPU] = gpu_rest > 0 ? gpu_rest / step : 0;
}

double erg_grid_gpu_idle_rate(const struct erg_grid_cell *c, unsigned step) {
  double sys[ERG_NFEATURES], idle = grid_gpu_joules(c, c->gpu_idle_joules) / step;
  erg_grid_system_rates(c, step, sys);
  /* Never more than [system] has: the keys' shares are of busy GPUs. */
  idle = idle < sys[ERG_FEAT_GPU] ? idle : sys[ERG_FEAT_GPU];
  return isfinite(idle) && idle > 0 ? idle : 0;
}

/* No open cell has data. */
static int grid_is_empty(const struct erg_grid *g) {
  for (int i = 0; i < ERG_GRID_SLOTS; i++)
    if (g->cells[i].t0 >= g->next_final)
      return 0;
  return 1;
}

/* Nothing arrived and the first cell to close lies more than a ring
 * behind (a node resumed after a long stop: its last stored cell may be
 * days or years old): only the last ring's worth of empty cells is
 * closed, not every cell since, which would hold up the loop as long. */
static void grid_skip_empty(struct erg_grid *g, int64_t now, unsigned settle_seconds) {
  int64_t step = (int64_t)g->step, span = step * ERG_GRID_SLOTS;
  int64_t from = now - (int64_t)settle_seconds - step - span;
  if (g->next_final >= from || from <= 0 || !grid_is_empty(g))
    return;
  g->skipped_cells += (uint64_t)((from - from % step - g->next_final) / step);
  g->next_final = from - from % step;
}

size_t erg_grid_finalize(struct erg_grid *g, int64_t now, unsigned settle_seconds,
                         erg_grid_cell_fn fn, void *user) {
  size_t n = 0;
  if (g->next_final == 0)
    return 0;
  grid_skip_empty(g, now, settle_seconds);
  while (g->next_final + (int64_t)g->step + (int64_t)settle_seconds <= now) {
    int64_t t0 = g->next_final;
    struct erg_grid_cell *c = &g->cells[grid_slot(g, t0)];
    if (c->t0 != t0)
      cell_reset(g, c, t0); /* nothing arrived for this cell */
    struct erg_grid_result r = {.t0 = t0, .step = g->step, .cell = c};
    r.measured_watts = grid_measured_watts(g, t0);
    if (isnan(r.measured_watts))
      r.flags |= ERG_CELL_NO_METER;
    else
      r.sample_var_watts2 = grid_sample_var_watts2(g, t0);
    if (c->agent_seconds < g->step * 0.5)
      r.flags |= ERG_CELL_NO_AGENT;
    erg_tailwin_cell(g, c, r.measured_watts);
    fn(user, &r);
    /* A final cell gives its arrays back: only the few open cells of the
     * ring hold memory, not all ERG_GRID_SLOTS of every node. */
    cell_free(c);
    c->t0 = -1;
    g->next_final += g->step;
    n++;
  }
  if (n)
    grid_sweep(g);
  return n;
}

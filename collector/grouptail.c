// SPDX-License-Identifier: GPL-3.0-or-later
/* The curve's tails' window of a shared meter's members (tailwin.c's
 * candidates, chosen once for the group; docs/model.md "The tails'
 * window").
 *
 * A member's measured power is the whole meter, so a single-node fit of it
 * cannot tell which window the meter follows (held-out RMSEs of 17-105 W,
 * choices flapping every few cells). The members share the meter and its
 * updates, so one window serves them all: every ERG_TAILWIN_EVERY usable
 * cells the group's last GROUP_TAILWIN_ROWS are fitted jointly once per
 * candidate (erg_group_fit, per node with each member's curve, 4 time-block
 * folds; in a thread, under the fit lock), and the candidate with the
 * lowest held-out RMSE (erg_tailwin_pick) becomes every member's. Before
 * the members' cells are split, each one's open cell takes the chosen
 * tails, so the split's predictions, the journal and the attribution see
 * them. Until the rows suffice for the members' curves, and in groups whose
 * curves need more rows than are kept (over 9 members), the members keep
 * the slices as they came. The choice is
 * kept across restarts in JOURNAL_DIR/GROUP.group.tailwin (tailwin.c's
 * file). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector_int.h"
#include "erg_fit.h"
#include "grid_int.h"
#include "state.h"

/* Rows kept: enough for the members' curves (ERG_GROUP_ROWS_PER_COLUMN per
 * column: 4 members of 8 columns need 320). */
#define GROUP_TAILWIN_ROWS 720

struct group_tail_member {
  double cpu, disk, ncpu;
  float tails[ERG_TAILWIN_CANDS][ERG_NDERIVED]; /* NaN: not known */
};

/* One choice's fits, off the loop (as tailwin.c's). */
struct group_tail_job {
  pthread_t thread;
  struct group_tail_rows rows; /* a copy, oldest first */
  bool use[ERG_TAILWIN_CANDS];
  double rmse_watts[ERG_TAILWIN_CANDS];
  atomic_int done, cancel;
};

struct group_tailwin {
  struct group_tail_rows rows; /* ring */
  size_t head, since_choice;
  unsigned same; /* choices in a row that kept the candidate */
  int chosen;
  struct group_tail_job *job;
};

static struct group_tail_member *row_member(const struct group_tail_rows *r, size_t i, int m) {
  return &r->member[i * (size_t)r->nmembers + (size_t)m];
}

int group_tail_rows_alloc(struct group_tail_rows *r, int nmembers, size_t cap, unsigned step) {
  memset(r, 0, sizeof *r);
  r->watts = malloc(cap * sizeof *r->watts);
  r->member = malloc(cap * (size_t)nmembers * sizeof *r->member);
  if (!r->watts || !r->member) {
    group_tail_rows_free(r);
    return -1;
  }
  r->nmembers = nmembers;
  r->cap = cap;
  r->step = step;
  return 0;
}

void group_tail_rows_free(struct group_tail_rows *r) {
  free(r->watts);
  free(r->member);
  memset(r, 0, sizeof *r);
}

int group_tail_rows_set(struct group_tail_rows *r, size_t i, double meter_watts, int m, double cpu,
                        double disk, double ncpu,
                        const double tails[ERG_TAILWIN_CANDS][ERG_NDERIVED]) {
  if (i >= r->cap || m < 0 || m >= r->nmembers)
    return -1;
  r->watts[i] = meter_watts;
  struct group_tail_member *e = row_member(r, i, m);
  e->cpu = cpu;
  e->disk = disk;
  e->ncpu = ncpu;
  for (int c = 0; c < ERG_TAILWIN_CANDS; c++)
    for (int d = 0; d < ERG_NDERIVED; d++)
      e->tails[c][d] = (float)tails[c][d];
  return 0;
}

/* Row i has candidate c for every member. */
static bool row_has(const struct group_tail_rows *r, size_t i, int c) {
  for (int m = 0; m < r->nmembers; m++)
    if (!isfinite(row_member(r, i, m)->tails[c][0]))
      return false;
  return true;
}

/* The joint fit's held-out RMSE with candidate c's tails over the rows that
 * have every candidate in use; NaN when it does not fit with each member's
 * curve (then the window does not matter to it). */
static double group_tail_score(const struct group_tail_rows *r, const bool *use, int c,
                               const atomic_int *cancel) {
  int n = r->nmembers;
  struct erg_dataset ds[ERG_GROUP_MAX_NODES];
  const struct erg_dataset *mem[ERG_GROUP_MAX_NODES];
  char names[ERG_GROUP_MAX_NODES][16], why[512];
  const char *nodes[ERG_GROUP_MAX_NODES];
  struct erg_model *models = calloc((size_t)n, sizeof *models);
  double rmse = NAN;
  for (int m = 0; m < n; m++) {
    erg_dataset_init(&ds[m]);
    mem[m] = &ds[m];
    snprintf(names[m], sizeof names[m], "m%d", m);
    nodes[m] = names[m];
  }
  if (!models)
    goto out;
  for (int m = 0; m < n; m++)
    if (erg_tailwin_dataset(&ds[m], why, sizeof why) != 0)
      goto out;
  for (size_t i = 0; i < r->nrows; i++) {
    bool all = true;
    for (int k = 0; k < ERG_TAILWIN_CANDS && all; k++)
      all = !use[k] || row_has(r, i, k);
    for (int m = 0; m < n && all; m++) {
      const struct group_tail_member *e = row_member(r, i, m);
      double x[3 + ERG_NDERIVED] = {e->cpu, e->disk, e->ncpu};
      for (int d = 0; d < ERG_NDERIVED; d++)
        x[3 + d] = e->tails[c][d];
      if (erg_dataset_add_row(&ds[m], (double)i * r->step, r->step, r->watts[i], 0, x) != 0)
        goto out;
    }
  }
  for (int m = 0; m < n; m++)
    if (erg_dataset_derive(&ds[m], 0, why, sizeof why) < 0)
      goto out;
  struct erg_group_options o;
  struct erg_group_result res;
  erg_group_options_init(&o);
  o.name = "tails";
  o.form = ERG_GROUP_PER_NODE;
  o.require_shared = false;
  o.fit.folds = 4;
  o.fit.cancel = cancel;
  if (erg_group_fit(mem, nodes, (size_t)n, &o, models, &res, why, sizeof why) == 0 &&
      res.curve_per_node)
    rmse = res.metrics.rmse_watts;
out:
  for (int m = 0; m < n; m++)
    erg_dataset_free(&ds[m]);
  free(models);
  return rmse;
}

void group_tail_choose(const struct group_tail_rows *r, const bool *use, const atomic_int *cancel,
                       double *rmse_watts) {
  for (int c = 0; c < ERG_TAILWIN_CANDS; c++)
    rmse_watts[c] =
        use[c] && !(cancel && atomic_load(cancel)) ? group_tail_score(r, use, c, cancel) : NAN;
}

static void group_tail_job_free(struct group_tail_job *job) {
  if (!job)
    return;
  group_tail_rows_free(&job->rows);
  free(job);
}

/* The thread: the fits under the fit lock (waited for in steps, so that a
 * cancel at shutdown is not held up by a refit). */
static void *group_tail_main(void *arg) {
  struct group_tail_job *job = arg;
  for (int c = 0; c < ERG_TAILWIN_CANDS; c++)
    job->rmse_watts[c] = NAN;
  while (!erg_fit_trylock()) {
    if (atomic_load(&job->cancel)) {
      atomic_store_explicit(&job->done, 1, memory_order_release);
      return NULL;
    }
    nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
  }
  group_tail_choose(&job->rows, job->use, &job->cancel, job->rmse_watts);
  erg_fit_unlock();
  atomic_store_explicit(&job->done, 1, memory_order_release);
  return NULL;
}

/* Starts the fits over the rows kept (oldest first): true started. */
static bool group_tail_start(struct group_tailwin *tw) {
  const struct group_tail_rows *r = &tw->rows;
  size_t have[ERG_TAILWIN_CANDS] = {0};
  bool use[ERG_TAILWIN_CANDS];
  for (size_t i = 0; i < r->nrows; i++)
    for (int c = 0; c < ERG_TAILWIN_CANDS; c++)
      have[c] += row_has(r, i, c);
  /* A candidate that most recent cells lack is not compared. */
  for (int c = 0; c < ERG_TAILWIN_CANDS; c++)
    use[c] = have[c] >= r->nrows * 3 / 4 && have[c] >= ERG_TAILWIN_MIN_ROWS;
  if (!use[0])
    return false;
  struct group_tail_job *job = calloc(1, sizeof *job);
  if (!job || group_tail_rows_alloc(&job->rows, r->nmembers, r->nrows, r->step) != 0) {
    free(job);
    return false;
  }
  size_t first = (tw->head + r->cap - r->nrows) % r->cap, nm = (size_t)r->nmembers;
  for (size_t i = 0; i < r->nrows; i++) {
    size_t j = (first + i) % r->cap;
    job->rows.watts[i] = r->watts[j];
    memcpy(&job->rows.member[i * nm], &r->member[j * nm], nm * sizeof *r->member);
  }
  job->rows.nrows = r->nrows;
  memcpy(job->use, use, sizeof use);
  if (pthread_create(&job->thread, NULL, group_tail_main, job) != 0) {
    group_tail_job_free(job);
    return false;
  }
  tw->job = job;
  return true;
}

/* The group's file under JOURNAL_DIR: GROUP.group(.tailwin), beside the
 * nodes' NODE.tailwin. */
static void group_tail_file(const struct group_state *g, char file[200]) {
  snprintf(file, 200, "%s.group", g->cfg->name);
}

/* The last run's choice, every member's until this run's first. */
static void group_tail_restore(struct collector *c, struct group_state *g) {
  char file[200], path[1200], why[1400];
  struct erg_tailwin_saved s;
  group_tail_file(g, file);
  int rc = erg_tailwin_file_path(c->journal_dir, file, path, sizeof path) == 0
               ? erg_tailwin_file_read(path, &s, why, sizeof why)
               : 0;
  if (rc < 0 && c->tailwin_file_errors++ == 0)
    erg_warn("group %s: the tails' window of the last run not used: %s (further ones only "
             "counted: erg_tailwin_file_errors_total)",
             g->cfg->name, why);
  if (rc <= 0 || s.chosen == 0)
    return;
  g->tailwin->chosen = s.chosen;
  for (int m = 0; m < g->nmembers; m++)
    erg_tailwin_restore(&g->members[m]->grid, &s, erg_time_realtime_ns());
  erg_info("group %s: the members' curve tails from %s (from the last run), until this run's "
           "data choose",
           g->cfg->name, erg_tailwin_what(s.chosen));
}

static void group_tail_save(struct collector *c, const struct group_state *g, double update_s) {
  char file[200];
  group_tail_file(g, file);
  tailwin_save(c, "group", g->cfg->name, file, g->tailwin->chosen, update_s);
}

/* A finished job's choice becomes every member's. */
static void group_tail_collect(struct collector *c, struct group_state *g) {
  struct group_tailwin *tw = g->tailwin;
  struct group_tail_job *job = tw->job;
  if (!job || !atomic_load_explicit(&job->done, memory_order_acquire))
    return;
  pthread_join(job->thread, NULL);
  tw->job = NULL;
  const double *e = job->rmse_watts;
  int choice = erg_tailwin_pick(e, tw->chosen);
  if (choice >= 0) {
    tw->same = choice == tw->chosen ? tw->same + 1 : 0;
    bool changed = choice != tw->chosen;
    if (changed)
      erg_info("group %s: the members' curve tails from %s (the joint fit's held-out RMSE "
               "%.3f / %.3f / %.3f / %.3f / %.3f W)",
               g->cfg->name, erg_tailwin_what(choice), e[0], e[1], e[2], e[3], e[4]);
    tw->chosen = choice;
    for (int m = 0; m < g->nmembers; m++)
      erg_tailwin_set(&g->members[m]->grid, choice, e);
    if (changed) {
      struct erg_tailwin_status st;
      erg_tailwin_status(&g->members[0]->grid, &st);
      group_tail_save(c, g, st.update_seconds);
    }
  }
  group_tail_job_free(job);
}

void group_tailwin_cell(struct collector *c, struct group_state *g, int64_t t0) {
  unsigned step = c->cfg->step_seconds;
  /* The rows the members' curves need: 10 per column, ERG_NDERIVED columns
   * a member at least (below, every candidate would score NaN). A group
   * that needs more than are kept never chooses: no rows kept for it. */
  size_t need = (size_t)ERG_GROUP_ROWS_PER_COLUMN * (size_t)g->nmembers * ERG_NDERIVED;
  if (g->nmembers > ERG_GROUP_MAX_NODES || need > GROUP_TAILWIN_ROWS)
    return;
  if (!g->tailwin) {
    if (!(g->tailwin = calloc(1, sizeof *g->tailwin)))
      return;
    if (group_tail_rows_alloc(&g->tailwin->rows, g->nmembers, GROUP_TAILWIN_ROWS, step) != 0) {
      free(g->tailwin);
      g->tailwin = NULL;
      return;
    }
    group_tail_restore(c, g);
  }
  struct group_tailwin *tw = g->tailwin;
  group_tail_collect(c, g);
  /* A row when every member has the cell's slices windowed and the agent's
   * data for half of it, and the meter a reading. */
  double meter = erg_grid_open_watts(&g->members[0]->grid, t0);
  struct erg_grid_cell *cells[ERG_GROUP_MAX_NODES];
  bool row = isfinite(meter);
  for (int m = 0; m < g->nmembers; m++) {
    struct erg_grid *gr = &g->members[m]->grid;
    cells[m] = grid_open_cell(gr, t0);
    row = row && cells[m] && cells[m]->cand && cells[m]->tail_covered_seconds > 0 &&
          cells[m]->agent_seconds >= step * 0.5 && gr->ncpu > 0;
  }
  if (row) {
    for (int m = 0; m < g->nmembers; m++) {
      double t[ERG_TAILWIN_CANDS][ERG_NDERIVED];
      for (int k = 0; k < ERG_TAILWIN_CANDS; k++)
        erg_tailwin_cell_tails(cells[m], k, t[k]);
      group_tail_rows_set(&tw->rows, tw->head, meter, m, cells[m]->busy_cpu_seconds / step,
                          cells[m]->disk_bytes / step, g->members[m]->grid.ncpu, t);
    }
    tw->head = (tw->head + 1) % tw->rows.cap;
    if (tw->rows.nrows < tw->rows.cap)
      tw->rows.nrows++;
    /* Once the rows are enough; then as tailwin.c, 5 times as seldom once
     * three choices in a row kept it (a choice of 4 members over 720 rows
     * is ~0.3 s of CPU, docs/benchmarks.md). */
    size_t every = tw->same >= 3 ? 5 * ERG_TAILWIN_EVERY : ERG_TAILWIN_EVERY;
    if (++tw->since_choice >= every && tw->rows.nrows >= need && !tw->job && group_tail_start(tw))
      tw->since_choice = 0;
  }
  /* The chosen candidate's tails become the members' open cells'. */
  for (int m = 0; m < g->nmembers; m++)
    if (cells[m])
      erg_tailwin_apply(&g->members[m]->grid, cells[m]);
}

void group_tailwin_free(struct group_state *g) {
  struct group_tailwin *tw = g->tailwin;
  if (!tw)
    return;
  if (tw->job) {
    atomic_store(&tw->job->cancel, 1);
    pthread_join(tw->job->thread, NULL);
    group_tail_job_free(tw->job);
  }
  group_tail_rows_free(&tw->rows);
  free(tw);
  g->tailwin = NULL;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* The curve's tails over windows in phase with the meter (issue 38).
 *
 * A meter shows the node's power as it follows the load over some window:
 * a real node's power follows within milliseconds and the meter integrates
 * it (the agent's finest busy-time slices are right), a simulator or a BMC
 * may compute it per update from the load over that update (windows of the
 * update, in phase with it, are right; finer slices bias the fitted curve
 * low at light load, coarser or out-of-phase ones high). ergd sees when a
 * meter's power reading changes; from those times it estimates the meter's
 * update period and phase, and besides the slices' own tails (candidate 0,
 * the cell's tail_seconds) it accumulates the tails over windows of one update
 * and of two (either pair), in phase with them. Every ERG_TAILWIN_EVERY cells it fits the
 * node's recent cells once per candidate and keeps the one whose held-out
 * RMSE is lowest: the finalised cells then carry that candidate's tails
 * (journal, prediction, attribution). Without slices nothing here runs: the
 * tails stay those of each agent sample.
 *
 * The fits (5 × 4 folds, ~20 ms a node) run off ergd's loop: a thread per
 * choice works on a copy of the rows, and the loop takes its result at the
 * next cell after it finished (the cells between keep the candidate in
 * use). ergd's fits take erg_fit_lock (erg_fit switches GSL's process-wide
 * error handler for its call). The choice is kept across restarts
 * (erg_tailwin_file_*, JOURNAL_DIR/NODE.tailwin). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "erg_collector.h"
#include "erg_fit.h"
#include "grid_int.h"

/* Candidate c's windows: mult[c] meter updates long, starting at the
 * updates numbered offset[c] modulo mult[c] (0: the slices as they came);
 * each window has the mean of its slices' tails (the power follows the
 * slices, the meter shows it per update and a cell gets an update that
 * straddles its border in proportion, as the energy) or the tails of its
 * mean utilisation (the power follows the window's load). */
static const int tailwin_mult[ERG_TAILWIN_CANDS] = {0, 1, 1, 2, 2};
static const int tailwin_offset[ERG_TAILWIN_CANDS] = {0, 0, 0, 0, 1};
static const bool tailwin_mean_of_tails[ERG_TAILWIN_CANDS] = {true, true, false, false, false};

struct tailwin_acc {
  double w0, w1, busy, covered;      /* the window being filled; w1 = 0: none */
  double from, to;                   /* the part its slices covered, first to last */
  double last_end;                   /* where the last window ended */
  double tail_seconds[ERG_NDERIVED]; /* its slices' tails × their seconds */
};

struct tailwin_row {
  double watts, cpu, disk, ncpu;
  float tails[ERG_TAILWIN_CANDS][ERG_NDERIVED]; /* NaN: not known */
};

/* One choice's fits, off the loop: the thread reads rows, use and step,
 * writes rmse, then sets done; the loop reads rmse after it joined. */
struct tailwin_job {
  pthread_t thread;
  struct tailwin_row *rows; /* a copy, oldest first */
  size_t nrows;
  bool use[ERG_TAILWIN_CANDS];
  unsigned step;
  double rmse_watts[ERG_TAILWIN_CANDS];
  atomic_int done, cancel;
};

struct erg_tailwin {
  /* Observed updates (load time, s): the midpoint of the poll interval
   * the reading changed in. */
  double upd[ERG_TAILWIN_UPDATES], upd_lo[ERG_TAILWIN_UPDATES], upd_hi[ERG_TAILWIN_UPDATES];
  int64_t label[ERG_TAILWIN_UPDATES]; /* each update's number, counted on (a gap of two: +2) */
  size_t nupd, upd_head, since_estimate;
  double period_s; /* 0: not known */
  /* The meter held a reading over polls (period ≥ 1.5 × the median poll
   * interval it changed in): its updates are seen. Otherwise it may
   * update faster than it is polled, and windows of the polls are no
   * window the power follows: only the slices are offered. */
  bool resolved;
  double anchor_s; /* the fitted time of the newest update */
  /* Times here are seconds after epoch_s (unix seconds, a multiple of the
   * step): unix seconds as doubles are too coarse to split a 0.1 s slice. */
  int64_t epoch_s;
  int64_t anchor_label;
  struct tailwin_acc acc[ERG_TAILWIN_CANDS];
  struct tailwin_row *rows; /* ring of the last ERG_TAILWIN_ROWS usable cells */
  size_t nrows, row_head, since_choice;
  unsigned same;           /* choices in a row that kept the candidate */
  struct tailwin_job *job; /* the choice's fits under way; NULL: none */
  struct erg_tailwin_status st;
};

/* ergd's fits, one at a time (erg_fit's GSL handler switch is
 * process-wide). */
static pthread_mutex_t fit_mutex = PTHREAD_MUTEX_INITIALIZER;
void erg_fit_lock(void) { pthread_mutex_lock(&fit_mutex); }
void erg_fit_unlock(void) { pthread_mutex_unlock(&fit_mutex); }
bool erg_fit_trylock(void) { return pthread_mutex_trylock(&fit_mutex) == 0; }

/* Choices under way over all nodes at most: the rest wait for a later
 * cell (each thread holds a copy of its node's rows). */
#define TAILWIN_MAX_JOBS 32
static atomic_int tailwin_jobs;

static struct erg_tailwin *tailwin_get(struct erg_grid *g, uint64_t t_ns) {
  if (g->tailwin || !(g->tailwin = calloc(1, sizeof *g->tailwin)))
    return g->tailwin;
  for (int c = 0; c < ERG_TAILWIN_CANDS; c++)
    g->tailwin->st.rmse_watts[c] = NAN;
  /* Nodes that start together do not all choose in the same cell: their
   * meters' first readings differ in the microseconds. */
  g->tailwin->since_choice = (size_t)(t_ns / 1000 % ERG_TAILWIN_EVERY);
  int64_t t = (int64_t)(t_ns / ERG_NS_PER_S) - 3600;
  g->tailwin->epoch_s = t > 0 ? t - t % (int64_t)g->step : 0;
  return g->tailwin;
}

/* t_ns in seconds after the epoch. */
static double tailwin_time(const struct erg_tailwin *tw, uint64_t t_ns) {
  return (double)((int64_t)t_ns - tw->epoch_s * (int64_t)ERG_NS_PER_S) / 1e9;
}

/* The i-th oldest row kept. */
static const struct tailwin_row *tailwin_row(const struct erg_tailwin *tw, size_t i) {
  return &tw->rows[(tw->row_head + ERG_TAILWIN_ROWS - tw->nrows + i) % ERG_TAILWIN_ROWS];
}

static void tailwin_job_free(struct tailwin_job *job) {
  if (!job)
    return;
  free(job->rows);
  free(job);
  atomic_fetch_sub(&tailwin_jobs, 1);
}

void erg_tailwin_free(struct erg_grid *g) {
  if (!g->tailwin)
    return;
  if (g->tailwin->job) {
    /* At shutdown: the fits stop at their next step. */
    atomic_store(&g->tailwin->job->cancel, 1);
    pthread_join(g->tailwin->job->thread, NULL);
    tailwin_job_free(g->tailwin->job);
  }
  free(g->tailwin->rows);
  free(g->tailwin);
  g->tailwin = NULL;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* How far the updates numbered by period p miss their poll intervals: the
 * first update at φ, update i at φ + k_i p must lie in (lo_i, hi_i]; the
 * largest lo_i − k_i p minus the smallest hi_i − k_i p (≤ 0: all fit). */
static double tailwin_miss(const double *lo, const double *hi, const double *mid, size_t n,
                           double p, double *phi, double *klast) {
  double l = -INFINITY, h = INFINITY, k = 0;
  for (size_t i = 0; i < n; i++) {
    k = round((mid[i] - mid[0]) / p);
    if (lo[i] - k * p > l)
      l = lo[i] - k * p;
    if (hi[i] - k * p < h)
      h = hi[i] - k * p;
  }
  *phi = (l + h) / 2;
  *klast = k;
  return l - h;
}

/* Period: about the median gap between observed updates (a missed update
 * makes a gap of two, rarer than one), then the one within ±3 % whose
 * updates fit the poll intervals they were seen in best (each update is
 * somewhere in its interval, so with many of them the period and phase are
 * known much better than one poll interval, even when polls and updates
 * run in step). */
static void tailwin_estimate(struct erg_tailwin *tw) {
  size_t n = tw->nupd;
  if (n < ERG_TAILWIN_MIN_UPDATES)
    return;
  double lo[ERG_TAILWIN_UPDATES], hi[ERG_TAILWIN_UPDATES], mid[ERG_TAILWIN_UPDATES];
  double gap[ERG_TAILWIN_UPDATES];
  for (size_t i = 0; i < n; i++) {
    size_t j = (tw->upd_head + ERG_TAILWIN_UPDATES - n + i) % ERG_TAILWIN_UPDATES;
    lo[i] = tw->upd_lo[j];
    hi[i] = tw->upd_hi[j];
    mid[i] = tw->upd[j];
  }
  for (size_t i = 1; i < n; i++)
    gap[i - 1] = mid[i] - mid[i - 1];
  qsort(gap, n - 1, sizeof *gap, cmp_double);
  double p0 = gap[(n - 1) / 2];
  if (!(p0 > 0.01))
    return;
  double best = INFINITY, bp = p0, phi = 0, klast = 0;
  for (double step = p0 * 5e-4, from = p0 * 0.97, to = p0 * 1.03; step > p0 * 1e-6;) {
    for (double p = from; p <= to; p += step) {
      double f, k, v = tailwin_miss(lo, hi, mid, n, p, &f, &k);
      if (v < best) {
        best = v;
        bp = p;
      }
    }
    from = bp - step;
    to = bp + step;
    step /= 20;
  }
  tailwin_miss(lo, hi, mid, n, bp, &phi, &klast);
  /* A miss of more than a quarter period: the changes are not one
   * meter's updates (or the lag moved them). */
  if (!(best < bp / 4))
    return;
  tw->period_s = bp;
  tw->anchor_s = phi + klast * bp;
  tw->anchor_label = tw->label[(tw->upd_head + ERG_TAILWIN_UPDATES - 1) % ERG_TAILWIN_UPDATES];
  for (size_t i = 0; i < n; i++)
    gap[i] = hi[i] - lo[i];
  qsort(gap, n, sizeof *gap, cmp_double);
  tw->resolved = bp >= 1.5 * gap[n / 2];
}

void erg_grid_meter_update(struct erg_grid *g, uint64_t lo_ns, uint64_t hi_ns) {
  if (hi_ns <= lo_ns)
    return;
  struct erg_tailwin *tw = tailwin_get(g, lo_ns);
  if (!tw)
    return;
  double lo = tailwin_time(tw, lo_ns), hi = tailwin_time(tw, hi_ns), mid = (lo + hi) / 2;
  size_t last = (tw->upd_head + ERG_TAILWIN_UPDATES - 1) % ERG_TAILWIN_UPDATES;
  if (tw->nupd && !(mid > tw->upd[last]))
    return; /* out of order (a lag change): not an update */
  /* A gap of more than a minute starts afresh (the meter stopped). */
  if (tw->nupd && mid - tw->upd[last] > 60) {
    tw->nupd = 0;
    tw->period_s = 0;
  }
  int64_t label = 0;
  if (tw->nupd) {
    double steps = tw->period_s > 0 ? round((mid - tw->upd[last]) / tw->period_s) : 1;
    label = tw->label[last] + (steps > 1 ? (int64_t)steps : 1);
  }
  tw->upd[tw->upd_head] = mid;
  tw->upd_lo[tw->upd_head] = lo;
  tw->upd_hi[tw->upd_head] = hi;
  tw->label[tw->upd_head] = label;
  tw->upd_head = (tw->upd_head + 1) % ERG_TAILWIN_UPDATES;
  if (tw->nupd < ERG_TAILWIN_UPDATES)
    tw->nupd++;
  /* Re-estimated every 16 updates: each move of the windows cuts one. */
  if (!(tw->period_s > 0) || ++tw->since_estimate >= 16) {
    tw->since_estimate = 0;
    tailwin_estimate(tw);
  }
  tw->st.update_seconds = tw->period_s;
}

/* Adds window tails tail[] × seconds to candidate c of each open cell the
 * span [a, b) overlaps (weight: the part of the window the slices covered). */
static void tailwin_span(struct erg_grid *g, int c, double a, double b, double weight,
                         const double *tail) {
  int64_t s = (int64_t)g->step;
  for (int64_t c0 = (int64_t)floor(a / s) * s; c0 < b; c0 += s) {
    double lo = a > c0 ? a : (double)c0, hi = b < c0 + s ? b : (double)(c0 + s);
    struct erg_grid_cell *cell = grid_open_cell(g, g->tailwin->epoch_s + c0);
    if (hi <= lo || !cell)
      continue;
    if (!cell->cand && !(cell->cand = calloc(1, sizeof *cell->cand)))
      continue;
    for (int d = 0; d < ERG_NDERIVED; d++)
      cell->cand->tail_seconds[c - 1][d] += tail[d] * (hi - lo) * weight;
    cell->cand->covered_seconds[c - 1] += (hi - lo) * weight;
  }
}

static void tailwin_flush(struct erg_grid *g, int c, struct tailwin_acc *acc) {
  double tail[ERG_NDERIVED];
  double span = acc->to - acc->from, end = acc->w1;
  if (acc->w1 > 0 && acc->covered > 0 && span > 0 && g->ncpu > 0) {
    int ok = 1;
    for (int d = 0; d < ERG_NDERIVED && ok; d++)
      ok = isfinite(tail[d] = tailwin_mean_of_tails[c]
                                  ? acc->tail_seconds[d] / acc->covered
                                  : erg_derived_value(d, acc->busy / acc->covered, g->ncpu));
    if (ok)
      tailwin_span(g, c, acc->from, acc->to, acc->covered / span, tail);
  }
  *acc = (struct tailwin_acc){.last_end = end};
}

/* One slice [a, b) (s) of busy CPU seconds into candidate c's windows. */
static void tailwin_slice(struct erg_grid *g, struct erg_tailwin *tw, int c, double a, double b,
                          double busy, const double *tail) {
  struct tailwin_acc *acc = &tw->acc[c];
  int m = tailwin_mult[c];
  double w = tw->period_s * m, len = b - a;
  /* The windows start at the updates numbered offset[c] modulo m. */
  int64_t ahead = ((tailwin_offset[c] - tw->anchor_label) % m + m) % m;
  double base = tw->anchor_s + (double)ahead * tw->period_s;
  if (acc->w1 > 0 && (a > acc->to + 1e-6 || a < acc->to - 1e-6)) {
    /* Slices missing (the window ends where they stop) or going back (a
     * backlog): the window is closed and the next one starts afresh. */
    tailwin_flush(g, c, acc);
    acc->last_end = 0;
  }
  while (b - a > 1e-9) {
    if (acc->w1 == 0) {
      /* The next window by the estimate now; one that moved keeps the
       * window before it whole (it ends where that ended), and a sliver
       * left joins the next one. */
      double k = floor((a - base) / w), w0 = base + k * w, w1 = w0 + w;
      if (w1 <= a + 1e-9) { /* a on a border, rounded below it */
        w0 += w;
        w1 += w;
      }
      if (w0 < acc->last_end && acc->last_end < w1)
        w0 = acc->last_end;
      if (w1 - w0 < w / 2)
        w1 += w;
      *acc = (struct tailwin_acc){.w0 = w0, .w1 = w1, .from = a, .to = a};
    }
    double hi = b < acc->w1 ? b : acc->w1;
    if (!(hi > a))
      break; /* not reached: a window ends after its start */
    acc->busy += busy * (hi - a) / len;
    acc->covered += hi - a;
    acc->to = hi;
    for (int d = 0; d < ERG_NDERIVED; d++)
      acc->tail_seconds[d] += tail[d] * (hi - a);
    a = hi;
    if (hi >= acc->w1 - 1e-9)
      tailwin_flush(g, c, acc);
  }
}

void erg_tailwin_add_slices(struct erg_grid *g, const struct erg_grid_slice *slices,
                            size_t nslices) {
  struct erg_tailwin *tw = g->tailwin;
  if (!tw || !(tw->period_s > 0) || !(g->ncpu > 0))
    return;
  for (size_t i = 0; i < nslices; i++) {
    double a = tailwin_time(tw, slices[i].t0_ns), b = tailwin_time(tw, slices[i].t1_ns);
    double tail[ERG_NDERIVED];
    int ok = b > a;
    for (int d = 0; d < ERG_NDERIVED && ok; d++)
      ok = isfinite(tail[d] = erg_derived_value(d, slices[i].busy_cpu_seconds / (b - a), g->ncpu));
    for (int c = 1; c < ERG_TAILWIN_CANDS && ok; c++)
      /* Windows of the load's mean only over updates seen; none longer
       * than a cell. */
      if ((tailwin_mean_of_tails[c] || tw->resolved) && tw->period_s * tailwin_mult[c] <= g->step)
        tailwin_slice(g, tw, c, a, b, slices[i].busy_cpu_seconds, tail);
  }
}

/* Candidate c's tails of a cell (NaN when it has none or they cover less
 * than 90 % of what the slices cover). */
void erg_tailwin_cell_tails(const struct erg_grid_cell *cell, int c, double *t) {
  double cov =
      c ? (cell->cand ? cell->cand->covered_seconds[c - 1] : 0) : cell->tail_covered_seconds;
  bool ok = cov > 0 && cov >= 0.9 * cell->tail_covered_seconds;
  for (int d = 0; d < ERG_NDERIVED; d++)
    t[d] = !ok ? NAN : c ? cell->cand->tail_seconds[c - 1][d] / cov : cell->tail_seconds[d] / cov;
}

int erg_tailwin_dataset(struct erg_dataset *ds, char *why, size_t whylen) {
  const char *cols[3 + ERG_NDERIVED] = {"cpu_seconds_per_second", "disk_bytes_per_second",
                                        ERG_NCPU_COLUMN};
  for (int d = 0; d < ERG_NDERIVED; d++)
    cols[3 + d] = erg_derived_names[d];
  for (int k = 0; k < 3 + ERG_NDERIVED; k++)
    if (erg_dataset_add_feature(ds, cols[k], why, whylen) < 0)
      return -1;
  return 0;
}

/* The fit's held-out RMSE with candidate c's tails over the job's rows
 * that have every candidate in use; NaN when it does not fit. */
static double tailwin_score(const struct tailwin_job *job, int c) {
  struct erg_dataset ds;
  struct erg_fit_options o;
  struct erg_model m;
  char why[256];
  double rmse = NAN;
  erg_dataset_init(&ds);
  erg_fit_options_init(&o);
  o.folds = 4;
  o.cancel = &job->cancel;
  if (erg_tailwin_dataset(&ds, why, sizeof why) != 0)
    goto out;
  for (size_t i = 0; i < job->nrows; i++) {
    const struct tailwin_row *r = &job->rows[i];
    bool all = true;
    for (int k = 0; k < ERG_TAILWIN_CANDS && all; k++)
      all = !job->use[k] || isfinite(r->tails[k][0]);
    if (!all)
      continue;
    double x[3 + ERG_NDERIVED] = {r->cpu, r->disk, r->ncpu};
    for (int d = 0; d < ERG_NDERIVED; d++)
      x[3 + d] = r->tails[c][d];
    if (erg_dataset_add_row(&ds, (double)i * job->step, job->step, r->watts, 0, x) != 0)
      goto out;
  }
  if (ds.nrows >= ERG_TAILWIN_MIN_ROWS && erg_dataset_derive(&ds, 0, why, sizeof why) >= 0 &&
      erg_fit(&ds, &o, &m, why, sizeof why) == 0)
    rmse = m.metrics.rmse_watts;
out:
  erg_dataset_free(&ds);
  return rmse;
}

/* The thread: one fit per candidate in use, under the fit lock (waited
 * for in steps, so that a cancel at shutdown is not held up by a refit). */
static void *tailwin_job_main(void *arg) {
  struct tailwin_job *job = arg;
  for (int c = 0; c < ERG_TAILWIN_CANDS; c++)
    job->rmse_watts[c] = NAN;
  while (pthread_mutex_trylock(&fit_mutex) != 0) {
    if (atomic_load(&job->cancel)) {
      atomic_store_explicit(&job->done, 1, memory_order_release);
      return NULL;
    }
    nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
  }
  for (int c = 0; c < ERG_TAILWIN_CANDS && !atomic_load(&job->cancel); c++)
    job->rmse_watts[c] = job->use[c] ? tailwin_score(job, c) : NAN;
  pthread_mutex_unlock(&fit_mutex);
  atomic_store_explicit(&job->done, 1, memory_order_release);
  return NULL;
}

/* Starts the choice's fits over the rows kept: 1 started, 0 not due or not
 * possible now (too many under way, no memory, no thread: a later cell
 * tries again). */
static int tailwin_start(struct erg_tailwin *tw, unsigned step) {
  bool use[ERG_TAILWIN_CANDS] = {0};
  size_t have[ERG_TAILWIN_CANDS] = {0};
  for (size_t i = 0; i < tw->nrows; i++)
    for (int c = 0; c < ERG_TAILWIN_CANDS; c++)
      have[c] += isfinite(tw->rows[i].tails[c][0]);
  /* A candidate that most recent cells lack (no update period yet, a
   * window longer than a cell) is not compared. */
  for (int c = 0; c < ERG_TAILWIN_CANDS; c++)
    use[c] = have[c] >= tw->nrows * 3 / 4 && have[c] >= ERG_TAILWIN_MIN_ROWS;
  if (!use[0])
    return 1; /* nothing to compare: not tried again before the next turn */
  if (atomic_fetch_add(&tailwin_jobs, 1) >= TAILWIN_MAX_JOBS) {
    atomic_fetch_sub(&tailwin_jobs, 1);
    return 0;
  }
  struct tailwin_job *job = calloc(1, sizeof *job);
  if (job)
    job->rows = malloc(tw->nrows * sizeof *job->rows);
  if (!job || !job->rows) {
    if (job)
      free(job);
    atomic_fetch_sub(&tailwin_jobs, 1);
    return 0;
  }
  for (size_t i = 0; i < tw->nrows; i++)
    job->rows[i] = *tailwin_row(tw, i);
  job->nrows = tw->nrows;
  memcpy(job->use, use, sizeof use);
  job->step = step;
  if (pthread_create(&job->thread, NULL, tailwin_job_main, job) != 0) {
    tailwin_job_free(job);
    return 0;
  }
  tw->job = job;
  return 1;
}

const char *erg_tailwin_what(int c) {
  static const char *const what[ERG_TAILWIN_CANDS] = {
      "the agent's slices as they came", "the slices' mean per meter update",
      "each meter update's mean load", "two updates' mean load (even pairs)",
      "two updates' mean load (odd pairs)"};
  return c >= 0 && c < ERG_TAILWIN_CANDS ? what[c] : "?";
}

/* How fine candidate c's window is: lower is finer (the pairs alike). */
static int tailwin_rank(int c) { return c < 3 ? c : 3; }

int erg_tailwin_pick(const double *rmse, int current) {
  double best = INFINITY;
  for (int c = 0; c < ERG_TAILWIN_CANDS; c++)
    if (isfinite(rmse[c]) && rmse[c] < best)
      best = rmse[c];
  if (!isfinite(best))
    return -1;
  int finest = -1;
  bool cur_ok = false;
  for (int c = 0; c < ERG_TAILWIN_CANDS; c++) {
    if (!isfinite(rmse[c]) || rmse[c] > best * (1 + ERG_TAILWIN_MARGIN))
      continue;
    if (finest < 0 || tailwin_rank(c) < tailwin_rank(finest))
      finest = c;
    cur_ok = cur_ok || c == current;
  }
  return cur_ok && tailwin_rank(current) <= tailwin_rank(finest) ? current : finest;
}

/* Candidate choice is in use from now on, chosen by rmse. */
static void tailwin_use(struct erg_tailwin *tw, int choice, const double *rmse) {
  for (int c = 0; c < ERG_TAILWIN_CANDS; c++)
    tw->st.rmse_watts[c] = rmse[c];
  tw->st.choices++;
  tw->st.chosen = choice;
  tw->st.window_seconds = choice ? tw->period_s * tailwin_mult[choice] : 0;
}

/* The finished job's RMSEs make the choice (erg_tailwin_pick). */
static void tailwin_apply(struct erg_tailwin *tw, const double *rmse) {
  int choice = erg_tailwin_pick(rmse, tw->st.chosen);
  if (choice < 0) {
    memcpy(tw->st.rmse_watts, rmse, sizeof tw->st.rmse_watts);
    return;
  }
  tw->same = choice == tw->st.chosen ? tw->same + 1 : 0;
  tailwin_use(tw, choice, rmse);
}

/* A finished job is taken (wait: waited for). */
static void tailwin_collect(struct erg_tailwin *tw, bool wait) {
  struct tailwin_job *job = tw->job;
  if (!job || (!wait && !atomic_load_explicit(&job->done, memory_order_acquire)))
    return;
  pthread_join(job->thread, NULL);
  tw->job = NULL;
  tailwin_apply(tw, job->rmse_watts);
  tailwin_job_free(job);
}

void erg_tailwin_wait(struct erg_grid *g) {
  if (g->tailwin)
    tailwin_collect(g->tailwin, true);
}

bool erg_tailwin_busy(const struct erg_grid *g) { return g->tailwin && g->tailwin->job; }

void erg_tailwin_cell(struct erg_grid *g, struct erg_grid_cell *cell, double measured_watts) {
  struct erg_tailwin *tw = g->tailwin;
  if (!tw || g->tailwin_group || !cell->cand || !(cell->tail_covered_seconds > 0))
    return; /* no slices windowed in this cell (or its group's to do) */
  tailwin_collect(tw, false);
  if (isfinite(measured_watts) && cell->agent_seconds >= g->step * 0.5 && g->ncpu > 0) {
    if (!tw->rows && !(tw->rows = calloc(ERG_TAILWIN_ROWS, sizeof *tw->rows)))
      return;
    struct tailwin_row *r = &tw->rows[tw->row_head];
    r->watts = measured_watts;
    r->cpu = cell->busy_cpu_seconds / g->step;
    r->disk = cell->disk_bytes / g->step;
    r->ncpu = g->ncpu;
    for (int c = 0; c < ERG_TAILWIN_CANDS; c++) {
      double t[ERG_NDERIVED];
      erg_tailwin_cell_tails(cell, c, t);
      for (int d = 0; d < ERG_NDERIVED; d++)
        r->tails[c][d] = (float)t[d];
    }
    tw->row_head = (tw->row_head + 1) % ERG_TAILWIN_ROWS;
    if (tw->nrows < ERG_TAILWIN_ROWS)
      tw->nrows++;
    /* Every ERG_TAILWIN_EVERY cells; 5 times as seldom once three choices
     * in a row kept it (each costs 5 fits of 4 folds, ~20 ms, in a thread). */
    size_t every = tw->same >= 3 ? 5 * ERG_TAILWIN_EVERY : ERG_TAILWIN_EVERY;
    if (++tw->since_choice >= every && tw->nrows >= ERG_TAILWIN_MIN_ROWS && !tw->job &&
        tailwin_start(tw, g->step))
      tw->since_choice = 0;
  }
  erg_tailwin_apply(g, cell);
}

void erg_tailwin_apply(const struct erg_grid *g, struct erg_grid_cell *cell) {
  int c = g->tailwin ? g->tailwin->st.chosen : 0;
  double t[ERG_NDERIVED];
  if (c == 0 || !cell->cand || !(cell->tail_covered_seconds > 0))
    return;
  erg_tailwin_cell_tails(cell, c, t);
  if (!isfinite(t[0]))
    return;
  for (int d = 0; d < ERG_NDERIVED; d++)
    cell->tail_seconds[d] = t[d] * cell->tail_covered_seconds;
}

void erg_tailwin_set(struct erg_grid *g, int chosen, const double *rmse_watts) {
  if (g->tailwin && chosen >= 0 && chosen < ERG_TAILWIN_CANDS)
    tailwin_use(g->tailwin, chosen, rmse_watts);
}

void erg_tailwin_status(const struct erg_grid *g, struct erg_tailwin_status *st) {
  if (g->tailwin)
    *st = g->tailwin->st;
  else {
    memset(st, 0, sizeof *st);
    for (int c = 0; c < ERG_TAILWIN_CANDS; c++)
      st->rmse_watts[c] = NAN;
  }
}

/* ---- the choice across restarts ---- */

#define TAILWIN_FILE_MAGIC "erg-tailwin 1"

int erg_tailwin_file_path(const char *journal_dir, const char *node, char *out, size_t outlen) {
  /* Beside the journal, named as it is (erg_journal_path; not called: the
   * journal calls into the grid, which calls here). */
  char safe[ERG_NAME_MAX];
  erg_name_sanitize(node, strlen(node), safe);
  int n = snprintf(out, outlen, "%s/%s.tailwin", journal_dir, safe);
  return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

int erg_tailwin_file_write(const char *path, const struct erg_tailwin_saved *s, char *why,
                           size_t whylen) {
  char buf[256];
  snprintf(buf, sizeof buf,
           TAILWIN_FILE_MAGIC " chosen=%d update_seconds=%.6f chosen_unix_seconds=%" PRId64 "\n",
           s->chosen, s->update_seconds, s->chosen_s);
  return erg_state_file_write(path, buf, why, whylen);
}

int erg_tailwin_file_read(const char *path, struct erg_tailwin_saved *s, char *why, size_t whylen) {
  char line[256];
  int rc = erg_state_file_read(path, line, sizeof line, why, whylen);
  if (rc <= 0)
    return rc;
  int ok = 1, used = 0;
  /* One line of the known form, a candidate that exists: a damaged or
   * hand-edited file is refused, never half-used. */
  ok = ok &&
       sscanf(line,
              TAILWIN_FILE_MAGIC " chosen=%d update_seconds=%lf chosen_unix_seconds=%" SCNd64 "%n",
              &s->chosen, &s->update_seconds, &s->chosen_s, &used) == 3;
  ok = ok && (line[used] == '\n' || line[used] == '\0') && s->chosen >= 0 &&
       s->chosen < ERG_TAILWIN_CANDS && isfinite(s->update_seconds) && s->update_seconds >= 0;
  if (!ok) {
    snprintf(why, whylen,
             "%s: not an erg tails' window file (expected '" TAILWIN_FILE_MAGIC " chosen=N ...')",
             path);
    return -1;
  }
  return 1;
}

void erg_tailwin_restore(struct erg_grid *g, const struct erg_tailwin_saved *s, uint64_t now_ns) {
  struct erg_tailwin *tw = tailwin_get(g, now_ns);
  if (!tw || s->chosen < 0 || s->chosen >= ERG_TAILWIN_CANDS)
    return;
  tw->st.chosen = s->chosen;
  tw->st.window_seconds = s->chosen ? s->update_seconds * tailwin_mult[s->chosen] : 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* The fit on real measurements: Kepler model-db, machine nx12 (2 × Xeon
 * E5-2667 v3, 16 cores, 32 threads, ACPI platform power in 1 W steps,
 * 3 s cells), converted here into an erg journal with cycles, instructions
 * and cache misses. The fixture README reports a held-out MAPE of about
 * 5–8 % for that feature set; the test checks erg's fit lands there, and
 * prints what docs/model.md ("Validation") and docs/accuracy.md report
 * about the dynamic MAPE (issue 27 asks < 15 %). Skips (77) when
 * ../shared is not there.
 *
 * What the data are (read from the values, not from the README):
 * - The counters are per-second rates, not counts per 3 s interval: cycles
 *   peak at 5.7e10, i.e. 16 cores × 3.55 GHz (per 3 s it would be 5
 *   cores for 32 busy workers at full power); bpf_cpu_time_us is CPU
 *   milliseconds per second (levels ~1,500, 4,300, 8,100, 14,600, 23,000,
 *   28,800 for stress-ng's 1 … 32 workers). The journal holds them as
 *   they are (scale matters for none of the linear fits; it does for a
 *   utilisation derived from cycles).
 * - About 125 stress-ng runs of 30 s with 15 s idle between (7 stressors
 *   × max frequency 2.0 / 2.8 / 3.6 GHz × 1 … 32 workers), then 18 runs
 *   (194 cells) of an sctp (network) stressor: +33 W and cycles at a
 *   third of their peak, but bpf CPU time at its idle level (the work
 *   runs in the kernel's softirq context, which Kepler's per-process CPU
 *   time does not see). The last 30 % held out holds the last stressor
 *   and the whole sctp part: a workload the first 70 % never shows.
 * - The meter and the counters disagree at load changes: the cell before
 *   a run often shows the run's power while its counters are idle (a new
 *   process's first interval is missing from Kepler's counters).
 *
 * Beyond the model of counters (the one checked), it prints for
 * comparison: the same with an idle profile from the quiet cells before
 * the first run; CPU time (bpf_cpu_time_us as ms/s, ncpu 32) with the
 * utilisation curve; cycles as frequency-invariant CPU time (cycles /
 * f, ncpu cores) with the curve, for two choices of f and ncpu; the
 * held-out dynamic error split by kind of cell (at a meter step, steady
 * with and without CPU time seen), with the dynamic WAPE (Σ|P̂ − P| /
 * Σ(P − idle) over the same cells) and both against the measured idle;
 * the bounds: each model fitted on all cells, and on the held-out cells
 * themselves, scored in-sample, and the least dynamic MAPE any linear
 * combination of its columns reaches on the held-out cells; and, as a
 * reference erg does not have, RAPL package and DRAM power as features. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_multifit.h>

#include "erg_fit.h"

#ifndef KEPLER_CSV
#define KEPLER_CSV "../shared/fixtures/power-data/kepler_nx12_e5-2667v3_acpi_platform_power_3s.csv"
#endif

#define MAX_ROWS 4096
#define STEP 3.0

/* The fixture's columns used here, one row per 3 s cell. */
struct fixture {
  size_t n;
  double t[MAX_ROWS], watts[MAX_ROWS], cycles[MAX_ROWS], instructions[MAX_ROWS],
      cache_misses[MAX_ROWS], cpu_ms[MAX_ROWS], package_watts[MAX_ROWS], dram_watts[MAX_ROWS];
};

/* Column index of name in the CSV header line, or -1. */
static int csv_column(const char *header, const char *name) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", header);
  int i = 0;
  for (char *save, *t = strtok_r(buf, ",\r\n", &save); t; t = strtok_r(NULL, ",\r\n", &save), i++)
    if (strcmp(t, name) == 0)
      return i;
  return -1;
}

static int fixture_read(FILE *in, struct fixture *f) {
  char line[4096];
  if (!fgets(line, sizeof line, in))
    return -1;
  static const char *want[] = {"timestamp",  "platform_power",  "cpu_cycles",    "cpu_instructions",
                               "cache_miss", "bpf_cpu_time_us", "package_power", "dram_power"};
  int col[8];
  for (int k = 0; k < 8; k++)
    if ((col[k] = csv_column(line, want[k])) < 0)
      return -1;
  f->n = 0;
  while (f->n < MAX_ROWS && fgets(line, sizeof line, in)) {
    double v[32];
    int n = 0;
    for (char *save, *t = strtok_r(line, ",\r\n", &save); t && n < 32;
         t = strtok_r(NULL, ",\r\n", &save))
      v[n++] = strtod(t, NULL);
    bool short_row = false;
    for (int k = 0; k < 8; k++)
      short_row |= n <= col[k];
    if (short_row)
      continue;
    size_t i = f->n++;
    f->t[i] = v[col[0]];
    f->watts[i] = v[col[1]];
    f->cycles[i] = v[col[2]];
    f->instructions[i] = v[col[3]];
    f->cache_misses[i] = v[col[4]];
    f->cpu_ms[i] = v[col[5]];
    f->package_watts[i] = v[col[6]];
    f->dram_watts[i] = v[col[7]];
  }
  return f->n >= 2000 ? 0 : -1;
}

/* The counters as an erg journal file, read back by erg_journal_read (the
 * reader on real data): 0 or -1. */
static int load_counters(const struct fixture *f, struct erg_dataset *ds, char *why,
                         size_t whylen) {
  char path[] = "/tmp/erg-fit-kepler-XXXXXX";
  int fd = mkstemp(path);
  FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
  erg_dataset_init(ds);
  if (!out) {
    snprintf(why, whylen, "cannot write a temp journal");
    return -1;
  }
  fprintf(out, "# erg-journal v1 node=nx12 step_seconds=3\n"
               "time_unix_seconds,step_seconds,measured_watts,flags,cpu_cycles_per_second,"
               "cpu_instructions_per_second,cache_misses_per_second\n");
  for (size_t i = 0; i < f->n; i++)
    fprintf(out, "%.0f,3,%.3f,0,%.6f,%.6f,%.6f\n", f->t[i], f->watts[i], f->cycles[i],
            f->instructions[i], f->cache_misses[i]);
  fclose(out);
  int rc = erg_journal_read(ds, path, why, whylen);
  unlink(path);
  return rc;
}

/* A CPU-time column for the utilisation curve. */
enum cpu_source { CPU_NONE, CPU_BPF, CPU_CYCLES };

/* The journal in memory: counters (or not) and a CPU-time column with
 * ncpu, then the curve (erg_dataset_derive). For CPU_CYCLES the CPU time
 * is cycles / hz: busy seconds at frequency hz (frequency-invariant). */
static int load_with_cpu(const struct fixture *f, bool counters, enum cpu_source cpu, double hz,
                         double ncpu, struct erg_dataset *ds, char *why, size_t whylen) {
  erg_dataset_init(ds);
  snprintf(ds->node, sizeof ds->node, "nx12");
  ds->step_seconds = STEP;
  if (counters && (erg_dataset_add_feature(ds, "cpu_cycles_per_second", why, whylen) < 0 ||
                   erg_dataset_add_feature(ds, "cpu_instructions_per_second", why, whylen) < 0 ||
                   erg_dataset_add_feature(ds, "cache_misses_per_second", why, whylen) < 0))
    return -1;
  if (erg_dataset_add_feature(ds, "cpu_seconds_per_second", why, whylen) < 0 ||
      erg_dataset_add_feature(ds, ERG_NCPU_COLUMN, why, whylen) < 0)
    return -1;
  for (size_t i = 0; i < f->n; i++) {
    double x[5], *p = x;
    if (counters) {
      *p++ = f->cycles[i];
      *p++ = f->instructions[i];
      *p++ = f->cache_misses[i];
    }
    *p++ = cpu == CPU_BPF ? f->cpu_ms[i] / 1000 : f->cycles[i] / hz;
    *p++ = ncpu;
    if (erg_dataset_add_row(ds, f->t[i], STEP, f->watts[i], 0, x) != 0) {
      snprintf(why, whylen, "cannot add row %zu", i);
      return -1;
    }
  }
  if (erg_dataset_derive(ds, 0, why, whylen) != ERG_NDERIVED) {
    snprintf(why, whylen, "no curve");
    return -1;
  }
  return 0;
}

static void print_fit(const char *what, const struct erg_model *m) {
  printf("nx12 %s, holdout 30%%: %zu cells, idle %.1f W, MAE %.2f W, RMSE %.2f W, MAPE %.2f %%, "
         "dynamic MAPE %.2f %% (%zu cells), R2 %.3f\n",
         what, m->metrics.cells, m->idle_watts, m->metrics.mae_watts, m->metrics.rmse_watts,
         m->metrics.mape_total_percent, m->metrics.mape_dynamic_percent, m->metrics.cells_dynamic,
         m->metrics.r2);
}

/* The fixture row of a cell time. */
static size_t fixture_row(const struct fixture *f, double t) {
  double r = floor((t - f->t[0]) / STEP + 0.5);
  return r < 0 ? 0 : r >= (double)f->n ? f->n - 1 : (size_t)r;
}

/* Dynamic errors over cells with P − idle ≥ max(5 W, 10 % of idle), as
 * the fit's metric, split by kind of cell. At a meter step: the measured
 * power of the cell before or after differs by more than that threshold
 * (where the meter's and the counters' timing decide the error); steady
 * otherwise, with CPU time seen (bpf ≥ 1 CPU) or not (the sctp run). */
struct split {
  size_t n[3];
  double ape[3], abs_err, dyn;
};
enum { AT_STEP, STEADY_CPU, STEADY_NO_CPU };

static void split_add(struct split *s, const struct fixture *f, double t, double y, double yhat,
                      double idle) {
  double thr = fmax(5.0, 0.10 * idle), dyn = y - idle;
  if (!(dyn >= thr && dyn > 0))
    return;
  size_t r = fixture_row(f, t);
  bool step = (r > 0 && fabs(f->watts[r] - f->watts[r - 1]) > thr) ||
              (r + 1 < f->n && fabs(f->watts[r + 1] - f->watts[r]) > thr);
  int k = step ? AT_STEP : f->cpu_ms[r] >= 1000 ? STEADY_CPU : STEADY_NO_CPU;
  s->n[k]++;
  s->ape[k] += fabs(yhat - y) / dyn;
  s->abs_err += fabs(yhat - y);
  s->dyn += dyn;
}

static double split_mape(const struct split *s) {
  size_t n = s->n[0] + s->n[1] + s->n[2];
  return n ? 100 * (s->ape[0] + s->ape[1] + s->ape[2]) / (double)n : NAN;
}

static void print_split(const struct split *s) {
  static const char *name[] = {"at a meter step", "steady, CPU time seen",
                               "steady, no CPU time seen (sctp)"};
  size_t n = s->n[0] + s->n[1] + s->n[2];
  printf("    dynamic MAPE %.2f %% of %zu cells:", split_mape(s), n);
  for (int k = 0; k < 3; k++)
    printf("%s %s %zu, %.1f %% (%.1f points)", k ? ";" : "", name[k], s->n[k],
           s->n[k] ? 100 * s->ape[k] / (double)s->n[k] : NAN, 100 * s->ape[k] / (double)n);
  printf("; dynamic WAPE %.2f %%\n", 100 * s->abs_err / s->dyn);
}

/* The held-out cells of a fit, split; against ref_idle when > 0 (the
 * measured idle), else each cell's validation idle (the fit's metric). */
static void holdout_split(const struct fixture *f, const struct erg_holdout *h, double ref_idle,
                          struct split *s) {
  memset(s, 0, sizeof *s);
  for (size_t i = 0; i < h->cells.nrows; i++)
    split_add(s, f, h->cells.time_unix_seconds[i], h->cells.measured_watts[i],
              h->predicted_watts[i], ref_idle > 0 ? ref_idle : h->idle_watts[i]);
}

/* m's feature values at dataset row i (a derived one from its CPU time);
 * with_left_out: then the values of the features the fit left out. */
static void model_row(const struct erg_model *m, const struct erg_dataset *ds, size_t i,
                      bool with_left_out, double *x) {
  int cpu = -1;
  for (size_t k = 0; k < ds->nfeatures; k++)
    if (strcmp(ds->feature[k], "cpu_seconds_per_second") == 0)
      cpu = (int)k;
  for (size_t k = 0; k < m->nfeatures; k++) {
    if (erg_derived_index(m->feature[k]) >= 0) {
      x[k] = cpu >= 0 ? erg_model_derived_value(m, k, ds->x[cpu][i]) : NAN;
      continue;
    }
    x[k] = NAN;
    for (size_t c = 0; c < ds->nfeatures; c++)
      if (strcmp(ds->feature[c], m->feature[k]) == 0)
        x[k] = ds->x[c][i];
  }
  for (size_t k = 0; with_left_out && k < m->nleft_out; k++) {
    x[m->nfeatures + k] = NAN;
    for (size_t c = 0; c < ds->nfeatures; c++)
      if (strcmp(ds->feature[c], m->left_out[k]) == 0)
        x[m->nfeatures + k] = ds->x[c][i];
  }
}

static double predict_row(const struct erg_model *m, const struct erg_dataset *ds, size_t i) {
  double x[2 * ERG_FIT_MAX_FEATURES];
  model_row(m, ds, i, false, x);
  return erg_model_predict(m, x);
}

/* The bound of the metric itself: over the last fraction of rows, the
 * dynamic MAPE against the measured idle (fixed denominators, so a low
 * idle cannot flatter it) of the best affine function of m's features and
 * those it left out: a constant and coefficients of any sign that
 * minimise it there (iteratively reweighted least squares for the
 * weighted L1 norm, GSL). No fit of those columns, on any cells, scores
 * lower on these cells. */
static double oracle_mape(const struct erg_model *m, const struct erg_dataset *ds, double frac,
                          double idle) {
  size_t first = ds->nrows - (size_t)floor(frac * (double)ds->nrows + 0.5),
         p = m->nfeatures + m->nleft_out + 1;
  double thr = fmax(5.0, 0.10 * idle), result = NAN;
  size_t n = 0;
  for (size_t i = first; i < ds->nrows; i++)
    n += ds->measured_watts[i] - idle >= thr;
  gsl_matrix *X = gsl_matrix_alloc(n, p), *cov = gsl_matrix_alloc(p, p);
  gsl_vector *y = gsl_vector_alloc(n), *w = gsl_vector_alloc(n), *b = gsl_vector_alloc(p),
             *scale = gsl_vector_alloc(p), *d = gsl_vector_alloc(n);
  gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, p);
  if (!X || !cov || !y || !w || !b || !scale || !d || !ws)
    goto out;
  gsl_vector_set_all(scale, 0);
  for (size_t i = first, j = 0; i < ds->nrows; i++) {
    double dyn = ds->measured_watts[i] - idle, x[2 * ERG_FIT_MAX_FEATURES];
    if (!(dyn >= thr))
      continue;
    model_row(m, ds, i, true, x);
    x[p - 1] = 1; /* the constant */
    for (size_t k = 0; k < p; k++) {
      gsl_matrix_set(X, j, k, x[k]);
      gsl_vector_set(scale, k, fmax(gsl_vector_get(scale, k), fabs(x[k])));
    }
    gsl_vector_set(y, j, dyn);
    gsl_vector_set(d, j, dyn);
    gsl_vector_set(w, j, 1 / (dyn * dyn));
    j++;
  }
  for (size_t k = 0; k < p; k++) {
    gsl_vector_view col = gsl_matrix_column(X, k);
    double sc = gsl_vector_get(scale, k);
    gsl_vector_scale(&col.vector, sc > 0 ? 1 / sc : 1);
  }
  for (int it = 0; it < 200; it++) {
    double chisq, ape = 0;
    size_t rank;
    if (gsl_multifit_wlinear_tsvd(X, w, y, 1e-12, b, cov, &chisq, &rank, ws) != 0)
      goto out;
    for (size_t j = 0; j < n; j++) {
      double r = gsl_vector_get(y, j), dj = gsl_vector_get(d, j);
      for (size_t k = 0; k < p; k++)
        r -= gsl_matrix_get(X, j, k) * gsl_vector_get(b, k);
      ape += fabs(r) / dj;
      gsl_vector_set(w, j, 1 / (dj * fmax(fabs(r), 1e-3)));
    }
    if (isfinite(result) && result - 100 * ape / (double)n < 1e-9)
      break;
    result = 100 * ape / (double)n;
  }
out:
  gsl_matrix_free(X);
  gsl_matrix_free(cov);
  gsl_vector_free(y);
  gsl_vector_free(w);
  gsl_vector_free(b);
  gsl_vector_free(scale);
  gsl_vector_free(d);
  if (ws)
    gsl_multifit_linear_free(ws);
  return result;
}

/* The bound: the model form fitted on rows [from, n) themselves (no
 * validation) and scored on them, as the dynamic MAPE is. */
static int in_sample(const struct fixture *f, const struct erg_dataset *ds, double from_frac,
                     struct split *s) {
  struct erg_dataset sub;
  char why[256];
  erg_dataset_init(&sub);
  snprintf(sub.node, sizeof sub.node, "%s", ds->node);
  sub.step_seconds = ds->step_seconds;
  for (size_t k = 0; k < ds->nfeatures; k++)
    erg_dataset_add_feature(&sub, ds->feature[k], why, sizeof why);
  size_t first = ds->nrows - (size_t)floor(from_frac * (double)ds->nrows + 0.5);
  for (size_t i = first; i < ds->nrows; i++) {
    double x[ERG_FIT_MAX_FEATURES];
    for (size_t k = 0; k < ds->nfeatures; k++)
      x[k] = ds->x[k][i];
    erg_dataset_add_row(&sub, ds->time_unix_seconds[i], ds->row_step_seconds[i],
                        ds->measured_watts[i], ds->flags[i], x);
  }
  struct erg_fit_options o;
  struct erg_model m;
  erg_fit_options_init(&o);
  o.holdout_fraction = 0;
  int rc = erg_fit(&sub, &o, &m, why, sizeof why);
  memset(s, 0, sizeof *s);
  for (size_t i = 0; rc == 0 && i < sub.nrows; i++)
    split_add(s, f, sub.time_unix_seconds[i], sub.measured_watts[i], predict_row(&m, &sub, i),
              m.idle_watts);
  if (rc != 0)
    fprintf(stderr, "FAIL: in-sample fit: %s\n", why);
  erg_dataset_free(&sub);
  return rc;
}

/* Fits ds with a 30 % holdout (idle from use_idle when not NULL) and
 * prints the fit and its held-out cells split, also against the measured
 * idle; without use_idle the bounds too: the model form fitted on all
 * cells and on the held-out cells themselves, scored in-sample, and the
 * metric's own minimum there (oracle_mape). Checks that the held-out
 * cells' idle reproduces the fit's own dynamic MAPE. */
static int fit_and_print(const char *what, const struct fixture *f, const struct erg_dataset *ds,
                         const struct erg_idle_profile *use_idle,
                         const struct erg_idle_profile *measured, struct erg_model *m) {
  struct erg_fit_options o;
  struct erg_holdout h;
  char why[256];
  erg_fit_options_init(&o);
  o.holdout_fraction = 0.3;
  o.idle_profile = use_idle;
  erg_holdout_init(&h);
  o.holdout = &h;
  if (erg_fit(ds, &o, m, why, sizeof why) != 0) {
    fprintf(stderr, "FAIL: %s: %s\n", what, why);
    erg_holdout_free(&h);
    return -1;
  }
  print_fit(what, m);
  struct split s, ref, all, held;
  holdout_split(f, &h, 0, &s);
  holdout_split(f, &h, measured->mean_watts, &ref);
  print_split(&s);
  erg_holdout_free(&h);
  printf("    against the measured idle %.1f W: dynamic MAPE %.2f %% (%zu cells), WAPE %.2f %%\n",
         measured->mean_watts, split_mape(&ref), ref.n[0] + ref.n[1] + ref.n[2],
         100 * ref.abs_err / ref.dyn);
  size_t n = s.n[0] + s.n[1] + s.n[2];
  if (n != m->metrics.cells_dynamic ||
      !(fabs(split_mape(&s) - m->metrics.mape_dynamic_percent) <= 1e-9 * split_mape(&s))) {
    fprintf(stderr, "FAIL: %s: held-out cells give %.6f %% on %zu cells, the fit %.6f %% on %zu\n",
            what, split_mape(&s), n, m->metrics.mape_dynamic_percent, m->metrics.cells_dynamic);
    return -1;
  }
  if (!use_idle) {
    if (in_sample(f, ds, 1.0, &all) != 0 || in_sample(f, ds, 0.3, &held) != 0)
      return -1;
    printf("    bounds, dynamic MAPE in-sample: fitted on all cells %.2f %% (WAPE %.2f %%), on the "
           "held-out cells %.2f %% (WAPE %.2f %%); least possible on them (against idle %.1f W): "
           "%.2f %%\n",
           split_mape(&all), 100 * all.abs_err / all.dyn, split_mape(&held),
           100 * held.abs_err / held.dyn, measured->mean_watts,
           oracle_mape(m, ds, 0.3, measured->mean_watts));
  }
  return 0;
}

/* The idle profile of the quiet stretch before the first run: the first
 * 10 or more consecutive cells with less than one CPU busy. */
static int quiet_profile(const struct fixture *f, struct erg_idle_profile *p) {
  struct erg_dataset ds;
  char why[256];
  size_t a = 0, b;
  for (;; a = b + 1) {
    while (a < f->n && f->cpu_ms[a] >= 1000)
      a++;
    for (b = a; b < f->n && f->cpu_ms[b] < 1000; b++)
      ;
    if (b - a >= 10 || b >= f->n)
      break;
  }
  if (load_with_cpu(f, false, CPU_BPF, 0, 32, &ds, why, sizeof why) != 0 ||
      erg_idle_profile_from_dataset(&ds, f->t[a], f->t[a] + STEP * (double)(b - a), 0.05, 0, p, why,
                                    sizeof why) != 0) {
    fprintf(stderr, "FAIL: idle profile: %s\n", why);
    erg_dataset_free(&ds);
    return -1;
  }
  erg_dataset_free(&ds);
  return 0;
}

/* For comparison: a utilisation column and the curve. */
static int fit_with_cpu(const struct fixture *f, const struct erg_idle_profile *measured) {
  static const struct {
    const char *what;
    bool counters;
    enum cpu_source cpu;
    double hz, ncpu;
  } v[] = {
      {"counters, CPU time and curve", true, CPU_BPF, 0, 32},
      {"CPU time and curve alone", false, CPU_BPF, 0, 32},
      {"counters, cycles / 3.2 GHz as CPU time of 16 cores and curve", true, CPU_CYCLES, 3.2e9, 16},
      {"counters, cycles / 3.6 GHz as CPU time of 16 cores and curve", true, CPU_CYCLES, 3.6e9, 16},
      {"counters, cycles / 3.2 GHz as CPU time of 32 threads and curve", true, CPU_CYCLES, 3.2e9,
       32},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    struct erg_dataset ds;
    struct erg_model m;
    char why[256];
    int rc = load_with_cpu(f, v[i].counters, v[i].cpu, v[i].hz, v[i].ncpu, &ds, why, sizeof why);
    if (rc != 0)
      fprintf(stderr, "FAIL: %s: %s\n", v[i].what, why);
    else
      rc = fit_and_print(v[i].what, f, &ds, NULL, measured, &m);
    erg_dataset_free(&ds);
    if (rc != 0)
      return -1;
  }
  return 0;
}

/* For reference only (erg has no RAPL, by design): the CPU's own
 * measurement of its package and DRAM power as the features. How well the
 * wall meter can be predicted from what the chips draw. */
static int fit_rapl(const struct fixture *f, const struct erg_idle_profile *measured) {
  struct erg_dataset ds;
  struct erg_model m;
  char why[256];
  int rc = -1;
  erg_dataset_init(&ds);
  snprintf(ds.node, sizeof ds.node, "nx12");
  ds.step_seconds = STEP;
  if (erg_dataset_add_feature(&ds, "rapl_package_watts", why, sizeof why) >= 0 &&
      erg_dataset_add_feature(&ds, "rapl_dram_watts", why, sizeof why) >= 0) {
    rc = 0;
    for (size_t i = 0; rc == 0 && i < f->n; i++) {
      double x[2] = {f->package_watts[i], f->dram_watts[i]};
      rc = erg_dataset_add_row(&ds, f->t[i], STEP, f->watts[i], 0, x);
    }
  }
  if (rc == 0)
    rc = fit_and_print("RAPL package and DRAM power (reference, not an erg feature)", f, &ds, NULL,
                       measured, &m);
  else
    fprintf(stderr, "FAIL: RAPL reference: %s\n", why);
  erg_dataset_free(&ds);
  return rc;
}

int main(void) {
  FILE *in = fopen(KEPLER_CSV, "r");
  if (!in) {
    printf("SKIP: %s not found (the shared fixtures are not part of the project)\n", KEPLER_CSV);
    return 77;
  }
  static struct fixture f;
  int rc = fixture_read(in, &f);
  fclose(in);
  if (rc != 0) {
    fprintf(stderr, "FAIL: %s: unexpected columns or fewer than 2000 rows\n", KEPLER_CSV);
    return 1;
  }
  struct erg_dataset ds;
  struct erg_model m, mi;
  struct erg_idle_profile idle;
  char why[256], what[128];
  if (load_counters(&f, &ds, why, sizeof why) != 0) {
    fprintf(stderr, "FAIL: %s\n", why);
    return 1;
  }
  if (quiet_profile(&f, &idle) != 0 || fit_and_print("counters", &f, &ds, NULL, &idle, &m) != 0)
    return 1;
  snprintf(what, sizeof what, "counters, idle profile %.1f W (%zu quiet cells)", idle.mean_watts,
           idle.cells);
  if (fit_and_print(what, &f, &ds, &idle, &idle, &mi) != 0 || fit_with_cpu(&f, &idle) != 0 ||
      fit_rapl(&f, &idle) != 0)
    return 1;
  struct erg_fit_options o;
  erg_fit_options_init(&o);
  o.folds = 5;
  o.holdout_fraction = 0;
  struct erg_model cv;
  if (erg_fit(&ds, &o, &cv, why, sizeof why) != 0) {
    fprintf(stderr, "FAIL: %s\n", why);
    return 1;
  }
  printf("nx12 5 time-block folds: MAE %.2f W, MAPE %.2f %%, dynamic MAPE %.2f %%, R2 %.3f\n",
         cv.metrics.mae_watts, cv.metrics.mape_total_percent, cv.metrics.mape_dynamic_percent,
         cv.metrics.r2);
  erg_dataset_free(&ds);
  for (size_t k = 0; k < m.nfeatures; k++)
    printf("  %s %.4g W per unit\n", m.feature[k], m.coef[k]);
  for (size_t k = 0; k < m.nleft_out; k++)
    printf("  %s left out (t = %.2f)\n", m.left_out[k], m.left_out_t[k]);
  /* Instructions get a coefficient of 0 (collinear with cycles): left out. */
  if (m.nfeatures + m.nleft_out != 3 || m.nfeatures < 2 || m.metrics.cells < 600 ||
      !(m.metrics.mape_total_percent >= 4.5) || !(m.metrics.mape_total_percent <= 8.0) ||
      !(cv.metrics.mape_total_percent <= 9.0)) {
    fprintf(stderr, "FAIL: held-out MAPE outside the README's 5-8 %% range\n");
    return 1;
  }
  printf("PASS\n");
  return 0;
}

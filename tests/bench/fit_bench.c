// SPDX-License-Identifier: GPL-3.0-or-later
/* fit_bench: time erg_fit on 120k cells × 12 features against a peer run of
 * plain GSL least squares (gsl_multifit_linear, SVD) on the same data in the
 * same process; and what `erg fit` does end to end: the same cells written as
 * a journal file (temp file), read back with erg_journal_read, then fitted.
 * Usage: fit_bench [rows] [repeats]. Results: docs/benchmarks.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_multifit.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "erg_fit.h"

#define NF 12

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Node-like data: CPU time, frequency-weighted time (correlated with it),
 * counters on 1e9 scales, sparse disk and network, one useless feature;
 * noise σ = 3 W and 2% gross outliers. */
static void bench_data(struct erg_dataset *ds, size_t rows, gsl_rng *r) {
  static const double beta[NF] = {4.0, 1.2, 1.5e-9, 2e-9, 3e-7, 5e-8, 2e-8, 1e-8, 0.5, 0.8, 0, 2.0};
  char why[128], name[64];
  for (int k = 0; k < NF; k++) {
    snprintf(name, sizeof name, "feature_%02d_per_second", k);
    erg_dataset_add_feature(ds, name, why, sizeof why);
  }
  for (size_t i = 0; i < rows; i++) {
    double x[NF], load = gsl_rng_uniform(r);
    x[0] = 32 * load * gsl_rng_uniform(r);
    x[1] = x[0] * (1.2 + 2.4 * gsl_rng_uniform(r));
    x[2] = x[0] * 2.5e9 * (0.5 + gsl_rng_uniform(r));
    x[3] = x[0] * 1e9 * gsl_rng_uniform(r);
    x[4] = x[2] * 1e-3 * gsl_rng_uniform(r);
    x[5] = gsl_rng_uniform(r) < 0.2 ? 4e8 * gsl_rng_uniform(r) : 0;
    x[6] = gsl_rng_uniform(r) < 0.3 ? 1e8 * gsl_rng_uniform(r) : 0;
    x[7] = 1e8 * gsl_rng_uniform(r);
    x[8] = 10 * gsl_rng_uniform(r);
    x[9] = 4 * load;
    x[10] = gsl_rng_uniform(r);
    x[11] = gsl_rng_uniform(r) * 3;
    double p = 110 + gsl_ran_gaussian(r, 3);
    for (int k = 0; k < NF; k++)
      p += beta[k] * x[k];
    if (gsl_rng_uniform(r) < 0.02)
      p += 50 + 250 * gsl_rng_uniform(r);
    erg_dataset_add_row(ds, 1763700000.0 + 5.0 * (double)i, 5, p, 0, x);
  }
}

/* The peer: ordinary least squares with intercept, matrix built from the
 * dataset like erg_fit does. */
static double bench_ols(const struct erg_dataset *ds) {
  size_t n = ds->nrows, q = NF + 1;
  gsl_matrix *X = gsl_matrix_alloc(n, q), *cov = gsl_matrix_alloc(q, q);
  gsl_vector *y = gsl_vector_alloc(n), *c = gsl_vector_alloc(q);
  gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(n, q);
  for (size_t i = 0; i < n; i++) {
    gsl_matrix_set(X, i, 0, 1);
    for (size_t k = 0; k < NF; k++)
      gsl_matrix_set(X, i, k + 1, ds->x[k][i]);
    gsl_vector_set(y, i, ds->measured_watts[i]);
  }
  double chisq;
  gsl_multifit_linear(X, y, c, cov, &chisq, w);
  double b0 = gsl_vector_get(c, 0);
  gsl_multifit_linear_free(w);
  gsl_matrix_free(X);
  gsl_matrix_free(cov);
  gsl_vector_free(y);
  gsl_vector_free(c);
  return b0;
}

/* The dataset as ergd would have journaled it; returns the temp file's path
 * (malloc'd) and its size. */
static char *bench_journal(const struct erg_dataset *ds, long *bytes) {
  char *path = strdup("/tmp/erg-fit-bench-XXXXXX");
  int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f)
    return NULL;
  fprintf(f, "# erg-journal v1 node=bench step_seconds=5\n"
             "time_unix_seconds,step_seconds,measured_watts,flags");
  for (size_t k = 0; k < ds->nfeatures; k++)
    fprintf(f, ",%s", ds->feature[k]);
  for (size_t i = 0; i < ds->nrows; i++) {
    fprintf(f, "\n%.0f,5,%.3f,0", ds->time_unix_seconds[i], ds->measured_watts[i]);
    for (size_t k = 0; k < ds->nfeatures; k++)
      fprintf(f, ",%.6g", ds->x[k][i]);
  }
  fputc('\n', f);
  *bytes = ftell(f);
  fclose(f);
  return path;
}

/* Best time of reading the journal, and of reading + `erg fit`'s fit. */
static int bench_read_fit(const char *path, int repeats, double *best_read, double *best_both,
                          size_t *rows) {
  char why[256];
  struct erg_model m;
  *best_read = *best_both = INFINITY;
  for (int i = 0; i < repeats; i++) {
    struct erg_dataset ds;
    erg_dataset_init(&ds);
    double t = now_seconds();
    if (erg_journal_read(&ds, path, why, sizeof why) != 0)
      return fprintf(stderr, "fit_bench: %s\n", why), -1;
    double read = now_seconds() - t;
    int rc = erg_fit(&ds, NULL, &m, why, sizeof why);
    double both = now_seconds() - t;
    *rows = ds.nrows;
    erg_dataset_free(&ds);
    if (rc != 0)
      return fprintf(stderr, "fit_bench: %s\n", why), -1;
    *best_read = fmin(*best_read, read);
    *best_both = fmin(*best_both, both);
  }
  return 0;
}

int main(int argc, char **argv) {
  size_t rows = argc > 1 ? strtoul(argv[1], NULL, 10) : 120000;
  int repeats = argc > 2 ? atoi(argv[2]) : 3;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  struct erg_dataset ds;
  erg_dataset_init(&ds);
  bench_data(&ds, rows, r);
  double best_fit = INFINITY, best_full = INFINITY, best_ols = INFINITY, ols_b0 = 0;
  struct erg_model m;
  struct erg_fit_options o;
  char why[256];
  for (int i = 0; i < repeats; i++) {
    double t = now_seconds();
    ols_b0 = bench_ols(&ds);
    best_ols = fmin(best_ols, now_seconds() - t);
    erg_fit_options_init(&o);
    o.holdout_fraction = 0; /* one robust NNLS fit, like the one OLS solve */
    t = now_seconds();
    if (erg_fit(&ds, &o, &m, why, sizeof why) != 0)
      return fprintf(stderr, "fit_bench: %s\n", why), 1;
    best_fit = fmin(best_fit, now_seconds() - t);
    erg_fit_options_init(&o); /* what `erg fit` does: holdout fit + final fit */
    t = now_seconds();
    if (erg_fit(&ds, &o, &m, why, sizeof why) != 0)
      return fprintf(stderr, "fit_bench: %s\n", why), 1;
    best_full = fmin(best_full, now_seconds() - t);
  }
  printf("fit_bench: %zu rows x %d features, best of %d\n", rows, NF, repeats);
  printf("  gsl_multifit_linear OLS (peer)      %8.3f s  (idle %.1f W, outliers pull it up)\n",
         best_ols, ols_b0);
  printf("  erg_fit robust NNLS, no validation  %8.3f s  = %.2f x peer (idle %.1f W)\n", best_fit,
         best_fit / best_ols, m.idle_watts);
  printf("  erg_fit with 25%% holdout + refit    %8.3f s  = %.2f x peer (held-out MAE %.2f W)\n",
         best_full, best_full / best_ols, m.metrics.mae_watts);
  printf("  features: %zu in the model, %zu left out as not supported (t < 3):", m.nfeatures,
         m.nleft_out);
  for (size_t k = 0; k < m.nleft_out; k++)
    printf(" %s (t = %.2f)", m.left_out[k], m.left_out_t[k]);
  printf("\n");
  long bytes = 0;
  char *path = bench_journal(&ds, &bytes);
  double best_read, best_both;
  size_t read_rows = 0;
  if (!path || bench_read_fit(path, repeats, &best_read, &best_both, &read_rows) != 0)
    return 1;
  printf("  erg_journal_read of %.1f MB          %8.3f s  (%zu rows, %.0f MB/s)\n",
         (double)bytes / 1e6, best_read, read_rows, (double)bytes / 1e6 / best_read);
  printf("  journal read + erg_fit as erg fit   %8.3f s  = %.2f x peer\n", best_both,
         best_both / best_ols);
  unlink(path);
  free(path);
  erg_dataset_free(&ds);
  gsl_rng_free(r);
  return 0;
}

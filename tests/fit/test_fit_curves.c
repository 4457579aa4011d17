/* The utilisation curve (derived cubic Bernstein features of u) on power curves of
 * real servers: SPECpower_ssj2008 results in specpower_curves.csv (copied
 * from ../shared, see its header). For each server a journal is
 * synthesised: 4 CPUs, per 5 s cell a load level, jittered within the cell
 * (so the cell's power is the mean of the curve over the jitter, not the
 * curve at the mean: the Jensen gap a real meter shows), power from the
 * curve (linear between its 10 % points) plus 1 % noise. The fit with the
 * derived features must reach a held-out dynamic MAPE ≤ 10 % on every
 * curve; the linear fit's figures are printed for comparison. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "erg_fit.h"

#ifndef CURVES_CSV
#define CURVES_CSV "specpower_curves.csv"
#endif
#define NCPU 4
#define CELLS 2000
#define JITTER 0.08

struct curve {
  char row[16], system[128];
  double watts[11]; /* idle, 10 %, ..., 100 % */
};

static double curve_watts(const struct curve *c, double u) {
  u = fmin(fmax(u, 0), 1);
  int i = (int)(u * 10);
  if (i >= 10)
    return c->watts[10];
  double f = u * 10 - i;
  return c->watts[i] + f * (c->watts[i + 1] - c->watts[i]);
}

static int load_curves(struct curve *out, int max) {
  FILE *f = fopen(CURVES_CSV, "r");
  if (!f)
    return -1;
  char line[512];
  int n = 0;
  while (n < max && fgets(line, sizeof line, f)) {
    if (line[0] == '#' || !strncmp(line, "row,", 4))
      continue;
    struct curve *c = &out[n];
    char *save, *t = strtok_r(line, ",\n", &save);
    snprintf(c->row, sizeof c->row, "%s", t);
    t = strtok_r(NULL, ",\n", &save);
    snprintf(c->system, sizeof c->system, "%s", t ? t : "?");
    int k = 0;
    for (; k < 11 && (t = strtok_r(NULL, ",\n", &save)); k++)
      c->watts[k] = strtod(t, NULL);
    if (k == 11)
      n++;
  }
  fclose(f);
  return n;
}

/* Journal rows of one server: quiet stretches, steady levels and ramps. */
static void synth(struct erg_dataset *ds, const struct curve *c, gsl_rng *r) {
  char why[128];
  erg_dataset_init(ds);
  snprintf(ds->node, sizeof ds->node, "spec%s", c->row);
  ds->step_seconds = 5;
  erg_dataset_add_feature(ds, "cpu_seconds_per_second", why, sizeof why);
  erg_dataset_add_feature(ds, ERG_NCPU_COLUMN, why, sizeof why);
  double noise = 1.0; /* W, as the accuracy harness's simulated meter */
  for (int i = 0; i < CELLS; i++) {
    double level = i % 10 == 0 ? 0 : gsl_rng_uniform(r);
    /* Ten sub-samples of the load within the cell. */
    double usum = 0, psum = 0;
    for (int s = 0; s < 10; s++) {
      double u = fmin(fmax(level + (level > 0 ? gsl_ran_gaussian(r, JITTER) : 0), 0), 1);
      usum += u;
      psum += curve_watts(c, u);
    }
    double x[2] = {usum / 10 * NCPU, NCPU};
    erg_dataset_add_row(ds, 1763700000 + 5.0 * i, 5, psum / 10 + gsl_ran_gaussian(r, noise), 0, x);
  }
}

static int fit_one(const struct curve *c, bool derived, struct erg_model *m) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  struct erg_dataset ds;
  synth(&ds, c, r);
  char why[256];
  int rc = derived && erg_dataset_derive(&ds, 0, why, sizeof why) != ERG_NDERIVED ? -1 : 0;
  if (rc == 0)
    rc = erg_fit(&ds, NULL, m, why, sizeof why);
  if (rc != 0)
    fprintf(stderr, "%s: %s\n", c->row, why);
  erg_dataset_free(&ds);
  gsl_rng_free(r);
  return rc;
}

int main(void) {
  struct curve curves[16];
  int n = load_curves(curves, 16);
  if (n < 6) {
    fprintf(stderr, "FAIL: %s: %d curves\n", CURVES_CSV, n);
    return 1;
  }
  int failed = 0;
  double worst_lin = 0, worst_der = 0;
  printf("%-6s %-44s %24s %24s\n", "row", "system", "linear MAPE tot/dyn %",
         "curve MAPE tot/dyn %");
  for (int i = 0; i < n; i++) {
    struct erg_model lin, der;
    if (fit_one(&curves[i], false, &lin) != 0 || fit_one(&curves[i], true, &der) != 0) {
      failed = 1;
      continue;
    }
    printf("%-6s %-44.44s %11.2f / %9.2f %11.2f / %9.2f  (idle %.1f W fit, %.1f W curve)\n",
           curves[i].row, curves[i].system, lin.metrics.mape_total_percent,
           lin.metrics.mape_dynamic_percent, der.metrics.mape_total_percent,
           der.metrics.mape_dynamic_percent, der.idle_watts, curves[i].watts[0]);
    worst_lin = fmax(worst_lin, lin.metrics.mape_dynamic_percent);
    worst_der = fmax(worst_der, der.metrics.mape_dynamic_percent);
    /* The model must have picked the curve terms up and know the CPUs. */
    if (der.nfeatures != 1 + ERG_NDERIVED || der.ncpu != NCPU || lin.ncpu != NCPU) {
      fprintf(stderr, "FAIL %s: %zu features, ncpu %g\n", curves[i].row, der.nfeatures, der.ncpu);
      failed = 1;
    }
    /* Total MAPE is over the same cells for both fits; the dynamic one is
     * not (it depends on each fit's idle), so only its bound is checked. */
    if (!(der.metrics.mape_dynamic_percent <= 10) ||
        !(der.metrics.mape_total_percent < lin.metrics.mape_total_percent)) {
      fprintf(stderr, "FAIL %s: dynamic MAPE %.2f %%, total %.2f %% (linear %.2f %%)\n",
              curves[i].row, der.metrics.mape_dynamic_percent, der.metrics.mape_total_percent,
              lin.metrics.mape_total_percent);
      failed = 1;
    }
  }
  printf("worst dynamic MAPE: linear %.2f %%, with the curve terms %.2f %%\n", worst_lin,
         worst_der);
  return failed;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* The utilisation curve (derived features of u: the degree-6 Bernstein
 * tails) on power curves of real servers: SPECpower_ssj2008 results in specpower_curves.csv (copied
 * from ../shared, see its header). For each server a journal is
 * synthesised: 4 CPUs, per 5 s cell a load level, jittered within the cell
 * (so the cell's power is the mean of the curve over the jitter, not the
 * curve at the mean: the Jensen gap a real meter shows), power from the
 * curve (linear between its 10 % points) plus 1 % noise. The fit with the
 * derived features must reach a held-out dynamic MAPE ≤ 10 % on every
 * curve, and its curve must never fall with load (issue 27); the linear
 * fit's figures are printed for comparison. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "curve_sim.h"

#ifndef CURVES_CSV
#define CURVES_CSV "specpower_curves.csv"
#endif
#define NCPU 4
#define CELLS 2000
#define JITTER 0.08

static const struct curve_sim sim = {.cells = CELLS,
                                     .ncpu = NCPU,
                                     .step_seconds = 5,
                                     .idle_every = 10,
                                     .jitter = JITTER,
                                     .noise_watts = 1.0};

static int fit_one(const struct curve *c, bool derived, struct erg_model *m) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  struct erg_dataset ds;
  curve_synth(&ds, c, &sim, r);
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
  int n = curve_load_csv(CURVES_CSV, curves, 16);
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
    double at, drop = curve_model_max_drop(&der, 1.0, &at);
    if (drop > 1e-9 * der.idle_watts) {
      fprintf(stderr, "FAIL %s: the curve falls by %.3g W at u = %.3f\n", curves[i].row, drop, at);
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

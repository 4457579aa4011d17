// SPDX-License-Identifier: GPL-3.0-or-later
/* The utilisation curve's shape where it matters for issues 14 and 27:
 * - near zero load. A convex truth, 100 + 150·u^1.4 (the accuracy
 *   harness's simulator), is flat at u = 0; the cubic Bernstein basis
 *   could not start that flat. The curve (degree-8 Bernstein tails) must
 *   be within 6 % at u = 0.1 and 10 % at u = 0.05 (0.1 of a core on 2
 *   CPUs), and within 1–2 % at high load. (Numbers: docs/model.md.)
 * - item 1: beyond the utilisation the curve was trained to. Trained on
 *   u ≤ 0.6, the model must predict u = 0.8 and 0.9 within 5 % and 8 % of
 *   the dynamic power: the curve goes on with its end slope (a tangent of
 *   a convex truth, so a little low further out), and never falls. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "curve_sim.h"

#define NCPU 2
#define IDLE_W 100.0
#define T0 1763700000.0

static double truth_dynamic(double u) { return 150 * pow(u, 1.4); }

/* 600 cells at loads drawn from levels (each a fraction of the node) up to
 * u_top, 1 W meter noise; the curve features derived; idle recorded. */
static void fit_convex(double u_top, struct erg_model *m) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 5);
  struct erg_dataset ds;
  char why[256];
  erg_dataset_init(&ds);
  assert_true(erg_dataset_add_feature(&ds, "cpu_seconds_per_second", why, sizeof why) >= 0);
  assert_true(erg_dataset_add_feature(&ds, ERG_NCPU_COLUMN, why, sizeof why) >= 0);
  for (int i = 0; i < 600; i++) {
    /* Two processes, each at 0 (twice as likely) or 0.1 … 1 of a CPU. */
    double a = gsl_rng_uniform_int(r, 12), b = gsl_rng_uniform_int(r, 12);
    double u = (fmax(a - 1, 0) + fmax(b - 1, 0)) / 10 / NCPU * u_top;
    double x[2] = {u * NCPU, NCPU};
    double p = IDLE_W + truth_dynamic(u) + gsl_ran_gaussian(r, 1.0);
    assert_int_equal(erg_dataset_add_row(&ds, T0 + 5 * i, 5, p, 0, x), 0);
  }
  gsl_rng_free(r);
  assert_true(erg_dataset_derive(&ds, 0, why, sizeof why) > 0);
  struct erg_idle_profile idle = {.mean_watts = IDLE_W, .cells = 24, .ncpu = NCPU};
  struct erg_fit_options o;
  erg_fit_options_init(&o);
  o.idle_profile = &idle;
  assert_int_equal(erg_fit(&ds, &o, m, why, sizeof why), 0);
  erg_dataset_free(&ds);
}

/* The model's dynamic power at utilisation u, relative error to truth. */
static double curve_error(const struct erg_model *m, double u) {
  double dyn = curve_model_watts(m, u) - m->idle_watts;
  printf("  u = %.2f: model %.3f W, truth %.3f W, %+.1f %%\n", u, dyn, truth_dynamic(u),
         100 * (dyn / truth_dynamic(u) - 1));
  return dyn / truth_dynamic(u) - 1;
}

static void test_low_load(void **state) {
  (void)state;
  struct erg_model m;
  fit_convex(1.0, &m);
  assert_true(fabs(curve_error(&m, 0.05)) < 0.10);
  assert_true(fabs(curve_error(&m, 0.1)) < 0.06);
  assert_true(fabs(curve_error(&m, 0.2)) < 0.02);
  assert_true(fabs(curve_error(&m, 0.5)) < 0.01);
  assert_true(fabs(curve_error(&m, 0.9)) < 0.01);
  double at;
  assert_true(curve_model_max_drop(&m, 1, &at) == 0);
}

static void test_beyond_trained_utilisation(void **state) {
  (void)state;
  struct erg_model m;
  fit_convex(0.6, &m);
  assert_true(fabs(erg_model_utilization_max(&m) - 0.6) < 1e-9);
  assert_true(fabs(curve_error(&m, 0.5)) < 0.02);
  assert_true(fabs(curve_error(&m, 0.8)) < 0.05);
  assert_true(fabs(curve_error(&m, 0.9)) < 0.08);
  double at;
  assert_true(curve_model_max_drop(&m, 1, &at) == 0);
}

/* A node trained only up to u = 0.15 (the accuracy harness on a starved
 * host): the basis functions that never reached 2 % of their peak there
 * are left out of the fit (tails 5–8 of 8; u^6 of the older basis once
 * got 1.4 MW from noise, and its end
 * slope made the curve's continuation predict +80 % for a job at 3 × that
 * load). What remains continues with a sane slope: below the convex truth
 * at 3 × u_max (a tangent), not far above it. */
static void test_narrow_training(void **state) {
  (void)state;
  struct erg_model m;
  fit_convex(0.15, &m);
  for (size_t k = 0; k < m.nfeatures; k++)
    assert_true(erg_derived_index(m.feature[k]) <= ERG_DERIVED_T8_4);
  assert_true(fabs(curve_error(&m, 0.1)) < 0.05);
  double e = curve_error(&m, 0.45), at;
  assert_true(e > -0.30 && e < 0.05);
  assert_true(curve_model_max_drop(&m, 1, &at) == 0); /* continued, still rising */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_low_load),
      cmocka_unit_test(test_beyond_trained_utilisation),
      cmocka_unit_test(test_narrow_training),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Issue 27: the utilisation curve never falls with load, and model files
 * of older versions still predict what they did.
 * - A journal built to provoke a falling curve, as the wall meter of a
 *   40-core Broadwell server under NAS benchmarks gave it: high at 25 %
 *   load, lower in the middle, high again at 100 % (the fit there: +57,
 *   +39, +35, +56 W above idle), 3 W noise. The degree-6 Bernstein fit
 *   (before) falls; the Bernstein tails' fit (now) does not, on [0, 1],
 *   nor beyond the trained range when trained only up to u = 0.75.
 * - Model files with the degree-6 or the cubic Bernstein features load and
 *   give exactly the numbers the library gave before the change (golden
 *   values from it), falling ends included. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "curve_sim.h"
#include "fit_test.h"

static void fit_broadwell(bool before, double u_top, struct erg_model *m) {
  struct curve_sim s = {
      .cells = 2000, .ncpu = 40, .step_seconds = 5, .low_share = 0.2, .noise_watts = 3};
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 27);
  struct erg_dataset ds;
  char why[256];
  curve_synth(&ds, &curve_broadwell, &s, r);
  gsl_rng_free(r);
  /* Trained up to u_top only: the cells beyond are not in the journal. */
  for (size_t i = 0; i < ds.nrows; i++)
    if (ds.x[0][i] > u_top * s.ncpu)
      ds.flags[i] |= ERG_ROW_AGENT_MISSING;
  if (before)
    assert_int_equal(curve_add_bernstein6(&ds, why, sizeof why), 0);
  else
    assert_int_equal(erg_dataset_derive(&ds, 0, why, sizeof why), ERG_NDERIVED);
  assert_int_equal(erg_fit(&ds, NULL, m, why, sizeof why), 0);
  erg_dataset_free(&ds);
}

static void print_curve(const char *what, const struct erg_model *m) {
  printf("%s: idle %.1f W, above it", what, m->idle_watts);
  for (int k = 1; k <= 4; k++)
    printf(" %.1f W at %d %%%s", curve_model_watts(m, k / 4.0) - m->idle_watts, 25 * k,
           k < 4 ? "," : "\n");
}

static void test_provoked(void **state) {
  (void)state;
  struct erg_model before, after, after_part;
  double at;
  fit_broadwell(true, 1, &before);
  fit_broadwell(false, 1, &after);
  fit_broadwell(false, 0.75, &after_part);
  print_curve("degree-6 Bernstein (before)", &before);
  print_curve("degree-8 tails (now)", &after);
  print_curve("degree-8 tails, trained to u = 0.75", &after_part);
  double drop = curve_model_max_drop(&before, 1, &at);
  printf("before: falls by %.1f W (largest, at u = %.3f)\n", drop, at);
  assert_true(drop > 5); /* the data do provoke it */
  assert_true(curve_model_max_drop(&after, 1, &at) == 0);
  assert_true(fabs(erg_model_utilization_max(&after_part) - 0.75) < 0.01);
  assert_true(curve_model_max_drop(&after_part, 1, &at) == 0);
  /* And still a fit of the data: within 5 W of the high end. */
  assert_true(fabs(curve_model_watts(&after, 1) - 156) < 5);
}

/* Model files as erg wrote them before issue 27: the degree-6 Bernstein
 * curve (one rising at its end; one falling there, held level beyond it)
 * and the older cubic. */
static const char *const old_models[3] = {
    "{\"format\": \"erg-model\", \"version\": 1, \"node\": \"old6\", \"idle_watts\": 100,"
    " \"ncpu\": 8, \"features\": ["
    "{\"name\": \"cpu_seconds_per_second\", \"coefficient_watts_per_unit\": 2,"
    " \"training_max\": 5.6},"
    "{\"name\": \"node_cpu_utilization_bernstein6_1\", \"coefficient_watts_per_unit\": 40},"
    "{\"name\": \"node_cpu_utilization_bernstein6_2\", \"coefficient_watts_per_unit\": 10},"
    "{\"name\": \"node_cpu_utilization_bernstein6_3\", \"coefficient_watts_per_unit\": 60},"
    "{\"name\": \"node_cpu_utilization_bernstein6_4\", \"coefficient_watts_per_unit\": 20},"
    "{\"name\": \"node_cpu_utilization_bernstein6_5\", \"coefficient_watts_per_unit\": 80},"
    "{\"name\": \"node_cpu_utilization_bernstein6_6\", \"coefficient_watts_per_unit\": 70,"
    " \"training_max\": 0.117649}]}",
    "{\"format\": \"erg-model\", \"version\": 1, \"node\": \"old6\", \"idle_watts\": 90,"
    " \"ncpu\": 16, \"training_max_utilization\": 0.8, \"features\": ["
    "{\"name\": \"node_cpu_utilization_bernstein6_2\", \"coefficient_watts_per_unit\": 30},"
    "{\"name\": \"node_cpu_utilization_bernstein6_3\", \"coefficient_watts_per_unit\": 90},"
    "{\"name\": \"node_cpu_utilization_bernstein6_4\", \"coefficient_watts_per_unit\": 10}]}",
    "{\"format\": \"erg-model\", \"version\": 1, \"node\": \"old3\", \"idle_watts\": 50,"
    " \"ncpu\": 4, \"features\": ["
    "{\"name\": \"node_cpu_utilization_bernstein1\", \"coefficient_watts_per_unit\": 30},"
    "{\"name\": \"node_cpu_utilization_bernstein2\", \"coefficient_watts_per_unit\": 50},"
    "{\"name\": \"node_cpu_utilization_bernstein3\", \"coefficient_watts_per_unit\": 20,"
    " \"training_max\": 0.729}]}"};
#define OLD_NU 10
static const double old_u[OLD_NU] = {0, 0.05, 0.1, 0.3, 0.5, 0.7, 0.75, 0.85, 0.95, 1.0};
/* erg_model_predict at old_u with the library of git 8f49bab (before). */
static const double old_watts[3][OLD_NU] = {
    {100, 110.52125312499999, 117.65939999999999, 133.31379999999999, 146.125, 162.23700000000002,
     166.34398369140627, 174.55795107421872, 182.77191845703126, 186.87890214843753},
    {90, 91.110074999999995, 94.276800000000009, 116.98919999999998, 127.5, 111.69720000000001,
     105.8203125, 100.2912, 100.2912, 100.2912},
    {50, 54.420000000000002, 58.660000000000004, 73.219999999999999, 82.5, 84.579999999999998,
     83.75, 80.259999999999991, 77.540000000000006, 77.540000000000006}};

static void test_old_files(void **state) {
  (void)state;
  for (int f = 0; f < 3; f++) {
    char *path = fit_test_file(old_models[f]), why[256];
    struct erg_model m;
    assert_int_equal(erg_model_load(&m, path, why, sizeof why), 0);
    fit_test_unlink(path);
    for (int i = 0; i < OLD_NU; i++)
      assert_float_equal(curve_model_watts(&m, old_u[i]), old_watts[f][i], 1e-12 * old_watts[f][i]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_provoked),
      cmocka_unit_test(test_old_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Attribution: energy conservation over many random cells for every idle
 * policy (including P below idle, no activity at all and missing power),
 * equal shares for identical processes, and the documented special cases. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <gsl/gsl_rng.h>

#include "erg_fit.h"

#define NF 3
#define MAXP 40

static gsl_rng *rng;

static struct erg_model test_model(void) {
  struct erg_model m = {0};
  m.version = ERG_MODEL_VERSION;
  m.nfeatures = NF;
  strcpy(m.feature[0], "cpu_seconds_per_second");
  strcpy(m.feature[1], "instructions_per_second");
  strcpy(m.feature[2], "disk_bytes_per_second");
  m.coef[0] = 12;
  m.coef[1] = 3e-9;
  m.coef[2] = 0; /* a feature the fit found useless */
  m.idle_watts = 95;
  return m;
}

/* One random cell; returns the number of processes (system is index 0). */
static size_t random_cell(double *x, double *measured, int kind) {
  size_t n = 1 + gsl_rng_uniform_int(rng, MAXP);
  for (size_t p = 0; p < n; p++) {
    bool idle = kind == 1 || gsl_rng_uniform(rng) < 0.3;
    x[p * NF + 0] = idle ? 0 : gsl_rng_uniform(rng) * 2;
    x[p * NF + 1] = idle ? 0 : gsl_rng_uniform(rng) * 3e9;
    x[p * NF + 2] = gsl_rng_uniform(rng) * 1e7;
  }
  switch (kind) {
    case 0:
      *measured = 95 + gsl_rng_uniform(rng) * 400;
      break; /* normal */
    case 1:
      *measured = 50 + gsl_rng_uniform(rng) * 300;
      break; /* Σs = 0 */
    case 2:
      *measured = gsl_rng_uniform(rng) * 95;
      break; /* P < β0 */
    default:
      *measured = NAN;
      break; /* no meter */
  }
  return n;
}

static void check_cell(const struct erg_model *m, const double *x, size_t n, double measured,
                       enum erg_idle_policy policy) {
  double w[MAXP];
  struct erg_attribution a;
  assert_int_equal(erg_attribute_cell(m, measured, x, n, 0, policy, w, &a), 0);
  double sum = a.idle_separate_watts;
  for (size_t p = 0; p < n; p++) {
    assert_true(w[p] >= 0);
    sum += w[p];
  }
  double want = a.total_watts;
  if (isnan(measured)) {
    double node[NF] = {0};
    for (size_t p = 0; p < n; p++)
      for (int k = 0; k < NF; k++)
        node[k] += x[p * NF + k];
    assert_true(a.estimated);
    assert_true(fabs(want - erg_model_predict(m, node)) <= 1e-9 * want);
  } else {
    assert_false(a.estimated);
    assert_true(want == measured);
  }
  if (!(fabs(sum - want) <= 1e-9 * fabs(want)))
    fail_msg("policy %s: parts sum to %.15g, cell is %.15g", erg_idle_policy_name(policy), sum,
             want);
  assert_true(fabs(a.idle_watts + a.dynamic_watts - want) <= 1e-9 * fabs(want));
  assert_true(a.idle_watts == fmin(m->idle_watts, want));
  assert_true(a.dynamic_watts >= 0);
  assert_true(a.idle_separate_watts == (policy == ERG_IDLE_SEPARATE ? a.idle_watts : 0));
}

static void test_conservation(void **state) {
  (void)state;
  struct erg_model m = test_model();
  double x[MAXP * NF], measured;
  int cells = 0;
  for (int policy = ERG_IDLE_SEPARATE; policy <= ERG_IDLE_PROPORTIONAL; policy++)
    for (int i = 0; i < 6000; i++) {
      size_t n = random_cell(x, &measured, i % 4);
      check_cell(&m, x, n, measured, (enum erg_idle_policy)policy);
      cells++;
    }
  assert_int_equal(cells, 18000);
}

static void test_identical_processes(void **state) {
  (void)state;
  struct erg_model m = test_model();
  double x[4 * NF] = {0.1, 1e8, 0, 0.7, 2e9, 5, 0.7, 2e9, 5, 0.7, 2e9, 5};
  double w[4];
  struct erg_attribution a;
  for (int policy = ERG_IDLE_SEPARATE; policy <= ERG_IDLE_PROPORTIONAL; policy++) {
    assert_int_equal(erg_attribute_cell(&m, 180, x, 4, 0, (enum erg_idle_policy)policy, w, &a), 0);
    assert_true(w[1] == w[2] && w[2] == w[3]);
    assert_true(w[1] > w[0]);
  }
}

/* Issue 14, item 1: a linear feature beyond its training maximum counts
 * as it is. An I/O process whose disk rate is 1.2 × anything trained,
 * beside a CPU-bound one, in a cell whose power is the linear truth: each
 * gets exactly its true linear part. (A clamp at the training maximum gave
 * the I/O process 10 of its 12 W and the CPU process 2 W that was not its.)
 * Also the range check names the feature and by how much. */
static void test_training_max_extrapolate(void **state) {
  (void)state;
  struct erg_model m = test_model();
  m.coef[2] = 1e-6; /* 1 W per MB/s */
  m.feature_max[0] = 4;
  m.feature_max[2] = 10e6;
  /* system, a CPU-bound process (12 W), a process writing 12 MB/s (12 W) */
  double x[3 * NF] = {0, 0, 0, 1, 0, 0, 0, 0, 12e6};
  double w[3];
  struct erg_attribution a;
  assert_int_equal(erg_attribute_cell(&m, 95 + 24, x, 3, 0, ERG_IDLE_SEPARATE, w, &a), 0);
  assert_true(fabs(w[1] - 12) < 1e-9);
  assert_true(fabs(w[2] - 12) < 1e-9);
  assert_true(fabs(w[0] + w[1] + w[2] + a.idle_separate_watts - 119) < 1e-9);
  /* The prediction is linear too (an estimated cell gets the same). */
  double node[NF] = {1, 0, 12e6};
  assert_true(fabs(erg_model_predict(&m, node) - 119) < 1e-9);
  struct erg_range_excess e;
  assert_true(erg_model_beyond_training(&m, node, 1, &e));
  assert_string_equal(e.feature, "disk_bytes_per_second");
  assert_true(e.value == 12e6 && e.training_max == 10e6);
  node[2] = 10e6; /* at the maximum: inside */
  assert_false(erg_model_beyond_training(&m, node, 1, &e));
  m.feature_max[2] = 0; /* no recorded maximum (old model files): never beyond */
  node[2] = 1e12;
  assert_false(erg_model_beyond_training(&m, node, 1, &e));
}

/* The documented special cases, with exact numbers. */
static void test_special_cases(void **state) {
  (void)state;
  struct erg_model m = test_model();
  double w[3];
  struct erg_attribution a;
  /* system + two processes: s = 0, 12, 0 (p2 only has disk, β = 0). */
  double x[3 * NF] = {0, 0, 0, 1, 0, 0, 0, 0, 1e6};
  assert_int_equal(erg_attribute_cell(&m, 125, x, 3, 0, ERG_IDLE_SEPARATE, w, &a), 0);
  assert_true(a.idle_watts == 95 && a.dynamic_watts == 30 && a.idle_separate_watts == 95);
  assert_true(w[0] == 0 && w[1] == 30 && w[2] == 0);
  /* even: idle over the active processes only. */
  assert_int_equal(erg_attribute_cell(&m, 125, x, 3, 0, ERG_IDLE_EVEN, w, &a), 0);
  assert_true(w[0] == 0 && w[1] == 125 && w[2] == 0);
  /* below idle: no dynamic part, idle is the measured power. */
  assert_int_equal(erg_attribute_cell(&m, 80, x, 3, 0, ERG_IDLE_SEPARATE, w, &a), 0);
  assert_true(a.idle_watts == 80 && a.dynamic_watts == 0 && w[1] == 0);
  /* no meter: prediction, marked estimated, each gets its own s_p. */
  assert_int_equal(erg_attribute_cell(&m, NAN, x, 3, 0, ERG_IDLE_SEPARATE, w, &a), 0);
  assert_true(a.estimated && a.total_watts == 107 && w[1] == 12);
  /* no activity: dynamic to [system]; even idle over everyone. */
  double quiet[3 * NF] = {0};
  assert_int_equal(erg_attribute_cell(&m, 101, quiet, 3, 2, ERG_IDLE_EVEN, w, &a), 0);
  assert_true(fabs(w[2] - (6 + 95.0 / 3)) < 1e-12 && fabs(w[0] - 95.0 / 3) < 1e-12);
  assert_int_equal(erg_attribute_cell(&m, 101, quiet, 3, 2, ERG_IDLE_PROPORTIONAL, w, &a), 0);
  assert_true(w[2] == 101 && w[0] == 0);
  /* bad arguments */
  assert_int_equal(erg_attribute_cell(&m, 101, quiet, 0, 0, ERG_IDLE_EVEN, w, &a), -1);
  assert_int_equal(erg_attribute_cell(&m, 101, quiet, 3, 3, ERG_IDLE_EVEN, w, &a), -1);
  double inf[NF] = {INFINITY, 0, 0};
  assert_int_equal(erg_attribute_cell(&m, NAN, inf, 1, 0, ERG_IDLE_EVEN, w, &a), 0);
  assert_true(a.total_watts == 95); /* a non-finite activity counts as none */
  assert_int_equal(erg_idle_policy_parse("proportional"), ERG_IDLE_PROPORTIONAL);
  assert_int_equal(erg_idle_policy_parse("evenly"), -1);
  assert_string_equal(erg_idle_policy_name(ERG_IDLE_EVEN), "even");
}

int main(void) {
  rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 777);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conservation),
      cmocka_unit_test(test_identical_processes),
      cmocka_unit_test(test_training_max_extrapolate),
      cmocka_unit_test(test_special_cases),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  gsl_rng_free(rng);
  return rc;
}

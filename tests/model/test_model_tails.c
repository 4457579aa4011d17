// SPDX-License-Identifier: GPL-3.0-or-later
/* Issue 38, ergd's side: a cell whose load changes within it is predicted
 * and attributed with the cell's mean of its samples' curve tails (what
 * the journal carries and the fit took), not with the curve at the cell's
 * mean utilisation, which is below what the meter shows of a convex
 * curve. Beyond the trained utilisation the curve goes on from the cell's
 * mean as before; a cell of another CPU count than the model's has no
 * usable tails. Samples go through an erg_grid as ergd feeds it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../erg_test.h"

#include "erg_collector.h"
#include "erg_fit.h"

#define NS 1000000000ULL
#define T0 1700000000LL
#define STEP 5u
#define NCPU 4.0

/* A curve-only model on NCPU CPUs: idle 80 W, tails' coefficients rising
 * (a convex curve), trained up to u_max. */
static void tails_model(struct erg_model *m, int *map, double u_max) {
  memset(m, 0, sizeof *m);
  m->version = ERG_MODEL_VERSION;
  m->nfeatures = ERG_NDERIVED;
  m->ncpu = NCPU;
  m->idle_watts = 80;
  m->utilization_max = u_max;
  for (int d = 0; d < ERG_NDERIVED; d++) {
    strcpy(m->feature[d], erg_derived_names[d]);
    m->coef[d] = 10.0 * (d + 1);
    map[d] = ERG_NFEATURES + d;
  }
}

/* The model's curve (above idle) at u, as erg_model_derived_value has it. */
static double curve_at(const struct erg_model *m, double u) {
  double w = 0;
  for (size_t k = 0; k < m->nfeatures; k++)
    w += m->coef[k] * erg_model_derived_value(m, k, u * NCPU);
  return w;
}

/* One cell of two 2.5 s samples, key "a" at u_lo then "b" at u_hi (of
 * grid_ncpu CPUs, 0: unknown); its modelled power and the two shares. */
static double cell_power(const struct erg_model *m, const int *map, double grid_ncpu, double u_lo,
                         double u_hi, double *share_a, double *share_b) {
  struct erg_cell_model cm = {m, map, ERG_IDLE_SEPARATE, NULL};
  struct erg_grid g;
  erg_grid_init(&g, STEP);
  g.ncpu = grid_ncpu;
  uint64_t t0 = (uint64_t)T0 * NS, mid = t0 + STEP * NS / 2, t1 = (uint64_t)(T0 + STEP) * NS;
  double half = STEP / 2.0;
  struct erg_grid_proc a = {"a", u_lo * NCPU * half, 0, 0, 0, 0};
  struct erg_grid_proc b = {"b", u_hi * NCPU * half, 0, 0, 0, 0};
  erg_grid_add_procs(&g, t0, mid, u_lo * NCPU * half, 0, &a, 1);
  erg_grid_add_procs(&g, mid, t1, u_hi * NCPU * half, 0, &b, 1);
  struct erg_grid_cell *c = &g.cells[(T0 / STEP) % ERG_GRID_SLOTS];
  struct erg_grid_result r = {.t0 = T0, .step = STEP, .measured_watts = 200, .cell = c};
  struct erg_attr_share sh[3];
  struct erg_cell_power pw;
  assert_int_equal(erg_cell_attribute(&cm, 0, &r, sh, &pw), 0);
  assert_float_equal(erg_cell_predict(&cm, c, STEP), pw.modelled_watts, 1e-9);
  /* The prediction's variance from the coefficients (a shared meter's
   * split, collector/groups.c): with the rank-one covariance 0.01 β βᵀ it
   * is 0.01 (Σ β_k x_k)², the idle's variance left out; none without one. */
  assert_true(m->ncov != m->nfeatures + 1 ? erg_cell_predict_var(&cm, c, STEP) == 0 : true);
  struct erg_model mm = *m;
  mm.ncov = m->nfeatures + 1;
  memset(mm.cov, 0, sizeof mm.cov);
  mm.cov[0][0] = 5;
  for (size_t k = 0; k < m->nfeatures; k++)
    for (size_t e = 0; e < m->nfeatures; e++)
      mm.cov[1 + k][1 + e] = 0.01 * m->coef[k] * m->coef[e];
  struct erg_cell_model cm2 = {&mm, map, ERG_IDLE_SEPARATE, NULL};
  double d = erg_cell_predict(&cm2, c, STEP) - mm.idle_watts;
  assert_float_equal(erg_cell_predict_var(&cm2, c, STEP), 0.01 * d * d, 1e-9 * (1 + d * d));
  for (int i = 0; i < 2; i++)
    *(strcmp(sh[i].key, "a") == 0 ? share_a : share_b) = sh[i].watts;
  assert_float_equal(*share_a + *share_b + sh[2].watts, 200 - 80, 1e-9);
  erg_grid_free(&g);
  return pw.modelled_watts;
}

/* Half the cell idle, half at u = 0.4: the meter shows the mean of the
 * curve, idle + curve(0.4) / 2, above the curve at the mean u = 0.2. */
static void test_cell_mean_tails(void **state) {
  (void)state;
  struct erg_model m;
  int map[ERG_FIT_MAX_FEATURES];
  tails_model(&m, map, 1);
  double sa, sb;
  double p = cell_power(&m, map, NCPU, 0, 0.4, &sa, &sb);
  double want = 80 + curve_at(&m, 0.4) / 2, at_mean = 80 + curve_at(&m, 0.2);
  printf("  half idle, half u = 0.4: modelled %.3f W (the curve's mean %.3f W, at the mean u "
         "%.3f W)\n",
         p, want, at_mean);
  assert_true(want > at_mean + 1);
  assert_float_equal(p, want, 1e-9);
  /* The curve's power goes by CPU share, all of it to b here. */
  assert_float_equal(sa, 0, 1e-12);
  assert_float_equal(sb, 120, 1e-9);
  /* A steady cell: the tails of its mean, as before. */
  p = cell_power(&m, map, NCPU, 0.3, 0.3, &sa, &sb);
  assert_float_equal(p, 80 + curve_at(&m, 0.3), 1e-9);
}

/* Beyond the trained utilisation (here 0.5; the cell's mean 0.6) the curve
 * goes on from the cell's mean (erg_model_derived_value), as the fit
 * predicts such cells; a grid without the CPU count (no tails) or of
 * another CPU count than the model's: the curve at the mean. */
static void test_fallbacks(void **state) {
  (void)state;
  struct erg_model m;
  int map[ERG_FIT_MAX_FEATURES];
  double sa, sb;
  tails_model(&m, map, 0.5);
  assert_float_equal(cell_power(&m, map, NCPU, 0.4, 0.8, &sa, &sb), 80 + curve_at(&m, 0.6), 1e-9);
  /* Within it (mean 0.4), the tails, although one sample is beyond. */
  assert_true(cell_power(&m, map, NCPU, 0.2, 0.6, &sa, &sb) > 80 + curve_at(&m, 0.4) + 0.1);
  tails_model(&m, map, 1);
  assert_float_equal(cell_power(&m, map, 0, 0, 0.4, &sa, &sb), 80 + curve_at(&m, 0.2), 1e-9);
  assert_float_equal(cell_power(&m, map, 2 * NCPU, 0, 0.4, &sa, &sb), 80 + curve_at(&m, 0.2), 1e-9);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cell_mean_tails),
      cmocka_unit_test(test_fallbacks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

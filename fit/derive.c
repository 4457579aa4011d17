// SPDX-License-Identifier: GPL-3.0-or-later
/* Derived node-level features: a utilisation curve the linear model can
 * bend (docs/model.md, "Utilisation curve"). Power of real servers is not
 * linear in CPU time (SPECpower curves are convex, concave or both), and
 * the fit is linear with non-negative coefficients, so it gets a basis of
 * u whose non-negative combinations are the curves wanted: the tails of
 * the degree-8 Bernstein basis, T_i = Σ_{j≥i} b_j. Σ d_i T_i is Σ c_j b_j
 * with c_j = d_1 + … + d_j, i.e. rising Bernstein coefficients, so a
 * curve that never falls with load (T_i is the chance of at least i
 * successes in 8 trials of chance u, which rises with u). The Bernstein
 * polynomials b_j themselves (degree 6, issue 14; still read from older
 * model files) gave curves ≥ 0, not monotone: +57 W at 25 % load, +39 W at
 * 50 % on a real 40-core server's meter. Degree 8, not 6: rising
 * coefficients are sufficient for a monotone curve, not necessary, and
 * at degree 6 they cost the concave servers of
 * tests/fit/specpower_curves.csv (a steep first 10 % of load) 15–25 % at
 * u ≤ 0.1; degree 8 contains every degree-6 curve with rising
 * coefficients (degree elevation keeps them rising) and is as close as
 * the old basis there (tests/bench/curve_compare.c). The cubic (also
 * still read) could not start as flat as u^1.4 (+32 % at u = 0.05). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit_int.h"

const char *const erg_derived_names[ERG_NDERIVED_ALL] = {
    [ERG_DERIVED_T8_1] = "node_cpu_utilization_tail8_1",
    [ERG_DERIVED_T8_2] = "node_cpu_utilization_tail8_2",
    [ERG_DERIVED_T8_3] = "node_cpu_utilization_tail8_3",
    [ERG_DERIVED_T8_4] = "node_cpu_utilization_tail8_4",
    [ERG_DERIVED_T8_5] = "node_cpu_utilization_tail8_5",
    [ERG_DERIVED_T8_6] = "node_cpu_utilization_tail8_6",
    [ERG_DERIVED_T8_7] = "node_cpu_utilization_tail8_7",
    [ERG_DERIVED_T8_8] = "node_cpu_utilization_tail8_8",
    [ERG_DERIVED_B6_1] = "node_cpu_utilization_bernstein6_1",
    [ERG_DERIVED_B6_2] = "node_cpu_utilization_bernstein6_2",
    [ERG_DERIVED_B6_3] = "node_cpu_utilization_bernstein6_3",
    [ERG_DERIVED_B6_4] = "node_cpu_utilization_bernstein6_4",
    [ERG_DERIVED_B6_5] = "node_cpu_utilization_bernstein6_5",
    [ERG_DERIVED_B6_6] = "node_cpu_utilization_bernstein6_6",
    [ERG_DERIVED_B3_1] = "node_cpu_utilization_bernstein1",
    [ERG_DERIVED_B3_2] = "node_cpu_utilization_bernstein2",
    [ERG_DERIVED_B3_3] = "node_cpu_utilization_bernstein3",
};

int erg_derived_index(const char *name) {
  for (int d = 0; d < ERG_NDERIVED_ALL; d++)
    if (strcmp(name, erg_derived_names[d]) == 0)
      return d;
  return -1;
}

/* The tails' degree: one feature per tail. */
enum { TAIL_DEGREE = ERG_NDERIVED };

/* Degree n, index j (1..n) and whether derived feature d is a tail. */
static void derived_degree(int d, int *n, int *j, bool *tail) {
  *tail = d < ERG_NDERIVED;
  *n = d < ERG_NDERIVED ? TAIL_DEGREE : d < ERG_DERIVED_B3_1 ? 6 : 3;
  *j = d < ERG_NDERIVED       ? d + 1
       : d < ERG_DERIVED_B3_1 ? d - ERG_DERIVED_B6_1 + 1
                              : d - ERG_DERIVED_B3_1 + 1;
}

/* Bernstein polynomial b_{j,n}(u) = C(n, j) u^j (1−u)^(n−j); 0 outside 0..n. */
static double bernstein(int j, int n, double u) {
  if (j < 0 || j > n)
    return 0;
  double c = 1;
  for (int i = 1; i <= j; i++)
    c = c * (n - j + i) / i;
  return c * pow(u, j) * pow(1 - u, n - j);
}

double erg_derived_utilization(double cpu_seconds_per_second, double ncpu) {
  if (!isfinite(cpu_seconds_per_second) || !(ncpu > 0))
    return NAN;
  /* Sampling jitter can push busy time a little past the CPU count. */
  return fmin(fmax(cpu_seconds_per_second / ncpu, 0), 1);
}

/* The tails T_1..T_8 at u (t[i - 1] = T_i): the Bernstein values once,
 * then suffix sums, so a row's eight features cost one pass, not 36
 * polynomials (erg_dataset_derive of 120,000 rows took 0.23 s that way). */
static void tails_at(double u, double *t) {
  double up[TAIL_DEGREE + 1], vp[TAIL_DEGREE + 1], c = 1 /* C(8, 8) */, sum = 0;
  up[0] = vp[0] = 1;
  for (int k = 1; k <= TAIL_DEGREE; k++) {
    up[k] = up[k - 1] * u;
    vp[k] = vp[k - 1] * (1 - u);
  }
  for (int j = TAIL_DEGREE; j >= 1; j--) {
    sum += c * up[j] * vp[TAIL_DEGREE - j];
    t[j - 1] = sum;
    c = c * j / (TAIL_DEGREE - j + 1); /* C(8, j - 1) */
  }
}

static double derived_at(int d, double u) {
  int n, j;
  bool tail;
  derived_degree(d, &n, &j, &tail);
  if (!tail)
    return bernstein(j, n, u);
  double t[TAIL_DEGREE];
  tails_at(u, t);
  return t[j - 1];
}

double erg_derived_peak(int d) {
  if (d < 0 || d >= ERG_NDERIVED_ALL)
    return NAN;
  int n, j;
  bool tail;
  derived_degree(d, &n, &j, &tail);
  return derived_at(d, tail ? 1.0 : (double)j / n);
}

double erg_derived_value(int d, double cpu_seconds_per_second, double ncpu) {
  double u = erg_derived_utilization(cpu_seconds_per_second, ncpu);
  if (isnan(u) || d < 0 || d >= ERG_NDERIVED_ALL)
    return NAN;
  return derived_at(d, u);
}

/* Beyond the utilisation the curve was fitted to, a polynomial is not
 * known (its top coefficients are barely constrained there), so the curve
 * goes on as a straight line. Its slope is the secant over the top quarter
 * of the trained range, not the derivative at u_max: fitted values are
 * held by the data, a degree-6 polynomial's end derivative is not (a short
 * journal's refit gave a slope that overshot held-out cells by ~280 W).
 * Each basis function continues with its own secant, so the sum does:
 * a tail's secant is >= 0, so a tail curve goes on rising or level,
 * continuous at u_max. A curve of the older bases that falls there (a
 * concave fit's end) is held level instead: power does not drop with
 * load. coef[d] is the curve's coefficient on derived feature d (0 when
 * not in the model). */
static double derived_secant(int d, double u_max) {
  double h = u_max / 4;
  return (derived_at(d, u_max) - derived_at(d, u_max - h)) / h;
}

double erg_derived_value_extended(int d, double u, double u_max, const double *coef) {
  if (isnan(u) || d < 0 || d >= ERG_NDERIVED_ALL)
    return NAN;
  if (!(u_max > 0) || u <= u_max)
    return derived_at(d, u);
  double curve_slope = 0;
  for (int e = 0; e < ERG_NDERIVED_ALL; e++)
    if (coef[e] != 0)
      curve_slope += coef[e] * derived_secant(e, u_max);
  double v = derived_at(d, u_max);
  return curve_slope > 0 ? v + derived_secant(d, u_max) * (u - u_max) : v;
}

int fit_dataset_column(const struct erg_dataset *ds, const char *name) {
  for (size_t k = 0; k < ds->nfeatures; k++)
    if (strcmp(ds->feature[k], name) == 0)
      return (int)k;
  return -1;
}

int erg_dataset_derive(struct erg_dataset *ds, double ncpu_default, char *why, size_t whylen) {
  int cpu = fit_dataset_column(ds, FIT_CPU_COLUMN), nc = fit_dataset_column(ds, ERG_NCPU_COLUMN);
  if (cpu < 0 || (nc < 0 && !(ncpu_default > 0)))
    return 0;
  /* The default fills the ncpu column too: the fit takes the model's ncpu
   * from it, and attribution needs that to compute u. */
  if (nc < 0 && (nc = erg_dataset_add_feature(ds, ERG_NCPU_COLUMN, why, whylen)) < 0)
    return -1;
  int col[ERG_NDERIVED];
  for (int d = 0; d < ERG_NDERIVED; d++)
    if ((col[d] = erg_dataset_add_feature(ds, erg_derived_names[d], why, whylen)) < 0)
      return -1;
  size_t have = 0;
  for (size_t i = 0; i < ds->nrows; i++) {
    if (!(ds->x[nc][i] > 0) && ncpu_default > 0)
      ds->x[nc][i] = ncpu_default;
    double u = erg_derived_utilization(ds->x[cpu][i], ds->x[nc][i]), t[TAIL_DEGREE];
    tails_at(u, t);
    bool given = true;
    for (int d = 0; d < ERG_NDERIVED; d++)
      given &= isfinite(ds->x[col[d]][i]) && ds->x[col[d]][i] >= 0 && ds->x[col[d]][i] <= 1;
    /* A journal that carries the tails has them as the cell's mean of
     * the tails of its samples' utilisation: what a meter integrates over
     * a cell whose load changes within it (issue 38). The tails of the
     * cell's mean utilisation are below that for every tail a convex
     * curve leans on, and a curve fitted to them came out +20–30 % at 0.1
     * core. They are kept; other rows (older files) get the tails of the
     * mean. */
    for (int d = 0; d < ERG_NDERIVED && !given; d++)
      ds->x[col[d]][i] = isnan(u) ? NAN : t[d];
    have += !isnan(u);
  }
  return have ? ERG_NDERIVED : 0;
}

void erg_dataset_drop_derived(struct erg_dataset *ds) {
  size_t kept = 0;
  for (size_t k = 0; k < ds->nfeatures; k++) {
    if (erg_derived_index(ds->feature[k]) >= 0) {
      free(ds->x[k]);
      continue;
    }
    if (kept != k) {
      memcpy(ds->feature[kept], ds->feature[k], sizeof ds->feature[kept]);
      ds->x[kept] = ds->x[k];
    }
    kept++;
  }
  for (size_t k = kept; k < ds->nfeatures; k++)
    ds->x[k] = NULL;
  ds->nfeatures = kept;
}

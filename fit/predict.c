// SPDX-License-Identifier: GPL-3.0-or-later
/* A model's prediction and attribution terms, also beyond the range it
 * was trained on (docs/model.md, "Beyond the training range"): linear
 * terms extrapolate (a linear cost such as disk power per MB/s stays
 * linear; a clamp at the training maximum gave an I/O job −8 % and its
 * CPU neighbour +12 % in the cells where its disk rate was 20 % past it),
 * and the utilisation curve continues as a straight line with its end
 * slope. Which cells were beyond the range is for the caller to count. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "erg_common.h"
#include "fit_int.h"

/* Tolerance for "beyond": a training cell itself is not (u recovered from
 * u^8 may differ in the last bits). */
#define RANGE_EPS 1e-9

double fit_basis_root(int d, double v) {
  if (d == ERG_DERIVED_T8_8)
    return v > 0 ? pow(v, 1.0 / 8) : 0;
  if (d == ERG_DERIVED_B6_6)
    return v > 0 ? pow(v, 1.0 / 6) : 0;
  if (d == ERG_DERIVED_B3_3)
    return v > 0 ? cbrt(v) : 0;
  return -1;
}

double erg_model_term(const struct erg_model *m, size_t k, double x) { return m->coef[k] * x; }

double erg_model_predict(const struct erg_model *m, const double *x) {
  double p = m->idle_watts;
  for (size_t k = 0; k < m->nfeatures; k++)
    p += erg_model_term(m, k, x[k]);
  return p;
}

double erg_model_utilization_max(const struct erg_model *m) {
  if (m->utilization_max > 0)
    return m->utilization_max;
  for (size_t k = 0; k < m->nfeatures; k++) {
    double r = fit_basis_root(erg_derived_index(m->feature[k]), m->feature_max[k]);
    if (r > 0)
      return r;
  }
  return 0;
}

double erg_model_derived_value(const struct erg_model *m, size_t k, double cpu_seconds_per_second) {
  int d = k < m->nfeatures ? erg_derived_index(m->feature[k]) : -1;
  double u = erg_derived_utilization(cpu_seconds_per_second, m->ncpu);
  if (d < 0 || isnan(u))
    return NAN;
  double coef[ERG_NDERIVED_ALL] = {0};
  for (size_t e = 0; e < m->nfeatures; e++) {
    int de = erg_derived_index(m->feature[e]);
    if (de >= 0)
      coef[de] = m->coef[e];
  }
  return erg_derived_value_extended(d, u, erg_model_utilization_max(m), coef);
}

double erg_model_derived_value_cell(const struct erg_model *m, size_t k,
                                    double cpu_seconds_per_second, const double *tails) {
  double v = erg_model_derived_value(m, k, cpu_seconds_per_second);
  int d = k < m->nfeatures ? erg_derived_index(m->feature[k]) : -1;
  if (!tails || !isfinite(v) || d < 0 || d >= ERG_NDERIVED)
    return v;
  /* As the fit predicts its rows (fit.c, coef_predict): within the
   * trained range a tail is the cell's own mean of it; beyond, the curve
   * goes on from the cell's mean utilisation. */
  double umax = erg_model_utilization_max(m);
  double u = erg_derived_utilization(cpu_seconds_per_second, m->ncpu);
  if (umax > 0 && u > umax * (1 + RANGE_EPS))
    return v;
  return isfinite(tails[d]) && tails[d] >= 0 && tails[d] <= 1 ? tails[d] : v;
}

/* Records (name, value, max) in out when value exceeds max by more than
 * any feature before. */
static void range_note(struct erg_range_excess *out, double *worst, const char *name, double value,
                       double max) {
  if (!(max > 0) || !isfinite(value) || value <= max * (1 + RANGE_EPS))
    return;
  if (value / max <= *worst)
    return;
  *worst = value / max;
  erg_strlcpy(out->feature, name, sizeof out->feature);
  out->value = value;
  out->training_max = max;
}

bool erg_model_beyond_training(const struct erg_model *m, const double *x,
                               double cpu_seconds_per_second, struct erg_range_excess *out) {
  double worst = 1;
  memset(out, 0, sizeof *out);
  for (size_t k = 0; k < m->nfeatures; k++)
    if (erg_derived_index(m->feature[k]) < 0)
      range_note(out, &worst, m->feature[k], x[k], m->feature_max[k]);
  double u = erg_derived_utilization(cpu_seconds_per_second, m->ncpu);
  range_note(out, &worst, "cpu_utilization", u, erg_model_utilization_max(m));
  return worst > 1;
}

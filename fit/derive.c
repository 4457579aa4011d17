/* Derived node-level features: a utilisation curve the linear model can
 * bend (docs/model.md, "Utilisation curve"). Power of real servers is not
 * linear in CPU time (SPECpower curves are convex, concave or both), and
 * the fit is linear with non-negative coefficients, so it gets the cubic
 * Bernstein basis of u: each ≥ 0 on [0, 1], as NNLS needs, and together
 * any cubic through 0 with non-negative Bernstein coefficients. (The
 * quadratic pair u², u(1−u) missed 10 % dynamic MAPE on 3 of the 8 real
 * curves in tests/fit/specpower_curves.csv; the cubic basis met it on all.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_fit.h"

#define CPU_COLUMN "cpu_seconds_per_second"

const char *const erg_derived_names[ERG_NDERIVED] = {
    [ERG_DERIVED_B1] = "node_cpu_utilization_bernstein1",
    [ERG_DERIVED_B2] = "node_cpu_utilization_bernstein2",
    [ERG_DERIVED_B3] = "node_cpu_utilization_bernstein3",
};

int erg_derived_index(const char *name) {
  for (int d = 0; d < ERG_NDERIVED; d++)
    if (strcmp(name, erg_derived_names[d]) == 0)
      return d;
  return -1;
}

double erg_derived_value(int d, double cpu_seconds_per_second, double ncpu) {
  if (!isfinite(cpu_seconds_per_second) || !(ncpu > 0) || d < 0 || d >= ERG_NDERIVED)
    return NAN;
  /* Sampling jitter can push busy time a little past the CPU count. */
  double u = fmin(fmax(cpu_seconds_per_second / ncpu, 0), 1);
  double v = 1 - u;
  return d == ERG_DERIVED_B1 ? 3 * u * v * v : d == ERG_DERIVED_B2 ? 3 * u * u * v : u * u * u;
}

static int dataset_column(const struct erg_dataset *ds, const char *name) {
  for (size_t k = 0; k < ds->nfeatures; k++)
    if (strcmp(ds->feature[k], name) == 0)
      return (int)k;
  return -1;
}

int erg_dataset_derive(struct erg_dataset *ds, double ncpu_default, char *why, size_t whylen) {
  int cpu = dataset_column(ds, CPU_COLUMN), nc = dataset_column(ds, ERG_NCPU_COLUMN);
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
    for (int d = 0; d < ERG_NDERIVED; d++)
      ds->x[col[d]][i] = erg_derived_value(d, ds->x[cpu][i], ds->x[nc][i]);
    have += isfinite(ds->x[col[0]][i]);
  }
  return have ? ERG_NDERIVED : 0;
}

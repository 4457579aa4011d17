// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer target: the model file loader (fit/model.c) on the input as a
 * model JSON; an accepted model must pass erg_model_check and predict. The
 * same input as a group's cross covariance (fit/group_cov.c): an accepted
 * one has its members' terms inside its matrix. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "erg_fit.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_file_write("model.json", data, size);
  if (!path)
    return 0;
  static struct erg_model m; /* large: not on the stack */
  static struct erg_group_cov g;
  char why[256] = "";
  if (erg_group_cov_load(&g, path, why, sizeof why) == 0) {
    double x[ERG_FIT_MAX_FEATURES];
    for (size_t k = 0; k < ERG_FIT_MAX_FEATURES; k++)
      x[k] = 1.0;
    if (g.nnodes < 2 || g.nnodes > ERG_GROUP_MAX_NODES || g.nterms > ERG_GROUP_COV_TERMS)
      abort();
    for (size_t a = 0; a < g.nnodes; a++)
      for (size_t k = 0; k < g.nfeatures[a]; k++)
        if (g.term[a][k] < 1 || g.term[a][k] >= g.nterms)
          abort();
    for (size_t a = 0; a < g.nnodes; a++)
      (void)erg_group_cov_cross(&g, a, x, (a + 1) % g.nnodes, x);
  } else if (!why[0])
    abort();
  why[0] = '\0';
  if (erg_model_load(&m, path, why, sizeof why) != 0) {
    if (!why[0])
      abort(); /* a refusal always says why */
    return 0;
  }
  if (m.nfeatures > ERG_FIT_MAX_FEATURES)
    abort();
  double x[ERG_FIT_MAX_FEATURES];
  for (size_t k = 0; k < m.nfeatures; k++)
    x[k] = 1.0;
  (void)erg_model_predict(&m, x);
  (void)erg_model_utilization_max(&m);
  return 0;
}

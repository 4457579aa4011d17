// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer target: the model file loader (fit/model.c) on the input as a
 * model JSON; an accepted model must pass erg_model_check and predict. */
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
  char why[256] = "";
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

// SPDX-License-Identifier: GPL-3.0-or-later
/* The library's JSON objects for callers that print them (erg fit --json):
 * the same objects the model and idle profile files hold. */
#include "fit_int.h"

json_t *erg_model_json(const struct erg_model *m) { return fit_model_to_json(m); }

json_t *erg_idle_profile_json(const struct erg_idle_profile *p) {
  return fit_idle_profile_to_json(p);
}

json_t *erg_fit_metrics_json(const char *method, const struct erg_fit_metrics *x) {
  return fit_metrics_to_json(method, x);
}

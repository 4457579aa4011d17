// SPDX-License-Identifier: GPL-3.0-or-later
/* ergd's [report] section (erg report's defaults): parsed and checked
 * here for ergd and erg alike; calls nothing else of the library. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"
#include "erg_web.h"
#include "report_int.h"

int report_number(const char *s, double *out) {
  char *end;
  errno = 0;
  *out = strtod(s, &end);
  return errno || end == s || *end || !isfinite(*out) || *out < 0 ? -1 : 0;
}

void erg_report_config_defaults(struct erg_report_config *c) {
  *c = (struct erg_report_config){.cost_per_kwh = NAN, .co2_g_per_kwh = NAN, .pue = NAN};
}

int erg_report_config_key(struct erg_report_config *c, const char *key, const char *value,
                          char *why, size_t whylen) {
  double *num = !strcmp(key, "cost_per_kwh")    ? &c->cost_per_kwh
                : !strcmp(key, "co2_g_per_kwh") ? &c->co2_g_per_kwh
                : !strcmp(key, "pue")           ? &c->pue
                                                : NULL;
  double min = num == &c->pue ? 1 : 0;
  if (num) {
    if (report_number(value, num) == 0 && *num >= min)
      return 0;
    snprintf(why, whylen, "key '%s': want a number >= %g, not '%s'", key, min, value);
    return -1;
  }
  char *path = !strcmp(key, "carbon_csv") ? c->carbon_csv
               : !strcmp(key, "pue_csv")  ? c->pue_csv
                                          : NULL;
  if (path) {
    if (value[0] && strlen(value) < sizeof c->carbon_csv) {
      erg_strlcpy(path, value, sizeof c->carbon_csv);
      return 0;
    }
    snprintf(why, whylen, "key '%s': want a file name of 1 to %zu characters", key,
             sizeof c->carbon_csv - 1);
    return -1;
  }
  if (!strcmp(key, "currency")) {
    if (value[0] && strlen(value) < sizeof c->currency) {
      erg_strlcpy(c->currency, value, sizeof c->currency);
      return 0;
    }
    snprintf(why, whylen, "key 'currency': want 1 to %zu characters", sizeof c->currency - 1);
    return -1;
  }
  snprintf(why, whylen,
           "unknown key '%s' in [report] (cost_per_kwh, currency, co2_g_per_kwh, carbon_csv, "
           "pue, pue_csv)",
           key);
  return -1;
}

int erg_report_config_check(const struct erg_report_config *c, char *why, size_t whylen) {
  const char *both = !isnan(c->co2_g_per_kwh) && c->carbon_csv[0] ? "co2_g_per_kwh and carbon_csv"
                     : !isnan(c->pue) && c->pue_csv[0]            ? "pue and pue_csv"
                                                                  : NULL;
  if (!both)
    return 0;
  snprintf(why, whylen, "[report] sets both %s: give one", both);
  return -1;
}

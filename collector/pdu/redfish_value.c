// SPDX-License-Identifier: GPL-3.0-or-later
/* Redfish readings of a discovered plan, and recordings read as a BMC
 * (redfish_parse.h): what a poll does with each resource it GETs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "redfish_parse.h"

const char *erg_rf_kind_name(int kind) {
  static const char *const n[] = {"none",
                                  "PowerControl",
                                  "EnvironmentMetrics.PowerWatts",
                                  "EnvironmentMetrics.EnergyJoules",
                                  "EnvironmentMetrics.EnergykWh",
                                  "Sensor (W)",
                                  "Sensor (energy)"};
  return kind >= 0 && kind <= ERG_RF_SENSOR_ENERGY ? n[kind] : "?";
}

/* W or kW for power; J, kW.h, W.h for energy: the factor to SI, 0 if the
 * units do not say it. */
double erg_rf_units_to_si(const char *units, bool energy) {
  if (!energy)
    return !strcmp(units, "W") ? 1.0 : !strcmp(units, "kW") ? 1e3 : 0;
  if (!strcmp(units, "J"))
    return 1.0;
  if (!strcmp(units, "kW.h") || !strcmp(units, "kWh"))
    return 3.6e6;
  if (!strcmp(units, "W.h") || !strcmp(units, "Wh"))
    return 3600.0;
  return 0;
}

const char *const erg_rf_reading_keys[] = {"PowerControl", "PowerWatts", "EnergyJoules",
                                           "EnergykWh",    "Reading",    "ReadingUnits",
                                           "ReadingTime",  NULL};

int erg_rf_term_value(const struct erg_rf_term *t, json_t *doc, double rating_watts, double *value,
                      char *why, size_t whylen) {
  json_t *v = NULL;
  const char *what = erg_rf_kind_name(t->kind);
  double k = t->to_si;
  switch (t->kind) {
    case ERG_RF_POWERCONTROL: {
      json_t *pcs = json_object_get(doc, "PowerControl"), *pc, *match = NULL;
      size_t i;
      json_array_foreach(pcs, i, pc) {
        if (!match && (!t->member[0] || !strcmp(erg_rf_str(pc, "MemberId"), t->member)))
          match = pc;
      }
      if (!match) {
        snprintf(why, whylen, "%s: no PowerControl entry '%s' any more", t->uri, t->member);
        return -1;
      }
      v = json_object_get(match, "PowerConsumedWatts");
      break;
    }
    case ERG_RF_ENV_POWER:
      v = json_object_get(json_object_get(doc, "PowerWatts"), "Reading");
      break;
    case ERG_RF_ENV_ENERGY_J:
      v = json_object_get(json_object_get(doc, "EnergyJoules"), "Reading");
      break;
    case ERG_RF_ENV_ENERGY_KWH:
      v = json_object_get(json_object_get(doc, "EnergykWh"), "Reading");
      break;
    case ERG_RF_SENSOR_POWER:
    case ERG_RF_SENSOR_ENERGY: {
      double now =
          erg_rf_units_to_si(erg_rf_str(doc, "ReadingUnits"), t->kind == ERG_RF_SENSOR_ENERGY);
      if (now != t->to_si) {
        snprintf(why, whylen, "%s: ReadingUnits is now '%s'", t->uri,
                 erg_rf_str(doc, "ReadingUnits"));
        return -1;
      }
      v = json_object_get(doc, "Reading");
      break;
    }
    default:
      snprintf(why, whylen, "no term");
      return -1;
  }
  if (!v || json_is_null(v)) {
    snprintf(why, whylen, "%s %s is %s: no reading", t->uri, what, v ? "null" : "absent");
    return 1;
  }
  if (!json_is_number(v)) {
    snprintf(why, whylen, "%s %s is not a number", t->uri, what);
    return -1;
  }
  double x = json_number_value(v) * k;
  bool energy = t->kind == ERG_RF_ENV_ENERGY_J || t->kind == ERG_RF_ENV_ENERGY_KWH ||
                t->kind == ERG_RF_SENSOR_ENERGY;
  if (!isfinite(x) || x < 0) {
    snprintf(why, whylen, "%s %s reads %g", t->uri, what, x);
    return -1;
  }
  if (x == 0 && !energy) {
    snprintf(why, whylen, "%s %s reads 0 W: no reading", t->uri, what);
    return 1;
  }
  if (!energy && (x > ERG_RF_MAX_WATTS || (rating_watts > 0 && x > rating_watts))) {
    snprintf(why, whylen, "%s %s reads %g W, above %s (%g W)", t->uri, what, x,
             rating_watts > 0 && rating_watts < ERG_RF_MAX_WATTS ? "the chassis' rating"
                                                                 : "any server",
             rating_watts > 0 && rating_watts < ERG_RF_MAX_WATTS ? rating_watts : ERG_RF_MAX_WATTS);
    return -1;
  }
  *value = x;
  return 0;
}

json_t *erg_rf_recording_get(void *ctx, const char *uri, char *why, size_t whylen) {
  char u[ERG_RF_URI_MAX], path[ERG_RF_URI_MAX + 1024];
  snprintf(u, sizeof u, "%s", uri);
  u[strcspn(u, "#")] = '\0';
  size_t n = strlen(u);
  while (n > 1 && u[n - 1] == '/')
    u[--n] = '\0';
  if (strncmp(u, "/redfish/v1", 11) || (u[11] && u[11] != '/') || strstr(u, "..")) {
    snprintf(why, whylen, "404 %s: not under /redfish/v1", uri);
    return NULL;
  }
  snprintf(path, sizeof path, "%s%s/index.json", (const char *)ctx, u);
  json_error_t e;
  json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
  if (!j || !json_is_object(j) || json_object_get(j, "error")) {
    snprintf(why, whylen, "404 %s", uri);
    json_decref(j);
    return NULL;
  }
  return j;
}

int erg_rf_time_parse(const char *s, uint64_t *ns) {
  int y, mo, d, h, mi, sec, n = 0;
  if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19)
    return -1;
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
    return -1;
  const char *p = s + n;
  uint64_t frac_ns = 0;
  if (*p == '.') {
    uint64_t scale = 100000000ULL;
    for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
      frac_ns += (uint64_t)(*p - '0') * scale;
  }
  long off_s = 0;
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    int oh, om, k = 0;
    if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &k) != 2 || k != 5 || oh > 23 || om > 59)
      return -1;
    off_s = (long)(oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
    p += 6;
  } else {
    return -1; /* no zone: whose clock? */
  }
  if (*p)
    return -1;
  struct tm tm = {.tm_year = y - 1900,
                  .tm_mon = mo - 1,
                  .tm_mday = d,
                  .tm_hour = h,
                  .tm_min = mi,
                  .tm_sec = sec};
  time_t t = timegm(&tm);
  if (t == (time_t)-1 || (int64_t)t - off_s < 0)
    return -1;
  *ns = (uint64_t)((int64_t)t - off_s) * 1000000000ULL + frac_ns;
  return 0;
}

int erg_rf_reading_time(json_t *doc, uint64_t *ns) {
  return erg_rf_time_parse(json_string_value(json_object_get(doc, "ReadingTime")), ns);
}

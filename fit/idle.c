/* Idle profile (docs/model.md, "Idle profile"): the node's power over a
 * window the operator declares quiet, checked against the journal's own
 * CPU time so that a busy window is refused rather than recorded. A line
 * fitted through a convex power curve crosses u = 0 below the real idle
 * power, and every watt of that error becomes some job's dynamic power;
 * a measured idle removes it. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "erg_common.h"
#include "erg_fit.h"

#define IDLE_MIN_CELLS 3
#define IDLE_BURST_FACTOR 3.0

static int column_of(const struct erg_dataset *ds, const char *name) {
  for (size_t k = 0; k < ds->nfeatures; k++)
    if (strcmp(ds->feature[k], name) == 0)
      return (int)k;
  return -1;
}

static void idle_time_text(double t, char *out, size_t outlen) {
  time_t s = (time_t)t;
  struct tm tm;
  gmtime_r(&s, &tm);
  strftime(out, outlen, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Mean and busiest utilisation; refuses a window that was not quiet. */
static int idle_check_activity(const struct erg_idle_profile *p, double max_util,
                               double busiest_t, char *why, size_t whylen) {
  char when[32];
  idle_time_text(busiest_t, when, sizeof when);
  const char *per = p->ncpu > 0 ? "" : " (ncpu unknown: per 1 CPU; give --ncpu)";
  if (p->mean_utilization > max_util) {
    snprintf(why, whylen, "window is not idle: mean CPU utilisation %.1f %% over %zu cells is "
             "above %.1f %%%s (busiest cell %s: %.1f %%)", 100 * p->mean_utilization, p->cells,
             100 * max_util, per, when, 100 * p->max_utilization);
    return -1;
  }
  if (p->max_utilization > IDLE_BURST_FACTOR * max_util) {
    snprintf(why, whylen, "window is not idle: cell %s has CPU utilisation %.1f %%, above %.0f × "
             "%.1f %%%s; choose a quieter window", when, 100 * p->max_utilization,
             IDLE_BURST_FACTOR, 100 * max_util, per);
    return -1;
  }
  return 0;
}

int erg_idle_profile_from_dataset(const struct erg_dataset *ds, double from, double to,
                                  double max_utilization, double ncpu_default,
                                  struct erg_idle_profile *p, char *why, size_t whylen) {
  int cpu = column_of(ds, "cpu_seconds_per_second"), nc = column_of(ds, ERG_NCPU_COLUMN);
  memset(p, 0, sizeof *p);
  erg_strlcpy(p->node, ds->node, sizeof p->node);
  if (cpu < 0) {
    snprintf(why, whylen, "journal has no cpu_seconds_per_second column");
    return -1;
  }
  double sum = 0, sum2 = 0, usum = 0, busiest_t = 0;
  p->first_unix_seconds = INFINITY;
  p->last_unix_seconds = -INFINITY;
  for (size_t i = 0; i < ds->nrows; i++) {
    double t = ds->time_unix_seconds[i], end = t + ds->row_step_seconds[i];
    double w = ds->measured_watts[i], x = ds->x[cpu][i];
    double n = nc >= 0 && ds->x[nc][i] > 0 ? ds->x[nc][i] : ncpu_default;
    /* The meter lag does not matter on a quiet node, where it cannot be
     * estimated either: flag 16 rows count. */
    if (t < from || end > to || (ds->flags[i] & ERG_ROW_UNUSABLE & ~ERG_ROW_LAG_UNSURE) ||
        !isfinite(w) ||
        !isfinite(x))
      continue;
    double u = x / (n > 0 ? n : 1);
    if (n > 0)
      p->ncpu = n;
    p->cells++;
    sum += w;
    sum2 += w * w;
    usum += u;
    if (u >= p->max_utilization) {
      p->max_utilization = u;
      busiest_t = t;
    }
    p->first_unix_seconds = fmin(p->first_unix_seconds, t);
    p->last_unix_seconds = fmax(p->last_unix_seconds, end);
  }
  if (p->cells < IDLE_MIN_CELLS) {
    snprintf(why, whylen, "%zu usable cells (meter and agent data) in the window, need %d",
             p->cells, IDLE_MIN_CELLS);
    return -1;
  }
  double n = (double)p->cells;
  p->mean_watts = sum / n;
  p->stddev_watts = sqrt(fmax(sum2 / n - p->mean_watts * p->mean_watts, 0));
  p->mean_utilization = usum / n;
  p->recorded_unix_seconds = (double)time(NULL);
  return idle_check_activity(p, max_utilization, busiest_t, why, whylen);
}

int erg_idle_profile_path(const char *model_dir, const char *node, char *out, size_t outlen) {
  char safe[ERG_NAME_MAX];
  erg_name_sanitize(node, strlen(node), safe);
  int n = snprintf(out, outlen, "%s/idle/%s.json", model_dir, safe);
  return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

json_t *fit_idle_profile_to_json(const struct erg_idle_profile *p) {
  return json_pack("{s:s, s:f, s:f, s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "node", p->node,
                   "mean_watts", p->mean_watts, "stddev_watts", p->stddev_watts, "cells",
                   (json_int_t)p->cells, "first_unix_seconds", p->first_unix_seconds,
                   "last_unix_seconds", p->last_unix_seconds, "ncpu", p->ncpu,
                   "mean_utilization", p->mean_utilization, "max_utilization",
                   p->max_utilization, "recorded_unix_seconds", p->recorded_unix_seconds);
}

int fit_idle_profile_from_json(struct erg_idle_profile *p, json_t *j, char *why, size_t whylen) {
  const char *node = "";
  json_int_t cells = 0;
  json_error_t err;
  memset(p, 0, sizeof *p);
  if (json_unpack_ex(j, &err, 0, "{s?s, s:F, s?F, s:I, s?F, s?F, s?F, s?F, s?F, s?F}", "node",
                     &node, "mean_watts", &p->mean_watts, "stddev_watts", &p->stddev_watts,
                     "cells", &cells, "first_unix_seconds", &p->first_unix_seconds,
                     "last_unix_seconds", &p->last_unix_seconds, "ncpu", &p->ncpu,
                     "mean_utilization", &p->mean_utilization, "max_utilization",
                     &p->max_utilization, "recorded_unix_seconds",
                     &p->recorded_unix_seconds) != 0) {
    snprintf(why, whylen, "idle profile: %s", err.text);
    return -1;
  }
  if (!isfinite(p->mean_watts) || p->mean_watts < 0 || cells < 1 ||
      strlen(node) >= sizeof p->node) {
    snprintf(why, whylen, "idle profile: mean_watts must be finite and >= 0, cells >= 1");
    return -1;
  }
  erg_strlcpy(p->node, node, sizeof p->node);
  p->cells = (size_t)cells;
  return 0;
}

int erg_idle_profile_save(const struct erg_idle_profile *p, const char *path, char *why,
                          size_t whylen) {
  json_t *j = fit_idle_profile_to_json(p);
  if (j) {
    json_object_set_new(j, "format", json_string("erg-idle-profile"));
    json_object_set_new(j, "version", json_integer(1));
  }
  char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(12) | JSON_SORT_KEYS) : NULL;
  json_decref(j);
  if (!text) {
    snprintf(why, whylen, "%s: cannot encode idle profile", path);
    return -1;
  }
  size_t len = strlen(text);
  char *buf = malloc(len + 2);
  int rc = -1;
  if (buf) {
    memcpy(buf, text, len);
    buf[len] = '\n';
    buf[len + 1] = '\0';
    rc = erg_write_file_atomic(path, buf, len + 1);
  }
  if (rc != 0)
    snprintf(why, whylen, "%s: %s", path, buf ? strerror(errno) : "out of memory");
  free(buf);
  free(text);
  return rc;
}

int erg_idle_profile_load(struct erg_idle_profile *p, const char *path, char *why, size_t whylen) {
  json_error_t err;
  json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
  if (!j) {
    snprintf(why, whylen, "%s:%d: %s", path, err.line, err.text);
    return -1;
  }
  const char *format = "";
  int version = 0;
  char reason[200];
  int rc = json_unpack(j, "{s:s, s:i}", "format", &format, "version", &version) != 0 ||
                   strcmp(format, "erg-idle-profile") != 0 || version != 1
               ? (snprintf(reason, sizeof reason, "not an erg idle profile of version 1"), -1)
               : fit_idle_profile_from_json(p, j, reason, sizeof reason);
  json_decref(j);
  if (rc != 0)
    snprintf(why, whylen, "%s: %s", path, reason);
  return rc;
}

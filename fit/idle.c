// SPDX-License-Identifier: GPL-3.0-or-later
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
static int idle_check_activity(const struct erg_idle_profile *p, double max_util, double busiest_t,
                               char *why, size_t whylen) {
  char when[32];
  idle_time_text(busiest_t, when, sizeof when);
  const char *per = p->ncpu > 0 ? "" : " (ncpu unknown: per 1 CPU; give --ncpu)";
  if (p->mean_utilization > max_util) {
    snprintf(why, whylen,
             "window is not idle: mean CPU utilisation %.1f %% over %zu cells is "
             "above %.1f %%%s (busiest cell %s: %.1f %%)",
             100 * p->mean_utilization, p->cells, 100 * max_util, per, when,
             100 * p->max_utilization);
    return -1;
  }
  if (p->max_utilization > IDLE_BURST_FACTOR * max_util) {
    snprintf(why, whylen,
             "window is not idle: cell %s has CPU utilisation %.1f %%, above %.0f × "
             "%.1f %%%s; choose a quieter window",
             when, 100 * p->max_utilization, IDLE_BURST_FACTOR, 100 * max_util, per);
    return -1;
  }
  return 0;
}

/* A cell an idle profile may take: a meter reading and agent data of the
 * node alone. The meter lag does not matter on a quiet node, where it
 * cannot be estimated either: flag 16 rows count. A shared meter's row
 * (flag 64) is the whole group's power. */
static bool idle_row_usable(const struct erg_dataset *ds, size_t i, int cpu) {
  return !(ds->flags[i] & ((ERG_ROW_UNUSABLE & ~ERG_ROW_LAG_UNSURE) | ERG_ROW_SHARED)) &&
         isfinite(ds->measured_watts[i]) && isfinite(ds->x[cpu][i]);
}

/* Row i's utilisation and the CPU count it was taken with (0: unknown,
 * then per one CPU: strict). */
static double idle_row_utilization(const struct erg_dataset *ds, size_t i, int cpu, int nc,
                                   double ncpu_default, double *ncpu) {
  double n = nc >= 0 && ds->x[nc][i] > 0 ? ds->x[nc][i] : ncpu_default;
  *ncpu = n > 0 ? n : 0;
  return ds->x[cpu][i] / (n > 0 ? n : 1);
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
  size_t shared = 0;
  p->first_unix_seconds = INFINITY;
  p->last_unix_seconds = -INFINITY;
  for (size_t i = 0; i < ds->nrows; i++) {
    double t = ds->time_unix_seconds[i], end = t + ds->row_step_seconds[i];
    double w = ds->measured_watts[i], n;
    if (t < from || end > to)
      continue;
    if (!idle_row_usable(ds, i, cpu)) {
      shared += (ds->flags[i] & ERG_ROW_SHARED) != 0;
      continue;
    }
    double u = idle_row_utilization(ds, i, cpu, nc, ncpu_default, &n);
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
  if (p->cells < IDLE_MIN_CELLS && shared) {
    snprintf(why, whylen,
             "%zu of the window's cells are of a shared meter (journal flag 64): "
             "an idle profile needs the node metered alone",
             shared);
    return -1;
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
                   "last_unix_seconds", p->last_unix_seconds, "ncpu", p->ncpu, "mean_utilization",
                   p->mean_utilization, "max_utilization", p->max_utilization,
                   "recorded_unix_seconds", p->recorded_unix_seconds);
}

int fit_idle_profile_from_json(struct erg_idle_profile *p, json_t *j, char *why, size_t whylen) {
  const char *node = "";
  json_int_t cells = 0;
  json_error_t err;
  memset(p, 0, sizeof *p);
  if (json_unpack_ex(j, &err, 0, "{s?s, s:F, s?F, s:I, s?F, s?F, s?F, s?F, s?F, s?F}", "node",
                     &node, "mean_watts", &p->mean_watts, "stddev_watts", &p->stddev_watts, "cells",
                     &cells, "first_unix_seconds", &p->first_unix_seconds, "last_unix_seconds",
                     &p->last_unix_seconds, "ncpu", &p->ncpu, "mean_utilization",
                     &p->mean_utilization, "max_utilization", &p->max_utilization,
                     "recorded_unix_seconds", &p->recorded_unix_seconds) != 0) {
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

struct idle_cell {
  double t, end, u;
};

static int idle_cell_cmp(const void *a, const void *b) {
  const struct idle_cell *x = a, *y = b;
  return x->t < y->t ? -1 : x->t > y->t;
}

/* The quiet cells in time order, each usable and not a burst; *n of them. */
static struct idle_cell *idle_quiet_cells(const struct erg_dataset *ds, int cpu, int nc,
                                          double burst, double ncpu_default, size_t *n) {
  struct idle_cell *c = malloc((ds->nrows ? ds->nrows : 1) * sizeof *c);
  *n = 0;
  for (size_t i = 0; c && i < ds->nrows; i++) {
    double ncpu, t = ds->time_unix_seconds[i];
    if (!idle_row_usable(ds, i, cpu))
      continue;
    double u = idle_row_utilization(ds, i, cpu, nc, ncpu_default, &ncpu);
    /* A burst cannot be inside a window: it ends one, like a gap. */
    if (u <= burst)
      c[(*n)++] = (struct idle_cell){t, t + ds->row_step_seconds[i], u};
  }
  if (c)
    qsort(c, *n, sizeof *c, idle_cell_cmp);
  return c;
}

int erg_idle_profile_find_quiet(const struct erg_dataset *ds, double length_seconds,
                                double max_utilization, double ncpu_default,
                                struct erg_idle_profile *p, char *why, size_t whylen) {
  int cpu = column_of(ds, "cpu_seconds_per_second"), nc = column_of(ds, ERG_NCPU_COLUMN);
  if (cpu < 0) {
    snprintf(why, whylen, "journal has no cpu_seconds_per_second column");
    return -1;
  }
  size_t n;
  struct idle_cell *c =
      idle_quiet_cells(ds, cpu, nc, IDLE_BURST_FACTOR * max_utilization, ncpu_default, &n);
  double *sum = malloc((n + 1) * sizeof *sum);
  if (!c || !sum) {
    free(c);
    free(sum);
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  /* Runs of cells without a gap; in each, every window [t_s, end_e) that
   * first reaches the length, by prefix sums of utilisation. */
  double best = INFINITY, from = 0, to = 0, longest = 0;
  sum[0] = 0;
  for (size_t i = 0; i < n; i++)
    sum[i + 1] = sum[i] + c[i].u;
  for (size_t run = 0, e = 0; run < n; run = e) {
    for (e = run + 1; e < n && fabs(c[e].t - c[e - 1].end) <= 1e-6 * (c[e].end - c[e].t); e++)
      ;
    longest = fmax(longest, c[e - 1].end - c[run].t);
    for (size_t s = run, last = run; s < e; s++) {
      while (last < e && c[last].end - c[s].t < length_seconds - 1e-6)
        last++;
      if (last == e)
        break;
      double mean = (sum[last + 1] - sum[s]) / (double)(last - s + 1);
      if (mean <= best) { /* the latest of equals: the node as it is now */
        best = mean;
        from = c[s].t;
        to = c[last].end;
      }
    }
  }
  free(c);
  free(sum);
  if (!isfinite(best)) {
    snprintf(why, whylen,
             "no window of %.0f s: the longest stretch of consecutive usable cells "
             "(meter and agent data, node metered alone) without a cell above %.0f × %.1f %% "
             "CPU utilisation is %.0f s",
             length_seconds, IDLE_BURST_FACTOR, 100 * max_utilization, longest);
    return -1;
  }
  char reason[400], a[32], b[32];
  if (erg_idle_profile_from_dataset(ds, from, to, max_utilization, ncpu_default, p, reason,
                                    sizeof reason) == 0)
    return 0;
  idle_time_text(from, a, sizeof a);
  idle_time_text(to, b, sizeof b);
  snprintf(why, whylen, "the quietest window of %.0f s, %s to %s: %s", length_seconds, a, b,
           reason);
  return -1;
}

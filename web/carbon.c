// SPDX-License-Identifier: GPL-3.0-or-later
/* Time-varying factors of a report: carbon intensity (gCO2/kWh) and PUE
 * over time from a two-column CSV, and the energy of one archive with its
 * facility energy (x PUE) and CO2 integrated cell by cell; report_data.c's
 * erg_report_key_energy uses it for one key over [from, to) (erg jobs).
 * docs/report.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"

#define SERIES_LINE_MAX 256

struct series_row {
  int64_t t_s;
  double v;
  unsigned line;
};

/* ISO-8601 (UTC, or with a +HH:MM / -HH:MM offset) or unix seconds. No
 * "now" or relative times: a file's rows must not move with the clock. */
static int series_time(char *s, int64_t *out) {
  size_t n = strlen(s);
  int64_t offset = 0;
  if (!n || s[0] == '-' || s[0] == '+' || !strcmp(s, "now"))
    return -1;
  if (n > 16 && (s[n - 6] == '+' || s[n - 6] == '-') && s[n - 3] == ':') {
    int h, m, k = 0;
    if (sscanf(s + n - 5, "%2d:%2d%n", &h, &m, &k) != 2 || k != 5 || h > 23 || m > 59)
      return -1;
    offset = (s[n - 6] == '+' ? 1 : -1) * (int64_t)(h * 3600 + m * 60);
    s[n - 6] = '\0';
  }
  if (erg_report_parse_time(s, 0, out) != 0)
    return -1;
  *out -= offset;
  return 0;
}

static int series_value(const char *s, double *out) {
  char *end;
  errno = 0;
  *out = strtod(s, &end);
  return errno || end == s || *end || !isfinite(*out) ? -1 : 0;
}

static char *series_trim(char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
    s[--n] = '\0';
  return s;
}

/* One line: 1 row, 0 nothing (blank, comment, header), -1 error in why. */
static int series_line(char *line, unsigned lineno, int first, double min_value,
                       struct series_row *row, char *why, size_t whylen) {
  char *s = series_trim(line);
  if (!*s || *s == '#')
    return 0;
  char *comma = strchr(s, ',');
  if (!comma || strchr(comma + 1, ',')) {
    snprintf(why, whylen, "%u: want two fields 'time,value'", lineno);
    return -1;
  }
  *comma = '\0';
  char *ts = series_trim(s), *vs = series_trim(comma + 1);
  int bad_t = series_time(ts, &row->t_s), bad_v = series_value(vs, &row->v);
  if (first && bad_t && bad_v)
    return 0; /* a header such as "time,gCO2_per_kWh" */
  if (bad_t) {
    snprintf(why, whylen, "%u: bad time '%.40s' (ISO-8601 or unix seconds)", lineno, ts);
    return -1;
  }
  if (bad_v || row->v < min_value) {
    snprintf(why, whylen, "%u: bad value '%.40s' (a number >= %g)", lineno, vs, min_value);
    return -1;
  }
  row->line = lineno;
  return 1;
}

static int series_row_cmp(const void *a, const void *b) {
  const struct series_row *x = a, *y = b;
  if (x->t_s != y->t_s)
    return x->t_s < y->t_s ? -1 : 1;
  return x->line < y->line ? -1 : x->line > y->line;
}

/* Sorted by time; a time given twice with one value is kept once, with
 * two different values it is an error (which one is meant?). */
static int series_settle(struct erg_series *s, struct series_row *rows, size_t n, char *why,
                         size_t whylen) {
  if (n)
    qsort(rows, n, sizeof *rows, series_row_cmp);
  s->t_s = malloc((n ? n : 1) * sizeof *s->t_s);
  s->v = malloc((n ? n : 1) * sizeof *s->v);
  if (!s->t_s || !s->v) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    if (i && rows[i].t_s == rows[i - 1].t_s) {
      if (rows[i].v == rows[i - 1].v)
        continue;
      snprintf(why, whylen, "%u: time %lld also on line %u with another value", rows[i].line,
               (long long)rows[i].t_s, rows[i - 1].line);
      return -1;
    }
    s->t_s[s->n] = rows[i].t_s;
    s->v[s->n++] = rows[i].v;
  }
  if (!s->n) {
    snprintf(why, whylen, "no rows");
    return -1;
  }
  return 0;
}

static int series_read(FILE *f, double min_value, struct series_row **rows, size_t *n, char *why,
                       size_t whylen) {
  char line[SERIES_LINE_MAX + 2];
  size_t cap = 0;
  unsigned lineno = 0;
  int first = 1;
  *rows = NULL;
  *n = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (!strchr(line, '\n') && !feof(f)) {
      snprintf(why, whylen, "%u: line longer than %d bytes", lineno, SERIES_LINE_MAX);
      return -1;
    }
    struct series_row row;
    int rc = series_line(line, lineno, first, min_value, &row, why, whylen);
    if (rc < 0)
      return -1;
    first = first && *series_trim(line) == '#';
    if (rc == 0)
      continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 256;
      struct series_row *m = realloc(*rows, cap * sizeof *m);
      if (!m) {
        snprintf(why, whylen, "out of memory");
        return -1;
      }
      *rows = m;
    }
    (*rows)[(*n)++] = row;
  }
  return 0;
}

int erg_series_load(const char *path, double min_value, struct erg_series *s, char *why,
                    size_t whylen) {
  char reason[300];
  struct series_row *rows = NULL;
  size_t n = 0;
  memset(s, 0, sizeof *s);
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(why, whylen, "%s: %s", path, strerror(errno));
    return -1;
  }
  int rc = series_read(f, min_value, &rows, &n, reason, sizeof reason);
  fclose(f);
  if (rc == 0)
    rc = series_settle(s, rows, n, reason, sizeof reason);
  free(rows);
  if (rc != 0) {
    /* reason starts with the line number where there is one: FILE:LINE: ... */
    snprintf(why, whylen, "%s:%s%s", path, reason[0] >= '0' && reason[0] <= '9' ? "" : " ", reason);
    erg_series_free(s);
  }
  return rc;
}

void erg_series_free(struct erg_series *s) {
  free(s->t_s);
  free(s->v);
  memset(s, 0, sizeof *s);
}

/* Index of the row in force at t (last row with t_s <= t), -1 before the first. */
static long series_at(const struct erg_series *s, int64_t t) {
  long lo = 0, hi = (long)s->n - 1, found = -1;
  while (lo <= hi) {
    long mid = lo + (hi - lo) / 2;
    if (s->t_s[mid] <= t)
      found = mid, lo = mid + 1;
    else
      hi = mid - 1;
  }
  return found;
}

/* The value in force at t and until when it holds (INT64_MAX: to the end);
 * NAN before the first row. */
static double series_piece(const struct erg_series *s, double constant, int64_t t, int64_t *until) {
  if (!s) {
    *until = INT64_MAX;
    return constant;
  }
  long i = series_at(s, t);
  *until = (size_t)(i + 1) < s->n ? s->t_s[i + 1] : INT64_MAX;
  return i < 0 ? NAN : s->v[i];
}

void erg_energy_factors_apply(const struct erg_energy_factors *f, int64_t lo, int64_t hi,
                              double watts, double *facility_j, double *co2_g) {
  *facility_j = *co2_g = 0;
  /* Split [lo, hi) where either series changes: power is constant over a
   * stored row, the factors over each piece. */
  while (lo < hi) {
    int64_t until_c, until_p;
    double g = series_piece(f->carbon, f->co2_g_per_kwh, lo, &until_c);
    double pue = series_piece(f->pue_series, f->pue, lo, &until_p);
    int64_t end = until_c < until_p ? until_c : until_p;
    end = end < hi ? end : hi;
    double fj = watts * (double)(end - lo) * pue;
    *facility_j += fj;
    *co2_g += fj * g / REPORT_J_PER_KWH;
    lo = end;
  }
}

int erg_series_covers(const struct erg_series *s, int64_t t) { return !s || series_at(s, t) >= 0; }

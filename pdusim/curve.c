// SPDX-License-Identifier: GPL-3.0-or-later
/* Power curves for erg-pdusim: a table of (load fraction, watts) points,
 * from a small file or from one real server's SPECpower_ssj2008 result, so
 * the simulated meter rises with load the way real machines do (idle
 * floor, non-linear top) rather than along a straight line. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_pdusim.h"

double erg_pdusim_curve_watts(const struct erg_pdusim_model *m, double util) {
  int n = m->ncurve;
  if (util <= m->curve_load[0])
    return m->curve_watts[0];
  for (int i = 1; i < n; i++) {
    if (util <= m->curve_load[i]) {
      double f = (util - m->curve_load[i - 1]) / (m->curve_load[i] - m->curve_load[i - 1]);
      return m->curve_watts[i - 1] + f * (m->curve_watts[i] - m->curve_watts[i - 1]);
    }
  }
  return m->curve_watts[n - 1];
}

static int curve_check(const struct erg_pdusim_model *m, const char *what, char *why,
                       size_t whylen) {
  if (m->ncurve < 2) {
    snprintf(why, whylen, "%s: a curve needs at least 2 points", what);
    return -1;
  }
  for (int i = 0; i < m->ncurve; i++) {
    if (m->curve_load[i] < 0 || m->curve_load[i] > 1 || !(m->curve_watts[i] >= 0) ||
        (i && m->curve_load[i] <= m->curve_load[i - 1])) {
      snprintf(why, whylen, "%s: point %d: loads must rise within [0, 1], watts >= 0", what, i + 1);
      return -1;
    }
  }
  return 0;
}

static int curve_file(struct erg_pdusim_model *m, const char *path, char *why, size_t whylen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(why, whylen, "%s: %s", path, strerror(errno));
    return -1;
  }
  char line[256];
  int lineno = 0, rc = 0;
  m->ncurve = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    lineno++;
    char *hash = strchr(line, '#');
    if (hash)
      *hash = '\0';
    for (char *p = line; *p; p++)
      if (*p == ',')
        *p = ' ';
    double load, watts;
    char extra;
    int k = sscanf(line, "%lf %lf %c", &load, &watts, &extra);
    if (k == EOF || k <= 0)
      continue; /* blank or comment */
    if (k != 2 || m->ncurve >= ERG_PDUSIM_CURVE_MAX) {
      snprintf(why, whylen, "%s:%d: want 'load_fraction watts' (at most %d points)", path, lineno,
               ERG_PDUSIM_CURVE_MAX);
      rc = -1;
      break;
    }
    m->curve_load[m->ncurve] = load;
    m->curve_watts[m->ncurve++] = watts;
  }
  fclose(f);
  return rc ? rc : curve_check(m, path, why, whylen);
}

/* Splits one CSV record (RFC 4180 quotes, no embedded newlines) in place;
 * returns the number of fields. */
static int csv_split(char *s, char **fields, int max) {
  int n = 0;
  while (n < max) {
    char *out = s;
    fields[n++] = s;
    bool quoted = *s == '"';
    if (quoted)
      s++;
    while (*s && (quoted || (*s != ',' && *s != '\n' && *s != '\r'))) {
      if (quoted && *s == '"') {
        if (s[1] != '"') {
          quoted = false;
          s++;
          continue;
        }
        s++;
      }
      *out++ = *s++;
    }
    bool more = *s == ',';
    *out = '\0';
    if (!more)
      break;
    s++;
  }
  return n;
}

#define CSV_MAX_FIELDS 160

static int col_find(char **hdr, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(hdr[i], name))
      return i;
  return -1;
}

static int curve_specpower(struct erg_pdusim_model *m, long row, const char *csv, char *why,
                           size_t whylen) {
  FILE *f = fopen(csv, "r");
  if (!f) {
    snprintf(why, whylen, "%s: %s (set --specpower-csv)", csv, strerror(errno));
    return -1;
  }
  static char hline[8192], line[16384];
  char *hdr[CSV_MAX_FIELDS], *fld[CSV_MAX_FIELDS];
  int nh = 0;
  while (!nh && fgets(hline, sizeof hline, f)) /* '#' lines before the header: notes */
    nh = hline[0] == '#' ? 0 : csv_split(hline, hdr, CSV_MAX_FIELDS);
  int cols[11];
  cols[0] = col_find(hdr, nh, "ActiveIdle");
  for (int k = 1; k <= 10; k++) {
    char name[32];
    snprintf(name, sizeof name, "%d_AvgPower", k * 10);
    cols[k] = col_find(hdr, nh, name);
  }
  int rc = -1;
  for (int k = 0; k <= 10 && nh; k++)
    if (cols[k] < 0)
      nh = 0;
  if (!nh)
    snprintf(why, whylen, "%s: no ActiveIdle and 10_AvgPower..100_AvgPower columns", csv);
  while (nh && fgets(line, sizeof line, f)) {
    int nf = csv_split(line, fld, CSV_MAX_FIELDS);
    char *end;
    if (nf < 1 || strtol(fld[0], &end, 10) != row || end == fld[0])
      continue;
    m->ncurve = 11;
    for (int k = 0; k <= 10; k++) {
      m->curve_load[k] = k / 10.0;
      m->curve_watts[k] = cols[k] < nf ? strtod(fld[cols[k]], &end) : -1;
      if (cols[k] >= nf || end == fld[cols[k]])
        m->curve_watts[k] = -1;
    }
    snprintf(m->curve_name, sizeof m->curve_name, "specpower row %ld", row);
    rc = curve_check(m, m->curve_name, why, whylen);
    break;
  }
  if (nh && rc && !why[0])
    snprintf(why, whylen, "%s: no row %ld", csv, row);
  fclose(f);
  return rc;
}

int erg_pdusim_curve_load(struct erg_pdusim_model *m, const char *spec, const char *specpower_csv,
                          char *why, size_t whylen) {
  why[0] = '\0';
  if (!strncmp(spec, "specpower:", 10)) {
    char *end;
    long row = strtol(spec + 10, &end, 10);
    if (end == spec + 10 || *end || row < 0) {
      snprintf(why, whylen, "'%s': want specpower:ROW", spec);
      return -1;
    }
    if (!specpower_csv || !*specpower_csv) {
      snprintf(why, whylen, "'%s' needs --specpower-csv PATH (a SPECpower_ssj2008 results CSV)",
               spec);
      return -1;
    }
    return curve_specpower(m, row, specpower_csv, why, whylen);
  }
  snprintf(m->curve_name, sizeof m->curve_name, "%.150s", spec);
  return curve_file(m, spec, why, whylen);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Dataset storage and the training-journal reader (format: docs/model.md).
 * The reader never trusts a line: anything that does not parse is skipped
 * and counted, so a torn last line after a crash costs one row, not a fit. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"
#include "erg_fit.h"

#define JOURNAL_BASE_COLUMNS 4
#define JOURNAL_PROGRESS_BYTES (256u << 10)

static const char *journal_base[JOURNAL_BASE_COLUMNS] = {"time_unix_seconds", "step_seconds",
                                                         "measured_watts", "flags"};

void erg_dataset_init(struct erg_dataset *ds) { memset(ds, 0, sizeof *ds); }

void erg_dataset_free(struct erg_dataset *ds) {
  free(ds->time_unix_seconds);
  free(ds->row_step_seconds);
  free(ds->measured_watts);
  free(ds->flags);
  free(ds->row_average_seconds);
  free(ds->spans);
  for (size_t k = 0; k < ds->nfeatures; k++)
    free(ds->x[k]);
  erg_dataset_init(ds);
}

static bool feature_name_valid(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n >= ERG_FIT_NAME_MAX)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '_'))
      return false;
  return true;
}

static int dataset_find_feature(const struct erg_dataset *ds, const char *name) {
  for (size_t k = 0; k < ds->nfeatures; k++)
    if (strcmp(ds->feature[k], name) == 0)
      return (int)k;
  return -1;
}

int erg_dataset_add_feature(struct erg_dataset *ds, const char *name, char *why, size_t whylen) {
  int k = dataset_find_feature(ds, name);
  if (k >= 0)
    return k;
  if (!feature_name_valid(name)) {
    snprintf(why, whylen, "bad feature name '%.64s' (want [a-z0-9_], < %d bytes)", name,
             ERG_FIT_NAME_MAX);
    return -1;
  }
  if (ds->nfeatures >= ERG_FIT_MAX_FEATURES) {
    snprintf(why, whylen, "more than %d features", ERG_FIT_MAX_FEATURES);
    return -1;
  }
  double *col = malloc((ds->cap ? ds->cap : 1) * sizeof *col);
  if (!col) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  /* Rows read before this column existed did not measure it. */
  for (size_t i = 0; i < ds->nrows; i++)
    col[i] = NAN;
  k = (int)ds->nfeatures++;
  ds->x[k] = col;
  erg_strlcpy(ds->feature[k], name, ERG_FIT_NAME_MAX);
  return k;
}

static int dataset_grow(struct erg_dataset *ds) {
  size_t cap = ds->cap ? ds->cap * 2 : 1024;
#define GROW(field)                                                                                \
  do {                                                                                             \
    void *p = realloc(ds->field, cap * sizeof *ds->field);                                         \
    if (!p)                                                                                        \
      return -1;                                                                                   \
    ds->field = p;                                                                                 \
  } while (0)
  GROW(time_unix_seconds);
  GROW(row_step_seconds);
  GROW(measured_watts);
  GROW(flags);
  GROW(row_average_seconds);
  for (size_t k = 0; k < ds->nfeatures; k++)
    GROW(x[k]);
#undef GROW
  ds->cap = cap;
  return 0;
}

int erg_dataset_add_row(struct erg_dataset *ds, double time_unix_seconds, double step_seconds,
                        double measured_watts, unsigned flags, const double *x) {
  if (ds->nrows == ds->cap && dataset_grow(ds) != 0)
    return -1;
  size_t i = ds->nrows++;
  ds->time_unix_seconds[i] = time_unix_seconds;
  ds->row_step_seconds[i] = step_seconds;
  ds->measured_watts[i] = isfinite(measured_watts) ? measured_watts : NAN;
  ds->flags[i] = flags;
  ds->row_average_seconds[i] = ds->meter_average_seconds;
  for (size_t k = 0; k < ds->nfeatures; k++)
    ds->x[k][i] = x[k];
  return 0;
}

/* ---- reader ---- */

struct journal_file {
  const char *path;
  size_t first_row; /* ds->nrows when the file was opened */
  int ncols;        /* 0 until the column header is seen */
  char cols[JOURNAL_BASE_COLUMNS + ERG_JOURNAL_MAX_FEATURES][ERG_FIT_NAME_MAX];
  int map[ERG_JOURNAL_MAX_FEATURES]; /* file feature j -> dataset feature */
  size_t lineno;
};

/* Splits line in place at commas; returns the field count or -1 if more
 * than max. */
static int journal_split(char *line, char **f, int max) {
  int n = 0;
  for (char *p = line;;) {
    if (n == max)
      return -1;
    f[n++] = p;
    char *c = strchr(p, ',');
    if (!c)
      return n;
    *c = '\0';
    p = c + 1;
  }
}

static bool journal_number(const char *s, double *out) {
  char *end;
  errno = 0;
  if (*s == '\0' || isspace((unsigned char)*s))
    return false;
  *out = strtod(s, &end);
  return *end == '\0' && errno != ERANGE;
}

/* "# erg-journal v1 node=N step_seconds=S [average_seconds=A]": checks the
 * version and the node, takes the meter's average for the file's rows;
 * other comments are ignored. */
static int journal_comment(struct erg_dataset *ds, struct journal_file *jf, const char *line,
                           char *why, size_t whylen) {
  int version;
  if (sscanf(line, "# erg-journal v%d", &version) != 1)
    return 0;
  if (version != 1) {
    snprintf(why, whylen, "%s:%zu: journal version %d not supported (want 1)", jf->path, jf->lineno,
             version);
    return -1;
  }
  const char *p = strstr(line, " node=");
  if (p) {
    char node[ERG_FIT_NAME_MAX];
    size_t n = strcspn(p + 6, " \t");
    if (n >= sizeof node)
      n = sizeof node - 1;
    memcpy(node, p + 6, n);
    node[n] = '\0';
    if (ds->node[0] && strcmp(ds->node, node) != 0) {
      snprintf(why, whylen, "%s:%zu: journal of node '%s', but reading node '%s'", jf->path,
               jf->lineno, node, ds->node);
      return -1;
    }
    erg_strlcpy(ds->node, node, sizeof ds->node);
  }
  p = strstr(line, " step_seconds=");
  if (p && ds->step_seconds == 0)
    ds->step_seconds = strtod(p + 14, NULL);
  p = strstr(line, " average_seconds=");
  if (p) {
    double a = strtod(p + 17, NULL);
    if (!(a >= 0 && a <= 60)) {
      snprintf(why, whylen, "%s:%zu: average_seconds must be 0 ... 60", jf->path, jf->lineno);
      return -1;
    }
    ds->meter_average_seconds = a;
  }
  return 0;
}

/* The column header: first seen defines the file's columns; a repeat (after
 * a restart) must be identical. */
static int journal_header(struct erg_dataset *ds, struct journal_file *jf, char **f, int n,
                          char *why, size_t whylen) {
  if (jf->ncols) {
    bool same = n == jf->ncols;
    for (int i = 0; same && i < n; i++)
      same = strcmp(f[i], jf->cols[i]) == 0;
    if (!same) {
      snprintf(why, whylen, "%s:%zu: column header differs from the one before", jf->path,
               jf->lineno);
      return -1;
    }
    return 0;
  }
  for (int i = 0; i < JOURNAL_BASE_COLUMNS; i++)
    if (i >= n || strcmp(f[i], journal_base[i]) != 0) {
      snprintf(why, whylen, "%s:%zu: column %d must be '%s'", jf->path, jf->lineno, i + 1,
               journal_base[i]);
      return -1;
    }
  for (int i = JOURNAL_BASE_COLUMNS; i < n; i++) {
    for (int j = JOURNAL_BASE_COLUMNS; j < i; j++)
      if (strcmp(f[i], f[j]) == 0) {
        snprintf(why, whylen, "%s:%zu: column '%.64s' twice", jf->path, jf->lineno, f[i]);
        return -1;
      }
    char reason[160];
    int k = erg_dataset_add_feature(ds, f[i], reason, sizeof reason);
    if (k < 0) {
      snprintf(why, whylen, "%s:%zu: %s", jf->path, jf->lineno, reason);
      return -1;
    }
    jf->map[i - JOURNAL_BASE_COLUMNS] = k;
  }
  for (int i = 0; i < n; i++)
    erg_strlcpy(jf->cols[i], f[i], ERG_FIT_NAME_MAX);
  jf->ncols = n;
  return 0;
}

/* Whether a row of time t is in span sp (rows in strictly rising time). */
static bool span_has(const struct erg_dataset *ds, const struct erg_dataset_span *sp, double t) {
  size_t lo = sp->first, hi = sp->first + sp->n;
  if (sp->n == 0 || t < ds->time_unix_seconds[lo] || t > ds->time_unix_seconds[hi - 1])
    return false;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ds->time_unix_seconds[mid] < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return ds->time_unix_seconds[lo] == t;
}

/* A cell read before: in this file, any time not after the previous row
 * (ergd resumed before cells it had journalled); in the files before, the
 * same time. */
static bool journal_seen(const struct erg_dataset *ds, const struct journal_file *jf, double t) {
  if (ds->nrows > jf->first_row && t <= ds->time_unix_seconds[ds->nrows - 1])
    return true;
  for (size_t i = 0; i < ds->nspans; i++)
    if (span_has(ds, &ds->spans[i], t))
      return true;
  return false;
}

/* Whether a parsed row holds what no node measures (issue 23: one
 * measured_watts = 1e308 row made the fit write a model of 0 W; -1e6 W, or
 * 2e9 CPU seconds per second from a forged sample, went in unremarked).
 * NaN stays: it is "not measured" (no meter, no counter). */
static bool journal_implausible(const struct journal_file *jf, const double *v, int n) {
  if (!isnan(v[2]) && !(v[2] >= 0 && v[2] <= ERG_FIT_MAX_WATTS))
    return true;
  double cpu = NAN, ncpu = NAN;
  for (int i = JOURNAL_BASE_COLUMNS; i < n; i++) {
    if (!isnan(v[i]) && !(v[i] >= 0 && v[i] <= ERG_FIT_MAX_RATE))
      return true;
    if (!strcmp(jf->cols[i], "cpu_seconds_per_second"))
      cpu = v[i];
    else if (!strcmp(jf->cols[i], "ncpu"))
      ncpu = v[i];
  }
  /* CPU time per second is at most the CPU count (twice, for a sample's
   * edges); no single system has 100,000 CPUs. */
  return ncpu > ERG_FIT_MAX_CPUS || (ncpu > 0 && cpu > 2 * ncpu + 1) ||
         (!(ncpu > 0) && cpu > ERG_FIT_MAX_CPUS);
}

/* One data row; returns 1 if malformed, 2 if a duplicate, 3 if impossible,
 * -1 on out of memory. */
static int journal_row(struct erg_dataset *ds, struct journal_file *jf, char **f, int n) {
  if (jf->ncols == 0 || n != jf->ncols)
    return 1;
  double v[JOURNAL_BASE_COLUMNS + ERG_JOURNAL_MAX_FEATURES];
  for (int i = 0; i < n; i++)
    if (!journal_number(f[i], &v[i]))
      return 1;
  double flags = v[3];
  if (!isfinite(v[0]) || !(v[1] > 0) || !(flags >= 0 && flags <= 255) || flags != floor(flags))
    return 1;
  if (journal_implausible(jf, v, n))
    return 3;
  if (journal_seen(ds, jf, v[0]))
    return 2;
  double x[ERG_FIT_MAX_FEATURES];
  for (size_t k = 0; k < ds->nfeatures; k++)
    x[k] = NAN;
  for (int j = 0; j < n - JOURNAL_BASE_COLUMNS; j++)
    x[jf->map[j]] = v[JOURNAL_BASE_COLUMNS + j];
  ds->lag_unsure_rows += ((unsigned)flags & ERG_ROW_LAG_UNSURE) != 0;
  return erg_dataset_add_row(ds, v[0], v[1], v[2], (unsigned)flags, x) == 0 ? 0 : -1;
}

static int journal_line(struct erg_dataset *ds, struct journal_file *jf, char *line, char *why,
                        size_t whylen) {
  size_t len = strlen(line);
  while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
    line[--len] = '\0';
  if (len == 0)
    return 0;
  if (line[0] == '#')
    return journal_comment(ds, jf, line, why, whylen);
  char *f[JOURNAL_BASE_COLUMNS + ERG_JOURNAL_MAX_FEATURES];
  bool header = strncmp(line, "time_unix_seconds,", 18) == 0;
  int n = journal_split(line, f, JOURNAL_BASE_COLUMNS + ERG_JOURNAL_MAX_FEATURES);
  if (header && n < 0) {
    snprintf(why, whylen, "%s:%zu: more than %d feature columns", jf->path, jf->lineno,
             ERG_JOURNAL_MAX_FEATURES);
    return -1;
  }
  if (n > 0 && strcmp(f[0], journal_base[0]) == 0)
    return journal_header(ds, jf, f, n, why, whylen);
  int rc = n < 0 ? 1 : journal_row(ds, jf, f, n);
  if (rc < 0) {
    snprintf(why, whylen, "%s: out of memory", jf->path);
    return -1;
  }
  ds->malformed_lines += rc == 1;
  ds->duplicate_rows += rc == 2;
  ds->implausible_rows += rc == 3;
  return 0;
}

int erg_journal_read(struct erg_dataset *ds, const char *path, char *why, size_t whylen) {
  return erg_journal_read_progress(ds, path, NULL, NULL, why, whylen);
}

int erg_journal_read_progress(struct erg_dataset *ds, const char *path,
                              erg_journal_progress_fn progress, void *user, char *why,
                              size_t whylen) {
  FILE *fp = fopen(path, "r");
  if (!fp) {
    snprintf(why, whylen, "%s: %s", path, strerror(errno));
    return -1;
  }
  struct erg_dataset_span *sp = realloc(ds->spans, (ds->nspans + 1) * sizeof *sp);
  if (!sp) {
    fclose(fp);
    snprintf(why, whylen, "%s: out of memory", path);
    return -1;
  }
  ds->spans = sp;
  /* A file without average_seconds in its header: an instantaneous meter. */
  ds->meter_average_seconds = 0;
  struct journal_file jf = {.path = path, .first_row = ds->nrows};
  char *line = NULL;
  size_t cap = 0, bytes = 0, next_report = JOURNAL_PROGRESS_BYTES;
  ssize_t len;
  int rc = 0;
  while (rc == 0 && (len = getline(&line, &cap, fp)) >= 0) {
    jf.lineno++;
    bytes += (size_t)len;
    rc = journal_line(ds, &jf, line, why, whylen);
    /* A 6-week journal is ~40 MB and takes seconds to parse: say how far,
     * and let the caller stop it (ergd's shutdown during a refit). */
    if (rc == 0 && progress && bytes >= next_report) {
      next_report = bytes + JOURNAL_PROGRESS_BYTES;
      if (progress(user, bytes) != 0) {
        snprintf(why, whylen, "cancelled");
        rc = -1;
      }
    }
  }
  if (rc == 0 && ferror(fp)) {
    snprintf(why, whylen, "%s: read error", path);
    rc = -1;
  }
  free(line);
  fclose(fp);
  if (rc == 0) {
    ds->files++;
    ds->spans[ds->nspans++] = (struct erg_dataset_span){jf.first_row, ds->nrows - jf.first_row};
  }
  return rc;
}

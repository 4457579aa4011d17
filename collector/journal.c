// SPDX-License-Identifier: GPL-3.0-or-later
/* The training journal: per node, one CSV row per finalised cell (see
 * docs/model.md for the format). Append-only; rotated by size or age to
 * FILE.1 .. FILE.N so `erg fit` can read a bounded history. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erg_collector.h"

#define JOURNAL_KEEP 5

int erg_journal_path(const char *dir, const char *node, char *out, size_t outlen) {
  char safe[ERG_NAME_MAX];
  erg_name_sanitize(node, strlen(node), safe);
  int n = snprintf(out, outlen, "%s/%s.csv", dir, safe);
  return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

static void journal_rotate(const char *path) {
  char from[1100], to[1100];
  for (int i = JOURNAL_KEEP - 1; i >= 1; i--) {
    snprintf(from, sizeof from, "%s.%d", path, i);
    snprintf(to, sizeof to, "%s.%d", path, i + 1);
    rename(from, to);
  }
  snprintf(to, sizeof to, "%s.1", path);
  rename(path, to);
}

int erg_journal_rotate(const char *dir, const char *node) {
  char path[1024];
  if (erg_journal_path(dir, node, path, sizeof path) != 0)
    return -1;
  journal_rotate(path);
  return 0;
}

/* The column header for a set of optional columns. */
static void journal_header(unsigned columns, char *out, size_t outlen) {
  int n = snprintf(out, outlen, "time_unix_seconds,step_seconds,measured_watts,flags,%s",
                   erg_feature_names[ERG_FEAT_CPU]);
  for (int k = 1; k < ERG_NFEATURES && n > 0 && (size_t)n < outlen; k++)
    if (columns & (1u << k))
      n += snprintf(out + n, outlen - (size_t)n, ",%s", erg_feature_names[k]);
  for (int d = 0; (columns & ERG_JOURNAL_TAILS) && d < ERG_NDERIVED && n > 0 && (size_t)n < outlen;
       d++)
    n += snprintf(out + n, outlen - (size_t)n, ",%s", erg_derived_names[d]);
  /* The node's CPU count: the fit's utilisation curve needs u = cpu / ncpu
   * (0 = not known yet). Always last; readers go by name. */
  if (n > 0 && (size_t)n < outlen)
    snprintf(out + n, outlen - (size_t)n, ",ncpu");
}

/* The column header of an existing file (first line starting with
 * time_unix_seconds, within the first few), without the newline, and when
 * first_t is not NULL the time of the row after it (0 if none yet); when
 * average is not NULL the header comment's average_seconds (0: none). */
static int journal_file_header_avg(const char *path, char *out, size_t outlen, int64_t *first_t,
                                   unsigned *average) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  int rc = -1;
  if (average)
    *average = 0;
  for (int i = 0; i < 4 && rc && fgets(out, (int)outlen, f); i++) {
    const char *a = !strncmp(out, "# erg-journal ", 14) ? strstr(out, " average_seconds=") : NULL;
    if (a && average)
      *average = (unsigned)strtoul(a + 17, NULL, 10);
    if (!strncmp(out, "time_unix_seconds,", 18)) {
      out[strcspn(out, "\r\n")] = '\0';
      rc = 0;
    }
  }
  long long t;
  if (first_t)
    *first_t = rc == 0 && fscanf(f, "%lld,", &t) == 1 ? (int64_t)t : 0;
  fclose(f);
  return rc;
}

static int journal_file_header(const char *path, char *out, size_t outlen, int64_t *first_t) {
  return journal_file_header_avg(path, out, outlen, first_t, NULL);
}

unsigned erg_journal_columns(const char *dir, const char *node) {
  char path[1024], hdr[512];
  if (erg_journal_path(dir, node, path, sizeof path) != 0 ||
      journal_file_header(path, hdr, sizeof hdr, NULL) != 0)
    return 0;
  unsigned cols = 0;
  char *save;
  for (char *t = strtok_r(hdr, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int k = erg_feature_index(t);
    if (k > 0)
      cols |= 1u << k;
    if (!strcmp(t, erg_derived_names[0]))
      cols |= ERG_JOURNAL_TAILS;
  }
  return cols;
}

/* The tail of a file, at most len - 1 bytes, NUL-terminated, starting
 * after a newline (a line cut by the start is dropped). */
static size_t journal_tail(const char *path, char *buf, size_t len) {
  FILE *f = fopen(path, "r");
  size_t n = 0;
  long size = -1, from = 0;
  if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0) {
    from = size > (long)len - 1 ? size - ((long)len - 1) : 0;
    if (fseek(f, from, SEEK_SET) == 0)
      n = fread(buf, 1, len - 1, f);
  }
  if (f)
    fclose(f);
  buf[n] = '\0';
  if (from > 0) {
    char *nl = strchr(buf, '\n');
    n = nl ? n - (size_t)(nl + 1 - buf) : 0;
    memmove(buf, nl ? nl + 1 : buf, n + 1);
    buf[n] = '\0';
  }
  return n;
}

/* End (t0 + step) of the last complete row of one file ending by max_end,
 * 0 if none; *ignored: the latest end of the rows after max_end. Reads only
 * the tail: the file may be 64 MiB. */
static int64_t journal_file_last_end(const char *path, int64_t max_end, int64_t *ignored) {
  char buf[4096];
  size_t n = journal_tail(path, buf, sizeof buf);
  /* A torn last line (no newline yet) is not a row. */
  while (n > 0 && buf[n - 1] != '\n')
    buf[--n] = '\0';
  /* Line by line from the end: the last one that parses as a row. */
  while (n > 0) {
    buf[--n] = '\0';
    char *nl = strrchr(buf, '\n'), *line = nl ? nl + 1 : buf;
    long long t;
    unsigned step;
    /* A time so large that the end overflows (a damaged or forged file,
     * found by tests/fuzz) is no row. */
    if (*line >= '0' && *line <= '9' && sscanf(line, "%lld,%u,", &t, &step) == 2 &&
        t <= INT64_MAX - (long long)step) {
      if ((int64_t)t + step <= max_end)
        return (int64_t)t + step;
      if ((int64_t)t + step > *ignored)
        *ignored = (int64_t)t + step;
    }
    n = nl ? (size_t)(nl - buf) + 1 : 0;
  }
  return 0;
}

/* Rows "T,STEP,MEASURED_WATTS,FLAGS,...": the third field's maximum. */
static double journal_file_measured_max(const char *path) {
  static const size_t len = 256 << 10; /* ~3,000 rows: hours of cells */
  char *buf = malloc(len);
  double max = NAN;
  if (!buf)
    return NAN;
  size_t n = journal_tail(path, buf, len);
  for (char *line = buf, *nl; line < buf + n; line = nl + 1) {
    nl = strchr(line, '\n');
    if (!nl)
      break; /* torn */
    *nl = '\0';
    long long t;
    unsigned step;
    double w;
    if (*line >= '0' && *line <= '9' && sscanf(line, "%lld,%u,%lf,", &t, &step, &w) == 3 &&
        isfinite(w) && w >= 0 && !(w <= max))
      max = w;
  }
  free(buf);
  return max;
}

double erg_journal_measured_max(const char *dir, const char *node) {
  char path[1024], rotated[1100];
  if (erg_journal_path(dir, node, path, sizeof path) != 0)
    return NAN;
  double max = journal_file_measured_max(path);
  if (isnan(max)) {
    snprintf(rotated, sizeof rotated, "%s.1", path);
    max = journal_file_measured_max(rotated);
  }
  return max;
}

int64_t erg_journal_last_end(const char *dir, const char *node) {
  int64_t ignored;
  return erg_journal_last_end_by(dir, node, INT64_MAX, &ignored);
}

int64_t erg_journal_last_end_by(const char *dir, const char *node, int64_t max_end,
                                int64_t *ignored) {
  char path[1024], rotated[1100];
  *ignored = 0;
  if (erg_journal_path(dir, node, path, sizeof path) != 0)
    return 0;
  int64_t end = journal_file_last_end(path, max_end, ignored);
  /* Rotated just before a crash: the new file may hold no row yet. */
  if (end == 0) {
    snprintf(rotated, sizeof rotated, "%s.1", path);
    end = journal_file_last_end(rotated, max_end, ignored);
  }
  return end;
}

static void journal_write_row(FILE *f, const struct erg_journal_row *r) {
  if (isnan(r->measured_watts))
    fprintf(f, "%lld,%u,nan,%d,%.6f", (long long)r->t0, r->step_seconds, r->flags,
            r->cpu_seconds_per_second);
  else
    fprintf(f, "%lld,%u,%.3f,%d,%.6f", (long long)r->t0, r->step_seconds, r->measured_watts,
            r->flags, r->cpu_seconds_per_second);
  const double opt[ERG_NFEATURES] = {0, r->disk_bytes_per_second, r->instructions_per_second,
                                     r->cycles_per_second, r->gpu_watts};
  /* NaN: not measured in this cell (a node whose GPUs were lost); the fit
   * reads it as such and leaves the row out of that feature. */
  for (int k = 1; k < ERG_NFEATURES; k++)
    if (r->columns & (1u << k))
      fprintf(f, isnan(opt[k]) ? ",nan" : ",%.9g", opt[k]);
  for (int d = 0; (r->columns & ERG_JOURNAL_TAILS) && d < ERG_NDERIVED; d++)
    fprintf(f, isfinite(r->tails[d]) ? ",%.6f" : ",nan", r->tails[d]);
  fprintf(f, ",%u\n", r->ncpu);
}

int erg_journal_append(const char *dir, const char *node, const struct erg_journal_row *r,
                       long max_bytes, long max_age_seconds, char *why, size_t whylen) {
  return erg_journal_append_cached(dir, node, r, max_bytes, max_age_seconds, NULL, why, whylen);
}

/* The header and first row time of the file at path (st from stat),
 * from known when it describes this file with these columns. */
static int journal_known_header(const char *path, const struct stat *st, unsigned columns,
                                unsigned average, const struct erg_journal_file *known, char *have,
                                size_t havelen, const char *want, int64_t *first_t,
                                unsigned *have_average) {
  if (known && known->valid && known->ino == (unsigned long long)st->st_ino &&
      known->columns == columns && known->average_seconds == average) {
    erg_strlcpy(have, want, havelen);
    *first_t = known->first_t;
    *have_average = average;
    return 0;
  }
  return journal_file_header_avg(path, have, havelen, first_t, have_average);
}

int erg_journal_append_cached(const char *dir, const char *node, const struct erg_journal_row *r,
                              long max_bytes, long max_age_seconds, struct erg_journal_file *known,
                              char *why, size_t whylen) {
  char path[1024], want[512], have[512];
  if (erg_journal_path(dir, node, path, sizeof path) != 0) {
    snprintf(why, whylen, "journal path too long");
    return -1;
  }
  journal_header(r->columns, want, sizeof want);
  struct stat st;
  int64_t first_t = 0;
  int exists = stat(path, &st) == 0;
  unsigned average = r->average_seconds > 1 ? r->average_seconds : 0, have_average = 0;
  /* A file holds one column set and one meter average: another one (an
   * agent that started sending a counter, an older ergd's file, a meter
   * declared averaging) starts a new file. */
  if (exists && ((max_bytes > 0 && st.st_size >= max_bytes) ||
                 (journal_known_header(path, &st, r->columns, average, known, have, sizeof have,
                                       want, &first_t, &have_average) == 0 &&
                  (strcmp(have, want) || have_average != average ||
                   (max_age_seconds > 0 && first_t && r->t0 - first_t >= max_age_seconds))))) {
    journal_rotate(path);
    exists = 0;
  }
  FILE *f = fopen(path, "a");
  if (!f) {
    snprintf(why, whylen, "journal %s: %s", path, strerror(errno));
    return -1;
  }
  /* Every file starts with its own header, so each rotated piece and each
   * restart stands alone for the reader. */
  if (!exists) {
    char safe[ERG_NAME_MAX];
    erg_name_sanitize(node, strlen(node), safe);
    fprintf(f, "# erg-journal v1 node=%s step_seconds=%u", safe, r->step_seconds);
    if (average)
      fprintf(f, " average_seconds=%u", average);
    fprintf(f, "\n%s\n", want);
  }
  journal_write_row(f, r);
  struct stat now;
  if (known && fstat(fileno(f), &now) == 0)
    *known = (struct erg_journal_file){.ino = (unsigned long long)now.st_ino,
                                       .columns = r->columns,
                                       .average_seconds = average,
                                       .first_t = exists && first_t ? first_t : r->t0,
                                       .valid = 1};
  if (fclose(f) != 0) {
    if (known)
      known->valid = 0;
    snprintf(why, whylen, "journal %s: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

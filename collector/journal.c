/* The training journal: per node, one CSV row per finalised cell (see
 * docs/model.md for the format). Append-only; rotated by size to
 * FILE.1 .. FILE.N so `erg fit` can read a bounded history. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
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

int erg_journal_append(const char *dir, const char *node, const struct erg_journal_row *r,
                       long max_bytes, char *why, size_t whylen) {
  char path[1024];
  if (erg_journal_path(dir, node, path, sizeof path) != 0) {
    snprintf(why, whylen, "journal path too long");
    return -1;
  }
  struct stat st;
  int exists = stat(path, &st) == 0;
  if (exists && max_bytes > 0 && st.st_size >= max_bytes) {
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
    fprintf(f, "# erg-journal v1 node=%s step_seconds=%u\n"
               "time_unix_seconds,step_seconds,measured_watts,flags,cpu_seconds_per_second\n",
            safe, r->step_seconds);
  }
  if (isnan(r->measured_watts))
    fprintf(f, "%lld,%u,nan,%d,%.6f\n", (long long)r->t0, r->step_seconds, r->flags,
            r->cpu_seconds_per_second);
  else
    fprintf(f, "%lld,%u,%.3f,%d,%.6f\n", (long long)r->t0, r->step_seconds, r->measured_watts,
            r->flags, r->cpu_seconds_per_second);
  if (fclose(f) != 0) {
    snprintf(why, whylen, "journal %s: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

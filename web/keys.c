// SPDX-License-Identifier: GPL-3.0-or-later
/* Profile keys as the pages see them: read from index.tsv (only names the
 * sanitizer leaves unchanged become paths), their mean power over a range,
 * and the set of jobs that get a page. */
#include <math.h>
#include <rrd.h>
#include <rrd_client.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report_int.h"
#include "web_int.h"

const char *const web_kinds[WEB_NKINDS] = {"job", "command", "unit", "container", "user"};

int web_file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* One index line "safe<TAB>original" into k; 0 when it does not name an
 * existing archive under dir. */
static int keys_parse(const char *dir, char *line, struct web_key *k) {
  line[strcspn(line, "\n")] = '\0';
  char *tab = strchr(line, '\t');
  if (!tab)
    return 0;
  *tab = '\0';
  /* The index is data too: only a sanitized name may become a path. */
  if (!erg_name_is_safe(line))
    return 0;
  erg_strlcpy(k->safe, line, sizeof k->safe);
  snprintf(k->path, sizeof k->path, "%s/%s.rrd", dir, k->safe);
  if (!web_file_exists(k->path))
    return 0;
  erg_strlcpy(k->orig, tab + 1, sizeof k->orig);
  erg_strlcpy(k->label, k->orig, sizeof k->label);
  k->mean_watts = k->energy_j = 0;
  k->last = 0;
  return 1;
}

char *web_tsv_load(const char *dir, const char *file) {
  char path[1200];
  static const size_t max = 4096 * 80; /* USER_NAMES_MAX lines of uid + 64-byte name */
  snprintf(path, sizeof path, "%s/%s", dir, file);
  char *buf = malloc(max);
  if (buf && erg_read_file(path, buf, max) > 0)
    return buf;
  free(buf);
  return NULL;
}

char *web_names_load(const char *kind_dir) { return web_tsv_load(kind_dir, "names.tsv"); }

int web_names_find(const char *names, const char *key, char *out, size_t outlen) {
  size_t klen = strlen(key);
  for (const char *p = names; p && *p;) {
    const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
    if ((size_t)(end - p) > klen + 1 && !strncmp(p, key, klen) && p[klen] == '\t') {
      size_t n = (size_t)(end - p) - klen - 1;
      n = n < outlen - 1 ? n : outlen - 1;
      memcpy(out, p + klen + 1, n);
      out[n] = '\0';
      for (unsigned char *q = (unsigned char *)out; *q; q++)
        if (*q < 0x20 || *q == 0x7f)
          *q = '?';
      return 0;
    }
    p = nl ? nl + 1 : end;
  }
  return -1;
}

size_t web_read_keys(const char *dir, int64_t min_mtime, struct web_key *keys, size_t max) {
  char path[1200], line[1024];
  snprintf(path, sizeof path, "%s/index.tsv", dir);
  FILE *f = fopen(path, "r");
  size_t n = 0;
  while (f && n < max && fgets(line, sizeof line, f)) {
    struct stat sb;
    /* Keys idle since before the range (e.g. a month of ended jobs on a
     * node, not yet expired) draw nothing there: skip them, so the 256
     * drawn are the ones with data. */
    if (keys_parse(dir, line, &keys[n]) && stat(keys[n].path, &sb) == 0 &&
        (int64_t)sb.st_mtime >= min_mtime)
      n++;
  }
  if (f)
    fclose(f);
  char *names = n ? web_names_load(dir) : NULL;
  for (size_t i = 0; names && i < n; i++)
    web_names_find(names, keys[i].orig, keys[i].label, sizeof keys[i].label);
  free(names);
  return n;
}

void web_key_stats(const char *daemon, const char *path, const char *ds, int64_t end_s,
                   long seconds, int span, double *mean_watts, double *energy_j) {
  const char *const one[1] = {ds};
  struct report_value v;
  char why[64];
  *mean_watts = *energy_j = 0;
  if (report_archive(daemon, path, one, 1, end_s - seconds, end_s, NULL, &v, why, sizeof why))
    return;
  double mean = report_mean_w(&v, span);
  *mean_watts = isnan(mean) ? 0 : mean;
  *energy_j = v.energy_j;
}

static int job_recent_cmp(const void *a, const void *b) {
  int64_t x = ((const struct web_job *)a)->key.last, y = ((const struct web_job *)b)->key.last;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Jobs are history: cluster/job may list thousands. A stat per line picks
 * the recent ones (file mtime; with rrdcached it lags by the daemon's
 * write delay, which a week's window absorbs); only those are opened. */
size_t web_jobs_collect(const struct web_ctx *c, const char *const *nodes, size_t nnodes,
                        struct web_job **out) {
  char dir[1100], path[1200], line[1024];
  struct web_job *jobs = NULL;
  size_t n = 0, cap = 0;
  *out = NULL;
  if (erg_store_kind_dir(c->st, NULL, "job", dir, sizeof dir) != 0)
    return 0;
  snprintf(path, sizeof path, "%s/index.tsv", dir);
  FILE *f = fopen(path, "r");
  struct web_job j = {.on_node = NULL, .nodes_on = 0};
  while (f && fgets(line, sizeof line, f)) {
    struct stat sb;
    if (!keys_parse(dir, line, &j.key) || stat(j.key.path, &sb) != 0 ||
        (int64_t)sb.st_mtime < c->now - WEB_JOB_DAYS * 86400)
      continue;
    j.key.last = (int64_t)sb.st_mtime;
    if (n == cap) {
      cap = cap ? 2 * cap : 32;
      struct web_job *m = realloc(jobs, cap * sizeof *m);
      if (!m)
        break;
      jobs = m;
    }
    jobs[n++] = j;
  }
  if (f)
    fclose(f);
  if (n)
    qsort(jobs, n, sizeof *jobs, job_recent_cmp);
  n = n > WEB_MAX_JOBS ? WEB_MAX_JOBS : n;
  const char *daemon = erg_store_daemon(c->st);
  for (size_t i = 0; i < n; i++) {
    struct web_job *w = &jobs[i];
    if (daemon)
      rrdc_flush_if_daemon(daemon, w->key.path);
    rrd_clear_error();
    time_t last = rrd_last_r(w->key.path);
    w->key.last = last > 0 ? (int64_t)last : w->key.last;
    /* A job's mean over its own cells with energy (docs/web.md), and the
     * end of its last one: the archive goes on with 0 W after the job. */
    const char *const watts[1] = {"watts"};
    struct report_value v;
    char why[64];
    w->key.mean_watts = w->key.energy_j = 0;
    w->key.last_energy = 0;
    if (report_archive(daemon, w->key.path, watts, 1, c->now - 86400, c->now, NULL, &v, why,
                       sizeof why) == 0) {
      double mean = report_mean_w(&v, 1);
      w->key.mean_watts = isnan(mean) ? 0 : mean;
      w->key.energy_j = v.energy_j;
      w->key.last_energy = v.last_s;
    }
    w->on_node = calloc(nnodes ? nnodes : 1, 1);
    for (size_t k = 0; w->on_node && k < nnodes; k++) {
      w->on_node[k] =
          erg_store_key_path(c->st, nodes[k], "job", w->key.orig, path, sizeof path) == 0 &&
          web_file_exists(path);
      w->nodes_on += w->on_node[k];
    }
  }
  *out = jobs;
  return n;
}

void web_jobs_free(struct web_job *jobs, size_t n) {
  for (size_t i = 0; jobs && i < n; i++)
    free(jobs[i].on_node);
  free(jobs);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Expiry of idle key archives: thousands of short-lived keys (jobs,
 * commands) must not leave thousands of files behind. An archive whose
 * last update is older than the limit is deleted and its index.tsv line
 * dropped (index rewritten to a temp file and renamed, so readers see the
 * old or the new index, never half of one). */
#include <dirent.h>
#include <errno.h>
#include <rrd.h>
#include <rrd_client.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erg_common.h"
#include "erg_store.h"

struct expire_ctx {
  const struct erg_store *s;
  int64_t cutoff;   /* archives last updated before this go */
  const char *only; /* set: remove this sanitized name whatever its age */
  struct erg_store_expire_stats *st;
  char *why;
  size_t whylen;
  int failed;
};

static void expire_fail(struct expire_ctx *x, const char *what, const char *path) {
  if (!x->failed)
    snprintf(x->why, x->whylen, "%s %.400s: %s", what, path, strerror(errno));
  x->failed = 1;
}

/* Last update of an archive; -1 when it cannot be read (left alone). */
static int64_t expire_last(const char *path) {
  rrd_clear_error();
  time_t t = rrd_last_r(path);
  return t > 0 ? (int64_t)t : -1;
}

/* Decides one index line: 1 keep, 0 drop (archive expired and deleted,
 * or missing: a later update re-adds the line with the archive). */
static int expire_key(struct expire_ctx *x, const char *dir, const char *safe) {
  char path[1400];
  struct stat sb;
  snprintf(path, sizeof path, "%s/%s.rrd", dir, safe);
  if (stat(path, &sb) != 0)
    return errno == ENOENT ? 0 : 1;
  x->st->archives_seen++;
  if (x->only) {
    if (strcmp(safe, x->only))
      return 1;
  } else {
    /* The RRD header, not mtime: a back-filled archive is written now with
     * old time stamps. Reading a header is cheap (hourly, per archive). */
    int64_t last = expire_last(path);
    /* The file may lag rrdcached: ask the daemon only about candidates. */
    if (last >= 0 && last < x->cutoff && erg_store_daemon(x->s) &&
        rrdc_connect(erg_store_daemon(x->s)) == 0 && rrdc_flush(path) == 0)
      last = expire_last(path);
    if (last < 0 || last >= x->cutoff)
      return 1;
  }
  if (erg_store_daemon(x->s))
    rrdc_forget(path); /* the daemon must not write it back */
  /* The archive goes first: a crash before the index is rewritten leaves
   * a line without archive, which readers skip and updates reuse. */
  if (unlink(path) != 0 && errno != ENOENT) {
    expire_fail(x, "cannot remove", path);
    return 1;
  }
  x->st->archives_removed++;
  x->st->bytes_freed += (uint64_t)sb.st_size;
  return 0;
}

/* One kind directory: filters index.tsv, rewrites it when a line went. */
static void expire_kind_dir(struct expire_ctx *x, const char *dir) {
  char path[1300], line[1024];
  snprintf(path, sizeof path, "%s/index.tsv", dir);
  FILE *in = fopen(path, "r");
  if (!in)
    return;
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  int dropped = 0;
  while (out && fgets(line, sizeof line, in)) {
    char safe[ERG_NAME_MAX];
    size_t n = strcspn(line, "\t\n");
    /* Only a name the sanitizer could have made may become a path; any
     * other line is kept untouched. */
    int ok = line[n] == '\t' && n < sizeof safe;
    if (ok) {
      memcpy(safe, line, n);
      safe[n] = '\0';
      ok = erg_name_is_safe(safe);
    }
    if (!ok || expire_key(x, dir, safe))
      fputs(line, out);
    else
      dropped++;
  }
  fclose(in);
  if (!out) {
    expire_fail(x, "out of memory for", path);
    return;
  }
  fclose(out);
  if (dropped && erg_write_file_atomic(path, buf, len) != 0)
    expire_fail(x, "cannot rewrite", path);
  free(buf);
}

/* Every kind directory below one node or below cluster/. */
static void expire_parent(struct expire_ctx *x, const char *parent) {
  DIR *d = opendir(parent);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    char dir[1100];
    struct stat sb;
    if (e->d_name[0] == '.')
      continue;
    snprintf(dir, sizeof dir, "%s/%s", parent, e->d_name);
    if (lstat(dir, &sb) == 0 && S_ISDIR(sb.st_mode))
      expire_kind_dir(x, dir);
  }
  closedir(d);
}

int erg_store_expire(const struct erg_store *s, int64_t now, int64_t key_idle_seconds,
                     int64_t cluster_idle_seconds, struct erg_store_expire_stats *st, char *why,
                     size_t whylen) {
  struct erg_store_expire_stats dummy;
  memset(st ? st : &dummy, 0, sizeof dummy);
  struct expire_ctx x = {.s = s, .st = st ? st : &dummy, .why = why, .whylen = whylen};
  char path[700];
  if (key_idle_seconds > 0) {
    x.cutoff = now - key_idle_seconds;
    snprintf(path, sizeof path, "%s/nodes", erg_store_root(s));
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
      char node[1000];
      struct stat sb;
      snprintf(node, sizeof node, "%s/%s", path, e->d_name);
      if (e->d_name[0] != '.' && lstat(node, &sb) == 0 && S_ISDIR(sb.st_mode))
        expire_parent(&x, node);
    }
    if (d)
      closedir(d);
  }
  if (cluster_idle_seconds > 0) {
    x.cutoff = now - cluster_idle_seconds;
    snprintf(path, sizeof path, "%s/cluster", erg_store_root(s));
    expire_parent(&x, path);
  }
  return x.failed ? -1 : 0;
}

int erg_store_key_remove(const struct erg_store *s, const char *node, const char *kind,
                         const char *key, char *why, size_t whylen) {
  struct erg_store_expire_stats st = {0};
  struct expire_ctx x = {.s = s, .st = &st, .why = why, .whylen = whylen};
  char dir[1024], safe[ERG_NAME_MAX];
  if (erg_store_kind_dir(s, node, kind, dir, sizeof dir) != 0) {
    snprintf(why, whylen, "path too long for key");
    return -1;
  }
  erg_name_sanitize(key, strlen(key), safe);
  x.only = safe;
  expire_kind_dir(&x, dir);
  return x.failed ? -1 : 0;
}

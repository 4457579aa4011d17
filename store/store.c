// SPDX-License-Identifier: GPL-3.0-or-later
/* RRD archives under one root. Every path component that comes from data
 * goes through erg_name_sanitize; the original names are kept in index.tsv
 * so pages and reports can show them. Only the thread-safe librrd entry
 * points are used (rrd_create_r, rrd_update_r, rrd_last_r); with rrdcached
 * the updates go through librrd's client (rrdc_*), which has its own lock. */
#include <errno.h>
#include <math.h>
#include <rrd.h>
#include <rrd_client.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "erg_common.h"
#include "erg_store.h"

/* Longest original key kept in index.tsv (bytes, after escaping). */
#define STORE_INDEX_KEY_MAX 255

/* An archive's data source count as its header said, by path (hash) and
 * file (device, inode, size): a file replaced (renamed over, rewritten by
 * rrdtool tune) is another inode or size and is read again. Direct-mapped:
 * a slot taken by another path costs one more read, never a wrong count. */
#define STORE_DS_SLOTS 4096
struct store_ds_slot {
  uint64_t hash;
  dev_t dev;
  ino_t ino;
  off_t size;
  unsigned long ds_cnt; /* 0: empty */
};

struct erg_store {
  char root[512];
  unsigned step;
  char daemon[256]; /* rrdcached address, "" when writing files directly */
  atomic_uint_fast64_t lock_retries;
  double keep_days[ERG_STORE_RESOLUTIONS];
  pthread_mutex_t ds_lock; /* ds_cache: updates may come from more than one thread */
  struct store_ds_slot *ds_cache;
  atomic_uint_fast64_t header_reads;
};

/* librrd takes a non-blocking fcntl lock: an update fails at once while
 * another process reads the file (ergd's page renderer child, `erg
 * report`, an operator's rrdtool fetch/graph). A skipped update is not a
 * gap: RRD fills the cell from the next update, a wrong value (CI:
 * integration.profiles, one key's cell off). Readers hold the lock for
 * milliseconds, so wait for it: up to 2 s in 5 ms steps. */
#define STORE_LOCK_TRIES 400
#define STORE_LOCK_WAIT_NS 5000000L

static const char *const node_ds[] = {"measured", "modelled",     "idle",
                                      "dynamic",  "unattributed", "estimated"};
static const char *const key_ds[] = {"watts"};

/* ---- opening ---- */

static int store_connect(const struct erg_store *s, char *why, size_t whylen) {
  rrd_clear_error();
  if (rrdc_connect(s->daemon) != 0 || !rrdc_is_connected(s->daemon)) {
    const char *e = rrd_get_error();
    snprintf(why, whylen, "rrdcached %s: %s", s->daemon, e && *e ? e : "cannot connect");
    return -1;
  }
  return 0;
}

int erg_store_open(struct erg_store **out, const struct erg_store_options *opt, char *why,
                   size_t whylen) {
  if (!opt->root || !*opt->root) {
    snprintf(why, whylen, "store root not set");
    return -1;
  }
  /* Leave room below the root for nodes/<name>/<kind>/<name>.rrd. */
  if (strlen(opt->root) >= sizeof((struct erg_store *)0)->root - 2 * ERG_NAME_MAX) {
    snprintf(why, whylen, "store root path too long");
    return -1;
  }
  struct erg_store *s = calloc(1, sizeof *s);
  if (s && !(s->ds_cache = calloc(STORE_DS_SLOTS, sizeof *s->ds_cache))) {
    free(s);
    s = NULL;
  }
  if (!s) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  pthread_mutex_init(&s->ds_lock, NULL);
  erg_strlcpy(s->root, opt->root, sizeof s->root);
  s->step = opt->step_seconds ? opt->step_seconds : 5;
  static const double keep_default[ERG_STORE_RESOLUTIONS] = ERG_STORE_KEEP_DAYS_DEFAULT;
  memcpy(s->keep_days, opt->keep_days ? opt->keep_days : keep_default, sizeof s->keep_days);
  const char *d = opt->rrdcached && *opt->rrdcached ? opt->rrdcached : getenv("RRDCACHED_ADDRESS");
  if (d && *d)
    erg_strlcpy(s->daemon, d, sizeof s->daemon);
  char nodes[600];
  snprintf(nodes, sizeof nodes, "%s/nodes", s->root);
  if (erg_mkdir_p(nodes, 0755) != 0) {
    snprintf(why, whylen, "cannot create %s: %s", nodes, strerror(errno));
    free(s);
    return -1;
  }
  /* A wrong daemon address is a configuration error: say so at start
   * rather than on every update. */
  if (s->daemon[0] && store_connect(s, why, whylen) != 0) {
    erg_store_close(s);
    return -1;
  }
  *out = s;
  return 0;
}

void erg_store_close(struct erg_store *s) {
  /* The daemon keeps what it holds and writes it on its own schedule. */
  if (!s)
    return;
  if (s->daemon[0])
    rrdc_disconnect();
  pthread_mutex_destroy(&s->ds_lock);
  free(s->ds_cache);
  free(s);
}

const char *erg_store_root(const struct erg_store *s) { return s->root; }
const char *erg_store_daemon(const struct erg_store *s) { return s->daemon[0] ? s->daemon : NULL; }

/* ---- paths ---- */

static int store_dir(const struct erg_store *s, const char *node, const char *kind, char *out,
                     size_t outlen) {
  char n[ERG_NAME_MAX], k[ERG_NAME_MAX];
  int len;
  /* No node: cluster-wide archives of one kind (e.g. jobs across nodes). */
  if (!node) {
    if (!kind)
      return -1;
    erg_name_sanitize(kind, strlen(kind), k);
    len = snprintf(out, outlen, "%s/cluster/%s", s->root, k);
    return len < 0 || (size_t)len >= outlen ? -1 : 0;
  }
  erg_name_sanitize(node, strlen(node), n);
  if (kind) {
    erg_name_sanitize(kind, strlen(kind), k);
    len = snprintf(out, outlen, "%s/nodes/%s/%s", s->root, n, k);
  } else {
    len = snprintf(out, outlen, "%s/nodes/%s", s->root, n);
  }
  return len < 0 || (size_t)len >= outlen ? -1 : 0;
}

int erg_store_node_path(const struct erg_store *s, const char *node, char *out, size_t outlen) {
  char dir[1024];
  if (store_dir(s, node, NULL, dir, sizeof dir) != 0)
    return -1;
  int len = snprintf(out, outlen, "%s/node.rrd", dir);
  return len < 0 || (size_t)len >= outlen ? -1 : 0;
}

int erg_store_kind_dir(const struct erg_store *s, const char *node, const char *kind, char *out,
                       size_t outlen) {
  return store_dir(s, node, kind, out, outlen);
}

int erg_store_key_path(const struct erg_store *s, const char *node, const char *kind,
                       const char *key, char *out, size_t outlen) {
  char dir[1024], k[ERG_NAME_MAX];
  if (store_dir(s, node, kind, dir, sizeof dir) != 0)
    return -1;
  erg_name_sanitize(key, strlen(key), k);
  int len = snprintf(out, outlen, "%s/%s.rrd", dir, k);
  return len < 0 || (size_t)len >= outlen ? -1 : 0;
}

/* <kind dir>/<file>, replaced atomically by tsv; creates the directory. */
static int store_kind_file_write(const struct erg_store *s, const char *node, const char *kind,
                                 const char *file, const char *tsv, char *why, size_t whylen) {
  char dir[1024], path[1100];
  if (store_dir(s, node, kind, dir, sizeof dir) != 0) {
    snprintf(why, whylen, "path too long for %s of %.64s", file, kind);
    return -1;
  }
  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (erg_mkdir_p(dir, 0755) != 0 || erg_write_file_atomic(path, tsv, strlen(tsv)) != 0) {
    snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

int erg_store_names_write(const struct erg_store *s, const char *node, const char *kind,
                          const char *tsv, char *why, size_t whylen) {
  return store_kind_file_write(s, node, kind, "names.tsv", tsv, why, whylen);
}

int erg_store_job_users_write(const struct erg_store *s, const char *node, const char *tsv,
                              char *why, size_t whylen) {
  return store_kind_file_write(s, node, "job", "users.tsv", tsv, why, whylen);
}

int erg_store_job_commands_write(const struct erg_store *s, const char *node, const char *tsv,
                                 char *why, size_t whylen) {
  return store_kind_file_write(s, node, "job", "commands.tsv", tsv, why, whylen);
}

/* ---- archives ---- */

/* RRAs at each resolution (step, 1 min, 1 h, 1 day) kept for keep_days
 * (default 2 days, 2 weeks, 13 months, 10 years), AVERAGE and MAX each; xff
 * 0.5 (a consolidated row is known when at least half of its primary
 * points are). A resolution kept 0 days is left out; a shorter one than
 * its row gets one row. */
static unsigned store_rra_rows(const struct erg_store *s, int i, unsigned *pdp) {
  static const unsigned res_seconds[ERG_STORE_RESOLUTIONS] = {0, 60, 3600, 86400};
  unsigned res = res_seconds[i] ? res_seconds[i] : s->step;
  *pdp = res / s->step ? res / s->step : 1;
  double rows_d = s->keep_days[i] * 86400 / ((double)*pdp * s->step);
  return rows_d < 1 ? 1 : (unsigned)rows_d;
}

static int store_rras(const struct erg_store *s, char rra[2 * ERG_STORE_RESOLUTIONS][64]) {
  int n = 0;
  for (int i = 0; i < ERG_STORE_RESOLUTIONS; i++) {
    if (!(s->keep_days[i] > 0))
      continue;
    unsigned pdp, rows = store_rra_rows(s, i, &pdp);
    snprintf(rra[n++], 64, "RRA:AVERAGE:0.5:%u:%u", pdp, rows);
    snprintf(rra[n++], 64, "RRA:MAX:0.5:%u:%u", pdp, rows);
  }
  return n;
}

/* librrd's error, else what the file system says. On a full disk librrd's
 * create sets no error ("rrd create PATH: " was all the log had) and
 * leaves errno at ENOENT from unlinking its temp file twice, so the free
 * space is looked at instead: need is what the file takes (0: unknown). */
static void store_reason(char *why, size_t whylen, const char *op, const char *path, double need) {
  const char *e = rrd_get_error();
  if (e && *e) {
    snprintf(why, whylen, "%s %s: %s", op, path, e);
    return;
  }
  char dir[1100];
  struct statvfs fs;
  erg_strlcpy(dir, path, sizeof dir);
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = '\0';
  if (statvfs(slash ? dir : ".", &fs) != 0) {
    snprintf(why, whylen, "%s %s: failed, librrd gave no reason", op, path);
    return;
  }
  double avail = (double)fs.f_bavail * (double)fs.f_frsize;
  if (fs.f_favail == 0)
    snprintf(why, whylen, "%s %s: %s (no free inodes)", op, path, strerror(ENOSPC));
  else if (avail < need || avail < 65536)
    snprintf(why, whylen, "%s %s: %s (%.0f kB free there%s%.1f MB)", op, path, strerror(ENOSPC),
             avail / 1024, need > 0 ? ", the archive takes " : "", need / 1048576);
  else
    snprintf(why, whylen, "%s %s: failed, librrd gave no reason (%.0f MB free there)", op, path,
             avail / 1048576);
}

/* Bytes of an archive of nds sources: 8 per value and row (AVERAGE and
 * MAX rows at each resolution kept), plus headers. */
static double store_archive_bytes(const struct erg_store *s, int nds) {
  double rows = 0;
  unsigned pdp;
  for (int i = 0; i < ERG_STORE_RESOLUTIONS; i++)
    if (s->keep_days[i] > 0)
      rows += 2.0 * store_rra_rows(s, i, &pdp);
  return rows * nds * 8 + 4096;
}

static int store_create(const struct erg_store *s, const char *path, const char *const *ds, int nds,
                        int64_t t_end, char *why, size_t whylen) {
  char dsdef[8][96], rra[2 * ERG_STORE_RESOLUTIONS][64];
  const char *argv[16];
  int argc = 0;
  for (int i = 0; i < nds && i < 8; i++) {
    /* Heartbeat 2 steps: one late cell is bridged, a longer gap is unknown.
     * The estimated flag is a fraction of the cell, hence max 1. */
    snprintf(dsdef[i], sizeof dsdef[i], "DS:%s:GAUGE:%u:0:%s", ds[i], 2 * s->step,
             strcmp(ds[i], "estimated") ? "U" : "1");
    argv[argc++] = dsdef[i];
  }
  int nr = store_rras(s, rra);
  for (int i = 0; i < nr; i++)
    argv[argc++] = rra[i];
  rrd_clear_error();
  /* no_overwrite: a file that appeared meanwhile is kept, never truncated. */
  if (rrd_create_r2(path, s->step, (time_t)(t_end - s->step), 1, NULL, NULL, argc, argv) != 0) {
    store_reason(why, whylen, "rrd create", path, store_archive_bytes(s, nds));
    return -1;
  }
  return 0;
}

static void store_fmt(char *buf, size_t len, double v) {
  if (!isfinite(v))
    snprintf(buf, len, "U");
  else
    snprintf(buf, len, "%.10g", v);
}

static int store_update_file(struct erg_store *s, const char *path, const char **argv) {
  for (int i = 0;; i++) {
    rrd_clear_error();
    int rc = rrd_update_r(path, NULL, 1, argv);
    const char *e = rrd_get_error();
    if (rc == 0 || i + 1 >= STORE_LOCK_TRIES || !e || !strstr(e, "could not lock"))
      return rc;
    atomic_fetch_add(&s->lock_retries, 1);
    nanosleep(&(struct timespec){0, STORE_LOCK_WAIT_NS}, NULL);
  }
}

uint64_t erg_store_lock_retries(const struct erg_store *s) { return atomic_load(&s->lock_retries); }

/* The number of data sources in an archive's header (0: not readable as
 * one): the start of librrd's stat_head_t (rrd_format.h, which rrd.h
 * offers only as deprecated), in the host's layout as librrd writes it. */
struct store_head {
  char cookie[4];
  char version[5];
  double float_cookie;
  unsigned long ds_cnt;
};

static unsigned long store_ds_read(const char *path) {
  struct store_head h;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t got = read(fd, &h, sizeof h);
  close(fd);
  if (got != (ssize_t)sizeof h || memcmp(h.cookie, "RRD", 4) != 0)
    return 0;
  return h.ds_cnt;
}

/* The count of the archive at path (st: its stat), from the cache while it
 * is the same file, else from its header. */
static unsigned long store_ds_count(struct erg_store *s, const char *path, const struct stat *st) {
  uint64_t h = 1469598103934665603ULL;
  for (const unsigned char *p = (const unsigned char *)path; *p; p++)
    h = (h ^ *p) * 1099511628211ULL;
  struct store_ds_slot *slot = &s->ds_cache[h & (STORE_DS_SLOTS - 1)];
  unsigned long n = 0;
  pthread_mutex_lock(&s->ds_lock);
  if (slot->ds_cnt && slot->hash == h && slot->dev == st->st_dev && slot->ino == st->st_ino &&
      slot->size == st->st_size)
    n = slot->ds_cnt;
  pthread_mutex_unlock(&s->ds_lock);
  if (n)
    return n;
  atomic_fetch_add(&s->header_reads, 1);
  n = store_ds_read(path);
  pthread_mutex_lock(&s->ds_lock);
  *slot = (struct store_ds_slot){h, st->st_dev, st->st_ino, st->st_size, n};
  pthread_mutex_unlock(&s->ds_lock);
  return n;
}

uint64_t erg_store_header_reads(const struct erg_store *s) { return atomic_load(&s->header_reads); }

/* grow: ds may have more sources than an existing archive made before
 * they were added at the end; such an archive gets its first ones only. */
static int store_update(struct erg_store *s, const char *path, const char *const *ds, int nds,
                        int grow, int64_t t_end, const double *vals, char *why, size_t whylen) {
  struct stat st;
  if (t_end <= (int64_t)s->step) {
    snprintf(why, whylen, "rrd update %s: bad time %lld", path, (long long)t_end);
    return -1;
  }
  if (stat(path, &st) != 0) {
    if (store_create(s, path, ds, nds, t_end, why, whylen) != 0)
      return -1;
  } else if (grow) {
    unsigned long have = store_ds_count(s, path, &st);
    if (have > 0 && have < (unsigned long)nds)
      nds = (int)have;
  }
  char line[512];
  int off = snprintf(line, sizeof line, "%lld", (long long)t_end);
  for (int i = 0; i < nds; i++) {
    char v[48];
    store_fmt(v, sizeof v, vals[i]);
    off += snprintf(line + off, sizeof line - (size_t)off, ":%s", v);
  }
  const char *argv[1] = {line};
  rrd_clear_error();
  int rc;
  if (s->daemon[0]) {
    /* Reconnects after a daemon restart; a no-op while connected. */
    if (store_connect(s, why, whylen) != 0)
      return -1;
    rrd_clear_error();
    rc = rrdc_update(path, 1, argv);
  } else {
    rc = store_update_file(s, path, argv);
  }
  if (rc != 0) {
    store_reason(why, whylen, "rrd update", path, 0);
    return -1;
  }
  return 0;
}

static void store_index_field(const char *key, char *out, size_t outlen);

/* A new node directory also gets a "name" file with the node's original
 * name, so readers can show it when the sanitized directory differs. */
static int store_node_dir_init(const char *dir, const char *node) {
  if (erg_mkdir_p(dir, 0755) != 0)
    return -1;
  char path[1100];
  int len = snprintf(path, sizeof path, "%s/name", dir);
  if (len < 0 || (size_t)len >= sizeof path)
    return -1;
  FILE *f = fopen(path, "wx");
  if (!f)
    return errno == EEXIST ? 0 : -1;
  char field[512];
  store_index_field(node, field, sizeof field);
  int bad = fprintf(f, "%s\n", field) < 0;
  return (fclose(f) != 0 || bad) ? -1 : 0;
}

int erg_store_node_update(struct erg_store *s, const char *node,
                          const struct erg_store_node_cell *c, char *why, size_t whylen) {
  char dir[1024], path[1100];
  if (store_dir(s, node, NULL, dir, sizeof dir) != 0 ||
      erg_store_node_path(s, node, path, sizeof path) != 0) {
    snprintf(why, whylen, "path too long for node");
    return -1;
  }
  struct stat st;
  if (stat(path, &st) != 0 && store_node_dir_init(dir, node) != 0) {
    snprintf(why, whylen, "cannot create %s: %s", dir, strerror(errno));
    return -1;
  }
  double vals[6] = {c->measured_watts, c->modelled_watts,     c->idle_watts,
                    c->dynamic_watts,  c->unattributed_watts, c->estimated ? 1.0 : 0.0};
  return store_update(s, path, node_ds, 6, 0, c->t_end, vals, why, whylen);
}

/* ---- index.tsv ---- */

/* The original key as one index field: bytes below 0x20 (tab, newline, ...)
 * and DEL become '?', so one key is always one line of two fields. */
static void store_index_field(const char *key, char *out, size_t outlen) {
  size_t o = 0;
  for (const unsigned char *p = (const unsigned char *)key; *p && o + 1 < outlen; p++)
    out[o++] = (*p < 0x20 || *p == 0x7f) ? '?' : (char)*p;
  out[o] = '\0';
}

/* Appends "sanitized<TAB>original" to the kind's index the first time a
 * key is seen. Written before the archive exists, so a reader that lists
 * the index may find a key whose archive is not there yet (and skips it). */
static int store_index_add(const char *dir, const char *key) {
  char path[1200], safe[ERG_NAME_MAX], field[STORE_INDEX_KEY_MAX + 1];
  snprintf(path, sizeof path, "%s/index.tsv", dir);
  erg_name_sanitize(key, strlen(key), safe);
  store_index_field(key, field, sizeof field);
  FILE *f = fopen(path, "a+");
  if (!f)
    return -1;
  char line[1024];
  size_t n = strlen(safe);
  int found = 0;
  while (!found && fgets(line, sizeof line, f))
    found = !strncmp(line, safe, n) && line[n] == '\t';
  if (!found)
    fprintf(f, "%s\t%s\n", safe, field);
  return fclose(f) == 0 ? 0 : -1;
}

static int store_key_update(struct erg_store *s, const char *node, const char *kind,
                            const char *key, int64_t t_end, const char *const *ds,
                            const double *vals, int nds, char *why, size_t whylen) {
  char dir[1024], path[1200];
  if (store_dir(s, node, kind, dir, sizeof dir) != 0 ||
      erg_store_key_path(s, node, kind, key, path, sizeof path) != 0) {
    snprintf(why, whylen, "path too long for key");
    return -1;
  }
  struct stat st;
  if (stat(path, &st) != 0) {
    if (erg_mkdir_p(dir, 0755) != 0) {
      snprintf(why, whylen, "cannot create %s: %s", dir, strerror(errno));
      return -1;
    }
    if (store_index_add(dir, key) != 0) {
      snprintf(why, whylen, "cannot write %s/index.tsv: %s", dir, strerror(errno));
      return -1;
    }
  }
  return store_update(s, path, ds, nds, nds > 1, t_end, vals, why, whylen);
}

int erg_store_key_update(struct erg_store *s, const char *node, const char *kind, const char *key,
                         int64_t t_end, double watts, char *why, size_t whylen) {
  return store_key_update(s, node, kind, key, t_end, key_ds, &watts, 1, why, whylen);
}

int erg_store_key_update_ds(struct erg_store *s, const char *node, const char *kind,
                            const char *key, int64_t t_end, const char *const *ds,
                            const double *vals, int nds, char *why, size_t whylen) {
  if (nds < 1 || nds > 8) {
    snprintf(why, whylen, "rrd update: %d data sources", nds);
    return -1;
  }
  return store_key_update(s, node, kind, key, t_end, ds, vals, nds, why, whylen);
}

int64_t erg_store_node_last(const struct erg_store *s, const char *node) {
  char path[1200];
  struct stat st;
  if (erg_store_node_path(s, node, path, sizeof path) != 0 || stat(path, &st) != 0)
    return 0;
  /* Updates still held by rrdcached are not in the file yet. */
  if (s->daemon[0] && rrdc_connect(s->daemon) == 0)
    rrdc_flush(path);
  rrd_clear_error();
  time_t t = rrd_last_r(path);
  return t > 0 ? (int64_t)t : 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* erg_store_expire against real RRD files with old last-update times
 * (written through the store with past time stamps, and one made by
 * `rrdtool create --start` in the past): idle key archives and their
 * index lines go, fresh ones, node archives and cluster archives (unless
 * asked) stay, and a key seen again comes back with one index line; and
 * the same through a real rrdcached. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../erg_test.h"
#include "erg_common.h"
#include "erg_store.h"

#define DAY 86400LL

/* Each case's temporary folder, removed by its teardown; the daemon's pid
 * file, for the teardown to stop a daemon a failed assertion left running. */
static char root[64], cached_dir[64], cached_pidf[160];

static int exists(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0;
}

static void key_path(struct erg_store *s, const char *node, const char *kind, const char *key,
                     char *out) {
  erg_assert(erg_store_key_path(s, node, kind, key, out, 1200) == 0, "path of %s", key);
}

/* Lines of an index.tsv whose first field is the sanitized key. */
static int index_count(struct erg_store *s, const char *node, const char *kind, const char *key) {
  char dir[1200], path[1300], line[1024], safe[ERG_NAME_MAX];
  erg_store_kind_dir(s, node, kind, dir, sizeof dir);
  snprintf(path, sizeof path, "%s/index.tsv", dir);
  erg_name_sanitize(key, strlen(key), safe);
  FILE *f = fopen(path, "r");
  int n = 0;
  size_t l = strlen(safe);
  while (f && fgets(line, sizeof line, f))
    n += !strncmp(line, safe, l) && line[l] == '\t';
  if (f)
    fclose(f);
  return n;
}

/* A few cells ending at t_end through the store. */
static void write_key(struct erg_store *s, const char *node, const char *kind, const char *key,
                      int64_t t_end) {
  char why[300];
  for (int64_t t = t_end - 20; t <= t_end; t += 5)
    erg_assert(erg_store_key_update(s, node, kind, key, t, 3.5, why, sizeof why) == 0,
               "update %s: %s", key, why);
}

static long long rrdtool_last(const char *path) {
  char cmd[1400], line[64] = "";
  snprintf(cmd, sizeof cmd, "rrdtool last '%s'", path);
  FILE *p = popen(cmd, "r");
  if (!p || !fgets(line, sizeof line, p))
    line[0] = '\0';
  if (p)
    pclose(p);
  return strtoll(line, NULL, 10);
}

/* With rrdcached (-w 3600: updates stay in the daemon): an archive whose
 * file header is old but whose recent update sits in the daemon is kept
 * (expiry flushes candidates first); a really idle one is removed and the
 * daemon, told to forget it, does not write it back on shutdown. */
static void test_rrdcached(void **state) {
  (void)state;
  if (system("command -v rrdcached >/dev/null") != 0) {
    fprintf(stderr, "rrdcached not installed: daemon part skipped\n");
    skip();
  }
  int64_t now = (int64_t)time(NULL);
  now -= now % 5;
  char *dir = cached_dir, *pidf = cached_pidf, sock[128], addr[160], store[128], why[512], cmd[600];
  strcpy(dir, "/tmp/erg-expire-cached-XXXXXX");
  erg_assert(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
  snprintf(sock, sizeof sock, "%s/d.sock", dir);
  snprintf(addr, sizeof addr, "unix:%s", sock);
  snprintf(store, sizeof store, "%s/store", dir);
  snprintf(pidf, sizeof cached_pidf, "%s/d.pid", dir);
  snprintf(cmd, sizeof cmd, "rrdcached -l %s -b %s -B -w 3600 -f 7200 -p %s", addr, dir, pidf);
  erg_assert(system(cmd) == 0, "rrdcached start");
  struct stat sb;
  for (int i = 0; i < 100 && stat(sock, &sb) != 0; i++)
    usleep(50000);
  struct erg_store *s;
  struct erg_store_options o = {.root = store, .step_seconds = 5, .rrdcached = addr};
  erg_assert(erg_store_open(&s, &o, why, sizeof why) == 0, "open through rrdcached: %s", why);
  /* Created 40 days back (header), then a recent update held by the daemon. */
  write_key(s, "n1", "command", "busy", now - 40 * DAY);
  write_key(s, "n1", "command", "busy", now - 30);
  write_key(s, "n1", "command", "gone", now - 40 * DAY);
  char busy[1200], gone[1200];
  key_path(s, "n1", "command", "busy", busy);
  key_path(s, "n1", "command", "gone", gone);
  erg_assert(rrdtool_last(busy) < now - 30 * DAY, "the file on disk does not have the update yet");
  struct erg_store_expire_stats st;
  erg_assert(erg_store_expire(s, now, 30 * DAY, 0, &st, why, sizeof why) == 0, "expire: %s", why);
  erg_assert(exists(busy) && rrdtool_last(busy) == now - 30, "busy key flushed and kept");
  erg_assert(!exists(gone) && st.archives_removed == 1, "idle key removed");
  erg_assert(index_count(s, "n1", "command", "gone") == 0, "index line dropped");
  erg_store_close(s);
  /* The daemon writes what it holds on shutdown: not the forgotten file. */
  snprintf(cmd, sizeof cmd, "kill $(cat %s)", pidf);
  erg_assert(system(cmd) == 0, "rrdcached stop");
  for (int i = 0; i < 100 && stat(pidf, &sb) == 0; i++)
    usleep(50000);
  pidf[0] = '\0'; /* stopped: nothing for the teardown to stop */
  erg_assert(!exists(gone), "forgotten archive not written back");
  erg_assert(exists(busy), "kept archive still there");
}

static void test_expire(void **state) {
  (void)state;
  char why[512];
  strcpy(root, "/tmp/erg-expire-XXXXXX");
  erg_assert(mkdtemp(root) != NULL, "mkdtemp: %s", strerror(errno));
  struct erg_store *s;
  struct erg_store_options o = {.root = root, .step_seconds = 5};
  erg_assert(erg_store_open(&s, &o, why, sizeof why) == 0, "open: %s", why);
  int64_t now = (int64_t)time(NULL);
  now -= now % 5;
  const char *hostile = "../../etc/passwd <b>";
  write_key(s, "n1", "command", "old", now - 40 * DAY);
  write_key(s, "n1", "command", hostile, now - 31 * DAY);
  write_key(s, "n1", "command", "almost", now - 29 * DAY);
  write_key(s, "n1", "command", "fresh", now - 60);
  write_key(s, "n1", "job", "[none]", now - 35 * DAY);
  write_key(s, "n2", "user", "alice", now - 100 * DAY);
  write_key(s, NULL, "job", "job-17", now - 300 * DAY);
  write_key(s, NULL, "job", "job-18", now - 10);
  struct erg_store_node_cell c = {.t_end = now - 50 * DAY, .measured_watts = 100};
  erg_assert(erg_store_node_update(s, "n1", &c, why, sizeof why) == 0, "node update: %s", why);

  /* One archive made by the stock rrdtool with a start 35 days back, and
   * entered in the index by hand, as an older ergd would have left it. */
  char dir[1200], made[1300], cmd[5000];
  erg_store_kind_dir(s, "n1", "unit", dir, sizeof dir);
  snprintf(made, sizeof made, "%s/cron.service.rrd", dir);
  snprintf(cmd, sizeof cmd,
           "mkdir -p '%s' && rrdtool create '%s' --start %lld --step 5 DS:watts:GAUGE:10:0:U "
           "RRA:AVERAGE:0.5:1:100 && printf 'cron.service\\tcron.service\\n' >> '%s/index.tsv'",
           dir, made, (long long)(now - 35 * DAY), dir);
  erg_assert(system(cmd) == 0, "rrdtool create");
  erg_assert(rrdtool_last(made) == now - 35 * DAY, "rrdtool last of the made archive");

  char p_old[1200], p_host[1200], p_almost[1200], p_fresh[1200], p_none[1200], p_alice[1200],
      p_j17[1200], p_j18[1200], p_node[1200];
  key_path(s, "n1", "command", "old", p_old);
  key_path(s, "n1", "command", hostile, p_host);
  key_path(s, "n1", "command", "almost", p_almost);
  key_path(s, "n1", "command", "fresh", p_fresh);
  key_path(s, "n1", "job", "[none]", p_none);
  key_path(s, "n2", "user", "alice", p_alice);
  key_path(s, NULL, "job", "job-17", p_j17);
  key_path(s, NULL, "job", "job-18", p_j18);
  erg_store_node_path(s, "n1", p_node, sizeof p_node);
  erg_assert(rrdtool_last(p_old) == now - 40 * DAY, "old archive's last update");

  /* 30 days, cluster never. */
  struct erg_store_expire_stats st;
  int rc = erg_store_expire(s, now, 30 * DAY, 0, &st, why, sizeof why);
  erg_assert(rc == 0, "expire: %s", why);
  erg_assert(st.archives_seen == 7, "seen %llu, want 7", (unsigned long long)st.archives_seen);
  erg_assert(st.archives_removed == 5, "removed %llu, want 5",
             (unsigned long long)st.archives_removed);
  erg_assert(st.bytes_freed > 0, "bytes freed");
  erg_assert(!exists(p_old) && !exists(p_host) && !exists(p_none) && !exists(p_alice) &&
                 !exists(made),
             "idle archives removed");
  erg_assert(exists(p_almost) && exists(p_fresh), "archives idle < 30 days kept");
  erg_assert(exists(p_node), "node.rrd kept");
  erg_assert(exists(p_j17) && exists(p_j18), "cluster archives kept with cluster limit 0");
  erg_assert(index_count(s, "n1", "command", "old") == 0 &&
                 index_count(s, "n1", "command", hostile) == 0,
             "index lines of removed keys dropped");
  erg_assert(index_count(s, "n1", "command", "almost") == 1 &&
                 index_count(s, "n1", "command", "fresh") == 1,
             "index lines of kept keys stay");
  erg_assert(index_count(s, "n1", "unit", "cron.service") == 0, "hand-made line dropped");
  erg_assert(index_count(s, "n1", "job", "[none]") == 0, "[none] line dropped");
  erg_assert(rrdtool_last(p_fresh) == now - 60, "kept archive intact");
  snprintf(cmd, sizeof cmd, "find '%s' -name '*.tmp' | grep -q .", root);
  erg_assert(system(cmd) != 0, "no temp file left");

  /* Idempotent: nothing more to do. */
  rc = erg_store_expire(s, now, 30 * DAY, 0, &st, why, sizeof why);
  erg_assert(rc == 0 && st.archives_removed == 0 && st.archives_seen == 2,
             "second run removes nothing");

  /* A key seen again is a new archive with one index line. */
  write_key(s, "n1", "command", "old", now);
  erg_assert(exists(p_old) && index_count(s, "n1", "command", "old") == 1, "key comes back once");

  /* The cluster limit applies to cluster archives only. */
  rc = erg_store_expire(s, now, 0, 200 * DAY, &st, why, sizeof why);
  erg_assert(rc == 0 && st.archives_removed == 1, "cluster expiry removed %llu",
             (unsigned long long)st.archives_removed);
  erg_assert(!exists(p_j17) && exists(p_j18) && exists(p_almost), "only the idle cluster job went");
  erg_assert(index_count(s, NULL, "job", "job-17") == 0 &&
                 index_count(s, NULL, "job", "job-18") == 1,
             "cluster index updated");

  /* One key removed now, whatever its age (an evicted key); its twin in
   * another node, the other keys and a missing key are left alone. */
  write_key(s, "n2", "command", hostile, now);
  char p_host2[1200];
  key_path(s, "n2", "command", hostile, p_host2);
  write_key(s, "n1", "command", hostile, now);
  erg_assert(erg_store_key_remove(s, "n1", "command", hostile, why, sizeof why) == 0, "remove: %s",
             why);
  erg_assert(!exists(p_host) && index_count(s, "n1", "command", hostile) == 0, "removed key gone");
  erg_assert(exists(p_host2) && index_count(s, "n2", "command", hostile) == 1,
             "other node's key kept");
  erg_assert(exists(p_fresh) && index_count(s, "n1", "command", "fresh") == 1 && exists(p_old) &&
                 index_count(s, "n1", "command", "old") == 1,
             "other keys of the node kept");
  erg_assert(erg_store_key_remove(s, "n1", "command", "never-written", why, sizeof why) == 0,
             "removing a key without archive: %s", why);

  /* 0 and 0: never. */
  rc = erg_store_expire(s, now + 1000 * DAY, 0, 0, &st, why, sizeof why);
  erg_assert(rc == 0 && st.archives_seen == 0, "0 = never");

  erg_store_close(s);
}

/* Removes the case's folder; stops the daemon first if it still runs. */
static int remove_dir(void **state) {
  char cmd[600];
  (void)state;
  if (cached_pidf[0] && exists(cached_pidf)) {
    snprintf(cmd, sizeof cmd, "kill $(cat %s)", cached_pidf);
    if (system(cmd) == 0)
      for (int i = 0; i < 100 && exists(cached_pidf); i++)
        usleep(50000);
  }
  cached_pidf[0] = '\0';
  for (int i = 0; i < 2; i++) {
    char *dir = i ? cached_dir : root;
    if (!dir[0])
      continue;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
      fprintf(stderr, "cannot remove %s\n", dir);
    dir[0] = '\0';
  }
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_expire, remove_dir),
      cmocka_unit_test_teardown(test_rrdcached, remove_dir),
  };
  if (system("command -v rrdtool >/dev/null") != 0)
    erg_skip_all("rrdtool not installed");
  return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* The store against the real rrdtool: values written are the values
 * fetched, the layout (step, heartbeat, RRAs) is what docs/store.md says,
 * out-of-order updates fail cleanly and change nothing, hostile names stay
 * inside the root and keep their original text in index.tsv. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "erg_common.h"
#include "erg_store.h"
#include "store_test.h"

#define T0 1700000000LL

static char root[64];

static int setup(void **state) {
  (void)state;
  if (system("command -v rrdtool >/dev/null") != 0) {
    fprintf(stderr, "SKIP: rrdtool not installed\n");
    exit(77);
  }
  strcpy(root, "/tmp/erg-store-XXXXXX");
  assert_non_null(mkdtemp(root));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  return system(cmd);
}

static struct erg_store *open_store(const char *sub) {
  struct erg_store *s;
  char why[256], dir[128];
  snprintf(dir, sizeof dir, "%s/%s", root, sub);
  struct erg_store_options o = {.root = dir, .step_seconds = 5};
  if (erg_store_open(&s, &o, why, sizeof why) != 0)
    fail_msg("open: %s", why);
  return s;
}

static void test_node_roundtrip(void **state) {
  (void)state;
  struct erg_store *s = open_store("rt");
  char why[256], path[1200];
  for (int i = 1; i <= 4; i++) {
    struct erg_store_node_cell c = {.t_end = T0 + 5 * i,
                                    .measured_watts = 100 + i,
                                    .modelled_watts = i == 3 ? NAN : 95 + i,
                                    .idle_watts = 40,
                                    .dynamic_watts = 60 + i,
                                    .unattributed_watts = 0.5 * i,
                                    .estimated = i == 2};
    if (erg_store_node_update(s, "n1", &c, why, sizeof why) != 0)
      fail_msg("update: %s", why);
  }
  assert_int_equal(erg_store_node_last(s, "n1"), T0 + 20);
  assert_int_equal(erg_store_node_last(s, "never-seen"), 0);
  erg_store_node_path(s, "n1", path, sizeof path);
  assert_float_equal(rrdtool_fetch(path, "measured", T0 + 15, NULL), 103, 1e-6);
  assert_float_equal(rrdtool_fetch(path, "modelled", T0 + 20, NULL), 99, 1e-6);
  assert_float_equal(rrdtool_fetch(path, "idle", T0 + 15, NULL), 40, 1e-6);
  assert_float_equal(rrdtool_fetch(path, "dynamic", T0 + 20, NULL), 64, 1e-6);
  assert_float_equal(rrdtool_fetch(path, "unattributed", T0 + 10, NULL), 1.0, 1e-6);
  assert_float_equal(rrdtool_fetch(path, "estimated", T0 + 10, NULL), 1.0, 1e-6);
  assert_float_equal(rrdtool_fetch(path, "estimated", T0 + 15, NULL), 0.0, 1e-6);
  assert_true(isnan(rrdtool_fetch(path, "modelled", T0 + 15, NULL)));
  erg_store_close(s);
}

/* rrdtool info: the archive's shape is the documented one. */
static void test_layout(void **state) {
  (void)state;
  struct erg_store *s = open_store("layout");
  char why[256], path[1200];
  struct erg_store_node_cell c = {.t_end = T0 + 5, .measured_watts = 1};
  assert_int_equal(erg_store_node_update(s, "n", &c, why, sizeof why), 0);
  erg_store_node_path(s, "n", path, sizeof path);
  assert_string_equal(rrdtool_info(path, "step"), "5");
  assert_string_equal(rrdtool_info(path, "ds[measured].type"), "\"GAUGE\"");
  assert_string_equal(rrdtool_info(path, "ds[measured].minimal_heartbeat"), "10");
  assert_string_equal(rrdtool_info(path, "ds[measured].min"), "0.0000000000e+00");
  assert_string_equal(rrdtool_info(path, "ds[estimated].max"), "1.0000000000e+00");
  assert_string_equal(rrdtool_info(path, "ds[unattributed].type"), "\"GAUGE\"");
  /* step x 2 days, 1 min x 2 weeks, 1 h x 13 months, 1 day x 10 years. */
  static const char *const want[][3] = {
      {"1", "34560", "\"AVERAGE\""},    {"1", "34560", "\"MAX\""},
      {"12", "20160", "\"AVERAGE\""},   {"12", "20160", "\"MAX\""},
      {"720", "9504", "\"AVERAGE\""},   {"720", "9504", "\"MAX\""},
      {"17280", "3653", "\"AVERAGE\""}, {"17280", "3653", "\"MAX\""}};
  for (int i = 0; i < 8; i++) {
    char k[64];
    snprintf(k, sizeof k, "rra[%d].pdp_per_row", i);
    assert_string_equal(rrdtool_info(path, k), want[i][0]);
    snprintf(k, sizeof k, "rra[%d].rows", i);
    assert_string_equal(rrdtool_info(path, k), want[i][1]);
    snprintf(k, sizeof k, "rra[%d].cf", i);
    assert_string_equal(rrdtool_info(path, k), want[i][2]);
    snprintf(k, sizeof k, "rra[%d].xff", i);
    assert_string_equal(rrdtool_info(path, k), "5.0000000000e-01");
  }
  assert_null(rrdtool_info(path, "rra[8].cf"));
  erg_store_close(s);
}

/* archive_days: 0.5 day at step resolution, no 1-min RRA, 1 h and 1 day
 * for a day each (at least one row); the file is the smaller for it. */
static void test_keep_days(void **state) {
  (void)state;
  struct erg_store *s;
  char why[256], dir[128], path[1200];
  snprintf(dir, sizeof dir, "%s/keep", root);
  const double days[ERG_STORE_RESOLUTIONS] = {0.5, 0, 1, 0.01};
  struct erg_store_options o = {.root = dir, .step_seconds = 5, .keep_days = days};
  if (erg_store_open(&s, &o, why, sizeof why) != 0)
    fail_msg("open: %s", why);
  struct erg_store_node_cell c = {.t_end = T0 + 5, .measured_watts = 1};
  assert_int_equal(erg_store_node_update(s, "n", &c, why, sizeof why), 0);
  erg_store_node_path(s, "n", path, sizeof path);
  static const char *const want[][2] = {{"1", "8640"}, {"1", "8640"},  {"720", "24"},
                                        {"720", "24"}, {"17280", "1"}, {"17280", "1"}};
  for (int i = 0; i < 6; i++) {
    char k[64];
    snprintf(k, sizeof k, "rra[%d].pdp_per_row", i);
    assert_string_equal(rrdtool_info(path, k), want[i][0]);
    snprintf(k, sizeof k, "rra[%d].rows", i);
    assert_string_equal(rrdtool_info(path, k), want[i][1]);
  }
  assert_null(rrdtool_info(path, "rra[6].cf"));
  erg_store_close(s);
}

/* A key archive: 100 W then 40 W in known cells, read back exactly. */
static void test_key_roundtrip(void **state) {
  (void)state;
  struct erg_store *s = open_store("keys");
  char why[256], path[1200];
  const double w[] = {100, 40, 40, 100};
  for (int i = 0; i < 4; i++)
    assert_int_equal(erg_store_key_update(s, "n1", "command", "stress-ng", T0 + 5 * (i + 1), w[i],
                                          why, sizeof why),
                     0);
  assert_int_equal(erg_store_key_path(s, "n1", "command", "stress-ng", path, sizeof path), 0);
  assert_non_null(strstr(path, "/nodes/n1/command/stress-ng.rrd"));
  for (int i = 0; i < 4; i++)
    assert_float_equal(rrdtool_fetch(path, "watts", T0 + 5 * (i + 1), NULL), w[i], 1e-9);
  assert_string_equal(rrdtool_info(path, "ds[watts].minimal_heartbeat"), "10");
  erg_store_close(s);
}

/* A key archive of several data sources (a job's watts, sd, var): written
 * and fetched by name; an archive of "watts" alone from before (an older
 * ergd's) gets its watts from the same call, and the later sources stay
 * absent there (docs/store.md). */
static void test_key_ds(void **state) {
  (void)state;
  struct erg_store *s = open_store("keyds");
  char why[256], path[1200], old[1200];
  static const char *const ds[3] = {"watts", "sd", "var"};
  assert_int_equal(erg_store_key_update(s, "n1", "job", "old", T0 + 5, 7, why, sizeof why), 0);
  for (int i = 1; i <= 3; i++) {
    double v[3] = {10.0 * i, 0.5 * i, 100.0 * i};
    assert_int_equal(
        erg_store_key_update_ds(s, "n1", "job", "new", T0 + 5 * i, ds, v, 3, why, sizeof why), 0);
    if (i > 1)
      assert_int_equal(
          erg_store_key_update_ds(s, "n1", "job", "old", T0 + 5 * i, ds, v, 3, why, sizeof why), 0);
  }
  assert_int_equal(erg_store_key_path(s, "n1", "job", "new", path, sizeof path), 0);
  assert_int_equal(erg_store_key_path(s, "n1", "job", "old", old, sizeof old), 0);
  for (int i = 1; i <= 3; i++) {
    assert_float_equal(rrdtool_fetch(path, "watts", T0 + 5 * i, NULL), 10.0 * i, 1e-9);
    assert_float_equal(rrdtool_fetch(path, "sd", T0 + 5 * i, NULL), 0.5 * i, 1e-9);
    assert_float_equal(rrdtool_fetch(path, "var", T0 + 5 * i, NULL), 100.0 * i, 1e-9);
    assert_float_equal(rrdtool_fetch(old, "watts", T0 + 5 * i, NULL), i == 1 ? 7 : 10.0 * i, 1e-9);
  }
  assert_true(isnan(rrdtool_fetch(old, "sd", T0 + 10, NULL)));
  assert_string_equal(rrdtool_info(path, "ds[var].minimal_heartbeat"), "10");
  assert_int_not_equal(erg_store_key_update_ds(s, "n1", "job", "new", T0 + 20, ds,
                                               (double[]){1, 2, 3}, 0, why, sizeof why),
                       0);
  erg_store_close(s);
}

/* Cluster-wide archives (node NULL) live under cluster/<kind>/ with their
 * own index; a node directory carries the node's original name. */
static void test_cluster_and_name(void **state) {
  (void)state;
  struct erg_store *s = open_store("cluster");
  char why[256], path[1200], buf[256];
  assert_int_equal(erg_store_key_update(s, NULL, "job", "job 7/a", T0 + 5, 33, why, sizeof why), 0);
  assert_int_equal(erg_store_key_path(s, NULL, "job", "job 7/a", path, sizeof path), 0);
  assert_non_null(strstr(path, "/cluster/job/"));
  assert_float_equal(rrdtool_fetch(path, "watts", T0 + 5, NULL), 33, 1e-9);
  assert_int_equal(erg_store_kind_dir(s, NULL, "job", path, sizeof path), 0);
  strcat(path, "/index.tsv");
  assert_true(erg_read_file(path, buf, sizeof buf) > 0);
  assert_non_null(strstr(buf, "\tjob 7/a\n"));
  assert_int_equal(erg_store_kind_dir(s, NULL, NULL, path, sizeof path), -1);

  struct erg_store_node_cell c = {.t_end = T0 + 5, .measured_watts = 100};
  assert_int_equal(erg_store_node_update(s, "rack1/n 1", &c, why, sizeof why), 0);
  assert_int_equal(erg_store_node_path(s, "rack1/n 1", path, sizeof path), 0);
  strcpy(strrchr(path, '/'), "/name");
  assert_true(erg_read_file(path, buf, sizeof buf) > 0);
  assert_string_equal(buf, "rack1/n 1\n");
  erg_store_close(s);
}

/* Older or equal time: an error with a reason; the file stays readable and
 * the stored values do not change. */
static void test_out_of_order(void **state) {
  (void)state;
  struct erg_store *s = open_store("ooo");
  char why[256], path[1200];
  for (int i = 1; i <= 3; i++) {
    struct erg_store_node_cell c = {.t_end = T0 + 5 * i, .measured_watts = 100, .idle_watts = 40};
    assert_int_equal(erg_store_node_update(s, "n1", &c, why, sizeof why), 0);
  }
  erg_store_node_path(s, "n1", path, sizeof path);
  const int64_t bad[] = {T0 + 10, T0 + 15, T0 - 100};
  for (int i = 0; i < 3; i++) {
    struct erg_store_node_cell old = {.t_end = bad[i], .measured_watts = 999, .idle_watts = 1};
    why[0] = '\0';
    assert_int_equal(erg_store_node_update(s, "n1", &old, why, sizeof why), -1);
    assert_non_null(strstr(why, "rrd update"));
    assert_non_null(strstr(why, "illegal attempt"));
  }
  assert_int_equal(erg_store_key_update(s, "n1", "job", "42", T0 + 5, 7, why, sizeof why), 0);
  assert_int_equal(erg_store_key_update(s, "n1", "job", "42", T0 + 5, 8, why, sizeof why), -1);
  assert_non_null(rrdtool_info(path, "last_update"));
  assert_string_equal(rrdtool_info(path, "last_update"), "1700000015");
  assert_float_equal(rrdtool_fetch(path, "measured", T0 + 10, NULL), 100, 1e-9);
  assert_float_equal(rrdtool_fetch(path, "idle", T0 + 15, NULL), 40, 1e-9);
  /* And the writer goes on after the refusal. */
  struct erg_store_node_cell next = {.t_end = T0 + 20, .measured_watts = 120, .idle_watts = 40};
  assert_int_equal(erg_store_node_update(s, "n1", &next, why, sizeof why), 0);
  assert_float_equal(rrdtool_fetch(path, "measured", T0 + 20, NULL), 120, 1e-9);
  erg_store_close(s);
}

/* Every file below dir must resolve to a path below root; counts them. */
static int walk_inside(const char *dir, const char *realroot) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    char *real = realpath(p, NULL);
    assert_non_null(real);
    assert_memory_equal(real, realroot, strlen(realroot));
    assert_true(strlen(e->d_name) < ERG_NAME_MAX + 4);
    free(real);
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_false(S_ISLNK(st.st_mode));
    n += S_ISDIR(st.st_mode) ? walk_inside(p, realroot) : 1;
  }
  closedir(d);
  return n;
}

static void test_hostile_names(void **state) {
  (void)state;
  struct erg_store *s = open_store("hostile");
  char why[256], path[1200], longname[301];
  memset(longname, 'x', 300);
  longname[0] = '/';
  longname[300] = '\0';
  const char *names[] = {"../../etc/passwd",
                         "<script>alert(1)</script>",
                         "a b",
                         "caf\xc3\xa9",
                         "x\x01\ty\nz\r",
                         "..",
                         "",
                         ".",
                         "/",
                         longname,
                         "a:b\\c",
                         "index",
                         "%2e%2e"};
  const size_t n = sizeof names / sizeof names[0];
  char rootdir[128];
  snprintf(rootdir, sizeof rootdir, "%s/hostile", root);
  char *realroot = realpath(rootdir, NULL);
  assert_non_null(realroot);
  for (size_t i = 0; i < n; i++) {
    /* Hostile node, kind and key at once. */
    if (erg_store_key_update(s, names[i], names[(i + 1) % n], names[i], T0 + 5, 10.0 + (double)i,
                             why, sizeof why) != 0)
      fail_msg("key %zu: %s", i, why);
    struct erg_store_node_cell c = {.t_end = T0 + 5, .measured_watts = 200.0 + (double)i};
    if (erg_store_node_update(s, names[i], &c, why, sizeof why) != 0)
      fail_msg("node %zu: %s", i, why);
    assert_int_equal(
        erg_store_key_path(s, names[i], names[(i + 1) % n], names[i], path, sizeof path), 0);
    assert_float_equal(rrdtool_fetch(path, "watts", T0 + 5, NULL), 10.0 + (double)i, 1e-9);
    assert_int_equal(erg_store_node_path(s, names[i], path, sizeof path), 0);
    assert_float_equal(rrdtool_fetch(path, "measured", T0 + 5, NULL), 200.0 + (double)i, 1e-9);
  }
  /* n node dirs, each with node.rrd, its name file, one kind dir, one key
   * and its index. */
  assert_int_equal(walk_inside(rootdir, realroot), (int)(4 * n));
  free(realroot);
  assert_int_equal(access("/tmp/etc/passwd.rrd", F_OK), -1);
  /* index.tsv: one line, two fields, original text with control bytes as '?'. */
  char cmd[512], line[1024];
  snprintf(cmd, sizeof cmd, "cat %s/nodes/*/*/index.tsv", rootdir);
  FILE *p = popen(cmd, "r");
  int lines = 0, script = 0, ctrl = 0, lng = 0;
  while (fgets(line, sizeof line, p)) {
    lines++;
    char *tab = strchr(line, '\t');
    assert_non_null(tab);
    assert_null(strchr(tab + 1, '\t'));
    script += !strcmp(tab + 1, "<script>alert(1)</script>\n");
    ctrl += !strcmp(tab + 1, "x??y?z?\n");
    lng += strlen(tab + 1) > 250;
  }
  pclose(p);
  assert_int_equal(lines, (int)n);
  assert_int_equal(script, 1);
  assert_int_equal(ctrl, 1);
  assert_int_equal(lng, 1);
  /* The same key again: no second index line. */
  assert_int_equal(
      erg_store_key_update(s, names[1], names[2], names[1], T0 + 10, 1, why, sizeof why), 0);
  erg_store_close(s);
  p = popen(cmd, "r");
  lines = 0;
  while (fgets(line, sizeof line, p))
    lines++;
  pclose(p);
  assert_int_equal(lines, (int)n);
}

static void test_bad_options(void **state) {
  (void)state;
  struct erg_store *s;
  char why[256], dir[128];
  struct erg_store_options o = {.root = NULL, .step_seconds = 5};
  assert_int_equal(erg_store_open(&s, &o, why, sizeof why), -1);
  snprintf(dir, sizeof dir, "%s/x", root);
  o.root = dir;
  o.rrdcached = "unix:/nonexistent/erg-test.sock";
  assert_int_equal(erg_store_open(&s, &o, why, sizeof why), -1);
  assert_non_null(strstr(why, "rrdcached"));
}

/* A reader in another process holding librrd's read lock (rrdtool fetch,
 * the page renderer's child, erg report) must delay an update, not lose
 * it: a skipped update makes RRD fill that cell from the next one. */
static void test_update_waits_for_reader_lock(void **state) {
  (void)state;
  struct erg_store *s = open_store("lock");
  char why[256], path[1200];
  assert_int_equal(erg_store_key_update(s, "n1", "job", "7", T0 + 5, 10, why, sizeof why), 0);
  assert_int_equal(erg_store_key_path(s, "n1", "job", "7", path, sizeof path), 0);
  int ready[2];
  assert_int_equal(pipe(ready), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int fd = open(path, O_RDONLY);
    struct flock l = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
    if (fd < 0 || fcntl(fd, F_SETLK, &l) != 0)
      _exit(1);
    (void)!write(ready[1], "x", 1);
    usleep(300000);
    _exit(0);
  }
  char c;
  assert_int_equal(read(ready[0], &c, 1), 1);
  uint64_t before = erg_store_lock_retries(s);
  int rc = erg_store_key_update(s, "n1", "job", "7", T0 + 10, 20, why, sizeof why);
  int st;
  waitpid(pid, &st, 0);
  close(ready[0]);
  close(ready[1]);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  if (rc != 0)
    fail_msg("update under a reader's lock: %s", why);
  assert_true(erg_store_lock_retries(s) > before);
  assert_true(fabs(rrdtool_fetch(path, "watts", T0 + 10, NULL) - 20) < 1e-9);
  erg_store_close(s);
}

/* The data source count of an archive is read from its header once, not
 * at every update (erg_store_header_reads), and read again when the file
 * at the path is another one: a "watts"-only archive replaced by one of
 * three sources (renamed over it) gets all three from the next update (the
 * cached 1 would give it one value, which librrd refuses). */
static void test_key_ds_cache(void **state) {
  (void)state;
  struct erg_store *s = open_store("dscache");
  char why[256], path[1200], other[1200];
  static const char *const ds[3] = {"watts", "sd", "var"};
  assert_int_equal(erg_store_key_update(s, "n1", "job", "7", T0 + 5, 1, why, sizeof why), 0);
  assert_int_equal(erg_store_header_reads(s), 0);
  for (int i = 2; i <= 6; i++)
    assert_int_equal(erg_store_key_update_ds(s, "n1", "job", "7", T0 + 5 * i, ds,
                                             (double[]){i, 1, 2}, 3, why, sizeof why),
                     0);
  assert_int_equal(erg_store_header_reads(s), 1);
  /* A new archive of three sources: created with them, no header read. */
  assert_int_equal(erg_store_key_update_ds(s, "n1", "job", "8", T0 + 5, ds, (double[]){3, 4, 5}, 3,
                                           why, sizeof why),
                   0);
  assert_int_equal(erg_store_header_reads(s), 1);
  assert_int_equal(erg_store_key_path(s, "n1", "job", "7", path, sizeof path), 0);
  assert_int_equal(erg_store_key_path(s, "n1", "job", "8", other, sizeof other), 0);
  assert_int_equal(rename(other, path), 0);
  for (int i = 7; i <= 8; i++)
    assert_int_equal(erg_store_key_update_ds(s, "n1", "job", "7", T0 + 5 * i, ds,
                                             (double[]){i, 0.5 * i, 9}, 3, why, sizeof why),
                     0);
  assert_int_equal(erg_store_header_reads(s), 2);
  assert_float_equal(rrdtool_fetch(path, "sd", T0 + 40, NULL), 4, 1e-9);
  assert_float_equal(rrdtool_fetch(path, "var", T0 + 35, NULL), 9, 1e-9);
  erg_store_close(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_node_roundtrip),
                                     cmocka_unit_test(test_layout),
                                     cmocka_unit_test(test_keep_days),
                                     cmocka_unit_test(test_key_roundtrip),
                                     cmocka_unit_test(test_key_ds),
                                     cmocka_unit_test(test_key_ds_cache),
                                     cmocka_unit_test(test_out_of_order),
                                     cmocka_unit_test(test_hostile_names),
                                     cmocka_unit_test(test_cluster_and_name),
                                     cmocka_unit_test(test_bad_options),
                                     cmocka_unit_test(test_update_waits_for_reader_lock)};
  return cmocka_run_group_tests(tests, setup, teardown);
}

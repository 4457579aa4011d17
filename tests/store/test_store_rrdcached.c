// SPDX-License-Identifier: GPL-3.0-or-later
/* Writes through a real rrdcached: with a long write interval the values
 * sit in the daemon, so the file on disk does not have them until the
 * daemon flushes; fetching through the daemon and erg_store_node_last see
 * them; an out-of-order update is refused by the daemon. Exits 77 when
 * rrdcached or rrdtool is missing. One daemon for both cases (the group's
 * setup): the second reads back what the first wrote. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../erg_test.h"
#include "erg_common.h"
#include "erg_store.h"
#include "store_test.h"

#define T0 1700000000LL

/* The group's folder, daemon and address (setup/teardown). */
static char dir[] = "/tmp/erg-cached-XXXXXX", addr[160], root[128], path[1200];
static pid_t daemon_pid = -1;

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static int start_daemon(void **state) {
  char sock[128];
  (void)state;
  erg_assert(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
  snprintf(sock, sizeof sock, "%s/d.sock", dir);
  snprintf(addr, sizeof addr, "unix:%s", sock);
  snprintf(root, sizeof root, "%s/store", dir);
  daemon_pid = erg_rrdcached_start(dir, sock);
  erg_assert(daemon_pid > 0, "rrdcached did not start");
  return 0;
}

static int stop_daemon(void **state) {
  char cmd[200];
  (void)state;
  erg_rrdcached_stop(daemon_pid);
  daemon_pid = -1;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  erg_assert(system(cmd) == 0, "%s", cmd);
  return 0;
}

/* 1. Through the option. */
static void test_option(void **state) {
  char why[256];
  (void)state;
  struct erg_store *s;
  struct erg_store_options o = {.root = root, .step_seconds = 5, .rrdcached = addr};
  erg_assert(erg_store_open(&s, &o, why, sizeof why) == 0, "open: %s", why);
  assert_true(erg_store_daemon(s) && !strcmp(erg_store_daemon(s), addr));
  for (int i = 1; i <= 4; i++) {
    struct erg_store_node_cell c = {.t_end = T0 + 5 * i,
                                    .measured_watts = 100,
                                    .idle_watts = 40,
                                    .dynamic_watts = 60,
                                    .modelled_watts = 98};
    erg_assert(erg_store_node_update(s, "n1", &c, why, sizeof why) == 0, "update: %s", why);
    assert_true(erg_store_key_update(s, "n1", "command", "<script>", T0 + 5 * i, 25.0 * i, why,
                                     sizeof why) == 0);
  }
  erg_store_node_path(s, "n1", path, sizeof path);
  /* Held by the daemon: the file itself is still at its creation time. */
  const char *last = rrdtool_info(path, "last_update");
  assert_true(last && !strcmp(last, "1700000000"));
  /* Out of order: refused by the daemon with a reason. */
  struct erg_store_node_cell old = {.t_end = T0 + 10, .measured_watts = 999};
  why[0] = '\0';
  assert_true(erg_store_node_update(s, "n1", &old, why, sizeof why) == -1);
  assert_true(strstr(why, "rrd update") != NULL);
  fprintf(stderr, "out-of-order reason: %s\n", why);
  /* The resume point comes from the daemon's view (it flushes). */
  assert_true(erg_store_node_last(s, "n1") == T0 + 20);
  assert_true(NEAR(rrdtool_fetch(path, "measured", T0 + 15, addr), 100));
  assert_true(NEAR(rrdtool_fetch(path, "idle", T0 + 15, addr), 40));
  assert_true(NEAR(rrdtool_fetch(path, "modelled", T0 + 20, addr), 98));
  char kpath[1200];
  erg_store_key_path(s, "n1", "command", "<script>", kpath, sizeof kpath);
  assert_true(NEAR(rrdtool_fetch(kpath, "watts", T0 + 15, addr), 75));
  erg_store_close(s);
}

/* 2. Through RRDCACHED_ADDRESS, and flushcached by the real tool. */
static void test_env(void **state) {
  char why[256];
  (void)state;
  struct erg_store *s;
  struct erg_store_options o = {.root = root, .step_seconds = 5};
  setenv("RRDCACHED_ADDRESS", addr, 1);
  int rc = erg_store_open(&s, &o, why, sizeof why);
  unsetenv("RRDCACHED_ADDRESS");
  erg_assert(rc == 0, "open (env): %s", why);
  assert_true(erg_store_daemon(s) != NULL);
  erg_store_node_path(s, "n1", path, sizeof path);
  struct erg_store_node_cell c = {.t_end = T0 + 25, .measured_watts = 130, .idle_watts = 40};
  assert_true(erg_store_node_update(s, "n1", &c, why, sizeof why) == 0);
  char cmd[1600];
  snprintf(cmd, sizeof cmd, "rrdtool flushcached --daemon '%s' '%s'", addr, path);
  assert_true(system(cmd) == 0);
  const char *last = rrdtool_info(path, "last_update");
  assert_true(last && !strcmp(last, "1700000025"));
  assert_true(NEAR(rrdtool_fetch(path, "measured", T0 + 25, NULL), 130));
  assert_true(NEAR(rrdtool_fetch(path, "measured", T0 + 10, NULL), 100));
  erg_store_close(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_option),
      cmocka_unit_test(test_env),
  };
  if (system("command -v rrdcached >/dev/null && command -v rrdtool >/dev/null") != 0)
    erg_skip_all("rrdcached or rrdtool not installed");
  return cmocka_run_group_tests(tests, start_daemon, stop_daemon);
}

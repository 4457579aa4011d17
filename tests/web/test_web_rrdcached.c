// SPDX-License-Identifier: GPL-3.0-or-later
/* Pages from a store written through a real rrdcached that keeps every
 * update in memory (-w 3600): the files on disk hold no data, so the
 * graphs, the live model metrics and the job table only have numbers if
 * the pages read through the daemon (rrdgraph --daemon, flushes, and
 * librrd's fetch over a connected daemon). Exits 77 when rrdcached is
 * missing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../erg_test.h"
#include "erg_common.h"
#include "erg_store.h"
#include "erg_web.h"
#include "web_fixture.h"

/* The group's folder, daemon and store (setup/teardown). */
static char dir[] = "/tmp/erg-webcached-XXXXXX", addr[160];
static pid_t daemon_pid = -1;
static struct erg_store *s;

static int file_has(const char *path, const char *needle) {
  char *buf = malloc(1 << 20);
  long n = buf ? erg_read_file(path, buf, 1 << 20) : -1;
  int ok = n > 0 && strstr(buf, needle);
  free(buf);
  return ok;
}

static int start_daemon(void **state) {
  char sock[128];
  (void)state;
  erg_assert(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
  snprintf(sock, sizeof sock, "%s/d.sock", dir);
  snprintf(addr, sizeof addr, "unix:%s", sock);
  daemon_pid = erg_rrdcached_start(dir, sock);
  erg_assert(daemon_pid > 0, "rrdcached did not start");
  return 0;
}

static int stop_daemon(void **state) {
  char cmd[200];
  (void)state;
  if (s)
    erg_store_close(s);
  s = NULL;
  erg_rrdcached_stop(daemon_pid);
  daemon_pid = -1;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", dir);
  return 0;
}

static void test_pages(void **state) {
  char root[128], www[128], why[512];
  (void)state;
  snprintf(root, sizeof root, "%s/store", dir);
  snprintf(www, sizeof www, "%s/www", dir);
  struct erg_store_options o = {.root = root, .step_seconds = FIX_STEP, .rrdcached = addr};
  int64_t now = (int64_t)time(NULL);
  const char *nodes[] = {fix_nodes[0], fix_nodes[1]};
  int rc = erg_store_open(&s, &o, why, sizeof why) || fixture_fill(s, now, why, sizeof why) ||
           /* in a render process of its own, through the daemon too */
           erg_web_render(s, www, nodes, 2, now, why, sizeof why);
  erg_assert(rc == 0, "%s", why);
  char path[300];
  snprintf(path, sizeof path, "%s/model-n1.html", www);
  /* measured − modelled is 2 W on the cells with a reading */
  erg_assert(file_has(path, "<th>bias (measured − modelled)</th><td class=\"n\">2 W"),
             "live model metrics read through the daemon");
  snprintf(path, sizeof path, "%s/index.html", www);
  erg_assert(file_has(path, "href=\"job-job-42.html\"") &&
                 !file_has(path, "<td class=\"n\">0.000</td>"),
             "job energy read through the daemon");
  snprintf(path, sizeof path, "%s/nodeg-job-hour-n1.png", www);
  struct stat st;
  erg_assert(stat(path, &st) == 0 && st.st_size > 1000, "job breakdown drawn");
}

int main(int argc, char **argv) {
  /* erg_web_render (isolate) runs this program as its render process. */
  if (argc > 1 && !strcmp(argv[1], ERG_WEB_RENDER_ARG))
    return erg_web_render_child_main(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pages),
  };
  if (system("command -v rrdcached >/dev/null") != 0)
    erg_skip_all("rrdcached not installed");
  return cmocka_run_group_tests(tests, start_daemon, stop_daemon);
}

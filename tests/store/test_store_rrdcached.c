/* Writes through a real rrdcached: with a long write interval the values
 * sit in the daemon, so the file on disk does not have them until the
 * daemon flushes; fetching through the daemon and erg_store_node_last see
 * them; an out-of-order update is refused by the daemon. Exits 77 when
 * rrdcached or rrdtool is missing. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "erg_common.h"
#include "erg_store.h"
#include "store_test.h"

#define T0 1700000000LL

static int failures;
#define CHECK(cond)                                                             \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond);          \
      failures++;                                                               \
    }                                                                           \
  } while (0)
#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static pid_t daemon_start(const char *dir, const char *sock) {
  char addr[300], base[300], pidf[300];
  snprintf(addr, sizeof addr, "unix:%s", sock);
  snprintf(base, sizeof base, "%s", dir);
  snprintf(pidf, sizeof pidf, "%s/rrdcached.pid", dir);
  pid_t pid = fork();
  if (pid == 0) {
    /* -w 3600: keep updates in memory, so only the daemon knows them. */
    execlp("rrdcached", "rrdcached", "-g", "-l", addr, "-b", base, "-B", "-w", "3600", "-f", "7200",
           "-p", pidf, (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 100; i++) {
    struct stat st;
    if (stat(sock, &st) == 0)
      return pid;
    usleep(50000);
  }
  kill(pid, SIGTERM);
  waitpid(pid, NULL, 0);
  return -1;
}

int main(void) {
  if (system("command -v rrdcached >/dev/null && command -v rrdtool >/dev/null") != 0) {
    fprintf(stderr, "SKIP: rrdcached or rrdtool not installed\n");
    return 77;
  }
  char dir[] = "/tmp/erg-cached-XXXXXX", sock[128], addr[160], root[128], why[256], path[1200];
  if (!mkdtemp(dir))
    return 1;
  snprintf(sock, sizeof sock, "%s/d.sock", dir);
  snprintf(addr, sizeof addr, "unix:%s", sock);
  snprintf(root, sizeof root, "%s/store", dir);
  pid_t pid = daemon_start(dir, sock);
  if (pid < 0) {
    fprintf(stderr, "rrdcached did not start\n");
    return 1;
  }

  /* 1. Through the option. */
  struct erg_store *s;
  struct erg_store_options o = {.root = root, .step_seconds = 5, .rrdcached = addr};
  if (erg_store_open(&s, &o, why, sizeof why) != 0) {
    fprintf(stderr, "open: %s\n", why);
    failures++;
    goto out;
  }
  CHECK(erg_store_daemon(s) && !strcmp(erg_store_daemon(s), addr));
  for (int i = 1; i <= 4; i++) {
    struct erg_store_node_cell c = {.t_end = T0 + 5 * i, .measured_watts = 100, .idle_watts = 40,
                                    .dynamic_watts = 60, .modelled_watts = 98};
    if (erg_store_node_update(s, "n1", &c, why, sizeof why) != 0) {
      fprintf(stderr, "update: %s\n", why);
      failures++;
    }
    CHECK(erg_store_key_update(s, "n1", "command", "<script>", T0 + 5 * i, 25.0 * i, why,
                               sizeof why) == 0);
  }
  erg_store_node_path(s, "n1", path, sizeof path);
  /* Held by the daemon: the file itself is still at its creation time. */
  const char *last = rrdtool_info(path, "last_update");
  CHECK(last && !strcmp(last, "1700000000"));
  /* Out of order: refused by the daemon with a reason. */
  struct erg_store_node_cell old = {.t_end = T0 + 10, .measured_watts = 999};
  why[0] = '\0';
  CHECK(erg_store_node_update(s, "n1", &old, why, sizeof why) == -1);
  CHECK(strstr(why, "rrd update") != NULL);
  fprintf(stderr, "out-of-order reason: %s\n", why);
  /* The resume point comes from the daemon's view (it flushes). */
  CHECK(erg_store_node_last(s, "n1") == T0 + 20);
  CHECK(NEAR(rrdtool_fetch(path, "measured", T0 + 15, addr), 100));
  CHECK(NEAR(rrdtool_fetch(path, "idle", T0 + 15, addr), 40));
  CHECK(NEAR(rrdtool_fetch(path, "modelled", T0 + 20, addr), 98));
  char kpath[1200];
  erg_store_key_path(s, "n1", "command", "<script>", kpath, sizeof kpath);
  CHECK(NEAR(rrdtool_fetch(kpath, "watts", T0 + 15, addr), 75));
  erg_store_close(s);

  /* 2. Through RRDCACHED_ADDRESS, and flushcached by the real tool. */
  setenv("RRDCACHED_ADDRESS", addr, 1);
  o.rrdcached = NULL;
  if (erg_store_open(&s, &o, why, sizeof why) != 0) {
    fprintf(stderr, "open (env): %s\n", why);
    failures++;
    goto out;
  }
  unsetenv("RRDCACHED_ADDRESS");
  CHECK(erg_store_daemon(s) != NULL);
  struct erg_store_node_cell c = {.t_end = T0 + 25, .measured_watts = 130, .idle_watts = 40};
  CHECK(erg_store_node_update(s, "n1", &c, why, sizeof why) == 0);
  char cmd[1600];
  snprintf(cmd, sizeof cmd, "rrdtool flushcached --daemon '%s' '%s'", addr, path);
  CHECK(system(cmd) == 0);
  last = rrdtool_info(path, "last_update");
  CHECK(last && !strcmp(last, "1700000025"));
  CHECK(NEAR(rrdtool_fetch(path, "measured", T0 + 25, NULL), 130));
  CHECK(NEAR(rrdtool_fetch(path, "measured", T0 + 10, NULL), 100));
  erg_store_close(s);

out:
  kill(pid, SIGTERM);
  waitpid(pid, NULL, 0);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    failures++;
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    fprintf(stderr, "rrdcached: all checks passed\n");
  return failures ? 1 : 0;
}

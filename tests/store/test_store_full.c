/* A full disk (issue 23): the store's error said "rrd create PATH: " and
 * nothing else, librrd giving no reason. On a small tmpfs mounted here the
 * reason is "No space left on device", with the free space and what the
 * archive takes; an update of an archive that exists still works, and a
 * creation works again once there is room. Needs root (mount); exit 77
 * otherwise. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "erg_common.h"
#include "erg_store.h"

static int failures;
#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                         \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

int main(void) {
  char dir[] = "/tmp/erg-store-full-XXXXXX", root[100], why[512];
  if (!mkdtemp(dir))
    return 1;
  /* 1 day of 5 s cells: node.rrd is 1.6 MB, one fits and a second does not. */
  if (mount("tmpfs", dir, "tmpfs", 0, "size=2m") != 0) {
    fprintf(stderr, "SKIP: cannot mount a tmpfs: %s\n", strerror(errno));
    rmdir(dir);
    return 77;
  }
  snprintf(root, sizeof root, "%s/store", dir);
  const double keep[ERG_STORE_RESOLUTIONS] = {1, 0, 0, 0};
  struct erg_store_options o = {.root = root, .step_seconds = 5, .keep_days = keep};
  struct erg_store *s = NULL;
  CHECK(erg_store_open(&s, &o, why, sizeof why) == 0, "open: %s", why);
  struct erg_store_node_cell c = {.t_end = 1800000000, .measured_watts = 100};
  CHECK(s && erg_store_node_update(s, "a", &c, why, sizeof why) == 0, "first node: %s", why);
  int rc = s ? erg_store_node_update(s, "b", &c, why, sizeof why) : 0;
  CHECK(rc == -1 && strstr(why, "rrd create ") &&
            strstr(why, "/nodes/b/node.rrd: No space left "
                        "on device (") &&
            strstr(why, "kB free there, the archive takes 1.6 MB)"),
        "full: rc %d, '%s'", rc, why);
  c.t_end += 5;
  CHECK(s && erg_store_node_update(s, "a", &c, why, sizeof why) == 0, "update of a: %s", why);
  CHECK(mount("tmpfs", dir, "tmpfs", MS_REMOUNT, "size=8m") == 0, "remount: %s", strerror(errno));
  CHECK(s && erg_store_node_update(s, "b", &c, why, sizeof why) == 0, "room again: %s", why);
  erg_store_close(s);
  umount2(dir, MNT_DETACH);
  rmdir(dir);
  if (failures)
    return 1;
  printf("ok: a full disk is named as such, with the space there and needed\n");
  return 0;
}

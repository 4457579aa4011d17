// SPDX-License-Identifier: GPL-3.0-or-later
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

#include "../erg_test.h"
#include "erg_common.h"
#include "erg_store.h"

static char dir[] = "/tmp/erg-store-full-XXXXXX";

static void full_disk_is_named(void **state) {
  (void)state;
  char root[100], why[512];
  snprintf(root, sizeof root, "%s/store", dir);
  const double keep[ERG_STORE_RESOLUTIONS] = {1, 0, 0, 0};
  struct erg_store_options o = {.root = root, .step_seconds = 5, .keep_days = keep};
  struct erg_store *s = NULL;
  erg_assert(erg_store_open(&s, &o, why, sizeof why) == 0, "open: %s", why);
  struct erg_store_node_cell c = {.t_end = 1800000000, .measured_watts = 100};
  int rc = erg_store_node_update(s, "a", &c, why, sizeof why);
  if (rc != 0)
    erg_store_close(s);
  erg_assert(rc == 0, "first node: %s", why);
  rc = erg_store_node_update(s, "b", &c, why, sizeof why);
  int named = rc == -1 && strstr(why, "rrd create ") &&
              strstr(why, "/nodes/b/node.rrd: No space left on device (") &&
              strstr(why, "kB free there, the archive takes 1.6 MB)");
  c.t_end += 5;
  int update_a = erg_store_node_update(s, "a", &c, why, sizeof why);
  char why_a[512];
  snprintf(why_a, sizeof why_a, "%s", why);
  int remount = mount("tmpfs", dir, "tmpfs", MS_REMOUNT, "size=8m");
  int again = remount == 0 ? erg_store_node_update(s, "b", &c, why, sizeof why) : -1;
  erg_store_close(s);
  erg_assert(named, "full: rc %d, '%s'", rc, why);
  erg_assert(update_a == 0, "update of a: %s", why_a);
  erg_assert(remount == 0, "remount: %s", strerror(errno));
  erg_assert(again == 0, "room again: %s", why);
}

int main(void) {
  if (!mkdtemp(dir))
    erg_skip_all("mkdtemp %s: %s", dir, strerror(errno));
  /* 1 day of 5 s cells: node.rrd is 1.6 MB, one fits and a second does not. */
  if (mount("tmpfs", dir, "tmpfs", 0, "size=2m") != 0) {
    int e = errno;
    rmdir(dir);
    erg_skip_all("cannot mount a tmpfs: %s", strerror(e));
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(full_disk_is_named)};
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  umount2(dir, MNT_DETACH);
  rmdir(dir);
  return rc;
}

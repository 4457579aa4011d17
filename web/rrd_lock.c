// SPDX-License-Identifier: GPL-3.0-or-later
/* librrd's readers (rrd_info_r, rrd_fetch_r, rrd_graph_v) take a read lock
 * on the archive without waiting, and fail with "could not lock RRD" while
 * ergd's writer holds it for the few ms of an update: a reader retries, as
 * the writer does (store/store.c). */
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <rrd.h>

#include "web_int.h"

#define WEB_RRD_LOCK_TRIES 400        /* 2 s in all */
#define WEB_RRD_LOCK_WAIT_NS 5000000L /* 5 ms */

bool web_rrd_retry(int *tries) {
  const char *e = rrd_get_error();
  if (!e || !strstr(e, "could not lock") || ++*tries >= WEB_RRD_LOCK_TRIES)
    return false;
  nanosleep(&(struct timespec){0, WEB_RRD_LOCK_WAIT_NS}, NULL);
  rrd_clear_error();
  return true;
}

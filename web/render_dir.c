// SPDX-License-Identifier: GPL-3.0-or-later
/* erg graph's library side: the pages ergd draws, drawn once from a data
 * directory (cron, or a host that only serves the files). */
#include <stdio.h>
#include <stdlib.h>

#include "erg_store.h"
#include "erg_web.h"
#include "report_int.h"

int erg_web_render_dir(const char *data_dir, const char *rrdcached, const char *www_dir,
                       int64_t now, const struct erg_web_options *opt, char *why, size_t whylen) {
  struct report_node *nodes = NULL;
  size_t n = 0;
  struct erg_store *st = NULL;
  struct erg_store_options so = {.root = data_dir, .rrdcached = rrdcached};
  int rc = report_nodes_list(data_dir, &nodes, &n, why, whylen) != 0 ||
           erg_store_open(&st, &so, why, whylen) != 0;
  const char **names = rc ? NULL : calloc(n ? n : 1, sizeof *names);
  /* The pages find a node's files by sanitizing its name: the original
   * name (from the name file) or the directory name both lead back. */
  for (size_t i = 0; names && i < n; i++)
    names[i] = nodes[i].name;
  if (!rc && !names)
    snprintf(why, whylen, "out of memory");
  rc = rc || !names || erg_web_render_opts(st, www_dir, names, n, now, opt, why, whylen);
  free(names);
  free(nodes);
  if (st)
    erg_store_close(st);
  return rc ? -1 : 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Demo server for the browser test: fills a store under DIR with the
 * fixture, renders the pages, serves them on 127.0.0.1 (a free port) and
 * prints "PORT <n>" on stdout (graphs as PNG or SVG); runs until stdin is closed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "erg_common.h"
#include "erg_store.h"
#include "erg_web.h"
#include "web_fixture.h"

static int metrics(void *user, const char *url, char **body, size_t *len, const char **ctype) {
  (void)user;
  (void)url;
  *body = strdup("erg_up 1\n");
  *len = strlen(*body);
  *ctype = "text/plain; version=0.0.4";
  return 200;
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: web_demo DIR [png|svg]\n");
    return 2;
  }
  char root[1024], www[1024], why[512];
  snprintf(root, sizeof root, "%s/store", argv[1]);
  snprintf(www, sizeof www, "%s/www", argv[1]);
  struct erg_store *s;
  struct erg_store_options o = {.root = root, .step_seconds = FIX_STEP};
  int64_t now = (int64_t)time(NULL);
  const char *nodes[] = {fix_nodes[0], fix_nodes[1], "ghost"};
  struct erg_web_server *w;
  struct erg_web_options wo = {.image_format = argc == 3 ? argv[2] : "png"};
  if (erg_store_open(&s, &o, why, sizeof why) || fixture_fill(s, now, why, sizeof why) ||
      erg_web_render_opts(s, www, nodes, 3, now, &wo, why, sizeof why) ||
      erg_web_server_start(&w, "127.0.0.1:0", www, metrics, NULL, why, sizeof why)) {
    fprintf(stderr, "web_demo: %s\n", why);
    return 1;
  }
  printf("PORT %u\n", erg_web_server_port(w));
  fflush(stdout);
  char c;
  while (read(0, &c, 1) > 0)
    ;
  erg_web_server_stop(w);
  erg_store_close(s);
  return 0;
}

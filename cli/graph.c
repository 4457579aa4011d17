// SPDX-License-Identifier: GPL-3.0-or-later
/* erg graph: the pages ergd draws, drawn once from the archives (cron, or
 * a host that only serves the files), with ergd's settings from --config
 * as the defaults. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli_int.h"
#include "erg_cli.h"
#include "erg_web.h"

struct graph_opts {
  const char *data, *www, *rrdcached;
  struct erg_web_options wo;
  struct cli_ergd_conf file;
};

static int graph_usage(const char *msg) {
  if (msg)
    fprintf(stderr, "erg graph: %s\n", msg);
  fprintf(stderr,
          "usage: erg graph (--data-dir DIR | --config ERGD_CONF) [--www-dir DIR]\n"
          "                 [--model-dir DIR] [--format png|svg]\n"
          "       defaults: ergd's settings with --config, else DIR/www, DIR/models, png\n");
  return 1;
}

/* ergd's settings as defaults; ergd's rules: www_dir defaults to
 * DATA/www, the config's rrdcached wins over RRDCACHED_ADDRESS. */
static int graph_config(void *ctx, const char *path) {
  struct graph_opts *g = ctx;
  struct cli_ergd_conf *f = &g->file;
  if (cli_ergd_conf_load(path, f, "graph") != 0)
    return 1;
  g->data = f->data_dir[0] ? f->data_dir : "/var/lib/erg";
  g->www = f->www_dir[0] ? f->www_dir : NULL;
  g->wo.model_dir = f->model_dir[0] ? f->model_dir : NULL;
  if (f->page_format[0])
    g->wo.image_format = f->page_format;
  g->rrdcached = f->rrdcached[0] ? f->rrdcached : NULL;
  return 0;
}

static int graph_opt(void *ctx, int c, char *arg, const char *text) {
  struct graph_opts *g = ctx;
  if (c == 'd' || c == 'w')
    *(c == 'd' ? &g->data : &g->www) = arg;
  else if (c == 'm')
    g->wo.model_dir = arg;
  else if (c == 'f' && (!strcmp(arg, "png") || !strcmp(arg, "svg")))
    g->wo.image_format = arg;
  else if (c == 'f')
    return graph_usage("--format is png or svg");
  else if (c != 'C') {
    fprintf(stderr, "erg graph: %s '%s'\n", c == ':' ? "missing value for" : "unknown option",
            text ? text : "?");
    return graph_usage(NULL);
  }
  return 0;
}

static int graph_parse(int argc, char **argv, struct graph_opts *g) {
  static const struct option longs[] = {
      {"data-dir", required_argument, 0, 'd'},  {"www-dir", required_argument, 0, 'w'},
      {"model-dir", required_argument, 0, 'm'}, {"format", required_argument, 0, 'f'},
      {"config", required_argument, 0, 'C'},    {0, 0, 0, 0}};
  g->wo.image_format = "png";
  int operand, rc = cli_parse_config_first(argc, argv, longs, graph_config, graph_opt, g, &operand);
  if (rc)
    return rc;
  if (!g->data || operand < argc)
    return graph_usage(g->data ? "unexpected argument" : "--data-dir (or --config) is required");
  return 0;
}

int erg_graph_cli(int argc, char **argv) {
  struct graph_opts g = {0};
  int rc = graph_parse(argc, argv, &g);
  if (rc)
    return rc;
  char wwwbuf[1100], why[1024];
  if (!g.www) {
    snprintf(wwwbuf, sizeof wwwbuf, "%s/www", g.data);
    g.www = wwwbuf;
  }
  if (erg_web_render_dir(g.data, g.rrdcached, g.www, (int64_t)time(NULL), &g.wo, why, sizeof why) !=
      0) {
    fprintf(stderr, "erg graph: %s\n", why);
    return 2;
  }
  return 0;
}

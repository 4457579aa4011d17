/* erg graph: the pages ergd draws, drawn once from the archives (cron, or a
 * host that only serves the files). Shares ergd's config file with erg
 * report (cli_ergd_conf_load), so both find what ergd writes. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "erg_common.h"
#include "erg_store.h"
#include "erg_web.h"
#include "report_int.h"

/* ---- ergd's config file, for erg report and erg graph ---- */

static int conf_cb(void *user, const char *section, const char *key, const char *value,
                   char *why, size_t whylen) {
  struct cli_ergd_conf *c = user;
  static const struct {
    const char *key;
    size_t off, len;
  } keys[] = {
      {"data_dir", offsetof(struct cli_ergd_conf, data_dir), sizeof c->data_dir},
      {"www_dir", offsetof(struct cli_ergd_conf, www_dir), sizeof c->www_dir},
      {"model_dir", offsetof(struct cli_ergd_conf, model_dir), sizeof c->model_dir},
      {"page_format", offsetof(struct cli_ergd_conf, page_format), sizeof c->page_format},
      {"rrdcached", offsetof(struct cli_ergd_conf, rrdcached), sizeof c->rrdcached},
  };
  if (!strcmp(section, "report"))
    return erg_report_config_key(&c->report, key, value, why, whylen);
  if (strcmp(section, "collector"))
    return 0;
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
    if (!strcmp(key, keys[i].key)) {
      if (strlen(value) >= keys[i].len) {
        snprintf(why, whylen, "key '%s': value too long", key);
        return -1;
      }
      erg_strlcpy((char *)c + keys[i].off, value, keys[i].len);
      break;
    }
  if (!strcmp(key, "page_format") && strcmp(value, "png") && strcmp(value, "svg")) {
    snprintf(why, whylen, "key 'page_format': '%s' is not one of png, svg", value);
    return -1;
  }
  return 0;
}

int cli_ergd_conf_load(const char *path, struct cli_ergd_conf *c, const char *who) {
  struct erg_config_error err;
  memset(c, 0, sizeof *c);
  erg_report_config_defaults(&c->report);
  if (erg_config_parse(path, conf_cb, c, &err) != 0) {
    fprintf(stderr, "erg %s: %s\n", who, err.msg);
    return -1;
  }
  return 0;
}

/* ---- erg graph ---- */

static int graph_usage(const char *msg) {
  if (msg)
    fprintf(stderr, "erg graph: %s\n", msg);
  fprintf(stderr, "usage: erg graph (--data-dir DIR | --config ERGD_CONF) [--www-dir DIR]\n"
                  "                 [--model-dir DIR] [--format png|svg]\n"
                  "       defaults: ergd's settings with --config, else DIR/www, DIR/models, png\n");
  return 1;
}

struct graph_opts {
  const char *data, *www;
  struct erg_web_options wo;
  struct erg_store_options so;
  struct cli_ergd_conf file;
};

/* ergd's settings as defaults; ergd's rules: www_dir defaults to
 * DATA/www, the config's rrdcached wins over RRDCACHED_ADDRESS. */
static int graph_load_config(struct graph_opts *g, const char *path) {
  struct cli_ergd_conf *f = &g->file;
  if (cli_ergd_conf_load(path, f, "graph") != 0)
    return -1;
  g->data = f->data_dir[0] ? f->data_dir : "/var/lib/erg";
  g->www = f->www_dir[0] ? f->www_dir : NULL;
  g->wo.model_dir = f->model_dir[0] ? f->model_dir : NULL;
  if (f->page_format[0])
    g->wo.image_format = f->page_format;
  g->so.rrdcached = f->rrdcached[0] ? f->rrdcached : NULL;
  return 0;
}

static int graph_parse(int argc, char **argv, struct graph_opts *g) {
  static const struct option longs[] = {{"data-dir", required_argument, 0, 'd'},
                                        {"www-dir", required_argument, 0, 'w'},
                                        {"model-dir", required_argument, 0, 'm'},
                                        {"format", required_argument, 0, 'f'},
                                        {"config", required_argument, 0, 'C'},
                                        {0, 0, 0, 0}};
  g->wo.image_format = "png";
  opterr = 0;
  /* --config first, wherever it is: the flags override the file. */
  optind = 0;
  for (int c; (c = getopt_long(argc, argv, ":", longs, NULL)) != -1;)
    if (c == 'C' && graph_load_config(g, optarg) != 0)
      return 1;
  optind = 0;
  for (int c; (c = getopt_long(argc, argv, ":", longs, NULL)) != -1;) {
    if (c == 'd' || c == 'w')
      *(c == 'd' ? &g->data : &g->www) = optarg;
    else if (c == 'm')
      g->wo.model_dir = optarg;
    else if (c == 'f' && (!strcmp(optarg, "png") || !strcmp(optarg, "svg")))
      g->wo.image_format = optarg;
    else if (c != 'C')
      return graph_usage(c == 'f' ? "--format is png or svg" : "unknown option or missing value");
  }
  if (!g->data || optind < argc)
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
  struct report_node *nodes = NULL;
  size_t n = 0;
  struct erg_store *st = NULL;
  g.so.root = g.data;
  rc = report_nodes_list(g.data, &nodes, &n, why, sizeof why) != 0 ||
       erg_store_open(&st, &g.so, why, sizeof why) != 0;
  const char **names = rc ? NULL : calloc(n ? n : 1, sizeof *names);
  /* The pages find a node's files by sanitizing its name: the original
   * name (from the name file) or the directory name both lead back. */
  for (size_t i = 0; names && i < n; i++)
    names[i] = nodes[i].name;
  if (!rc && !names)
    snprintf(why, sizeof why, "out of memory");
  rc = rc || !names ||
       erg_web_render_opts(st, g.www, names, n, (int64_t)time(NULL), &g.wo, why, sizeof why);
  if (rc)
    fprintf(stderr, "erg graph: %s\n", why);
  free(names);
  free(nodes);
  if (st)
    erg_store_close(st);
  return rc ? 2 : 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Static pages: the overview, per node one page per time range (power and
 * one stacked breakdown per profile key kind), per job and per node model
 * quality (pages_job.c, pages_model.c), all through html.c's helpers. HTML
 * is written atomically; data text reaches it only through
 * erg_html_escape, and every link and image is a relative name of a file
 * written in the same or an earlier render (graphs still fresh are not
 * drawn again, see web_graph_fresh). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "web_int.h"

/* ---- one node ---- */

struct node_view {
  const char *node, *safe, *rrd;
  char group[128];       /* shared meter of the node's model file, "" when none */
  int have;              /* node.rrd exists and its graphs were drawn */
  char gpu_rrd[1100];    /* gpu/node.rrd, the GPU part of its power; "" none */
  int kinds[WEB_NKINDS]; /* kind has keys: its breakdown graphs exist */
};

static void node_nav(FILE *f, const struct node_view *v, size_t cur) {
  fprintf(f, "<p>range:");
  for (size_t r = 0; r < WEB_NRANGES; r++)
    if (r == cur)
      fprintf(f, " <b>%s</b>", web_ranges[r].name);
    else
      fprintf(f, " <a href=\"node-%s-%s.html\">%s</a>", web_ranges[r].name, v->safe,
              web_ranges[r].name);
  fprintf(f, "</p>\n");
}

/* Archive mtimes lag the data by rrdcached's write delay: keys written
 * up to this long before a range still count for it. */
#define KEY_MTIME_SLACK_SECONDS 3600

/* Under the user breakdown, the users of the range as text: the legend is
 * an image, and user keys are uids whose names (names.tsv) people search
 * for. "name (uid)", the uid alone when the node gave no name. */
static void node_users(FILE *f, const struct web_ctx *c, const struct node_view *v, size_t r) {
  char dir[1100];
  struct web_key *keys = calloc(WEB_MAX_KEYS, sizeof *keys);
  size_t n = 0;
  if (keys && erg_store_kind_dir(c->st, v->node, "user", dir, sizeof dir) == 0)
    n = web_read_keys(dir, c->now - web_ranges[r].seconds - KEY_MTIME_SLACK_SECONDS, keys,
                      WEB_MAX_KEYS);
  for (size_t i = 0; i < n; i++) {
    fputs(i ? ", " : "<p class=\"users\">users: ", f);
    web_html_text(f, keys[i].label);
    if (strcmp(keys[i].label, keys[i].orig))
      fputs(" (", f), web_html_text(f, keys[i].orig), fputs(")", f);
  }
  fputs(n ? "</p>\n" : "", f);
  free(keys);
}

/* The GPU part of the node's measured energy over the range (docs/gpu.md:
 * the model's gpu_watts term, as attributed), from its gpu/node archive;
 * nothing on a node without one or without GPU energy in the range. */
static void node_gpu_share(FILE *f, const struct web_ctx *c, const struct node_view *v, size_t r) {
  double mean, gpu_j, measured_j;
  if (!v->gpu_rrd[0])
    return;
  const char *daemon = erg_store_daemon(c->st);
  web_key_stats(daemon, v->gpu_rrd, "watts", c->now, web_ranges[r].seconds, 0, &mean, &gpu_j);
  if (!(gpu_j > 0))
    return;
  web_key_stats(daemon, v->rrd, "measured", c->now, web_ranges[r].seconds, 0, &mean, &measured_j);
  char gt[32], mt[32];
  erg_energy_text(gpu_j, gt, sizeof gt);
  erg_energy_text(measured_j, mt, sizeof mt);
  fprintf(f, "<p class=\"gpu\">GPUs: %s", gt);
  if (measured_j > 0)
    fprintf(f, " of the measured %s (%.1f %%)", mt, 100 * gpu_j / measured_j);
  fprintf(f,
          ", last %s: the GPU boards' part of the node's energy (the model's gpu_watts "
          "term, as attributed).</p>\n",
          web_ranges[r].name);
}

static int node_page(const struct web_ctx *c, const struct node_view *v, size_t r,
                     const struct web_job *jobs, size_t njobs, size_t idx, char *why,
                     size_t whylen) {
  char *buf = NULL, name[ERG_NAME_MAX + 32];
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return -1;
  const char *rn = web_ranges[r].name;
  char *e = erg_html_escape(v->node);
  const char *en = e ? e : "?";
  fprintf(f, web_html_head, "erg: node");
  fprintf(f, "<p><a href=\"index.html\">overview</a>");
  if (v->have)
    fprintf(f, " · <a href=\"model-%s.html\">model quality</a>", v->safe);
  fprintf(f, "</p>\n<h1>node %s</h1>\n", en);
  web_group_line(f, v->group);
  if (!v->have)
    fprintf(f, "<p>No data for this node yet.</p>\n");
  else {
    node_nav(f, v, r);
    fprintf(f,
            "<h2>power, last %s</h2>\n<img src=\"nodeg-power-%s-%s.%s\" "
            "alt=\"%s: measured and modelled power, last %s\">\n",
            rn, rn, v->safe, c->ext, en, rn);
    node_gpu_share(f, c, v, r);
    for (size_t k = 0; k < WEB_NKINDS; k++) {
      if (!v->kinds[k])
        continue;
      fprintf(f,
              "<h2>by %s</h2>\n<img src=\"nodeg-%s-%s-%s.%s\" alt=\"%s: power by %s, last %s\">\n",
              web_kinds[k], web_kinds[k], rn, v->safe, c->ext, en, web_kinds[k], rn);
      if (!strcmp(web_kinds[k], "user"))
        node_users(f, c, v, r);
    }
  }
  int listed = 0;
  for (size_t j = 0; j < njobs; j++) {
    if (!jobs[j].on_node || !jobs[j].on_node[idx])
      continue;
    fprintf(f, listed++ ? ", " : "<h2>recent jobs on this node</h2>\n<p>");
    fprintf(f, "<a href=\"job-%s.html\">", jobs[j].key.safe);
    web_html_text(f, jobs[j].key.orig);
    fprintf(f, "</a>");
  }
  fprintf(f,
          "%s<p>Power graph: idle (grey) and dynamic (orange) power stacked, measured "
          "(black line) and modelled (blue dashed line). Breakdowns: [idle] + "
          "[unattributed] (grey: what no key carries), then the power attributed to each "
          "key, stacked, [none], [other] and [system] among them; they add up to the "
          "measured line (the names: docs/report.md, \"Energy outside keys\").</p>\n",
          listed ? "</p>\n" : "");
  web_html_footer(f, c->now);
  free(e);
  snprintf(name, sizeof name, "node-%s-%s.html", rn, v->safe);
  return web_page_write(c->www, name, f, &buf, &len, why, whylen);
}

/* One kind's breakdown graphs for every range; sets v->kinds[k] when the
 * kind has keys with data in the year (the longest range). */
static int node_kind_graphs(const struct web_ctx *c, struct node_view *v, const char *erd, size_t k,
                            struct web_key *keys, char *why, size_t whylen) {
  char dir[1100], title[400], file[1200];
  if (erg_store_kind_dir(c->st, v->node, web_kinds[k], dir, sizeof dir) != 0)
    return 0;
  int64_t slack = KEY_MTIME_SLACK_SECONDS;
  v->kinds[k] =
      web_read_keys(dir, c->now - web_ranges[WEB_NRANGES - 1].seconds - slack, keys, 1) > 0;
  for (size_t r = 0; v->kinds[k] && r < WEB_NRANGES; r++) {
    snprintf(file, sizeof file, "%s/nodeg-%s-%s-%s.%s", c->www, web_kinds[k], web_ranges[r].name,
             v->safe, c->ext);
    if (web_graph_fresh(file, c->now, web_ranges[r].seconds, 0))
      continue;
    size_t nkeys = web_read_keys(dir, c->now - web_ranges[r].seconds - slack, keys, WEB_MAX_KEYS);
    snprintf(title, sizeof title, "%s: power by %s, last %s", v->node, web_kinds[k],
             web_ranges[r].name);
    if (web_graph_breakdown(c, erd, keys, nkeys, file, title, web_ranges[r].seconds, why, whylen) !=
        0)
      return -1;
  }
  return 0;
}

static int node_graphs(const struct web_ctx *c, struct node_view *v, char *why, size_t whylen) {
  char erd[1200], title[400], file[1200];
  if (web_graph_path(v->rrd, erd, sizeof erd) != 0) {
    snprintf(why, whylen, "store path %.300s cannot be drawn (backslash)", v->rrd);
    return -1;
  }
  struct web_key *keys = calloc(WEB_MAX_KEYS, sizeof *keys);
  if (!keys) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  snprintf(file, sizeof file, "%s/nodeg-power-small-%s.%s", c->www, v->safe, c->ext);
  int rc = web_graph_fresh(file, c->now, 3600, 0)
               ? 0
               : web_graph_power(c, erd, file, v->node, 3600, 1, why, whylen);
  for (size_t r = 0; r < WEB_NRANGES && rc == 0; r++) {
    snprintf(file, sizeof file, "%s/nodeg-power-%s-%s.%s", c->www, web_ranges[r].name, v->safe,
             c->ext);
    if (web_graph_fresh(file, c->now, web_ranges[r].seconds, 0))
      continue;
    snprintf(title, sizeof title, "%s: power, last %s", v->node, web_ranges[r].name);
    rc = web_graph_power(c, erd, file, title, web_ranges[r].seconds, 0, why, whylen);
  }
  for (size_t k = 0; k < WEB_NKINDS && rc == 0; k++)
    rc = node_kind_graphs(c, v, erd, k, keys, why, whylen);
  free(keys);
  return rc;
}

/* ---- overview ---- */

struct node_day {
  size_t idx;
  double mean_watts, energy_j;
};

static int node_day_cmp(const void *a, const void *b) {
  double x = ((const struct node_day *)a)->energy_j, y = ((const struct node_day *)b)->energy_j;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Nodes by measured energy over the last day, largest first, with the
 * cluster's total: where the power goes, before any graph is opened. */
static void pages_nodes_table(FILE *f, const struct web_ctx *c, const char *const *nodes,
                              const int *have, size_t n) {
  struct node_day *d = malloc((n ? n : 1) * sizeof *d);
  size_t m = 0;
  double total = 0;
  char rrd[1100];
  for (size_t i = 0; d && i < n; i++) {
    if (!have[i] || erg_store_node_path(c->st, nodes[i], rrd, sizeof rrd) != 0)
      continue;
    d[m].idx = i;
    web_key_stats(erg_store_daemon(c->st), rrd, "measured", c->now, 86400, 0, &d[m].mean_watts,
                  &d[m].energy_j);
    total += d[m++].energy_j;
  }
  if (!m) {
    free(d);
    return;
  }
  qsort(d, m, sizeof *d, node_day_cmp);
  const char *unit; /* one unit for the column, the largest row's */
  double per;
  web_energy_unit(d[0].energy_j, &unit, &per);
  fprintf(f,
          "<h2>top nodes, last day</h2>\n<table>\n<tr><th>node</th><th>energy (%s)</th>"
          "<th>mean (W)</th><th>share</th></tr>\n",
          unit);
  char text[32];
  for (size_t i = 0; i < m && i < WEB_TOP_JOBS; i++) {
    char safe[ERG_NAME_MAX];
    erg_name_sanitize(nodes[d[i].idx], strlen(nodes[d[i].idx]), safe);
    fprintf(f, "<tr><td><a href=\"node-day-%s.html\">", safe);
    web_html_text(f, nodes[d[i].idx]);
    fprintf(f,
            "</a></td><td class=\"n\">%.*f</td><td class=\"n\">%.1f</td>"
            "<td class=\"n\">%.1f %%</td></tr>\n",
            per == 1 ? 0 : 3, d[i].energy_j / per, d[i].mean_watts,
            total > 0 ? 100 * d[i].energy_j / total : 0);
  }
  erg_energy_text(total, text, sizeof text);
  fprintf(f, "</table>\n<p>Measured energy over the last day: %s on %zu node(s).</p>\n", text, m);
  free(d);
}

static int pages_index(const struct web_ctx *c, const char *const *nodes, const int *have, size_t n,
                       const struct web_job *jobs, size_t njobs, char *why, size_t whylen) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return -1;
  fprintf(f, web_html_head, "erg: cluster power");
  fprintf(f, "<h1>erg: energy per node and process</h1>\n<h2>cluster</h2>\n");
  for (size_t r = 0; r < WEB_NRANGES; r++)
    fprintf(f, "<img src=\"total-%s.%s\" alt=\"cluster power, last %s\">\n", web_ranges[r].name,
            c->ext, web_ranges[r].name);
  pages_nodes_table(f, c, nodes, have, n);
  if (njobs) {
    fprintf(f, "<h2>top jobs, last day</h2>\n");
    web_jobs_table(f, jobs, njobs, WEB_TOP_JOBS);
  }
  fprintf(f, "<h2>nodes</h2>\n");
  if (n == 0)
    fprintf(f, "<p>No data yet.</p>\n");
  for (size_t i = 0; i < n; i++) {
    char safe[ERG_NAME_MAX];
    erg_name_sanitize(nodes[i], strlen(nodes[i]), safe);
    char *e = erg_html_escape(nodes[i]);
    fprintf(f, "<div class=\"node\"><h3><a href=\"node-hour-%s.html\">%s</a></h3>\n", safe,
            e ? e : "?");
    if (have[i])
      fprintf(f,
              "<a href=\"node-hour-%s.html\"><img src=\"nodeg-power-small-%s.%s\" "
              "alt=\"%s power, last hour\"></a>\n",
              safe, safe, c->ext, e ? e : "?");
    fprintf(f, "</div>\n");
    free(e);
  }
  web_html_footer(f, c->now);
  return web_page_write(c->www, "index.html", f, &buf, &len, why, whylen);
}

/* ---- render ---- */

/* Graphs, range pages and model page of one node; 0 or -1 with why. */
static int render_node(const struct web_ctx *c, const char *node, size_t idx,
                       const struct web_job *jobs, size_t njobs, int *have, char *why,
                       size_t whylen) {
  char safe[ERG_NAME_MAX], rrd[1100];
  struct node_view v = {.node = node, .safe = safe, .rrd = rrd};
  int rc = 0;
  erg_name_sanitize(node, strlen(node), safe);
  web_model_group(c, safe, v.group, sizeof v.group);
  int exists = erg_store_node_path(c->st, node, rrd, sizeof rrd) == 0 && web_file_exists(rrd);
  if (erg_store_key_path(c->st, node, "gpu", "node", v.gpu_rrd, sizeof v.gpu_rrd) != 0 ||
      !web_file_exists(v.gpu_rrd))
    v.gpu_rrd[0] = '\0';
  if (exists) {
    rc = node_graphs(c, &v, why, whylen);
    v.have = rc == 0;
    if (rc == 0)
      rc = web_model_page(c, node, safe, rrd, v.group, why, whylen);
  }
  /* The first reason is kept. */
  char err[512];
  for (size_t r = 0; r < (v.have ? WEB_NRANGES : 1); r++)
    if (node_page(c, &v, r, jobs, njobs, idx, err, sizeof err) != 0 && rc == 0) {
      snprintf(why, whylen, "%s", err);
      rc = -1;
    }
  *have = v.have;
  return rc;
}

int web_render_all(const struct erg_store *store, const char *www_dir, const char *const *nodes,
                   size_t nnodes, int64_t now, const struct erg_web_options *opt, char *why,
                   size_t whylen) {
  char models[700];
  int svg = opt && opt->image_format && !strcmp(opt->image_format, "svg");
  if (opt && opt->model_dir && *opt->model_dir)
    erg_strlcpy(models, opt->model_dir, sizeof models);
  else
    snprintf(models, sizeof models, "%s/models", erg_store_root(store));
  struct web_ctx c = {.st = store,
                      .www = www_dir,
                      .model_dir = models,
                      .now = now,
                      .ext = svg ? "svg" : "png",
                      .fmt = svg ? "SVG" : "PNG"};
  if (erg_mkdir_p(www_dir, 0755) != 0) {
    snprintf(why, whylen, "cannot create %s: %s", www_dir, strerror(errno));
    return -1;
  }
  int *have = calloc(nnodes ? nnodes : 1, sizeof *have);
  if (!have) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  struct web_job *jobs = NULL;
  size_t njobs = web_jobs_collect(&c, nodes, nnodes, &jobs);
  /* One failing node does not stop the others; the first reason is kept. */
  int rc = 0;
  char err[512];
  for (size_t i = 0; i < nnodes; i++)
    if (render_node(&c, nodes[i], i, jobs, njobs, &have[i], err, sizeof err) != 0 && rc == 0) {
      snprintf(why, whylen, "%s", err);
      rc = -1;
    }
  for (size_t r = 0; r < WEB_NRANGES; r++)
    if (web_graph_total(&c, nodes, nnodes, r, err, sizeof err) != 0 && rc == 0) {
      snprintf(why, whylen, "%s", err);
      rc = -1;
    }
  if (web_job_pages(&c, jobs, njobs, nodes, nnodes, err, sizeof err) != 0 && rc == 0) {
    snprintf(why, whylen, "%s", err);
    rc = -1;
  }
  if (pages_index(&c, nodes, have, nnodes, jobs, njobs, err, sizeof err) != 0 && rc == 0) {
    snprintf(why, whylen, "%s", err);
    rc = -1;
  }
  web_jobs_free(jobs, njobs);
  free(have);
  return rc;
}

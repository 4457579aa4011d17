// SPDX-License-Identifier: GPL-3.0-or-later
/* Model quality page of one node: predicted (modelled) vs measured power
 * and the residual from node.rrd, error metrics over the last day of
 * cells with a real PDU reading, and the held-out metrics of the node's
 * model file (<model_dir>/<safe>.json, docs/model.md) when there is one;
 * and the model file's shared meter ("group"), also on the node pages. */
#include <jansson.h>
#include <math.h>
#include <rrd.h>
#include <rrd_client.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_fit.h"
#include "web_int.h"

#define MODEL_RANGES 3 /* hour, day, week */

struct live_metrics {
  double mae_watts, rmse_watts, bias_watts, mape_percent;
  size_t cells;
};

static long model_ds(char **names, unsigned long nds, const char *ds) {
  for (unsigned long i = 0; i < nds; i++)
    if (!strcmp(names[i], ds))
      return (long)i;
  return -1;
}

/* Over [now-seconds, now]: cells where measured and modelled are known and
 * measured is a reading (estimated < 0.5), as rrd_fetch's resolution. */
static void model_live(const struct web_ctx *c, const char *rrd, long seconds,
                       struct live_metrics *lm) {
  time_t start = (time_t)(c->now - seconds), end = (time_t)c->now;
  unsigned long step = 0, nds = 0;
  char **names = NULL;
  rrd_value_t *d = NULL;
  memset(lm, 0, sizeof *lm);
  lm->mape_percent = NAN;
  if (erg_store_daemon(c->st))
    rrdc_flush_if_daemon(erg_store_daemon(c->st), rrd);
  int rc, tries = 0;
  do {
    rrd_clear_error();
    rc = rrd_fetch_r(rrd, "AVERAGE", &start, &end, &step, &nds, &names, &d);
  } while (rc != 0 && web_rrd_retry(&tries));
  if (rc != 0)
    return;
  long im = model_ds(names, nds, "measured"), ip = model_ds(names, nds, "modelled"),
       ie = model_ds(names, nds, "estimated");
  unsigned long rows = step ? (unsigned long)(end - start) / step : 0;
  double sa = 0, s2 = 0, sb = 0, sp = 0;
  size_t np = 0;
  for (unsigned long r = 0; im >= 0 && ip >= 0 && ie >= 0 && r < rows; r++) {
    double m = d[r * nds + (unsigned long)im], p = d[r * nds + (unsigned long)ip],
           e = d[r * nds + (unsigned long)ie];
    if (isnan(m) || isnan(p) || !(e < 0.5))
      continue;
    sa += fabs(p - m), s2 += (p - m) * (p - m), sb += m - p;
    lm->cells++;
    if (m > 0)
      sp += fabs(p - m) / m, np++;
  }
  for (unsigned long i = 0; i < nds; i++)
    free(names[i]);
  free(names);
  free(d);
  if (lm->cells) {
    lm->mae_watts = sa / (double)lm->cells;
    lm->rmse_watts = sqrt(s2 / (double)lm->cells);
    lm->bias_watts = sb / (double)lm->cells;
  }
  if (np)
    lm->mape_percent = 100 * sp / (double)np;
}

static void model_num(FILE *f, const char *label, double v, const char *unit) {
  fprintf(f, "<tr><th>%s</th><td class=\"n\">", label);
  if (isfinite(v))
    fprintf(f, "%.3g%s", v, unit);
  else
    fputs("–", f);
  fputs("</td></tr>\n", f);
}

int web_model_group(const struct web_ctx *c, const char *safe, char *out, size_t outlen) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s.json", c->model_dir, safe);
  out[0] = '\0';
  json_t *j = json_load_file(path, 0, NULL);
  const char *g = json_string_value(json_object_get(j, "group"));
  if (g && *g)
    erg_strlcpy(out, g, outlen);
  json_decref(j);
  return out[0] ? 0 : -1;
}

void web_group_line(FILE *f, const char *group) {
  if (!group[0])
    return;
  fputs("<p class=\"group\">power: share of shared meter ", f);
  web_html_text(f, group);
  fputs(" (split by model)</p>\n", f);
}

/* Where the model's idle power comes from (docs/model.md, idle_source). */
static const char *model_idle_text(enum erg_idle_source s) {
  return s == ERG_IDLE_FROM_RECORDED        ? "recorded idle profile"
         : s == ERG_IDLE_FROM_PROFILE       ? "idle rows of the journal"
         : s == ERG_IDLE_FROM_GROUP_PROFILE ? "its part of the group's recorded idle profile"
         : s == ERG_IDLE_FROM_GROUP_FIT     ? "its part of the group's fitted idle"
                                            : "fitted";
}

static void model_file_table(FILE *f, const struct web_ctx *c, const char *safe) {
  char path[1200], why[300];
  struct erg_model m;
  snprintf(path, sizeof path, "%s/%s.json", c->model_dir, safe);
  if (erg_model_load(&m, path, why, sizeof why) != 0) {
    fprintf(f, "<p>No usable model file (");
    web_html_text(f, why);
    fprintf(f, "): the collector uses its configured idle power only.</p>\n");
    return;
  }
  char a[32], b[32];
  web_iso_time((int64_t)m.train_first_unix_seconds, a);
  web_iso_time((int64_t)m.train_last_unix_seconds, b);
  fprintf(f,
          "<h2>model file, held-out validation</h2>\n<p>Trained on %zu cells from %s to %s; "
          "idle %.1f W (%s",
          m.train_rows, a, b, m.idle_watts, model_idle_text(m.idle_source));
  if (m.idle_source != ERG_IDLE_FROM_FIT && m.idle_rows)
    fprintf(f, ", %zu cells", m.idle_rows);
  fputs("); validation: ", f);
  web_html_text(f, m.validation[0] ? m.validation : "none");
  fprintf(f, ".</p>\n<table>\n");
  model_num(f, "MAE", m.metrics.mae_watts, " W");
  model_num(f, "RMSE", m.metrics.rmse_watts, " W");
  model_num(f, "MAPE (total)", m.metrics.mape_total_percent, " %");
  model_num(f, "MAPE (dynamic)", m.metrics.mape_dynamic_percent, " %");
  model_num(f, "R²", m.metrics.r2, "");
  fprintf(f, "<tr><th>held-out cells</th><td class=\"n\">%zu</td></tr>\n", m.metrics.cells);
  fprintf(f, "</table>\n<table>\n<tr><th>feature</th><th>W per unit</th></tr>\n");
  for (size_t i = 0; i < m.nfeatures; i++) {
    fprintf(f, "<tr><td>");
    web_html_text(f, m.feature[i]);
    fprintf(f, "</td><td class=\"n\">%.4g</td></tr>\n", m.coef[i]);
  }
  fprintf(f, "</table>\n");
  /* What the names mean (docs/model.md "Features", "Utilisation curve"). */
  fprintf(f, "<p>Features: <b>cpu_seconds_per_second</b> CPU time of all processes per second "
             "(1 = one CPU busy); <b>disk_bytes_per_second</b> bytes read and written; "
             "<b>instructions_per_second</b>, <b>cycles_per_second</b> the CPUs' hardware "
             "counters; <b>gpu_watts</b> the GPU boards' own power reading. "
             "<b>node_cpu_utilization_tail8_1</b> … <b>_8</b> are the utilisation curve: u = "
             "CPU seconds per second / CPUs, and tail i is the chance of at least i of 8 "
             "trials at chance u (tail 1 rises steeply from idle, tail 8 only near full "
             "load); each coefficient is the watts its tail adds at full load, and their sum "
             "is a curve that never falls with load. <b>…bernstein…</b> are the same idea in "
             "models of older versions. W per unit is the watts one unit of the feature "
             "adds.</p>\n");
}

int web_model_page(const struct web_ctx *c, const char *node, const char *safe, const char *rrd,
                   const char *group, char *why, size_t whylen) {
  char erd[1200], file[1200], title[400], name[ERG_NAME_MAX + 16];
  if (web_graph_path(rrd, erd, sizeof erd) != 0) {
    snprintf(why, whylen, "store path %.300s cannot be drawn (backslash)", rrd);
    return -1;
  }
  for (size_t r = 0; r < MODEL_RANGES; r++)
    for (int res = 0; res < 2; res++) {
      snprintf(file, sizeof file, "%s/modelg-%s-%s-%s.%s", c->www, res ? "residual" : "fit",
               web_ranges[r].name, safe, c->ext);
      if (web_graph_fresh(file, c->now, web_ranges[r].seconds, 0))
        continue;
      snprintf(title, sizeof title, "%s: %s, last %s", node,
               res ? "measured − modelled" : "measured and modelled", web_ranges[r].name);
      struct live_metrics rl;
      if (res)
        model_live(c, rrd, web_ranges[r].seconds, &rl);
      if (web_graph_model(c, erd, file, title, web_ranges[r].seconds, res, !res || rl.cells > 0,
                          why, whylen) != 0)
        return -1;
    }
  struct live_metrics lm;
  model_live(c, rrd, 86400, &lm);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  fprintf(f, web_html_head, "erg: model quality");
  fprintf(f,
          "<p><a href=\"index.html\">overview</a> · <a href=\"node-hour-%s.html\">node</a>"
          "</p>\n<h1>model quality: ",
          safe);
  web_html_text(f, node);
  fputs("</h1>\n", f);
  web_group_line(f, group);
  fprintf(f, "<h2>last day, cells with a PDU reading (%zu)</h2>\n<table>\n", lm.cells);
  model_num(f, "MAE", lm.cells ? lm.mae_watts : NAN, " W");
  model_num(f, "RMSE", lm.cells ? lm.rmse_watts : NAN, " W");
  model_num(f, "bias (measured − modelled)", lm.cells ? lm.bias_watts : NAN, " W");
  model_num(f, "MAPE", lm.mape_percent, " %");
  fprintf(f, "</table>\n");
  model_file_table(f, c, safe);
  for (size_t r = 0; r < MODEL_RANGES; r++) {
    const char *rn = web_ranges[r].name;
    fprintf(f,
            "<h2>last %s</h2>\n<img src=\"modelg-fit-%s-%s.%s\" alt=\"measured and modelled, "
            "last %s\">\n<img src=\"modelg-residual-%s-%s.%s\" alt=\"residual, last %s\">\n",
            rn, rn, safe, c->ext, rn, rn, safe, c->ext, rn);
  }
  fprintf(f, "<p>Measured: the black line; modelled: the blue dashed one. Cells without a "
             "PDU reading (shaded) carry the model's value as measured and are left out of "
             "the residual and the metrics.</p>\n");
  web_html_footer(f, c->now);
  snprintf(name, sizeof name, "model-%s.html", safe);
  return web_page_write(c->www, name, f, &buf, &len, why, whylen);
}

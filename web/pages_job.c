// SPDX-License-Identifier: GPL-3.0-or-later
/* Job pages: a job's power on each node it ran on (per-node job archives)
 * under the cluster-wide total (cluster/job/<job>.rrd), for the job's last
 * hour, day, week and month of data; and the overview's top-jobs table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erg_fit.h"
#include "report_int.h"
#include "web_int.h"

#define JOB_RANGES 4 /* hour, day, week, month */

static int job_energy_cmp(const void *a, const void *b) {
  double x = (*(const struct web_job *const *)a)->key.energy_j;
  double y = (*(const struct web_job *const *)b)->key.energy_j;
  return x < y ? 1 : x > y ? -1 : 0;
}

void web_jobs_table(FILE *f, const struct web_job *jobs, size_t njobs, size_t max) {
  const struct web_job **order = malloc((njobs ? njobs : 1) * sizeof *order);
  if (!order)
    return;
  for (size_t i = 0; i < njobs; i++)
    order[i] = &jobs[i];
  qsort(order, njobs, sizeof *order, job_energy_cmp);
  /* One unit for the column, the largest row's. */
  const char *unit;
  double per, max_j = njobs ? order[0]->key.energy_j : 0;
  web_energy_unit(max_j, &unit, &per);
  fprintf(f,
          "<table>\n<tr><th>job</th><th>energy (%s)</th><th>mean (W)</th>"
          "<th>nodes</th><th>last energy</th></tr>\n",
          unit);
  for (size_t i = 0; i < njobs && i < max; i++) {
    const struct web_job *j = order[i];
    char when[32] = "more than a day ago";
    if (j->key.last_energy > 0)
      web_iso_time(j->key.last_energy, when);
    fprintf(f, "<tr><td><a href=\"job-%s.html\">", j->key.safe);
    web_html_text(f, j->key.orig);
    fprintf(f,
            "</a></td><td class=\"n\">%.*f</td><td class=\"n\">%.1f</td>"
            "<td class=\"n\">%zu</td><td>%s</td></tr>\n",
            per == 1 ? 0 : 3, j->key.energy_j / per, j->key.mean_watts, j->nodes_on, when);
  }
  fprintf(f,
          "</table>\n<p>Energy over the last day; mean power over the job's cells with "
          "energy in it; last energy: the end of the job's last cell with energy (ergd "
          "writes 0 W cells for a while after a job). Jobs with data in the last %d days "
          "have a page.</p>\n",
          WEB_JOB_DAYS);
  free(order);
}

/* The GPU part of the job's last day (docs/gpu.md), from its cluster-wide
 * gpu_job archive; nothing for a job without one or without GPU energy. */
static void job_gpu_share(FILE *f, const struct web_ctx *c, const struct web_job *j) {
  char path[1200], gt[32];
  double mean, gpu_j;
  if (erg_store_key_path(c->st, NULL, "gpu_job", j->key.orig, path, sizeof path) != 0 ||
      !web_file_exists(path))
    return;
  web_key_stats(erg_store_daemon(c->st), path, "watts", c->now, 86400, 0, &mean, &gpu_j);
  if (!(gpu_j > 0))
    return;
  erg_energy_text(gpu_j, gt, sizeof gt);
  fprintf(f, "<p class=\"gpu\">GPUs: %s", gt);
  if (j->key.energy_j > 0)
    fprintf(f, " (%.1f %%)", 100 * gpu_j / j->key.energy_j);
  fprintf(f, " of the job's energy over the last day: the GPU boards' part (the model's "
             "gpu_watts term, as attributed).</p>\n");
}

/* The 95 % interval of the job's last-day energy (docs/model.md,
 * "Uncertainty"), from the sd and var data sources of its cluster-wide job
 * archive (a store of an ergd before them: its cluster job_sd and job_var
 * archives); nothing when neither is there. */
static void job_interval(FILE *f, const struct web_ctx *c, const struct web_job *j) {
  static const char *const ds[2] = {"sd", "var"}, *const old[2] = {"job_sd", "job_var"};
  static const char *const watts[1] = {"watts"};
  const char *daemon = erg_store_daemon(c->st);
  char path[1200], lo[32], hi[32], why[64];
  struct report_value v[2];
  if (erg_store_key_path(c->st, NULL, "job", j->key.orig, path, sizeof path) != 0 ||
      !web_file_exists(path) ||
      report_archive(daemon, path, ds, 2, c->now - 86400, c->now, NULL, v, why, sizeof why) != 0)
    return;
  for (int k = 0; k < 2 && (v[0].absent || v[1].absent); k++)
    if (erg_store_key_path(c->st, NULL, old[k], j->key.orig, path, sizeof path) != 0 ||
        !web_file_exists(path) ||
        report_archive(daemon, path, watts, 1, c->now - 86400, c->now, NULL, &v[k], why,
                       sizeof why) != 0)
      return;
  double low, high;
  if (!(v[0].known_s > 0) || !(v[1].known_s > 0) || !isfinite(v[0].energy_j) ||
      !isfinite(v[1].energy_j) || !(j->key.energy_j > 0))
    return;
  erg_unc_interval(j->key.energy_j, v[0].energy_j, v[1].energy_j, &low, &high);
  erg_energy_text(low, lo, sizeof lo);
  erg_energy_text(high, hi, sizeof hi);
  fprintf(f,
          "<p class=\"interval\">95 %% interval of the last day's energy: %s to %s (the "
          "meter's resolution and noise, the model's coefficient error and misfit; "
          "docs/model.md, \"Uncertainty\").</p>\n",
          lo, hi);
}

static int job_page(const struct web_ctx *c, const struct web_job *j, const char *const *nodes,
                    size_t nnodes, char *why, size_t whylen) {
  char *buf = NULL, name[ERG_NAME_MAX + 16], when[32], energy[32];
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return -1;
  snprintf(when, sizeof when, "more than a day ago");
  if (j->key.last_energy > 0)
    web_iso_time(j->key.last_energy, when);
  erg_energy_text(j->key.energy_j, energy, sizeof energy);
  fprintf(f, web_html_head, "erg: job");
  fprintf(f, "<p><a href=\"index.html\">overview</a></p>\n<h1>job ");
  web_html_text(f, j->key.orig);
  fprintf(f,
          "</h1>\n<p>Last energy %s. Last day: %s, mean %.1f W over its cells with "
          "energy.</p>\n<p>Ran on:",
          when, energy, j->key.mean_watts);
  size_t listed = 0;
  for (size_t i = 0; i < nnodes; i++) {
    if (!j->on_node || !j->on_node[i])
      continue;
    char safe[ERG_NAME_MAX];
    erg_name_sanitize(nodes[i], strlen(nodes[i]), safe);
    fprintf(f, "%s <a href=\"node-hour-%s.html\">", listed++ ? "," : "", safe);
    web_html_text(f, nodes[i]);
    fprintf(f, "</a>");
  }
  fprintf(f, "%s</p>\n",
          listed ? ""
                 : " no node archive (the job's share may be in a node's "
                   "[other])");
  job_gpu_share(f, c, j);
  job_interval(f, c, j);
  for (size_t r = 0; r < JOB_RANGES; r++)
    fprintf(f,
            "<h2>last %s of data</h2>\n<img src=\"jobg-%s-%s.%s\" alt=\"job power by node, "
            "last %s\">\n",
            web_ranges[r].name, web_ranges[r].name, j->key.safe, c->ext, web_ranges[r].name);
  fprintf(f, "<p>Per node the job's power there, stacked; the line is the job's cluster-wide "
             "total (it can be higher when a node counted the job in [other]).</p>\n");
  web_html_footer(f, c->now);
  snprintf(name, sizeof name, "job-%s.html", j->key.safe);
  return web_page_write(c->www, name, f, &buf, &len, why, whylen);
}

int web_job_pages(const struct web_ctx *c, const struct web_job *jobs, size_t njobs,
                  const char *const *nodes, size_t nnodes, char *why, size_t whylen) {
  int rc = 0;
  char err[512];
  for (size_t i = 0; i < njobs; i++) {
    const struct web_job *j = &jobs[i];
    /* An ended job's graphs end at its last data, so they stay as drawn.
     * Fresh means drawn after the archive was last written (its mtime,
     * flushed from rrdcached in web_jobs_collect), not after its last
     * cell's time: cells are written a settle delay after their time, so
     * a graph drawn while the job ran would otherwise never be redrawn. */
    int64_t end = j->key.last && j->key.last < c->now ? j->key.last : c->now;
    struct stat sb;
    int64_t written = stat(j->key.path, &sb) == 0 ? (int64_t)sb.st_mtime : j->key.last;
    for (size_t r = 0; r < JOB_RANGES; r++) {
      char file[1200];
      snprintf(file, sizeof file, "%s/jobg-%s-%s.%s", c->www, web_ranges[r].name, j->key.safe,
               c->ext);
      if (web_graph_fresh(file, c->now, web_ranges[r].seconds, written))
        continue;
      if (web_graph_job(c, j, nodes, nnodes, file, web_ranges[r].seconds, end, err, sizeof err) !=
              0 &&
          rc == 0) {
        snprintf(why, whylen, "%s", err);
        rc = -1;
      }
    }
    if (job_page(c, j, nodes, nnodes, err, sizeof err) != 0 && rc == 0) {
      snprintf(why, whylen, "%s", err);
      rc = -1;
    }
  }
  return rc;
}

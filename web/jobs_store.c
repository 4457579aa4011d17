// SPDX-License-Identifier: GPL-3.0-or-later
/* erg jobs' own fields, from the store alone (no Slurm): the nodes that
 * hold a job's archive, the user and first command ergd recorded for it
 * and the GPU part of its energy. Names from the store reach paths only as names
 * erg_name_sanitize leaves unchanged. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"
#include "jobs_int.h"
#include "report_int.h"
#include "web_int.h"

/* Appends name to a comma-separated list, if it fits whole. */
static void jobs_list_add(char *list, size_t len, const char *name) {
  size_t used = strlen(list), n = strlen(name);
  if (used + n + (used ? 1 : 0) < len)
    snprintf(list + used, len - used, "%s%s", used ? "," : "", name);
}

/* The node's user of job j: users.tsv gives its uid, user/names.tsv (read
 * once per node, into *names) the name. */
static void jobs_node_user(const char *node_dir, const char *users, char **names,
                           struct jobs_job *j) {
  char uid[32], dir[1300];
  if (j->user[0] || web_names_find(users, j->id, uid, sizeof uid) != 0)
    return;
  snprintf(dir, sizeof dir, "%s/user", node_dir);
  if (!*names)
    *names = web_names_load(dir);
  if (web_names_find(*names, uid, j->user, sizeof j->user) != 0)
    erg_strlcpy(j->user, uid, sizeof j->user);
}

/* The GPU part of job j on the node (docs/gpu.md): its gpu_job archive
 * over the period, integrated as erg report integrates a key. A node with
 * GPU archives but none for the job (it used no GPU) adds a known 0. */
static void jobs_node_gpu(const struct erg_report_options *o, const char *node_dir,
                          struct jobs_job *j) {
  char safe[ERG_NAME_MAX], path[1400];
  snprintf(path, sizeof path, "%s/gpu_job/index.tsv", node_dir);
  if (!web_file_exists(path))
    return;
  j->gpu_known = 1;
  erg_name_sanitize(j->id, strlen(j->id), safe);
  snprintf(path, sizeof path, "%s/gpu_job/%s.rrd", node_dir, safe);
  const char *const ds[1] = {"watts"};
  struct report_value v;
  char why[256];
  if (web_file_exists(path) &&
      report_archive(NULL, path, ds, 1, o->from_s, o->to_s, NULL, &v, why, sizeof why) == 0)
    j->gpu_j += v.energy_j;
}

static void jobs_node_fields(const struct erg_report_options *o, const char *node_dir,
                             const char *node_name, struct jobs_job *jobs, size_t n) {
  char dir[1300], path[2400], line[1024];
  snprintf(dir, sizeof dir, "%s/job", node_dir);
  snprintf(path, sizeof path, "%s/index.tsv", dir);
  FILE *f = fopen(path, "r");
  char *users = f ? web_tsv_load(dir, "users.tsv") : NULL, *names = NULL;
  char *commands = f ? web_tsv_load(dir, "commands.tsv") : NULL;
  while (f && fgets(line, sizeof line, f)) {
    char *tab = strchr(line, '\t');
    if (!tab)
      continue;
    *tab++ = '\0';
    tab[strcspn(tab, "\r\n")] = '\0';
    struct jobs_job *j = jobs_find(jobs, n, tab);
    snprintf(path, sizeof path, "%s/%s.rrd", dir, line);
    if (!j || !erg_name_is_safe(line) || !web_file_exists(path))
      continue;
    jobs_list_add(j->nodes, sizeof j->nodes, node_name);
    jobs_node_user(node_dir, users, &names, j);
    /* JobName: the job's first command there (web_names_find replaces
     * control bytes; the outputs fix UTF-8), until Slurm names it. */
    if (!j->name[0])
      web_names_find(commands, j->id, j->name, sizeof j->name);
    jobs_node_gpu(o, node_dir, j);
  }
  if (f)
    fclose(f);
  free(users);
  free(commands);
  free(names);
}

/* The job's interval parts of one store (docs/model.md, "Uncertainty"):
 * the data sources sd and var of its cluster-wide archive (cluster/job/,
 * every job summed over nodes), integrated over o's period; a store of an
 * ergd before them has the separate cluster/job_sd/ and job_var/. */
static void jobs_store_unc(const struct erg_report_options *o, const char *data_dir,
                           struct jobs_job *j) {
  char safe[ERG_NAME_MAX], path[1400], why[256];
  static const char *const ds[2] = {"sd", "var"}, *const watts[1] = {"watts"};
  static const char *const old[2] = {"job_sd", "job_var"};
  struct report_value v[2];
  erg_name_sanitize(j->id, strlen(j->id), safe);
  snprintf(path, sizeof path, "%s/cluster/job/%s.rrd", data_dir, safe);
  if (!web_file_exists(path) ||
      report_archive(NULL, path, ds, 2, o->from_s, o->to_s, NULL, v, why, sizeof why) != 0)
    return;
  for (int k = 0; k < 2 && (v[0].absent || v[1].absent); k++) {
    snprintf(path, sizeof path, "%s/cluster/%s/%s.rrd", data_dir, old[k], safe);
    if (!web_file_exists(path) ||
        report_archive(NULL, path, watts, 1, o->from_s, o->to_s, NULL, &v[k], why, sizeof why) != 0)
      return;
  }
  if (!(v[0].known_s > 0) || !(v[1].known_s > 0))
    return;
  j->unc_sd_j += isfinite(v[0].energy_j) ? v[0].energy_j : 0;
  j->unc_var_j += isfinite(v[1].energy_j) ? v[1].energy_j : 0;
  j->unc_known = 1;
}

void jobs_erg_fields(const struct erg_report_options *o, struct jobs_job *jobs, size_t n) {
  struct report_node *nodes;
  size_t nn;
  char why[256], node_dir[1200];
  for (size_t d = 0; n && d < o->ndata_dirs; d++) {
    if (report_nodes_list(o->data_dirs[d], &nodes, &nn, why, sizeof why) != 0)
      continue;
    for (size_t i = 0; i < nn; i++) {
      snprintf(node_dir, sizeof node_dir, "%s/nodes/%s", o->data_dirs[d], nodes[i].dir);
      jobs_node_fields(o, node_dir, nodes[i].name, jobs, n);
    }
    free(nodes);
    for (size_t i = 0; i < n; i++)
      jobs_store_unc(o, o->data_dirs[d], &jobs[i]);
  }
}

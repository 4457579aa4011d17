// SPDX-License-Identifier: GPL-3.0-or-later
/* A store with two nodes (one with a hostile name) and command keys,
 * hostile ones included, filled for the last 20 minutes before now. Shared
 * by the page/HTTP test and the demo server the Chromium test loads. */
#ifndef ERG_WEB_FIXTURE_H
#define ERG_WEB_FIXTURE_H

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "erg_common.h"
#include "erg_fit.h"
#include "erg_store.h"

#define FIX_STEP 5
#define FIX_NKEYS 17

static const char *const fix_nodes[] = {"n1", "<script>alert(1)</script> rack:2/\"b\""};
static const char *const fix_keys[FIX_NKEYS] = {"<script>alert(1)</script>",
                                                "a:b\\c\\l",
                                                "caf\xc3\xa9",
                                                "bad\xff\xfe utf8",
                                                "tab\there",
                                                "k05",
                                                "k06",
                                                "k07",
                                                "k08",
                                                "k09",
                                                "k10",
                                                "k11",
                                                "k12",
                                                "k13",
                                                "k14",
                                                "k15",
                                                "100%% %s"};

/* The name of user key (uid) 1000 in names.tsv. */
#define FIX_USER_NAME "<img src=x onerror=alert(1)>mallory"

/* Jobs: one on both nodes, one with a hostile name on n1; the cluster
 * archive of each holds the sum over nodes (as ergd writes it). */
#define FIX_NJOBS 2
static const char *const fix_jobs[FIX_NJOBS] = {"job-42",
                                                "<img src=x onerror=alert(1)> ../../j:1 \"q\""};

static inline int fixture_keys(struct erg_store *s, size_t n, int64_t t, double *dyn, char *why,
                               size_t whylen) {
  size_t nkeys = n == 0 ? FIX_NKEYS : 2;
  double job_w[FIX_NJOBS] = {0, 0};
  *dyn = 0;
  for (size_t k = 0; k < nkeys; k++) {
    double w = 2.0 + (double)(FIX_NKEYS - k) + (double)((t / 60 + (int64_t)k) % 5);
    *dyn += w;
    if (erg_store_key_update(s, fix_nodes[n], "command", fix_keys[k], t, w, why, whylen))
      return -1;
  }
  /* The same power by job ([none]: no job) and by user. */
  job_w[0] = *dyn * 0.5;
  job_w[1] = n == 0 ? *dyn * 0.3 : 0;
  double none_w = *dyn - job_w[0] - job_w[1];
  for (size_t j = 0; j < FIX_NJOBS; j++)
    if (job_w[j] > 0 &&
        erg_store_key_update(s, fix_nodes[n], "job", fix_jobs[j], t, job_w[j], why, whylen))
      return -1;
  if (erg_store_key_update(s, fix_nodes[n], "job", "[none]", t, none_w, why, whylen) ||
      erg_store_key_update(s, fix_nodes[n], "user", "alice", t, *dyn - 1.5, why, whylen) ||
      erg_store_key_update(s, fix_nodes[n], "user", "1000", t, 0.5, why, whylen) ||
      erg_store_key_update(s, fix_nodes[n], "user", "[system]", t, 1, why, whylen))
    return -1;
  return 0;
}

/* The shared meter n1's model file names (a "group" key; docs/web.md). */
#define FIX_GROUP "pdu-<7>"

/* A model file for n1 (held-out metrics shown on its model page), its
 * idle power from a recorded idle profile, and a "group": n1's power is a
 * share of a shared meter. */
static inline int fixture_model(const char *root, char *why, size_t whylen) {
  struct erg_model m;
  memset(&m, 0, sizeof m);
  m.version = ERG_MODEL_VERSION;
  snprintf(m.node, sizeof m.node, "%s", fix_nodes[0]);
  m.nfeatures = 1;
  snprintf(m.feature[0], sizeof m.feature[0], "cpu_seconds_per_second");
  m.coef[0] = 12.5;
  m.idle_watts = 80;
  m.idle_source = ERG_IDLE_FROM_RECORDED;
  m.idle_rows = 120;
  m.has_idle_profile = true;
  m.idle_profile = (struct erg_idle_profile){.mean_watts = 80,
                                             .cells = 120,
                                             .ncpu = 4,
                                             .first_unix_seconds = 1.7e9 - 600,
                                             .last_unix_seconds = 1.7e9};
  snprintf(m.idle_profile.node, sizeof m.idle_profile.node, "%s", fix_nodes[0]);
  m.step_seconds = FIX_STEP;
  m.train_first_unix_seconds = 1.7e9, m.train_last_unix_seconds = 1.7e9 + 86400;
  m.train_rows = 17280;
  snprintf(m.validation, sizeof m.validation, "holdout last 25%%");
  m.metrics = (struct erg_fit_metrics){.mae_watts = 3.25,
                                       .rmse_watts = 4.5,
                                       .mape_total_percent = 2.75,
                                       .mape_dynamic_percent = 9.5,
                                       .r2 = 0.93,
                                       .cells = 4320,
                                       .cells_dynamic = 4000};
  char dir[1024], path[1100];
  snprintf(dir, sizeof dir, "%s/models", root);
  snprintf(path, sizeof path, "%s/%s.json", dir, fix_nodes[0]);
  if (erg_mkdir_p(dir, 0755) != 0) {
    snprintf(why, whylen, "cannot create the models directory");
    return -1;
  }
  if (erg_model_save(&m, path, why, whylen) != 0)
    return -1;
  /* The keys of a group member's model (docs/model.md, "Shared meters"). */
  json_t *j = json_load_file(path, 0, NULL);
  json_t *g = json_pack("{s:s, s:[s,s], s:s, s:s}", "group", FIX_GROUP, "group_nodes", fix_nodes[0],
                        fix_nodes[1], "group_form", "pooled", "idle_split", "equal");
  int rc = !j || !g || json_object_update(j, g) || json_dump_file(j, path, JSON_INDENT(2));
  json_decref(g);
  json_decref(j);
  if (rc)
    snprintf(why, whylen, "cannot add a group to the model file of %s", fix_nodes[0]);
  return rc ? -1 : 0;
}

/* Returns 0, or -1 with the reason in why. */
static inline int fixture_fill(struct erg_store *s, int64_t now, char *why, size_t whylen) {
  int64_t end = now - now % FIX_STEP;
  for (int64_t t = end - 1200; t <= end; t += FIX_STEP) {
    double job_sum[FIX_NJOBS] = {0, 0};
    for (size_t n = 0; n < 2; n++) {
      double dyn = 0;
      if (fixture_keys(s, n, t, &dyn, why, whylen))
        return -1;
      job_sum[0] += dyn * 0.5;
      job_sum[1] += n == 0 ? dyn * 0.3 : 0;
      /* Every 10th cell of n1 has no PDU reading: estimated. */
      int est = n == 0 && (t / FIX_STEP) % 10 == 0;
      struct erg_store_node_cell c = {.t_end = t,
                                      .measured_watts = est ? 78 + dyn : 80 + dyn,
                                      .modelled_watts = 78 + dyn,
                                      .idle_watts = 80,
                                      .dynamic_watts = dyn,
                                      .unattributed_watts = 0,
                                      .estimated = est};
      if (erg_store_node_update(s, fix_nodes[n], &c, why, whylen))
        return -1;
    }
    for (size_t j = 0; j < FIX_NJOBS; j++)
      if (erg_store_key_update(s, NULL, "job", fix_jobs[j], t, job_sum[j], why, whylen))
        return -1;
  }
  /* uid 1000's name as the node's agent sent it (ergd keeps it sanitised
   * of control bytes, not of markup): the pages must escape it. */
  for (size_t n = 0; n < 2; n++)
    if (erg_store_names_write(s, fix_nodes[n], "user", "1000\t" FIX_USER_NAME "\n", why, whylen))
      return -1;
  return fixture_model(erg_store_root(s), why, whylen);
}

#endif

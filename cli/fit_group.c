// SPDX-License-Identifier: GPL-3.0-or-later
/* `erg fit --group NAME --nodes A,B,...`: the joint fit of the nodes behind
 * one shared meter (docs/model.md, "Shared meters: the joint fit"). Reads
 * each member's journals as a single node's fit does, fits with
 * erg_group_fit, prints the form and why, the identifiability, the
 * validation of the summed prediction and each member's model, and writes
 * MODEL_DIR/NODE.json for every member. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_fit.h"
#include "erg_common.h"

#define GROUP_PATH_MAX 1200

struct group_cli {
  size_t n;
  char node[ERG_GROUP_MAX_NODES][ERG_FIT_NAME_MAX];
  const char *nodep[ERG_GROUP_MAX_NODES];
  enum erg_group_form form;
  int split; /* enum erg_idle_split, -1: not given (profile when all have one) */
  double weights[ERG_GROUP_MAX_NODES];
  size_t nweights;
};

/* Splits a comma list into at most max fields of < ERG_FIT_NAME_MAX
 * bytes; -1 on an empty or long field or too many. */
static int group_split_list(const char *s, char out[][ERG_FIT_NAME_MAX], size_t max, size_t *n) {
  *n = 0;
  for (const char *p = s;; p++) {
    size_t len = strcspn(p, ",");
    if (len == 0 || len >= ERG_FIT_NAME_MAX || *n == max)
      return -1;
    memcpy(out[*n], p, len);
    out[(*n)++][len] = '\0';
    p += len;
    if (!*p)
      return 0;
  }
}

static int group_parse(const struct cli_opts *o, struct group_cli *g) {
  memset(g, 0, sizeof *g);
  if (!o->group || !o->nodes) {
    fprintf(stderr, "erg fit: --group needs --nodes and --nodes needs --group\n");
    return 1;
  }
  if (!o->group[0] || strlen(o->group) >= ERG_FIT_NAME_MAX) {
    fprintf(stderr, "erg fit: --group: a name of 1..%d bytes\n", ERG_FIT_NAME_MAX - 1);
    return 1;
  }
  if (group_split_list(o->nodes, g->node, ERG_GROUP_MAX_NODES, &g->n) != 0 || g->n < 2) {
    fprintf(stderr, "erg fit: --nodes: 2..%d node names, comma-separated\n", ERG_GROUP_MAX_NODES);
    return 1;
  }
  for (size_t m = 0; m < g->n; m++) {
    g->nodep[m] = g->node[m];
    for (size_t e = 0; e < m; e++)
      if (strcmp(g->node[e], g->node[m]) == 0) {
        fprintf(stderr, "erg fit: --nodes: %s twice\n", g->node[m]);
        return 1;
      }
  }
  const char *f = o->form ? o->form : "auto";
  int form = !strcmp(f, "auto")       ? ERG_GROUP_AUTO
             : !strcmp(f, "pooled")   ? ERG_GROUP_POOLED
             : !strcmp(f, "per-node") ? ERG_GROUP_PER_NODE
                                      : -1;
  if (form < 0) {
    fprintf(stderr, "erg fit: --form: auto, pooled or per-node, not '%s'\n", f);
    return 1;
  }
  g->form = (enum erg_group_form)form;
  g->split = -1;
  if (o->idle_split && !strcmp(o->idle_split, "equal"))
    g->split = ERG_IDLE_SPLIT_EQUAL;
  else if (o->idle_split && !strcmp(o->idle_split, "profile"))
    g->split = ERG_IDLE_SPLIT_PROFILE;
  else if (o->idle_split) {
    char w[ERG_GROUP_MAX_NODES][ERG_FIT_NAME_MAX];
    double sum = 0;
    bool ok = group_split_list(o->idle_split, w, ERG_GROUP_MAX_NODES, &g->nweights) == 0 &&
              g->nweights == g->n;
    for (size_t m = 0; ok && m < g->nweights; m++) {
      char *end;
      g->weights[m] = strtod(w[m], &end);
      ok = *end == '\0' && g->weights[m] >= 0 && isfinite(g->weights[m]);
      sum += g->weights[m];
    }
    if (!ok || !(sum > 0)) {
      fprintf(stderr,
              "erg fit: --idle-split: equal, profile, or %zu weights >= 0 (not all 0) "
              "in --nodes order\n",
              g->n);
      return 1;
    }
    g->split = ERG_IDLE_SPLIT_WEIGHTS;
  }
  return 0;
}

int cli_group_usage_check(const struct cli_opts *o) {
  struct group_cli g;
  if (o->njournal || o->node || o->out || o->idle_profile || o->ncpu > 0) {
    fprintf(stderr, "erg fit: --group reads each member's journals from JOURNAL_DIR and writes "
                    "MODEL_DIR/NODE.json: no --journal, --node, --out, --idle-profile or --ncpu "
                    "(journals need their ncpu column)\n");
    return 1;
  }
  return group_parse(o, &g);
}

/* MODEL_DIR/idle/group/NAME.json: the meter while all members were idle
 * (a subdirectory: no node's profile can have its name). */
static int group_idle_path(const struct cli_opts *o, char *out, size_t outlen) {
  char dir[1024], safe[ERG_NAME_MAX];
  cli_model_dir(o, dir, sizeof dir);
  erg_name_sanitize(o->group, strlen(o->group), safe);
  return snprintf(out, outlen, "%s/idle/group/%s.json", dir, safe) < (int)outlen ? 0 : -1;
}

/* `erg fit --idle --group`: the window is taken from the first member's
 * journal (--last) and must be quiet on every member; the profile is the
 * meter's mean over it (every member's row holds the whole meter). */
static int group_idle_record(const struct cli_opts *o, const struct group_cli *g,
                             struct erg_dataset *ds) {
  char why[512], path[GROUP_PATH_MAX];
  double from, to;
  cli_idle_window(o, &ds[0], &from, &to);
  struct erg_idle_profile p[ERG_GROUP_MAX_NODES];
  double ncpu = 0, usum = 0, umax = 0;
  for (size_t m = 0; m < g->n; m++) {
    /* Here the shared rows are the point: the group's power, all quiet.
     * A row without flag 64 (the member metered alone, before it joined
     * the group) holds that node's power, not the group's: it is left out
     * as a row without the meter, not taken for the group's idle. */
    size_t alone = 0;
    for (size_t i = 0; i < ds[m].nrows; i++) {
      double t = ds[m].time_unix_seconds[i];
      if (ds[m].flags[i] & ERG_ROW_SHARED)
        ds[m].flags[i] &= ~(unsigned)ERG_ROW_SHARED;
      else {
        ds[m].flags[i] |= ERG_ROW_METER_MISSING;
        alone += t >= from && t + ds[m].row_step_seconds[i] <= to;
      }
    }
    if (erg_idle_profile_from_dataset(&ds[m], from, to, o->max_util, 0, &p[m], why, sizeof why) !=
        0) {
      fprintf(stderr, "erg fit --idle: group %s: node %s: %s", o->group, g->node[m], why);
      if (alone)
        fprintf(stderr, " (%zu of the window's rows are without flag 64: not the group's meter)",
                alone);
      fputc('\n', stderr);
      return 2;
    }
    ncpu += p[m].ncpu;
    usum += p[m].mean_utilization * p[m].ncpu;
    umax = fmax(umax, p[m].max_utilization);
  }
  struct erg_idle_profile gp = p[0];
  erg_strlcpy(gp.node, o->group, sizeof gp.node);
  gp.ncpu = ncpu;
  gp.mean_utilization = ncpu > 0 ? usum / ncpu : p[0].mean_utilization;
  gp.max_utilization = umax;
  char dir[GROUP_PATH_MAX];
  if (group_idle_path(o, path, sizeof path) != 0) {
    fprintf(stderr, "erg fit --idle: path too long\n");
    return 2;
  }
  erg_strlcpy(dir, path, sizeof dir);
  *strrchr(dir, '/') = '\0';
  if (erg_mkdir_p(dir, 0755) != 0 || erg_idle_profile_save(&gp, path, why, sizeof why) != 0) {
    fprintf(stderr, "erg fit --idle: %s\n", erg_mkdir_p(dir, 0755) ? dir : why);
    return 2;
  }
  if (o->json) {
    json_t *j = erg_idle_profile_json(&gp), *nodes = json_array();
    for (size_t m = 0; m < g->n; m++)
      json_array_append_new(nodes, json_string(g->node[m]));
    json_object_set_new(j, "group", json_string(o->group));
    json_object_set_new(j, "nodes", nodes);
    json_object_set_new(j, "path", json_string(path));
    json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
    putchar('\n');
    json_decref(j);
  } else
    printf("group %s: idle %.2f W in all (stddev %.2f W) over %zu cells with every member quiet "
           "(mean CPU utilisation %.2f %%), written to %s\n",
           o->group, gp.mean_watts, gp.stddev_watts, gp.cells, 100 * gp.mean_utilization, path);
  return 0;
}

/* The group's recorded idle, unless --no-idle-profile: 1 when loaded. */
static int group_idle_load(const struct cli_opts *o, struct erg_idle_profile *p) {
  char path[GROUP_PATH_MAX], why[512];
  if (o->no_idle_profile || group_idle_path(o, path, sizeof path) != 0 || access(path, F_OK) != 0)
    return 0;
  if (erg_idle_profile_load(p, path, why, sizeof why) != 0) {
    fprintf(stderr, "erg fit: %s\n", why);
    return -1;
  }
  return 1;
}

/* The members' idle profiles, MODEL_DIR/idle/NODE.json: the split is
 * profile when asked, or not asked and every member has one. Returns 2
 * when one is asked for and missing or unusable. */
static int group_profiles(const struct cli_opts *o, struct group_cli *g,
                          struct erg_idle_profile *p) {
  char dir[1024], path[GROUP_PATH_MAX], why[512];
  size_t have = 0;
  bool exists[ERG_GROUP_MAX_NODES];
  cli_model_dir(o, dir, sizeof dir);
  for (size_t m = 0; m < g->n; m++) {
    exists[m] =
        erg_idle_profile_path(dir, g->node[m], path, sizeof path) == 0 && access(path, F_OK) == 0;
    have += exists[m];
  }
  if (g->split < 0)
    g->split = have == g->n ? ERG_IDLE_SPLIT_PROFILE : ERG_IDLE_SPLIT_EQUAL;
  if (g->split != ERG_IDLE_SPLIT_PROFILE)
    return 0;
  for (size_t m = 0; m < g->n; m++) {
    erg_idle_profile_path(dir, g->node[m], path, sizeof path);
    if (!exists[m]) {
      fprintf(stderr,
              "erg fit: --idle-split profile: node %s has no idle profile (%s; record "
              "one with erg fit --idle while it is metered alone)\n",
              g->node[m], path);
      return 2;
    }
    if (erg_idle_profile_load(&p[m], path, why, sizeof why) != 0) {
      fprintf(stderr, "erg fit: %s\n", why);
      return 2;
    }
  }
  return 0;
}

static void group_print_table(const struct cli_opts *o, const struct group_cli *g,
                              const struct erg_group_result *r, const struct erg_model *models) {
  printf("group %s: %zu cells used of %zu joined (%zu with disagreeing meter values, %zu usable "
         "row(s) without flag 64 skipped)\n",
         o->group, r->rows_used, r->rows_joined, r->rows_mismatched, r->rows_not_shared);
  printf("group %s: %s: %s\n", o->group, r->reason, erg_group_form_name(r->form));
  printf("identifiability: condition number %.3g (per-node at most %g), largest correlation ",
         r->condition_number, ERG_GROUP_MAX_CONDITION);
  if (isnan(r->max_correlation))
    printf("-\n");
  else
    printf("r=%.3f (cpu of %s and %s; at most %g)\n", r->max_correlation, g->node[r->corr_a],
           g->node[r->corr_b], ERG_GROUP_MAX_CORRELATION);
  printf("idle_watts %.3f in all (%s), split %s", r->idle_watts,
         r->idle_fixed ? "the group's recorded idle profile" : "fitted",
         erg_idle_split_name(g->split));
  if (g->split == ERG_IDLE_SPLIT_PROFILE)
    printf(" (the members' idle profiles scaled by %.4f to the fitted sum)", r->idle_scale);
  printf("\nheld-out validation of the summed prediction against the meter (%s):\n", r->validation);
  const struct erg_fit_metrics *x = &r->metrics;
  cli_print_metrics(x);
  for (size_t m = 0; m < g->n; m++) {
    const struct erg_model *mm = &models[m];
    printf("node %s: idle_watts %.3f (%.1f %% of the group's, idle_source %s), ncpu %g\n", mm->node,
           mm->idle_watts, 100 * mm->group.idle_fraction, erg_idle_source_name(mm->idle_source),
           mm->ncpu);
    for (size_t k = 0; k < mm->nfeatures; k++)
      printf("  %-42s %.6g\n", mm->feature[k], mm->coef[k]);
    for (size_t k = 0; k < mm->nleft_out; k++)
      printf("  %-42s left out: not supported by the data (t = %.1f < 3)\n", mm->left_out[k],
             mm->left_out_t[k]);
  }
}

/* JSON has no infinity: a number that is not finite is null. */
static json_t *group_real(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static void group_print_json(const struct cli_opts *o, const struct group_cli *g,
                             const struct erg_group_result *r, const struct erg_model *models,
                             const struct erg_dataset *ds, char paths[][GROUP_PATH_MAX],
                             const char *cov_path) {
  json_t *nodes = json_array(), *members = json_array(), *pair = json_array();
  for (size_t m = 0; m < g->n; m++) {
    json_array_append_new(nodes, json_string(g->node[m]));
    json_t *mj = erg_model_json(&models[m]), *jj = cli_journal_json(o, &ds[m]);
    json_object_del(jj, "shared_rows_skipped"); /* a member's shared rows are the fit's */
    json_object_set_new(mj, "journal", jj);
    json_object_set_new(mj, "path", paths[m][0] ? json_string(paths[m]) : json_null());
    json_array_append_new(members, mj);
  }
  if (!isnan(r->max_correlation)) {
    json_array_append_new(pair, json_string(g->node[r->corr_a]));
    json_array_append_new(pair, json_string(g->node[r->corr_b]));
  }
  json_t *j = json_pack(
      "{s:s, s:o, s:s, s:s, s:b, s:{s:o, s:o, s:o, s:b, s:f, s:f}, s:{s:I, s:I, s:I, s:I}, "
      "s:f, s:s, s:o, s:o, s:o}",
      "group", o->group, "nodes", nodes, "form", erg_group_form_name(r->form), "form_reason",
      r->reason, "utilization_curve_per_node", r->curve_per_node, "identifiability",
      "condition_number", group_real(r->condition_number), "max_correlation",
      group_real(r->max_correlation), "max_correlation_nodes", pair, "identified", r->identified,
      "max_condition_number", ERG_GROUP_MAX_CONDITION, "max_abs_correlation",
      ERG_GROUP_MAX_CORRELATION, "rows", "joined", (json_int_t)r->rows_joined, "used",
      (json_int_t)r->rows_used, "meter_mismatch", (json_int_t)r->rows_mismatched, "not_shared",
      (json_int_t)r->rows_not_shared, "idle_watts", r->idle_watts, "idle_split",
      erg_idle_split_name(g->split), "idle_split_scale", group_real(r->idle_scale), "validation",
      erg_fit_metrics_json(r->validation, &r->metrics), "members", members);
  if (j) {
    json_object_set_new(j, "idle_source",
                        json_string(r->idle_fixed ? "group_idle_profile" : "fit"));
    json_object_set_new(j, "covariance_path", cov_path[0] ? json_string(cov_path) : json_null());
  }
  if (j) {
    json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    putchar('\n');
  }
  json_decref(j);
}

/* Writes every member's model unless one there is not of this group (a
 * node's own model, another group's, or no model at all): then nothing is
 * written, unless --force. */
static int group_install(const struct cli_opts *o, const struct group_cli *g,
                         const struct erg_model *models, const struct erg_group_cov *gc,
                         char paths[][GROUP_PATH_MAX], char *cov_path) {
  char dir[1024], safe[ERG_NAME_MAX], why[512];
  cli_model_dir(o, dir, sizeof dir);
  int rc = 0;
  for (size_t m = 0; m < g->n; m++) {
    erg_name_sanitize(g->node[m], strlen(g->node[m]), safe);
    snprintf(paths[m], GROUP_PATH_MAX, "%s/%s.json", dir, safe);
    struct erg_model cur;
    if (o->force || access(paths[m], F_OK) != 0)
      continue;
    if (erg_model_load(&cur, paths[m], why, sizeof why) != 0) {
      fprintf(stderr,
              "erg fit: not replacing %s: it is not a valid model (%s); use --force to "
              "overwrite it\n",
              paths[m], why);
      rc = 2;
    } else if (strcmp(cur.group.name, o->group) != 0) {
      fprintf(stderr,
              "erg fit: not replacing %s: it is %s, not of group %s; use --force to "
              "overwrite it\n",
              paths[m], cur.group.name[0] ? "another group's model" : "the node's own model",
              o->group);
      rc = 2;
    }
  }
  if (rc == 0 && erg_mkdir_p(dir, 0755) != 0) {
    fprintf(stderr, "erg fit: cannot create %s\n", dir);
    rc = 2;
  }
  /* The members' cross covariance beside them (MODEL_DIR/group/NAME.json),
   * before them: ergd looks for it once it sees the members' models of
   * this fit. Without one (the fit had none) an older file is removed: it
   * is of another fit. */
  cov_path[0] = '\0';
  if (rc == 0) {
    char gdir[1040], safe_group[ERG_NAME_MAX];
    erg_name_sanitize(o->group, strlen(o->group), safe_group);
    snprintf(gdir, sizeof gdir, "%s/group", dir);
    snprintf(cov_path, GROUP_PATH_MAX, "%s/%s.json", gdir, safe_group);
    if (gc->nterms == 0) {
      unlink(cov_path);
      cov_path[0] = '\0';
    } else if (erg_mkdir_p(gdir, 0755) != 0) {
      fprintf(stderr, "erg fit: cannot create %s\n", gdir);
      rc = 2;
    } else if (erg_group_cov_save(gc, cov_path, why, sizeof why) != 0) {
      fprintf(stderr, "erg fit: the members' covariance: %s\n", why);
      rc = 2;
    } else if (!o->json)
      printf("the members' covariance written to %s\n", cov_path);
  }
  for (size_t m = 0; m < g->n && rc == 0; m++)
    if (erg_model_save(&models[m], paths[m], why, sizeof why) != 0) {
      fprintf(stderr, "erg fit: %s\n", why);
      rc = 2;
    } else if (!o->json)
      printf("model of %s written to %s\n", g->node[m], paths[m]);
  for (size_t m = 0; rc != 0 && m < g->n; m++)
    paths[m][0] = cov_path[0] = '\0';
  return rc;
}

/* Reads and prepares every member's journals; 0 or 2. */
static int group_load(struct cli_opts *o, const struct group_cli *g, struct erg_dataset *ds,
                      int *last_percent) {
  char why[512];
  for (size_t m = 0; m < g->n; m++)
    if (cli_load(o, g->node[m], &ds[m], last_percent, why, sizeof why) != 0 ||
        cli_prepare(o, &ds[m], why, sizeof why) != 0) {
      fprintf(stderr, "erg fit: node %s: %s\n", g->node[m], why);
      return 2;
    }
  return 0;
}

int cli_group_run(struct cli_opts *o, int *last_percent) {
  struct group_cli g;
  if (group_parse(o, &g) != 0)
    return 1;
  struct erg_dataset ds[ERG_GROUP_MAX_NODES];
  struct erg_idle_profile profiles[ERG_GROUP_MAX_NODES];
  struct erg_model *models = calloc(g.n, sizeof *models);
  struct erg_group_cov *gc = calloc(1, sizeof *gc);
  char why[600], paths[ERG_GROUP_MAX_NODES][GROUP_PATH_MAX] = {{0}}, cov_path[GROUP_PATH_MAX] = "";
  for (size_t m = 0; m < g.n; m++)
    erg_dataset_init(&ds[m]);
  int rc = models && gc ? group_load(o, &g, ds, last_percent) : 2;
  if (rc == 0 && o->idle) {
    rc = group_idle_record(o, &g, ds);
    for (size_t m = 0; m < g.n; m++)
      erg_dataset_free(&ds[m]);
    free(models);
    free(gc);
    return rc;
  }
  if (rc == 0)
    rc = group_profiles(o, &g, profiles);
  struct erg_idle_profile idle_sum;
  int have_sum = rc == 0 ? group_idle_load(o, &idle_sum) : 0;
  rc = have_sum < 0 ? 2 : rc;
  struct erg_group_options go;
  erg_group_options_init(&go);
  go.name = o->group;
  go.form = g.form;
  go.idle_split = (enum erg_idle_split)g.split;
  go.weights = g.weights;
  go.profiles = profiles;
  go.idle_sum = have_sum > 0 ? &idle_sum : NULL;
  go.fit = o->fit;
  go.cov_out = gc;
  if (last_percent) {
    go.fit.progress = cli_progress;
    go.fit.progress_user = last_percent;
  }
  const struct erg_dataset *mem[ERG_GROUP_MAX_NODES];
  for (size_t m = 0; m < g.n; m++)
    mem[m] = &ds[m];
  struct erg_group_result r;
  if (rc == 0 && erg_group_fit(mem, g.nodep, g.n, &go, models, &r, why, sizeof why) != 0) {
    fprintf(stderr, "erg fit: %s\n", why);
    rc = 2;
  }
  if (rc == 0 && o->json) {
    /* The form's reason is also a log line, as a fallback to pooled is. */
    fprintf(stderr, "erg fit: group %s: %s: %s\n", o->group, r.reason, erg_group_form_name(r.form));
    rc = group_install(o, &g, models, gc, paths, cov_path);
    group_print_json(o, &g, &r, models, ds, paths, cov_path);
  } else if (rc == 0) {
    group_print_table(o, &g, &r, models);
    rc = group_install(o, &g, models, gc, paths, cov_path);
  }
  for (size_t m = 0; m < g.n; m++)
    erg_dataset_free(&ds[m]);
  free(models);
  free(gc);
  return rc;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Shared meters (issue 22), through the CLI: `erg fit --group` reads the
 * members' journals and writes their models (test_fit_group.c: the joint
 * fit itself). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <fcntl.h>

#include <cmocka.h>
#include <jansson.h>

#include "erg_cli.h"
#include "erg_fit.h"
#include "fit_group_sim.h"
#include "fit_test.h"

/* The member datasets (before erg_dataset_derive) as journals
 * JOURNAL_DIR/NODE.csv, as ergd writes them. */
static void write_journals(const struct group_data *g, const char *jdir) {
  for (size_t n = 0; n < N; n++) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s.csv", jdir, nodes[n]);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "# erg-journal v1 node=%s step_seconds=5\ntime_unix_seconds,step_seconds,"
            "measured_watts,flags,cpu_seconds_per_second,disk_bytes_per_second,ncpu\n",
            nodes[n]);
    const struct erg_dataset *ds = &g->ds[n];
    for (size_t i = 0; i < ds->nrows; i++)
      fprintf(f, "%.0f,5,%.3f,%u,%.6f,%.0f,%.0f\n", ds->time_unix_seconds[i], ds->measured_watts[i],
              ds->flags[i], ds->x[0][i], ds->x[1][i], ds->x[2][i]);
    fclose(f);
  }
}

/* A data directory with the group's journals; profiles: also the members'
 * idle profiles (true idle) in DIR/models/idle. */
static void make_data_dir(char *dir, bool correlated, bool profiles) {
  char path[512];
  assert_non_null(mkdtemp(dir));
  struct group_data g;
  make_group(&g, correlated, 7);
  snprintf(path, sizeof path, "%s/journal", dir);
  assert_int_equal(mkdir(path, 0755), 0);
  write_journals(&g, path);
  free_group(&g);
  snprintf(path, sizeof path, "%s/models", dir);
  assert_int_equal(mkdir(path, 0755), 0);
  snprintf(path, sizeof path, "%s/models/idle", dir);
  assert_int_equal(mkdir(path, 0755), 0);
  struct erg_idle_profile prof[N];
  true_profiles(prof);
  char why[256];
  for (size_t n = 0; profiles && n < N; n++) {
    snprintf(path, sizeof path, "%s/models/idle/%s.json", dir, nodes[n]);
    assert_int_equal(erg_idle_profile_save(&prof[n], path, why, sizeof why), 0);
  }
}

static void remove_dir(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* Runs `erg fit` (argv NULL-terminated) with stdout and stderr in temp
 * files; returns their text (malloc'd). */
static int run(const char **argv, char **out, char **err) {
  int argc = 0;
  while (argv[argc])
    argc++;
  char *paths[2] = {fit_test_file(""), fit_test_file("")};
  int fds[2] = {STDOUT_FILENO, STDERR_FILENO}, saved[2];
  fflush(stdout);
  fflush(stderr);
  for (int k = 0; k < 2; k++) {
    saved[k] = dup(fds[k]);
    int fd = open(paths[k], O_WRONLY | O_TRUNC);
    assert_true(saved[k] >= 0 && fd >= 0);
    dup2(fd, fds[k]);
    close(fd);
  }
  int rc = erg_fit_cli(argc, (char **)argv);
  fflush(stdout);
  fflush(stderr);
  char **text[2] = {out, err};
  for (int k = 0; k < 2; k++) {
    dup2(saved[k], fds[k]);
    close(saved[k]);
    FILE *f = fopen(paths[k], "r");
    char *t = calloc(1, 1 << 20);
    t[fread(t, 1, (1 << 20) - 1, f)] = '\0';
    fclose(f);
    fit_test_unlink(paths[k]);
    if (text[k])
      *text[k] = t;
    else
      free(t);
  }
  return rc;
}

static void load_member(const char *dir, const char *node, struct erg_model *m) {
  char path[512], why[512];
  snprintf(path, sizeof path, "%s/models/%s.json", dir, node);
  assert_int_equal(erg_model_load(m, path, why, sizeof why), 0);
}

static void save_member(const char *dir, const struct erg_model *m) {
  char path[512], why[512];
  snprintf(path, sizeof path, "%s/models/%s.json", dir, m->node);
  assert_int_equal(erg_model_save(m, path, why, sizeof why), 0);
}

/* `erg fit --node` refuses a shared meter's journal; `erg fit --group`
 * fits the members (per-node, split by their idle profiles), writes their
 * models, and replaces a model that is not of the group only with --force. */
static void test_cli_group(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-fit-group-XXXXXX", *out, *err;
  make_data_dir(dir, false, true);
  const char *nodes_arg = "n1,n2,n3,n4";
  assert_int_equal(
      run((const char *[]){"fit", "--node", "n1", "--data-dir", dir, NULL}, NULL, &err), 2);
  assert_non_null(strstr(err, "node n1's power is a shared meter (journal flag 64): fit its "
                              "group with `erg fit --group NAME --nodes ...`"));
  free(err);
  /* Usage errors. */
  assert_int_equal(
      run((const char *[]){"fit", "--group", "g", "--data-dir", dir, NULL}, NULL, NULL), 1);
  assert_int_equal(
      run((const char *[]){"fit", "--group", "g", "--nodes", "n1,n1", NULL}, NULL, NULL), 1);
  assert_int_equal(
      run((const char *[]){"fit", "--group", "g", "--nodes", nodes_arg, "--form", "joint", NULL},
          NULL, NULL),
      1);
  assert_int_equal(run((const char *[]){"fit", "--group", "g", "--nodes", nodes_arg, "--idle-split",
                                        "1,2", NULL},
                       NULL, NULL),
                   1);
  assert_int_equal(
      run((const char *[]){"fit", "--group", "g", "--nodes", nodes_arg, "--out", "x.json", NULL},
          NULL, NULL),
      1);

  assert_int_equal(run((const char *[]){"fit", "--group", "rack1", "--nodes", nodes_arg,
                                        "--data-dir", dir, NULL},
                       &out, &err),
                   0);
  printf("%s", out);
  assert_non_null(strstr(out, "group rack1: per-node coefficients identified (condition"));
  assert_non_null(strstr(out, "): per-node\n"));
  assert_non_null(strstr(out, "split profile (the members' idle profiles scaled by"));
  assert_non_null(strstr(out, "held-out validation of the summed prediction"));
  assert_non_null(strstr(out, "the members' covariance written to "));
  free(out);
  free(err);
  /* The members' cross covariance beside them, of the same fit. */
  struct erg_group_cov *gc = calloc(1, sizeof *gc);
  assert_non_null(gc);
  char gpath[600], gwhy[700];
  snprintf(gpath, sizeof gpath, "%s/models/group/rack1.json", dir);
  if (erg_group_cov_load(gc, gpath, gwhy, sizeof gwhy) != 0)
    fail_msg("%s", gwhy);
  struct erg_model m[N];
  for (size_t n = 0; n < N; n++) {
    load_member(dir, nodes[n], &m[n]);
    assert_int_equal(erg_group_cov_member(gc, nodes[n], &m[n]), (int)n);
    assert_string_equal(m[n].node, nodes[n]);
    assert_string_equal(m[n].group.name, "rack1");
    assert_string_equal(m[n].group.form, "per-node");
    assert_string_equal(m[n].group.idle_split, "profile");
    assert_int_equal(m[n].group.nnodes, N);
    assert_true(fabs(m[n].idle_watts - idle_w[n]) < 0.03 * idle_w[n]);
    assert_true(m[n].ncpu == ncpu[n]);
  }
  /* n2's own model (not of the group) and n1's group model of before:
   * neither is touched without --force. */
  m[1].group.name[0] = '\0';
  m[1].idle_watts = 1;
  save_member(dir, &m[1]);
  m[0].idle_watts = 7;
  save_member(dir, &m[0]);
  assert_int_equal(run((const char *[]){"fit", "--group", "rack1", "--nodes", nodes_arg,
                                        "--data-dir", dir, NULL},
                       NULL, &err),
                   2);
  assert_non_null(strstr(err, "n2.json: it is the node's own model, not of group rack1; use "
                              "--force"));
  free(err);
  load_member(dir, "n1", &m[0]);
  load_member(dir, "n2", &m[1]);
  assert_true(m[0].idle_watts == 7 && m[1].idle_watts == 1 && !m[1].group.name[0]);
  /* --force, equal split, JSON. */
  assert_int_equal(
      run((const char *[]){"fit", "--group", "rack1", "--nodes", nodes_arg, "--data-dir", dir,
                           "--force", "--idle-split", "equal", "--json", NULL},
          &out, &err),
      0);
  assert_non_null(strstr(err, "group rack1: per-node coefficients identified"));
  json_error_t je;
  json_t *j = json_loads(out, 0, &je);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "form")), "per-node");
  assert_string_equal(json_string_value(json_object_get(j, "idle_split")), "equal");
  json_t *id = json_object_get(j, "identifiability");
  assert_true(json_real_value(json_object_get(id, "condition_number")) < 1.5);
  assert_true(json_is_true(json_object_get(id, "identified")));
  assert_int_equal(json_array_size(json_object_get(j, "members")), N);
  json_t *m2 = json_array_get(json_object_get(j, "members"), 1);
  assert_string_equal(json_string_value(json_object_get(m2, "node")), "n2");
  assert_string_equal(json_string_value(json_object_get(m2, "metrics_of")), "group");
  assert_string_equal(json_string_value(json_object_get(j, "covariance_path")), gpath);
  free(gc);
  double total = json_real_value(json_object_get(j, "idle_watts"));
  json_decref(j);
  free(out);
  free(err);
  for (size_t n = 0; n < N; n++) {
    load_member(dir, nodes[n], &m[n]);
    assert_true(fabs(m[n].idle_watts - total / N) < 1e-6);
    assert_string_equal(m[n].group.idle_split, "equal");
  }
  /* profile asked, one member without: refused, naming it. */
  char path[512];
  snprintf(path, sizeof path, "%s/models/idle/n3.json", dir);
  assert_int_equal(unlink(path), 0);
  assert_int_equal(run((const char *[]){"fit", "--group", "rack1", "--nodes", nodes_arg,
                                        "--data-dir", dir, "--idle-split", "profile", NULL},
                       NULL, &err),
                   2);
  assert_non_null(strstr(err, "node n3 has no idle profile"));
  free(err);
  /* A fit of n2's own meter (before it joined) does not replace its part
   * of the group without --force. */
  char own[600 * 32] = "# erg-journal v1 node=n2 step_seconds=5\ntime_unix_seconds,"
                       "step_seconds,measured_watts,flags,cpu_seconds_per_second\n";
  for (int i = 0; i < 500; i++)
    snprintf(own + strlen(own), sizeof own - strlen(own), "%d,5,%.3f,0,%d\n", 1763600000 + 5 * i,
             80 + 10.0 * (i % 7), i % 7);
  char *journal = fit_test_file(own), model[600];
  snprintf(model, sizeof model, "%s/models/n2.json", dir);
  assert_int_equal(
      run((const char *[]){"fit", "--node", "n2", "--journal", journal, "--out", model, NULL}, NULL,
          &err),
      2);
  assert_non_null(strstr(err, "it is node n2's part of group rack1"));
  free(err);
  assert_int_equal(run((const char *[]){"fit", "--node", "n2", "--journal", journal, "--out", model,
                                        "--force", NULL},
                       NULL, NULL),
                   0);
  load_member(dir, "n2", &m[1]);
  assert_string_equal(m[1].group.name, "");
  fit_test_unlink(journal);
  remove_dir(dir);
}

/* Busy together: the CLI says why per-node is not identified and fits
 * pooled; without idle profiles the split is equal. */
static void test_cli_group_pooled(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-fit-group-XXXXXX", *out;
  make_data_dir(dir, true, false);
  assert_int_equal(run((const char *[]){"fit", "--group", "rack1", "--nodes", "n1,n2,n3,n4",
                                        "--data-dir", dir, NULL},
                       &out, NULL),
                   0);
  printf("%s", out);
  assert_non_null(strstr(out, "group rack1: per-node coefficients not identified (cpu of n"));
  assert_non_null(strstr(out, "): pooled\n"));
  assert_non_null(strstr(out, "split equal"));
  free(out);
  struct erg_model m;
  load_member(dir, "n4", &m);
  assert_string_equal(m.group.form, "pooled");
  assert_true(m.group.max_correlation > 0.99);
  remove_dir(dir);
}

/* `erg fit --idle --group`: the meter over a window in which every member
 * was quiet is the idle sum; a busy window is refused naming a member;
 * `erg fit --group` then fixes the sum to it instead of fitting it. */
static void test_cli_group_idle(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-fit-group-XXXXXX", path[512], *out, *err;
  assert_non_null(mkdtemp(dir));
  struct group_data g;
  make_group(&g, false, 11);
  double sum = 0;
  for (size_t n = 0; n < N; n++)
    sum += idle_w[n];
  for (size_t i = 0; i < 24; i++)
    for (size_t n = 0; n < N; n++) {
      g.ds[n].x[0][i] = g.ds[n].x[1][i] = 0;
      g.ds[n].measured_watts[i] = sum + (i % 2 ? 0.5 : -0.5);
      /* The first 6 cells: before the group was configured, each member
       * on its own outlet (no flag 64): its own idle, not the group's. */
      if (i < 6) {
        g.ds[n].flags[i] = 0;
        g.ds[n].measured_watts[i] = idle_w[n];
      }
    }
  snprintf(path, sizeof path, "%s/journal", dir);
  assert_int_equal(mkdir(path, 0755), 0);
  write_journals(&g, path);
  free_group(&g);
  char from[32], to[32], busy_to[32];
  snprintf(from, sizeof from, "%.0f", T0);
  snprintf(to, sizeof to, "%.0f", T0 + 24 * 5);
  snprintf(busy_to, sizeof busy_to, "%.0f", T0 + 200 * 5);
  const char *busy[] = {"erg", "--idle", "--group", "bank", "--nodes", "n1,n2,n3,n4", "--data-dir",
                        dir,   "--from", from,      "--to", busy_to,   NULL};
  assert_int_equal(run(busy, &out, &err), 2);
  assert_non_null(strstr(err, "group bank: node n1"));
  free(out);
  free(err);
  const char *autow[] = {"erg",         "--idle",     "--group", "bank",   "--nodes",
                         "n1,n2,n3,n4", "--data-dir", dir,       "--auto", NULL};
  assert_int_equal(run(autow, NULL, &err), 1);
  assert_non_null(strstr(err, "not --auto"));
  free(err);
  /* Only the alone cells: no group meter in the window. */
  char alone_to[32];
  snprintf(alone_to, sizeof alone_to, "%.0f", T0 + 6 * 5);
  const char *alone[] = {"erg", "--idle", "--group", "bank", "--nodes", "n1,n2,n3,n4", "--data-dir",
                         dir,   "--from", from,      "--to", alone_to,  NULL};
  assert_int_equal(run(alone, &out, &err), 2);
  assert_non_null(strstr(err, "6 of the window's rows are without flag 64"));
  free(out);
  free(err);
  const char *rec[] = {"erg", "--idle", "--group", "bank", "--nodes", "n1,n2,n3,n4", "--data-dir",
                       dir,   "--from", from,      "--to", to,        NULL};
  assert_int_equal(run(rec, &out, NULL), 0);
  /* The meter's cells only: the alone ones (60..120 W) were once taken in
   * (285 W). */
  assert_non_null(strstr(out, "group bank: idle 360.00 W in all"));
  free(out);
  struct erg_idle_profile p;
  char why[512];
  snprintf(path, sizeof path, "%s/models/idle/group/bank.json", dir);
  assert_int_equal(erg_idle_profile_load(&p, path, why, sizeof why), 0);
  assert_float_equal(p.mean_watts, sum, 1e-9);
  assert_int_equal(p.cells, 18);
  assert_float_equal(p.ncpu, 4 + 8 + 16 + 32, 0);
  /* --json: the profile as JSON, as for one node (issue 38: a text line). */
  const char *recj[] = {"erg", "--idle", "--group", "bank", "--nodes", "n1,n2,n3,n4", "--data-dir",
                        dir,   "--from", from,      "--to", to,        "--json",      NULL};
  assert_int_equal(run(recj, &out, NULL), 0);
  json_error_t je;
  json_t *j = json_loads(out, 0, &je);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "node")), "bank");
  assert_string_equal(json_string_value(json_object_get(j, "group")), "bank");
  assert_int_equal(json_array_size(json_object_get(j, "nodes")), N);
  assert_float_equal(json_real_value(json_object_get(j, "mean_watts")), sum, 1e-9);
  assert_string_equal(json_string_value(json_object_get(j, "path")), path);
  json_decref(j);
  free(out);
  const char *fit[] = {"erg",        "--group", "bank",   "--nodes", "n1,n2,n3,n4",
                       "--data-dir", dir,       "--json", NULL};
  assert_int_equal(run(fit, &out, NULL), 0);
  j = json_loads(out, 0, &je);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "idle_source")), "group_idle_profile");
  assert_float_equal(json_real_value(json_object_get(j, "idle_watts")), sum, 1e-6);
  /* Each member's idle is its part of the recorded group idle, not a fit
   * of its own (issue 38: every member said "fit"): in the JSON and in
   * the model file ergd and the model page read. */
  json_t *members = json_object_get(j, "members");
  for (size_t n = 0; n < N; n++)
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(members, n), "idle_source")),
        "group_idle_profile");
  json_decref(j);
  free(out);
  struct erg_model mm;
  load_member(dir, "n3", &mm);
  assert_int_equal(mm.idle_source, ERG_IDLE_FROM_GROUP_PROFILE);
  assert_int_equal(mm.idle_rows, 18);
  const char *fit_text[] = {"erg",         "--group",    "bank", "--nodes",
                            "n1,n2,n3,n4", "--data-dir", dir,    NULL};
  assert_int_equal(run(fit_text, &out, NULL), 0);
  assert_non_null(strstr(out, "of the group's, idle_source group_idle_profile), ncpu 16"));
  free(out);
  const char *fitted[] = {"erg",        "--group", "bank",   "--nodes",           "n1,n2,n3,n4",
                          "--data-dir", dir,       "--json", "--no-idle-profile", "--force",
                          NULL};
  assert_int_equal(run(fitted, &out, NULL), 0);
  j = json_loads(out, 0, &je);
  assert_string_equal(json_string_value(json_object_get(j, "idle_source")), "fit");
  assert_string_equal(json_string_value(json_object_get(
                          json_array_get(json_object_get(j, "members"), 0), "idle_source")),
                      "group_fit");
  json_decref(j);
  free(out);
  load_member(dir, "n1", &mm);
  assert_int_equal(mm.idle_source, ERG_IDLE_FROM_GROUP_FIT);
  remove_dir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cli_group),
      cmocka_unit_test(test_cli_group_pooled),
      cmocka_unit_test(test_cli_group_idle),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

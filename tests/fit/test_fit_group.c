// SPDX-License-Identifier: GPL-3.0-or-later
/* Shared meters (issue 22): one meter for four nodes, each journal with its
 * own features and the whole meter's power (flag 64). The joint fit must
 * tell the members apart when their loads do (per-node), fall back to one
 * shared β when they do not (pooled), split the fitted idle sum as told,
 * and write one model per member that predicts that member alone. A node's
 * own fit refuses such rows; model files keep the group keys.
 * test_fit_group_cli.c: `erg fit --group`. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "erg_fit.h"
#include "fit_group_sim.h"
#include "fit_test.h"

static void derive_group(struct group_data *g) {
  char why[128];
  for (size_t n = 0; n < N; n++)
    assert_int_equal(erg_dataset_derive(&g->ds[n], 0, why, sizeof why), ERG_NDERIVED);
}

/* Member model m's prediction of dataset row i: its features by name, a
 * curve term from the row's CPU time and the model's ncpu, as ergd does. */
static double predict_row(const struct erg_model *m, const struct erg_dataset *ds, size_t i) {
  double x[ERG_FIT_MAX_FEATURES];
  for (size_t k = 0; k < m->nfeatures; k++) {
    if (erg_derived_index(m->feature[k]) >= 0) {
      x[k] = erg_model_derived_value(m, k, ds->x[0][i]);
      continue;
    }
    x[k] = NAN;
    for (size_t c = 0; c < ds->nfeatures; c++)
      if (strcmp(ds->feature[c], m->feature[k]) == 0)
        x[k] = ds->x[c][i];
  }
  return erg_model_predict(m, x);
}

/* Mean |predicted − truth| / truth of member n over the last quarter. */
static double member_error(const struct erg_model *m, const struct group_data *g, size_t n) {
  double s = 0;
  size_t cnt = 0;
  for (size_t i = ROWS * 3 / 4; i < ROWS; i++, cnt++)
    s += fabs(predict_row(m, &g->ds[n], i) - g->truth[n][i]) / g->truth[n][i];
  return 100 * s / (double)cnt;
}

static int fit_group(struct group_data *g, struct erg_group_options *o, struct erg_model *models,
                     struct erg_group_result *r, char *why, size_t whylen) {
  const struct erg_dataset *mem[N];
  for (size_t n = 0; n < N; n++)
    mem[n] = &g->ds[n];
  return erg_group_fit(mem, nodes, N, o, models, r, why, whylen);
}

/* The joint fit's covariance across the members (o.cov_out), written and
 * read back: each member found by its model (not once another fit's), its
 * own block the one in its model file; cross blocks between members
 * (pooled: the shared terms, so a's with b's is a's own). */
static void check_group_cov(const struct erg_group_cov *gc, struct erg_group_cov *back,
                            struct erg_model *models, enum erg_group_form form) {
  char path[] = "/tmp/erg-test-groupcov-XXXXXX", why[600];
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(gc->nnodes, N);
  assert_true(gc->nterms > 1);
  if (erg_group_cov_save(gc, path, why, sizeof why) != 0)
    fail_msg("%s", why);
  if (erg_group_cov_load(back, path, why, sizeof why) != 0)
    fail_msg("%s", why);
  unlink(path);
  assert_int_equal(back->nterms, gc->nterms);
  double cross = 0;
  for (size_t n = 0; n < N; n++) {
    assert_int_equal(erg_group_cov_member(back, nodes[n], &models[n]), (int)n);
    double x[ERG_FIT_MAX_FEATURES] = {0}, y[ERG_FIT_MAX_FEATURES] = {0};
    for (size_t k = 0; k < models[n].nfeatures; k++)
      for (size_t e = 0; e < models[n].nfeatures; e++) {
        x[k] = y[e] = 1;
        assert_float_equal(erg_group_cov_cross(back, n, x, n, y), models[n].cov[1 + k][1 + e],
                           1e-12 * (1 + fabs(models[n].cov[1 + k][1 + e])));
        x[k] = y[e] = 0;
      }
    for (size_t k = 0; k < models[n].nfeatures; k++)
      x[k] = models[n].feature_max[k];
    size_t o = (n + 1) % N;
    for (size_t e = 0; e < models[o].nfeatures; e++)
      y[e] = models[o].feature_max[e];
    double c = erg_group_cov_cross(back, n, x, o, y);
    cross += fabs(c);
    printf("  %s: its prediction at the training maxima with %s's: correlation %.3f\n", nodes[n],
           nodes[o],
           c / sqrt(erg_group_cov_cross(back, n, x, n, x) * erg_group_cov_cross(back, o, y, o, y)));
    if (form == ERG_GROUP_POOLED)
      assert_float_equal(c, erg_group_cov_cross(back, n, x, n, y), 1e-9 * (1 + fabs(c)));
  }
  assert_true(cross > 0);
  models[0].created_unix_seconds += 1; /* another fit's model */
  assert_int_equal(erg_group_cov_member(back, nodes[0], &models[0]), -1);
  models[0].created_unix_seconds -= 1;
  assert_int_equal(erg_group_cov_member(back, "no-such-node", &models[0]), -1);
}

/* Decorrelated loads: auto picks per-node, every member's model predicts
 * its own truth within a few % on held-out rows (the pooled form, one
 * curve for all, misses them by far more), and the sum fits the meter. */
static void test_per_node(void **state) {
  (void)state;
  struct group_data g;
  make_group(&g, false, 1);
  derive_group(&g);
  struct erg_idle_profile prof[N];
  true_profiles(prof);
  struct erg_group_options o;
  erg_group_options_init(&o);
  o.name = "rack1";
  o.idle_split = ERG_IDLE_SPLIT_PROFILE;
  o.profiles = prof;
  struct erg_model models[N];
  struct erg_group_result r;
  char why[512];
  struct erg_group_cov *gc = calloc(1, sizeof *gc), *back = calloc(1, sizeof *back);
  assert_non_null(gc);
  assert_non_null(back);
  o.cov_out = gc;
  assert_int_equal(fit_group(&g, &o, models, &r, why, sizeof why), 0);
  printf("per-node: %s; cond %.3f r %.3f; MAPE %.3f %% dyn %.3f %% R2 %.5f idle %.2f\n", r.reason,
         r.condition_number, r.max_correlation, r.metrics.mape_total_percent,
         r.metrics.mape_dynamic_percent, r.metrics.r2, r.idle_watts);
  assert_int_equal(r.form, ERG_GROUP_PER_NODE);
  assert_true(r.identified && r.curve_per_node);
  assert_true(r.condition_number >= 1 && r.condition_number < 1.5);
  assert_true(fabs(r.max_correlation) < 0.15);
  assert_non_null(strstr(r.reason, "identified (condition"));
  assert_int_equal(r.rows_joined, ROWS);
  assert_true(r.metrics.cells > 300);
  assert_true(r.metrics.mape_total_percent < 0.5);
  assert_true(r.metrics.r2 > 0.99);
  assert_true(fabs(r.idle_watts - 360) < 10);
  for (size_t n = 0; n < N; n++) {
    double err = member_error(&models[n], &g, n);
    printf("  %s: idle %.2f W, ncpu %g, held-out error %.2f %%\n", nodes[n], models[n].idle_watts,
           models[n].ncpu, err);
    assert_true(err < 2.5);
    assert_string_equal(models[n].node, nodes[n]);
    assert_true(models[n].ncpu == ncpu[n]);
    assert_string_equal(models[n].group.name, "rack1");
    assert_string_equal(models[n].group.form, "per-node");
    assert_true(models[n].group.condition_number == r.condition_number);
    /* The member's own range: its own utilisation, not the group's. */
    assert_true(models[n].utilization_max > 0.95 && models[n].utilization_max <= 1);
    assert_true(models[n].metrics.mape_total_percent == r.metrics.mape_total_percent);
    /* Its terms' covariance, its block of the joint fit's, though the joint
     * fit has more terms (here 4 × its own) than a model file holds. */
    assert_true(models[n].nfeatures * N + 1 > ERG_MODEL_COV_MAX);
    assert_int_equal(models[n].ncov, models[n].nfeatures + 1);
    double diag = 0;
    for (size_t t = 1; t < models[n].ncov; t++) {
      assert_true(models[n].cov[t][t] >= 0);
      diag += models[n].cov[t][t];
    }
    assert_true(diag > 0);
  }
  check_group_cov(gc, back, models, r.form);
  /* The pooled form gives every member the same curve: far off here. */
  struct erg_model pooled[N];
  struct erg_group_result rp;
  o.form = ERG_GROUP_POOLED;
  assert_int_equal(fit_group(&g, &o, pooled, &rp, why, sizeof why), 0);
  check_group_cov(gc, back, pooled, rp.form);
  free(gc);
  free(back);
  o.cov_out = NULL;
  assert_int_equal(rp.form, ERG_GROUP_POOLED);
  assert_non_null(strstr(rp.reason, "pooled as asked"));
  double worst = 0;
  for (size_t n = 0; n < N; n++)
    worst = fmax(worst, member_error(&pooled[n], &g, n));
  printf("  pooled on the same data: worst member %.1f %%\n", worst);
  assert_true(worst > 5);
  free_group(&g);
}

/* All four busy together: their CPU times correlate (r = 1), per-node is
 * not identified; auto falls back to pooled and says why; the summed
 * prediction is still good. */
static void test_correlated_pooled(void **state) {
  (void)state;
  struct group_data g;
  make_group(&g, true, 2);
  derive_group(&g);
  struct erg_group_options o;
  erg_group_options_init(&o);
  o.name = "rack1";
  o.form = ERG_GROUP_PER_NODE; /* asked, and still refused: not identified */
  struct erg_model models[N];
  struct erg_group_result r;
  char why[512];
  assert_int_equal(fit_group(&g, &o, models, &r, why, sizeof why), 0);
  printf("correlated: %s; MAPE %.3f %%\n", r.reason, r.metrics.mape_total_percent);
  assert_int_equal(r.form, ERG_GROUP_POOLED);
  assert_false(r.identified);
  assert_true(fabs(r.max_correlation) > 0.99);
  assert_non_null(strstr(r.reason, "not identified (cpu of n"));
  assert_non_null(strstr(r.reason, "correlate r=1.00"));
  assert_true(r.metrics.mape_total_percent < 1);
  /* The members' summed prediction is the meter's. */
  double s = 0;
  for (size_t i = ROWS * 3 / 4; i < ROWS; i++) {
    double sum = 0;
    for (size_t n = 0; n < N; n++)
      sum += predict_row(&models[n], &g.ds[n], i);
    s += fabs(sum - g.ds[0].measured_watts[i]) / g.ds[0].measured_watts[i];
  }
  assert_true(100 * s / (ROWS / 4) < 1);
  for (size_t n = 0; n < N; n++) {
    assert_string_equal(models[n].group.form, "pooled");
    assert_true(models[n].nfeatures == models[0].nfeatures);
    assert_true(models[n].ncpu == ncpu[n]);
  }
  free_group(&g);
}

/* A GPU node beside a CPU node (docs/gpu.md, "Shared meters"): only the
 * GPU node's journal has gpu_watts. g1_cpu: the GPU node's CPU time varies
 * on its own (per-node is identified), else it is 0 (a job waiting on its
 * kernels: pooled). The truth: Σ idle 100 W, the boards × 1.1, 12 W per
 * CPU second on either node. */
static void gpu_group_fit(bool g1_cpu, struct erg_model *m, struct erg_group_result *res) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 5);
  struct erg_dataset ds[2];
  const char *gn[2] = {"g1", "c1"};
  char why[512];
  for (size_t n = 0; n < 2; n++) {
    erg_dataset_init(&ds[n]);
    snprintf(ds[n].node, sizeof ds[n].node, "%s", gn[n]);
    ds[n].step_seconds = 5;
    erg_dataset_add_feature(&ds[n], "cpu_seconds_per_second", why, sizeof why);
    if (n == 0)
      erg_dataset_add_feature(&ds[n], "gpu_watts", why, sizeof why);
    erg_dataset_add_feature(&ds[n], ERG_NCPU_COLUMN, why, sizeof why);
  }
  for (int i = 0; i < 200; i++) {
    double gpu = 60 + 240 * gsl_rng_uniform(r), cpu = 8 * gsl_rng_uniform(r);
    double gcpu = g1_cpu ? 4 * gsl_rng_uniform(r) : 0;
    /* The GPUs lost for a while: nan, not 0 (the rows are left out). */
    if (i >= 150 && i < 160)
      gpu = NAN;
    double meter = 100 + 1.1 * (isnan(gpu) ? 200 : gpu) + 12 * (cpu + gcpu);
    meter = round((meter + gsl_ran_gaussian(r, 1)) * 1000) / 1000;
    erg_dataset_add_row(&ds[0], T0 + 5.0 * i, 5, meter, ERG_ROW_SHARED, (double[]){gcpu, gpu, 16});
    erg_dataset_add_row(&ds[1], T0 + 5.0 * i, 5, meter, ERG_ROW_SHARED, (double[]){cpu, 8});
  }
  gsl_rng_free(r);
  struct erg_group_options o;
  erg_group_options_init(&o);
  o.name = "gpubank";
  const struct erg_dataset *mem[2] = {&ds[0], &ds[1]};
  assert_int_equal(erg_group_fit(mem, gn, 2, &o, m, res, why, sizeof why), 0);
  printf("GPU node %s: %s; %zu rows used, idle %.2f W (truth 100)\n",
         erg_group_form_name(res->form), res->reason, res->rows_used, res->idle_watts);
  assert_true(fabs(res->idle_watts - 100) < 2);
  for (size_t n = 0; n < 2; n++)
    erg_dataset_free(&ds[n]);
}

/* A member's coefficient of a feature; NAN when its model has none. */
static double coef_of(const struct erg_model *m, const char *feature) {
  for (size_t k = 0; k < m->nfeatures; k++)
    if (!strcmp(m->feature[k], feature))
      return m->coef[k];
  return NAN;
}

/* Pooled once took only the features every member has and dropped
 * gpu_watts: the boards' power was left to the residual. Now the GPU
 * node's model has it, near the true AC factor, and the CPU node's has
 * none (its 0 W); the rows without GPU readings are left out. */
static void test_pooled_gpu(void **state) {
  (void)state;
  struct erg_model m[2];
  struct erg_group_result res;
  gpu_group_fit(false, m, &res);
  assert_int_equal(res.form, ERG_GROUP_POOLED);
  assert_non_null(strstr(res.reason, "cpu of g1 does not vary"));
  assert_true(res.rows_used <= 200 - 10);
  double bg = coef_of(&m[0], "gpu_watts"), bc = coef_of(&m[1], "cpu_seconds_per_second");
  printf("  g1 gpu_watts %.4f (truth 1.1), c1 cpu %.3f (truth 12)\n", bg, bc);
  assert_true(fabs(bg - 1.1) < 0.01);
  assert_true(isnan(coef_of(&m[1], "gpu_watts")));
  assert_true(fabs(bc - 12) < 0.2);
}

/* Per-node (both CPU times vary on their own): the GPU node's own
 * g1:gpu_watts column becomes its model's gpu_watts. */
static void test_per_node_gpu(void **state) {
  (void)state;
  struct erg_model m[2];
  struct erg_group_result res;
  gpu_group_fit(true, m, &res);
  assert_int_equal(res.form, ERG_GROUP_PER_NODE);
  double bg = coef_of(&m[0], "gpu_watts"), bg1 = coef_of(&m[0], "cpu_seconds_per_second"),
         bc = coef_of(&m[1], "cpu_seconds_per_second");
  printf("  g1 gpu_watts %.4f (truth 1.1), cpu %.3f, c1 cpu %.3f (truth 12)\n", bg, bg1, bc);
  assert_true(fabs(bg - 1.1) < 0.01);
  assert_true(isnan(coef_of(&m[1], "gpu_watts")));
  assert_true(fabs(bg1 - 12) < 0.5 && fabs(bc - 12) < 0.5);
}

/* Only Σ idle is fitted; equal parts, weights, or the recorded profiles
 * scaled to the sum. */
static void test_idle_split(void **state) {
  (void)state;
  struct group_data g;
  make_group(&g, true, 3);
  derive_group(&g);
  struct erg_group_options o;
  erg_group_options_init(&o);
  o.name = "rack1";
  o.form = ERG_GROUP_POOLED;
  struct erg_model m[N];
  struct erg_group_result r;
  char why[512];
  assert_int_equal(fit_group(&g, &o, m, &r, why, sizeof why), 0);
  double total = r.idle_watts;
  assert_true(fabs(total - 360) < 8);
  assert_true(isnan(r.idle_scale));
  for (size_t n = 0; n < N; n++) {
    assert_true(fabs(m[n].idle_watts - total / N) < 1e-9);
    assert_string_equal(m[n].group.idle_split, "equal");
  }
  const double w[N] = {1, 2, 3, 4};
  o.idle_split = ERG_IDLE_SPLIT_WEIGHTS;
  o.weights = w;
  assert_int_equal(fit_group(&g, &o, m, &r, why, sizeof why), 0);
  double sum = 0;
  for (size_t n = 0; n < N; n++) {
    assert_true(fabs(m[n].idle_watts - r.idle_watts * w[n] / 10) < 1e-9);
    assert_string_equal(m[n].group.idle_split, "weights");
    sum += m[n].idle_watts;
  }
  assert_true(fabs(sum - r.idle_watts) < 1e-9);
  struct erg_idle_profile prof[N];
  true_profiles(prof);
  o.idle_split = ERG_IDLE_SPLIT_PROFILE;
  o.profiles = prof;
  assert_int_equal(fit_group(&g, &o, m, &r, why, sizeof why), 0);
  assert_true(fabs(r.idle_scale - r.idle_watts / 360) < 1e-12);
  sum = 0;
  for (size_t n = 0; n < N; n++) {
    assert_true(fabs(m[n].idle_watts - idle_w[n] * r.idle_scale) < 1e-9);
    assert_true(fabs(m[n].idle_watts - idle_w[n]) < 0.03 * idle_w[n]);
    assert_string_equal(m[n].group.idle_split, "profile");
    sum += m[n].idle_watts;
  }
  assert_true(fabs(sum - r.idle_watts) < 1e-9);
  /* A split without its inputs, a bad weight, too few members. */
  o.profiles = NULL;
  assert_int_equal(fit_group(&g, &o, m, &r, why, sizeof why), -1);
  o.idle_split = ERG_IDLE_SPLIT_WEIGHTS;
  const double bad[N] = {1, -1, 1, 1};
  o.weights = bad;
  assert_int_equal(fit_group(&g, &o, m, &r, why, sizeof why), -1);
  assert_non_null(strstr(why, "weight"));
  const struct erg_dataset *one[1] = {&g.ds[0]};
  assert_int_equal(erg_group_fit(one, nodes, 1, &o, m, &r, why, sizeof why), -1);
  free_group(&g);
}

/* Rows join only where every member has a usable, shared row with the
 * same meter value; the rest is counted. */
static void test_join(void **state) {
  (void)state;
  struct group_data g;
  make_group(&g, false, 4);
  g.ds[1].measured_watts[10] += 1;                /* disagreeing meter */
  g.ds[2].flags[20] |= ERG_ROW_METER_MISSING;     /* unusable in one member */
  g.ds[3].flags[30] &= ~(unsigned)ERG_ROW_SHARED; /* not a shared row */
  derive_group(&g);
  struct erg_group_options o;
  erg_group_options_init(&o);
  o.name = "rack1";
  struct erg_model m[N];
  struct erg_group_result r;
  char why[512];
  assert_int_equal(fit_group(&g, &o, m, &r, why, sizeof why), 0);
  assert_int_equal(r.rows_joined, ROWS - 3);
  assert_int_equal(r.rows_mismatched, 1);
  assert_int_equal(r.rows_not_shared, 1);
  assert_true(r.curve_per_node);
  /* 250 rows: too few for 4 × 10 columns (10 rows each): per-node, linear. */
  for (size_t n = 0; n < N; n++)
    g.ds[n].nrows = 250;
  assert_int_equal(fit_group(&g, &o, m, &r, why, sizeof why), 0);
  assert_int_equal(r.form, ERG_GROUP_PER_NODE);
  assert_false(r.curve_per_node);
  assert_non_null(strstr(r.reason, "linear per node: 247 joined rows, the utilisation curves "
                                   "need 400"));
  for (size_t n = 0; n < N; n++)
    for (size_t k = 0; k < m[n].nfeatures; k++)
      assert_int_equal(erg_derived_index(m[n].feature[k]), -1);
  assert_true(m[1].coef[0] > 0); /* n2's CPU time */
  /* No flag 64 at all: nothing joins. */
  for (size_t n = 0; n < N; n++)
    for (size_t i = 0; i < g.ds[n].nrows; i++)
      g.ds[n].flags[i] = 0;
  assert_int_equal(fit_group(&g, &o, m, &r, why, sizeof why), -1);
  assert_non_null(strstr(why, "without flag 64"));
  free_group(&g);
}

/* A node's own fit never takes flag-64 rows as its power: a journal of
 * them is refused, naming the group command; a few among its own rows are
 * skipped. */
static void test_single_node_refuses_shared(void **state) {
  (void)state;
  struct group_data g;
  make_group(&g, false, 5);
  struct erg_model m;
  char why[512];
  assert_int_equal(erg_fit(&g.ds[0], NULL, &m, why, sizeof why), -1);
  assert_non_null(strstr(why, "node n1's power is a shared meter (journal flag 64): fit its "
                              "group with `erg fit --group NAME --nodes ...`"));
  /* Mixed: the node's own meter (its truth) for all but 100 rows. */
  for (size_t i = 0; i < ROWS; i++)
    if (i >= 100) {
      g.ds[0].flags[i] = 0;
      g.ds[0].measured_watts[i] = g.truth[0][i];
    }
  assert_int_equal(erg_fit(&g.ds[0], NULL, &m, why, sizeof why), 0);
  assert_int_equal(m.train_rows, ROWS - 100);
  assert_true(fabs(m.idle_watts - 60) < 2);
  free_group(&g);
}

/* The group keys survive a save and load; a file without them loads as a
 * node's own model; malformed ones are refused. */
static void test_model_group_keys(void **state) {
  (void)state;
  struct erg_model m = {0}, back;
  char why[256];
  m.version = ERG_MODEL_VERSION;
  snprintf(m.node, sizeof m.node, "n2");
  m.nfeatures = 1;
  snprintf(m.feature[0], sizeof m.feature[0], "cpu_seconds_per_second");
  m.coef[0] = 12.5;
  m.feature_max[0] = 8;
  m.idle_watts = 80;
  snprintf(m.validation, sizeof m.validation, "holdout last 25%%");
  m.metrics.mape_total_percent = m.metrics.mape_dynamic_percent = m.metrics.r2 = NAN;
  struct erg_model_group *gr = &m.group;
  snprintf(gr->name, sizeof gr->name, "rack1");
  gr->nnodes = 2;
  snprintf(gr->nodes[0], sizeof gr->nodes[0], "n1");
  snprintf(gr->nodes[1], sizeof gr->nodes[1], "n2");
  snprintf(gr->form, sizeof gr->form, "per-node");
  snprintf(gr->idle_split, sizeof gr->idle_split, "profile");
  gr->idle_watts = 140;
  gr->idle_fraction = 80.0 / 140;
  gr->idle_scale = 0.98;
  gr->condition_number = INFINITY; /* stored as null */
  gr->max_correlation = 0.42;
  snprintf(gr->max_correlation_nodes[0], ERG_FIT_NAME_MAX, "n1");
  snprintf(gr->max_correlation_nodes[1], ERG_FIT_NAME_MAX, "n2");
  char *path = fit_test_file("");
  assert_int_equal(erg_model_save(&m, path, why, sizeof why), 0);
  FILE *f = fopen(path, "r");
  char text[8192];
  text[fread(text, 1, sizeof text - 1, f)] = '\0';
  fclose(f);
  assert_non_null(strstr(text, "\"metrics_of\": \"group\""));
  assert_non_null(strstr(text, "\"group_condition_number\": null"));
  assert_int_equal(erg_model_load(&back, path, why, sizeof why), 0);
  assert_string_equal(back.group.name, "rack1");
  assert_int_equal(back.group.nnodes, 2);
  assert_string_equal(back.group.nodes[1], "n2");
  assert_string_equal(back.group.form, "per-node");
  assert_string_equal(back.group.idle_split, "profile");
  assert_true(back.group.idle_watts == 140 && back.group.idle_scale == 0.98);
  assert_true(fabs(back.group.idle_fraction - 80.0 / 140) < 1e-15);
  assert_true(isnan(back.group.condition_number));
  assert_true(back.group.max_correlation == 0.42);
  assert_string_equal(back.group.max_correlation_nodes[0], "n1");
  /* Without the keys: a node's own model, as before. */
  m.group.name[0] = '\0';
  assert_int_equal(erg_model_save(&m, path, why, sizeof why), 0);
  assert_int_equal(erg_model_load(&back, path, why, sizeof why), 0);
  assert_string_equal(back.group.name, "");
  assert_int_equal(back.group.nnodes, 0);
  fit_test_unlink(path);
  path = fit_test_file("{\"format\": \"erg-model\", \"version\": 1, \"node\": \"n1\", "
                       "\"idle_watts\": 50, \"features\": [], \"group\": \"g\", "
                       "\"group_nodes\": \"n1\", \"group_form\": \"pooled\", "
                       "\"idle_split\": \"equal\"}");
  assert_int_equal(erg_model_load(&back, path, why, sizeof why), -1);
  assert_non_null(strstr(why, "group"));
  fit_test_unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_per_node),
      cmocka_unit_test(test_correlated_pooled),
      cmocka_unit_test(test_pooled_gpu),
      cmocka_unit_test(test_per_node_gpu),
      cmocka_unit_test(test_idle_split),
      cmocka_unit_test(test_join),
      cmocka_unit_test(test_single_node_refuses_shared),
      cmocka_unit_test(test_model_group_keys),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

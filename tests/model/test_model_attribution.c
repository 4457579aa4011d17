// SPDX-License-Identifier: GPL-3.0-or-later
/* The collector's attribution glue over random cells, through its own path:
 * samples go into an erg_grid, erg_grid_finalize hands each cell to a
 * callback that calls erg_cell_attribute exactly as ergd's collector_cell
 * does. Checks conservation (idle kept apart + Σ shares = measured, or the
 * prediction when estimated), estimated marking only with a model, equal
 * shares for identical keys, and the no-model fallback (CPU share, idle by
 * the same policy as with a model). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../erg_test.h"

#include "collector_int.h"
#include "erg_collector.h"
#include "erg_fit.h"

#define NS 1000000000ULL
#define T0 1700000000LL
#define STEP 5u
#define NKEYS 12 /* keys per sample */
#define NAMES 20 /* distinct key names */

struct check {
  const struct erg_cell_model *cm;
  double idle_watts;
  /* what the cell was fed */
  int has_meter, has_agent, twins; /* twins: keys "twin-a", "twin-b" identical */
  size_t cells, estimated, attributed;
};

static double urand(unsigned *seed) { return rand_r(seed) / (double)RAND_MAX; }

static void model_init(struct erg_model *m, int *map, unsigned *seed) {
  memset(m, 0, sizeof *m);
  m->version = ERG_MODEL_VERSION;
  m->nfeatures = 4;
  strcpy(m->feature[0], "cpu_seconds_per_second");
  strcpy(m->feature[1], "disk_bytes_per_second");
  strcpy(m->feature[2], "instructions_per_second");
  strcpy(m->feature[3], "unknown_per_second"); /* not measured: x = 0 */
  m->coef[0] = 5 + 40 * urand(seed);
  m->coef[1] = urand(seed) < 0.3 ? 0 : 1e-7 * urand(seed);
  m->coef[2] = urand(seed) < 0.5 ? 0 : 1e-9 * urand(seed);
  m->coef[3] = 3;
  m->idle_watts = 20 + 100 * urand(seed);
  for (size_t k = 0; k < m->nfeatures; k++)
    map[k] = erg_feature_index(m->feature[k]);
}

/* Without a model: idle = min(idle_watts, measured), the rest by CPU share
 * (keys' CPU seconds and [system]'s), the idle part by the policy. */
static void check_cpu_share(const struct check *ck, const struct erg_grid_result *r,
                            const struct erg_attr_share *sh, const struct erg_cell_power *pw) {
  const struct erg_grid_cell *c = r->cell;
  int policy = ck->cm ? ck->cm->idle_policy : ERG_IDLE_SEPARATE;
  double p = r->measured_watts, idle = fmin(ck->idle_watts, p), dyn = p - idle, total = 0;
  size_t active = 0, n = c->nkeys + 1;
  double cpu[NAMES + 3];
  for (size_t i = 0; i < n; i++) {
    cpu[i] = i < c->nkeys ? c->keys[i].cpu_seconds : c->system_cpu_seconds;
    total += cpu[i];
    active += cpu[i] > 0;
  }
  assert_float_equal(pw->idle_watts, idle, 1e-12);
  assert_float_equal(pw->idle_separate_watts, policy == ERG_IDLE_SEPARATE ? idle : 0, 1e-12);
  for (size_t i = 0; i < n; i++) {
    double want;
    if (total > 0 && policy == ERG_IDLE_PROPORTIONAL)
      want = p * cpu[i] / total;
    else if (total > 0)
      want = dyn * cpu[i] / total +
             (policy == ERG_IDLE_EVEN && cpu[i] > 0 ? idle / (double)active : 0);
    else /* no CPU time: the dynamic power is [system]'s */
      want = (i == c->nkeys ? dyn + (policy == ERG_IDLE_PROPORTIONAL ? idle : 0) : 0) +
             (policy == ERG_IDLE_EVEN ? idle / (double)n : 0);
    assert_float_equal(sh[i].watts, want, 1e-9 * (1 + p));
  }
}

static void on_cell(void *user, const struct erg_grid_result *r) {
  struct check *ck = user;
  struct erg_attr_share sh[NAMES + 3];
  struct erg_cell_power pw;
  ck->cells++;
  assert_true(r->cell->nkeys <= NAMES + 2);
  int rc = erg_cell_attribute(ck->cm, ck->idle_watts, r, sh, &pw);
  bool model = ck->cm && ck->cm->model;
  bool no_meter = r->flags & ERG_CELL_NO_METER, no_agent = r->flags & ERG_CELL_NO_AGENT;
  if (no_meter && (!model || no_agent)) {
    assert_int_equal(rc, 1);
    return;
  }
  assert_int_equal(rc, 0);
  ck->attributed++;
  assert_int_equal(pw.estimated, no_meter);
  ck->estimated += pw.estimated;
  if (no_meter)
    assert_float_equal(pw.total_watts, pw.modelled_watts, 1e-9 * (1 + pw.modelled_watts));
  else
    assert_float_equal(pw.total_watts, r->measured_watts, 1e-12);
  if (model && !no_agent)
    assert_true(isfinite(pw.modelled_watts));
  double sum = pw.idle_separate_watts;
  for (size_t i = 0; i <= r->cell->nkeys; i++) {
    assert_true(sh[i].watts >= 0);
    sum += sh[i].watts;
  }
  assert_string_equal(sh[r->cell->nkeys].key, "[system]");
  assert_float_equal(sum, pw.total_watts, 1e-9 * (1 + pw.total_watts));
  assert_float_equal(pw.idle_watts + pw.dynamic_watts, pw.total_watts, 1e-9 * (1 + pw.total_watts));
  double a = NAN, b = NAN;
  for (size_t i = 0; i < r->cell->nkeys; i++) {
    if (!strcmp(sh[i].key, "twin-a"))
      a = sh[i].watts;
    if (!strcmp(sh[i].key, "twin-b"))
      b = sh[i].watts;
  }
  if (ck->twins && !no_agent)
    assert_float_equal(a, b, 1e-9 * (1 + a));
  if (!model)
    check_cpu_share(ck, r, sh, &pw);
}

/* Random agent samples (1 s, with jitter and gaps) and meter energy for
 * one cell, then the cell is finalised through the callback. */
static void feed_cell(struct erg_grid *g, struct check *ck, int64_t t0, unsigned *seed) {
  ck->has_meter = urand(seed) > 0.2;
  ck->has_agent = urand(seed) > 0.1;
  ck->twins = urand(seed) > 0.3;
  double watts = 300 * urand(seed);
  if (ck->has_meter)
    erg_grid_add_energy(g, 0, (uint64_t)t0 * NS, (uint64_t)(t0 + STEP) * NS, watts * STEP);
  for (unsigned s = 0; ck->has_agent && s < STEP; s++) {
    struct erg_grid_proc p[NKEYS + 2];
    size_t n = (size_t)(rand_r(seed) % NKEYS);
    char names[NKEYS][16];
    double keys_cpu = 0;
    for (size_t i = 0; i < n; i++) {
      snprintf(names[i], sizeof names[i], "k%u", (unsigned)(rand_r(seed) % NAMES));
      p[i] = (struct erg_grid_proc){names[i],
                                    urand(seed) * (urand(seed) < 0.2 ? 0 : 0.5),
                                    urand(seed) < 0.5 ? 0 : 1e7 * urand(seed),
                                    urand(seed) < 0.5 ? 0 : 1e9 * urand(seed),
                                    0,
                                    0};
      keys_cpu += p[i].cpu_seconds;
    }
    if (ck->twins) {
      struct erg_grid_proc twin = {"twin-a", 0.3, 1e6, 5e8, 6e8, 0};
      p[n++] = twin;
      twin.key = "twin-b";
      p[n++] = twin;
      keys_cpu += 0.6;
    }
    double busy = keys_cpu + (urand(seed) < 0.5 ? 0 : 0.3 * urand(seed));
    erg_grid_add_procs(g, (uint64_t)(t0 + s) * NS, (uint64_t)(t0 + s + 1) * NS, busy,
                       busy - keys_cpu, p, n);
  }
  erg_grid_finalize(g, t0 + STEP, 0, on_cell, ck);
}

static void run_cells(const struct erg_cell_model *cm, struct check *ck, int ncells,
                      unsigned seed) {
  struct erg_grid g;
  erg_grid_init(&g, STEP);
  ck->cm = cm;
  for (int i = 0; i < ncells; i++)
    feed_cell(&g, ck, T0 + (int64_t)i * STEP, &seed);
  erg_grid_free(&g);
  assert_int_equal(ck->cells, (size_t)ncells);
}

static void test_model_conserves(void **state) {
  (void)state;
  unsigned seed = 11;
  for (int policy = 0; policy < 3; policy++) {
    struct erg_model m;
    int map[ERG_FIT_MAX_FEATURES];
    model_init(&m, map, &seed);
    struct erg_cell_model cm = {&m, map, policy, NULL};
    struct check ck = {.idle_watts = 50};
    run_cells(&cm, &ck, 2000, seed + (unsigned)policy);
    assert_true(ck.estimated > 100); /* no meter, agent data, model: estimated */
    assert_true(ck.attributed > 1500);
  }
}

/* Without a model the idle policy applies as with one, and every cell
 * conserves: idle kept apart + Σ keys + [system] = measured. */
static void test_no_model_cpu_share(void **state) {
  (void)state;
  for (int policy = 0; policy < 3; policy++) {
    struct check ck = {.idle_watts = 60};
    struct erg_cell_model none = {.idle_policy = policy};
    run_cells(&none, &ck, 2000, 5u + (unsigned)policy);
    assert_int_equal(ck.estimated, 0); /* never estimated without a model */
    assert_true(ck.attributed > 1500);
  }
  struct check ck2 = {.idle_watts = 60};
  run_cells(NULL, &ck2, 500, 6);
  assert_int_equal(ck2.estimated, 0);
}

/* ergd hands the configured policy over for a node without a model file. */
static void test_no_model_policy_wiring(void **state) {
  (void)state;
  struct erg_collector_config cfg;
  erg_collector_config_defaults(&cfg);
  snprintf(cfg.model_dir, sizeof cfg.model_dir, "/nonexistent/erg-models");
  cfg.idle_policy = ERG_IDLE_PROPORTIONAL;
  struct node_model *nm = node_model_open(&cfg, "n1", "/nonexistent/erg-journal");
  assert_non_null(nm);
  struct erg_cell_model cm = node_model_cell(nm);
  assert_null(cm.model);
  assert_int_equal(cm.idle_policy, ERG_IDLE_PROPORTIONAL);
  node_model_close(nm);
  erg_collector_config_free(&cfg);
}

/* The prediction of an estimated cell is the model on the node totals. */
static void test_estimated_is_prediction(void **state) {
  (void)state;
  struct erg_model m;
  int map[ERG_FIT_MAX_FEATURES];
  unsigned seed = 3;
  model_init(&m, map, &seed);
  struct erg_cell_model cm = {&m, map, ERG_IDLE_SEPARATE, NULL};
  struct erg_grid g;
  erg_grid_init(&g, STEP);
  struct erg_grid_proc p[2] = {{"a", 2.0, 1e7, 1e9, 0, 0}, {"b", 1.0, 0, 0, 0, 0}};
  erg_grid_add_procs(&g, (uint64_t)T0 * NS, (uint64_t)(T0 + STEP) * NS, 3.5, 0.5, p, 2);
  struct check ck = {.cm = &cm};
  struct erg_grid_cell *c = &g.cells[(T0 / STEP) % ERG_GRID_SLOTS];
  double x[4] = {3.5 / STEP, 1e7 / STEP, 1e9 / STEP, 0};
  double want = erg_model_predict(&m, x);
  struct erg_grid_result r = {
      .t0 = T0, .step = STEP, .measured_watts = NAN, .flags = ERG_CELL_NO_METER, .cell = c};
  struct erg_attr_share sh[3];
  struct erg_cell_power pw;
  assert_int_equal(erg_cell_attribute(&cm, 0, &r, sh, &pw), 0);
  assert_true(pw.estimated);
  assert_float_equal(pw.modelled_watts, want, 1e-9 * want);
  assert_float_equal(pw.total_watts, want, 1e-9 * want);
  /* [system] gets the unseen busy CPU (0.5 s) and no other counter. */
  double sys_x[ERG_NFEATURES];
  erg_grid_system_rates(c, STEP, sys_x);
  assert_float_equal(sys_x[ERG_FEAT_CPU], 0.5 / STEP, 1e-12);
  assert_float_equal(sys_x[ERG_FEAT_DISK], 0, 0);
  (void)ck;
  erg_grid_free(&g);
}

/* Issue 26: GPU board power as a model feature (gpu_watts). Two GPUs: GPU
 * 0 at 300 W used only by "gpujob" (share 1), GPU 1 at 50 W used by no
 * process the agent saw; "cpujob" busy on one CPU, "idle" doing nothing.
 * The meter reads exactly the model (idle 100 W + 20 W per CPU + 1.1 W per
 * board W): the GPU job gets 1.1 x 300 W, the CPU job its 20 W. GPU 1's
 * 1.1 x 50 W: when the agent said it was idle (no process had activity),
 * idle power, which follows the idle policy as β0 does; when it was busy
 * for a process the agent does not see, [system]'s. Without GPU data the
 * CPU job's share is what a CPU-only model gives. */
static void gpu_cell(struct erg_grid *g, bool gpus, bool idle) {
  struct erg_grid_proc p[3] = {{.key = "cpujob", .cpu_seconds = 1.0 * STEP},
                               {.key = "gpujob", .gpu_joules = gpus ? 300.0 * STEP : 0},
                               {.key = "idle"}};
  uint64_t t0 = (uint64_t)T0 * NS, t1 = (uint64_t)(T0 + STEP) * NS;
  erg_grid_add_procs(g, t0, t1, 1.0 * STEP, 0, p, 3);
  if (gpus)
    erg_grid_add_gpu(g, t0, t1, 350.0 * STEP, idle ? 50.0 * STEP : 0);
}

static void test_gpu_feature(void **state) {
  (void)state;
  struct erg_model m = {
      .version = ERG_MODEL_VERSION, .nfeatures = 2, .idle_watts = 100, .coef = {20, 1.1}};
  strcpy(m.feature[0], "cpu_seconds_per_second");
  strcpy(m.feature[1], "gpu_watts");
  int map[2] = {erg_feature_index(m.feature[0]), erg_feature_index(m.feature[1])};
  assert_int_equal(map[1], ERG_FEAT_GPU);
  for (int policy = ERG_IDLE_SEPARATE; policy <= ERG_IDLE_PROPORTIONAL; policy++) {
    struct erg_cell_model cm = {&m, map, policy, NULL};
    for (int v = 2; v >= 0; v--) { /* 2: GPU 1 idle, 1: busy for nobody seen, 0: no GPUs */
      bool gpus = v > 0, idle_gpu = v == 2;
      struct erg_grid g;
      erg_grid_init(&g, STEP);
      gpu_cell(&g, gpus, idle_gpu);
      struct erg_grid_cell *c = &g.cells[(T0 / STEP) % ERG_GRID_SLOTS];
      double node[ERG_NFEATURES], sys[ERG_NFEATURES];
      erg_grid_node_rates(c, STEP, node);
      erg_grid_system_rates(c, STEP, sys);
      assert_float_equal(node[ERG_FEAT_GPU], gpus ? 350 : 0, 1e-9);
      assert_float_equal(sys[ERG_FEAT_GPU], gpus ? 50 : 0, 1e-9);
      assert_float_equal(erg_grid_gpu_idle_rate(c, STEP), idle_gpu ? 50 : 0, 1e-9);
      assert_int_equal((c->seen >> ERG_FEAT_GPU) & 1, gpus);
      double measured = 100 + 20 + (gpus ? 1.1 * 350 : 0);
      struct erg_grid_result r = {.t0 = T0, .step = STEP, .measured_watts = measured, .cell = c};
      struct erg_attr_share sh[4];
      struct erg_cell_power pw;
      assert_int_equal(erg_cell_attribute(&cm, 0, &r, sh, &pw), 0);
      assert_float_equal(pw.modelled_watts, measured, 1e-9);
      double sum = pw.idle_separate_watts;
      for (int i = 0; i < 4; i++)
        sum += sh[i].watts;
      assert_float_equal(sum, measured, 1e-9);
      double idle = 100 + (idle_gpu ? 55 : 0);
      assert_float_equal(pw.idle_watts, idle, 1e-9);
      assert_float_equal(pw.gpu_idle_watts, idle_gpu ? 55 : 0, 1e-9);
      assert_float_equal(pw.dynamic_watts, measured - idle, 1e-9);
      assert_string_equal(sh[1].key, "gpujob");
      assert_string_equal(sh[3].key, "[system]");
      double dyn[4] = {20, gpus ? 330 : 0, 0, gpus && !idle_gpu ? 55 : 0}, act = 0, nact = 0;
      for (int i = 0; i < 4; i++)
        act += dyn[i], nact += dyn[i] > 0;
      for (int i = 0; i < 4; i++) {
        double want = dyn[i] + (policy == ERG_IDLE_EVEN           ? (dyn[i] > 0 ? idle / nact : 0)
                                : policy == ERG_IDLE_PROPORTIONAL ? idle * dyn[i] / act
                                                                  : 0);
        erg_assert(fabs(sh[i].watts - want) <= 1e-9, "policy %d, GPUs %d: %s %.6f W, want %.6f W",
                   policy, v, sh[i].key, sh[i].watts, want);
      }
      assert_float_equal(pw.idle_separate_watts, policy == ERG_IDLE_SEPARATE ? idle : 0, 1e-9);
      erg_grid_free(&g);
    }
  }
  /* The GPUs lost (no readings) while the boards still draw 350 W: the
   * excess over the prediction is [system]'s, the CPU job keeps 20 W. */
  struct erg_grid g;
  erg_grid_init(&g, STEP);
  gpu_cell(&g, false, false);
  struct erg_cell_model cm = {&m, map, ERG_IDLE_SEPARATE, NULL};
  struct erg_grid_result r = {.t0 = T0,
                              .step = STEP,
                              .measured_watts = 100 + 20 + 1.1 * 350,
                              .cell = &g.cells[(T0 / STEP) % ERG_GRID_SLOTS]};
  struct erg_attr_share sh[4];
  struct erg_cell_power pw;
  assert_int_equal(erg_cell_attribute(&cm, 0, &r, sh, &pw), 0);
  assert_float_equal(sh[0].watts, 20, 1e-9);
  assert_float_equal(sh[1].watts + sh[2].watts, 0, 1e-9);
  assert_float_equal(sh[3].watts, 1.1 * 350, 1e-9);
  erg_grid_free(&g);
  /* A sample spanning two cells: its board energy split by overlap. */
  erg_grid_init(&g, STEP);
  erg_grid_add_gpu(&g, (uint64_t)T0 * NS + 2500000000ULL, (uint64_t)T0 * NS + 7500000000ULL, 100,
                   40);
  assert_float_equal(g.cells[(T0 / STEP) % ERG_GRID_SLOTS].gpu_joules, 50, 1e-9);
  assert_float_equal(g.cells[(T0 / STEP + 1) % ERG_GRID_SLOTS].gpu_joules, 50, 1e-9);
  erg_grid_free(&g);
}

/* A model with the utilisation curve (derived features, docs/model.md):
 * conserves under every policy, predicts from the node's utilisation and
 * splits the curve's power by CPU share. */
static void curve_model(struct erg_model *m, int *map) {
  memset(m, 0, sizeof *m);
  m->version = ERG_MODEL_VERSION;
  m->nfeatures = 1 + ERG_NDERIVED;
  m->ncpu = 4;
  m->idle_watts = 80;
  strcpy(m->feature[0], "cpu_seconds_per_second");
  m->coef[0] = 5;
  map[0] = ERG_FEAT_CPU;
  for (int d = 0; d < ERG_NDERIVED; d++) {
    strcpy(m->feature[1 + d], erg_derived_names[d]);
    m->coef[1 + d] = 30.0 * (d + 1);
    map[1 + d] = ERG_NFEATURES + d;
  }
}

static void test_curve_model(void **state) {
  (void)state;
  struct erg_model m;
  int map[ERG_FIT_MAX_FEATURES];
  curve_model(&m, map);
  for (int policy = 0; policy < 3; policy++) {
    struct erg_cell_model cm = {&m, map, policy, NULL};
    struct check ck = {.idle_watts = 50};
    run_cells(&cm, &ck, 2000, 40u + (unsigned)policy);
    assert_true(ck.attributed > 1500);
  }
  struct erg_cell_model cm = {&m, map, ERG_IDLE_SEPARATE, NULL};
  struct erg_grid g;
  erg_grid_init(&g, STEP);
  /* 2 + 1 CPU-seconds of keys and 0.5 of [system] per second: u = 3.5/4. */
  struct erg_grid_proc p[2] = {{"a", 2.0 * STEP, 0, 0, 0, 0}, {"b", 1.0 * STEP, 0, 0, 0, 0}};
  erg_grid_add_procs(&g, (uint64_t)T0 * NS, (uint64_t)(T0 + STEP) * NS, 3.5 * STEP, 0.5 * STEP, p,
                     2);
  struct erg_grid_cell *c = &g.cells[(T0 / STEP) % ERG_GRID_SLOTS];
  double want = 80 + 5 * 3.5;
  for (int d = 0; d < ERG_NDERIVED; d++)
    want += m.coef[1 + d] * erg_derived_value(d, 3.5, 4);
  struct erg_grid_result r = {.t0 = T0, .step = STEP, .measured_watts = 300, .cell = c};
  struct erg_attr_share sh[3];
  struct erg_cell_power pw;
  assert_int_equal(erg_cell_attribute(&cm, 0, &r, sh, &pw), 0);
  assert_float_equal(pw.modelled_watts, want, 1e-9 * want);
  assert_float_equal(pw.dynamic_watts, 220, 1e-9);
  assert_float_equal(sh[0].watts, 220 * 2 / 3.5, 1e-9);
  assert_float_equal(sh[1].watts, 220 * 1 / 3.5, 1e-9);
  assert_float_equal(sh[2].watts, 220 * 0.5 / 3.5, 1e-9);
  erg_grid_free(&g);
}

/* The curve's power split sample by sample: key a runs alone at u = 0.1
 * for 2 s, then beside b at u = 0.875 for 3 s. curve_model's curve is
 * convex (Bernstein coefficients 30·j(j+1)/2), so its power per CPU-second
 * is lower at the light load: a gets less than its CPU share of the
 * cell, b more; [system] (no CPU time) none. Without the grid's
 * coefficients the same cell is split by CPU share (test_curve_model). */
static double curve_at(const struct erg_model *m, double cpu_rate) {
  double w = 0;
  for (int d = 0; d < ERG_NDERIVED; d++)
    w += m->coef[1 + d] * erg_derived_value(d, cpu_rate, m->ncpu);
  return w;
}

static void test_curve_per_sample(void **state) {
  (void)state;
  struct erg_model m;
  int map[ERG_FIT_MAX_FEATURES];
  curve_model(&m, map);
  struct erg_cell_model cm = {&m, map, ERG_IDLE_SEPARATE, NULL};
  double coef[ERG_NDERIVED];
  erg_cell_model_curve(&cm, 8, coef); /* another CPU count: none */
  for (int d = 0; d < ERG_NDERIVED; d++)
    assert_float_equal(coef[d], 0, 0);
  struct erg_grid g;
  erg_grid_init(&g, STEP);
  g.ncpu = m.ncpu;
  erg_cell_model_curve(&cm, g.ncpu, g.curve_coef);
  for (int d = 0; d < ERG_NDERIVED; d++)
    assert_float_equal(g.curve_coef[d], m.coef[1 + d], 0);
  struct erg_grid_proc p1[1] = {{"a", 0.8, 0, 0, 0, 0}};
  erg_grid_add_procs(&g, (uint64_t)T0 * NS, (uint64_t)(T0 + 2) * NS, 0.8, 0, p1, 1);
  struct erg_grid_proc p2[2] = {{"a", 3.0, 0, 0, 0, 0}, {"b", 7.5, 0, 0, 0, 0}};
  erg_grid_add_procs(&g, (uint64_t)(T0 + 2) * NS, (uint64_t)(T0 + STEP) * NS, 10.5, 0, p2, 2);
  struct erg_grid_cell *c = &g.cells[(T0 / STEP) % ERG_GRID_SLOTS];
  double lo = curve_at(&m, 0.4) / 0.4, hi = curve_at(&m, 3.5) / 3.5;
  double wa = 0.8 * lo + 3.0 * hi, wb = 7.5 * hi;
  assert_float_equal(c->extra[0].curve_joules, wa, 1e-9 * wa);
  assert_float_equal(c->extra[1].curve_joules, wb, 1e-9 * wb);
  assert_float_equal(c->curve_joules, wa + wb, 1e-9 * wa);
  struct erg_grid_result r = {.t0 = T0, .step = STEP, .measured_watts = 300, .cell = c};
  struct erg_attr_share sh[3];
  struct erg_cell_power pw;
  assert_int_equal(erg_cell_attribute(&cm, 0, &r, sh, &pw), 0);
  /* The cell's curve power is the mean of its samples' ((wa + wb) / 5 s),
   * a's part of it wa / 5 s; the linear term by CPU time. */
  double sa = 5 * 3.8 / STEP + wa / STEP, sb = 5 * 7.5 / STEP + wb / STEP;
  assert_float_equal(pw.dynamic_watts, 220, 1e-9);
  assert_float_equal(sh[0].watts, 220 * sa / (sa + sb), 1e-9);
  assert_float_equal(sh[1].watts, 220 * sb / (sa + sb), 1e-9);
  assert_float_equal(sh[2].watts, 0, 1e-12);
  double cpu_share = 220 * (5 * 3.8 / STEP + (wa + wb) / STEP * 3.8 / 11.3) / (sa + sb);
  assert_true(sh[0].watts < cpu_share - 1);
  /* The same load as one sample in two slices: the sample's curve energy
   * is its slices' (not the curve at their mean load), split by the
   * sample's CPU shares (a key's CPU within a sample is not known). */
  struct erg_grid_slice sl[2] = {
      {(uint64_t)(T0 + STEP) * NS, (uint64_t)(T0 + STEP + 2) * NS, 0.8},
      {(uint64_t)(T0 + STEP + 2) * NS, (uint64_t)(T0 + 2 * STEP) * NS, 10.5}};
  struct erg_grid_proc p3[2] = {{"a", 3.8, 0, 0, 0, 0}, {"b", 7.5, 0, 0, 0, 0}};
  erg_grid_add_procs_sliced(&g, (uint64_t)(T0 + STEP) * NS, (uint64_t)(T0 + 2 * STEP) * NS, 11.3, 0,
                            p3, 2, sl, 2);
  c = &g.cells[((T0 + STEP) / STEP) % ERG_GRID_SLOTS];
  double curve = 2 * curve_at(&m, 0.4) + 3 * curve_at(&m, 3.5);
  assert_float_equal(c->curve_joules, curve, 1e-9 * curve);
  assert_float_equal(c->extra[0].curve_joules, curve * 3.8 / 11.3, 1e-9 * curve);
  assert_float_equal(c->extra[1].curve_joules, curve * 7.5 / 11.3, 1e-9 * curve);
  erg_grid_free(&g);
}

/* Issue 14, item 1, as ergd runs it: a job writing 12 MB/s where the model
 * was trained up to 10 MB/s, beside a CPU job, in a cell that draws the
 * linear truth. Each key gets its own linear part (a clamp gave the I/O
 * job 10/12 of its share of the dynamic power and the rest to the CPU
 * job), and the cell is flagged beyond the training range with the
 * feature and both values; one inside the range is not. */
static void test_beyond_training(void **state) {
  (void)state;
  struct erg_model m;
  memset(&m, 0, sizeof m);
  m.version = ERG_MODEL_VERSION;
  m.nfeatures = 2;
  m.idle_watts = 80;
  strcpy(m.feature[0], "cpu_seconds_per_second");
  strcpy(m.feature[1], "disk_bytes_per_second");
  m.coef[0] = 10;
  m.coef[1] = 1e-6;
  m.feature_max[0] = 4;
  m.feature_max[1] = 10e6;
  int map[2] = {ERG_FEAT_CPU, ERG_FEAT_DISK};
  struct erg_cell_model cm = {&m, map, ERG_IDLE_SEPARATE, NULL};
  for (int pass = 0; pass < 2; pass++) {
    double disk = pass ? 8e6 : 12e6;
    struct erg_grid g;
    erg_grid_init(&g, STEP);
    struct erg_grid_proc p[2] = {{"cpu", 1.0 * STEP, 0, 0, 0, 0}, {"io", 0, disk * STEP, 0, 0, 0}};
    erg_grid_add_procs(&g, (uint64_t)T0 * NS, (uint64_t)(T0 + STEP) * NS, 1.0 * STEP, 0, p, 2);
    struct erg_grid_cell *c = &g.cells[(T0 / STEP) % ERG_GRID_SLOTS];
    double measured = 80 + 10 + disk * 1e-6;
    struct erg_grid_result r = {.t0 = T0, .step = STEP, .measured_watts = measured, .cell = c};
    struct erg_attr_share sh[3];
    struct erg_cell_power pw;
    assert_int_equal(erg_cell_attribute(&cm, 0, &r, sh, &pw), 0);
    int io = strcmp(sh[0].key, "io") == 0 ? 0 : 1;
    assert_float_equal(sh[io].watts, disk * 1e-6, 1e-9);
    assert_float_equal(sh[1 - io].watts, 10, 1e-9);
    assert_float_equal(pw.modelled_watts, measured, 1e-9);
    assert_int_equal(pw.beyond_training, !pass);
    if (!pass) {
      assert_string_equal(pw.beyond_feature, "disk_bytes_per_second");
      assert_float_equal(pw.beyond_value, 12e6, 1);
      assert_float_equal(pw.beyond_training_max, 10e6, 1e-9);
    }
    erg_grid_free(&g);
  }
}

/* Every kind's keys get their own interval (issue 39; docs/model.md,
 * "Uncertainty"): the rows of one key value as one group through
 * erg_attribute_uncertainty (their gradients added before the quadratic
 * form, not as if independent), rows without a value of the kind as one
 * ([none]), [system] alone; profile_rollup sums them into the entries,
 * [other] as the sum of its keys'. Four rows of two commands, two jobs
 * (one row without), two users, one unit; a full covariance. */
static void test_key_intervals(void **state) {
  (void)state;
  struct erg_model m;
  memset(&m, 0, sizeof m);
  m.version = ERG_MODEL_VERSION;
  m.nfeatures = 2;
  m.idle_watts = 80;
  strcpy(m.feature[0], "cpu_seconds_per_second");
  strcpy(m.feature[1], "disk_bytes_per_second");
  m.coef[0] = 10;
  m.coef[1] = 2e-6;
  m.ncov = 3;
  double cov[3][3] = {{4, -1.5, -2e-7}, {-1.5, 2, 1e-7}, {-2e-7, 1e-7, 1e-13}};
  memcpy(m.cov, cov, sizeof cov);
  int map[2] = {ERG_FEAT_CPU, ERG_FEAT_DISK};
  struct erg_unc_cell in = {.meter_var_watts2 = 0.3, .misfit_watts = 2, .noise_watts = 0.5};
  struct erg_cell_model cm = {&m, map, ERG_IDLE_SEPARATE, &in};
  /* rows: command, job, unit, uid; CPU s/s, disk B/s */
  static const struct {
    const char *comm, *job, *unit;
    uint32_t uid;
    double cpu, disk;
  } row[4] = {{"sim", "1", "a.service", 1000, 1.0, 0},
              {"sim", "2", "a.service", 1000, 0, 5e6},
              {"io", "1", "a.service", 1001, 0.5, 2e6},
              {"io", "", "a.service", 1001, 0.2, 0}};
  char key[4][PROFILE_KEY_MAX];
  struct erg_grid_proc p[4];
  for (int i = 0; i < 4; i++) {
    profile_key_build(key[i], sizeof key[i], row[i].comm, row[i].job, row[i].unit, "", row[i].uid);
    p[i] = (struct erg_grid_proc){key[i], row[i].cpu * STEP, row[i].disk * STEP, 0, 0, 0};
  }
  struct erg_grid g;
  erg_grid_init(&g, STEP);
  erg_grid_add_procs(&g, (uint64_t)T0 * NS, (uint64_t)(T0 + STEP) * NS, 1.7 * STEP, 0, p, 4);
  struct erg_grid_cell *c = &g.cells[(T0 / STEP) % ERG_GRID_SLOTS];
  assert_int_equal(c->nkeys, 4);
  double measured = 80 + 10 * 1.7 + 2e-6 * 7e6 + 3;
  struct erg_grid_result r = {.t0 = T0, .step = STEP, .measured_watts = measured, .cell = c};
  struct erg_attr_share sh[5];
  struct erg_cell_power pw;
  assert_int_equal(erg_cell_attribute(&cm, 0, &r, sh, &pw), 0);
  /* The same rows in the cell's order, as erg_cell_attribute takes them. */
  int of[5];
  double x[10] = {0};
  for (int q = 0; q < 4; q++)
    for (int i = 0; i < 4; i++)
      if (!strcmp(sh[q].key, key[i])) {
        of[q] = i;
        x[2 * q] = row[i].cpu;
        x[2 * q + 1] = row[i].disk;
      }
  of[4] = 4;
  double w[5];
  struct erg_attribution a;
  assert_int_equal(erg_attribute_cell_idle(&m, 80, measured, x, 5, 4, ERG_IDLE_SEPARATE, w, &a), 0);
  /* Per kind, each test row's group (same value, same group; 9: [none]) */
  static const int kinds[3] = {PROFILE_COMMAND, PROFILE_JOB, PROFILE_USER};
  static const int grp[3][5] = {{0, 0, 1, 1, 2}, {0, 1, 0, 9, 2}, {0, 0, 1, 1, 2}};
  for (int kk = 0; kk < 3; kk++) {
    int k = kinds[kk], group[5];
    for (int q = 0; q < 5; q++)
      group[q] = grp[kk][of[q]] == 9 ? 3 : grp[kk][of[q]];
    struct erg_unc_group want[4] = {{0}}, alone[5];
    assert_int_equal(
        erg_attribute_uncertainty(&m, 80, &a, x, 5, 4, ERG_IDLE_SEPARATE, &in, group, 4, want), 0);
    int each[5] = {0, 1, 2, 3, 4};
    assert_int_equal(
        erg_attribute_uncertainty(&m, 80, &a, x, 5, 4, ERG_IDLE_SEPARATE, &in, each, 5, alone), 0);
    /* The shares' sums over each group's rows are the group's. */
    for (int gi = 0; gi < 4; gi++) {
      double sd = 0, var = 0, sd_ind = 0;
      int rows = 0;
      for (int q = 0; q < 5; q++)
        if (group[q] == gi) {
          sd += sh[q].key_sd_watts[k];
          var += sh[q].key_var_watts2[k];
          sd_ind += alone[q].sd_corr_watts * alone[q].sd_corr_watts;
          rows++;
        }
      if (!rows)
        continue;
      assert_true(gi == 2 || want[gi].sd_corr_watts > 0.05); /* 2: [system], idle */
      assert_float_equal(sd, want[gi].sd_corr_watts, 1e-9);
      assert_float_equal(var, want[gi].var_watts2, 1e-9);
      /* Two rows of a key: not what independent rows would give. */
      if (rows == 2)
        assert_true(fabs(sd - sqrt(sd_ind)) > 0.01 * sd);
    }
  }
  /* Rolled up (top 1 of each kind): the entries carry their key's parts,
   * [other] the sum of the keys it folds, [system] its own. */
  struct profile_rollup ru;
  assert_int_equal(profile_rollup(&ru, sh, 4, NULL, 1, 0), 0);
  for (int k = 0; k < PROFILE_NKINDS; k++) {
    double sd_all = 0, var_all = 0, sd_out = 0, var_out = 0;
    for (size_t i = 0; i < ru.nall[k]; i++) {
      sd_all += ru.all[k][i].sd_watts;
      var_all += ru.all[k][i].var_watts2;
    }
    int none = 0;
    for (size_t i = 0; i < ru.nout[k]; i++) {
      const struct profile_entry *e = &ru.out[k][i];
      if (!strcmp(e->key, "[system]")) {
        assert_float_equal(e->sd_watts, sh[4].key_sd_watts[k], 1e-12);
        continue;
      }
      none |= !strcmp(e->key, "[none]");
      if (strcmp(e->key, "[none]")) {
        sd_out += e->sd_watts;
        var_out += e->var_watts2;
      }
    }
    assert_float_equal(sd_out, sd_all, 1e-9);
    assert_float_equal(var_out, var_all, 1e-9);
    if (k == PROFILE_JOB) {
      assert_true(none);
      /* job 1: rows "sim 1" and "io 1" as one group */
      for (size_t i = 0; i < ru.nall[k]; i++)
        if (!strcmp(ru.all[k][i].key, "1")) {
          double s1 = 0;
          for (int q = 0; q < 4; q++)
            if (!strcmp(row[of[q]].job, "1"))
              s1 += sh[q].key_sd_watts[k];
          assert_float_equal(ru.all[k][i].sd_watts, s1, 1e-12);
        }
    }
  }
  profile_rollup_free(&ru);
  erg_grid_free(&g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_curve_model),
      cmocka_unit_test(test_curve_per_sample),
      cmocka_unit_test(test_model_conserves),
      cmocka_unit_test(test_no_model_cpu_share),
      cmocka_unit_test(test_no_model_policy_wiring),
      cmocka_unit_test(test_estimated_is_prediction),
      cmocka_unit_test(test_beyond_training),
      cmocka_unit_test(test_gpu_feature),
      cmocka_unit_test(test_key_intervals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

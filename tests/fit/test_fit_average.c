// SPDX-License-Identifier: GPL-3.0-or-later
/* Averaging meters (docs/model.md, "Averaging meters"): the kernel a
 * trailing mean puts on the cell grid, and a fit on a synthetic node whose
 * meter shows the 5-s trailing mean of its power (placed at the window's
 * middle, as ergd places it) that recovers the true coefficients only with
 * the features smoothed by that kernel. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "erg_fit.h"

#define T0 1763700000.0

static void test_kernel(void **state) {
  (void)state;
  double w[2 * ERG_METER_KERNEL_MAX_K + 1];
  /* The 5-s mean on 5-s cells: a triangle over two cells' width. */
  assert_int_equal(erg_meter_kernel(5, 5, 0, w, ERG_METER_KERNEL_MAX_K), 1);
  assert_float_equal(w[0], 0.125, 1e-12);
  assert_float_equal(w[1], 0.75, 1e-12);
  assert_float_equal(w[2], 0.125, 1e-12);
  /* No average: the cell itself. */
  assert_int_equal(erg_meter_kernel(0, 5, 0, w, ERG_METER_KERNEL_MAX_K), 0);
  assert_float_equal(w[0], 1, 0);
  assert_int_equal(erg_meter_kernel(1, 5, 0, w, ERG_METER_KERNEL_MAX_K), 0);
  /* 3 s on 10-s cells: 3/(8·10)·... each neighbour gets N/8S = 0.0375. */
  assert_int_equal(erg_meter_kernel(3, 10, 0, w, ERG_METER_KERNEL_MAX_K), 1);
  assert_float_equal(w[0], 3.0 / 80, 1e-12);
  assert_float_equal(w[2], 3.0 / 80, 1e-12);
  /* 10 s on 5-s cells: the window spans a whole neighbour each side. */
  assert_int_equal(erg_meter_kernel(10, 5, 0, w, ERG_METER_KERNEL_MAX_K), 1);
  assert_float_equal(w[0], 0.25, 1e-12);
  assert_float_equal(w[1], 0.5, 1e-12);
  /* 30 s on 5-s cells reaches three cells each side, symmetric, sum 1. */
  int k = erg_meter_kernel(30, 5, 0, w, ERG_METER_KERNEL_MAX_K);
  assert_int_equal(k, 3);
  double sum = 0;
  for (int i = 0; i <= 2 * k; i++) {
    sum += w[i];
    assert_float_equal(w[i], w[2 * k - i], 1e-12);
  }
  assert_float_equal(sum, 1, 1e-12);
  /* The window's middle 2.5 s after the placed time: half a cell later,
   * the earlier neighbour gets nothing. */
  assert_int_equal(erg_meter_kernel(5, 5, 2.5, w, ERG_METER_KERNEL_MAX_K), 1);
  assert_float_equal(w[0], 0, 1e-12);
  assert_float_equal(w[1], 0.5, 1e-12);
  assert_float_equal(w[2], 0.5, 1e-12);
  assert_int_equal(erg_meter_kernel(60, 1, 0, w, 12), -1);
  assert_int_equal(erg_meter_kernel(60, 1, 0, w, ERG_METER_KERNEL_MAX_K), 30);
  assert_int_equal(erg_meter_kernel(5, 0, 0, w, ERG_METER_KERNEL_MAX_K), -1);
}

/* A node at 0.1 s: idle 100 W, 10 W per CPU second, 0.5 W per MB/s; CPU
 * and disk levels each held for 5-40 s (random, not on cell bounds). The
 * meter shows the mean of the last 5 s, moved back to the window's middle
 * (ergd: lag + (N − 1) / 2); each 5-s cell measures its mean plus ±0.3 W
 * of noise, and carries the cell means of CPU and disk. */
#define DT 0.1
#define CELL 50 /* fine steps per cell */
#define NCELLS 600
#define AVG 50 /* fine steps of the mean */
#define HOLD_MIN 50
#define HOLD_SPAN 350
#define NOISE 0.3
#define SEEDS 8
static const double beta_cpu = 10, beta_disk = 0.5e-6, idle = 100;

#define FINE ((size_t)(NCELLS + 2) * CELL)

/* One node's load at 0.1 s, each level held quantum × (hold_min + [0,
 * hold_span)) steps from the start, and its power (cpu, disk coefficients
 * cb, db) added to p. */
static void fine_load(gsl_rng *r, size_t quantum, size_t hold_min, size_t hold_span, double cb,
                      double db, double *cpu, double *disk, double *p) {
  double c = 0, d = 0;
  size_t next_c = 0, next_d = 0;
  for (size_t i = 0; i < FINE; i++) {
    if (i == next_c) {
      c = gsl_rng_uniform(r) * 4;
      next_c = i + quantum * (hold_min + gsl_rng_uniform_int(r, hold_span));
    }
    if (i == next_d) {
      d = gsl_rng_uniform(r) < 0.3 ? 0 : gsl_rng_uniform(r) * 40e6;
      next_d = i + quantum * (hold_min + gsl_rng_uniform_int(r, hold_span));
    }
    cpu[i] = c;
    disk[i] = d;
    p[i] += cb * c + db * d;
  }
}

/* The mean over the AVG-step window centred on each fine step of a cell,
 * averaged over the cell: the averaging meter's reading placed as ergd
 * places it. */
static double cell_meter(const double *p, size_t cell) {
  double y = 0;
  for (size_t j = cell * CELL; j < (cell + 1) * CELL; j++) {
    double m = 0;
    for (size_t q = j - AVG / 2; q < j + AVG / 2; q++)
      m += p[q] / AVG;
    y += m / CELL;
  }
  return y;
}

/* nds datasets (one per node, loads cpu[k], disk[k]) behind one meter
 * showing p's trailing mean, + NOISE; flags as given. */
static void add_cells(struct erg_dataset *ds, size_t nds, double *const *cpu, double *const *disk,
                      const double *p, double average_seconds, unsigned flags, gsl_rng *r) {
  char why[128];
  for (size_t k = 0; k < nds; k++) {
    erg_dataset_init(&ds[k]);
    assert_int_equal(erg_dataset_add_feature(&ds[k], "cpu_seconds_per_second", why, sizeof why), 0);
    assert_int_equal(erg_dataset_add_feature(&ds[k], "disk_bytes_per_second", why, sizeof why), 1);
    ds[k].meter_average_seconds = average_seconds;
  }
  for (size_t cell = 1; cell <= NCELLS; cell++) {
    double y = cell_meter(p, cell) + gsl_ran_gaussian(r, NOISE);
    /* As ergd journals it: the same value in every member's row. */
    y = round(y * 1000) / 1000;
    for (size_t k = 0; k < nds; k++) {
      double x[2] = {0, 0};
      for (size_t j = cell * CELL; j < (cell + 1) * CELL; j++) {
        x[0] += cpu[k][j] / CELL;
        x[1] += disk[k][j] / CELL;
      }
      assert_int_equal(
          erg_dataset_add_row(&ds[k], T0 + (double)cell * CELL * DT, CELL * DT, y, flags, x), 0);
    }
  }
}

static void make_node(struct erg_dataset *ds, double average_seconds, unsigned seed) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, seed);
  double *cpu = malloc(FINE * sizeof *cpu), *disk = malloc(FINE * sizeof *disk),
         *p = malloc(FINE * sizeof *p);
  assert_non_null(cpu);
  assert_non_null(disk);
  assert_non_null(p);
  for (size_t i = 0; i < FINE; i++)
    p[i] = idle;
  fine_load(r, 1, HOLD_MIN, HOLD_SPAN, beta_cpu, beta_disk, cpu, disk, p);
  add_cells(ds, 1, &cpu, &disk, p, average_seconds, 0, r);
  free(cpu);
  free(disk);
  free(p);
  gsl_rng_free(r);
}

static double coef(const struct erg_model *m, const char *name) {
  for (size_t k = 0; k < m->nfeatures; k++)
    if (!strcmp(m->feature[k], name))
      return m->coef[k];
  return 0;
}

static void fit_node(double declared, unsigned seed, double *cpu, double *disk, double *mape) {
  struct erg_dataset ds;
  struct erg_model m;
  char why[256];
  make_node(&ds, declared, seed);
  /* The idle from a quiet window, as a site records it (erg fit --idle). */
  struct erg_fit_options o;
  erg_fit_options_init(&o);
  struct erg_idle_profile ip = {.mean_watts = idle, .stddev_watts = NOISE, .cells = 30};
  o.idle_profile = &ip;
  if (erg_fit(&ds, &o, &m, why, sizeof why) != 0)
    fail_msg("fit: %s", why);
  *cpu = coef(&m, "cpu_seconds_per_second");
  *disk = coef(&m, "disk_bytes_per_second");
  *mape = m.metrics.mape_dynamic_percent;
  /* The training range is the cells' own (up to 4 CPUs), not the smoothed
   * rows' lower peaks. */
  for (size_t k = 0; k < m.nfeatures; k++)
    if (!strcmp(m.feature[k], "cpu_seconds_per_second"))
      assert_true(m.feature_max[k] > 3.9);
  erg_dataset_free(&ds);
}

/* Declared, the fit recovers both coefficients within 1 % on every seed
 * and predicts the held-out cells better than on the cells' own features;
 * undeclared (each cell's own features against averaged power) the disk
 * term, whose load steps hardest between cells, comes out diluted on
 * average and further from the truth than declared. How much depends on
 * how often the load steps and on the robust fit's weights, which take
 * the worst-fitting cells (a step's) partly out: ~0.5 % here, where the
 * steps come every 5-40 s. */
static void test_fit_box_averaged(void **state) {
  (void)state;
  double dil_disk = 0, err_disk = 0, err_disk0 = 0, mape_s = 0, mape_r = 0;
  for (unsigned seed = 1; seed <= SEEDS; seed++) {
    double c, d, mape, c0, d0, mape0;
    fit_node(5, seed, &c, &d, &mape);
    fit_node(0, seed, &c0, &d0, &mape0);
    printf("seed %u: smoothed cpu %.4f disk %.4f MAPE %.2f %%; own cells cpu %.4f disk %.4f "
           "MAPE %.2f %%\n",
           seed, c, d * 1e6, mape, c0, d0 * 1e6, mape0);
    if (!(fabs(c / beta_cpu - 1) < 0.01 && fabs(d / beta_disk - 1) < 0.01))
      fail_msg("seed %u: cpu %.4f (10), disk %.4f (0.5) W per MB/s", seed, c, d * 1e6);
    mape_s += mape / SEEDS;
    mape_r += mape0 / SEEDS;
    dil_disk += (1 - d0 / beta_disk) / SEEDS;
    err_disk += fabs(d / beta_disk - 1) / SEEDS;
    err_disk0 += fabs(d0 / beta_disk - 1) / SEEDS;
  }
  printf("disk: own cells %.2f %% low on average, |error| %.2f %%; smoothed |error| %.2f %%; "
         "held-out MAPE %.2f %% smoothed, %.2f %% not\n",
         100 * dil_disk, 100 * err_disk0, 100 * err_disk, mape_s, mape_r);
  assert_true(dil_disk > 0);
  assert_true(mape_s < mape_r);
}

/* Two nodes behind one averaging meter (a multi-node chassis's manager),
 * their loads held 1-4 whole cells: erg fit --group smooths the joined rows
 * as a node's, and the members' coefficients come out within 0.5 % on
 * every seed; on the cells' own features, Σ idle fixed, the ⅛ of each
 * cell the mean spreads into its neighbours makes every member's column
 * look like the others' mean power, and the coefficients move towards
 * each other (~4 % here). Loads that change within cells are not in the
 * kernel's reach: the cell means do not say where in the cell the change
 * was, and the kernel is then right only on average (docs/model.md). */
static const double pair_cpu[2] = {10, 25}, pair_disk[2] = {0.5e-6, 0.4e-6};

static void fit_pair(double declared, unsigned seed, double err[2][2]) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 100 + seed);
  double *cpu[2], *disk[2], *p = malloc(FINE * sizeof *p);
  assert_non_null(p);
  for (size_t i = 0; i < FINE; i++)
    p[i] = 2 * idle;
  for (size_t k = 0; k < 2; k++) {
    cpu[k] = malloc(FINE * sizeof(double));
    disk[k] = malloc(FINE * sizeof(double));
    assert_non_null(cpu[k]);
    assert_non_null(disk[k]);
    fine_load(r, CELL, 1, 4, pair_cpu[k], pair_disk[k], cpu[k], disk[k], p);
  }
  struct erg_dataset ds[2];
  add_cells(ds, 2, cpu, disk, p, declared, ERG_ROW_SHARED, r);
  const struct erg_dataset *mem[2] = {&ds[0], &ds[1]};
  const char *names[2] = {"a", "b"};
  struct erg_group_options o;
  erg_group_options_init(&o);
  o.name = "chassis";
  o.form = ERG_GROUP_PER_NODE;
  struct erg_idle_profile sum = {.mean_watts = 2 * idle, .stddev_watts = NOISE, .cells = 30};
  o.idle_sum = &sum;
  struct erg_model m[2];
  struct erg_group_result res;
  char why[512];
  if (erg_group_fit(mem, names, 2, &o, m, &res, why, sizeof why) != 0)
    fail_msg("group fit: %s", why);
  assert_int_equal(res.form, ERG_GROUP_PER_NODE);
  for (size_t k = 0; k < 2; k++) {
    err[k][0] = coef(&m[k], "cpu_seconds_per_second") / pair_cpu[k] - 1;
    err[k][1] = coef(&m[k], "disk_bytes_per_second") / pair_disk[k] - 1;
    erg_dataset_free(&ds[k]);
    free(cpu[k]);
    free(disk[k]);
  }
  free(p);
  gsl_rng_free(r);
}

static void test_group_box_averaged(void **state) {
  (void)state;
  double abs_s = 0, abs_r = 0;
  for (unsigned seed = 1; seed <= SEEDS; seed++) {
    double e[2][2], e0[2][2];
    fit_pair(5, seed, e);
    fit_pair(0, seed, e0);
    printf("seed %u: smoothed a cpu %+.2f %% disk %+.2f %%, b cpu %+.2f %% disk %+.2f %%; own "
           "cells a %+.2f %% %+.2f %%, b %+.2f %% %+.2f %%\n",
           seed, 100 * e[0][0], 100 * e[0][1], 100 * e[1][0], 100 * e[1][1], 100 * e0[0][0],
           100 * e0[0][1], 100 * e0[1][0], 100 * e0[1][1]);
    for (size_t k = 0; k < 2; k++)
      for (size_t f = 0; f < 2; f++) {
        if (!(fabs(e[k][f]) < 0.01))
          fail_msg("seed %u: member %zu feature %zu off by %.2f %%", seed, k, f, 100 * e[k][f]);
        abs_s += fabs(e[k][f]) / (4 * SEEDS);
        abs_r += fabs(e0[k][f]) / (4 * SEEDS);
      }
  }
  printf("group: mean |error| %.2f %% smoothed, %.2f %% on the cells' own features\n", 100 * abs_s,
         100 * abs_r);
  assert_true(abs_s < abs_r);
}

/* The journal's header carries the meter's average to each row; a file
 * without it is an instantaneous meter's. */
static void test_journal_average(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-fitavg.XXXXXX", a[64], b[64], why[256];
  assert_non_null(mkdtemp(dir));
  snprintf(a, sizeof a, "%s/n.csv.1", dir);
  snprintf(b, sizeof b, "%s/n.csv", dir);
  FILE *f = fopen(a, "w");
  assert_non_null(f);
  fprintf(f, "# erg-journal v1 node=n step_seconds=5 average_seconds=5\n"
             "time_unix_seconds,step_seconds,measured_watts,flags,cpu_seconds_per_second\n"
             "100,5,110,0,1\n105,5,110,0,1\n");
  fclose(f);
  f = fopen(b, "w");
  assert_non_null(f);
  fprintf(f, "# erg-journal v1 node=n step_seconds=5\n"
             "time_unix_seconds,step_seconds,measured_watts,flags,cpu_seconds_per_second\n"
             "110,5,110,0,1\n");
  fclose(f);
  struct erg_dataset ds;
  erg_dataset_init(&ds);
  assert_int_equal(erg_journal_read(&ds, a, why, sizeof why), 0);
  assert_int_equal(erg_journal_read(&ds, b, why, sizeof why), 0);
  assert_int_equal(ds.nrows, 3);
  assert_float_equal(ds.row_average_seconds[0], 5, 0);
  assert_float_equal(ds.row_average_seconds[1], 5, 0);
  assert_float_equal(ds.row_average_seconds[2], 0, 0);
  /* Smoothed: the first row lacks the cell before it (NaN), the second
   * has both neighbours, the third is an instantaneous meter's. */
  struct erg_dataset sm;
  assert_int_equal(erg_dataset_smoothed(&ds, &sm, why, sizeof why), 1);
  assert_true(isnan(sm.x[0][0]));
  assert_float_equal(sm.x[0][1], 1, 1e-12);
  assert_float_equal(sm.x[0][2], 1, 0);
  erg_dataset_smoothed_free(&sm);
  erg_dataset_free(&ds);
  f = fopen(a, "w");
  assert_non_null(f);
  fprintf(f, "# erg-journal v1 node=n step_seconds=5 average_seconds=-3\n");
  fclose(f);
  erg_dataset_init(&ds);
  assert_int_equal(erg_journal_read(&ds, a, why, sizeof why), -1);
  assert_non_null(strstr(why, "average_seconds"));
  erg_dataset_free(&ds);
  unlink(a);
  unlink(b);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kernel),
      cmocka_unit_test(test_fit_box_averaged),
      cmocka_unit_test(test_group_box_averaged),
      cmocka_unit_test(test_journal_average),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

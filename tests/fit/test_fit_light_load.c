// SPDX-License-Identifier: GPL-3.0-or-later
/* Issue 38: the fitted utilisation curve at light load (0.1 and 0.2 core
 * on 2 CPUs) on journals shaped like the accuracy harness's training: two
 * processes at {0, 0, 0.2 … 1} core in segments of 15 s that start 2 s
 * into a 5 s cell (a third of the cells span a load change), each
 * jittering by 0.1 core within the second; on the I/O node also a
 * direct-I/O writer at {0, 0, 10 … 40} MB/s whose kernel CPU time (0.1
 * core per 40 MB/s) is in the CPU time. Truth 100 W + 150·u^1.4 + 0.5 W
 * per MB/s; the meter shows the mean of the power of the load's samples,
 * 1 W noise in 0.5 W steps; exact idle profile.
 *
 * The meter integrates the convex curve over the cell's changing load,
 * which is more than the curve at the cell's mean load (Jensen). Fitted
 * on the tails of the cell's mean utilisation, the curve comes out
 * +27 % (CPU only) and +13 % (I/O node) at 0.1 core, +12 % / +8 % at 0.2
 * core, more training or not (tests/bench/light_load, docs/accuracy.md).
 * Given the cell's mean of the samples' tails (the journal's tail
 * columns), the fit finds the truth on both nodes (mean over 8 journals
 * of 1200 cells: within 5 % at 0.1 core and 3 % at 0.2). One journal's
 * ratio spreads around that: ±10 % at 0.1 core with 1200 cells, ±25 %
 * with the harness's 72, whatever the features. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "erg_fit.h"

#define NCPU 2.0
#define SEGMENTS 400
#define SEG_SECONDS 15
#define OFFSET_SECONDS 2
#define SUB 10 /* load samples per second */
#define JITTER_CORE 0.1
#define KIO_CORE 0.1 /* per 40 MB/s */

static double truth(double u) { return 150 * pow(fmin(fmax(u, 0), 1), 1.4); }

struct second {
  double u, d, p, tail[ERG_NDERIVED];
};

/* The journal of one node; with_tails: it carries the tail columns. */
static void make_journal_n(struct erg_dataset *ds, bool io, bool with_tails, unsigned long seed,
                           int segments) {
  static const double lv[] = {0, 0, 0.2, 0.4, 0.6, 0.8, 1}, dv[] = {0, 0, 10, 20, 30, 40};
  int n = OFFSET_SECONDS + segments * SEG_SECONDS + 5;
  struct second *sec = calloc((size_t)n, sizeof *sec);
  assert_non_null(sec);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, seed);
  for (int s = 0; s < segments; s++) {
    double a = lv[gsl_rng_uniform_int(r, 7)], b = lv[gsl_rng_uniform_int(r, 7)];
    double d = io ? dv[gsl_rng_uniform_int(r, 6)] : 0;
    for (int t = 0; t < SEG_SECONDS; t++) {
      struct second *x = &sec[OFFSET_SECONDS + s * SEG_SECONDS + t];
      for (int k = 0; k < SUB; k++) {
        double ca = a > 0 ? fmax(a + gsl_ran_gaussian(r, JITTER_CORE), 0) : 0;
        double cb = b > 0 ? fmax(b + gsl_ran_gaussian(r, JITTER_CORE), 0) : 0;
        double u = fmin((ca + cb + KIO_CORE * d / 40) / NCPU, 1);
        x->u += u / SUB;
        x->p += truth(u) / SUB;
        for (int i = 0; i < ERG_NDERIVED; i++)
          x->tail[i] += erg_derived_value(i, u * NCPU, NCPU) / SUB;
      }
      x->d = d;
      x->p += 0.5 * d;
    }
  }
  char why[256];
  erg_dataset_init(ds);
  ds->step_seconds = 5;
  assert_int_equal(erg_dataset_add_feature(ds, "cpu_seconds_per_second", why, sizeof why), 0);
  assert_int_equal(erg_dataset_add_feature(ds, "disk_bytes_per_second", why, sizeof why), 1);
  assert_int_equal(erg_dataset_add_feature(ds, ERG_NCPU_COLUMN, why, sizeof why), 2);
  for (int i = 0; with_tails && i < ERG_NDERIVED; i++)
    assert_int_equal(erg_dataset_add_feature(ds, erg_derived_names[i], why, sizeof why), 3 + i);
  for (int c = 0; (c + 1) * 5 <= n; c++) {
    double x[3 + ERG_NDERIVED] = {0}, p = 0;
    for (int t = c * 5; t < c * 5 + 5; t++) {
      x[0] += sec[t].u * NCPU / 5;
      x[1] += sec[t].d * 1e6 / 5;
      p += sec[t].p / 5;
      for (int i = 0; i < ERG_NDERIVED; i++)
        x[3 + i] += sec[t].tail[i] / 5;
    }
    x[2] = NCPU;
    p = round((100 + p + gsl_ran_gaussian(r, 1.0)) / 0.5) * 0.5;
    assert_int_equal(erg_dataset_add_row(ds, 1763700000 + 5 * c, 5, p, 0, x), 0);
  }
  gsl_rng_free(r);
  free(sec);
  assert_int_equal(erg_dataset_derive(ds, 0, why, sizeof why), ERG_NDERIVED);
}

static void make_journal(struct erg_dataset *ds, bool io, bool with_tails, unsigned long seed) {
  make_journal_n(ds, io, with_tails, seed, SEGMENTS);
}

/* The model's curve above idle at utilisation u, no disk activity. */
static double model_curve(const struct erg_model *m, double u) {
  double x[ERG_FIT_MAX_FEATURES];
  for (size_t k = 0; k < m->nfeatures; k++)
    x[k] = erg_derived_index(m->feature[k]) >= 0 ? erg_model_derived_value(m, k, u * m->ncpu)
           : strcmp(m->feature[k], "cpu_seconds_per_second") == 0 ? u * m->ncpu
                                                                  : 0;
  return erg_model_predict(m, x) - m->idle_watts;
}

#define SEEDS 8

/* Fitted over true curve at 0.1 and 0.2 core, mean over seeds 1 … SEEDS:
 * one journal's ratio at 0.1 core still spreads by ±5–10 % (the
 * estimator's variance), the bias is what is tested. */
static void fit_ratios(bool io, bool with_tails, double *r1, double *r2) {
  *r1 = *r2 = 0;
  for (unsigned long seed = 1; seed <= SEEDS; seed++) {
    struct erg_dataset ds;
    make_journal(&ds, io, with_tails, seed);
    struct erg_idle_profile idle = {.mean_watts = 100, .cells = 24, .ncpu = NCPU};
    struct erg_fit_options o;
    erg_fit_options_init(&o);
    o.idle_profile = &idle;
    struct erg_model m;
    char why[256];
    assert_int_equal(erg_fit(&ds, &o, &m, why, sizeof why), 0);
    *r1 += model_curve(&m, 0.1 / NCPU) / truth(0.1 / NCPU) / SEEDS;
    *r2 += model_curve(&m, 0.2 / NCPU) / truth(0.2 / NCPU) / SEEDS;
    erg_dataset_free(&ds);
  }
  printf("  %s node, tails %s: fitted / true %.3f at 0.1 core, %.3f at 0.2 core (mean of %d)\n",
         io ? "I/O" : "CPU-only", with_tails ? "from the journal (cell means)" : "of the cell mean",
         *r1, *r2, SEEDS);
}

/* The journal's tails (cell means of the samples' tails) are what the fit
 * uses: the curve at light load is the truth's on both nodes. */
static void test_cell_mean_tails(void **state) {
  (void)state;
  for (int io = 0; io < 2; io++) {
    double r1, r2;
    fit_ratios(io, true, &r1, &r2);
    assert_true(fabs(r1 - 1) < 0.05);
    assert_true(fabs(r2 - 1) < 0.03);
  }
}

/* The cause, kept in view: the tails of the cell's mean on the same
 * journals lift the curve at light load (a journal without the columns
 * still fits as before, with this bias). */
static void test_tails_of_the_mean(void **state) {
  (void)state;
  double r1, r2;
  fit_ratios(false, false, &r1, &r2);
  assert_true(r1 > 1.15 && r2 > 1.07);
  fit_ratios(true, false, &r1, &r2);
  assert_true(r1 > 1.05 && r2 > 1.04);
}

/* m's MAE on the held-out cells h, its tails taken from the cells' own
 * columns (with_tails) or at the cells' mean utilisation, computed here
 * without the library's prediction helpers. */
static double holdout_mae(const struct erg_model *m, const struct erg_holdout *h, bool with_tails) {
  const struct erg_dataset *ds = &h->cells;
  double ae = 0;
  for (size_t i = 0; i < ds->nrows; i++) {
    double p = m->idle_watts, t[ERG_NDERIVED];
    int cpu = -1, disk = -1;
    for (size_t k = 0; k < ds->nfeatures; k++) {
      cpu = strcmp(ds->feature[k], "cpu_seconds_per_second") == 0 ? (int)k : cpu;
      disk = strcmp(ds->feature[k], "disk_bytes_per_second") == 0 ? (int)k : disk;
      int d = erg_derived_index(ds->feature[k]);
      if (d >= 0 && d < ERG_NDERIVED)
        t[d] = ds->x[k][i];
    }
    assert_true(cpu >= 0 && disk >= 0);
    for (size_t k = 0; k < m->nfeatures; k++) {
      int d = erg_derived_index(m->feature[k]);
      if (d >= 0 && d < ERG_NDERIVED)
        p += m->coef[k] * (with_tails ? t[d] : erg_derived_value(d, ds->x[cpu][i], m->ncpu));
      else if (strcmp(m->feature[k], "disk_bytes_per_second") == 0)
        p += m->coef[k] * ds->x[disk][i];
      else if (strcmp(m->feature[k], "cpu_seconds_per_second") == 0)
        p += m->coef[k] * ds->x[cpu][i];
    }
    ae += fabs(p - ds->measured_watts[i]);
  }
  return ae / (double)ds->nrows;
}

/* ergd's comparison of a refit with the model in use scores the model in
 * use on the candidate's held-out cells as ergd predicts a cell: with the
 * cell's tails, as the fit predicted them (all held-out cells here are
 * within the trained utilisation). At the cell's mean (the code before)
 * the model in use was off by the cells' Jensen gaps. */
static void test_compare_uses_tails(void **state) {
  (void)state;
  struct erg_dataset ds;
  make_journal(&ds, true, true, 3);
  struct erg_idle_profile idle = {.mean_watts = 100, .cells = 24, .ncpu = NCPU};
  struct erg_holdout h;
  erg_holdout_init(&h);
  struct erg_fit_options o;
  erg_fit_options_init(&o);
  o.idle_profile = &idle;
  o.holdout = &h;
  struct erg_model m;
  char why[400];
  assert_int_equal(erg_fit(&ds, &o, &m, why, sizeof why), 0);
  assert_true(h.cells.nrows > 100);
  m.utilization_max = 1;
  erg_model_is_worse(&m, &m, &h, 0.05, why, sizeof why);
  double cand, cur, tails = holdout_mae(&m, &h, true), mean = holdout_mae(&m, &h, false);
  printf("  %s; MAE with the cells' tails %.4f W, at their mean %.4f W\n", why, tails, mean);
  assert_int_equal(sscanf(why, "held-out MAE %lf W (new) vs %lf W (current)", &cand, &cur), 2);
  assert_true(mean > tails + 0.02);
  assert_true(fabs(cur - tails) <= 0.005 + 1e-9);
  erg_holdout_free(&h);
  erg_dataset_free(&ds);
}

/* Few cells (24 segments: 72 cells of 5 s, the harness's training), a
 * noisy meter: the curve at 0.1 core is a few watts, and a rising-only
 * curve lets a few cells near idle set its foot (T_1's coefficient, the
 * only one with a slope at 0, which noise can push up but not below 0).
 * The convex fit ties the foot to the rest of the curve. Root mean square
 * of fitted / true − 1 at 0.1 core over the same FEW_SEEDS journals, each
 * node, rising only (--curve-shape monotone, the fit before) and the
 * default (convex unless rejected); on node A (the I/O node, disk-heavy
 * rows whose writer's kernel CPU time puts cells between 0 and 0.2 core)
 * and node B (CPU only). */
#define FEW_SEGMENTS 24
#define FEW_SEEDS 40

static double few_cells_rms(bool io, enum erg_curve_shape shape, double *rms2) {
  double s1 = 0, s2 = 0;
  for (unsigned long seed = 1; seed <= FEW_SEEDS; seed++) {
    struct erg_dataset ds;
    make_journal_n(&ds, io, true, 1000 + seed, FEW_SEGMENTS);
    struct erg_idle_profile idle = {.mean_watts = 100, .cells = 24, .ncpu = NCPU};
    struct erg_fit_options o;
    erg_fit_options_init(&o);
    o.idle_profile = &idle;
    o.curve_shape = shape;
    struct erg_model m;
    char why[256];
    assert_int_equal(erg_fit(&ds, &o, &m, why, sizeof why), 0);
    double q1 = model_curve(&m, 0.1 / NCPU) / truth(0.1 / NCPU) - 1;
    double q2 = model_curve(&m, 0.2 / NCPU) / truth(0.2 / NCPU) - 1;
    s1 += q1 * q1 / FEW_SEEDS;
    s2 += q2 * q2 / FEW_SEEDS;
    erg_dataset_free(&ds);
  }
  *rms2 = sqrt(s2);
  printf("  %s node, curve %s, %d cells: rms of fitted / true - 1: %.3f at 0.1 core, %.3f at "
         "0.2 core (%d journals)\n",
         io ? "I/O" : "CPU-only", erg_curve_shape_name(shape), FEW_SEGMENTS * 3, sqrt(s1), *rms2,
         FEW_SEEDS);
  return sqrt(s1);
}

static void test_few_cells_convex(void **state) {
  (void)state;
  for (int io = 1; io >= 0; io--) {
    double mono2, auto2, mono = few_cells_rms(io, ERG_CURVE_MONOTONE, &mono2),
                         autom = few_cells_rms(io, ERG_CURVE_AUTO, &auto2);
    assert_true(autom < 0.85 * mono);
    assert_true(auto2 < mono2);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cell_mean_tails),
      cmocka_unit_test(test_tails_of_the_mean),
      cmocka_unit_test(test_compare_uses_tails),
      cmocka_unit_test(test_few_cells_convex),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

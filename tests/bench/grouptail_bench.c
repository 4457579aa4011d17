// SPDX-License-Identifier: GPL-3.0-or-later
/* Cost of a shared meter's members' tails' window choice (grouptail.c,
 * docs/model.md "The tails' window"; docs/benchmarks.md): one group choice
 * (the members' joint fit per candidate, 5 × 4 folds, over ROWS rows) against
 * the peer it replaces, each member's own choice (a single-node fit per
 * candidate over 360 rows, as tailwin.c's), in one invocation, alternating.
 * Rows are synthetic: each member's 0.1-s slice loads of random levels over
 * 5-s cells, its power a convex curve of each 0.5-s update's mean load, the
 * meter their sum. CPU time. Not a test.
 * usage: grouptail_bench [MEMBERS=4] [ROWS=720] [ROUNDS=3] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector_int.h"
#include "erg_collector.h"
#include "erg_fit.h"

#define STEP 5u
#define NCPU 2.0
#define UPD 5 /* 0.1-s slices per 0.5-s update */
#define SLICES 50

static uint64_t rng = 88172645463325252ULL;
static double urand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One member's cell: its candidates' tails (0: the slices' mean tails;
 * 1: the same per update; 2: each update's mean load's; 3, 4: two
 * updates'), CPU per second and power. */
static double member_cell(double exponent, double t[ERG_TAILWIN_CANDS][ERG_NDERIVED], double *cpu) {
  double u[SLICES], busy = 0, watts = 0, lvl = urand();
  for (int i = 0; i < SLICES; i++) {
    if (i % 10 == 0)
      lvl = urand() < 0.3 ? 0 : urand();
    u[i] = (urand() < lvl) * 0.5 + (urand() < lvl) * 0.5;
    busy += u[i] * NCPU * 0.1;
  }
  for (int k = 0; k < ERG_TAILWIN_CANDS; k++)
    for (int d = 0; d < ERG_NDERIVED; d++)
      t[k][d] = 0;
  for (int i = 0; i < SLICES; i++)
    for (int d = 0; d < ERG_NDERIVED; d++) {
      double v = erg_derived_value(d, u[i], NCPU) / SLICES;
      t[0][d] += v;
      t[1][d] += v;
    }
  for (int w = 0; w < SLICES / UPD; w++) {
    double m = 0;
    for (int i = 0; i < UPD; i++)
      m += u[w * UPD + i] / UPD;
    watts += (100 + 150 * pow(m, exponent)) / (SLICES / UPD);
    for (int d = 0; d < ERG_NDERIVED; d++)
      t[2][d] += erg_derived_value(d, m, NCPU) / (SLICES / UPD);
  }
  for (int p = 3; p < ERG_TAILWIN_CANDS; p++)
    for (int w = 0; w < SLICES / (2 * UPD); w++) {
      double m = 0;
      for (int i = 0; i < 2 * UPD; i++)
        m += u[w * 2 * UPD + i] / (2 * UPD);
      for (int d = 0; d < ERG_NDERIVED; d++)
        t[p][d] += erg_derived_value(d, m, NCPU) / (SLICES / (2 * UPD));
    }
  *cpu = busy / STEP;
  return watts;
}

/* A member's own choice, as tailwin.c makes it: one erg_fit of 4 folds per
 * candidate over its rows (here the member's own power, as on an outlet). */
static double node_choice(const struct group_tail_rows *r, const double *own, int m, double *sink) {
  for (int c = 0; c < ERG_TAILWIN_CANDS; c++) {
    struct erg_dataset ds;
    struct erg_fit_options o;
    struct erg_model model;
    char why[256];
    erg_dataset_init(&ds);
    erg_fit_options_init(&o);
    o.folds = 4;
    if (erg_tailwin_dataset(&ds, why, sizeof why) == 0) {
      for (size_t i = 0; i < r->nrows && i < ERG_TAILWIN_ROWS; i++) {
        const double *e = own + (i * (size_t)r->nmembers + (size_t)m) * (3 + ERG_NDERIVED * 5 + 1);
        double x[3 + ERG_NDERIVED] = {e[0], 0, NCPU};
        for (int d = 0; d < ERG_NDERIVED; d++)
          x[3 + d] = e[3 + c * ERG_NDERIVED + d];
        erg_dataset_add_row(&ds, (double)i * STEP, STEP, e[3 + ERG_NDERIVED * 5], 0, x);
      }
      if (erg_dataset_derive(&ds, 0, why, sizeof why) >= 0 &&
          erg_fit(&ds, &o, &model, why, sizeof why) == 0)
        *sink += model.metrics.rmse_watts;
    }
    erg_dataset_free(&ds);
  }
  return 0;
}

int main(int argc, char **argv) {
  int members = argc > 1 ? atoi(argv[1]) : 4;
  size_t rows = argc > 2 ? (size_t)atol(argv[2]) : 720;
  int rounds = argc > 3 ? atoi(argv[3]) : 3;
  if (members < 2 || members > ERG_GROUP_MAX_NODES || rows < 100 || rounds < 1) {
    fprintf(stderr, "usage: grouptail_bench [MEMBERS=4 (2..%d)] [ROWS=720 (>=100)] [ROUNDS=3]\n",
            ERG_GROUP_MAX_NODES);
    return 2;
  }
  struct group_tail_rows r;
  size_t per = 3 + ERG_NDERIVED * 5 + 1; /* cpu, -, -, tails, own watts */
  double *own = calloc(rows * (size_t)members * per, sizeof *own);
  if (!own || group_tail_rows_alloc(&r, members, rows, STEP) != 0)
    return 1;
  for (size_t i = 0; i < rows; i++) {
    double meter = 0;
    for (int m = 0; m < members; m++) {
      double t[ERG_TAILWIN_CANDS][ERG_NDERIVED], cpu;
      double w = member_cell(1.0 + 0.25 * m, t, &cpu);
      group_tail_rows_set(&r, i, 0, m, cpu, 0, NCPU, t);
      double *e = own + (i * (size_t)members + (size_t)m) * per;
      e[0] = cpu;
      for (int c = 0; c < ERG_TAILWIN_CANDS; c++)
        for (int d = 0; d < ERG_NDERIVED; d++)
          e[3 + c * ERG_NDERIVED + d] = t[c][d];
      e[3 + ERG_NDERIVED * 5] = w + 0.5 * (urand() - 0.5);
      meter += e[3 + ERG_NDERIVED * 5];
    }
    r.watts[i] = meter;
  }
  r.nrows = rows;
  bool use[ERG_TAILWIN_CANDS] = {true, true, true, true, true};
  double best_g = INFINITY, best_n = INFINITY, sink = 0, rmse[ERG_TAILWIN_CANDS];
  for (int k = 0; k < rounds; k++) {
    double t = now_s();
    group_tail_choose(&r, use, NULL, rmse);
    t = now_s() - t;
    best_g = t < best_g ? t : best_g;
    t = now_s();
    for (int m = 0; m < members; m++)
      node_choice(&r, own, m, &sink);
    t = now_s() - t;
    best_n = t < best_n ? t : best_n;
  }
  printf("members %d, rows %zu: group choice %.1f ms (rmse %.3f %.3f %.3f %.3f %.3f W, pick %d); "
         "%d own choices of 360 rows %.1f ms; ratio %.2f; per member-cell (a choice every %d "
         "cells) %.0f us (group) vs %.0f us (own)\n",
         members, rows, best_g * 1e3, rmse[0], rmse[1], rmse[2], rmse[3], rmse[4],
         erg_tailwin_pick(rmse, 0), members, best_n * 1e3, best_g / best_n, ERG_TAILWIN_EVERY,
         best_g / ERG_TAILWIN_EVERY / members * 1e6, best_n / ERG_TAILWIN_EVERY / members * 1e6);
  group_tail_rows_free(&r);
  free(own);
  return sink < 0;
}

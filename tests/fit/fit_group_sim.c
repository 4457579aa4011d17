// SPDX-License-Identifier: GPL-3.0-or-later
/* The synthetic shared meter of the group fit tests (fit_group_sim.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "fit_group_sim.h"

const char *const nodes[N] = {"n1", "n2", "n3", "n4"};
/* Different truth per member: idle, CPUs, curve (amplitude at full load,
 * exponent: linear, convex, concave, steep) and disk cost. */
const double idle_w[N] = {60, 80, 100, 120};
const double ncpu[N] = {4, 8, 16, 32};
const double amp_w[N] = {100, 150, 80, 200};
const double expo[N] = {1.0, 1.4, 0.7, 2.0};
const double disk_w[N] = {0, 2e-7, 0, 1e-7}; /* W per B/s: 20 W at 100 MB/s */

double truth(size_t n, double u, double disk) {
  return idle_w[n] + amp_w[n] * pow(u, expo[n]) + disk_w[n] * disk;
}

/* ROWS cells of every member: own load schedule each (levels held for 1-6
 * cells) or, when correlated, one schedule for all; independent disk
 * bursts; the meter is the sum of the truths + 1 W noise, flag 64. */
void make_group(struct group_data *g, bool correlated, unsigned long seed) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, seed);
  char why[128];
  double level[N] = {0}, hold[N] = {0};
  for (size_t n = 0; n < N; n++) {
    erg_dataset_init(&g->ds[n]);
    snprintf(g->ds[n].node, sizeof g->ds[n].node, "%s", nodes[n]);
    g->ds[n].step_seconds = 5;
    erg_dataset_add_feature(&g->ds[n], "cpu_seconds_per_second", why, sizeof why);
    erg_dataset_add_feature(&g->ds[n], "disk_bytes_per_second", why, sizeof why);
    erg_dataset_add_feature(&g->ds[n], ERG_NCPU_COLUMN, why, sizeof why);
    g->truth[n] = malloc(ROWS * sizeof(double));
  }
  for (int i = 0; i < ROWS; i++) {
    double x[N][3], meter = 0;
    for (size_t n = 0; n < N; n++) {
      if (hold[n]-- <= 0 && (!correlated || n == 0)) {
        level[n] = gsl_rng_uniform(r);
        hold[n] = (double)gsl_rng_uniform_int(r, 6);
      }
      double u = correlated ? level[0] : level[n];
      double disk = gsl_rng_uniform(r) < 0.25 ? 1e8 * gsl_rng_uniform(r) : 0;
      x[n][0] = u * ncpu[n];
      x[n][1] = disk;
      x[n][2] = ncpu[n];
      g->truth[n][i] = truth(n, u, disk);
      meter += g->truth[n][i];
    }
    meter += gsl_ran_gaussian(r, 1.0);
    /* As ergd journals it: "%.3f", the same value in every member's row. */
    meter = round(meter * 1000) / 1000;
    for (size_t n = 0; n < N; n++)
      erg_dataset_add_row(&g->ds[n], T0 + 5.0 * i, 5, meter, ERG_ROW_SHARED, x[n]);
  }
  gsl_rng_free(r);
}

void free_group(struct group_data *g) {
  for (size_t n = 0; n < N; n++) {
    erg_dataset_free(&g->ds[n]);
    free(g->truth[n]);
  }
}

void true_profiles(struct erg_idle_profile *p) {
  for (size_t n = 0; n < N; n++) {
    memset(&p[n], 0, sizeof p[n]);
    snprintf(p[n].node, sizeof p[n].node, "%s", nodes[n]);
    p[n].mean_watts = idle_w[n];
    p[n].cells = 24;
    p[n].ncpu = ncpu[n];
  }
}

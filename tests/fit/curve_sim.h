// SPDX-License-Identifier: GPL-3.0-or-later
/* Simulated journals of a node with a known power curve, shared by the
 * curve tests (test_fit_curves.c, test_fit_curve_shape.c,
 * test_fit_curve_monotone.c) and the before/after bench
 * (tests/bench/curve_compare.c). A truth is either a
 * SPECpower curve (idle and 10 % … 100 % points, linear in between, as
 * erg-pdusim's --specpower) or a power law idle + slope·u^exponent (as
 * erg-pdusim's default model). */
#ifndef CURVE_SIM_H
#define CURVE_SIM_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "erg_fit.h"

struct curve {
  char row[16], system[128];
  double watts[11];       /* idle, 10 %, ..., 100 % */
  double slope, exponent; /* exponent > 0: idle watts[0] + slope·u^exponent */
};

/* Power that falls with load in the middle: the fitted curve of a real
 * 40-core Broadwell server's wall meter under NAS benchmarks (+57, +39,
 * +35, +56 W above idle at 25, 50, 75, 100 % load; the benchmarks at each
 * load differ), idle 100 W, linear between 10 % points. A journal built to
 * provoke a falling fit (issue 27). */
static const struct curve curve_broadwell = {
    .row = "bdw",
    .system = "Broadwell-like, NAS benchmarks",
    .watts = {100, 122.8, 145.6, 153.4, 146.2, 139, 137.4, 135.8, 139.2, 147.6, 156}};

static inline double curve_watts(const struct curve *c, double u) {
  u = fmin(fmax(u, 0), 1);
  if (c->exponent > 0)
    return c->watts[0] + c->slope * pow(u, c->exponent);
  int i = (int)(u * 10);
  if (i >= 10)
    return c->watts[10];
  double f = u * 10 - i;
  return c->watts[i] + f * (c->watts[i + 1] - c->watts[i]);
}

/* Rows of a CSV like tests/fit/specpower_curves.csv; the number read, -1
 * when the file cannot be opened. */
static inline int curve_load_csv(const char *path, struct curve *out, int max) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  char line[512];
  int n = 0;
  while (n < max && fgets(line, sizeof line, f)) {
    if (line[0] == '#' || !strncmp(line, "row,", 4))
      continue;
    struct curve *c = &out[n];
    memset(c, 0, sizeof *c);
    char *save, *t = strtok_r(line, ",\n", &save);
    snprintf(c->row, sizeof c->row, "%s", t);
    t = strtok_r(NULL, ",\n", &save);
    snprintf(c->system, sizeof c->system, "%s", t ? t : "?");
    int k = 0;
    for (; k < 11 && (t = strtok_r(NULL, ",\n", &save)); k++)
      c->watts[k] = strtod(t, NULL);
    if (k == 11)
      n++;
  }
  fclose(f);
  return n;
}

/* How the journal is drawn. Per cell a load level: 0 every idle_every-th
 * cell; else with chance low_share a light one, 0.05·U² (U uniform: most
 * near 0, as the idle-ish cells of a real node); else uniform on [0, 1].
 * Ten sub-samples within the cell jitter around it (σ = jitter, capped at
 * level/2 when jitter_scaled: a light load jitters less), so the cell's
 * power is the curve's mean over the jitter, as a meter shows it. Then
 * Gaussian meter noise, rounded to quantum watts when > 0. */
struct curve_sim {
  int cells;
  double ncpu, step_seconds;
  int idle_every;
  double low_share, jitter, noise_watts, quantum_watts;
  bool jitter_scaled;
};

static inline void curve_synth(struct erg_dataset *ds, const struct curve *c,
                               const struct curve_sim *s, gsl_rng *r) {
  char why[128];
  erg_dataset_init(ds);
  snprintf(ds->node, sizeof ds->node, "spec%.15s", c->row);
  ds->step_seconds = s->step_seconds;
  erg_dataset_add_feature(ds, "cpu_seconds_per_second", why, sizeof why);
  erg_dataset_add_feature(ds, ERG_NCPU_COLUMN, why, sizeof why);
  for (int i = 0; i < s->cells; i++) {
    double level;
    if (s->idle_every > 0 && i % s->idle_every == 0)
      level = 0;
    else if (s->low_share > 0 && gsl_rng_uniform(r) < s->low_share) {
      double v = gsl_rng_uniform(r);
      level = 0.05 * v * v;
    } else
      level = gsl_rng_uniform(r);
    double sd = s->jitter_scaled ? fmin(s->jitter, level / 2) : s->jitter, usum = 0, psum = 0;
    for (int k = 0; k < 10; k++) {
      double u = fmin(fmax(level + (level > 0 ? gsl_ran_gaussian(r, sd) : 0), 0), 1);
      usum += u;
      psum += curve_watts(c, u);
    }
    double p = psum / 10 + gsl_ran_gaussian(r, s->noise_watts);
    if (s->quantum_watts > 0)
      p = round(p / s->quantum_watts) * s->quantum_watts;
    double x[2] = {usum / 10 * s->ncpu, s->ncpu};
    erg_dataset_add_row(ds, 1763700000 + s->step_seconds * i, s->step_seconds, p, 0, x);
  }
}

/* The curve's basis before issue 27 (degree-6 Bernstein polynomials,
 * coefficients >= 0 but not monotone), computed as the library still does
 * for older model files: to compare with what erg_dataset_derive adds. */
static inline int curve_add_bernstein6(struct erg_dataset *ds, char *why, size_t whylen) {
  int cpu = -1, nc = -1;
  for (size_t k = 0; k < ds->nfeatures; k++) {
    cpu = strcmp(ds->feature[k], "cpu_seconds_per_second") ? cpu : (int)k;
    nc = strcmp(ds->feature[k], ERG_NCPU_COLUMN) ? nc : (int)k;
  }
  for (int d = ERG_DERIVED_B6_1; d <= ERG_DERIVED_B6_6; d++) {
    int col = erg_dataset_add_feature(ds, erg_derived_names[d], why, whylen);
    if (col < 0 || cpu < 0 || nc < 0)
      return -1;
    for (size_t i = 0; i < ds->nrows; i++)
      ds->x[col][i] = erg_derived_value(d, ds->x[cpu][i], ds->x[nc][i]);
  }
  return 0;
}

/* The model's power at utilisation u (node-level: CPU time u·ncpu, the
 * curve's features from it, continued beyond the trained range). */
static inline double curve_model_watts(const struct erg_model *m, double u) {
  double x[ERG_FIT_MAX_FEATURES];
  for (size_t k = 0; k < m->nfeatures; k++)
    x[k] = erg_derived_index(m->feature[k]) >= 0 ? erg_model_derived_value(m, k, u * m->ncpu)
                                                 : u * m->ncpu; /* CPU seconds */
  return erg_model_predict(m, x);
}

/* How far the model's power falls below its running maximum on a fine
 * grid over [0, u_end] (0: non-decreasing), and where it is lowest. */
static inline double curve_model_max_drop(const struct erg_model *m, double u_end, double *at) {
  double worst = 0, top = curve_model_watts(m, 0);
  *at = 0;
  for (int i = 1; i <= 2000; i++) {
    double u = u_end * i / 2000, p = curve_model_watts(m, u);
    if (top - p > worst) {
      worst = top - p;
      *at = u;
    }
    top = fmax(top, p);
  }
  return worst;
}

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/* curve_compare: the utilisation curve before and after issue 27 on the
 * same simulated journals. Before: the degree-6 Bernstein polynomials
 * (node_cpu_utilization_bernstein6_j, coefficients >= 0); after: the
 * degree-8 Bernstein tails (node_cpu_utilization_tail8_j, what
 * erg_dataset_derive adds now: a curve that never falls). Truths: the
 * SPECpower curves of tests/fit/specpower_curves.csv (concave and convex
 * real servers, linear between their 10 % points as erg-pdusim
 * --specpower) and the power laws 100 + 150·u^1.4 (erg-pdusim's default)
 * and 100 + 150·u^2; and a falling one, curve_broadwell (a real server's
 * fit, its load levels running different benchmarks: no ratio of it
 * counts in the worst). Each journal: 3000 cells of 5 s, a third idle-ish
 * (u < 0.05, most near 0), the rest uniform; 1 W meter noise rounded to
 * 0.5 W; steady load within a cell unless --jitter S; idle from a
 * recorded profile (10 minutes of noisy idle cells), or fitted with
 * --fit-idle, or exactly the true idle with --exact-idle (no profile
 * noise). Prints per shape the held-out MAPE (last 25 %), the curve's
 * largest fall over [0, 1], and the fitted power above the true idle
 * divided by the truth's at u = 0.05, 0.1, 0.2, …, 1.0; then the worst
 * over the shapes. With --seeds N, instead, the spread of the ratios at
 * u = 0.05, 0.1, 0.2 of the current curve over seeds 1 … N, per shape
 * (mean, standard deviation, range, runs more than 10 % off): what one
 * seed's worst can and cannot say.
 * Usage: curve_compare [--ncpu N] [--seed S | --seeds N] [--fit-idle | --exact-idle]
 *                      [--noise W] [--jitter S] [--quantum W] [--low-share F] [CSV]
 * Results: docs/model.md, "Utilisation curve". Not a test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "curve_sim.h"

#ifndef CURVES_CSV
#define CURVES_CSV "tests/fit/specpower_curves.csv"
#endif
#define MAX_SHAPES 16
#define NU 11
#define IDLE_CELLS 120

static const double grid_u[NU] = {0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};

struct result {
  double mape_total, mape_dynamic, fall, fall_at, ratio[NU];
};

enum idle_mode { IDLE_PROFILE, IDLE_FITTED, IDLE_EXACT };

static int run(const struct curve *c, const struct curve_sim *s, unsigned long seed, bool after,
               enum idle_mode idle_mode, struct result *out) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, seed);
  struct erg_dataset ds;
  curve_synth(&ds, c, s, r);
  /* A recorded idle profile: the mean of 10 minutes of idle cells as the
   * meter shows them. */
  struct erg_idle_profile idle = {.cells = IDLE_CELLS, .ncpu = s->ncpu};
  for (int i = 0; i < IDLE_CELLS; i++)
    idle.mean_watts += (curve_watts(c, 0) + gsl_ran_gaussian(r, s->noise_watts)) / IDLE_CELLS;
  gsl_rng_free(r);
  if (idle_mode == IDLE_EXACT)
    idle.mean_watts = curve_watts(c, 0);
  char why[256];
  int rc = after ? (erg_dataset_derive(&ds, 0, why, sizeof why) == ERG_NDERIVED ? 0 : -1)
                 : curve_add_bernstein6(&ds, why, sizeof why);
  struct erg_fit_options o;
  erg_fit_options_init(&o);
  o.idle_profile = idle_mode == IDLE_FITTED ? NULL : &idle;
  struct erg_model m;
  if (rc == 0)
    rc = erg_fit(&ds, &o, &m, why, sizeof why);
  erg_dataset_free(&ds);
  if (rc != 0) {
    fprintf(stderr, "%s: %s\n", c->row, why);
    return -1;
  }
  out->mape_total = m.metrics.mape_total_percent;
  out->mape_dynamic = m.metrics.mape_dynamic_percent;
  out->fall = curve_model_max_drop(&m, 1.0, &out->fall_at);
  double idle_true = curve_watts(c, 0);
  for (int k = 0; k < NU; k++)
    out->ratio[k] =
        (curve_model_watts(&m, grid_u[k]) - idle_true) / (curve_watts(c, grid_u[k]) - idle_true);
  return 0;
}

static void print_row(const char *label, const struct result *x) {
  printf("  %-6s %6.2f / %6.2f  ", label, x->mape_total, x->mape_dynamic);
  if (x->fall > 1e-9)
    printf("%5.1f W at %.2f ", x->fall, x->fall_at);
  else
    printf("%-15s", "none");
  for (int k = 0; k < NU; k++)
    printf(" %5.3f", x->ratio[k]);
  printf("\n");
}

/* --seeds: the spread of the current curve's ratios at u = 0.05, 0.1, 0.2
 * over seeds 1 … nseeds. */
static int spread(const struct curve *shapes, int n, const struct curve_sim *s, int nseeds,
                  enum idle_mode idle_mode) {
  enum { NS = 3 };
  printf("  %-6s %-5s  %-45s  %-28s  %-28s\n", "", "", "u = 0.05: mean sd [min, max] >10 % off",
         "u = 0.1: mean sd [min, max]", "u = 0.2: mean sd [min, max]");
  for (int i = 0; i < n; i++) {
    double sum[NS] = {0}, sum2[NS] = {0}, lo[NS], hi[NS];
    int off = 0;
    for (int k = 0; k < NS; k++)
      lo[k] = INFINITY, hi[k] = -INFINITY;
    for (int seed = 1; seed <= nseeds; seed++) {
      struct result x;
      if (run(&shapes[i], s, (unsigned long)seed, true, idle_mode, &x) != 0)
        return 1;
      for (int k = 0; k < NS; k++) {
        sum[k] += x.ratio[k];
        sum2[k] += x.ratio[k] * x.ratio[k];
        lo[k] = fmin(lo[k], x.ratio[k]);
        hi[k] = fmax(hi[k], x.ratio[k]);
      }
      off += fabs(x.ratio[0] - 1) > 0.1;
    }
    printf("  %-6s", shapes[i].row);
    for (int k = 0; k < NS; k++) {
      double mean = sum[k] / nseeds, sd = sqrt(fmax(sum2[k] / nseeds - mean * mean, 0));
      printf("  %5.3f %5.3f [%5.3f, %5.3f]", mean, sd, lo[k], hi[k]);
      if (k == 0)
        printf(" %3d of %-3d", off, nseeds);
    }
    printf("\n");
  }
  return 0;
}

int main(int argc, char **argv) {
  struct curve_sim s = {.cells = 3000,
                        .ncpu = 2,
                        .step_seconds = 5,
                        .low_share = 1.0 / 3,
                        .jitter = 0,
                        .noise_watts = 1.0,
                        .quantum_watts = 0.5,
                        .jitter_scaled = true};
  unsigned long seed = 11;
  int nseeds = 0;
  enum idle_mode idle_mode = IDLE_PROFILE;
  const char *csv = CURVES_CSV;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--ncpu") && i + 1 < argc)
      s.ncpu = atof(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--noise") && i + 1 < argc)
      s.noise_watts = atof(argv[++i]);
    else if (!strcmp(argv[i], "--low-share") && i + 1 < argc)
      s.low_share = atof(argv[++i]);
    else if (!strcmp(argv[i], "--jitter") && i + 1 < argc)
      s.jitter = atof(argv[++i]);
    else if (!strcmp(argv[i], "--quantum") && i + 1 < argc)
      s.quantum_watts = atof(argv[++i]);
    else if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
      nseeds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--fit-idle"))
      idle_mode = IDLE_FITTED;
    else if (!strcmp(argv[i], "--exact-idle"))
      idle_mode = IDLE_EXACT;
    else if (argv[i][0] != '-')
      csv = argv[i];
    else {
      fprintf(stderr, "usage: curve_compare [--ncpu N] [--seed S | --seeds N] [--fit-idle | "
                      "--exact-idle] [--noise W] [--jitter S] [--quantum W] [--low-share F] "
                      "[CSV]\n");
      return 1;
    }
  }
  struct curve shapes[MAX_SHAPES + 3];
  int n = curve_load_csv(csv, shapes, MAX_SHAPES);
  if (n < 0) {
    fprintf(stderr, "curve_compare: cannot read %s\n", csv);
    return 1;
  }
  for (double e = 1.4; e <= 2.0; e += 0.6, n++)
    shapes[n] = (struct curve){.watts = {100}, .slope = 150, .exponent = e};
  snprintf(shapes[n - 2].row, sizeof shapes[0].row, "u^1.4");
  snprintf(shapes[n - 2].system, sizeof shapes[0].system, "erg-pdusim 100 + 150 u^1.4");
  snprintf(shapes[n - 1].row, sizeof shapes[0].row, "u^2");
  snprintf(shapes[n - 1].system, sizeof shapes[0].system, "100 + 150 u^2");
  int monotone_shapes = n;
  shapes[n++] = curve_broadwell; /* falls: no curve ratio counts in the worst */
  static const char *idle_name[] = {"from a profile", "fitted", "exactly the true idle"};
  if (nseeds > 0) {
    printf("%d cells, %g CPUs (0.1 core = u %.3f), idle %s, seeds 1-%d: the current curve's "
           "fitted / true power above true idle\n",
           s.cells, s.ncpu, 0.1 / s.ncpu, idle_name[idle_mode], nseeds);
    return spread(shapes, monotone_shapes, &s, nseeds, idle_mode);
  }
  printf("%d cells, %g CPUs (0.1 core = u %.3f), idle %s, seed %lu\n", s.cells, s.ncpu,
         0.1 / s.ncpu, idle_name[idle_mode], seed);
  printf("  %-6s %-16s %-15s  fitted / true power above true idle at u =\n", "", "MAPE tot / dyn",
         "largest fall");
  printf("  %-6s %-16s %-15s", "", "", "");
  for (int k = 0; k < NU; k++)
    printf(" %5.2f", grid_u[k]);
  printf("\n");
  struct result worst[2] = {{0}};
  for (int k = 0; k < NU; k++)
    worst[0].ratio[k] = worst[1].ratio[k] = 1;
  int falls[2] = {0}, failed = 0;
  for (int i = 0; i < n; i++) {
    const struct curve *c = &shapes[i];
    double half = curve_watts(c, 0.5) - c->watts[0], full = curve_watts(c, 1) - c->watts[0];
    printf("%s %s (%s): idle %.1f W, +%.1f W at full load\n", c->row, c->system,
           i >= monotone_shapes ? "falls in the middle"
           : half < full / 2    ? "convex"
                                : "concave",
           curve_watts(c, 0), full);
    for (int a = 0; a < 2; a++) {
      struct result x;
      if (run(c, &s, seed, a, idle_mode, &x) != 0) {
        failed = 1;
        continue;
      }
      print_row(a ? "after" : "before", &x);
      if (i < monotone_shapes) {
        worst[a].mape_total = fmax(worst[a].mape_total, x.mape_total);
        worst[a].mape_dynamic = fmax(worst[a].mape_dynamic, x.mape_dynamic);
      }
      if (x.fall > worst[a].fall) {
        worst[a].fall = x.fall;
        worst[a].fall_at = x.fall_at;
      }
      falls[a] += x.fall > 1e-9;
      for (int k = 0; k < NU && i < monotone_shapes; k++)
        if (fabs(x.ratio[k] - 1) > fabs(worst[a].ratio[k] - 1))
          worst[a].ratio[k] = x.ratio[k];
    }
  }
  printf("worst over the %d rising shapes (ratio furthest from 1); curves that fall of all %d: "
         "before %d, after %d\n",
         monotone_shapes, n, falls[0], falls[1]);
  print_row("before", &worst[0]);
  print_row("after", &worst[1]);
  return failed;
}

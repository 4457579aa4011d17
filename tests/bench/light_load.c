// SPDX-License-Identifier: GPL-3.0-or-later
/* light_load: the fitted utilisation curve at light load (0.1 and 0.2 of
 * a core on 2 CPUs, u = 0.05 and 0.1) on journals shaped like the accuracy
 * harness's training (issue 38). Per segment of 15 s (starting --offset s
 * into a 5 s cell: then every third cell spans a load change):
 * two processes each at {0, 0, 0.2, ..., 1} core; on a node with I/O also
 * a direct-I/O writer at {0, 0, 10, 20, 30, 40} MB/s whose kernel CPU time
 * (KIO core per 40 MB/s) is in the cell's CPU time. Truth P = 100 W +
 * 150·u^1.4 + 0.5 W per MB/s, 1 W meter noise rounded to 0.5 W, idle from
 * an exact profile. The load is sampled 10 times a second, each process
 * jittering by --jitter core (sd), and the meter shows the mean power of
 * the samples (the curve's mean, not the curve at the mean; --response S:
 * the curve at the load's mean over each S s), --period S: each process
 * a new level every S … 1.5 S s, --burst: a starved process, each of the
 * 0.1 s's five 20 ms slices run or not at its level's odds; --lag-error:
 * the cells' power is that many seconds late. Fitted with erg_fit (curve
 * and disk as `erg fit` does; --agent S: the tails given as the cell's
 * mean of the tails of the agent's S s samples (from --phase S, 0.3 s), as ergd
 * journals them, --cell-tails: --agent 0.1; neither: the tails of the
 * cell's mean), --choose S: also fitted with the tails of S s samples,
 * the fit with the smaller residual sum of squares kept; prints, over seeds 1 … N, the mean,
 * standard deviation and runs more than 10 % off of the fitted curve (disk 0) over the truth.
 * Usage: light_load [--disk] [--kio CORE] [--jitter CORE] [--offset S] [--lag-error S]
 *                   [--cell-tails | --agent S] [--phase S] [--choose S] [--response S] [--period S]
 * [--burst]
 *                   [--exponent X] [--segments N] [--seeds N] [--shape SHAPE]
 * Results: docs/accuracy.md, "Light load (issue 38)". Not a test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "erg_fit.h"

#define NCPU 2.0
#define SEG_SECONDS 15
#define SUB 10 /* samples of the load per second */

static double exponent = 1.4; /* --exponent */
static double truth(double u) { return 150 * pow(fmin(fmax(u, 0), 1), exponent); }

/* The model's curve above idle at u, no disk activity. */
static double model_curve(const struct erg_model *m, double u) {
  double x[ERG_FIT_MAX_FEATURES];
  for (size_t k = 0; k < m->nfeatures; k++)
    x[k] = erg_derived_index(m->feature[k]) >= 0 ? erg_model_derived_value(m, k, u * m->ncpu)
           : strcmp(m->feature[k], "cpu_seconds_per_second") == 0 ? u * m->ncpu
                                                                  : 0;
  return erg_model_predict(m, x) - m->idle_watts;
}

struct sim {
  int disk, segs, offset, lag_error, burst;
  int agent_sub;    /* the agent's sample, in load samples (0: tails of the cell's mean) */
  int alt_sub;      /* --choose: the other sample length, the better fit kept */
  int phase_sub;    /* the agent's samples start this many load samples late */
  int response_sub; /* the power follows the load's mean over this many load samples */
  double kio, jitter, period;
  enum erg_curve_shape shape;
};

/* The load at 0.1 s: utilisation, disk MB/s, and the tails the agent's
 * sample holding it gives it (the tails of the sample's mean load). */
struct tick {
  double u, d, p, tail[ERG_NDERIVED];
};

/* The journal of the ticks with each tail the cell's mean of the tails of
 * the agent's agent_sub-tick samples (0: the tails of the cell's mean),
 * fitted as `erg fit` does; rss: its residual sum of squares. */
static int fit_tails(struct tick *tk, int nt, const struct sim *sim, int agent_sub,
                     const double *noise, int ncells, struct erg_model *m, double *rss) {
  /* The agent's samples from --phase (0.3 s: not in step with the meter
   * or the cells); each tick gets its sample's tails. */
  int as = agent_sub > 0 ? agent_sub : 1;
  for (int i0 = -(sim->phase_sub % as); i0 < nt; i0 += as) {
    int lo = i0 < 0 ? 0 : i0, i1 = i0 + as < nt ? i0 + as : nt;
    double u = 0;
    for (int i = lo; i < i1; i++)
      u += tk[i].u / (i1 - lo);
    for (int i = lo; i < i1; i++)
      for (int k = 0; k < ERG_NDERIVED; k++)
        tk[i].tail[k] = erg_derived_value(k, u * NCPU, NCPU);
  }
  struct erg_dataset ds;
  char why[256];
  erg_dataset_init(&ds);
  ds.step_seconds = 5;
  erg_dataset_add_feature(&ds, "cpu_seconds_per_second", why, sizeof why);
  erg_dataset_add_feature(&ds, "disk_bytes_per_second", why, sizeof why);
  erg_dataset_add_feature(&ds, ERG_NCPU_COLUMN, why, sizeof why);
  for (int i = 0; agent_sub > 0 && i < ERG_NDERIVED; i++)
    erg_dataset_add_feature(&ds, erg_derived_names[i], why, sizeof why);
  double(*rows)[3 + ERG_NDERIVED] = calloc((size_t)ncells + 1, sizeof *rows);
  double *pw = calloc((size_t)ncells + 1, sizeof *pw);
  /* Cells of 5 s; the meter's power lag_error seconds later than the
   * activity (a lag estimate that far off). */
  int cell = 5 * SUB, lag = sim->lag_error * SUB;
  for (int c = 0; c < ncells; c++) {
    double u = 0, dd = 0, p = 0, *row = rows[c];
    for (int t = c * cell; t < (c + 1) * cell; t++) {
      u += tk[t].u / cell;
      dd += tk[t].d / cell;
      p += tk[t + lag].p / cell;
      for (int i = 0; i < ERG_NDERIVED; i++)
        row[3 + i] += tk[t].tail[i] / cell;
    }
    row[0] = u * NCPU;
    row[1] = dd * 1e6;
    row[2] = NCPU;
    pw[c] = round((100 + p + noise[c]) / 0.5) * 0.5;
    erg_dataset_add_row(&ds, 1763700000 + 5 * c, 5, pw[c], 0, row);
  }
  int rc = agent_sub > 0 || erg_dataset_derive(&ds, 0, why, sizeof why) > 0 ? 0 : -1;
  struct erg_idle_profile idle = {.mean_watts = 100, .cells = 24, .ncpu = NCPU};
  struct erg_fit_options o;
  erg_fit_options_init(&o);
  o.idle_profile = &idle;
  o.curve_shape = sim->shape;
  if (rc == 0 && erg_fit(&ds, &o, m, why, sizeof why) != 0)
    rc = -1;
  /* Residuals: each model feature from the row (derived ones from its
   * tails, or from the cell's mean when the journal had none). */
  *rss = 0;
  for (int c = 0; rc == 0 && c < ncells; c++) {
    double x[ERG_FIT_MAX_FEATURES];
    for (size_t k = 0; k < m->nfeatures; k++) {
      int d = erg_derived_index(m->feature[k]);
      x[k] = d >= 0 ? (agent_sub > 0 ? rows[c][3 + d] : erg_model_derived_value(m, k, rows[c][0]))
             : strcmp(m->feature[k], "cpu_seconds_per_second") == 0 ? rows[c][0]
             : strcmp(m->feature[k], "disk_bytes_per_second") == 0  ? rows[c][1]
                                                                    : 0;
    }
    double e = pw[c] - erg_model_predict(m, x);
    *rss += e * e;
  }
  free(rows);
  free(pw);
  erg_dataset_free(&ds);
  return rc;
}

static int fit_one(int seed, const struct sim *sim, struct erg_model *m, int *chose_alt) {
  static const double lv[] = {0, 0, 0.2, 0.4, 0.6, 0.8, 1}, dv[] = {0, 0, 10, 20, 30, 40};
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, (unsigned long)seed);
  int n = sim->offset + sim->segs * SEG_SECONDS + sim->lag_error + 10, nt = n * SUB;
  struct tick *tk = calloc((size_t)nt, sizeof *tk);
  double a = 0, b = 0, d = 0, next_a = 0, next_b = 0;
  for (int s = 0; s < sim->segs; s++) {
    if (!(sim->period > 0)) {
      a = lv[gsl_rng_uniform_int(r, 7)];
      b = lv[gsl_rng_uniform_int(r, 7)];
    }
    d = sim->disk ? dv[gsl_rng_uniform_int(r, 6)] : 0;
    for (int k = 0; k < SEG_SECONDS * SUB; k++) {
      int i = (sim->offset + s * SEG_SECONDS) * SUB + k;
      double t = (double)i / SUB;
      /* --period: each process a new level every period … 1.5 period s,
       * not in step with anything (as burst.py). */
      if (sim->period > 0 && t >= next_a) {
        a = lv[gsl_rng_uniform_int(r, 7)];
        next_a = t + sim->period * (1 + 0.5 * gsl_rng_uniform(r));
      }
      if (sim->period > 0 && t >= next_b) {
        b = lv[gsl_rng_uniform_int(r, 7)];
        next_b = t + sim->period * (1 + 0.5 * gsl_rng_uniform(r));
      }
      double ca, cb;
      if (sim->burst) { /* starved: 20 ms slices won at the level's odds */
        ca = gsl_ran_binomial(r, a, 5) / 5.0;
        cb = gsl_ran_binomial(r, b, 5) / 5.0;
      } else {
        ca = a > 0 ? fmax(a + gsl_ran_gaussian(r, sim->jitter), 0) : 0;
        cb = b > 0 ? fmax(b + gsl_ran_gaussian(r, sim->jitter), 0) : 0;
      }
      tk[i].u = fmin((ca + cb + sim->kio * d / 40) / NCPU, 1);
      tk[i].d = d;
    }
  }
  /* The power: the curve at the load's mean over each response_sub block
   * (the meter's truth, blocks from 0), plus the disk's. */
  for (int i0 = 0; i0 < nt; i0 += sim->response_sub) {
    int i1 = i0 + sim->response_sub < nt ? i0 + sim->response_sub : nt;
    double u = 0;
    for (int i = i0; i < i1; i++)
      u += tk[i].u / (i1 - i0);
    for (int i = i0; i < i1; i++)
      tk[i].p = truth(u) + 0.5 * tk[i].d;
  }
  /* The meter's noise per cell, the same for every fit of this journal. */
  int cell = 5 * SUB, lag = sim->lag_error * SUB, ncells = 0;
  while ((ncells + 1) * cell + lag <= nt)
    ncells++;
  double *noise = calloc((size_t)ncells + 1, sizeof *noise);
  for (int c = 0; c < ncells; c++)
    noise[c] = gsl_ran_gaussian(r, 1.0);
  gsl_rng_free(r);
  double rss;
  int rc = fit_tails(tk, nt, sim, sim->agent_sub, noise, ncells, m, &rss);
  /* --choose S: also with the tails of S s samples, the fit with the
   * smaller residual sum of squares kept (the same parameters). */
  if (rc == 0 && sim->alt_sub > 0) {
    struct erg_model alt;
    double rss_alt;
    if (fit_tails(tk, nt, sim, sim->alt_sub, noise, ncells, &alt, &rss_alt) == 0 && rss_alt < rss) {
      *m = alt;
      *chose_alt = 1;
    }
  }
  free(noise);
  free(tk);
  if (rc != 0)
    fprintf(stderr, "seed %d: the fit failed\n", seed);
  return rc;
}

int main(int argc, char **argv) {
  struct sim sim = {.segs = 24, .response_sub = 1, .phase_sub = 3};
  int seeds = 100;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--disk"))
      sim.disk = 1;
    else if (!strcmp(argv[i], "--cell-tails"))
      sim.agent_sub = 1;
    else if (!strcmp(argv[i], "--agent") && i + 1 < argc)
      sim.agent_sub = (int)lround(atof(argv[++i]) * SUB);
    else if (!strcmp(argv[i], "--phase") && i + 1 < argc)
      sim.phase_sub = (int)lround(atof(argv[++i]) * SUB);
    else if (!strcmp(argv[i], "--choose") && i + 1 < argc)
      sim.alt_sub = (int)lround(atof(argv[++i]) * SUB);
    else if (!strcmp(argv[i], "--response") && i + 1 < argc)
      sim.response_sub = (int)lround(atof(argv[++i]) * SUB);
    else if (!strcmp(argv[i], "--period") && i + 1 < argc)
      sim.period = atof(argv[++i]);
    else if (!strcmp(argv[i], "--exponent") && i + 1 < argc)
      exponent = atof(argv[++i]);
    else if (!strcmp(argv[i], "--burst"))
      sim.burst = 1;
    else if (!strcmp(argv[i], "--kio") && i + 1 < argc)
      sim.kio = atof(argv[++i]);
    else if (!strcmp(argv[i], "--jitter") && i + 1 < argc)
      sim.jitter = atof(argv[++i]);
    else if (!strcmp(argv[i], "--offset") && i + 1 < argc)
      sim.offset = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--lag-error") && i + 1 < argc)
      sim.lag_error = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--segments") && i + 1 < argc)
      sim.segs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
      seeds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--shape") && i + 1 < argc && erg_curve_shape_parse(argv[i + 1]) >= 0)
      sim.shape = (enum erg_curve_shape)erg_curve_shape_parse(argv[++i]);
    else {
      fprintf(
          stderr,
          "usage: light_load [--disk] [--kio CORE] [--jitter CORE] [--offset S] "
          "[--lag-error S] [--cell-tails | --agent S] [--phase S] [--choose S] [--response S] "
          "[--period S] "
          "[--burst] [--exponent X] [--segments N] [--seeds N] [--shape auto|monotone|convex]\n");
      return 1;
    }
  }
  if (sim.response_sub < 1 || sim.agent_sub < 0) {
    fprintf(stderr, "light_load: --agent and --response: at least 0.1 s\n");
    return 1;
  }
  static const double at[] = {0.05, 0.1, 0.2};
  double sum[3] = {0}, sq[3] = {0};
  int miss[3] = {0}, n = 0, nalt = 0;
  for (int seed = 1; seed <= seeds; seed++) {
    struct erg_model m;
    int alt = 0;
    if (fit_one(seed, &sim, &m, &alt) != 0)
      continue;
    n++;
    nalt += alt;
    for (int k = 0; k < 3; k++) {
      double q = model_curve(&m, at[k]) / truth(at[k]);
      sum[k] += q;
      sq[k] += q * q;
      miss[k] += fabs(q - 1) > 0.10;
    }
  }
  char every[64] = "segment";
  if (sim.period > 0)
    snprintf(every, sizeof every, "%.2g-%.2g s", sim.period, 1.5 * sim.period);
  printf(
      "%s, kio %.2f core per 40 MB/s, %s %.2f core, levels every %s, segments at +%d s, "
      "lag error %d s, %d segments of %d s, power per %.1f s of load, tails %s %.1f s, %d fits:\n",
      sim.disk ? "CPU + direct I/O" : "CPU only", sim.kio, sim.burst ? "bursts, jitter" : "jitter",
      sim.burst ? 0 : sim.jitter, every, sim.offset, sim.lag_error, sim.segs, SEG_SECONDS,
      (double)sim.response_sub / SUB,
      sim.agent_sub ? "of the agent's samples of" : "of the cell's mean, cells of",
      sim.agent_sub ? (double)sim.agent_sub / SUB : 5.0, n);
  for (int k = 0; k < 3 && n > 0; k++)
    printf("  %.1f core (u = %.2f): fitted / true %.3f ± %.3f, %d of %d more than 10 %% off\n",
           at[k] * NCPU, at[k], sum[k] / n, sqrt(fmax(sq[k] / n - sum[k] * sum[k] / n / n, 0)),
           miss[k], n);
  if (sim.alt_sub > 0)
    printf("  the %.1f s samples' tails fitted better in %d of %d\n", (double)sim.alt_sub / SUB,
           nalt, n);
  return 0;
}

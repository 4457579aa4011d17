/* light_load: the fitted utilisation curve at light load (0.1 and 0.2 of
 * a core on 2 CPUs, u = 0.05 and 0.1) on journals shaped like the accuracy
 * harness's training (issue 38). Per segment of SEG_CELLS cells of 5 s:
 * two processes each at {0, 0, 0.2, ..., 1} core; on a node with I/O also
 * a direct-I/O writer at {0, 0, 10, 20, 30, 40} MB/s whose kernel CPU time
 * (KIO core per 40 MB/s) is in the cell's CPU time. Truth P = 100 W +
 * 150·u^1.4 + 0.5 W per MB/s, 1 W meter noise rounded to 0.5 W, idle from
 * an exact profile. Fitted with erg_fit (curve and disk as `erg fit`
 * does); prints, over seeds 1 … N, the mean, standard deviation and runs
 * more than 10 % off of the fitted curve (disk 0) over the truth.
 * Usage: light_load [--disk] [--kio CORE] [--segments N] [--seeds N]
 * Results: docs/accuracy.md, "Light load (issue 38)". Not a test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "erg_fit.h"

#define NCPU 2.0
#define SEG_CELLS 3

static double truth(double u) { return 150 * pow(fmin(fmax(u, 0), 1), 1.4); }

/* The model's curve above idle at u, no disk activity. */
static double model_curve(const struct erg_model *m, double u) {
  double x[ERG_FIT_MAX_FEATURES];
  for (size_t k = 0; k < m->nfeatures; k++)
    x[k] = erg_derived_index(m->feature[k]) >= 0 ? erg_model_derived_value(m, k, u * m->ncpu)
           : strcmp(m->feature[k], "cpu_seconds_per_second") == 0 ? u * m->ncpu
                                                                  : 0;
  return erg_model_predict(m, x) - m->idle_watts;
}

static int fit_one(int seed, int disk, double kio, int segs, struct erg_model *m) {
  static const double lv[] = {0, 0, 0.2, 0.4, 0.6, 0.8, 1}, dv[] = {0, 0, 10, 20, 30, 40};
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, (unsigned long)seed);
  struct erg_dataset ds;
  char why[256];
  erg_dataset_init(&ds);
  ds.step_seconds = 5;
  erg_dataset_add_feature(&ds, "cpu_seconds_per_second", why, sizeof why);
  erg_dataset_add_feature(&ds, "disk_bytes_per_second", why, sizeof why);
  erg_dataset_add_feature(&ds, ERG_NCPU_COLUMN, why, sizeof why);
  for (int s = 0, cell = 0; s < segs; s++) {
    double a = lv[gsl_rng_uniform_int(r, 7)], b = lv[gsl_rng_uniform_int(r, 7)];
    double d = disk ? dv[gsl_rng_uniform_int(r, 6)] : 0;
    double u = fmin((a + b + kio * d / 40) / NCPU, 1);
    for (int c = 0; c < SEG_CELLS; c++, cell++) {
      double p = round((100 + truth(u) + 0.5 * d + gsl_ran_gaussian(r, 1.0)) / 0.5) * 0.5;
      double x[3] = {u * NCPU, d * 1e6, NCPU};
      erg_dataset_add_row(&ds, 1763700000 + 5 * cell, 5, p, 0, x);
    }
  }
  gsl_rng_free(r);
  int rc = erg_dataset_derive(&ds, 0, why, sizeof why) > 0 ? 0 : -1;
  struct erg_idle_profile idle = {.mean_watts = 100, .cells = 24, .ncpu = NCPU};
  struct erg_fit_options o;
  erg_fit_options_init(&o);
  o.idle_profile = &idle;
  if (rc == 0 && erg_fit(&ds, &o, m, why, sizeof why) != 0) {
    fprintf(stderr, "seed %d: %s\n", seed, why);
    rc = -1;
  }
  erg_dataset_free(&ds);
  return rc;
}

int main(int argc, char **argv) {
  int disk = 0, segs = 24, seeds = 100;
  double kio = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--disk"))
      disk = 1;
    else if (!strcmp(argv[i], "--kio") && i + 1 < argc)
      kio = atof(argv[++i]);
    else if (!strcmp(argv[i], "--segments") && i + 1 < argc)
      segs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
      seeds = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: light_load [--disk] [--kio CORE] [--segments N] [--seeds N]\n");
      return 1;
    }
  }
  static const double at[] = {0.05, 0.1, 0.2};
  double sum[3] = {0}, sq[3] = {0};
  int miss[3] = {0}, n = 0;
  for (int seed = 1; seed <= seeds; seed++) {
    struct erg_model m;
    if (fit_one(seed, disk, kio, segs, &m) != 0)
      continue;
    n++;
    for (int k = 0; k < 3; k++) {
      double q = model_curve(&m, at[k]) / truth(at[k]);
      sum[k] += q;
      sq[k] += q * q;
      miss[k] += fabs(q - 1) > 0.10;
    }
  }
  printf("%s, kio %.2f core per 40 MB/s, %d segments of %d cells, %d fits:\n",
         disk ? "CPU + direct I/O" : "CPU only", kio, segs, SEG_CELLS, n);
  for (int k = 0; k < 3 && n > 0; k++)
    printf("  %.1f core (u = %.2f): fitted / true %.3f ± %.3f, %d of %d more than 10 %% off\n",
           at[k] * NCPU, at[k], sum[k] / n, sqrt(fmax(sq[k] / n - sum[k] * sum[k] / n / n, 0)),
           miss[k], n);
  return 0;
}

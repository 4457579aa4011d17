// SPDX-License-Identifier: GPL-3.0-or-later
/* Cost of the per-job uncertainty beside the attribution it follows
 * (docs/benchmarks.md, "Per-job uncertainty"): a cell of P rows (keys) of
 * K features in J jobs, attributed (erg_attribute_cell_idle) and then its
 * jobs' uncertainty (erg_attribute_uncertainty), each timed over many
 * cells. Not a test. usage: unc_bench [P=100] [K=13] [J=10] [CELLS=20000] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "erg_fit.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  size_t P = argc > 1 ? strtoul(argv[1], NULL, 10) : 100,
         K = argc > 2 ? strtoul(argv[2], NULL, 10) : 13;
  size_t J = argc > 3 ? strtoul(argv[3], NULL, 10) : 10;
  long cells = argc > 4 ? strtol(argv[4], NULL, 10) : 20000;
  if (!P || !K || K + 1 > ERG_MODEL_COV_MAX || !J || cells <= 0)
    return 1;
  struct erg_model *m = calloc(1, sizeof *m);
  double *x = malloc((P + 1) * K * sizeof *x), *w = malloc((P + 1) * sizeof *w);
  int *group = malloc((P + 1) * sizeof *group);
  struct erg_unc_group *g = malloc(J * sizeof *g);
  if (!m || !x || !w || !group || !g)
    return 1;
  m->version = ERG_MODEL_VERSION;
  m->nfeatures = K;
  m->idle_watts = 100;
  m->ncov = K + 1;
  srand(1);
  for (size_t k = 0; k < K; k++) {
    snprintf(m->feature[k], ERG_FIT_NAME_MAX, "f%zu", k);
    m->coef[k] = 1 + k;
  }
  for (size_t a = 0; a <= K; a++)
    for (size_t b = 0; b <= K; b++)
      m->cov[a][b] = a == b ? 0.01 : 0.001;
  for (size_t p = 0; p <= P; p++) {
    for (size_t k = 0; k < K; k++)
      x[p * K + k] = p < P ? (double)rand() / RAND_MAX : 0;
    group[p] = p < P ? (int)(p % J) : -1;
  }
  struct erg_unc_cell in = {.meter_var_watts2 = 0.1, .misfit_watts = 3, .misfit_cells = 4};
  struct erg_attribution a;
  double t0 = now_s(), sink = 0;
  for (long c = 0; c < cells; c++) {
    erg_attribute_cell_idle(m, 100, 300 + (double)(c % 7), x, P + 1, P, ERG_IDLE_SEPARATE, w, &a);
    sink += w[0];
  }
  double t1 = now_s();
  for (long c = 0; c < cells; c++) {
    erg_attribute_cell_idle(m, 100, 300 + (double)(c % 7), x, P + 1, P, ERG_IDLE_SEPARATE, w, &a);
    erg_attribute_uncertainty(m, 100, &a, x, P + 1, P, ERG_IDLE_SEPARATE, &in, group, J, g);
    sink += g[0].var_watts2;
  }
  double t2 = now_s();
  /* As ergd: the jobs' and then the node's dynamic power (every row one group). */
  int *all = calloc(P + 1, sizeof *all);
  if (!all)
    return 1;
  for (long c = 0; c < cells; c++) {
    erg_attribute_cell_idle(m, 100, 300 + (double)(c % 7), x, P + 1, P, ERG_IDLE_SEPARATE, w, &a);
    erg_attribute_uncertainty(m, 100, &a, x, P + 1, P, ERG_IDLE_SEPARATE, &in, group, J, g);
    erg_attribute_uncertainty(m, 100, &a, x, P + 1, P, ERG_IDLE_SEPARATE, &in, all, 1, g);
    sink += g[0].var_watts2;
  }
  double t3 = now_s();
  double attr = (t1 - t0) / (double)cells, both = (t2 - t1) / (double)cells,
         node = (t3 - t2) / (double)cells;
  printf("P=%zu K=%zu J=%zu: attribution %.2f us/cell, with the jobs' uncertainty %.2f us/cell "
         "(+%.2f us), and the node's dynamic %.2f us/cell (+%.2f us) [%g]\n",
         P, K, J, 1e6 * attr, 1e6 * both, 1e6 * (both - attr), 1e6 * node, 1e6 * (node - attr),
         sink > 0 ? 1.0 : 0.0);
  free(all);
  free(m);
  free(x);
  free(w);
  free(group);
  free(g);
  return 0;
}

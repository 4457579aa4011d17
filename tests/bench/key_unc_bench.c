// SPDX-License-Identifier: GPL-3.0-or-later
/* Cost of every kind's key intervals in ergd's attribution of a cell
 * (docs/benchmarks.md, "Per-job uncertainty"): erg_cell_attribute of a
 * cell of P processes (keys of J jobs, P/4 commands, 5 users, 8 units) with
 * a K-feature model and its covariance, without intervals (cm.unc NULL)
 * and with them (each kind's keys and the node's dynamic power), then the
 * roll-up into the kinds' entries ergd writes. Not a test.
 * usage: key_unc_bench [P=100] [K=13] [J=10] [CELLS=5000] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector_int.h"
#include "erg_collector.h"
#include "erg_fit.h"

#define NS 1000000000ULL
#define T0 1700000000LL
#define STEP 5u

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: a busy host */
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  size_t P = argc > 1 ? strtoul(argv[1], NULL, 10) : 100,
         K = argc > 2 ? strtoul(argv[2], NULL, 10) : 13;
  size_t J = argc > 3 ? strtoul(argv[3], NULL, 10) : 10;
  long cells = argc > 4 ? strtol(argv[4], NULL, 10) : 5000;
  if (!P || K < 2 || K + 1 > ERG_MODEL_COV_MAX || !J || cells <= 0)
    return 1;
  struct erg_model *m = calloc(1, sizeof *m);
  int *map = calloc(K, sizeof *map);
  char(*keys)[PROFILE_KEY_MAX] = calloc(P, sizeof *keys);
  struct erg_grid_proc *p = calloc(P, sizeof *p);
  struct erg_attr_share *sh = calloc(P + 1, sizeof *sh);
  if (!m || !map || !keys || !p || !sh)
    return 1;
  m->version = ERG_MODEL_VERSION;
  m->nfeatures = K;
  m->idle_watts = 100;
  m->ncov = K + 1;
  strcpy(m->feature[0], "cpu_seconds_per_second");
  strcpy(m->feature[1], "disk_bytes_per_second");
  map[0] = ERG_FEAT_CPU;
  map[1] = ERG_FEAT_DISK;
  m->coef[0] = 20;
  m->coef[1] = 1e-6;
  for (size_t k = 2; k < K; k++) {
    snprintf(m->feature[k], ERG_FIT_NAME_MAX, "f%zu_per_second", k);
    map[k] = -1;
    m->coef[k] = 1;
  }
  for (size_t a = 0; a <= K; a++)
    for (size_t b = 0; b <= K; b++)
      m->cov[a][b] = a == b ? 0.01 : 0.001;
  srand(1);
  double busy = 0;
  for (size_t i = 0; i < P; i++) {
    char comm[32], job[32], unit[40];
    snprintf(comm, sizeof comm, "c%zu", i % (P / 4 + 1));
    snprintf(job, sizeof job, "%zu", 1000 + i % J);
    snprintf(unit, sizeof unit, "u%zu.service", i % 8);
    profile_key_build(keys[i], sizeof keys[i], comm, job, unit, "", (uint32_t)(1000 + i % 5));
    p[i] = (struct erg_grid_proc){keys[i],
                                  0.02 * STEP * (double)rand() / RAND_MAX,
                                  1e5 * STEP * (double)rand() / RAND_MAX,
                                  0,
                                  0,
                                  0};
    busy += p[i].cpu_seconds;
  }
  struct erg_grid g;
  erg_grid_init(&g, STEP);
  erg_grid_add_procs(&g, (uint64_t)T0 * NS, (uint64_t)(T0 + STEP) * NS, busy, 0, p, P);
  struct erg_grid_cell *c = &g.cells[(T0 / STEP) % ERG_GRID_SLOTS];
  struct erg_unc_cell in = {
      .meter_var_watts2 = 0.1, .misfit_watts = 3, .misfit_cells = 4, .noise_watts = 0.3};
  struct erg_cell_model off = {m, map, ERG_IDLE_SEPARATE, NULL}, on = off;
  on.unc = &in;
  struct erg_cell_power pw;
  double t[3], sink = 0;
  for (int pass = 0; pass < 2; pass++) {
    t[0] = now_s();
    for (long i = 0; i < cells; i++) {
      struct erg_grid_result r = {
          .t0 = T0, .step = STEP, .measured_watts = 150 + (double)(i % 7), .cell = c};
      erg_cell_attribute(pass ? &on : &off, 0, &r, sh, &pw);
      struct profile_rollup ru;
      if (profile_rollup(&ru, sh, c->nkeys, NULL, 20, 0) == 0) {
        sink += ru.out[PROFILE_JOB][0].sd_watts;
        profile_rollup_free(&ru);
      }
    }
    t[1 + pass] = now_s() - t[0];
  }
  printf("P=%zu K=%zu J=%zu: attribution and roll-up %.1f us/cell without intervals, %.1f us "
         "with every kind's and the node's (+%.1f us) [%g]\n",
         P, K, J, 1e6 * t[1] / (double)cells, 1e6 * t[2] / (double)cells,
         1e6 * (t[2] - t[1]) / (double)cells, sink > 0 ? 1.0 : 0.0);
  erg_grid_free(&g);
  free(m);
  free(map);
  free(keys);
  free(p);
  free(sh);
  return 0;
}

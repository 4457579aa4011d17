// SPDX-License-Identifier: GPL-3.0-or-later
/* Cost of splitting the curve's power by each agent sample's CPU shares
 * (docs/model.md, "Attribution of a derived feature"; docs/benchmarks.md):
 * 1-s samples of P processes with 10 busy-time slices each into a 5-s
 * grid and each cell attributed with a curve model (CPU time + the eight
 * tails), once with the grid's curve coefficients 0 (the cell's CPU
 * shares split the curve, as before) and once with the model's (the
 * samples' shares), alternating, in one invocation. Not a test.
 * usage: curve_split_bench [P=100] [CELLS=2000] [ROUNDS=3] */
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
#define SLICES 10
#define NCPU 16

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct bench_ctx {
  const struct erg_cell_model *cm;
  struct erg_attr_share *sh;
  double sink;
};

static void on_cell(void *user, const struct erg_grid_result *r) {
  struct bench_ctx *b = user;
  struct erg_cell_power pw;
  struct erg_grid_result rr = *r;
  rr.measured_watts = 400;
  if (erg_cell_attribute(b->cm, 0, &rr, b->sh, &pw) == 0)
    b->sink += b->sh[0].watts;
}

/* CPU seconds of CELLS cells of samples added and attributed. */
static double run(const struct erg_cell_model *cm, bool split, size_t P, long cells,
                  const struct erg_grid_proc *p, struct erg_attr_share *sh, double *sink) {
  struct erg_grid g;
  erg_grid_init(&g, STEP);
  g.ncpu = NCPU;
  if (split)
    erg_cell_model_curve(cm, NCPU, g.curve_coef);
  struct bench_ctx b = {cm, sh, 0};
  struct erg_grid_slice sl[SLICES];
  double t = now_s();
  for (long s = 0; s < cells * (long)STEP; s++) {
    uint64_t a = (uint64_t)(T0 + s) * NS;
    double busy = 0;
    for (int i = 0; i < SLICES; i++) {
      sl[i] = (struct erg_grid_slice){a + (uint64_t)i * NS / SLICES,
                                      a + (uint64_t)(i + 1) * NS / SLICES,
                                      NCPU * 0.1 * (0.2 + 0.6 * ((s + i) % 7) / 6.0)};
      busy += sl[i].busy_cpu_seconds;
    }
    erg_grid_add_procs_sliced(&g, a, a + NS, busy, 0, p, P, sl, SLICES);
    if ((s + 1) % STEP == 0)
      erg_grid_finalize(&g, T0 + s + 1, 0, on_cell, &b);
  }
  t = now_s() - t;
  erg_grid_free(&g);
  *sink += b.sink;
  return t;
}

int main(int argc, char **argv) {
  size_t P = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
  long cells = argc > 2 ? strtol(argv[2], NULL, 10) : 2000;
  int rounds = argc > 3 ? atoi(argv[3]) : 3;
  if (!P || cells <= 0 || rounds <= 0)
    return 1;
  struct erg_model *m = calloc(1, sizeof *m);
  int map[ERG_FIT_MAX_FEATURES];
  char(*keys)[32] = calloc(P, sizeof *keys);
  struct erg_grid_proc *p = calloc(P, sizeof *p);
  struct erg_attr_share *sh = calloc(P + 1, sizeof *sh);
  if (!m || !keys || !p || !sh)
    return 1;
  m->version = ERG_MODEL_VERSION;
  m->nfeatures = 1 + ERG_NDERIVED;
  m->ncpu = NCPU;
  m->idle_watts = 100;
  strcpy(m->feature[0], "cpu_seconds_per_second");
  m->coef[0] = 5;
  map[0] = ERG_FEAT_CPU;
  for (int d = 0; d < ERG_NDERIVED; d++) {
    strcpy(m->feature[1 + d], erg_derived_names[d]);
    m->coef[1 + d] = 10.0 * (d + 1);
    map[1 + d] = ERG_NFEATURES + d;
  }
  for (size_t i = 0; i < P; i++) {
    snprintf(keys[i], sizeof keys[i], "k%zu", i);
    p[i] =
        (struct erg_grid_proc){keys[i], 0.5 * NCPU / (double)P * (1 + (double)(i % 3)), 0, 0, 0, 0};
  }
  struct erg_cell_model cm = {m, map, ERG_IDLE_SEPARATE, NULL};
  double off = 0, on = 0, sink = 0;
  for (int r = 0; r < rounds; r++) {
    off += run(&cm, false, P, cells, p, sh, &sink);
    on += run(&cm, true, P, cells, p, sh, &sink);
  }
  double per = (double)rounds * (double)cells;
  printf("P=%zu, %ld cells x %d rounds: samples added and cells attributed %.1f us/cell with "
         "the cell's CPU shares, %.1f us/cell with the samples' (ratio %.3f) [%g]\n",
         P, cells, rounds, 1e6 * off / per, 1e6 * on / per, on / off, sink > 0 ? 1.0 : 0.0);
  free(m);
  free(keys);
  free(p);
  free(sh);
  return 0;
}

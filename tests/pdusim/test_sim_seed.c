// SPDX-License-Identifier: GPL-3.0-or-later
/* erg-pdusim's --seed (sim_seed_state): the accuracy harness runs a few
 * small seeds (1, 2, 3 ...) and judges the 95 % intervals over them, so
 * each must draw the meter's noise independently. A node's error over the
 * harness's full run is the noise over its evaluation window (350 updates
 * of 0.5 s) minus the window x the idle profile's mean noise (300 updates),
 * both of erg-pdusim's draws, one per node per update (two nodes). With
 * the raw seed as rand_r's state, seeds 1-20 gave that error 1.6 x its
 * variance (17.5 % of the nodes beyond 1.96 sd; seeds 1-2000: 0.99, 5.0 %),
 * seeds 1-100 1.22 x (8.5 %): the seeds 1, 2 and 51 the harness ran drew
 * +-2 sd on 5 of 6 nodes (docs/accuracy.md, "Per-job intervals"). */
#include "../erg_test.h"

#include <math.h>
#include <stdlib.h>

#include "sim.h"

enum { IDLE_A = 14, IDLE_B = 313, EVAL_A = 1104, EVAL_B = 1453, NODES = 2 };

/* The variance of the node's error in sds over seeds [a, b] (both nodes),
 * and how many were beyond 1.96 sd. */
static double draw_variance(unsigned long a, unsigned long b, int *beyond) {
  const double w = 175, n_idle = IDLE_B - IDLE_A + 1, n_eval = EVAL_B - EVAL_A + 1;
  const double sd = sqrt(w * w / n_idle + 0.25 * n_eval);
  double s2 = 0;
  int n = 0;
  *beyond = 0;
  for (unsigned long seed = a; seed <= b; seed++) {
    unsigned st = sim_seed_state(seed);
    double idle[NODES] = {0}, eval[NODES] = {0};
    for (int i = 0; i <= EVAL_B; i++)
      for (int k = 0; k < NODES; k++) {
        double z = sim_normal(&st);
        if (i >= IDLE_A && i <= IDLE_B)
          idle[k] += z;
        if (i >= EVAL_A)
          eval[k] += z;
      }
    for (int k = 0; k < NODES; k++) {
      double x = (-w * idle[k] / n_idle + 0.5 * eval[k]) / sd;
      s2 += x * x;
      *beyond += fabs(x) > 1.96;
      n++;
    }
  }
  return s2 / n;
}

static void test_small_seeds_independent(void **state) {
  (void)state;
  int out20, out100, out2000;
  double v20 = draw_variance(1, 20, &out20), v100 = draw_variance(1, 100, &out100);
  double v2000 = draw_variance(1, 2000, &out2000);
  /* Independent draws: the variance of 40 (200) is within ~2 of its sds
   * (0.22, 0.10) of 1, deterministic for these seeds. */
  erg_assert(v20 > 0.55 && v20 < 1.45, "seeds 1-20: variance %.3f of the node's draw", v20);
  erg_assert(v100 > 0.8 && v100 < 1.15, "seeds 1-100: variance %.3f (%d of 200 beyond 1.96)", v100,
             out100);
  erg_assert(out100 <= 14, "seeds 1-100: %d of 200 beyond 1.96 sd", out100);
  erg_assert(fabs(v2000 - 1) < 0.06, "seeds 1-2000: variance %.3f", v2000);
}

/* The same seed is the same stream (reproducible runs). */
static void test_reproducible(void **state) {
  (void)state;
  unsigned a = sim_seed_state(7), b = sim_seed_state(7), c = sim_seed_state(8);
  erg_assert(a == b && a != c, "states %u %u %u", a, b, c);
  erg_assert(sim_normal(&a) == sim_normal(&b), "seed 7 twice: different draws");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_small_seeds_independent),
      cmocka_unit_test(test_reproducible),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

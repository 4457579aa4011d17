/* The simulator's model loop: sample load, delay it by the lag, turn it into
 * power, integrate energy, and log the ground truth. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"
#include "sim.h"

/* Box-Muller on rand_r: reproducible with --seed, no global state. */
static double sim_normal(unsigned *seed) {
  double u1 = (rand_r(seed) + 1.0) / ((double)RAND_MAX + 2.0);
  double u2 = (rand_r(seed) + 1.0) / ((double)RAND_MAX + 2.0);
  return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* Utilisation as it was lag seconds ago. Entry i covers the update period
 * ending at hist_t[i] and what is picked now is shown for the next period:
 * picking the newest entry ending by now - lag + period makes the middle of
 * the shown period exactly lag after the middle of the measured one. */
static double sim_lagged_util(const struct sim_node *n, double now_s, double lag_s,
                              double period_s) {
  double want = now_s - lag_s + period_s, util = 0;
  for (unsigned i = 0; i < n->hist_n; i++) {
    unsigned k = (n->hist_head + SIM_LAG_SLOTS - 1 - i) % SIM_LAG_SLOTS;
    util = n->hist_util[k];
    if (n->hist_t[k] <= want + 1e-9)
      return util;
  }
  return n->hist_n ? 0 : util;
}

void sim_update_once(struct sim *s, double now_s, double dt_s) {
  for (int i = 0; i < s->nnodes; i++) {
    struct sim_node *n = &s->nodes[i];
    double util = erg_pdusim_load_sample(&n->load, s->ncpu);
    n->hist_t[n->hist_head] = now_s;
    n->hist_util[n->hist_head] = util;
    n->hist_head = (n->hist_head + 1) % SIM_LAG_SLOTS;
    if (n->hist_n < SIM_LAG_SLOTS)
      n->hist_n++;
    double lagged = sim_lagged_util(n, now_s, s->model.lag_seconds, s->model.update_seconds);
    double w = erg_pdusim_model_watts(&s->model, lagged, sim_normal(&s->seed));
    pthread_mutex_lock(&s->lock);
    /* The meter held its previous value over the last dt: integrate that. */
    n->energy_joules += n->watts * dt_s;
    n->last_update_s = now_s;
    n->watts = w;
    n->util_now = util;
    double e = n->energy_joules;
    pthread_mutex_unlock(&s->lock);
    if (s->truth)
      fprintf(s->truth, "%.3f,%s,%.6f,%.6f,%.3f,%.3f\n", now_s, n->name, util, lagged, w, e);
  }
  if (s->truth)
    fflush(s->truth);
}

double sim_energy_now(const struct sim_node *n, double now_s) {
  double dt = now_s - n->last_update_s;
  return n->energy_joules + (dt > 0 && n->last_update_s > 0 ? n->watts * dt : 0);
}

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

/* History slot of the load as it was lag seconds ago. Entry i covers the
 * update period ending at hist_t[i] and what is picked now is shown for
 * the next period: picking the newest entry ending by now - lag + period
 * makes the middle of the shown period exactly lag after the middle of the
 * measured one. -1: no entry is that old yet (the load counts as 0). */
static int sim_lagged_slot(const struct sim_node *n, double now_s, double lag_s,
                           double period_s) {
  double want = now_s - lag_s + period_s;
  for (unsigned i = 0; i < n->hist_n; i++) {
    unsigned k = (n->hist_head + SIM_LAG_SLOTS - 1 - i) % SIM_LAG_SLOTS;
    if (n->hist_t[k] <= want + 1e-9)
      return (int)k;
  }
  return -1;
}

/* The node's block I/O rate since the previous update (bytes/s); only
 * measured when the model has a disk cost and the node a cgroup. */
static double sim_disk_rate(struct sim *s, struct sim_node *n, double now_s) {
  if (!(s->model.disk_watts_per_mbps > 0) || !n->load.cgroup[0])
    return 0;
  uint64_t b = erg_pdusim_io_bytes(&n->io, n->load.cgroup);
  double rate = 0;
  if (n->prev_io_s > 0 && now_s > n->prev_io_s && b >= n->prev_io_bytes)
    rate = (double)(b - n->prev_io_bytes) / (now_s - n->prev_io_s);
  n->prev_io_bytes = b;
  n->prev_io_s = now_s;
  return rate;
}

static void sim_truth_row(const struct sim *s, const struct sim_node *n, double now_s,
                          double util, double lagged, double lagged_disk, double w, double e) {
  fprintf(s->truth, "%.3f,%s,%.6f,%.6f,%.3f,%.3f", now_s, n->name, util, lagged, w, e);
  if (s->model.disk_watts_per_mbps > 0)
    fprintf(s->truth, ",%.0f", lagged_disk);
  fputc('\n', s->truth);
}

void sim_update_once(struct sim *s, double now_s, double dt_s) {
  for (int i = 0; i < s->nnodes; i++) {
    struct sim_node *n = &s->nodes[i];
    double util = erg_pdusim_load_sample(&n->load, s->ncpu);
    n->hist_t[n->hist_head] = now_s;
    n->hist_util[n->hist_head] = util;
    n->hist_disk[n->hist_head] = sim_disk_rate(s, n, now_s);
    n->hist_head = (n->hist_head + 1) % SIM_LAG_SLOTS;
    if (n->hist_n < SIM_LAG_SLOTS)
      n->hist_n++;
    int k = sim_lagged_slot(n, now_s, s->model.lag_seconds, s->model.update_seconds);
    double lagged = k >= 0 ? n->hist_util[k] : 0, lagged_disk = k >= 0 ? n->hist_disk[k] : 0;
    double w = erg_pdusim_model_watts(&s->model, lagged, lagged_disk, sim_normal(&s->seed));
    pthread_mutex_lock(&s->lock);
    /* The meter held its previous value over the last dt: integrate that. */
    n->energy_joules += n->watts * dt_s;
    n->last_update_s = now_s;
    n->watts = w;
    n->util_now = util;
    double e = n->energy_joules;
    pthread_mutex_unlock(&s->lock);
    if (s->truth)
      sim_truth_row(s, n, now_s, util, lagged, lagged_disk, w, e);
  }
  if (s->truth)
    fflush(s->truth);
}

double sim_energy_now(const struct sim_node *n, double now_s) {
  double dt = now_s - n->last_update_s;
  return n->energy_joules + (dt > 0 && n->last_update_s > 0 ? n->watts * dt : 0);
}

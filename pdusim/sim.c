// SPDX-License-Identifier: GPL-3.0-or-later
/* The simulator's model loop: sample load, delay it by the lag, turn it into
 * power, integrate energy, and log the ground truth. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"
#include "sim.h"

unsigned sim_seed_state(unsigned long seed) {
  uint64_t z = (uint64_t)seed + 0x9e3779b97f4a7c15ull; /* splitmix64's finaliser */
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (unsigned)(z ^ (z >> 31));
}

/* Box-Muller on rand_r: reproducible with --seed, no global state. */
double sim_normal(unsigned *seed) {
  double u1 = (rand_r(seed) + 1.0) / ((double)RAND_MAX + 2.0);
  double u2 = (rand_r(seed) + 1.0) / ((double)RAND_MAX + 2.0);
  return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* History slot of the load as it was lag seconds ago, for the update at
 * now_s. Entry i covers the update period ending at hist_t[i] and what is
 * picked now is shown for the next period: the entry ending at now - lag +
 * period ("want") puts the middle of the shown period lag after the middle
 * of the measured one. Entries are shown in order, each once: the one after
 * the entry shown last (*src_t, *src_k; *src_t 0: none yet), unless it ends
 * more than 3/4 of a period after want (too young: the last one again) or
 * before it (the updates fell behind, a late tick: the entry ending nearest
 * to want, as at the start). Picking the entry ending last by want at
 * every update instead showed a quarter of the periods twice and skipped
 * as many when the lag is a whole number of periods (--lag 2 --update 0.5):
 * the updates come a few ms early or late, so the entry lag ago was now
 * just old enough, now not (issue 33: at every change of load the meter's
 * energy then differed from the load's by up to ΔP x the period, and the
 * fits of tests/accuracy split a node's power between its CPU and disk
 * 3-5 % off). -1: no entry that old yet (the load counts as 0). */
int sim_lag_pick(const double *hist_t, unsigned head, unsigned n, unsigned nslots, double *src_t,
                 int *src_k, double now_s, double lag_s, double period_s) {
  double want = now_s - lag_s + period_s, band = 0.75 * period_s, nearest_e = INFINITY;
  int nearest = -1, next = -1, old_enough = 0;
  for (unsigned i = 0; i < n; i++) {
    unsigned k = (head + nslots - 1 - i) % nslots;
    double e = want - hist_t[k];
    if (e >= -1e-9)
      old_enough = 1;
    if (fabs(e) < nearest_e && e >= -period_s / 2) {
      nearest_e = fabs(e);
      nearest = (int)k;
    }
    if (*src_t > 0 && hist_t[k] > *src_t + 1e-9)
      next = (int)k;
    else if (*src_t > 0 || e > period_s)
      break; /* older entries are neither nearer nor next */
  }
  if (!old_enough)
    return -1;
  int k = nearest;
  if (*src_t > 0) {
    if (next < 0 || want - hist_t[next] < -band)
      k = *src_k; /* nothing new old enough yet: the last one again */
    else if (want - hist_t[next] <= band)
      k = next;
  }
  if (k >= 0) {
    *src_t = hist_t[k];
    *src_k = k;
  }
  return k;
}

/* The node's block I/O rate since the previous update (bytes/s); only
 * measured when its model has a disk cost and the node a cgroup. */
static double sim_disk_rate(const struct erg_pdusim_model *m, struct sim_node *n, double now_s) {
  if (!(m->disk_watts_per_mbps > 0) || !n->load.cgroup[0])
    return 0;
  uint64_t b = erg_pdusim_io_bytes(&n->io, n->load.cgroup);
  double rate = 0;
  if (n->prev_io_s > 0 && now_s > n->prev_io_s && b >= n->prev_io_bytes)
    rate = (double)(b - n->prev_io_bytes) / (now_s - n->prev_io_s);
  n->prev_io_bytes = b;
  n->prev_io_s = now_s;
  return rate;
}

int sim_find(const struct sim *s, const char *name) {
  for (int i = 0; i < s->nnodes + s->nsums; i++)
    if (!strcmp(s->nodes[i].name, name))
      return i;
  return -1;
}

int sim_add_sum(struct sim *s, const char *spec, char *why, size_t whylen) {
  const char *eq = strchr(spec, '=');
  size_t nl = eq ? (size_t)(eq - spec) : 0;
  if (s->nnodes + s->nsums >= SIM_MAX_NODES) {
    snprintf(why, whylen, "--sum %s: more than %d nodes and sums", spec, SIM_MAX_NODES);
    return -1;
  }
  struct sim_node *sum = &s->nodes[s->nnodes + s->nsums];
  memset(sum, 0, sizeof *sum);
  if (!eq || !nl || nl >= sizeof sum->name || !eq[1]) {
    snprintf(why, whylen, "--sum '%s': want NAME=NODE+NODE+...", spec);
    return -1;
  }
  memcpy(sum->name, spec, nl);
  if (sim_find(s, sum->name) >= 0) {
    snprintf(why, whylen, "--sum '%s': %s is taken by a node or another sum", spec, sum->name);
    return -1;
  }
  char list[SIM_MAX_NODES * 64 + 1], *save = NULL;
  erg_strlcpy(list, eq + 1, sizeof list);
  for (char *t = strtok_r(list, "+", &save); t; t = strtok_r(NULL, "+", &save)) {
    int k = sim_find(s, t);
    for (int j = 0; k >= 0 && j < sum->nmembers; j++)
      if (sum->member[j] == k) {
        snprintf(why, whylen, "--sum '%s': node %s twice", spec, t);
        return -1;
      }
    if (k < 0 || k >= s->nnodes) {
      snprintf(why, whylen, "--sum '%s': no --node %s (a sum adds nodes, not sums)", spec, t);
      return -1;
    }
    sum->member[sum->nmembers++] = k;
  }
  if (!sum->nmembers) {
    snprintf(why, whylen, "--sum '%s': want NAME=NODE+NODE+...", spec);
    return -1;
  }
  s->nsums++;
  return 0;
}

static bool sim_has_disk(const struct sim *s) {
  for (int i = 0; i < s->nnodes; i++)
    if (sim_node_model(s, &s->nodes[i])->disk_watts_per_mbps > 0)
      return true;
  return false;
}

void sim_truth_header(const struct sim *s) {
  fprintf(s->truth, "time_unix_seconds,node,util,lagged_util,watts,energy_joules%s\n",
          sim_has_disk(s) ? ",lagged_disk_bytes_per_second" : "");
}

/* A sum's row leaves util, lagged_util and the disk rate empty: it has no
 * load of its own. */
static void sim_truth_row(const struct sim *s, const struct sim_node *n, double now_s, double util,
                          double lagged, double lagged_disk, double w, double e) {
  if (n->nmembers)
    fprintf(s->truth, "%.3f,%s,,,%.3f,%.3f%s\n", now_s, n->name, w, e, sim_has_disk(s) ? "," : "");
  else {
    fprintf(s->truth, "%.3f,%s,%.6f,%.6f,%.3f,%.3f", now_s, n->name, util, lagged, w, e);
    if (sim_has_disk(s))
      fprintf(s->truth, ",%.0f", lagged_disk);
    fputc('\n', s->truth);
  }
}

void sim_update_once(struct sim *s, double now_s, double dt_s) {
  double util[SIM_MAX_NODES], lagged[SIM_MAX_NODES], disk[SIM_MAX_NODES], w[SIM_MAX_NODES];
  int nall = s->nnodes + s->nsums;
  for (int i = 0; i < s->nnodes; i++) {
    struct sim_node *n = &s->nodes[i];
    const struct erg_pdusim_model *m = sim_node_model(s, n);
    util[i] = erg_pdusim_load_sample(&n->load, s->ncpu);
    n->hist_t[n->hist_head] = now_s;
    n->hist_util[n->hist_head] = util[i];
    n->hist_disk[n->hist_head] = sim_disk_rate(m, n, now_s);
    n->hist_head = (n->hist_head + 1) % SIM_LAG_SLOTS;
    if (n->hist_n < SIM_LAG_SLOTS)
      n->hist_n++;
    int k = sim_lag_pick(n->hist_t, n->hist_head, n->hist_n, SIM_LAG_SLOTS, &n->lag_src_t,
                         &n->lag_src_k, now_s, s->model.lag_seconds, s->model.update_seconds);
    lagged[i] = k >= 0 ? n->hist_util[k] : 0;
    disk[i] = k >= 0 ? n->hist_disk[k] : 0;
    n->raw_watts = erg_pdusim_model_raw_watts(m, lagged[i], disk[i], sim_normal(&s->seed));
    if (n->gpu)
      n->raw_watts += s->gpu_ac_factor * sim_gpu_script_watts(n->gpu, now_s - s->start_s);
    w[i] = erg_pdusim_quantise(n->raw_watts, m->quantum_watts);
  }
  /* A shared meter measures the sum of its nodes' true (noisy) power and
   * rounds once, as a bank or inlet meter does. */
  for (int i = s->nnodes; i < nall; i++) {
    struct sim_node *n = &s->nodes[i];
    n->raw_watts = 0;
    for (int j = 0; j < n->nmembers; j++)
      n->raw_watts += s->nodes[n->member[j]].raw_watts;
    w[i] = erg_pdusim_quantise(n->raw_watts, s->model.quantum_watts);
    util[i] = lagged[i] = disk[i] = 0;
  }
  /* Every meter changes at once: a reader never sees a sum that is not
   * the sum of the outlets it sees. Each held its previous value over the
   * last dt: that is integrated first. */
  pthread_mutex_lock(&s->lock);
  for (int i = 0; i < nall; i++) {
    struct sim_node *n = &s->nodes[i];
    n->energy_joules += n->watts * dt_s;
    n->last_update_s = now_s;
    n->watts = w[i];
    n->shown_t[n->shown_head] = now_s;
    n->shown_raw[n->shown_head] = n->raw_watts;
    n->shown_joules[n->shown_head] = n->energy_joules;
    n->shown_head = (n->shown_head + 1) % SIM_SHOWN_SLOTS;
    if (n->shown_n < SIM_SHOWN_SLOTS)
      n->shown_n++;
    n->util_now = util[i];
  }
  pthread_mutex_unlock(&s->lock);
  if (!s->truth)
    return;
  for (int i = 0; i < nall; i++) /* energy_joules is written by this thread only */
    sim_truth_row(s, &s->nodes[i], now_s, util[i], lagged[i], disk[i], w[i],
                  s->nodes[i].energy_joules);
  fflush(s->truth);
}

bool sim_node_at(const struct sim_node *n, double t_s, double *raw_watts, double *joules) {
  if (!n->shown_n)
    return false;
  /* Newest first: the update in effect at t_s is the first at or before it. */
  unsigned i = 0, slot = 0;
  for (; i < n->shown_n; i++) {
    slot = (n->shown_head + SIM_SHOWN_SLOTS - 1 - i) % SIM_SHOWN_SLOTS;
    if (n->shown_t[slot] <= t_s)
      break;
  }
  /* The meter showed quantise(raw) from that update on; the energy grows
   * by what it showed, as sim_update_once integrates it. */
  *raw_watts = n->shown_raw[slot];
  double dt = t_s - n->shown_t[slot];
  double shown_w = i == 0 ? n->watts : 0;
  if (i > 0) { /* the next update's energy minus this one's over its span */
    unsigned next = (slot + 1) % SIM_SHOWN_SLOTS;
    double span = n->shown_t[next] - n->shown_t[slot];
    shown_w = span > 0 ? (n->shown_joules[next] - n->shown_joules[slot]) / span : 0;
  }
  *joules = n->shown_joules[slot] + (dt > 0 ? shown_w * dt : 0);
  return true;
}

double sim_energy_now(const struct sim_node *n, double now_s) {
  double dt = now_s - n->last_update_s;
  return n->energy_joules + (dt > 0 && n->last_update_s > 0 ? n->watts * dt : 0);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Internal: the simulator's shared state (update thread + servers). */
#ifndef ERG_PDUSIM_SIM_H
#define ERG_PDUSIM_SIM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "erg_pdusim.h"

#define SIM_MAX_NODES 64 /* --node and --sum together */
#define SIM_LAG_SLOTS 4096
#define SIM_SHOWN_SLOTS 256 /* updates a BMC sample may look back over */

/* gpu.c: --gpu-script, the stand-in script's board power over time. */
#define SIM_GPUS 64
#define SIM_GPU_STATES 1024
struct sim_gpu_script {
  int n;
  double t[SIM_GPU_STATES], watts[SIM_GPU_STATES];
  int gpu[SIM_GPU_STATES];
};
int sim_gpu_script_load(struct sim_gpu_script *g, const char *path, char *why, size_t whylen);
/* Σ over the script's GPUs of the power of its latest line at or before t. */
double sim_gpu_script_watts(const struct sim_gpu_script *g, double since_start_s);

/* --seed N's state for sim_normal: N through a mixing function. glibc's
 * rand_r is a linear congruential generator, and from neighbouring raw
 * seeds (1, 2, 3 ...) its streams are related: over seeds 1-20 the sums of
 * the noise over the accuracy harness's idle and evaluation windows varied
 * 1.6 x as much as over seeds 1-2000 (17.5 % beyond 1.96 sd against 5.0 %),
 * so the harness's few seeds were not independent draws (docs/accuracy.md,
 * "Per-job intervals"). Mixed, each seed starts its own stream. */
unsigned sim_seed_state(unsigned long seed);
/* A standard normal from rand_r(*state) (Box-Muller). */
double sim_normal(unsigned *state);

/* The history entry (ring of nslots, n entries, the newest before head)
 * to show at now_s, lag_s late, for updates every period_s; *src_t, *src_k
 * the entry shown last (*src_t 0: none), updated. -1: none old enough. */
int sim_lag_pick(const double *hist_t, unsigned head, unsigned n, unsigned nslots, double *src_t,
                 int *src_k, double now_s, double lag_s, double period_s);

/* One meter: a --node (its own load and truth curve) or, at index nnodes
 * and after, a --sum channel (nmembers > 0) whose power is its members'. */
struct sim_node {
  char name[64];
  /* The node's own truth curve (--node-model); NULL: the global model. */
  const struct erg_pdusim_model *model;
  int nmembers; /* a --sum: the node indices it adds up */
  int member[SIM_MAX_NODES];
  struct erg_pdusim_load load;
  double hist_t[SIM_LAG_SLOTS], hist_util[SIM_LAG_SLOTS];
  double hist_disk[SIM_LAG_SLOTS]; /* block I/O, bytes/s (with a disk cost) */
  struct erg_pdusim_io io;
  uint64_t prev_io_bytes;
  double prev_io_s; /* 0: not sampled yet */
  unsigned hist_head, hist_n;
  double lag_src_t; /* the history entry shown last (sim_lag_pick); 0: none */
  int lag_src_k;
  double raw_watts; /* before quantisation: what a shared meter adds up */
  /* Under lock: the last updates' time, raw_watts and energy_joules, so a
   * BMC's sensor samples its own schedule however late its tick runs. */
  double shown_t[SIM_SHOWN_SLOTS], shown_raw[SIM_SHOWN_SLOTS], shown_joules[SIM_SHOWN_SLOTS];
  unsigned shown_head, shown_n;
  double watts;         /* what the meter shows now */
  double energy_joules; /* integral of what the meter showed, up to last_update_s */
  double last_update_s; /* realtime of the last model update */
  double util_now;
  const struct sim_gpu_script *gpu; /* --gpu-script: its board power x gpu_ac_factor added */
};

struct sim {
  struct erg_pdusim_model model;
  struct sim_node nodes[SIM_MAX_NODES];
  int nnodes;
  int nsums; /* --sum channels, at nodes[nnodes ...] */
  unsigned ncpu;
  unsigned seed;
  FILE *truth;          /* optional CSV of the simulator's ground truth */
  pthread_mutex_t lock; /* guards nodes[].watts/energy_joules */
  volatile int stop;
  int snmp_max_varbinds; /* SNMP: a GET with more gets tooBig (0: any) */
  /* Added to the float32 kWh registers only, as a meter years in service
   * shows (issue 14): their float spacing then grows to whole Wh. */
  double energy_offset_kwh;
  double start_s;       /* realtime of the start (--gpu-script times) */
  double gpu_ac_factor; /* --gpu-ac-factor: AC watts per GPU board watt */
};

static inline const struct erg_pdusim_model *sim_node_model(const struct sim *s,
                                                            const struct sim_node *n) {
  return n->model ? n->model : &s->model;
}
/* The meter named name (a node or a sum); -1 none. */
int sim_find(const struct sim *s, const char *name);
/* Adds --sum "NAME=N1+N2+..." over the nodes given so far (call after the
 * last --node); -1 with a reason. */
int sim_add_sum(struct sim *s, const char *spec, char *why, size_t whylen);
/* The CSV header of --truth (its columns depend on the models). */
void sim_truth_header(const struct sim *s);
void sim_update_once(struct sim *s, double now_s, double dt_s);
/* Energy counter as of now_s: the meter integrates continuously, it does
 * not jump at model updates. Call with s->lock held. */
double sim_energy_now(const struct sim_node *n, double now_s);
/* The raw (unquantised) power in effect at t_s and the energy up to t_s,
 * from the node's last SIM_SHOWN_SLOTS updates (t_s older: the oldest
 * kept); false before the first update. Caller holds s->lock. */
bool sim_node_at(const struct sim_node *n, double t_s, double *raw_watts, double *joules);
int sim_modbus_serve(struct sim *s, const char *host, int port, double duration_s);
/* The same registers over Modbus RTU on a tty (8 data bits, 1 stop bit). */
int sim_modbus_serve_rtu(struct sim *s, const char *device, int baud, char parity,
                         double duration_s);

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/* Test harness: the simulator's SNMP agent without erg-pdusim's main.
 * usage: sim-snmp-harness PORT DURATION_S NODE... */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"
#include "sim_snmp.h"

static struct sim sim;

static void *update(void *arg) {
  (void)arg;
  uint64_t last = erg_time_monotonic_ns();
  while (!sim.stop) {
    erg_time_sleep_ns(100000000ULL);
    uint64_t now = erg_time_monotonic_ns();
    sim_update_once(&sim, erg_time_realtime_ns() / 1e9, (now - last) / 1e9);
    last = now;
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s PORT DURATION_S NODE...\n", argv[0]);
    return 1;
  }
  erg_log_init("sim-snmp-harness", ERG_LOG_WARN);
  erg_pdusim_model_defaults(&sim.model);
  sim.ncpu = 1;
  sim.seed = 1;
  for (int i = 3; i < argc && sim.nnodes < SIM_MAX_NODES; i++)
    snprintf(sim.nodes[sim.nnodes++].name, sizeof sim.nodes[0].name, "%s", argv[i]);
  pthread_mutex_init(&sim.lock, NULL);
  sim_update_once(&sim, erg_time_realtime_ns() / 1e9, 0);
  /* A known energy offset so the counter is visibly non-zero. */
  for (int i = 0; i < sim.nnodes; i++)
    sim.nodes[i].energy_joules += 3.6e6 * (i + 1);
  pthread_t th;
  pthread_create(&th, NULL, update, NULL);
  int rc = sim_snmp_serve(&sim, "127.0.0.1", atoi(argv[1]), atof(argv[2]));
  sim.stop = 1;
  pthread_join(th, NULL);
  return rc ? 1 : 0;
}

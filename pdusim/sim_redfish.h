// SPDX-License-Identifier: GPL-3.0-or-later
/* erg-pdusim --redfish DIR: a SIMULATED BMC serving a Redfish recording
 * (DIR/redfish/v1/.../index.json) over HTTP, with the readings erg would
 * take in the chassis bound by --redfish-channel following a simulated
 * node, and a slow, busy or session-expiring BMC's behaviour on demand. */
#ifndef ERG_PDUSIM_SIM_REDFISH_H
#define ERG_PDUSIM_SIM_REDFISH_H

#include <stddef.h>

#include "sim.h"

#define SIM_RF_MAX_CHANNELS 16

struct sim_redfish_opts {
  const char *dir;
  char host[128];
  int port;
  const char *channels[SIM_RF_MAX_CHANNELS]; /* "CHASSIS=NODE" */
  int nchannels;
  double delay_seconds;     /* every answer this late */
  char user[64], pass[128]; /* "" no credentials wanted */
  int every_401;            /* every Nth GET with a session token: 401 (expired) */
  int every_503;            /* every Nth request: 503 with Retry-After: 1 */
  const char *log_path;     /* BMC-shaped answers: request time, uri, W, delay, answer time */
};

struct sim_redfish;

/* Binds each channel (the reading erg's discovery takes in CHASSIS follows
 * NODE, a --node or --sum of s) and prints what is live; NULL with a
 * reason. */
struct sim_redfish *sim_redfish_setup(struct sim *s, const struct sim_redfish_opts *o, char *why,
                                      size_t whylen);
/* Serves until sim_redfish_free; -1 with a reason (port in use). */
int sim_redfish_start(struct sim_redfish *r, char *why, size_t whylen);
void sim_redfish_free(struct sim_redfish *r);

#endif

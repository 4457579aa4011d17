// SPDX-License-Identifier: GPL-3.0-or-later
/* A BMC-shaped reading for erg-pdusim --redfish (issue 33, item 6): what a
 * server's BMC makes of the node's power before a reader sees it. Its
 * sensor samples the power every refresh_seconds and holds the value in
 * between, rounded to quantum_watts; with average_seconds it shows the
 * trailing mean of the samples of that long instead (a BMC's "average"
 * sensor); and each answer leaves a random delay_min..delay_max seconds
 * after the request came in, with the value of that moment. */
#ifndef ERG_PDUSIM_SIM_BMC_H
#define ERG_PDUSIM_SIM_BMC_H

#include <stdbool.h>
#include <stddef.h>

#include "sim.h"

struct sim_bmc_shape {
  double refresh_seconds; /* 0: no shape (the meter's value, live) */
  double quantum_watts;   /* 0: as is */
  double average_seconds; /* 0: the latest sample */
  double delay_min_seconds, delay_max_seconds;
  /* mean=1: a sample is the mean power since the previous one (the
   * meter's energy over the refresh), as a PSU that averages its input
   * power reports; 0: the power at the sample's moment. */
  double mean;
  /* read=MIN:MAX: each sample comes a refresh plus a random MIN..MAX s
   * after the last, as a BMC's sensor loop rearms its timer after each
   * read (OpenBMC dbus-sensors: wait sensorPollMs, then read): the phase
   * of its samples drifts through the second instead of holding still. */
  double read_min_seconds, read_max_seconds;
  /* clock=S: the BMC's clock is S s ahead of ours (negative: behind); a
   * Sensor's ReadingTime is the sample's time on it. */
  double clock_seconds;
};

/* Splits "HEAD[,KEY=VALUE]..." (KEYs refresh, quantum, average, mean,
 * clock, delay and read as S or MIN:MAX) into head and shape; a shape without refresh gets 1 s.
 * No KEYs: shape all 0. -1 with a reason. */
int sim_bmc_parse(const char *spec, char *head, size_t headlen, struct sim_bmc_shape *sh, char *why,
                  size_t whylen);

struct sim_bmc;

/* The sensor of node (an index into s->nodes) with that shape, read at
 * channel (its chassis): the channel's name seeds its answer delays, read
 * times and sampling phase, so each channel is its own draw. */
struct sim_bmc *sim_bmc_new(struct sim *s, int node, const char *channel,
                            const struct sim_bmc_shape *sh);
/* Samples the power when a refresh is due (call often, e.g. every 50 ms). */
void sim_bmc_tick(struct sim_bmc *b, double now_s);
/* The value the BMC showed at t_s (realtime) and the time of the (last)
 * sample it is of; false before its first sample. */
bool sim_bmc_value(struct sim_bmc *b, double t_s, double *watts, double *sample_s);
/* This answer's delay, drawn from the shape's range. */
double sim_bmc_delay(struct sim_bmc *b);
/* The shape's clock offset (clock=S). */
double sim_bmc_clock_seconds(const struct sim_bmc *b);
void sim_bmc_free(struct sim_bmc *b);

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/* The meter threads' shared pieces (meters_int.h): what meters.c and
 * meters_bmc.c both call, here so that neither calls into the other. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "meters_int.h"

void meter_send(void *sock, int index, struct meter_src *ms, int n, double poll_seconds,
                const char *err) {
  /* What the value was, said here where the driver's state lives; the main
   * loop counts them (erg_meter_bad_values_total). */
  for (int i = 0; i < n; i++) {
    char what[160];
    if (!ms->r[i].bad_value || ms->bad_logged[i] ||
        erg_pdu_source_bad_value(&ms->src, i, what, sizeof what))
      continue;
    ms->bad_logged[i] = true;
    char id[40];
    erg_warn("source %s %s %s: %s; read as missing (logged once; "
             "erg_meter_bad_values_total)",
             ms->src.cfg.name, erg_pdu_level_name(ms->src.cfg.levels[i]),
             erg_pdu_channel_text(&ms->src.cfg, i, id, sizeof id), what);
  }
  /* A BMC that times its readings: each placed by its own time
   * (erg_readtime_place), the channels of one answer alike. */
  const struct erg_pdu_reading *r0 = &ms->r[0];
  if (n > 0 && r0->ok) {
    uint64_t arrival = r0->t_ns, reading = (uint64_t)r0->device_time_s * 1000000000ULL;
    if (erg_readtime_stale(&ms->rt, reading))
      return; /* passed by a newer answer: its sample is in already */
    uint64_t placed = erg_readtime_place(&ms->rt, arrival, reading);
    for (int i = 0; i < n; i++)
      if (ms->r[i].ok && ms->r[i].t_ns == arrival && ms->r[i].device_time_s == r0->device_time_s)
        ms->r[i].t_ns = placed;
    if (ms->rt.used && !ms->rt_logged) {
      ms->rt_logged = true;
      erg_info("source %s: readings placed by the BMC's own reading time (its clock %+.0f s "
               "from ours; logged once)",
               ms->src.cfg.name, (double)reading / 1e9 - (double)arrival / 1e9);
    }
  }
  struct meter_msg m = {.source = index, .nchannels = n, .poll_seconds = poll_seconds};
  memcpy(m.readings, ms->r, (size_t)n * sizeof ms->r[0]);
  for (int i = 0; i < n; i++)
    m.wrap_joules[i] = erg_pdu_source_wrap_joules(&ms->src, i);
  if (err)
    erg_strlcpy(m.error, err, sizeof m.error);
  zmq_send(sock, &m, sizeof m, 0);
}

/* Sleeps to the next tick of a fixed schedule; a late round skips ticks
 * instead of bursting to catch up. */
void meter_wait(uint64_t *next, uint64_t step, volatile int *stop) {
  *next += step;
  uint64_t now = erg_time_monotonic_ns();
  if (*next < now)
    *next = now;
  while (!*stop && erg_time_monotonic_ns() < *next)
    erg_time_sleep_ns(20000000ULL);
}

/* Opens what is not open yet; a failure is this round's reading. */
bool meter_open(void *sock, int index, struct meter_src *ms,
                const struct erg_pdu_source_config *cfg) {
  bool redfish = !strcmp(cfg->driver, "redfish");
  if (!ms->open && redfish && erg_time_monotonic_ns() < ms->next_open_ns) {
    meter_send(sock, index, ms, 0, 0, ms->why); /* the same reason, no new walk */
    return false;
  }
  if (!ms->open && erg_pdu_source_open(&ms->src, cfg, ms->why, sizeof ms->why) == 0) {
    ms->open = true;
    /* Said once per open: a BMC read without certificate checks. */
    if (redfish && cfg->tls_insecure)
      erg_warn("source %s: tls_verify = no: %s's certificate is not checked", cfg->name, cfg->host);
    else if (redfish && !strncmp(cfg->host, "http://", 7))
      erg_warn("source %s: %s is plain http: readings and credentials in clear text", cfg->name,
               cfg->host);
  }
  if (!ms->open && redfish)
    ms->next_open_ns = erg_time_monotonic_ns() + METER_REOPEN_REDFISH_NS;
  if (!ms->open)
    meter_send(sock, index, ms, 0, 0, ms->why);
  return ms->open;
}

/* How long the source took: until its last channel's answer, or until the
 * poll gave up on it. */
double meter_latency(const struct meter_src *ms, uint64_t t0_ns, uint64_t t1_ns) {
  uint64_t last = 0;
  for (int c = 0; !ms->rc && c < ms->src.cfg.nchannels; c++)
    if (ms->r[c].ok && ms->r[c].t_ns > last)
      last = ms->r[c].t_ns;
  if (!last || last < t0_ns)
    last = t1_ns;
  return (double)(last - t0_ns) / 1e9;
}

double meter_poll(struct meter_src *ms) {
  memset(ms->r, 0, sizeof ms->r);
  ms->why[0] = '\0';
  uint64_t t0 = erg_time_realtime_ns();
  ms->rc = erg_pdu_source_poll(&ms->src, ms->r, ms->why, sizeof ms->why);
  return meter_latency(ms, t0, erg_time_realtime_ns());
}

void meter_round_one(void *sock, int index, struct meter_src *ms) {
  double lat = meter_poll(ms);
  /* What the driver has to say once about readings it takes as they are. */
  char note[256];
  while (erg_pdu_source_note(&ms->src, note, sizeof note) == 0)
    erg_info("source %s: %s (logged once)", ms->src.cfg.name, note);
  meter_send(sock, index, ms, ms->src.cfg.nchannels, lat, ms->rc ? ms->why : NULL);
}

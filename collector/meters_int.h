// SPDX-License-Identifier: GPL-3.0-or-later
/* The meter threads' shared pieces (meters_common.c), for meters.c and
 * meters_bmc.c. */
#ifndef ERG_METERS_INT_H
#define ERG_METERS_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "collector_int.h"

#define METER_WHYLEN 256

enum { METER_ONE = 0, METER_SNMP, METER_REDFISH, METER_IPMI, METER_NKINDS };

struct meter_thread {
  const struct erg_collector_config *cfg;
  int *index; /* sources this thread polls (indices into cfg->sources) */
  int n;
  int kind; /* METER_*: ONE polls index[0]; the others all of index[] */
  void *zctx;
  volatile int *stop;
  pthread_t th;
  bool started;
};

struct meter_src {
  struct erg_pdu_source src;
  bool open;
  struct erg_pdu_reading r[ERG_PDU_MAX_CHANNELS];
  char why[METER_WHYLEN];
  int rc;
  bool bad_logged[ERG_PDU_MAX_CHANNELS]; /* a bad value said once per channel */
  uint64_t next_open_ns;  /* a BMC's failed discovery: not again before (monotonic) */
  struct erg_readtime rt; /* a BMC's readings placed by its reading time */
  bool rt_logged;         /* that it is, said once */
};

/* A Redfish open walks the BMC's tree (hundreds of GETs on a DGX): after a
 * failure it is tried again after this long, not every round. */
#define METER_REOPEN_REDFISH_NS (60ULL * 1000000000ULL)

/* Sends ms's n readings (0: only err) for source index to the main loop. */
void meter_send(void *sock, int index, struct meter_src *ms, int n, double poll_seconds,
                const char *err);
/* Sleeps to the next tick of a fixed schedule (a late round skips ticks). */
void meter_wait(uint64_t *next, uint64_t step, volatile int *stop);
/* Opens ms when it is not yet (blocking); a failure is sent as the
 * round's reading. Whether it is open. */
bool meter_open(void *sock, int index, struct meter_src *ms,
                const struct erg_pdu_source_config *cfg);
/* From t0_ns (CLOCK_REALTIME) to the last channel's answer, or t1_ns. */
double meter_latency(const struct meter_src *ms, uint64_t t0_ns, uint64_t t1_ns);
/* One blocking poll of an open source into ms->r, ms->rc and ms->why;
 * returns its latency (meter_latency from the request's start). */
double meter_poll(struct meter_src *ms);
/* One blocking poll of an open source, sent. */
void meter_round_one(void *sock, int index, struct meter_src *ms);

/* meters_bmc.c: the thread of all Redfish meters; the pool of IPMI ones. */
void *meter_redfish_main(struct meter_thread *t);
void *meter_ipmi_main(struct meter_thread *t);

#endif

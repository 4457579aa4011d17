// SPDX-License-Identifier: GPL-3.0-or-later
/* Meter/PDU polling. All SNMP sources share one thread that polls them
 * concurrently (erg_pdu_snmp_poll_many_within); all Redfish BMCs share one
 * thread that drives their requests over one curl multi handle
 * (meters_bmc.c); IPMI BMCs (libfreeipmi blocks) share a bounded pool of
 * poll threads (meters_bmc.c); each other source (Modbus: libmodbus
 * blocks) has its own thread. Threads own their sources and only send
 * readings to the main loop over an inproc ZeroMQ socket, so the main
 * loop owns every piece of shared state; the IPMI pool's queue is the one
 * lock, between the pool's own threads. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "meters_int.h"

#ifdef ERG_HAVE_SNMP
/* One round over every SNMP source. The round is cut at 90% of the period:
 * a dead PDU then fails within the round and the live ones keep their
 * schedule, whatever its timeout x retries. */
static void meter_round_snmp(struct meter_thread *t, void *sock, struct meter_src *ms,
                             struct erg_pdu_source **srcs, struct erg_pdu_reading **outs,
                             int *pos) {
  size_t k = 0;
  char *whys = calloc((size_t)t->n, METER_WHYLEN);
  int *rc = calloc((size_t)t->n, sizeof *rc);
  for (int i = 0; whys && rc && i < t->n; i++) {
    if (!meter_open(sock, t->index[i], &ms[i], &t->cfg->sources[t->index[i]]))
      continue;
    memset(ms[i].r, 0, sizeof ms[i].r);
    srcs[k] = &ms[i].src;
    outs[k] = ms[i].r;
    pos[k++] = i;
  }
  uint64_t t0 = erg_time_realtime_ns();
  if (k)
    erg_pdu_snmp_poll_many_within(srcs, k, outs, rc, whys, METER_WHYLEN,
                                  t->cfg->poll_seconds * 0.9);
  uint64_t t1 = erg_time_realtime_ns();
  for (size_t q = 0; q < k; q++) {
    struct meter_src *m = &ms[pos[q]];
    m->rc = rc[q];
    erg_strlcpy(m->why, whys + q * METER_WHYLEN, sizeof m->why);
    /* Said once: the profile taken (its firmware family's scales, its
     * units), and each value read at another scale than its MIB's. */
    char note[METER_WHYLEN];
    while (erg_pdu_source_note(&m->src, note, sizeof note) == 0)
      erg_info("source %s: %s (logged once)", m->src.cfg.name, note);
    meter_send(sock, t->index[pos[q]], m, m->src.cfg.nchannels, meter_latency(m, t0, t1),
               m->rc ? m->why : NULL);
  }
  free(whys);
  free(rc);
}
#endif

static void meter_round(struct meter_thread *t, void *sock, struct meter_src *ms,
                        struct erg_pdu_source **srcs, struct erg_pdu_reading **outs, int *pos) {
#ifdef ERG_HAVE_SNMP
  if (t->kind == METER_SNMP) {
    meter_round_snmp(t, sock, ms, srcs, outs, pos);
    return;
  }
#endif
  (void)srcs, (void)outs, (void)pos;
  if (meter_open(sock, t->index[0], &ms[0], &t->cfg->sources[t->index[0]]))
    meter_round_one(sock, t->index[0], &ms[0]);
}

static void *meter_main(void *arg) {
  struct meter_thread *t = arg;
  if (t->kind == METER_REDFISH)
    return meter_redfish_main(t);
  if (t->kind == METER_IPMI)
    return meter_ipmi_main(t);
  void *sock = zmq_socket(t->zctx, ZMQ_PUSH);
  zmq_connect(sock, METER_ENDPOINT);
  struct meter_src *ms = calloc((size_t)t->n, sizeof *ms);
  struct erg_pdu_source **srcs = calloc((size_t)t->n, sizeof *srcs);
  struct erg_pdu_reading **outs = calloc((size_t)t->n, sizeof *outs);
  int *pos = calloc((size_t)t->n, sizeof *pos);
  uint64_t step = (uint64_t)(t->cfg->poll_seconds * 1e9), next = erg_time_monotonic_ns();
  while (ms && srcs && outs && pos && !*t->stop) {
    meter_round(t, sock, ms, srcs, outs, pos);
    meter_wait(&next, step, t->stop);
  }
  for (int i = 0; ms && i < t->n; i++)
    if (ms[i].open)
      erg_pdu_source_close(&ms[i].src);
  free(ms);
  free(srcs);
  free(outs);
  free(pos);
  zmq_close(sock);
  return NULL;
}

/* Which sources share a thread: all SNMP ones, all Redfish ones, all IPMI
 * ones (a pool); each other source has its own. */
static int meter_kind(const struct erg_pdu_source_config *c) {
#ifdef ERG_HAVE_SNMP
  if (!strcmp(c->driver, "snmp"))
    return METER_SNMP;
#endif
  if (!strcmp(c->driver, "redfish"))
    return METER_REDFISH;
#ifdef ERG_HAVE_FREEIPMI
  if (!strcmp(c->driver, "ipmi"))
    return METER_IPMI;
#endif
  return METER_ONE;
}

/* Thread i polls source i, except that all sources of a shared kind go to
 * the thread of the first of them; the returned array has nsources + 1
 * entries. */
struct meter_thread *meters_start(void *zctx, const struct erg_collector_config *cfg,
                                  volatile int *stop) {
  struct meter_thread *ts = calloc((size_t)cfg->nsources + 1, sizeof *ts);
  int *index = calloc((size_t)cfg->nsources + 1, sizeof *index);
  if (!ts || !index) {
    free(ts);
    free(index);
    return NULL;
  }
  ts[cfg->nsources].index = index; /* the sentinel owns the index storage */
  int first[METER_NKINDS] = {-1, -1, -1, -1}, nidx = 0;
  for (int i = 0; i < cfg->nsources; i++) {
    int kind = meter_kind(&cfg->sources[i]);
    if (kind != METER_ONE && first[kind] >= 0) {
      ts[first[kind]].n++;
      continue;
    }
    ts[i] = (struct meter_thread){.cfg = cfg, .n = 1, .kind = kind, .zctx = zctx, .stop = stop};
    if (kind != METER_ONE)
      first[kind] = i;
  }
  /* Contiguous index lists, in source order. */
  for (int i = 0; i < cfg->nsources; i++) {
    if (!ts[i].n)
      continue;
    ts[i].index = index + nidx;
    int k = 0;
    for (int s = 0; s < cfg->nsources; s++)
      if (s == i ||
          (ts[i].kind != METER_ONE && s > i && meter_kind(&cfg->sources[s]) == ts[i].kind))
        ts[i].index[k++] = s;
    nidx += k;
  }
  for (int i = 0; i < cfg->nsources; i++)
    if (ts[i].n)
      ts[i].started = pthread_create(&ts[i].th, NULL, meter_main, &ts[i]) == 0;
  return ts;
}

void meters_join(struct meter_thread *ts, int n) {
  if (!ts)
    return;
  for (int i = 0; i < n; i++)
    if (ts[i].started)
      pthread_join(ts[i].th, NULL);
  free(ts[n].index);
  free(ts);
}

/* One polling thread per meter/PDU source. Threads own their source and
 * only send readings to the main loop over an inproc ZeroMQ socket, so the
 * main loop owns every piece of shared state and there are no locks. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "collector_int.h"

struct meter_thread {
  struct erg_pdu_source_config cfg;
  int index;
  double poll_seconds;
  void *zctx;
  volatile int *stop;
  pthread_t th;
};

static void meter_send(void *sock, int index, struct erg_pdu_source *src,
                       const struct erg_pdu_reading *r, int n, const char *err) {
  struct meter_msg m = {.source = index, .nchannels = n};
  memcpy(m.readings, r, (size_t)n * sizeof *r);
  for (int i = 0; i < n; i++)
    m.wrap_joules[i] = erg_pdu_source_wrap_joules(src, i);
  if (err)
    erg_strlcpy(m.error, err, sizeof m.error);
  zmq_send(sock, &m, sizeof m, 0);
}

static void *meter_main(void *arg) {
  struct meter_thread *t = arg;
  void *sock = zmq_socket(t->zctx, ZMQ_PUSH);
  zmq_connect(sock, METER_ENDPOINT);
  struct erg_pdu_source src;
  char why[256];
  int open = 0;
  uint64_t step = (uint64_t)(t->poll_seconds * 1e9), next = erg_time_monotonic_ns();
  while (!*t->stop) {
    struct erg_pdu_reading r[ERG_PDU_MAX_CHANNELS];
    memset(r, 0, sizeof r);
    if (!open && erg_pdu_source_open(&src, &t->cfg, why, sizeof why) == 0)
      open = 1;
    if (!open)
      meter_send(sock, t->index, &src, r, 0, why);
    else if (erg_pdu_source_poll(&src, r, why, sizeof why) != 0)
      meter_send(sock, t->index, &src, r, src.cfg.nchannels, why);
    else
      meter_send(sock, t->index, &src, r, src.cfg.nchannels, NULL);
    next += step;
    uint64_t now = erg_time_monotonic_ns();
    if (next < now)
      next = now;
    while (!*t->stop && erg_time_monotonic_ns() < next)
      erg_time_sleep_ns(50000000ULL);
  }
  if (open)
    erg_pdu_source_close(&src);
  zmq_close(sock);
  return NULL;
}

struct meter_thread *meters_start(void *zctx, const struct erg_collector_config *cfg,
                                  volatile int *stop) {
  struct meter_thread *ts = calloc((size_t)cfg->nsources + 1, sizeof *ts);
  if (!ts)
    return NULL;
  for (int i = 0; i < cfg->nsources; i++) {
    ts[i] = (struct meter_thread){.cfg = cfg->sources[i], .index = i,
                                  .poll_seconds = cfg->poll_seconds, .zctx = zctx, .stop = stop};
    pthread_create(&ts[i].th, NULL, meter_main, &ts[i]);
  }
  return ts;
}

void meters_join(struct meter_thread *ts, int n) {
  if (!ts)
    return;
  for (int i = 0; i < n; i++)
    pthread_join(ts[i].th, NULL);
  free(ts);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Sends ergd the hostile agent messages of issue 23 (tests/integration/
 * hostile_samples.sh), built with common/wire.c as an agent builds them.
 * usage: hostile_send ENDPOINT poison NODE LIVE_SECONDS
 *          a hello (4 CPUs), 5 honest one-second samples from 11 s ago,
 *          the poison, a second each (totals.ncpu = 4294967295,
 *          cpu_busy_ns = 1e19, a process of cpu_ns = 1e18 with ncpu made
 *          up and with 4, 1e19 disk bytes), an interval from now + 2 s to
 *          now + 1 h, then LIVE_SECONDS honest samples from now on, one a
 *          second
 *        hostile_send ENDPOINT names PREFIX N
 *          one honest sample from each of N made-up node names
 *        hostile_send ENDPOINT hello_ncpu NODE N
 *          issue 35: a hello of a 2-CPU node, N honest samples (1.5 CPUs
 *          busy), a hello of the same agent run claiming 4 CPUs, then N
 *          samples claiming 4 CPUs with 3.5 busy, one a second */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "erg_common.h"

static void *sock;
static unsigned long sent;

static void send_env(Erg__Envelope *env) {
  uint8_t *buf;
  size_t len = erg_wire_pack(env, &buf);
  if (!len || zmq_send(sock, buf, len, 0) < 0) {
    fprintf(stderr, "hostile_send: send: %s\n", zmq_strerror(zmq_errno()));
    exit(1);
  }
  free(buf);
  sent++;
}

struct msg {
  Erg__Envelope env;
  Erg__Sample s;
  Erg__Interval iv;
  Erg__NodeTotals t;
  Erg__Proc p, *pp[1];
};

/* An honest second of a 4-CPU node: one CPU busy, mostly one process. */
static void honest(struct msg *m, const char *node, uint64_t seq, uint64_t end_ns) {
  erg__envelope__init(&m->env);
  erg__sample__init(&m->s);
  erg__interval__init(&m->iv);
  erg__node_totals__init(&m->t);
  erg__proc__init(&m->p);
  m->p.pid = 4242;
  m->p.comm = "work";
  m->p.uid = 1000;
  m->p.cpu_ns = 900000000;
  m->p.read_bytes = 4096;
  m->pp[0] = &m->p;
  m->iv.realtime_end_ns = end_ns;
  m->iv.realtime_start_ns = end_ns - ERG_NS_PER_S;
  m->t.ncpu = 4;
  m->t.cpu_busy_ns = ERG_NS_PER_S;
  m->t.cpu_idle_ns = 3 * ERG_NS_PER_S;
  m->s.node = (char *)node;
  m->s.seq = seq;
  m->s.boot_id = "0b00710a-0000-4000-8000-000000000023";
  m->s.interval = &m->iv;
  m->s.totals = &m->t;
  m->s.procs = m->pp;
  m->s.n_procs = 1;
  m->s.system_cpu_ns = 100000000;
  m->s.collection = "proc";
  m->env.version = ERG_WIRE_VERSION;
  m->env.body_case = ERG__ENVELOPE__BODY_SAMPLE;
  m->env.sample = &m->s;
}

static void hello(const char *node, unsigned ncpu) {
  Erg__Hello h = ERG__HELLO__INIT;
  h.node = (char *)node;
  h.agent_version = "hostile";
  h.boot_id = "0b00710a-0000-4000-8000-000000000023";
  h.collection = "proc";
  h.agent_pid = 4242;
  h.agent_start_realtime_ns = 1700000000ULL * ERG_NS_PER_S;
  h.ncpu = ncpu;
  Erg__Envelope env = ERG__ENVELOPE__INIT;
  env.version = ERG_WIRE_VERSION;
  env.body_case = ERG__ENVELOPE__BODY_HELLO;
  env.hello = &h;
  send_env(&env);
}

/* Each poison claims a second of its own, so that on a collector that
 * takes it, it becomes a cell's data. */
static void poison(const char *node, int live) {
  struct msg m;
  uint64_t seq = 0, end = erg_time_realtime_ns() - 11 * ERG_NS_PER_S;
  hello(node, 4);
  for (int i = 0; i < 5; i++, end += ERG_NS_PER_S) {
    honest(&m, node, ++seq, end);
    send_env(&m.env);
  }
  honest(&m, node, ++seq, end);
  m.t.ncpu = 4294967295u;
  send_env(&m.env);
  end += ERG_NS_PER_S;
  honest(&m, node, ++seq, end);
  m.t.cpu_busy_ns = 10000000000000000000ULL;
  send_env(&m.env);
  end += ERG_NS_PER_S;
  honest(&m, node, ++seq, end);
  m.p.cpu_ns = 1000000000000000000ULL;
  m.t.ncpu = 4294967295u; /* passes the wire decoder's per-process cap */
  send_env(&m.env);
  end += ERG_NS_PER_S;
  honest(&m, node, ++seq, end);
  m.p.cpu_ns = 1000000000000000000ULL; /* on 4 CPUs: the decoder refuses it */
  send_env(&m.env);
  end += ERG_NS_PER_S;
  honest(&m, node, ++seq, end);
  m.t.disk_read_bytes = 10000000000000000000ULL;
  send_env(&m.env);
  end += ERG_NS_PER_S;
  honest(&m, node, ++seq, end);
  m.iv.realtime_start_ns = erg_time_realtime_ns() + 2 * ERG_NS_PER_S;
  m.iv.realtime_end_ns = m.iv.realtime_start_ns - 2 * ERG_NS_PER_S + 3600 * ERG_NS_PER_S;
  send_env(&m.env);
  for (int i = 0; i < live; i++, end += ERG_NS_PER_S) {
    uint64_t t = erg_time_realtime_ns();
    if (t < end)
      erg_time_sleep_ns(end - t);
    honest(&m, node, ++seq, end);
    send_env(&m.env);
  }
}

/* n seconds of samples from now on, one a second, of ncpu CPUs with
 * busy_ns of them busy. */
static void seconds(const char *node, uint64_t *seq, uint64_t *end, int n, unsigned ncpu,
                    uint64_t busy_ns) {
  struct msg m;
  for (int i = 0; i < n; i++, *end += ERG_NS_PER_S) {
    uint64_t t = erg_time_realtime_ns();
    if (t < *end)
      erg_time_sleep_ns(*end - t);
    honest(&m, node, ++*seq, *end);
    m.t.ncpu = ncpu;
    m.t.cpu_busy_ns = busy_ns;
    m.t.cpu_idle_ns = ncpu * ERG_NS_PER_S - busy_ns;
    send_env(&m.env);
  }
}

static void hello_ncpu(const char *node, int n) {
  uint64_t seq = 0, end = erg_time_realtime_ns() + ERG_NS_PER_S;
  hello(node, 2);
  seconds(node, &seq, &end, n, 2, 1500000000ULL);
  hello(node, 4); /* the same agent run: refused */
  seconds(node, &seq, &end, n, 4, 3500000000ULL);
}

static void names(const char *prefix, int n) {
  struct msg m;
  char name[64];
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof name, "%s%04d", prefix, i);
    honest(&m, name, 1, erg_time_realtime_ns());
    send_env(&m.env);
  }
}

int main(int argc, char **argv) {
  if (argc != 5 ||
      (strcmp(argv[2], "poison") && strcmp(argv[2], "names") && strcmp(argv[2], "hello_ncpu"))) {
    fprintf(stderr, "usage: hostile_send ENDPOINT poison NODE LIVE_SECONDS\n"
                    "       hostile_send ENDPOINT names PREFIX N\n"
                    "       hostile_send ENDPOINT hello_ncpu NODE N\n");
    return 2;
  }
  void *ctx = zmq_ctx_new();
  sock = zmq_socket(ctx, ZMQ_PUSH);
  int linger = 10000;
  zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
  if (zmq_connect(sock, argv[1]) != 0) {
    fprintf(stderr, "hostile_send: connect %s: %s\n", argv[1], zmq_strerror(zmq_errno()));
    return 1;
  }
  if (!strcmp(argv[2], "poison"))
    poison(argv[3], atoi(argv[4]));
  else if (!strcmp(argv[2], "names"))
    names(argv[3], atoi(argv[4]));
  else
    hello_ncpu(argv[3], atoi(argv[4]));
  zmq_close(sock);
  zmq_ctx_term(ctx);
  printf("sent %lu messages\n", sent);
  return 0;
}

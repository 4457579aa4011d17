// SPDX-License-Identifier: GPL-3.0-or-later
/* BMC meters at scale (docs/scale.md): every Redfish meter on one thread
 * over one curl multi handle; the IPMI meters (libfreeipmi blocks) on a
 * bounded pool of poll threads with small stacks. Per meter, the
 * semantics are those of a meter on its own thread (meters.c): a round
 * each poll_seconds on a fixed schedule (a Redfish meter still busy with
 * its last round reads ahead, below; an IPMI one skips the round); a failed
 * Redfish discovery is tried again after a minute, its reason sent each
 * round meanwhile.
 *
 * Reading ahead: a BMC that answers more slowly than poll_seconds (1-3 s
 * is normal) would be read once per answer, one sample in two or three of
 * a sensor it refreshes every second, so ergd's energy is the mean of a
 * sparse draw of a noisy power (docs/accuracy.md, "BMC-shaped meters").
 * When a round finds every open connection of a meter still waiting, the
 * meter gets another (a clone: its own connection and, with session
 * authentication, its own session), up to RF_INFLIGHT_MAX requests in
 * flight; each round still starts at most one request per meter, so a
 * meter is asked once per poll_seconds however slow it is. The clones'
 * answers are the meter's (stamped on arrival, or placed by the BMC's
 * reading time, where answers that were passed by newer ones are
 * dropped). Clones come only from a pool of RF_CLONES_MAX: at scale
 * (thousands of BMCs polled every 10 s) none is needed. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "erg_redfish.h"
#include "meters_int.h"

/* ---- Redfish: one thread, one curl multi handle ---- */
/* Opens (login, discovery: several requests each) in flight at once: 5,000
 * BMCs opening together are 5,000 connections at the same instant, more
 * than a listen backlog or a TLS stack takes (SYNs dropped, handshakes
 * timed out); the others open as these end. */
#define RF_OPENS_MAX 256
/* Requests in flight per meter at most (the meter's own and its clones):
 * a sensor refreshed every second behind answers up to 3 s late, asked
 * every 0.5 s, needs 4 to see every sample. */
#define RF_INFLIGHT_MAX 4
/* Clone connections in all; a clone that failed to open is not tried
 * again for this long. */
#define RF_CLONES_MAX 256
#define RF_CLONE_RETRY_NS (60ULL * 1000000000ULL)

struct rf_meters {
  struct meter_thread *t;
  int opening;   /* opens in flight */
  int opened;    /* meters open (they stay open) */
  int open_next; /* where the next look for a meter to open starts */
  void *sock;
  struct meter_src *ms; /* slots: n meters, then nclones clones */
  uint64_t *t0;         /* CLOCK_REALTIME at each slot's poll start */
  struct erg_rf_multi *m;
  int nclones;
  int *clone_of;          /* clone c (slot n + c): its meter, -1 free */
  int *clones;            /* per meter: clones it has */
  uint64_t *clone_out_ns; /* per meter: no new clone before (monotonic) */
};

static void rf_meter_poll(struct rf_meters *x, int i) {
  x->t0[i] = erg_time_realtime_ns();
  erg_rf_multi_poll(x->m, i);
}

/* Meter i's slots are all waiting for answers: one more, from the pool
 * (its slot, or -1). */
static int rf_meter_clone(struct rf_meters *x, int i) {
  uint64_t now = erg_time_monotonic_ns();
  if (x->clones[i] >= RF_INFLIGHT_MAX - 1 || now < x->clone_out_ns[i] || x->opening >= RF_OPENS_MAX)
    return -1;
  for (int c = 0; c < x->nclones; c++) {
    int slot = x->t->n + c;
    if (x->clone_of[c] >= 0 || erg_rf_multi_busy(x->m, slot))
      continue;
    x->clone_of[c] = i;
    x->clones[i]++;
    x->ms[slot].open = false;
    x->opening++;
    if (erg_rf_multi_open_like(x->m, slot, i)) { /* cannot: i is open and slot idle */
      x->opening--;
      x->clone_of[c] = -1;
      x->clones[i]--;
      return -1;
    }
    return slot;
  }
  return -1;
}

/* Starts opens while fewer than RF_OPENS_MAX are in flight, round robin
 * over the meters due one (never opened, or failed a minute ago). */
static void rf_meters_open_more(struct rf_meters *x) {
  int n = x->t->n;
  if (x->opened + x->opening >= n)
    return; /* none to open: no walk over thousands of meters ten times a second */
  uint64_t now = erg_time_monotonic_ns();
  for (int k = 0; k < n && x->opening < RF_OPENS_MAX; k++) {
    int i = (x->open_next + k) % n;
    struct meter_src *ms = &x->ms[i];
    if (ms->open || erg_rf_multi_busy(x->m, i) || now < ms->next_open_ns)
      continue;
    memset(ms->r, 0, sizeof ms->r);
    x->opening++;
    x->open_next = (i + 1) % n;
    erg_rf_multi_open(x->m, i, &x->t->cfg->sources[x->t->index[i]]);
  }
}

static void rf_meter_done(void *arg, int slot, int op, int rc, const struct erg_pdu_reading *r,
                          const char *why) {
  struct rf_meters *x = arg;
  int n = x->t->n, i = slot < n ? slot : x->clone_of[slot - n];
  if (i < 0)
    return; /* a clone released (cannot happen: released only when idle) */
  struct meter_src *ms = &x->ms[i];
  int index = x->t->index[i];
  const struct erg_pdu_source_config *cfg = &x->t->cfg->sources[index];
  if (slot >= n && op == ERG_RF_OP_OPEN) {
    /* A clone: open, it reads from the next round; failed, it goes back
     * to the pool and the meter makes do with what it has for a while
     * (the BMC's session limit, say). Its meter's readings say nothing. */
    x->opening--;
    if (rc) {
      x->clone_of[slot - n] = -1;
      x->clones[i]--;
      x->clone_out_ns[i] = erg_time_monotonic_ns() + RF_CLONE_RETRY_NS;
    } else {
      x->ms[slot].open = true;
    }
    return;
  }
  if (op == ERG_RF_OP_OPEN) {
    x->opening--;
    if (rc) {
      erg_strlcpy(ms->why, why, sizeof ms->why);
      ms->next_open_ns = erg_time_monotonic_ns() + METER_REOPEN_REDFISH_NS;
      meter_send(x->sock, index, ms, 0, 0, ms->why);
      return;
    }
    ms->open = true;
    x->opened++;
    /* Said once per open: a BMC read without certificate checks. */
    if (cfg->tls_insecure)
      erg_warn("source %s: tls_verify = no: %s's certificate is not checked", cfg->name, cfg->host);
    else if (!strncmp(cfg->host, "http://", 7))
      erg_warn("source %s: %s is plain http: readings and credentials in clear text", cfg->name,
               cfg->host);
    rf_meter_poll(x, i); /* this round's reading, as a blocking open-then-poll gives */
    return;
  }
  /* The meter's answer, whichever of its connections brought it: sent
   * through the meter's own state (its reading-time placement). */
  int nch = x->ms[slot].src.cfg.nchannels;
  for (int c = 0; c < nch; c++)
    ms->r[c] = *r;
  ms->rc = rc;
  erg_strlcpy(ms->why, why, sizeof ms->why);
  meter_send(x->sock, index, ms, nch, meter_latency(ms, x->t0[slot], erg_time_realtime_ns()),
             rc ? ms->why : NULL);
}

/* Starts one poll of open meter i on a connection of its that is free;
 * none free: asks for one more. */
static void rf_meter_round(struct rf_meters *x, int i) {
  if (!erg_rf_multi_busy(x->m, i)) {
    rf_meter_poll(x, i);
    return;
  }
  if (x->ms[i].rc)
    return; /* its last answer failed (busy: 429/503, a timeout): no more load on it */
  bool opening = false;
  for (int c = 0; c < x->nclones && x->clones[i]; c++) {
    int slot = x->t->n + c;
    if (x->clone_of[c] != i)
      continue;
    bool busy = erg_rf_multi_busy(x->m, slot);
    if (x->ms[slot].open && !busy) {
      rf_meter_poll(x, slot);
      return;
    }
    opening |= busy && !x->ms[slot].open;
  }
  if (opening)
    return; /* one opening already */
  int slot = rf_meter_clone(x, i);
  if (slot >= 0 && x->ms[slot].open && !erg_rf_multi_busy(x->m, slot))
    rf_meter_poll(x, slot); /* open at once (no session to log in to): this round's */
}

static void rf_meters_round(struct rf_meters *x) {
  uint64_t now = erg_time_monotonic_ns();
  for (int i = 0; i < x->t->n; i++) {
    struct meter_src *ms = &x->ms[i];
    if (ms->open)
      rf_meter_round(x, i); /* on a free connection, or one more */
    else if (erg_rf_multi_busy(x->m, i))
      continue; /* opening */
    else if (now < ms->next_open_ns)
      meter_send(x->sock, x->t->index[i], ms, 0, 0, ms->why); /* the same reason, no new walk */
    /* else: opens below, or once fewer are in flight */
  }
  rf_meters_open_more(x);
}

void *meter_redfish_main(struct meter_thread *t) {
  struct rf_meters x = {.t = t};
  pthread_setname_np(pthread_self(), "erg-redfish"); /* top -H, the benchmark */
  x.sock = zmq_socket(t->zctx, ZMQ_PUSH);
  zmq_connect(x.sock, METER_ENDPOINT);
  long more = (long)t->n * (RF_INFLIGHT_MAX - 1);
  x.nclones = (int)(more < RF_CLONES_MAX ? more : RF_CLONES_MAX);
  int nslots = t->n + x.nclones;
  x.ms = calloc((size_t)nslots, sizeof *x.ms);
  x.t0 = calloc((size_t)nslots, sizeof *x.t0);
  x.clone_of = malloc((size_t)(x.nclones ? x.nclones : 1) * sizeof *x.clone_of);
  x.clones = calloc((size_t)t->n, sizeof *x.clones);
  x.clone_out_ns = calloc((size_t)t->n, sizeof *x.clone_out_ns);
  struct erg_pdu_source **srcs = calloc((size_t)nslots, sizeof *srcs);
  char why[256];
  for (int c = 0; x.clone_of && c < x.nclones; c++)
    x.clone_of[c] = -1;
  for (int i = 0; srcs && x.ms && i < nslots; i++)
    srcs[i] = &x.ms[i].src;
  if (x.ms && x.t0 && srcs && x.clone_of && x.clones && x.clone_out_ns &&
      !(x.m = erg_rf_multi_new(srcs, nslots, rf_meter_done, &x, why, sizeof why)))
    erg_err("redfish meters: %s", why);
  uint64_t step = (uint64_t)(t->cfg->poll_seconds * 1e9), next = erg_time_monotonic_ns();
  while (x.m && !*t->stop) {
    rf_meters_round(&x);
    next += step;
    uint64_t now = erg_time_monotonic_ns();
    if (next < now)
      next = now;
    /* Between rounds: answers as they come, the stop flag every 100 ms. */
    while (!*t->stop && (now = erg_time_monotonic_ns()) < next) {
      erg_rf_multi_run(x.m, next - now > 100000000ULL ? now + 100000000ULL : next);
      rf_meters_open_more(&x);
    }
  }
  erg_rf_multi_free(x.m, 5.0); /* logs out of every session, at once */
  free(srcs);
  free(x.ms);
  free(x.t0);
  free(x.clone_of);
  free(x.clones);
  free(x.clone_out_ns);
  zmq_close(x.sock);
  return NULL;
}

/* ---- IPMI: a pool of poll threads over a queue of meters ---- */
#ifdef ERG_HAVE_FREEIPMI
#define IPMI_POOL_AUTO_MAX 64
/* libfreeipmi's lanplus session and one request's buffers fit easily;
 * 256 KiB leaves room for glibc's resolver and snprintf. */
#define IPMI_POOL_STACK_BYTES (256u << 10)

struct ipmi_pool {
  struct meter_thread *t;
  int nthreads;
  struct meter_src *ms;
  bool *queued; /* in the queue or being polled */
  int *q, qhead, qlen;
  int polling; /* threads reading a BMC now */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool done;
};

struct ipmi_worker {
  struct ipmi_pool *p;
  int id;
};

static void *ipmi_worker(void *arg) {
  struct ipmi_pool *p = ((struct ipmi_worker *)arg)->p;
  int id = ((struct ipmi_worker *)arg)->id;
  pthread_setname_np(pthread_self(), "erg-ipmi");
  void *sock = zmq_socket(p->t->zctx, ZMQ_PUSH);
  zmq_connect(sock, METER_ENDPOINT);
  pthread_mutex_lock(&p->lock);
  for (;;) {
    while (!p->done && !p->qlen)
      pthread_cond_wait(&p->cond, &p->lock);
    if (p->done)
      break;
    int i = p->q[p->qhead];
    p->qhead = (p->qhead + 1) % p->t->n;
    p->qlen--;
    p->polling++;
    pthread_mutex_unlock(&p->lock);
    int index = p->t->index[i];
    struct meter_src *ms = &p->ms[i];
    if (meter_open(sock, index, ms, &p->t->cfg->sources[index]))
      meter_round_one(sock, index, ms);
    pthread_mutex_lock(&p->lock);
    p->queued[i] = false;
    if (--p->polling == 0 && p->done)
      pthread_cond_broadcast(&p->cond);
  }
  /* A share of the sessions is closed below, maybe one another thread
   * still reads: not before every read has ended. */
  while (p->polling)
    pthread_cond_wait(&p->cond, &p->lock);
  pthread_mutex_unlock(&p->lock);
  /* At exit the sessions close in parallel too: this thread's share. */
  for (int i = id; i < p->t->n; i += p->nthreads)
    if (p->ms[i].open)
      erg_pdu_source_close(&p->ms[i].src);
  zmq_close(sock);
  return NULL;
}

/* A round: every meter not still at its last one joins the queue. */
static void ipmi_pool_round(struct ipmi_pool *p) {
  int n = p->t->n;
  pthread_mutex_lock(&p->lock);
  for (int i = 0; i < n; i++) {
    if (p->queued[i])
      continue;
    p->queued[i] = true;
    p->q[(p->qhead + p->qlen) % n] = i;
    p->qlen++;
  }
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
}

void *meter_ipmi_main(struct meter_thread *t) {
  struct ipmi_pool p = {.t = t};
  pthread_mutex_init(&p.lock, NULL);
  pthread_cond_init(&p.cond, NULL);
  p.ms = calloc((size_t)t->n, sizeof *p.ms);
  p.queued = calloc((size_t)t->n, sizeof *p.queued);
  p.q = calloc((size_t)t->n, sizeof *p.q);
  int want = t->cfg->ipmi_poll_threads ? (int)t->cfg->ipmi_poll_threads
                                       : (t->n < IPMI_POOL_AUTO_MAX ? t->n : IPMI_POOL_AUTO_MAX);
  if (want > t->n)
    want = t->n;
  pthread_t *th = calloc((size_t)want, sizeof *th);
  struct ipmi_worker *w = calloc((size_t)want, sizeof *w);
  int started = 0;
  p.nthreads = want;
  if (p.ms && p.queued && p.q && th && w) {
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, IPMI_POOL_STACK_BYTES);
    for (; started < want; started++) {
      w[started] = (struct ipmi_worker){.p = &p, .id = started};
      if (pthread_create(&th[started], &a, ipmi_worker, &w[started]))
        break;
    }
    pthread_attr_destroy(&a);
  }
  p.nthreads = started; /* before any worker can have exited: each waits for the lock */
  if (started < want)
    erg_warn("ipmi meters: %d poll threads of %d started (%s)", started, want,
             started ? "the rest could not be" : "out of memory or threads");
  else
    erg_info("ipmi meters: %d BMCs on %d poll threads", t->n, started);
  uint64_t step = (uint64_t)(t->cfg->poll_seconds * 1e9), next = erg_time_monotonic_ns();
  while (started && !*t->stop) {
    ipmi_pool_round(&p);
    meter_wait(&next, step, t->stop);
  }
  pthread_mutex_lock(&p.lock);
  p.done = true;
  pthread_cond_broadcast(&p.cond);
  pthread_mutex_unlock(&p.lock);
  for (int i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  free(th);
  free(w);
  free(p.ms);
  free(p.queued);
  free(p.q);
  pthread_cond_destroy(&p.cond);
  pthread_mutex_destroy(&p.lock);
  return NULL;
}
#else
void *meter_ipmi_main(struct meter_thread *t) {
  (void)t;
  return NULL;
}
#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/* BMC meters at scale (docs/scale.md): every Redfish meter on one thread
 * over one curl multi handle; the IPMI meters (libfreeipmi blocks) on a
 * bounded pool of poll threads with small stacks. Per meter, the
 * semantics are those of a meter on its own thread (meters.c): a round
 * each poll_seconds on a fixed schedule (a meter still busy with its last
 * round reads ahead, below; an IPMI one only on an idle thread); a failed
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
/* Reading ahead, as for Redfish (above): requests in flight per meter at
 * most (its own session and clones, each a lanplus session of its own),
 * clone sessions in all, and how long a clone that failed to open (a
 * BMC's session limit) keeps its meter from another. */
#define IPMI_INFLIGHT_MAX 4
#define IPMI_CLONES_MAX 256
#define IPMI_CLONE_RETRY_NS (60ULL * 1000000000ULL)

/* Slots: n meters, then nclones clones. A clone reads its meter's BMC on
 * a session of its own; its answers are sent through its meter's state
 * (reading-time placement, what was logged once) under send_lock, on one
 * socket, so a meter's readings reach the main loop in the order sent. */
struct ipmi_pool {
  struct meter_thread *t;
  int nthreads, nslots, nclones;
  struct meter_src *ms;
  bool *queued; /* in the queue or being polled */
  int *q, qhead, qlen;
  int polling;            /* threads reading a BMC now */
  int clone_busy;         /* clone slots queued or being read */
  int *clone_of;          /* clone c (slot n + c): its meter, -1 free */
  int *clones;            /* per meter: clones it has */
  uint64_t *clone_out_ns; /* per meter: no new clone before (monotonic) */
  int *last_rc;           /* per meter: its last answer's (0: a reading; -1: none yet) */
  bool *was_open;         /* per slot: open after its last request */
  uint64_t *last_t_ns;    /* per meter: its last reading's time sent */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool done;
  void *sock; /* the answers', under send_lock */
  pthread_mutex_t send_lock;
};

struct ipmi_worker {
  struct ipmi_pool *p;
  int id;
};

static int ipmi_meter_of(const struct ipmi_pool *p, int slot) {
  return slot < p->t->n ? slot : p->clone_of[slot - p->t->n];
}

/* Sends slot's answer as its meter's; send_lock held. An answer that
 * arrived before one already sent (two sessions' answers a moment apart,
 * the later one sent first) is dropped: its power is in already. */
static void ipmi_send(struct ipmi_pool *p, int slot, double lat) {
  int i = ipmi_meter_of(p, slot), index = p->t->index[i];
  struct meter_src *ms = &p->ms[slot], *own = &p->ms[i];
  int n = ms->src.cfg.nchannels;
  if (!ms->rc && n > 0 && ms->r[0].ok) {
    if (ms->r[0].t_ns <= p->last_t_ns[i])
      return;
    p->last_t_ns[i] = ms->r[0].t_ns;
  }
  if (ms != own) { /* the meter's state, for this send */
    ms->rt = own->rt;
    ms->rt_logged = own->rt_logged;
    memcpy(ms->bad_logged, own->bad_logged, sizeof ms->bad_logged);
  }
  meter_send(p->sock, index, ms, n, lat, ms->rc ? ms->why : NULL);
  if (ms != own) {
    own->rt = ms->rt;
    own->rt_logged = ms->rt_logged;
    memcpy(own->bad_logged, ms->bad_logged, sizeof own->bad_logged);
  }
}

/* One request on slot (a meter or a clone), opening its session first
 * where it has none. A clone that cannot open says nothing (its meter
 * reads on) and goes back to the pool; its meter gets no other for a
 * while. */
static void ipmi_slot_poll(struct ipmi_pool *p, void *sock, int slot) {
  int n = p->t->n, i = ipmi_meter_of(p, slot), index = p->t->index[i];
  struct meter_src *ms = &p->ms[slot];
  const struct erg_pdu_source_config *cfg = &p->t->cfg->sources[index];
  bool was = ms->open;
  if (slot < n) {
    if (!meter_open(sock, index, ms, cfg))
      return;
  } else if (!ms->open) {
    if (erg_pdu_source_open(&ms->src, cfg, ms->why, sizeof ms->why)) {
      pthread_mutex_lock(&p->lock);
      p->clone_of[slot - n] = -1;
      p->clones[i]--;
      p->clone_out_ns[i] = erg_time_monotonic_ns() + IPMI_CLONE_RETRY_NS;
      pthread_mutex_unlock(&p->lock);
      return;
    }
    ms->open = true;
  }
  if (!was) { /* open: the next round may open the meter another clone */
    pthread_mutex_lock(&p->lock);
    p->was_open[slot] = true;
    pthread_mutex_unlock(&p->lock);
  }
  double lat = meter_poll(ms);
  /* What the driver says once about readings it takes as they are: the
   * meter's own session says it; its clones (the same BMC) keep quiet. */
  char note[256];
  while (erg_pdu_source_note(&ms->src, note, sizeof note) == 0)
    if (slot < n)
      erg_info("source %s: %s (logged once)", ms->src.cfg.name, note);
  pthread_mutex_lock(&p->send_lock);
  ipmi_send(p, slot, lat);
  pthread_mutex_unlock(&p->send_lock);
}

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
    int slot = p->q[p->qhead];
    p->qhead = (p->qhead + 1) % p->nslots;
    p->qlen--;
    p->polling++;
    pthread_mutex_unlock(&p->lock);
    ipmi_slot_poll(p, sock, slot);
    pthread_mutex_lock(&p->lock);
    p->queued[slot] = false;
    p->clone_busy -= slot >= p->t->n;
    p->was_open[slot] = p->ms[slot].open;
    int i = ipmi_meter_of(p, slot); /* -1: a clone that could not open, released */
    if (i >= 0 && p->ms[slot].open)
      p->last_rc[i] = p->ms[slot].rc;
    if (--p->polling == 0 && p->done)
      pthread_cond_broadcast(&p->cond);
  }
  /* A share of the sessions is closed below, maybe one another thread
   * still reads: not before every read has ended. */
  while (p->polling)
    pthread_cond_wait(&p->cond, &p->lock);
  pthread_mutex_unlock(&p->lock);
  /* At exit the sessions close in parallel too: this thread's share. */
  for (int s = id; s < p->nslots; s += p->nthreads)
    if (p->ms[s].open)
      erg_pdu_source_close(&p->ms[s].src);
  zmq_close(sock);
  return NULL;
}

static void ipmi_queue(struct ipmi_pool *p, int slot) {
  p->clone_busy += slot >= p->t->n;
  p->queued[slot] = true;
  p->q[(p->qhead + p->qlen) % p->nslots] = slot;
  p->qlen++;
}

/* Meter i is still reading: a request on a clone of its that is idle, or
 * on a new one, while a thread is idle and clones hold only the threads
 * beyond one per meter (every meter keeps a thread for its own request, as
 * without reading ahead; ipmi_poll_threads <= the meters: none); lock
 * held. Not while its last answer failed or none came yet (a BMC that
 * times out gets no more requests), nor while a clone of its is opening. */
static void ipmi_read_ahead(struct ipmi_pool *p, int i, uint64_t now) {
  int n = p->t->n;
  if (p->last_rc[i] || !p->was_open[i] || p->polling + p->qlen >= p->nthreads ||
      p->clone_busy >= p->nthreads - n)
    return;
  for (int c = 0; c < p->nclones && p->clones[i]; c++) {
    if (p->clone_of[c] != i)
      continue;
    if (p->queued[n + c] && !p->was_open[n + c])
      return; /* one opening */
    if (!p->queued[n + c]) {
      ipmi_queue(p, n + c);
      return;
    }
  }
  if (p->clones[i] >= IPMI_INFLIGHT_MAX - 1 || now < p->clone_out_ns[i])
    return;
  for (int c = 0; c < p->nclones; c++) {
    if (p->clone_of[c] >= 0 || p->queued[n + c])
      continue; /* taken, or a released one still closing its failed open */
    memset(&p->ms[n + c], 0, sizeof p->ms[n + c]); /* idle: no thread has it */
    p->clone_of[c] = i;
    p->clones[i]++;
    p->was_open[n + c] = false;
    ipmi_queue(p, n + c);
    return;
  }
}

/* A round: every meter not still at its last one joins the queue; one
 * still at it reads ahead (at most one request a round either way). */
static void ipmi_pool_round(struct ipmi_pool *p) {
  int n = p->t->n;
  uint64_t now = erg_time_monotonic_ns();
  pthread_mutex_lock(&p->lock);
  for (int i = 0; i < n; i++)
    if (!p->queued[i])
      ipmi_queue(p, i);
  for (int i = 0; i < n && p->nclones; i++)
    ipmi_read_ahead(p, i, now);
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
}

void *meter_ipmi_main(struct meter_thread *t) {
  struct ipmi_pool p = {.t = t};
  pthread_mutex_init(&p.lock, NULL);
  pthread_mutex_init(&p.send_lock, NULL);
  pthread_cond_init(&p.cond, NULL);
  long more = (long)t->n * (IPMI_INFLIGHT_MAX - 1);
  p.nclones = (int)(more < IPMI_CLONES_MAX ? more : IPMI_CLONES_MAX);
  p.nslots = t->n + p.nclones;
  p.ms = calloc((size_t)p.nslots, sizeof *p.ms);
  p.queued = calloc((size_t)p.nslots, sizeof *p.queued);
  p.q = calloc((size_t)p.nslots, sizeof *p.q);
  p.clone_of = malloc((size_t)(p.nclones ? p.nclones : 1) * sizeof *p.clone_of);
  p.clones = calloc((size_t)t->n, sizeof *p.clones);
  p.clone_out_ns = calloc((size_t)t->n, sizeof *p.clone_out_ns);
  p.last_rc = calloc((size_t)t->n, sizeof *p.last_rc);
  p.last_t_ns = calloc((size_t)t->n, sizeof *p.last_t_ns);
  p.was_open = calloc((size_t)p.nslots, sizeof *p.was_open);
  for (int c = 0; p.clone_of && c < p.nclones; c++)
    p.clone_of[c] = -1;
  for (int i = 0; p.last_rc && i < t->n; i++)
    p.last_rc[i] = -1; /* no answer yet: no reading ahead before the first */
  /* Default: a thread per request a meter may have in flight (reading
   * ahead), up to IPMI_POOL_AUTO_MAX. */
  long auto_n = (long)t->n * IPMI_INFLIGHT_MAX;
  int want = t->cfg->ipmi_poll_threads
                 ? (int)t->cfg->ipmi_poll_threads
                 : (int)(auto_n < IPMI_POOL_AUTO_MAX ? auto_n : IPMI_POOL_AUTO_MAX);
  if (want > p.nslots)
    want = p.nslots;
  pthread_t *th = calloc((size_t)want, sizeof *th);
  struct ipmi_worker *w = calloc((size_t)want, sizeof *w);
  int started = 0;
  p.nthreads = want;
  if (p.ms && p.queued && p.q && p.clone_of && p.clones && p.clone_out_ns && p.last_rc &&
      p.last_t_ns && p.was_open && th && w && (p.sock = zmq_socket(t->zctx, ZMQ_PUSH)) &&
      zmq_connect(p.sock, METER_ENDPOINT) == 0) {
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
  if (p.sock)
    zmq_close(p.sock);
  free(th);
  free(w);
  free(p.ms);
  free(p.queued);
  free(p.q);
  free(p.clone_of);
  free(p.clones);
  free(p.clone_out_ns);
  free(p.last_rc);
  free(p.last_t_ns);
  free(p.was_open);
  pthread_cond_destroy(&p.cond);
  pthread_mutex_destroy(&p.send_lock);
  pthread_mutex_destroy(&p.lock);
  return NULL;
}
#else
void *meter_ipmi_main(struct meter_thread *t) {
  (void)t;
  return NULL;
}
#endif

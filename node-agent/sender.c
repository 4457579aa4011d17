/* ZeroMQ PUSH to the collector. The socket's send high-water mark is the
 * bounded queue: the socket connects (never binds) with ZMQ_IMMEDIATE = 0,
 * so libzmq creates the outgoing pipe at once and keeps it across
 * reconnects; while the collector is away, samples wait there in order and
 * go out when it returns. A full pipe refuses the newest message (EAGAIN):
 * that one is dropped and counted, exactly, and the count travels in the
 * next sample that is accepted. ZMTP heartbeats bound how long a dead
 * collector host or a partition goes unnoticed (see sender_heartbeat). Not
 * covered: messages already written to a TCP connection that then breaks
 * (at most a heartbeat timeout's worth; ZeroMQ has no acks), nor what a
 * collector killed had read but not stored: for both, the last
 * resend_samples samples are sent again, marked resent, after every
 * reconnect (resend.c). If that peer was only stalled, it reads them
 * interleaved with the new connection's queue; the collector takes samples
 * that fill a gap and ignores copies it has (collector/coverage.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "erg_agent.h"

struct erg_sender {
  void *ctx, *sock, *mon;
  uint64_t dropped;
  int up;              /* handshake done, no disconnect since */
  double timeout_s;    /* heartbeat timeout, for the log */
  long queue_samples;
  char endpoint[256];
  struct erg_resend_ring *ring;
  int had_link;        /* a handshake succeeded before: the next one is a reconnect */
  int resend_due;
  uint64_t resent;
  uint64_t pushed;     /* samples put in the ring, ever */
  uint64_t mark;       /* pushed when the link was seen lost */
};

/* Without heartbeats a collector host that dies without closing TCP (power
 * loss, a partition, a hung ergd whose kernel still ACKs) goes unnoticed
 * for many minutes while samples pour into TCP buffers, where they are lost
 * uncounted. A PING every ivl that gets no reply within 3 × ivl closes the
 * connection: the pipe, our counted queue, stops draining and reconnects
 * start. The TTL in our PINGs asks the peer to drop us likewise when we
 * fall silent (libzmq 4.3.4's PULL side does not act on it; a newer one
 * may). A connect that hangs (SYNs into a partition) is cut at the same
 * timeout, so the link returns soon after the network does. */
static int sender_heartbeat(struct erg_sender *s, const struct erg_agent_config *cfg) {
  double ivl_s = cfg->heartbeat_seconds > 0 ? cfg->heartbeat_seconds
                 : cfg->interval_seconds > 1 ? cfg->interval_seconds
                                             : 1;
  int ivl = (int)(ivl_s * 1000 + 0.5), timeout = 3 * ivl;
  int ttl = timeout > 6553500 ? 6553500 : timeout; /* ZMTP: 16 bits of 0.1 s */
  s->timeout_s = timeout / 1000.0;
  return zmq_setsockopt(s->sock, ZMQ_HEARTBEAT_IVL, &ivl, sizeof ivl) != 0 ||
                 zmq_setsockopt(s->sock, ZMQ_HEARTBEAT_TIMEOUT, &timeout, sizeof timeout) != 0 ||
                 zmq_setsockopt(s->sock, ZMQ_HEARTBEAT_TTL, &ttl, sizeof ttl) != 0 ||
                 zmq_setsockopt(s->sock, ZMQ_CONNECT_TIMEOUT, &timeout, sizeof timeout) != 0
             ? -1
             : 0;
}

/* Connection events, only to tell the operator when samples start and stop
 * queueing; read without blocking at each send. */
static int sender_monitor(struct erg_sender *s) {
  char ep[64];
  snprintf(ep, sizeof ep, "inproc://erg-sender-monitor-%p", (void *)s);
  if (zmq_socket_monitor(s->sock, ep, ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED) != 0)
    return -1;
  s->mon = zmq_socket(s->ctx, ZMQ_PAIR);
  return s->mon && zmq_connect(s->mon, ep) == 0 ? 0 : -1;
}

/* A failed handshake (wrong CURVE key, a collector that does not answer)
 * also ends in a disconnect: only a link that was up is reported lost, so
 * retries do not flood the log. */
static void sender_events(struct erg_sender *s) {
  uint8_t ev[6];
  char addr[256];
  while (zmq_recv(s->mon, ev, sizeof ev, ZMQ_DONTWAIT) >= 2) {
    (void)zmq_recv(s->mon, addr, sizeof addr, ZMQ_DONTWAIT);
    uint16_t id;
    memcpy(&id, ev, sizeof id);
    if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED && !s->up)
      erg_info("connected to collector %s", s->endpoint);
    else if (id == ZMQ_EVENT_DISCONNECTED && s->up)
      erg_warn("lost collector %s (closed, or silent for %.3gs): samples queue (at most %ld)",
               s->endpoint, s->timeout_s, s->queue_samples);
    /* Every handshake after the first is a new connection: the old one
     * may have taken samples the collector never stored. Samples queued
     * after the loss wait in the pipe, which survives the reconnect: only
     * those before it (mark) may be lost. */
    if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
      s->resend_due |= s->had_link, s->had_link = 1;
    if (id == ZMQ_EVENT_DISCONNECTED && s->up)
      s->mark = s->pushed;
    s->up = id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED ? 1 : id == ZMQ_EVENT_DISCONNECTED ? 0 : s->up;
  }
}

/* Sets the CURVE client options: the server key pins the collector. */
static int sender_curve(void *sock, const struct erg_agent_config *cfg, char *why, size_t whylen) {
  char server[ERG_KEY_Z85_LEN + 1], secret[ERG_KEY_Z85_LEN + 1], public[ERG_KEY_Z85_LEN + 1];
  if (!cfg->curve_server_key[0] && !cfg->curve_secret_key_file[0])
    return 0;
  if (!cfg->curve_server_key[0] || !cfg->curve_secret_key_file[0]) {
    snprintf(why, whylen, "CURVE needs both curve_server_key and curve_secret_key_file");
    return -1;
  }
  /* The server key may be given inline or as a file. */
  if (erg_agent_server_key(cfg->curve_server_key, server, why, whylen) != 0)
    return -1;
  if (erg_key_read_file(cfg->curve_secret_key_file, secret, why, whylen) != 0)
    return -1;
  if (zmq_curve_public(public, secret) != 0 ||
      zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, server, ERG_KEY_Z85_LEN) != 0 ||
      zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, public, ERG_KEY_Z85_LEN) != 0 ||
      zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, secret, ERG_KEY_Z85_LEN) != 0) {
    snprintf(why, whylen, "CURVE setup failed: %s", zmq_strerror(errno));
    return -1;
  }
  return 0;
}

int erg_sender_open(struct erg_sender **out, const struct erg_agent_config *cfg, char *why,
                    size_t whylen) {
  const char *endpoint = cfg->collector;
  long queue_samples = cfg->queue_samples;
  struct erg_sender *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  s->queue_samples = queue_samples;
  s->ring = erg_resend_ring_new(cfg->resend_samples > 0 ? (size_t)cfg->resend_samples : 0,
                                ERG_RESEND_MAX_BYTES);
  erg_strlcpy(s->endpoint, endpoint, sizeof s->endpoint);
  s->ctx = zmq_ctx_new();
  s->sock = s->ctx ? zmq_socket(s->ctx, ZMQ_PUSH) : NULL;
  if (!s->sock) {
    snprintf(why, whylen, "zmq socket: %s", zmq_strerror(errno));
    goto fail;
  }
  /* Room for queue_samples samples plus the hello sent every 60 of them. */
  long q = queue_samples + queue_samples / 60 + 1;
  int hwm = q > 0x7fffffff ? 0x7fffffff : (int)q;
  int linger = 2000, immediate = 0;
  if (zmq_setsockopt(s->sock, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0 ||
      zmq_setsockopt(s->sock, ZMQ_IMMEDIATE, &immediate, sizeof immediate) != 0 ||
      zmq_setsockopt(s->sock, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
      sender_heartbeat(s, cfg) != 0 || sender_monitor(s) != 0) {
    snprintf(why, whylen, "zmq socket options: %s", zmq_strerror(errno));
    goto fail;
  }
  if (sender_curve(s->sock, cfg, why, whylen) != 0)
    goto fail;
  if (zmq_connect(s->sock, endpoint) != 0) {
    snprintf(why, whylen, "cannot connect to %s: %s", endpoint, zmq_strerror(errno));
    goto fail;
  }
  *out = s;
  return 0;
fail:
  erg_resend_ring_free(s->ring);
  if (s->mon)
    zmq_close(s->mon);
  if (s->sock)
    zmq_close(s->sock);
  if (s->ctx)
    zmq_ctx_term(s->ctx);
  free(s);
  return -1;
}

/* 0 sent (queued), 1 refused by a full queue, -1 error. A queued sample
 * is kept in the resend ring. */
static int sender_push(struct erg_sender *s, const Erg__Envelope *env) {
  uint8_t *buf;
  size_t len = erg_wire_pack(env, &buf);
  if (!len)
    return -1;
  int rc = zmq_send(s->sock, buf, len, ZMQ_DONTWAIT);
  if (rc >= 0 && env->body_case == ERG__ENVELOPE__BODY_SAMPLE &&
      erg_resend_ring_push(s->ring, buf, len) == 0)
    s->pushed++;
  free(buf);
  if (rc < 0)
    return errno == EAGAIN ? 1 : -1;
  return 0;
}

/* One ring entry again, with resent set, so the collector tells the copy
 * of a sample it has from a second agent claiming the node. 0, or 1 when
 * the queue is full. */
static int sender_resend_one(struct erg_sender *s, const uint8_t *buf, size_t len) {
  Erg__Envelope *env = erg_wire_unpack(buf, len, NULL);
  if (!env)
    return 0;
  uint8_t *out = NULL;
  size_t olen = 0;
  if (env->body_case == ERG__ENVELOPE__BODY_SAMPLE) {
    env->sample->resent = 1;
    olen = erg_wire_pack(env, &out);
  }
  erg_wire_free(env);
  int rc = olen ? zmq_send(s->sock, out, olen, ZMQ_DONTWAIT) : 0;
  free(out);
  if (rc < 0)
    return 1;
  s->resent += olen != 0;
  return 0;
}

/* After a reconnect, ahead of the new sample: the ring's samples queued
 * before the link was seen lost (later ones wait in the pipe), oldest
 * first; at most half the queue, so copies never crowd out new samples
 * in a small queue: the newest of them, the likeliest lost. */
static void sender_resend(struct erg_sender *s) {
  size_t n = erg_resend_ring_count(s->ring), len, sent = 0;
  uint64_t first = s->pushed - n, end = s->mark > first ? s->mark : first;
  uint64_t cap = (uint64_t)(s->queue_samples / 2), from = end - first > cap ? end - cap : first;
  s->resend_due = 0;
  for (uint64_t k = from; k < end; k++, sent++) {
    const uint8_t *buf = erg_resend_ring_get(s->ring, (size_t)(k - first), &len);
    if (!buf || sender_resend_one(s, buf, len))
      break;
  }
  if (sent)
    erg_info("reconnected to collector %s: sent the last %zu samples again", s->endpoint, sent);
}

int erg_sender_send(struct erg_sender *s, const Erg__Envelope *env) {
  sender_events(s);
  if (s->resend_due)
    sender_resend(s);
  if (env->body_case != ERG__ENVELOPE__BODY_SAMPLE)
    return sender_push(s, env); /* a lost hello is re-sent later, not counted */
  /* The count is cleared only once a sample carrying it is accepted, so a
   * refused sample never loses the count of those before it. */
  env->sample->dropped_samples = s->dropped;
  int rc = sender_push(s, env);
  if (rc == 0)
    s->dropped = 0;
  else if (rc == 1)
    s->dropped++;
  return rc;
}


void erg_sender_close(struct erg_sender *s) {
  if (!s)
    return;
  zmq_socket_monitor(s->sock, NULL, 0);
  zmq_close(s->mon);
  zmq_close(s->sock);
  zmq_ctx_term(s->ctx);
  erg_resend_ring_free(s->ring);
  free(s);
}

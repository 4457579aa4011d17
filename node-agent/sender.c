// SPDX-License-Identifier: GPL-3.0-or-later
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
 * that fill a gap and ignores copies it has (collector/coverage.c). What
 * the link does is news for the caller's log (erg_sender_news): the sender
 * logs nothing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "erg_agent.h"

/* Why handshakes fail, as the monitor tells it: each said once per run of
 * failures (a handshake that succeeds starts a new run). */
enum { FAIL_MECHANISM, FAIL_PROTOCOL, FAIL_AUTH, FAIL_CLOSED, FAIL_N };

/* Without a link, said again after 10 s, then at doubling gaps up to 10
 * min; also when a protocol failure or a refused key, after which libzmq
 * never reconnects, is retried by connecting afresh. */
#define SENDER_REMIND_FIRST_NS (10 * ERG_NS_PER_S)
#define SENDER_REMIND_MAX_NS (600 * ERG_NS_PER_S)

/* News kept until the caller takes it: one send sees a handful (a run of
 * reconnects between two sends is one connect and one loss per 100 ms);
 * a caller that never takes it leaves the oldest ones here, no more. */
#define SENDER_NEWS_MAX 256

struct sender_news {
  enum erg_sender_news_kind kind;
  int fail;       /* FAIL_*: NO_HANDSHAKE, STILL_DOWN */
  uint32_t value; /* its event value */
  double seconds;
  size_t count;
};

struct erg_sender {
  void *ctx, *sock, *mon;
  uint64_t dropped;
  int up;    /* handshake done, no disconnect since */
  int curve; /* CURVE configured: changes what a failure means */
  char public_key[ERG_KEY_Z85_LEN + 1];
  unsigned fails_logged;             /* 1 << FAIL_*: said in this run of failures */
  int last_fail;                     /* FAIL_*, -1: none since the link was last up */
  uint32_t last_value;               /* its event value (ZMTP error, ZAP status, errno) */
  int dead;                          /* a failure ended the session for good: connect again */
  uint64_t down_since_ns, remind_ns; /* no link since; next reminder after */
  uint64_t queued_down;              /* samples queued while the link was down */
  double timeout_s;                  /* heartbeat timeout, for the log */
  long queue_samples;
  char endpoint[256];
  struct erg_resend_ring *ring;
  int had_link; /* a handshake succeeded before: the next one is a reconnect */
  int resend_due;
  uint64_t resent;
  uint64_t pushed;                          /* samples put in the ring, ever */
  uint64_t mark;                            /* pushed when the link was seen lost */
  struct sender_news news[SENDER_NEWS_MAX]; /* news[news_first..nnews): not yet taken */
  size_t nnews, news_first;
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
  double ivl_s = cfg->heartbeat_seconds > 0  ? cfg->heartbeat_seconds
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
  if (zmq_socket_monitor(s->sock, ep,
                         ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED |
                             ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) != 0)
    return -1;
  s->mon = zmq_socket(s->ctx, ZMQ_PAIR);
  return s->mon && zmq_connect(s->mon, ep) == 0 ? 0 : -1;
}

/* Keeps news for the caller (dropped when SENDER_NEWS_MAX are not taken). */
static void sender_note(struct erg_sender *s, struct sender_news n) {
  if (s->news_first == s->nnews)
    s->news_first = s->nnews = 0;
  if (s->nnews < SENDER_NEWS_MAX)
    s->news[s->nnews++] = n;
}

/* What a failed handshake most likely means, for the operator. */
static void sender_cause(const struct erg_sender *s, int kind, uint32_t value, char *buf,
                         size_t len) {
  if (kind == FAIL_MECHANISM && !s->curve)
    snprintf(buf, len,
             "the collector requires CURVE keys: give this agent "
             "--curve-server-key COLLECTOR.pub and --curve-secret-key-file AGENT.key (or "
             "curve_server_key and curve_secret_key_file in [agent]; erg keygen, "
             "docs/guide.md step 5)");
  else if (kind == FAIL_MECHANISM)
    snprintf(buf, len,
             "the collector does not use CURVE but this agent does: give ergd "
             "curve_secret_key_file and authorized_keys_file, or drop the agent's CURVE keys");
  else if (kind == FAIL_AUTH)
    snprintf(buf, len,
             "the collector refused this agent's CURVE key %s (ZAP status %u): "
             "list it in ergd's authorized_keys_file with this node's name",
             s->public_key, value);
  else if (kind == FAIL_PROTOCOL)
    snprintf(buf, len, "ZMTP protocol error 0x%x in the handshake (%s)", value,
             value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC
                 ? "a CURVE message that does not decrypt: keys that do not match"
                 : "not an ergd, or another version");
  else if (kind == FAIL_CLOSED && s->curve)
    snprintf(buf, len,
             "the collector closed the connection in the CURVE handshake: "
             "curve_server_key is likely not this collector's public key");
  else if (kind == FAIL_CLOSED)
    snprintf(buf, len,
             "the collector closed the connection in the handshake: it likely "
             "requires CURVE keys (--curve-server-key, --curve-secret-key-file), or it is not "
             "an ergd");
  else
    snprintf(buf, len, "nothing answers: the collector is down or unreachable");
}

static void sender_fail(struct erg_sender *s, uint16_t id, uint32_t value) {
  int kind = id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH                 ? FAIL_AUTH
             : id == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL          ? FAIL_CLOSED
             : value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH ? FAIL_MECHANISM
                                                                   : FAIL_PROTOCOL;
  /* A plaintext agent's handshakes end either way, as the collector or
   * the agent sees the mismatch first: once it is known, a close is no news. */
  if (kind == FAIL_CLOSED && s->fails_logged & 1u << FAIL_MECHANISM)
    return;
  s->last_fail = kind;
  s->last_value = value;
  /* libzmq (4.3) ends the session after a protocol error or a refused key
   * and never reconnects (a closed connection it retries). */
  s->dead |= id != ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
  if (s->fails_logged & 1u << kind)
    return;
  s->fails_logged |= 1u << kind;
  sender_note(s,
              (struct sender_news){.kind = ERG_SENDER_NO_HANDSHAKE, .fail = kind, .value = value});
}

/* Without a link for a while: said again, at growing gaps; a session that
 * a failure ended for good is replaced by a new connect. What was queued
 * since the link went down goes with the old pipe: counted as dropped. */
static void sender_remind(struct erg_sender *s) {
  uint64_t now = erg_time_monotonic_ns();
  if (s->up || now - s->down_since_ns < s->remind_ns)
    return;
  sender_note(s, (struct sender_news){.kind = ERG_SENDER_STILL_DOWN,
                                      .fail = s->last_fail,
                                      .value = s->last_value,
                                      .seconds = (now - s->down_since_ns) / 1e9});
  s->remind_ns = s->remind_ns * 2 > SENDER_REMIND_MAX_NS ? SENDER_REMIND_MAX_NS : s->remind_ns * 2;
  if (s->dead && zmq_disconnect(s->sock, s->endpoint) == 0 &&
      zmq_connect(s->sock, s->endpoint) == 0) {
    s->dead = 0;
    s->dropped += s->queued_down;
    s->queued_down = 0;
  }
}

/* A failed handshake (wrong CURVE key, a collector that does not answer)
 * also ends in a disconnect: only a link that was up is reported lost, so
 * retries do not flood the log; the failure itself is said once. */
static void sender_events(struct erg_sender *s) {
  uint8_t ev[6];
  char addr[256];
  while (zmq_recv(s->mon, ev, sizeof ev, ZMQ_DONTWAIT) >= 2) {
    (void)zmq_recv(s->mon, addr, sizeof addr, ZMQ_DONTWAIT);
    uint16_t id;
    uint32_t value;
    memcpy(&id, ev, sizeof id);
    memcpy(&value, ev + 2, sizeof value);
    if (id & (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
              ZMQ_EVENT_HANDSHAKE_FAILED_AUTH))
      sender_fail(s, id, value);
    if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
      s->fails_logged = 0;
      s->last_fail = -1;
      s->queued_down = 0;
      s->remind_ns = SENDER_REMIND_FIRST_NS;
    }
    if (id == ZMQ_EVENT_DISCONNECTED && s->up)
      s->down_since_ns = erg_time_monotonic_ns();
    if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED && !s->up)
      sender_note(s, (struct sender_news){.kind = ERG_SENDER_CONNECTED});
    else if (id == ZMQ_EVENT_DISCONNECTED && s->up)
      sender_note(s, (struct sender_news){.kind = ERG_SENDER_LOST, .seconds = s->timeout_s});
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
static int sender_curve(struct erg_sender *s, const struct erg_agent_config *cfg, char *why,
                        size_t whylen) {
  char server[ERG_KEY_Z85_LEN + 1], secret[ERG_KEY_Z85_LEN + 1];
  char *public = s->public_key;
  void *sock = s->sock;
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
  s->curve = 1;
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
  s->last_fail = -1;
  s->down_since_ns = erg_time_monotonic_ns();
  s->remind_ns = SENDER_REMIND_FIRST_NS;
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
  if (sender_curve(s, cfg, why, whylen) != 0)
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
    sender_note(s, (struct sender_news){.kind = ERG_SENDER_RESENT, .count = sent});
}

int erg_sender_send(struct erg_sender *s, const Erg__Envelope *env) {
  sender_events(s);
  sender_remind(s);
  if (s->resend_due)
    sender_resend(s);
  if (env->body_case != ERG__ENVELOPE__BODY_SAMPLE)
    return sender_push(s, env); /* a lost hello is re-sent later, not counted */
  /* The count is cleared only once a sample carrying it is accepted, so a
   * refused sample never loses the count of those before it. */
  env->sample->dropped_samples = s->dropped;
  int rc = sender_push(s, env);
  if (rc == 0) {
    s->dropped = 0;
    s->queued_down += !s->up;
  } else if (rc == 1) {
    s->dropped++;
  }
  return rc;
}

int erg_sender_link_up(struct erg_sender *s, int wait_ms) {
  uint64_t end = erg_time_monotonic_ns() + (uint64_t)(wait_ms > 0 ? wait_ms : 0) * 1000000;
  for (;;) {
    sender_events(s);
    uint64_t now = erg_time_monotonic_ns();
    if (s->up || now >= end)
      return s->up;
    zmq_pollitem_t it = {s->mon, 0, ZMQ_POLLIN, 0};
    zmq_poll(&it, 1, (long)((end - now) / 1000000) + 1);
  }
}

int erg_sender_news(struct erg_sender *s, struct erg_sender_news *n) {
  if (!s || s->news_first == s->nnews)
    return 0;
  const struct sender_news *k = &s->news[s->news_first++];
  memset(n, 0, sizeof *n);
  n->kind = k->kind;
  n->seconds = k->seconds;
  n->count = k->count;
  if (k->kind == ERG_SENDER_NO_HANDSHAKE || k->kind == ERG_SENDER_STILL_DOWN)
    sender_cause(s, k->fail, k->value, n->cause, sizeof n->cause);
  return 1;
}

void erg_sender_close(struct erg_sender *s) {
  if (!s)
    return;
  sender_events(s);
  /* Lingering flushes the queue over a live link; without one it only
   * delays the exit. */
  if (!s->up) {
    int zero = 0;
    zmq_setsockopt(s->sock, ZMQ_LINGER, &zero, sizeof zero);
  }
  zmq_socket_monitor(s->sock, NULL, 0);
  zmq_close(s->mon);
  zmq_close(s->sock);
  zmq_ctx_term(s->ctx);
  erg_resend_ring_free(s->ring);
  free(s);
}

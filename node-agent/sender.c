/* ZeroMQ PUSH to the collector. The socket's send high-water mark is the
 * bounded queue: while the collector is away, samples wait in order inside
 * libzmq and go out on reconnect; past the mark they are dropped and
 * counted, and the count travels in the next sample. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "erg_agent.h"

struct erg_sender {
  void *ctx, *sock;
  uint64_t dropped;
};

int erg_sender_open(struct erg_sender **out, const char *endpoint, long queue_samples,
                    char *why, size_t whylen) {
  struct erg_sender *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  s->ctx = zmq_ctx_new();
  s->sock = s->ctx ? zmq_socket(s->ctx, ZMQ_PUSH) : NULL;
  if (!s->sock) {
    snprintf(why, whylen, "zmq socket: %s", zmq_strerror(errno));
    goto fail;
  }
  int hwm = queue_samples > 0x7fffffff ? 0x7fffffff : (int)queue_samples;
  int linger = 2000;
  zmq_setsockopt(s->sock, ZMQ_SNDHWM, &hwm, sizeof hwm);
  zmq_setsockopt(s->sock, ZMQ_LINGER, &linger, sizeof linger);
  if (zmq_connect(s->sock, endpoint) != 0) {
    snprintf(why, whylen, "cannot connect to %s: %s", endpoint, zmq_strerror(errno));
    goto fail;
  }
  *out = s;
  return 0;
fail:
  if (s->sock)
    zmq_close(s->sock);
  if (s->ctx)
    zmq_ctx_term(s->ctx);
  free(s);
  return -1;
}

int erg_sender_send(struct erg_sender *s, const Erg__Envelope *env) {
  uint8_t *buf;
  size_t len = erg_wire_pack(env, &buf);
  if (!len)
    return -1;
  int rc = zmq_send(s->sock, buf, len, ZMQ_DONTWAIT);
  free(buf);
  if (rc < 0) {
    if (errno == EAGAIN) {
      s->dropped++;
      return 1;
    }
    return -1;
  }
  return 0;
}

uint64_t erg_sender_take_dropped(struct erg_sender *s) {
  uint64_t d = s->dropped;
  s->dropped = 0;
  return d;
}

void erg_sender_close(struct erg_sender *s) {
  if (!s)
    return;
  zmq_close(s->sock);
  zmq_ctx_term(s->ctx);
  free(s);
}

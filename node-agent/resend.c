// SPDX-License-Identifier: GPL-3.0-or-later
/* The agent's resend ring: copies of the last samples it queued, as packed
 * envelopes. ZeroMQ has no acks, so what a collector had read into its
 * socket buffers but not yet stored when it died is gone from both ends;
 * after a reconnect the sender sends these copies again, marked resent,
 * and the collector takes the ones it lacks (docs/agent.md "Resend").
 * Bounded twice: by count (resend_samples) and by bytes, oldest out first. */
#include <stdlib.h>
#include <string.h>

#include "erg_agent.h"

struct erg_resend_ring {
  struct resend_entry {
    uint8_t *buf;
    size_t len;
  } * e;
  size_t cap, head, n, bytes, max_bytes;
};

struct erg_resend_ring *erg_resend_ring_new(size_t max_samples, size_t max_bytes) {
  struct erg_resend_ring *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->cap = max_samples;
  r->max_bytes = max_bytes;
  if (max_samples && !(r->e = calloc(max_samples, sizeof *r->e))) {
    free(r);
    return NULL;
  }
  return r;
}

static void resend_pop_oldest(struct erg_resend_ring *r) {
  struct resend_entry *o = &r->e[r->head];
  r->bytes -= o->len;
  free(o->buf);
  *o = (struct resend_entry){0};
  r->head = (r->head + 1) % r->cap;
  r->n--;
}

int erg_resend_ring_push(struct erg_resend_ring *r, const uint8_t *buf, size_t len) {
  if (!r || !r->cap || len > r->max_bytes)
    return -1;
  uint8_t *copy = malloc(len);
  if (!copy)
    return -1;
  memcpy(copy, buf, len);
  while (r->n && (r->n == r->cap || r->bytes + len > r->max_bytes))
    resend_pop_oldest(r);
  r->e[(r->head + r->n) % r->cap] = (struct resend_entry){copy, len};
  r->n++;
  r->bytes += len;
  return 0;
}

size_t erg_resend_ring_count(const struct erg_resend_ring *r) { return r ? r->n : 0; }

size_t erg_resend_ring_bytes(const struct erg_resend_ring *r) { return r ? r->bytes : 0; }

const uint8_t *erg_resend_ring_get(const struct erg_resend_ring *r, size_t i, size_t *len) {
  if (!r || i >= r->n)
    return NULL;
  const struct resend_entry *e = &r->e[(r->head + i) % r->cap];
  *len = e->len;
  return e->buf;
}

void erg_resend_ring_free(struct erg_resend_ring *r) {
  while (r && r->n)
    resend_pop_oldest(r);
  if (r)
    free(r->e);
  free(r);
}

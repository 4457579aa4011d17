// SPDX-License-Identifier: GPL-3.0-or-later
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"

/* Upper bounds that no honest agent reaches; a message beyond them is
 * rejected as a whole instead of poisoning the grid. */
#define WIRE_MAX_PROCS 200000
#define WIRE_MAX_INTERVAL_NS (3600ULL * ERG_NS_PER_S)
#define WIRE_MAX_NAME 256

size_t erg_wire_pack(const Erg__Envelope *env, uint8_t **out) {
  size_t len = erg__envelope__get_packed_size(env);
  uint8_t *buf = malloc(len ? len : 1);
  if (!buf)
    return 0;
  erg__envelope__pack(env, buf);
  *out = buf;
  return len;
}

static const char *wire_check_hello(const Erg__Hello *h) {
  if (!h->node || !h->node[0])
    return "hello without node name";
  if (strlen(h->node) > WIRE_MAX_NAME)
    return "node name too long";
  return NULL;
}

static const char *wire_check_sample(const Erg__Sample *s) {
  if (!s->node || !s->node[0])
    return "sample without node name";
  if (strlen(s->node) > WIRE_MAX_NAME)
    return "node name too long";
  if (!s->interval)
    return "sample without interval";
  const Erg__Interval *iv = s->interval;
  if (iv->realtime_end_ns <= iv->realtime_start_ns)
    return "interval end not after start";
  if (iv->realtime_end_ns - iv->realtime_start_ns > WIRE_MAX_INTERVAL_NS)
    return "interval longer than an hour";
  if (s->n_procs > WIRE_MAX_PROCS)
    return "too many processes";
  if (s->n_users > WIRE_MAX_PROCS)
    return "too many user names";
  uint64_t span = iv->realtime_end_ns - iv->realtime_start_ns;
  uint32_t ncpu = s->totals && s->totals->ncpu ? s->totals->ncpu : 1;
  /* A process cannot run longer than wall time x CPUs (small slack for
   * accounting granularity). */
  uint64_t cpu_cap = span * ncpu + span / 2 + 20000000ULL;
  for (size_t i = 0; i < s->n_procs; i++) {
    const Erg__Proc *p = s->procs[i];
    if (p->cpu_ns > cpu_cap)
      return "process CPU time exceeds interval";
  }
  return NULL;
}

Erg__Envelope *erg_wire_unpack(const uint8_t *buf, size_t len, const char **why) {
  static const char *dummy;
  if (!why)
    why = &dummy;
  Erg__Envelope *env = erg__envelope__unpack(NULL, len, buf);
  if (!env) {
    *why = "not a valid protobuf Envelope";
    return NULL;
  }
  const char *bad = NULL;
  if (env->version == 0 || env->version > ERG_WIRE_VERSION)
    bad = "unsupported wire version";
  else if (env->body_case == ERG__ENVELOPE__BODY_HELLO)
    bad = wire_check_hello(env->hello);
  else if (env->body_case == ERG__ENVELOPE__BODY_SAMPLE)
    bad = wire_check_sample(env->sample);
  else
    bad = "envelope without body";
  if (bad) {
    *why = bad;
    erg__envelope__free_unpacked(env, NULL);
    return NULL;
  }
  *why = NULL;
  return env;
}

void erg_wire_free(Erg__Envelope *env) {
  if (env)
    erg__envelope__free_unpacked(env, NULL);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer target: the wire decoder (common/wire.c). Any bytes must give a
 * validated Envelope or NULL with a reason, never a crash or a leak. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *why = NULL;
  Erg__Envelope *env = erg_wire_unpack(data, size, &why);
  if (!env) {
    if (!why)
      abort(); /* a refusal always says why */
    return 0;
  }
  /* What the collector reads of an accepted message. */
  if (env->body_case == ERG__ENVELOPE__BODY_SAMPLE) {
    const Erg__Sample *s = env->sample;
    size_t n = strlen(s->node);
    for (size_t i = 0; i < s->n_procs; i++)
      n += strlen(s->procs[i]->comm) + strlen(s->procs[i]->cgroup);
    if (n == (size_t)-1)
      abort();
  } else if (strlen(env->hello->node) == 0) {
    abort();
  }
  /* Packing an accepted message again must work. */
  uint8_t *buf = NULL;
  size_t len = erg_wire_pack(env, &buf);
  if (!len)
    abort();
  free(buf);
  erg_wire_free(env);
  return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* A name index by open addressing (erg_common.h, "Name index"). */
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"

uint32_t *erg_name_index_slot(const struct erg_name_index *x, const char *name,
                              erg_name_of_fn name_of, const void *entries) {
  if (!x->len)
    return NULL;
  size_t mask = x->len - 1, j = erg_hash_fnv1a(name, strlen(name)) & mask;
  while (x->slot[j] && strcmp(name_of(entries, x->slot[j] - 1), name))
    j = (j + 1) & mask;
  return &x->slot[j];
}

int erg_name_index_rebuild(struct erg_name_index *x, size_t len, erg_name_of_fn name_of,
                           const void *entries, size_t n) {
  uint32_t *slot = calloc(len, sizeof *slot);
  if (!slot)
    return -1;
  free(x->slot);
  *x = (struct erg_name_index){slot, len};
  for (size_t i = 0; i < n; i++)
    *erg_name_index_slot(x, name_of(entries, i), name_of, entries) = (uint32_t)(i + 1);
  return 0;
}

void erg_name_index_free(struct erg_name_index *x) {
  if (!x)
    return;
  free(x->slot);
  *x = (struct erg_name_index){0};
}

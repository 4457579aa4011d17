// SPDX-License-Identifier: GPL-3.0-or-later
/* The table of each process's counters at the last sweep, keyed by
 * (pid, start time): open addressing, rebuilt every sweep. Both collection
 * paths diff against it. */
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"

static size_t table_hash(uint32_t pid, uint64_t start) {
  return (size_t)((pid * 2654435761u) ^ (start * 0x9E3779B97F4A7C15ULL));
}

static int table_alloc(struct proc_table *t, size_t cap) {
  t->slots = calloc(cap, sizeof *t->slots);
  t->split = t->with_split ? calloc(cap, sizeof *t->split) : NULL;
  t->cap = t->slots && (t->split || !t->with_split) ? cap : 0;
  t->used = 0;
  return t->cap ? 0 : -1;
}

void table_free(struct proc_table *t) {
  free(t->slots);
  free(t->split);
  t->slots = NULL;
  t->split = NULL;
  t->cap = t->used = 0;
}

int table_reset(struct proc_table *t, size_t want) {
  size_t cap = 1024;
  while (cap < want * 2)
    cap <<= 1;
  if (cap != t->cap) {
    table_free(t);
    return table_alloc(t, cap);
  }
  memset(t->slots, 0, cap * sizeof *t->slots);
  if (t->split)
    memset(t->split, 0, cap * sizeof *t->split);
  t->used = 0;
  return 0;
}

/* Doubles the table when a burst of new processes fills it mid-sweep. */
static int table_grow(struct proc_table *t) {
  struct proc_table n = {.with_split = t->with_split};
  if (table_alloc(&n, t->cap * 2) != 0) {
    table_free(&n);
    return -1;
  }
  for (size_t i = 0; i < t->cap; i++) {
    const struct proc_prev *o = &t->slots[i];
    if (!o->used)
      continue;
    struct proc_prev *s = table_find(&n, o->pid, o->start_ticks, 1);
    *s = *o;
    if (t->split)
      *table_split(&n, s) = t->split[i];
  }
  table_free(t);
  *t = n;
  return 0;
}

struct proc_prev *table_find(struct proc_table *t, uint32_t pid, uint64_t start, int insert) {
  if (!t->cap)
    return NULL;
  if (insert && (t->used + 1) * 2 > t->cap && table_grow(t) != 0)
    return NULL;
  size_t i = table_hash(pid, start) & (t->cap - 1);
  for (;;) {
    struct proc_prev *s = &t->slots[i];
    if (!s->used) {
      if (!insert)
        return NULL;
      s->used = 1;
      s->pid = pid;
      s->start_ticks = start;
      t->used++;
      return s;
    }
    if (s->pid == pid && s->start_ticks == start)
      return s;
    i = (i + 1) & (t->cap - 1);
  }
}

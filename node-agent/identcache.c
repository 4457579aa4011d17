// SPDX-License-Identifier: GPL-3.0-or-later
/* What /proc/PID/cgroup said of a live process (its cgroup path and the
 * grouping keys of all its hierarchies), kept between sweeps of the eBPF
 * path: a busy process used to cost that read in every sweep. Keyed by
 * (pid, start time), so a reused pid never meets the old process's entry.
 * An entry is used only while the kernel's view of the process is the one
 * it was read under (same cgroup v2 id, uid and name: a cgroup move, a
 * setuid or an exec since means a new read), that view is newer than the
 * read and at most a second old (a process that has not left its CPU
 * since is read again), and for at most IDENT_MAX_AGE_NS after the read
 * (moves the kernel's v2 id does not show, in v1 hierarchies of hybrid
 * hosts, are picked up by then). Bounded: when full, entries past that age
 * go, and what still does not fit is simply read again next time. */
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"

struct ident_cache {
  struct agent_ident *e; /* dense: e[0..n) */
  size_t n, cap, max;
  uint32_t *idx; /* entry index + 1 (0: free), open addressing */
  size_t idx_cap;
};

struct ident_cache *ident_new(size_t max) {
  struct ident_cache *c = calloc(1, sizeof *c);
  if (c)
    c->max = max ? max : IDENT_MAX;
  return c;
}

void ident_free(struct ident_cache *c) {
  if (!c)
    return;
  free(c->e);
  free(c->idx);
  free(c);
}

size_t ident_count(const struct ident_cache *c) { return c ? c->n : 0; }

static size_t ident_home(const struct ident_cache *c, uint32_t pid, uint64_t start) {
  uint64_t h = (pid * 0x9E3779B97F4A7C15ULL) ^ (start * 0xC2B2AE3D27D4EB4FULL);
  return (size_t)(h >> 32) & (c->idx_cap - 1);
}

static size_t ident_probe(const struct ident_cache *c, uint32_t pid, uint64_t start) {
  size_t i = ident_home(c, pid, start);
  for (;;) {
    uint32_t v = c->idx[i];
    if (!v || (c->e[v - 1].pid == pid && c->e[v - 1].start_ns == start))
      return i;
    i = (i + 1) & (c->idx_cap - 1);
  }
}

static int ident_reindex(struct ident_cache *c, size_t cap) {
  size_t n = 16;
  while (n < 2 * cap)
    n <<= 1;
  uint32_t *idx = calloc(n, sizeof *idx);
  if (!idx)
    return -1;
  free(c->idx);
  c->idx = idx;
  c->idx_cap = n;
  for (size_t i = 0; i < c->n; i++)
    c->idx[ident_probe(c, c->e[i].pid, c->e[i].start_ns)] = (uint32_t)i + 1;
  return 0;
}

/* Removes entry i: the last entry takes its place, and the index is
 * rebuilt only as far as linear probing needs (the run after the hole
 * moves back). */
static void ident_remove(struct ident_cache *c, size_t i) {
  size_t mask = c->idx_cap - 1, s = ident_probe(c, c->e[i].pid, c->e[i].start_ns), j = s;
  c->idx[s] = 0;
  for (;;) {
    j = (j + 1) & mask;
    if (!c->idx[j])
      break;
    const struct agent_ident *m = &c->e[c->idx[j] - 1];
    size_t k = ident_home(c, m->pid, m->start_ns);
    if (s <= j ? (k <= s || k > j) : (k <= s && k > j)) {
      c->idx[s] = c->idx[j];
      c->idx[j] = 0;
      s = j;
    }
  }
  size_t last = --c->n;
  if (i != last) {
    c->e[i] = c->e[last];
    c->idx[ident_probe(c, c->e[i].pid, c->e[i].start_ns)] = (uint32_t)i + 1;
  }
}

static int ident_fresh(const struct agent_ident *e, uint64_t now_ns) {
  return now_ns >= e->read_ns && now_ns - e->read_ns < IDENT_MAX_AGE_NS;
}

const struct agent_ident *ident_get(struct ident_cache *c, uint32_t pid, uint64_t start,
                                    const struct agent_ident *kv, uint64_t now_ns) {
  if (!c || !c->n || !kv->cgroup_id)
    return NULL;
  uint32_t v = c->idx[ident_probe(c, pid, start)];
  if (!v)
    return NULL;
  const struct agent_ident *e = &c->e[v - 1];
  if (e->cgroup_id != kv->cgroup_id || e->kuid != kv->kuid ||
      strncmp(e->comm, kv->comm, sizeof e->comm) != 0 || !ident_fresh(e, now_ns))
    return NULL;
  /* The kernel takes its view as the process leaves a CPU: one that has
   * not since the read could have moved unseen. */
  if (kv->read_ns < e->read_ns || kv->read_ns + IDENT_VIEW_MAX_AGE_NS < now_ns)
    return NULL;
  return e;
}

/* Makes room for one more entry: the index grows with the entries; at the
 * bound, entries too old to be used go first. */
static int ident_room(struct ident_cache *c, uint64_t now_ns) {
  if (c->n == c->max)
    for (size_t i = c->n; i-- > 0;)
      if (!ident_fresh(&c->e[i], now_ns))
        ident_remove(c, i);
  if (c->n == c->max)
    return -1;
  if (c->n < c->cap)
    return 0;
  size_t cap = c->cap ? c->cap * 2 : 64;
  cap = cap < c->max ? cap : c->max;
  if (ident_reindex(c, cap) != 0)
    return -1;
  struct agent_ident *e = realloc(c->e, cap * sizeof *e);
  if (!e)
    return -1;
  c->e = e;
  c->cap = cap;
  return 0;
}

void ident_put(struct ident_cache *c, const struct agent_ident *e) {
  if (!c || !e->cgroup_id)
    return;
  uint32_t v = c->idx_cap ? c->idx[ident_probe(c, e->pid, e->start_ns)] : 0;
  if (!v) {
    if (ident_room(c, e->read_ns) != 0)
      return;
    v = (uint32_t)++c->n;
    c->idx[ident_probe(c, e->pid, e->start_ns)] = v;
  }
  c->e[v - 1] = *e;
}

void ident_drop(struct ident_cache *c, uint32_t pid, uint64_t start) {
  if (!c || !c->n)
    return;
  uint32_t v = c->idx[ident_probe(c, pid, start)];
  if (v)
    ident_remove(c, v - 1);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* cgroup v2 id -> path, for processes that are gone before /proc/PID/cgroup
 * can be read (eBPF path). Fed by the kernel's record taken at exit, by live
 * processes' /proc paths and by walks of the cgroup2 tree. A walk merges:
 * a cgroup removed since stays known. Ids are not reused within a boot
 * (kernfs ids carry a generation), so an entry never goes stale; when the
 * cache is full the oldest entry is overwritten. The v1 (freezer) paths of
 * exited processes on hybrid hosts are kept here too: their ids carry
 * ERG_CGV1_BIT, so they never meet a v2 id. Hashed by id. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent_int.h"

static size_t cgcache_home(const struct cgroup_cache *c, uint64_t id) {
  return (size_t)((id * 0x9E3779B97F4A7C15ULL) >> 32) & (c->idx_cap - 1);
}

/* The index slot holding id, or the free slot where it would go. */
static size_t cgcache_probe(const struct cgroup_cache *c, uint64_t id) {
  size_t i = cgcache_home(c, id);
  while (c->idx[i] && c->e[c->idx[i] - 1].id != id)
    i = (i + 1) & (c->idx_cap - 1);
  return i;
}

static long cgcache_index(const struct cgroup_cache *c, uint64_t id) {
  if (!c || !id || !c->idx_cap)
    return -1;
  uint32_t v = c->idx[cgcache_probe(c, id)];
  return v ? (long)v - 1 : -1;
}

const char *cgcache_find(const struct cgroup_cache *c, uint64_t id) {
  long i = cgcache_index(c, id);
  return i < 0 ? NULL : c->e[i].path;
}

/* Removes id from the index (linear probing: the entries after it in its
 * run move back, so no lookup ever stops short at the hole). */
static void cgcache_unindex(struct cgroup_cache *c, uint64_t id) {
  size_t mask = c->idx_cap - 1, i = cgcache_probe(c, id), j = i;
  if (!c->idx[i])
    return;
  for (;;) {
    c->idx[i] = 0;
    for (;;) {
      j = (j + 1) & mask;
      if (!c->idx[j])
        return;
      size_t k = cgcache_home(c, c->e[c->idx[j] - 1].id);
      /* The entry at j may fill the hole at i unless its home lies
       * cyclically in (i, j]. */
      if (i <= j ? (k <= i || k > j) : (k <= i && k > j))
        break;
    }
    c->idx[i] = c->idx[j];
    i = j;
  }
}

/* Rebuilds the index for cap entries (2 * cap slots, a power of two). */
static int cgcache_reindex(struct cgroup_cache *c, size_t cap) {
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
    if (c->e[i].id)
      c->idx[cgcache_probe(c, c->e[i].id)] = (uint32_t)i + 1;
  return 0;
}

static struct cgcache_entry *cgcache_slot(struct cgroup_cache *c) {
  size_t max = c->max ? c->max : AGENT_CGCACHE_MAX;
  if (c->n == max) {
    struct cgcache_entry *e = &c->e[c->oldest];
    c->oldest = (c->oldest + 1) % max;
    cgcache_unindex(c, e->id);
    e->id = 0;
    return e;
  }
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 64;
    cap = cap < max ? cap : max;
    /* The index first: sized for cap, it holds the n entries as well. */
    if (cgcache_reindex(c, cap) != 0)
      return NULL;
    void *e = realloc(c->e, cap * sizeof *c->e);
    if (!e)
      return NULL;
    c->e = e;
    c->cap = cap;
  }
  c->e[c->n].id = 0;
  return &c->e[c->n++];
}

void cgcache_put(struct cgroup_cache *c, uint64_t id, const char *path) {
  if (!c || !id)
    return;
  long i = cgcache_index(c, id);
  struct cgcache_entry *e = i >= 0 ? &c->e[i] : cgcache_slot(c);
  if (!e)
    return;
  erg_strlcpy(e->path, path, sizeof e->path);
  if (i < 0) {
    e->id = id;
    c->idx[cgcache_probe(c, id)] = (uint32_t)(e - c->e) + 1;
  }
}

/* A live process's path is recorded only if the directory there is the
 * cgroup id (the kernel's id may lag a cgroup move by up to 100 ms); one
 * stat per cgroup the cache does not know yet. */
void cgcache_learn(struct cgroup_cache *c, uint64_t id, const char *path) {
  char full[sizeof c->root + AGENT_CGROUP_MAX];
  struct stat st;
  if (!c || !id || !path || path[0] != '/' || cgcache_find(c, id))
    return;
  snprintf(full, sizeof full, "%s%s", c->root, path);
  if (stat(full, &st) == 0 && (uint64_t)st.st_ino == id)
    cgcache_put(c, id, path);
}

static struct cgroup_cache *walk_cache; /* nftw has no user pointer */

static int cgcache_walk_cb(const char *path, const struct stat *st, int type, struct FTW *f) {
  (void)f;
  if (type != FTW_D)
    return 0;
  const char *rel = path + strlen(walk_cache->root);
  if (!cgcache_find(walk_cache, (uint64_t)st->st_ino))
    cgcache_put(walk_cache, (uint64_t)st->st_ino, *rel ? rel : "/");
  return 0;
}

/* Adds every cgroup of the tree (it only runs on a miss, at most once a
 * second). */
void cgcache_walk(struct cgroup_cache *c) {
  walk_cache = c;
  nftw(c->root, cgcache_walk_cb, 16, FTW_PHYS | FTW_MOUNT);
  walk_cache = NULL;
}

void cgcache_free(struct cgroup_cache *c) {
  if (c) {
    free(c->e);
    free(c->idx);
  }
  free(c);
}

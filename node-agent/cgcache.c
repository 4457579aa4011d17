// SPDX-License-Identifier: GPL-3.0-or-later
/* cgroup v2 id -> path, for processes that are gone before /proc/PID/cgroup
 * can be read (eBPF path). Fed by the kernel's record taken at exit, by live
 * processes' /proc paths and by walks of the cgroup2 tree. A walk merges:
 * a cgroup removed since stays known. Ids are not reused within a boot
 * (kernfs ids carry a generation), so an entry never goes stale; when the
 * cache is full the oldest entry is overwritten. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent_int.h"

static long cgcache_index(const struct cgroup_cache *c, uint64_t id) {
  for (size_t i = 0; c && id && i < c->n; i++)
    if (c->e[i].id == id)
      return (long)i;
  return -1;
}

const char *cgcache_find(const struct cgroup_cache *c, uint64_t id) {
  long i = cgcache_index(c, id);
  return i < 0 ? NULL : c->e[i].path;
}

static struct cgcache_entry *cgcache_slot(struct cgroup_cache *c) {
  size_t max = c->max ? c->max : AGENT_CGCACHE_MAX;
  if (c->n == max) {
    struct cgcache_entry *e = &c->e[c->oldest];
    c->oldest = (c->oldest + 1) % max;
    return e;
  }
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 64;
    cap = cap < max ? cap : max;
    void *e = realloc(c->e, cap * sizeof *c->e);
    if (!e)
      return NULL;
    c->e = e;
    c->cap = cap;
  }
  return &c->e[c->n++];
}

void cgcache_put(struct cgroup_cache *c, uint64_t id, const char *path) {
  if (!id)
    return;
  long i = cgcache_index(c, id);
  struct cgcache_entry *e = i >= 0 ? &c->e[i] : cgcache_slot(c);
  if (!e)
    return;
  e->id = id;
  erg_strlcpy(e->path, path, sizeof e->path);
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

/* Adds every cgroup of the tree (the lookups are linear: a walk of a tree
 * of k cgroups costs k * n comparisons; it only runs on a miss, at most
 * once a second). */
void cgcache_walk(struct cgroup_cache *c) {
  walk_cache = c;
  nftw(c->root, cgcache_walk_cb, 16, FTW_PHYS | FTW_MOUNT);
  walk_cache = NULL;
}

void cgcache_free(struct cgroup_cache *c) {
  if (c)
    free(c->e);
  free(c);
}

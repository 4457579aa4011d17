// SPDX-License-Identifier: GPL-3.0-or-later
/* The sample's process entries: their slots, the strings they point at,
 * and a process's identity (uid, rss, cgroup, grouping keys) from
 * proc_root. Shared by both collection paths and the scope. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"

/* rel under proc_root (tests point proc_root at a fake tree). */
int agent_read(struct erg_agent *a, const char *rel, char *buf, size_t len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", a->cfg.proc_root, rel);
  return erg_read_file(path, buf, len) < 0 ? -1 : 0;
}

/* The procs' string fields point into a->strings; when that block moves,
 * every pointer into it moves by the same offset. Offsets are taken as
 * integers before the realloc, so no freed pointer is ever used. */
static void agent_strings_rebase(struct erg_agent *a, uintptr_t old_base, size_t old_len) {
  uintptr_t new_base = (uintptr_t)a->strings;
  for (size_t i = 0; i < a->nprocs; i++) {
    char **f[] = {&a->procs[i].comm, &a->procs[i].cgroup, &a->procs[i].job, &a->procs[i].unit,
                  &a->procs[i].container};
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
      uintptr_t v = (uintptr_t)*f[k];
      if (v >= old_base && v < old_base + old_len)
        *f[k] = (char *)(new_base + (v - old_base));
    }
  }
}

Erg__Proc *agent_proc_slot(struct erg_agent *a) {
  if (a->nprocs == a->procs_cap) {
    size_t cap = a->procs_cap ? a->procs_cap * 2 : 256;
    Erg__Proc *p = realloc(a->procs, cap * sizeof *p);
    if (!p)
      return NULL;
    a->procs = p;
    uintptr_t old_base = (uintptr_t)a->strings;
    size_t old_len = a->procs_cap * sizeof *a->strings;
    struct agent_strings *s = realloc(a->strings, cap * sizeof *s);
    if (!s)
      return NULL;
    a->strings = s;
    agent_strings_rebase(a, old_base, old_len);
    Erg__Proc **pp = realloc(a->proc_ptrs, cap * sizeof *pp);
    if (!pp)
      return NULL;
    a->proc_ptrs = pp;
    a->procs_cap = cap;
  }
  Erg__Proc *p = &a->procs[a->nprocs++];
  erg__proc__init(p);
  return p;
}

uint64_t agent_ticks_to_ns(const struct erg_agent *a, uint64_t t) {
  return t * (ERG_NS_PER_S / (uint64_t)a->ticks_per_s);
}

/* uid and rss of a live process (an exited one's pid may be someone
 * else's by now: 0 for both); its RssShmem into *shmem. */
static void proc_status(struct erg_agent *a, Erg__Proc *p, uint32_t pid, int exited,
                        uint64_t *shmem) {
  char path[64], buf[4096];
  struct erg_proc_status status = {0};
  if (!exited) {
    snprintf(path, sizeof path, "%u/status", pid);
    if (agent_read(a, path, buf, sizeof buf) == 0 && erg_proc_parse_status(buf, &status) == 0)
      p->uid = status.uid;
  }
  p->rss_bytes = status.rss_anon_bytes + status.rss_file_bytes;
  *shmem = status.rss_shmem_bytes;
}

void agent_proc_rss(struct erg_agent *a, Erg__Proc *p, uint32_t pid, uint64_t shmem) {
  char path[64], buf[256];
  struct erg_proc_statm m;
  snprintf(path, sizeof path, "%u/statm", pid);
  if (agent_read(a, path, buf, sizeof buf) != 0 || erg_proc_parse_statm(buf, &m) != 0) {
    p->rss_bytes = 0;
    return;
  }
  uint64_t page = (uint64_t)a->page_bytes, resident = m.resident_pages * page;
  uint64_t anon = (m.resident_pages - m.shared_pages) * page;
  /* RssAnon + RssFile = resident - RssShmem; with an older RssShmem, at
   * least the anonymous part and at most all of it. */
  p->rss_bytes = resident > shmem && resident - shmem > anon ? resident - shmem : anon;
}

/* Points p's key fields at keys (job, unit, container one after the
 * other, NUL-separated) copied into its strings. */
static void proc_set_keys(struct erg_agent *a, Erg__Proc *p, const char *keys) {
  char *k = a->strings[p - a->procs].keys;
  memcpy(k, keys, agent_keys_len(keys));
  p->job = k;
  p->unit = k + strlen(k) + 1;
  p->container = p->unit + strlen(p->unit) + 1;
}

/* uid, rss, cgroup and the grouping keys of slot p. cgroup may be given
 * (scoped: already read; exited: resolved from the kernel's cgroup id) or
 * NULL to read /proc. An exited process's pid may already belong to a new
 * process, so its /proc is not read at all. */
int agent_proc_describe(struct erg_agent *a, Erg__Proc *p, uint32_t pid, const char *cgroup,
                        const char *cgroup_v1, int exited, uint64_t *shmem) {
  char path[64], buf[4096];
  size_t idx = (size_t)(p - a->procs);
  char *cg = a->strings[idx].cgroup;
  uint64_t shmem_bytes;
  proc_status(a, p, pid, exited, shmem ? shmem : &shmem_bytes);
  int have = 0;
  if (!exited) {
    snprintf(path, sizeof path, "%u/cgroup", pid);
    have = agent_read(a, path, buf, sizeof buf) == 0;
  }
  int read = have;
  if (cgroup)
    erg_strlcpy(cg, cgroup, sizeof a->strings[idx].cgroup);
  else if (!have || erg_proc_parse_cgroup(buf, cg, sizeof a->strings[idx].cgroup) != 0)
    cg[0] = '\0';
  p->cgroup = cg;
  /* Keys from every hierarchy: hybrid hosts keep Slurm's job in v1. */
  struct erg_group_keys keys;
  if (!have && cgroup_v1 && cgroup_v1[0]) {
    /* Both paths as /proc/PID/cgroup would have shown them. */
    snprintf(buf, sizeof buf, "0::%s\n1:freezer:%s\n", cg, cgroup_v1);
    have = 1;
  }
  if (have)
    erg_group_keys_from_proc(buf, &keys);
  else
    erg_group_keys_derive(cg, &keys);
  /* The keys share one buffer as large as the three key fields, so all
   * three always fit (a systemd-driver container's unit is ~80 bytes). */
  char packed[sizeof keys];
  size_t jl = strlen(keys.job), ul = strlen(keys.unit), cl = strlen(keys.container);
  memcpy(packed, keys.job, jl + 1);
  memcpy(packed + jl + 1, keys.unit, ul + 1);
  memcpy(packed + jl + 1 + ul + 1, keys.container, cl + 1);
  proc_set_keys(a, p, packed);
  return read;
}

void agent_proc_describe_known(struct erg_agent *a, Erg__Proc *p, const char *cgroup,
                               const char *keys) {
  char *cg = a->strings[p - a->procs].cgroup;
  erg_strlcpy(cg, cgroup, sizeof a->strings[0].cgroup);
  p->cgroup = cg;
  proc_set_keys(a, p, keys);
}

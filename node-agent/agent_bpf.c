/* The eBPF collection path: the kernel accumulates per-process counters
 * (bpf/), each sweep drains them and turns cumulative counts into deltas
 * per (pid, start time). Exited processes arrive once with their final
 * counts, so a process that lived 20 ms between two sweeps is still
 * charged; that is what the /proc path cannot do. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent_int.h"

/* cgroup v2 id (inode of the directory) -> path, for processes that are
 * gone before /proc/PID/cgroup can be read. Rebuilt on a miss. */
struct cgroup_cache {
  char root[256];
  size_t n, cap;
  struct { uint64_t id; char path[128]; } *e;
  uint64_t last_rebuild_ns;
};

static struct cgroup_cache *walk_cache; /* nftw has no user pointer */

static int cgroup_walk_cb(const char *path, const struct stat *st, int type, struct FTW *f) {
  (void)f;
  struct cgroup_cache *c = walk_cache;
  if (type != FTW_D || c->n >= 100000)
    return 0;
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 256;
    void *e = realloc(c->e, cap * sizeof *c->e);
    if (!e)
      return 1;
    c->e = e;
    c->cap = cap;
  }
  const char *rel = path + strlen(c->root);
  c->e[c->n].id = (uint64_t)st->st_ino;
  erg_strlcpy(c->e[c->n].path, *rel ? rel : "/", sizeof c->e[0].path);
  c->n++;
  return 0;
}

static const char *cgroup_lookup(struct erg_agent *a, uint64_t id) {
  struct cgroup_cache *c = a->cgroups;
  if (!c || !id)
    return NULL;
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < c->n; i++)
      if (c->e[i].id == id)
        return c->e[i].path;
    /* Rebuild at most once a second: exits of unknown cgroups are rare. */
    uint64_t now = erg_time_monotonic_ns();
    if (pass || now - c->last_rebuild_ns < ERG_NS_PER_S)
      return NULL;
    c->last_rebuild_ns = now;
    c->n = 0;
    walk_cache = c;
    nftw(c->root, cgroup_walk_cb, 16, FTW_PHYS | FTW_MOUNT);
  }
  return NULL;
}

/* A live process's cgroup from /proc; an exited one's (or one that just
 * exited) from the kernel's cgroup id. */
static const char *bpf_proc_cgroup(struct erg_agent *a, const struct erg_bpf_proc *p, char *buf,
                                   size_t len) {
  if (!p->exited && agent_pid_cgroup(a, p->pid, buf, len) == 0)
    return buf;
  return cgroup_lookup(a, p->cgroup_id);
}

struct bpf_sweep {
  struct erg_agent *a;
  uint64_t sum_cpu_ns;
};

static void bpf_remember(struct proc_prev *e, const struct erg_bpf_proc *p) {
  e->cpu = p->cpu_ns;
  e->read_bytes = p->read_bytes;
  e->write_bytes = p->write_bytes;
  e->wakeups = p->wakeups;
  e->migrations = p->migrations;
  e->cycles = p->cycles;
  e->instructions = p->instructions;
  e->llc_misses = p->llc_misses;
}

#define D(field) (old ? (p->field >= old->field ? p->field - old->field : 0) : p->field)

static void bpf_on_proc(const struct erg_bpf_proc *p, void *user) {
  struct bpf_sweep *sw = user;
  struct erg_agent *a = sw->a;
  /* Scoped: only the subtree's processes are remembered, summed, reported. */
  char cgbuf[128];
  const char *cg = NULL;
  if (a->cfg.scope[0]) {
    cg = bpf_proc_cgroup(a, p, cgbuf, sizeof cgbuf);
    if (!agent_scope_contains(a, cg))
      return;
  }
  /* Exited processes are forgotten after this sweep: no entry for them. */
  struct proc_prev *cur = p->exited ? NULL : table_find(&a->cur, p->pid, p->start_time_ns, 1);
  if (cur)
    bpf_remember(cur, p);
  if (!a->have_prev)
    return;
  const struct proc_prev *old = table_find(&a->prev, p->pid, p->start_time_ns, 0);
  /* A drain can read a running slice's share and, next time, miss a slice
   * that ended between its map read and its per-CPU read: the cumulative
   * CPU time may step back once. Keeping the higher baseline means the
   * time is charged once, when it reappears, never twice. */
  if (cur && old && old->cpu > cur->cpu)
    cur->cpu = old->cpu;
  uint64_t d_cpu = old ? (p->cpu_ns >= old->cpu ? p->cpu_ns - old->cpu : 0) : p->cpu_ns;
  uint64_t d_r = D(read_bytes), d_w = D(write_bytes);
  sw->sum_cpu_ns += d_cpu;
  if (d_cpu == 0 && d_r == 0 && d_w == 0)
    return;
  Erg__Proc *e = agent_proc_slot(a);
  if (!e)
    return;
  char *comm = a->strings[e - a->procs][0];
  erg_strlcpy(comm, p->comm, 17);
  e->pid = p->pid;
  e->start_time_ns = p->start_time_ns;
  e->comm = comm;
  e->cpu_ns = d_cpu;
  e->read_bytes = d_r;
  e->write_bytes = d_w;
  e->wakeups = D(wakeups);
  e->migrations = D(migrations);
  e->cycles = D(cycles);
  e->instructions = D(instructions);
  e->llc_misses = D(llc_misses);
  e->exited = p->exited;
  /* The kernel refreshes a live process's name only now and then; a
   * process that renamed itself right after fork would be charged to its
   * parent's name until then, so live ones take /proc's current name. */
  char path[64], buf[64];
  snprintf(path, sizeof path, "%u/comm", p->pid);
  if (!p->exited && agent_read(a, path, buf, sizeof buf) == 0) {
    buf[strcspn(buf, "\n")] = '\0';
    erg_strlcpy(comm, buf, 17);
  }
  if (!cg && p->exited)
    cg = cgroup_lookup(a, p->cgroup_id);
  agent_proc_describe(a, e, p->pid, cg);
  if (p->exited || !e->uid)
    e->uid = p->uid; /* /proc is gone (or says root): the kernel's view */
}

/* The BPF path's share of a sweep: drain the kernel's counters. */
int agent_bpf_collect(struct erg_agent *a, uint64_t *sum_cpu_ns) {
  struct bpf_sweep sw = {.a = a};
  char why[256];
  if (erg_bpf_drain(a->bpf, bpf_on_proc, &sw, why, sizeof why) < 0) {
    erg_warn("BPF drain: %s", why);
    return -1;
  }
  *sum_cpu_ns = sw.sum_cpu_ns;
  return 0;
}

int agent_bpf_start(struct erg_agent *a, char *why, size_t whylen) {
  struct erg_bpf_opts opts = {0};
  if (erg_bpf_open(&a->bpf, &opts, why, whylen) != 0) {
    a->bpf = NULL;
    return -1;
  }
  a->cgroups = calloc(1, sizeof *a->cgroups);
  if (a->cgroups && agent_cgroup2_root(a->cgroups->root, sizeof a->cgroups->root) != 0) {
    free(a->cgroups);
    a->cgroups = NULL;
  }
  /* The feature set says what this node can measure; absent hardware
   * counters are left out, never sent as zeros. */
  unsigned f = erg_bpf_features(a->bpf);
  size_t n = 0;
  for (unsigned bit = 1; bit <= ERG_BPF_F_ALL && n < 14; bit <<= 1)
    if ((f & bit) && erg_bpf_feature_name(bit))
      a->features[n++] = (char *)erg_bpf_feature_name(bit);
  a->features[n++] = (char *)"rss";
  a->hello.n_features = n;
  a->hello.collection = (char *)"bpf";
  return 0;
}

void agent_bpf_stop(struct erg_agent *a) {
  if (a->bpf)
    erg_bpf_close(a->bpf);
  a->bpf = NULL;
  if (a->cgroups)
    free(a->cgroups->e);
  free(a->cgroups);
  a->cgroups = NULL;
}

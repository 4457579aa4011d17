// SPDX-License-Identifier: GPL-3.0-or-later
/* The eBPF collection path: the kernel accumulates per-process counters
 * (bpf/), each sweep drains them and turns cumulative counts into deltas
 * per (pid, start time). Exited processes arrive once with their final
 * counts, so a process that lived 20 ms between two sweeps is still
 * charged; that is what the /proc path cannot do. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"

/* An exited process's cgroup path from its id: the agent's cache, else the
 * kernel's record taken at exit (the cgroup may be removed by now: a Slurm
 * step, a transient scope), else a walk of the tree, at most once a second
 * (exits from cgroups neither knows are rare). */
static const char *cgroup_lookup(struct erg_agent *a, uint64_t id) {
  struct cgroup_cache *c = a->cgroups;
  char path[AGENT_CGROUP_MAX];
  const char *found = cgcache_find(c, id);
  if (found || !c || !id)
    return found;
  if (erg_bpf_cgroup_path(a->bpf, id, path, sizeof path) == 0) {
    cgcache_put(c, id, path);
    return cgcache_find(c, id);
  }
  uint64_t now = erg_time_monotonic_ns();
  if (now - c->last_walk_ns < ERG_NS_PER_S)
    return NULL;
  c->last_walk_ns = now;
  cgcache_walk(c);
  return cgcache_find(c, id);
}

/* An exited process's v1 (freezer) path on a hybrid host, from its id:
 * the agent's cache, else the kernel's record (one lookup per cgroup, not
 * per exit). NULL when there is none. */
static const char *cgroup_v1_lookup(struct erg_agent *a, uint64_t id, char *buf, size_t len) {
  const char *found = cgcache_find(a->cgroups, id);
  if (found || !id)
    return found;
  if (erg_bpf_cgroup_path(a->bpf, id, buf, len) != 0)
    return NULL;
  cgcache_put(a->cgroups, id, buf);
  return buf;
}

struct bpf_sweep {
  struct erg_agent *a;
  uint64_t sum_cpu_ns;
  uint64_t now_ns; /* CLOCK_MONOTONIC at the drain, for the identity cache */
};

/* What was last read of live process p (identcache.c), if the kernel's
 * view of it (cgroup, uid, name) has not changed since. */
static const struct agent_ident *bpf_known(struct bpf_sweep *sw, const struct erg_bpf_proc *p) {
  struct agent_ident kv = {.cgroup_id = p->cgroup_id, .kuid = p->uid, .read_ns = p->meta_ns};
  if (p->exited)
    return NULL;
  memcpy(kv.comm, p->comm, sizeof kv.comm);
  return ident_get(sw->a->idents, p->pid, p->start_time_ns, &kv, sw->now_ns);
}

/* An identity entry for p with the kernel's view as of this sweep; the
 * caller fills in what it read (cgroup, uid, keys). */
static struct agent_ident bpf_ident(const struct bpf_sweep *sw, const struct erg_bpf_proc *p) {
  struct agent_ident n = {.pid = p->pid,
                          .start_ns = p->start_time_ns,
                          .cgroup_id = p->cgroup_id,
                          .kuid = p->uid,
                          .read_ns = sw->now_ns};
  memcpy(n.comm, p->comm, sizeof n.comm);
  return n;
}

/* A live process's cgroup as last read from /proc while the kernel's view
 * of it is unchanged, else from /proc; an exited one's (or one that just
 * exited) from the kernel's cgroup id. */
static const char *bpf_proc_cgroup(struct bpf_sweep *sw, const struct erg_bpf_proc *p, char *buf,
                                   size_t len) {
  struct erg_agent *a = sw->a;
  const struct agent_ident *known = bpf_known(sw, p);
  if (known)
    return known->cgroup;
  if (!p->exited && agent_pid_cgroup(a, p->pid, buf, len) == 0) {
    cgcache_learn(a->cgroups, p->cgroup_id, buf);
    /* Out of the scope it is never described, so its identity would never
     * be cached: remember its path alone, and the next sweeps skip it
     * without reading /proc until the kernel sees it move (or the entry
     * ages out). */
    if (!agent_scope_contains(a, buf)) {
      struct agent_ident n = bpf_ident(sw, p);
      erg_strlcpy(n.cgroup, buf, sizeof n.cgroup);
      ident_put(a->idents, &n);
    }
    return buf;
  }
  return cgroup_lookup(a, p->cgroup_id);
}

/* The keys of an exited process follow from its cgroup ids alone (their
 * paths never change), so each pair's are worked out once: a burst of
 * short processes mostly shares one. */
static struct agent_exit_keys *exit_keys_slot(struct erg_agent *a, uint64_t id, uint64_t v1) {
  uint64_t h = (id * 0x9E3779B97F4A7C15ULL) ^ (v1 * 0xC2B2AE3D27D4EB4FULL);
  return &a->exit_keys[(h >> 32) % AGENT_EXIT_KEYS];
}

/* uid, rss, cgroup and keys of a reported process: from the caches where
 * they hold it (a live process's identity, an exited one's keys), else
 * from /proc and the kernel's paths, then remembered. */
static void bpf_describe(struct bpf_sweep *sw, Erg__Proc *e, const struct erg_bpf_proc *p,
                         const char *cg) {
  struct erg_agent *a = sw->a;
  if (!p->exited) {
    const struct agent_ident *known = bpf_known(sw, p);
    /* Scoped, cg was looked up first: the cache is used only if it agrees. */
    if (known && (!cg || !strcmp(cg, known->cgroup))) {
      agent_proc_describe_known(a, e, known->cgroup, known->keys);
      e->uid = known->uid;
      /* A kernel thread has no memory of its own: its statm is all zeros
       * (kworkers, ksoftirqd, rcu: a quarter of the statm reads per sweep
       * under churn). */
      if (p->kthread)
        e->rss_bytes = 0;
      else
        agent_proc_rss(a, e, p->pid, known->shmem);
      return;
    }
    struct agent_ident n = bpf_ident(sw, p);
    if (!agent_proc_describe(a, e, p->pid, cg, NULL, 0, &n.shmem))
      return;
    n.uid = e->uid;
    erg_strlcpy(n.cgroup, e->cgroup, sizeof n.cgroup);
    memcpy(n.keys, e->job, agent_keys_len(e->job));
    ident_put(a->idents, &n);
    return;
  }
  if (!cg)
    cg = cgroup_lookup(a, p->cgroup_id);
  /* Hybrid hosts: the job of a process that exited unseen is in its v1
   * path, which the kernel recorded at the exit. */
  char v1[AGENT_CGROUP_MAX];
  const char *cg_v1 = cgroup_v1_lookup(a, p->cgroup_v1_id, v1, sizeof v1);
  /* Only keys that came from both paths are remembered: a path not found
   * now may be found later (a walk of the tree). */
  int memo = cg && p->cgroup_id && (!p->cgroup_v1_id || cg_v1);
  struct agent_exit_keys *k = memo ? exit_keys_slot(a, p->cgroup_id, p->cgroup_v1_id) : NULL;
  if (k && k->id == p->cgroup_id && k->v1 == p->cgroup_v1_id) {
    agent_proc_describe_known(a, e, cg, k->keys);
    return;
  }
  agent_proc_describe(a, e, p->pid, cg, cg_v1, 1, NULL);
  if (k) {
    k->id = p->cgroup_id;
    k->v1 = p->cgroup_v1_id;
    memcpy(k->keys, e->job, agent_keys_len(e->job));
  }
}

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

static uint64_t split_freq_old(const struct proc_split *old, uint32_t khz) {
  for (int i = 0; old && i < ERG_BPF_MAX_FREQ; i++)
    if (old->khz[i] == khz)
      return old->freq_ns[i];
  return 0;
}

static uint64_t max_u64(uint64_t x, uint64_t y) { return x > y ? x : y; }

/* As for cpu_ns (see bpf_on_proc): a baseline never goes down. */
static void split_remember(struct proc_split *s, const struct erg_bpf_proc *p,
                           const struct proc_split *old) {
  memset(s, 0, sizeof *s);
  for (uint32_t i = 0; i < p->nfreq && i < ERG_BPF_MAX_FREQ; i++) {
    s->khz[i] = p->freq[i].khz;
    s->freq_ns[i] = p->freq[i].cpu_ns;
  }
  s->freq_other_ns = p->freq_other_ns;
  memcpy(s->cap_ns, p->cap_ns, sizeof s->cap_ns);
  s->capacity_weighted_ns = p->capacity_weighted_ns;
  if (!old)
    return;
  for (int i = 0; i < ERG_BPF_MAX_FREQ; i++)
    s->freq_ns[i] = max_u64(s->freq_ns[i], split_freq_old(old, s->khz[i]));
  s->freq_other_ns = max_u64(s->freq_other_ns, old->freq_other_ns);
  for (int i = 0; i < ERG_BPF_MAX_CAP; i++)
    s->cap_ns[i] = max_u64(s->cap_ns[i], old->cap_ns[i]);
  s->capacity_weighted_ns = max_u64(s->capacity_weighted_ns, old->capacity_weighted_ns);
}

static void extra_freq_add(struct proc_extra *x, uint32_t khz, uint64_t now, uint64_t then) {
  if (now <= then)
    return;
  erg__freq_time__init(&x->freq[x->n_freq]);
  x->freq[x->n_freq].khz = khz;
  x->freq[x->n_freq++].cpu_ns = now - then;
}

/* The interval's time per frequency and per core capacity; only entries
 * that grew are sent, so a node without the features sends none. */
static void split_deltas(struct erg_agent *a, struct proc_extra *x, const struct erg_bpf_proc *p,
                         const struct proc_split *old) {
  memset(x, 0, sizeof *x);
  for (uint32_t i = 0; i < p->nfreq && i < ERG_BPF_MAX_FREQ; i++)
    extra_freq_add(x, p->freq[i].khz, p->freq[i].cpu_ns, split_freq_old(old, p->freq[i].khz));
  extra_freq_add(x, 0, p->freq_other_ns, old ? old->freq_other_ns : 0);
  for (int i = 0; i < a->ncap_classes; i++) {
    uint64_t then = old ? old->cap_ns[i] : 0;
    if (p->cap_ns[i] <= then)
      continue;
    erg__capacity_time__init(&x->cap[x->n_cap]);
    x->cap[x->n_cap].capacity = a->cap_classes[i];
    x->cap[x->n_cap++].cpu_ns = p->cap_ns[i] - then;
  }
  uint64_t w0 = old ? old->capacity_weighted_ns : 0;
  x->capacity_weighted_ns = p->capacity_weighted_ns > w0 ? p->capacity_weighted_ns - w0 : 0;
}

/* Slot e's split storage; the array grows with the procs array. */
static struct proc_extra *extra_slot(struct erg_agent *a, const Erg__Proc *e) {
  size_t i = (size_t)(e - a->procs);
  if (i >= a->extra_cap) {
    size_t cap = a->procs_cap > i ? a->procs_cap : i + 1;
    struct proc_extra *x = realloc(a->extra, cap * sizeof *x);
    if (!x)
      return NULL;
    memset(x + a->extra_cap, 0, (cap - a->extra_cap) * sizeof *x);
    a->extra = x;
    a->extra_cap = cap;
  }
  return &a->extra[i];
}

/* Points each reported process at its split entries, once the sweep's
 * arrays no longer move. */
static void extra_link(struct erg_agent *a) {
  for (size_t i = 0; a->cur.with_split && i < a->nprocs && i < a->extra_cap; i++) {
    struct proc_extra *x = &a->extra[i];
    Erg__Proc *e = &a->procs[i];
    for (size_t k = 0; k < x->n_freq; k++)
      x->freq_ptrs[k] = &x->freq[k];
    for (size_t k = 0; k < x->n_cap; k++)
      x->cap_ptrs[k] = &x->cap[k];
    e->n_freq = x->n_freq;
    e->freq = x->n_freq ? x->freq_ptrs : NULL;
    e->n_capacity = x->n_cap;
    e->capacity = x->n_cap ? x->cap_ptrs : NULL;
    e->capacity_weighted_ns = x->capacity_weighted_ns;
  }
}

static void bpf_on_proc(const struct erg_bpf_proc *p, void *user) {
  struct bpf_sweep *sw = user;
  struct erg_agent *a = sw->a;
  if (p->exited) /* its identity is not needed again */
    ident_drop(a->idents, p->pid, p->start_time_ns);
  /* Scoped: only the subtree's processes are remembered, summed, reported. */
  char cgbuf[AGENT_CGROUP_MAX];
  const char *cg = NULL;
  if (a->cfg.scope[0]) {
    cg = bpf_proc_cgroup(sw, p, cgbuf, sizeof cgbuf);
    if (!agent_scope_contains(a, cg))
      return;
  }
  /* Exited processes are forgotten after this sweep: no entry for them. */
  struct proc_prev *cur = p->exited ? NULL : table_find(&a->cur, p->pid, p->start_time_ns, 1);
  const struct proc_prev *old = table_find(&a->prev, p->pid, p->start_time_ns, 0);
  if (cur) {
    bpf_remember(cur, p);
    if (table_split(&a->cur, cur))
      split_remember(table_split(&a->cur, cur), p, table_split(&a->prev, old));
  }
  if (!a->have_prev)
    return;
  /* The drain's CPU time only steps back when it could not read a group's
   * running slices consistently (erg_bpf_stats.unsettled, rare): keeping the
   * higher baseline then charges that time once, when it reappears. */
  if (cur && old && old->cpu > cur->cpu)
    cur->cpu = old->cpu;
  uint64_t d_cpu = AGENT_DELTA(p->cpu_ns, old, cpu);
  uint64_t d_r = AGENT_DELTA(p->read_bytes, old, read_bytes);
  uint64_t d_w = AGENT_DELTA(p->write_bytes, old, write_bytes);
  sw->sum_cpu_ns += d_cpu;
  if (d_cpu == 0 && d_r == 0 && d_w == 0)
    return;
  Erg__Proc *e = agent_proc_slot(a);
  if (!e)
    return;
  char *comm = a->strings[e - a->procs].comm;
  erg_strlcpy(comm, p->comm, 17);
  e->pid = p->pid;
  e->start_time_ns = p->start_time_ns;
  e->comm = comm;
  e->cpu_ns = d_cpu;
  e->read_bytes = d_r;
  e->write_bytes = d_w;
  e->wakeups = AGENT_DELTA(p->wakeups, old, wakeups);
  e->migrations = AGENT_DELTA(p->migrations, old, migrations);
  e->cycles = AGENT_DELTA(p->cycles, old, cycles);
  e->instructions = AGENT_DELTA(p->instructions, old, instructions);
  e->llc_misses = AGENT_DELTA(p->llc_misses, old, llc_misses);
  e->exited = p->exited;
  if (a->cur.with_split) {
    struct proc_extra *x = extra_slot(a, e);
    if (x)
      split_deltas(a, x, p, table_split(&a->prev, old));
  }
  /* Without the task_rename program the kernel refreshes a live process's
   * name only now and then; a process that renamed itself right after fork
   * would be charged to its parent's name until then, so live ones take
   * /proc's current name. With it the kernel's name is current, and the
   * read (one open per active process per sweep) is saved. */
  if (!p->exited && !a->bpf_names_current) {
    char path[64], buf[64];
    snprintf(path, sizeof path, "%u/comm", p->pid);
    if (agent_read(a, path, buf, sizeof buf) == 0) {
      buf[strcspn(buf, "\n")] = '\0';
      erg_strlcpy(comm, buf, 17);
    }
  }
  bpf_describe(sw, e, p, cg);
  /* A cgroup seen while alive stays known after it is removed. */
  if (!p->exited && !cg)
    cgcache_learn(a->cgroups, p->cgroup_id, e->cgroup);
  if (p->exited || !e->uid)
    e->uid = p->uid; /* /proc is gone (or says root): the kernel's view */
}

/* The BPF path's share of a sweep: drain the kernel's counters. */
int agent_bpf_collect(struct erg_agent *a, uint64_t *sum_cpu_ns, char *why, size_t whylen) {
  struct bpf_sweep sw = {.a = a, .now_ns = erg_time_monotonic_ns()};
  char dwhy[256];
  if (erg_bpf_drain(a->bpf, bpf_on_proc, &sw, dwhy, sizeof dwhy) < 0) {
    snprintf(why, whylen, "BPF drain: %s", dwhy);
    return -1;
  }
  extra_link(a);
  *sum_cpu_ns = sw.sum_cpu_ns;
  return 0;
}

static uint64_t grew(uint64_t now, uint64_t then) { return now > then ? now - then : 0; }

/* Sent as deltas, summed by the collector like dropped_samples. A full
 * process map means processes go uncounted: noted once for the caller's
 * log too (erg_agent_map_full). */
void agent_bpf_health(struct erg_agent *a, Erg__Sample *s) {
  struct erg_bpf_stats st, *o = &a->bpf_prev;
  erg_bpf_stats(a->bpf, &st);
  if (st.map_full_drops && !a->map_full_noted) {
    a->map_full_noted = 1;
    a->map_full_news = st.map_full_drops;
  }
  if (s) {
    Erg__BpfHealth *h = &a->bpf_health;
    erg__bpf_health__init(h);
    h->map_full_drops = grew(st.map_full_drops, o->map_full_drops);
    h->lost_exit_ns = grew(st.lost_exit_ns, o->lost_exit_ns);
    h->unseen_switches = grew(st.unseen_switches, o->unseen_switches);
    h->unsettled = grew(st.unsettled, o->unsettled);
    s->bpf = h;
  }
  *o = st;
}

/* Node totals at the drain's cut: read before the drain, the time the agent
 * was held up between the two (preempted on a busy node) fell in one
 * interval's busy time and in the next one's processes, and after the
 * records' callbacks (which read /proc per process) the other way round;
 * Σ processes then exceeded busy by up to that time. */
static void bpf_at_cut(void *user) { agent_sweep_totals(user); }

int agent_bpf_start(struct erg_agent *a, char *why, size_t whylen) {
  struct erg_bpf_opts opts = {.sysfs_cpu_root =
                                  a->cfg.sysfs_cpu_root[0] ? a->cfg.sysfs_cpu_root : NULL};
  if (erg_bpf_open(&a->bpf, &opts, why, whylen) != 0) {
    a->bpf = NULL;
    return -1;
  }
  erg_bpf_set_cut_cb(a->bpf, bpf_at_cut, a);
  a->bpf_names_current = erg_bpf_names_current(a->bpf);
  a->idents = ident_new(0); /* NULL: no cache, /proc is read every time */
  a->exit_keys = calloc(AGENT_EXIT_KEYS, sizeof *a->exit_keys);
  a->cgroups = calloc(1, sizeof *a->cgroups);
  if (a->cgroups && agent_cgroup2_root(a->cgroups->root, sizeof a->cgroups->root) != 0) {
    free(a->cgroups);
    a->cgroups = NULL;
  }
  /* The feature set says what this node can measure; absent hardware
   * counters are left out, never sent as zeros. */
  unsigned f = erg_bpf_features(a->bpf);
  a->ncap_classes = erg_bpf_capacity_classes(a->bpf, a->cap_classes);
  a->prev.with_split = a->cur.with_split = (f & (ERG_BPF_F_FREQ | ERG_BPF_F_CAPACITY)) != 0;
  size_t n = 0;
  for (unsigned bit = 1; bit <= ERG_BPF_F_ALL && n < 14; bit <<= 1)
    if ((f & bit) && erg_bpf_feature_name(bit))
      a->features[n++] = (char *)erg_bpf_feature_name(bit);
  a->features[n++] = (char *)"rss";
  a->hello.n_features = n;
  a->hello.collection = (char *)"bpf";
  /* The features off and the repair clock's absence are the caller's to
   * say (erg_agent_feature_off, erg_agent_heal_off). */
  return 0;
}

const char *erg_agent_heal_off(const struct erg_agent *a) {
  return a && a->bpf ? erg_bpf_heal_reason(a->bpf) : NULL;
}

const char *erg_agent_thread_records_off(const struct erg_agent *a) {
  return a && a->bpf ? erg_bpf_thread_records_reason(a->bpf) : NULL;
}

uint64_t erg_agent_map_full(struct erg_agent *a) {
  uint64_t n = a ? a->map_full_news : 0;
  if (a)
    a->map_full_news = 0;
  return n;
}

const char *erg_agent_feature_off(const struct erg_agent *a, size_t i, const char **why) {
  unsigned f = a && a->bpf ? erg_bpf_features(a->bpf) : ERG_BPF_F_ALL;
  for (unsigned bit = 1; bit <= ERG_BPF_F_ALL; bit <<= 1) {
    if ((f & bit) || !erg_bpf_feature_name(bit) || i--)
      continue;
    *why = erg_bpf_feature_reason(a->bpf, bit);
    if (!*why)
      *why = "absent";
    return erg_bpf_feature_name(bit);
  }
  return NULL;
}

void agent_bpf_stop(struct erg_agent *a) {
  if (a->bpf)
    erg_bpf_close(a->bpf);
  a->bpf = NULL;
  cgcache_free(a->cgroups);
  a->cgroups = NULL;
  ident_free(a->idents);
  a->idents = NULL;
  free(a->exit_keys);
  a->exit_keys = NULL;
}

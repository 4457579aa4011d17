// SPDX-License-Identifier: GPL-3.0-or-later
/* The agent: open and close, the /proc collection path, and one sweep per
 * interval on either path, deltas per (pid, start time) against the
 * previous sweep, assembled into a sample. The process table, process
 * entries, node totals, scope and the eBPF path sit below it in their own
 * files (proctable.c, agent_procs.c, totals.c, scope.c, agent_bpf.c) and
 * never call back here. */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_int.h"

int erg_agent_open(struct erg_agent **out, const struct erg_agent_config *cfg, char *why,
                   size_t whylen) {
  struct erg_agent *a = calloc(1, sizeof *a);
  if (!a) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  a->cfg = *cfg;
  a->users = agent_users_new(); /* NULL: uids only, as an older agent */
  a->ticks_per_s = sysconf(_SC_CLK_TCK);
  a->page_bytes = sysconf(_SC_PAGESIZE);
  char buf[64];
  if (agent_read(a, "sys/kernel/random/boot_id", buf, sizeof buf) == 0)
    buf[strcspn(buf, "\n")] = '\0';
  else
    strcpy(buf, "unknown");
  erg_strlcpy(a->boot_id, buf, sizeof a->boot_id);
  char stat[256];
  if (agent_read(a, "stat", stat, sizeof stat) != 0) {
    snprintf(why, whylen, "cannot read %s/stat", cfg->proc_root);
    agent_users_free(a->users);
    free(a);
    return -1;
  }
  erg__hello__init(&a->hello);
  a->hello.node = a->cfg.node;
  a->hello.agent_version = (char *)ERG_VERSION;
  a->hello.boot_id = a->boot_id;
  a->hello.collection = (char *)"proc";
  static const char *feats[] = {"cpu_time", "rss", "io"};
  for (int i = 0; i < 3; i++)
    a->features[i] = (char *)feats[i];
  a->hello.features = a->features;
  a->hello.n_features = 3;
  a->hello.agent_pid = (uint32_t)getpid();
  a->hello.agent_start_realtime_ns = erg_time_realtime_ns();
  a->hello.ncpu = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
  if (agent_scope_open(a, why, whylen) != 0) {
    agent_users_free(a->users);
    free(a);
    return -1;
  }
  if (strcmp(cfg->collection, "proc") != 0) {
    char bwhy[256];
    if (agent_bpf_start(a, bwhy, sizeof bwhy) != 0) {
      if (!strcmp(cfg->collection, "bpf")) {
        snprintf(why, whylen, "collection = bpf, but BPF is unavailable: %s", bwhy);
        agent_users_free(a->users);
        free(a);
        return -1;
      }
      /* The one line an operator needs to see when nodes fall back: the
       * caller's to say (erg_agent_bpf_unavailable). */
      erg_strlcpy(a->bpf_unavailable, bwhy, sizeof a->bpf_unavailable);
    }
  }
  if (agent_gpu_open(&a->gpu, cfg, a->features, &a->hello.n_features,
                     sizeof a->features / sizeof a->features[0], &a->gpu_notes, why, whylen) != 0) {
    erg_agent_close(a);
    return -1;
  }
  *out = a;
  return 0;
}

const Erg__Hello *erg_agent_hello(struct erg_agent *a) { return &a->hello; }

const char *erg_agent_bpf_unavailable(const struct erg_agent *a) {
  return a && a->bpf_unavailable[0] ? a->bpf_unavailable : NULL;
}

const char *erg_agent_gpu_note(const struct erg_agent *a, size_t i, int *level) {
  if (!a || i >= a->gpu_notes.n)
    return NULL;
  *level = a->gpu_notes.level[i];
  return a->gpu_notes.text[i];
}

const char *erg_agent_gpu_stopped(struct erg_agent *a) {
  if (!a || !a->gpu_stopped[0] || a->gpu_stopped_said)
    return NULL;
  a->gpu_stopped_said = 1;
  return a->gpu_stopped;
}

int erg_agent_hello_changed(struct erg_agent *a) {
  int c = a->hello_changed;
  a->hello_changed = 0;
  return c;
}

/* Reads one process; fills the current table and, when there is a
 * previous sweep, appends its delta to the sample. */
static void agent_sweep_pid(struct erg_agent *a, const char *pidname, uint64_t *sum_cpu_ns) {
  char path[128], buf[4096];
  snprintf(path, sizeof path, "%s/stat", pidname);
  struct erg_proc_stat st;
  /* A process may vanish between readdir and read: skip it silently. */
  if (agent_read(a, path, buf, sizeof buf) != 0 || erg_proc_parse_stat(buf, &st) != 0)
    return;
  /* Scoped: processes elsewhere are neither reported nor summed. A process
   * may move between cgroups, so membership is read every sweep. */
  char cg[AGENT_CGROUP_MAX];
  const char *cgp = NULL;
  if (a->cfg.scope[0]) {
    agent_pid_cgroup(a, st.pid, cg, sizeof cg);
    if (!agent_scope_contains(a, cg))
      return;
    cgp = cg;
  }
  uint64_t cpu = st.utime_ticks + st.stime_ticks;
  struct erg_proc_io io = {0};
  snprintf(path, sizeof path, "%s/io", pidname);
  if (agent_read(a, path, buf, sizeof buf) == 0)
    erg_proc_parse_io(buf, &io);
  struct proc_prev *cur = table_find(&a->cur, st.pid, st.starttime_ticks, 1);
  if (cur) {
    cur->cpu = cpu;
    cur->read_bytes = io.read_bytes;
    cur->write_bytes = io.write_bytes;
  }
  if (!a->have_prev)
    return;
  struct proc_prev *old = table_find(&a->prev, st.pid, st.starttime_ticks, 0);
  uint64_t d_cpu = AGENT_DELTA(cpu, old, cpu);
  uint64_t d_r = AGENT_DELTA(io.read_bytes, old, read_bytes);
  uint64_t d_w = AGENT_DELTA(io.write_bytes, old, write_bytes);
  *sum_cpu_ns += agent_ticks_to_ns(a, d_cpu);
  /* Idle processes are left out of the sample: they carry no energy. */
  if (d_cpu == 0 && d_r == 0 && d_w == 0)
    return;
  Erg__Proc *p = agent_proc_slot(a);
  if (!p)
    return;
  char *comm = a->strings[p - a->procs].comm;
  erg_strlcpy(comm, st.comm, sizeof a->strings[0].comm);
  p->pid = st.pid;
  p->start_time_ns = agent_ticks_to_ns(a, st.starttime_ticks);
  p->comm = comm;
  p->cpu_ns = agent_ticks_to_ns(a, d_cpu);
  p->read_bytes = d_r;
  p->write_bytes = d_w;
  agent_proc_describe(a, p, st.pid, cgp, NULL, 0, NULL);
}

/* The busy time between the sub-samples read since the last sweep: the
 * slices from the last sweep's counter through them to this one's (none
 * when the counter went back, e.g. the scope's cgroup was remade). */
static void agent_fill_slices(struct erg_agent *a, uint64_t mono,
                              const struct erg_cpu_totals *cpu) {
  size_t n = 0;
  uint64_t t = a->mono_prev, c = agent_busy_counter_ns(a, &a->cpu_prev);
  int ok = !a->sub_bad;
  for (size_t i = 0; ok && i <= a->nsub; i++) {
    uint64_t ti = i < a->nsub ? a->sub_mono[i] : mono;
    uint64_t ci = i < a->nsub ? a->sub_busy[i] : agent_busy_counter_ns(a, cpu);
    if (i < a->nsub && (ti <= t || ti >= mono))
      continue; /* not within the interval */
    ok = ci >= c;
    a->slice_end[n] = ti - a->mono_prev;
    a->slice_busy[n++] = ci - c;
    t = ti;
    c = ci;
  }
  if (ok && n > 1) {
    a->totals.n_cpu_busy_slice_ns = a->totals.n_busy_slice_end_ns = n;
    a->totals.cpu_busy_slice_ns = a->slice_busy;
    a->totals.busy_slice_end_ns = a->slice_end;
  }
}

/* The sample's interval, totals and process list (from the second sweep
 * on). */
static void agent_fill_sample(struct erg_agent *a, uint64_t rt, uint64_t mono,
                              const struct erg_cpu_totals *cpu, uint64_t mem, uint64_t rx,
                              uint64_t tx, uint64_t sum_cpu_ns) {
  Erg__Sample *s = &a->sample;
  erg__sample__init(s);
  erg__interval__init(&a->interval);
  erg__node_totals__init(&a->totals);
  a->interval.realtime_start_ns = a->rt_prev;
  a->interval.realtime_end_ns = rt;
  a->interval.monotonic_start_ns = a->mono_prev;
  a->interval.monotonic_end_ns = mono;
  uint64_t busy_ns = agent_ticks_to_ns(a, cpu->busy_ticks - a->cpu_prev.busy_ticks);
  uint64_t idle_ns = agent_ticks_to_ns(a, cpu->idle_ticks - a->cpu_prev.idle_ticks);
  if (a->cfg.scope[0]) {
    /* The subtree is the node: its CPU is busy, the rest of the machine's
     * capacity over the interval counts as idle. */
    uint64_t cap = (mono - a->mono_prev) * cpu->ncpu;
    busy_ns = cpu->scope_busy_ns > a->cpu_prev.scope_busy_ns
                  ? cpu->scope_busy_ns - a->cpu_prev.scope_busy_ns
                  : 0;
    idle_ns = cap > busy_ns ? cap - busy_ns : 0;
  }
  a->totals.cpu_busy_ns = busy_ns;
  a->totals.cpu_idle_ns = idle_ns;
  a->totals.mem_used_bytes = mem;
  a->totals.disk_read_bytes = a->disk_cur_r >= a->disk_prev_r ? a->disk_cur_r - a->disk_prev_r : 0;
  a->totals.disk_write_bytes = a->disk_cur_w >= a->disk_prev_w ? a->disk_cur_w - a->disk_prev_w : 0;
  a->totals.net_rx_bytes = rx - a->net_prev_rx;
  a->totals.net_tx_bytes = tx - a->net_prev_tx;
  a->totals.ncpu = cpu->ncpu;
  s->node = a->cfg.node;
  s->seq = ++a->seq;
  s->boot_id = a->boot_id;
  s->interval = &a->interval;
  s->totals = &a->totals;
  for (size_t i = 0; i < a->nprocs; i++)
    a->proc_ptrs[i] = &a->procs[i];
  s->procs = a->proc_ptrs;
  s->n_procs = a->nprocs;
  /* Kernel threads are in the sweep too, so what is left is IRQ time and
   * processes that came and went between sweeps. */
  s->system_cpu_ns = busy_ns > sum_cpu_ns ? busy_ns - sum_cpu_ns : 0;
  agent_fill_slices(a, mono, cpu);
  s->collection = a->hello.collection;
  if (a->users)
    agent_users_fill(a->users, s, mono);
}

/* This sweep becomes the baseline of the next. */
static void agent_advance(struct erg_agent *a, uint64_t rt, uint64_t mono,
                          const struct erg_cpu_totals *cpu, uint64_t rx, uint64_t tx) {
  struct proc_table t = a->prev;
  a->prev = a->cur;
  a->cur = t;
  a->cpu_prev = *cpu;
  a->disk_prev_r = a->disk_cur_r;
  a->disk_prev_w = a->disk_cur_w;
  a->net_prev_rx = rx;
  a->net_prev_tx = tx;
  a->rt_prev = rt;
  a->mono_prev = mono;
  a->have_prev = 1;
  a->nsub = 0;
  a->sub_bad = 0;
}

/* The /proc path's share of a sweep: every process under proc_root. */
static int agent_proc_collect(struct erg_agent *a, uint64_t *sum_cpu_ns, char *why, size_t whylen) {
  DIR *d = opendir(a->cfg.proc_root);
  if (!d) {
    snprintf(why, whylen, "cannot open %s: %s", a->cfg.proc_root, strerror(errno));
    return -1;
  }
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] < '1' || de->d_name[0] > '9')
      continue;
    agent_sweep_pid(a, de->d_name, sum_cpu_ns);
  }
  closedir(d);
  return 0;
}
/* ---- GPUs (agent_gpu.c, docs/gpu.md) ---- */
/* A process using a GPU that the sweep left out (idle on the CPU): its
 * entry, with its identity and no CPU. */
static void agent_gpu_proc(struct erg_agent *a, uint32_t pid) {
  char path[64], buf[4096], cg[AGENT_CGROUP_MAX];
  struct erg_proc_stat st;
  snprintf(path, sizeof path, "%u/stat", pid);
  if (agent_read(a, path, buf, sizeof buf) != 0 || erg_proc_parse_stat(buf, &st) != 0)
    return;
  if (a->cfg.scope[0]) { /* scoped: its subtree only */
    agent_pid_cgroup(a, pid, cg, sizeof cg);
    if (!agent_scope_contains(a, cg))
      return;
  }
  Erg__Proc *p = agent_proc_slot(a);
  if (!p)
    return;
  p->comm = a->strings[p - a->procs].comm;
  erg_strlcpy(p->comm, st.comm, sizeof a->strings[0].comm);
  p->pid = pid;
  p->start_time_ns = agent_ticks_to_ns(a, st.starttime_ticks);
  agent_proc_describe(a, p, pid, a->cfg.scope[0] ? cg : NULL, NULL, 0, NULL);
}

/* The GPUs' readings, and their processes into the sample. GPUs that fail
 * leave the hello (a->hello_changed) and the samples. */
static void agent_sweep_gpus(struct erg_agent *a, int ready) {
  if (a->gpu && agent_gpu_read(a->gpu, ready, a->features, &a->hello.n_features, a->gpu_stopped,
                               sizeof a->gpu_stopped) != 0) {
    agent_gpu_close(a->gpu);
    a->gpu = NULL;
    a->hello_changed = 1;
  }
  const uint32_t *pids;
  size_t n = a->gpu && ready ? agent_gpu_missing(a->gpu, a->procs, a->nprocs, &pids) : 0;
  for (size_t i = 0; i < n; i++)
    agent_gpu_proc(a, pids[i]);
}

/* One sweep on either path: node totals and per-process deltas, then the
 * sample (from the second sweep on) and the new baseline. */
int erg_agent_sweep(struct erg_agent *a, const Erg__Sample **out, char *why, size_t whylen) {
  uint64_t rt = erg_time_realtime_ns(), mono = erg_time_monotonic_ns();
  uint64_t sum_cpu_ns = 0;
  if (table_reset(&a->cur, a->prev.used + 64) != 0) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  a->nprocs = 0;
  /* /proc: totals first, as ever (processes are read all through the
   * sweep). eBPF: the drain reads them at its cut (agent_bpf_start). */
  a->tot.have = 0;
  if (!a->bpf)
    agent_sweep_totals(a);
  int rc = a->bpf ? agent_bpf_collect(a, &sum_cpu_ns, why, whylen)
                  : agent_proc_collect(a, &sum_cpu_ns, why, whylen);
  if (rc != 0)
    return -1;
  if (!a->tot.have)
    agent_sweep_totals(a);
  const struct erg_cpu_totals cpu = a->tot.cpu;
  uint64_t mem = a->tot.mem, rx = a->tot.rx, tx = a->tot.tx;
  /* The eBPF counters run up to the drain's cut, which comes after the
   * stamps above by however long the agent was held up (preempted on a
   * busy node): the interval ends there, or a busy process would show
   * more CPU than its interval's wall time. */
  uint64_t cut = a->bpf ? erg_bpf_drain_time_ns(a->bpf) : 0;
  if (cut > mono) {
    rt += cut - mono;
    mono = cut;
  }
  int ready = a->have_prev;
  agent_sweep_gpus(a, ready);
  if (ready) {
    agent_fill_sample(a, rt, mono, &cpu, mem, rx, tx, sum_cpu_ns);
    if (a->gpu)
      agent_gpu_attach(a->gpu, &a->sample, a->procs, a->nprocs);
  }
  if (a->bpf)
    agent_bpf_health(a, ready ? &a->sample : NULL);
  agent_advance(a, rt, mono, &cpu, rx, tx);
  if (ready)
    *out = &a->sample;
  return ready;
}

void erg_agent_close(struct erg_agent *a) {
  if (!a)
    return;
  agent_bpf_stop(a);
  agent_kept_close(a);
  agent_gpu_close(a->gpu);
  table_free(&a->prev);
  table_free(&a->cur);
  free(a->extra);
  free(a->procs);
  free(a->proc_ptrs);
  free(a->strings);
  agent_users_free(a->users);
  free(a);
}

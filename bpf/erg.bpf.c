// SPDX-License-Identifier: GPL-2.0-or-later
/* erg per-task-group accounting. Only BTF tracepoints (tp_btf), CO-RE reads,
 * nothing architecture specific: the same object loads on x86-64 and arm64. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "erg_bpf_shared.h"

/* The licence the kernel is told. The rest of erg is GPL-3.0-or-later
 * (LICENSE); this program and erg_bpf_shared.h are GPL-2.0-or-later, so
 * that, loaded into the kernel (GPL-2.0-only) beside its GPL-only helpers,
 * they are compatible with both. The kernel knows only a fixed list of
 * strings (license_is_gpl_compatible()); "GPL" is the one that says "a GPL
 * licence" (include/linux/module.h), and a program without a
 * GPL-compatible string may not call the GPL-only helpers
 * (bpf_get_current_task_btf, bpf_probe_read_kernel_str and the CO-RE reads
 * behind BPF_CORE_READ): the verifier would refuse the program. */
char LICENSE[] SEC("license") = "GPL";

#define EEXIST 17
#define barrier() asm volatile("" ::: "memory")
#define TASK_DEAD_STATE 0x80 /* TASK_DEAD since 4.14 */
#define REQ_OP_MASK_ 0xff    /* REQ_OP_BITS == 8 */
#define REQ_OP_READ_ 0
#define REQ_OP_WRITE_ 1
#define PF_KTHREAD_ 0x00200000 /* include/linux/sched.h, unchanged since 2.6 */

/* Set by the loader before load; the verifier drops the disabled paths. */
const volatile bool freq_on = false;
const volatile bool cap_on = false;
const volatile bool perf_on = false;
/* Per-thread records of the charged runtime (the threads table, see
 * thread_slice_ns); off only for tests of the fallback. */
const volatile bool records_on = false;

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, ERG_BPF_MAX_PROCS);
  __type(key, struct erg_key);
  __type(value, struct erg_counts);
} procs SEC(".maps");

/* Group counters reached without hashing: slot tgid mod
 * ERG_BPF_GROUP_SLOTS, owner's key in the slot (erg_bpf_shared.h). The
 * lookup of a preallocated array is inlined by the verifier. The drain
 * reads it through mmap. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, ERG_BPF_GROUP_SLOTS);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, __u32);
  __type(value, struct erg_group);
} groups SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, __u32);
  __type(value, struct erg_group_used);
} groups_used SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct erg_cpu_state);
} cpu_state SEC(".maps");

/* Per thread: its se.sum_exec_runtime up to which its time is charged, in
 * a direct-mapped table (slot = tid mod ERG_THREAD_SLOTS; a preallocated
 * array, whose lookup the verifier inlines: one cache line per switch, no
 * hashing, no allocation under the runqueue lock). A slot names its thread
 * by task pointer and tid; a thread whose slot another live thread holds
 * has no record and is charged as without records. */
#define ERG_THREAD_SLOTS 65536
#define ERG_THREAD_STALE_NS 10000000000ull /* a slot not charged for 10 s may be taken */
struct erg_thread {
  __u64 task;    /* owner's task_struct address, 0 = free */
  __u64 charged; /* its se.sum_exec_runtime up to which it is charged */
  __u64 used_ns; /* when it was last charged or claimed */
  __u32 tid;
  __u32 pad;
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, ERG_THREAD_SLOTS);
  __type(key, __u32);
  __type(value, struct erg_thread);
} threads SEC(".maps");

/* Scratch for building a new entry: too big for the 512-byte stack. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct erg_counts);
} scratch SEC(".maps");

/* Indexed by CPU id; sized to the possible CPUs by the loader. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u32);
} cpu_freq SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u32);
} cpu_class SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, ERG_STAT_N);
  __type(key, __u32);
  __type(value, __u64);
} stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, sizeof(__u32));
} perf_cycles SEC(".maps"), perf_instr SEC(".maps"), perf_llc SEC(".maps");

/* Kernels before 5.14 call it 'state'. */
struct task_struct___o {
  long state;
} __attribute__((preserve_access_index));

static __always_inline long task_state(struct task_struct *t) {
  if (bpf_core_field_exists(t->__state))
    return t->__state;
  return ((struct task_struct___o *)t)->state;
}

static __always_inline void stat_add(__u32 idx, __u64 v) {
  __u64 *p = bpf_map_lookup_elem(&stats, &idx);
  if (p)
    __sync_fetch_and_add(p, v);
}

/* Task pointers here are BTF pointers (tp_btf arguments, current task):
 * plain dereferences become fast faulting loads, no probe_read calls. */
static __always_inline void task_key(struct task_struct *t, struct erg_key *k) {
  k->tgid = t->tgid;
  k->pad = 0;
  k->start_ns = t->group_leader->start_boottime;
}

/* Seqlock write side of a CPU's state: a drain that copies the state while
 * the old slice is being charged and the new one published sees seq_begin
 * != seq_end and reads again, so it never counts a slice both as charged
 * and as running, nor neither (erg_bpf_drain.c). Stores stay in program
 * order on x86 (TSO); arm64 would need store-release, see docs/bpf.md. */
static __always_inline __u64 state_write_begin(struct erg_cpu_state *s) {
  __u64 seq = s->seq_begin + 1;

  s->seq_begin = seq;
  barrier();
  return seq;
}

static __always_inline void state_write_end(struct erg_cpu_state *s, __u64 seq) {
  barrier();
  s->seq_end = seq;
}

/* Identity shown to users follows the group leader, as /proc/PID does; it
 * is refreshed because prctl(PR_SET_NAME), exec and cgroup moves (systemd,
 * slurmstepd) happen after the entry was created at fork/wakeup. */
static __always_inline void meta_refresh(struct erg_counts *c, struct task_struct *t, __u64 now) {
  struct task_struct *l = t->group_leader;

  c->meta_ns = now;
  bpf_probe_read_kernel_str(c->comm, sizeof(c->comm), l->comm);
  c->uid = l->real_cred->uid.val;
  c->cgroup_id = l->cgroups->dfl_cgrp->kn->id;
}

/* Re-reading identity on every switch would double the cost of the hot path;
 * every 100 ms of a group's switches is soon enough for exec and cgroup moves. */
static __always_inline void meta_maybe_refresh(struct erg_counts *c, struct task_struct *t,
                                               __u64 now) {
  if (now - c->meta_ns > 100000000ull)
    meta_refresh(c, t, now);
}

/* A new group's flags: only set while its counters are being made (no
 * other CPU writes them yet); a task never becomes or stops being a
 * kernel thread. */
static __always_inline __u32 new_flags(struct task_struct *t) {
  return (t->group_leader->flags & PF_KTHREAD_) ? ERG_FLAG_KTHREAD : 0;
}

static __always_inline struct erg_group *group_slot(__u32 tgid) {
  __u32 i = tgid & (ERG_BPF_GROUP_SLOTS - 1);

  return bpf_map_lookup_elem(&groups, &i);
}

/* The counters of group k if it has any: its slot in `groups` when it owns
 * it (one inlined array lookup, no hashing), else its `procs` entry. */
static __always_inline struct erg_counts *counts_find(const struct erg_key *k) {
  struct erg_group *g = group_slot(k->tgid);

  if (g && g->state == ERG_GROUP_OWNED && g->key.tgid == k->tgid && g->key.start_ns == k->start_ns)
    return &g->c;
  return bpf_map_lookup_elem(&procs, k);
}

/* Takes the free slot g for group k: the counters are zeroed and the
 * identity read while it is CLAIMING (lookups skip it), then it is
 * published. A CPU that makes the same group's counters meanwhile finds the
 * slot busy and makes a `procs` entry: the drain adds the two. */
static __always_inline bool group_claim(struct erg_group *g, const struct erg_key *k,
                                        struct task_struct *t) {
  __u32 zero = 0, i = k->tgid & (ERG_BPF_GROUP_SLOTS - 1);
  struct erg_group_used *u = bpf_map_lookup_elem(&groups_used, &zero);

  if (!u || g->state != ERG_GROUP_FREE ||
      __sync_val_compare_and_swap(&g->state, ERG_GROUP_FREE, ERG_GROUP_CLAIMING) != ERG_GROUP_FREE)
    return false;
  g->key.tgid = k->tgid;
  g->key.pad = 0;
  g->key.start_ns = k->start_ns;
  __builtin_memset(&g->c, 0, sizeof(g->c));
  g->c.flags = new_flags(t);
  meta_refresh(&g->c, t, bpf_ktime_get_ns());
  __sync_fetch_and_or(&u->bits[(i >> 6) & (ERG_BPF_GROUP_SLOTS / 64 - 1)], 1ull << (i & 63));
  barrier();
  g->state = ERG_GROUP_OWNED;
  return true;
}

/* Entry k made in procs: counted, and its key put in the ring for the
 * drain (erg_group_used), under a sequence number (0 while the key is
 * written, then its number + 1). Counted after the insert: a drain that
 * reads the count sees an entry that is in the map. */
static __always_inline void procs_added(const struct erg_key *k) {
  __u32 zero = 0;
  struct erg_group_used *u = bpf_map_lookup_elem(&groups_used, &zero);
  struct erg_procs_ring_ent *e;
  __u64 i;

  if (!u)
    return;
  i = __sync_fetch_and_add(&u->procs_added, 1);
  e = &u->procs_ring[i & (ERG_PROCS_RING - 1)];
  e->seq = 0;
  barrier();
  e->key.tgid = k->tgid;
  e->key.pad = 0;
  e->key.start_ns = k->start_ns;
  barrier();
  e->seq = i + 1;
}

/* Group k's counters, made if it has none: in its `groups` slot if that is
 * free, else in `procs`. */
static __always_inline struct erg_counts *counts_get(const struct erg_key *k,
                                                     struct task_struct *t) {
  struct erg_counts *c = counts_find(k);
  struct erg_group *g;
  __u32 zero = 0;
  long err;

  if (c)
    return c;
  g = group_slot(k->tgid);
  if (g && group_claim(g, k, t))
    return &g->c;
  c = bpf_map_lookup_elem(&scratch, &zero);
  if (!c)
    return 0;
  __builtin_memset(c, 0, sizeof(*c));
  c->flags = new_flags(t);
  meta_refresh(c, t, bpf_ktime_get_ns());
  err = bpf_map_update_elem(&procs, k, c, BPF_NOEXIST);
  if (err && err != -EEXIST) {
    stat_add(ERG_STAT_MAP_FULL, 1);
    return 0;
  }
  if (!err)
    procs_added(k);
  return bpf_map_lookup_elem(&procs, k);
}

/* Slots are claimed lock-free: a CPU either finds its frequency or takes the
 * first free slot with cmpxchg; a lost race just moves on to the next slot. */
static __always_inline void freq_add(struct erg_counts *c, __u32 khz, __u64 d) {
  for (int i = 0; i < ERG_BPF_NFREQ; i++) {
    __u32 cur = c->freq_khz[i];

    if (cur == 0) {
      cur = __sync_val_compare_and_swap(&c->freq_khz[i], 0, khz);
      if (cur == 0)
        cur = khz;
    }
    if (cur == khz) {
      __sync_fetch_and_add(&c->freq_ns[i], d);
      return;
    }
  }
  __sync_fetch_and_add(&c->freq_other_ns, d);
}

static __always_inline void split_add(struct erg_counts *c, __u32 cpu, __u64 d) {
  if (freq_on) {
    __u32 *khz = bpf_map_lookup_elem(&cpu_freq, &cpu);
    if (khz && *khz)
      freq_add(c, *khz, d);
  }
  if (cap_on) {
    __u32 *cls = bpf_map_lookup_elem(&cpu_class, &cpu);
    if (cls && *cls < ERG_BPF_NCAP)
      __sync_fetch_and_add(&c->cap_ns[*cls], d);
  }
}

static __always_inline __u64 perf_read(void *map) {
  struct bpf_perf_event_value v = {};

  if (bpf_perf_event_read_value(map, BPF_F_CURRENT_CPU, &v, sizeof(v)))
    return 0;
  return v.counter;
}

/* Hardware counter deltas of the slice that ends now; the same readings
 * are the next slice's bases, so no event falls between two slices. */
static __always_inline void perf_step(struct erg_cpu_state *s, __u64 delta[3]) {
  __u64 v[3] = {perf_read(&perf_cycles), perf_read(&perf_instr), perf_read(&perf_llc)};

  for (int i = 0; i < 3; i++) {
    delta[i] = s->perf_base[i] && v[i] > s->perf_base[i] ? v[i] - s->perf_base[i] : 0;
    s->perf_base[i] = v[i];
  }
}

static __always_inline void perf_add(struct erg_counts *c, const __u64 delta[3]) {
  if (delta[0])
    __sync_fetch_and_add(&c->cycles, delta[0]);
  if (delta[1])
    __sync_fetch_and_add(&c->instructions, delta[1]);
  if (delta[2])
    __sync_fetch_and_add(&c->llc_misses, delta[2]);
}

/* The runtime of t's slice in flight (t runs, or has just stopped: sum is
 * its se.sum_exec_runtime now) when this CPU did not see it switch in (the
 * state names another task). The fair class's pick of a task
 * (set_next_entity) sets se.prev_sum_exec_runtime to its sum_exec_runtime,
 * so the difference is the slice. It is bounded by the wall-clock time
 * since this CPU's last seen switch (t switched in after it), which is
 * what limits it for other classes, whose pick leaves the mark alone (an
 * RT task: its runtime since its last fair pick). No switch seen on this
 * CPU yet (the attach has just happened): nothing. */
static __always_inline __u64 unseen_slice_ns(struct task_struct *t, __u64 sum, __u64 bound) {
  __u64 mark, d;

  if (!bound)
    return 0;
  mark = t->se.prev_sum_exec_runtime;
  d = sum > mark ? sum - mark : 0;
  return d < bound ? d : bound;
}

/* The switch that took the task the CPU's state names off this CPU went
 * unseen too: its slice, from the state's switch-in to `upto` (when the
 * task running now began), would be lost (its next seen switch-in starts
 * from its runtime then), so its group is charged that wall-clock time.
 * Only an existing entry, as for a dead task; nothing for the idle task. */
static __always_inline void charge_lost(const struct erg_cpu_state *s, __u64 upto) {
  struct erg_counts *c;

  if (!s->ts || !s->tid || upto <= s->ts)
    return;
  c = counts_find(&s->key);
  if (c)
    __sync_fetch_and_add(&c->cpu_ns, upto - s->ts);
}

/* The key a CPU's state records for the task t it runs: the idle task's
 * is all zeros (the drain's "idle"), whatever its start time. */
static __always_inline void run_key(struct task_struct *t, __u32 tid, struct erg_key *k) {
  if (tid == 0) {
    k->tgid = 0;
    k->pad = 0;
    k->start_ns = 0;
    return;
  }
  task_key(t, k);
}

/* The last switch-out of a dead task: the thread ran from sched_process_exit
 * through exit_notify to here, so this slice must still be charged. Only an
 * existing entry is charged (sched_process_exit made sure there is one): a
 * straggler thread arriving after the drain took the exited group away must
 * not resurrect it. When no thread of the group is alive any more, the entry
 * is marked exited and the next drain hands it over and deletes it. */
static __always_inline void account_dead(struct task_struct *prev, const struct erg_key *k, __u64 d,
                                         const __u64 perf[3]) {
  struct erg_counts *c = counts_find(k);

  if (!c) {
    stat_add(ERG_STAT_LOST_EXIT_NS, d);
    return;
  }
  __sync_fetch_and_add(&c->cpu_ns, d);
  if (freq_on || cap_on)
    split_add(c, bpf_get_smp_processor_id(), d);
  if (perf_on)
    perf_add(c, perf);
  if (prev->signal->live.counter == 0)
    c->flags |= ERG_FLAG_EXITED;
}

/* Charges prev's slice. Wakeups are counted here too, as prev's voluntary
 * switch-outs (it blocks: not preempted, state not running; the kernel's
 * nvcsw): each such sleep ends with a wakeup, and the entry is at hand,
 * where a sched_wakeup program had to find the woken task's entry, a cold
 * hash lookup, ~25 % of the in-kernel time under process churn. */
static __always_inline void account_out(struct task_struct *prev, const struct erg_key *k,
                                        long state, __u64 d, const __u64 perf[3], __u64 now) {
  struct erg_counts *c;

  if (state & TASK_DEAD_STATE) {
    account_dead(prev, k, d, perf);
    return;
  }
  c = counts_get(k, prev);
  if (!c)
    return;
  __sync_fetch_and_add(&c->cpu_ns, d);
  if (state)
    __sync_fetch_and_add(&c->wakeups, 1);
  if (freq_on || cap_on)
    split_add(c, bpf_get_smp_processor_id(), d);
  if (perf_on)
    perf_add(c, perf);
  meta_maybe_refresh(c, prev, now);
}

/* prev's slice without its thread record: the growth of its runtime since
 * this CPU saw it switch in, or after an unseen switch-in the estimate of
 * unseen_slice_ns. */
static __always_inline __u64 cpu_slice_ns(const struct erg_cpu_state *s, struct task_struct *prev,
                                          bool seen, __u64 sum, __u64 now) {
  if (seen)
    return sum > s->runtime_in ? sum - s->runtime_in : 0;
  return unseen_slice_ns(prev, sum, s->ts && now > s->ts ? now - s->ts : 0);
}

static __always_inline struct erg_thread *thread_slot(__u32 tid) {
  __u32 i = tid & (ERG_THREAD_SLOTS - 1);

  return bpf_map_lookup_elem(&threads, &i);
}

/* Takes slot r for task t (charged up to `charged`) if it is free, or held
 * by an earlier task with t's tid (it died unseen), or unused for 10 s (a
 * thread whose slot is taken is charged without a record until it gets one
 * back: never twice). The owner is claimed with cmpxchg, so two CPUs never
 * both believe they hold it. */
static __always_inline void thread_claim(struct erg_thread *r, struct task_struct *t, __u32 tid,
                                         __u64 charged, __u64 now) {
  __u64 old = r->task;

  if (old && r->tid != tid && now - r->used_ns < ERG_THREAD_STALE_NS)
    return;
  if (__sync_val_compare_and_swap(&r->task, old, (__u64)t) != old)
    return;
  r->tid = tid;
  r->charged = charged;
  r->used_ns = now;
}

/* prev's slice with per-thread records (records_on): the growth of its
 * se.sum_exec_runtime since its last charge, so a slice is exact whatever
 * switches went unseen (a missed switch-out is charged at the next seen
 * one, a missed switch-in costs nothing). A thread created after the load
 * has its record from its first wakeup (sched_wakeup_new, charged 0); an
 * older one from its first switch-out, after that slice is charged as
 * without records. The charge is moved on with cmpxchg: if the slot
 * changed hands meanwhile (taken as stale by another thread), this slice
 * is charged as without records. A dead thread frees its slot. */
static __always_inline __u64 thread_slice_ns(const struct erg_cpu_state *s,
                                             struct task_struct *prev, __u32 ptid, bool seen,
                                             bool dead, __u64 sum, __u64 now) {
  struct erg_thread *r = thread_slot(ptid);
  __u64 c, d;

  if (!r)
    return cpu_slice_ns(s, prev, seen, sum, now);
  if (r->task == (__u64)prev && r->tid == ptid) {
    c = r->charged;
    barrier();
    if (r->task == (__u64)prev && __sync_val_compare_and_swap(&r->charged, c, sum) == c) {
      r->used_ns = now;
      if (dead)
        __sync_val_compare_and_swap(&r->task, (__u64)prev, 0);
      return sum > c ? sum - c : 0;
    }
  }
  d = cpu_slice_ns(s, prev, seen, sum, now);
  if (!dead)
    thread_claim(r, prev, ptid, sum, now);
  return d;
}

/* With per-thread records, the runtime of t (running) that no switch-out
 * has charged yet: exact, as thread_slice_ns will charge it; without one,
 * the estimate. */
static __always_inline __u64 uncharged_ns(struct task_struct *t, __u32 tid, __u64 sum,
                                          __u64 bound) {
  struct erg_thread *r = thread_slot(tid);

  if (r && r->task == (__u64)t && r->tid == tid)
    return sum > r->charged ? sum - r->charged : 0;
  return unseen_slice_ns(t, sum, bound);
}

/* A slice is charged as the growth of prev's se.sum_exec_runtime (the
 * scheduler has just brought it up to date): since its last charge, kept
 * in the thread's record (thread_slice_ns), or without one (its slot held
 * by another thread, or records off) since this CPU saw it switch in (the state holds the
 * value at switch-in, read from next's se, which the scheduler has just
 * written). prev is recognised by its task pointer and tid, and its key is
 * the one recorded at switch-in (a group's key never changes: exec by a
 * non-leader thread copies the leader's start time), so prev's leader is
 * not read again. */
SEC("tp_btf/sched_switch")
int BPF_PROG(erg_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next) {
  __u64 now = bpf_ktime_get_ns(), seq, perf[3] = {0, 0, 0};
  __u32 zero = 0, ptid = prev->pid, ntid = next->pid;
  struct erg_cpu_state *s;

  s = bpf_map_lookup_elem(&cpu_state, &zero);
  if (!s)
    return 0;
  seq = state_write_begin(s);
  if (perf_on)
    perf_step(s, perf);
  /* pid 0 is the idle task: its time is not a process's. */
  if (ptid != 0) {
    __u64 sum = prev->se.sum_exec_runtime, d;
    long state = preempt ? 0 : task_state(prev);
    bool seen = s->ts && s->task == (__u64)prev && s->tid == ptid;
    struct erg_key pk;

    if (records_on)
      d = thread_slice_ns(s, prev, ptid, seen, (state & TASK_DEAD_STATE) != 0, sum, now);
    else
      d = cpu_slice_ns(s, prev, seen, sum, now);
    if (seen) {
      pk = s->key;
    } else {
      /* prev is not what this CPU's last switch-in recorded: a switch
       * went unseen (a few per second on 6.18; docs/bpf.md), so the slice
       * start and the perf bases belong to another task. */
      if (s->ts)
        stat_add(ERG_STAT_UNSEEN_SWITCH, 1);
      if (!records_on)
        charge_lost(s, now - d);
      perf[0] = perf[1] = perf[2] = 0;
      task_key(prev, &pk);
    }
    account_out(prev, &pk, state, d, perf, now);
  }
  s->ts = now;
  s->task = (__u64)next;
  s->tid = ntid;
  s->runtime_in = next->se.sum_exec_runtime;
  run_key(next, ntid, &s->key);
  state_write_end(s, seq);
  return 0;
}

/* Migrations: the kernel's se.nr_migrations grows in set_task_cpu right
 * after this tracepoint, when the task changes CPU. A few per second per
 * CPU under churn, against thousands of switches, which would each need a
 * per-thread record to count them at switch-out. */
struct task_struct___cpu {
  unsigned int cpu;
} __attribute__((preserve_access_index));

/* Kernels before 5.16 keep the CPU in task_struct, later ones with
 * THREAD_INFO_IN_TASK (x86-64, arm64) in thread_info. A function of its own
 * (see kn_parent_old). */
static __noinline unsigned int task_cpu_old(struct task_struct *t) {
  return ((struct task_struct___cpu *)t)->cpu;
}

static __always_inline unsigned int task_cpu_of(struct task_struct *t) {
  if (bpf_core_field_exists(t->thread_info.cpu))
    return t->thread_info.cpu;
  return task_cpu_old(t);
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(erg_sched_migrate_task, struct task_struct *p, int dest_cpu) {
  struct erg_counts *c;
  struct erg_key k;

  if (p->pid == 0 || task_cpu_of(p) == (unsigned int)dest_cpu)
    return 0;
  task_key(p, &k);
  c = counts_get(&k, p);
  if (c)
    __sync_fetch_and_add(&c->migrations, 1);
  return 0;
}

/* A few times a second on every CPU (a software clock perf event): if the
 * task running here is not the one this CPU's state names, its switch-in
 * went unseen, and until its next switch-out every drain would give its
 * slice in flight to the named group. The state is set to what runs now,
 * started when the thread's uncharged runtime began (its runtime is as of
 * the last tick, so the start may be late by one tick). The hrtimer
 * interrupt cannot fall inside erg_sched_switch (interrupts are off there). */
SEC("perf_event")
int erg_cpu_heal(void *ctx) {
  struct task_struct *t = bpf_get_current_task_btf();
  __u64 now = bpf_ktime_get_ns(), run, sum, seq;
  __u32 zero = 0, tid = t->pid;
  struct erg_cpu_state *s;
  struct erg_key k;

  s = bpf_map_lookup_elem(&cpu_state, &zero);
  if (!s)
    return 0;
  if (s->ts && s->task == (__u64)t && s->tid == tid)
    return 0;
  if (s->ts)
    stat_add(ERG_STAT_UNSEEN_SWITCH, 1);
  run_key(t, tid, &k); /* as erg_sched_switch records it, idle included */
  /* The slice began at the fair class's mark (see unseen_slice_ns); its
   * runtime is as of the last tick, so the start may be late by one. */
  sum = t->se.sum_exec_runtime;
  if (!tid)
    run = 0;
  else if (records_on)
    run = uncharged_ns(t, tid, sum, s->ts && now > s->ts ? now - s->ts : 0);
  else
    run = unseen_slice_ns(t, sum, s->ts && now > s->ts ? now - s->ts : 0);
  seq = state_write_begin(s);
  if (!records_on) /* else the named thread's next switch-out charges it */
    charge_lost(s, now - run);
  s->ts = now - run;
  s->key = k;
  s->task = (__u64)t;
  s->tid = tid;
  s->runtime_in = sum - run;
  /* The bases belong to the slice that was not seen to end. */
  s->perf_base[0] = s->perf_base[1] = s->perf_base[2] = 0;
  state_write_end(s, seq);
  return 0;
}

/* Every process created after the attach passes here before it first
 * runs. Its group's entry is made here, so a new process running at a
 * drain has its own record (and task_rename finds it) rather than the
 * drain's running-only one with /proc's name; tried without: under ASan
 * integration.agent_exits lost names of 53-91 of its 800 short processes.
 * A new thread of an existing group finds the entry there (one lookup). */
SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(erg_sched_wakeup_new, struct task_struct *p) {
  struct erg_key k;

  task_key(p, &k);
  counts_get(&k, p);
  /* Its thread record, before it first runs: all its runtime is to come. */
  if (records_on) {
    __u32 tid = p->pid;
    struct erg_thread *r = thread_slot(tid);

    if (r)
      thread_claim(r, p, tid, 0, bpf_ktime_get_ns());
  }
  return 0;
}

#include "erg_cgpath.bpf.h"

/* Runs in the exiting thread. The group's entry must exist before the final
 * switch-out (account_dead only looks up), and comm/cgroup are taken one last
 * time while the task is still whole, with the cgroup's path: its directory
 * may be gone by the time the agent drains the exit. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(erg_sched_process_exit, struct task_struct *p) {
  struct erg_counts *c;
  struct kernfs_node *kn;
  struct erg_key k;

  task_key(p, &k);
  c = counts_get(&k, p);
  if (!c)
    return 0;
  meta_refresh(c, p, bpf_ktime_get_ns());
  kn = p->group_leader->cgroups->dfl_cgrp->kn;
  cgpath_record(kn, kn->id);
  c->cgroup_v1_id = cgv1_record(p->group_leader);
  return 0;
}

/* prctl(PR_SET_NAME) and exec rename a task. The group takes its leader's
 * new name at once: the agent reads a live process's name from /proc, but a
 * process that exits and is reaped before that read is reported with the
 * name kept here, which meta_maybe_refresh alone could leave at the
 * parent's for up to 100 ms of switches (a renamed child's whole life). */
SEC("tp_btf/task_rename")
int BPF_PROG(erg_task_rename, struct task_struct *task, const char *comm) {
  struct erg_counts *c;
  struct erg_key k;

  if (task->pid != task->tgid)
    return 0;
  task_key(task, &k);
  c = counts_find(&k);
  if (c)
    bpf_probe_read_kernel_str(c->comm, sizeof(c->comm), comm);
  return 0;
}

SEC("tp_btf/cpu_frequency")
int BPF_PROG(erg_cpu_frequency, unsigned int state, unsigned int cpu_id) {
  __u32 cpu = cpu_id;

  bpf_map_update_elem(&cpu_freq, &cpu, &state, BPF_ANY);
  return 0;
}

/* Bio-based drivers (device mapper, md) remap into bios for the devices below
 * them, which pass here again: count only at the bottom, blk-mq layer. */
static __always_inline bool bio_stacked(struct bio *bio) {
  if (!bpf_core_field_exists(bio->bi_bdev))
    return false;
  return bio->bi_bdev->bd_disk->fops->submit_bio != 0;
}

/* Submission runs in the task that submits the bio: reads and direct or
 * fsync'd writes are charged to the process; background writeback to the
 * flusher kworker (see docs/bpf.md). */
SEC("tp_btf/block_bio_queue")
int BPF_PROG(erg_block_bio_queue, struct bio *bio) {
  struct task_struct *t = bpf_get_current_task_btf();
  __u32 op = bio->bi_opf & REQ_OP_MASK_;
  __u64 size = bio->bi_iter.bi_size;
  struct erg_counts *c;
  struct erg_key k;

  if ((op != REQ_OP_READ_ && op != REQ_OP_WRITE_) || size == 0 || bio_stacked(bio))
    return 0;
  if (t->pid == 0)
    return 0;
  task_key(t, &k);
  c = counts_get(&k, t);
  if (!c)
    return 0;
  if (op == REQ_OP_READ_)
    __sync_fetch_and_add(&c->read_bytes, size);
  else
    __sync_fetch_and_add(&c->write_bytes, size);
  return 0;
}

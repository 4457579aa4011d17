// SPDX-License-Identifier: GPL-2.0-or-later
/* Types shared by the BPF program (erg.bpf.c) and its loader (erg_bpf.c).
 * Kernel side gets __u32/__u64 from vmlinux.h, user side from linux/types.h. */
#ifndef ERG_BPF_SHARED_H
#define ERG_BPF_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define ERG_BPF_MAX_PROCS 32768 /* live + not yet drained exited task groups */
#define ERG_BPF_NFREQ 8         /* distinct frequencies kept per task group */
#define ERG_BPF_NCAP 4          /* distinct core capacity classes */
#define ERG_BPF_COMM_LEN 16
#define ERG_BPF_CGPATH_LEN 512 /* a cgroup path as the agent keeps it, NUL included */
#define ERG_BPF_CGPATHS 1024   /* cgroup id -> path entries (LRU) */
/* cgpaths keys of v1 (freezer) cgroups carry this bit: kernfs ids of
 * different hierarchies can be equal. */
#define ERG_CGV1_BIT (1ull << 63)

/* A task group is keyed by (tgid, leader start time) so that a reused pid is
 * never merged with the process that had it before. */
struct erg_key {
  __u32 tgid;
  __u32 pad;
  __u64 start_ns; /* group_leader->start_boottime, CLOCK_BOOTTIME ns */
};

#define ERG_FLAG_EXITED 1u
/* The group is a kernel thread (PF_KTHREAD, set when its counters are
 * made): no memory of its own, so the agent reads no /proc/PID/statm. */
#define ERG_FLAG_KTHREAD 2u

/* Cumulative counters of one task group since it was first seen. */
/* What a switch-out touches comes first, on one cache line. */
struct erg_counts {
  __u64 cpu_ns;
  __u64 wakeups;    /* voluntary switch-outs (sleeps, each ended by a wakeup) */
  __u64 migrations; /* the threads' CPU changes (se.nr_migrations) */
  __u64 meta_ns;    /* when comm/uid/cgroup were last read */
  __u64 read_bytes;
  __u64 write_bytes;
  __u64 cycles;
  __u64 instructions;
  __u64 llc_misses;
  __u64 cap_ns[ERG_BPF_NCAP];    /* on-CPU ns per capacity class */
  __u64 freq_ns[ERG_BPF_NFREQ];  /* on-CPU ns at freq_khz[i] */
  __u64 freq_other_ns;           /* ns at frequencies beyond the first NFREQ */
  __u32 freq_khz[ERG_BPF_NFREQ]; /* 0 = slot free; claimed by cmpxchg */
  __u64 cgroup_id;               /* cgroup v2 (default hierarchy) kernfs id */
  __u64 cgroup_v1_id;            /* at exit: freezer (v1) kernfs id | ERG_CGV1_BIT; 0: none */
  __u32 uid;
  __u32 flags; /* ERG_FLAG_* */
  char comm[ERG_BPF_COMM_LEN];
};

/* The direct-mapped table of group counters (`groups`, an mmap-able ARRAY):
 * slot = tgid mod ERG_BPF_GROUP_SLOTS. A group whose slot is free when its
 * counters are first made lives there, reached without hashing; one whose
 * slot another group holds lives in `procs`. A slot is claimed by the
 * kernel (FREE -> CLAIMING -> OWNED, cmpxchg) and freed by the drain
 * (OWNED -> FREE) once it has handed over the group's exited record. */
#define ERG_BPF_GROUP_SLOTS 8192
#define ERG_GROUP_FREE 0u
#define ERG_GROUP_CLAIMING 1u
#define ERG_GROUP_OWNED 2u
struct erg_group {
  __u32 state; /* ERG_GROUP_* */
  __u32 pad;
  struct erg_key key;
  struct erg_counts c; /* its switch fields share the slot's first line */
  __u8 pad2[48];       /* 320 bytes: every slot starts on a cache line */
};

/* Which slots of `groups` are owned or being claimed, one bit each: the
 * kernel sets a slot's bit when it claims it, the drain clears it before it
 * frees the slot, so the drain reads the owned slots without touching the
 * other ~8,000 (0.3 ms a drain). procs_added counts the entries the kernel
 * has made in `procs` (only the drain deletes them), and the key of entry
 * number i is in procs_ring[i mod ERG_PROCS_RING] (seq = i + 1 once
 * written, 0 while being written): the drain knows every key in procs and
 * looks the few there are up one by one, where a batch read walks all the
 * hash's buckets whatever the count (~8 % of the agent's CPU under process
 * churn). A ring lapped or caught mid-write between two drains: a batch
 * read. */
#define ERG_PROCS_RING 64
struct erg_procs_ring_ent {
  struct erg_key key;
  __u64 seq;
};
struct erg_group_used {
  __u64 bits[ERG_BPF_GROUP_SLOTS / 64];
  __u64 procs_added;
  struct erg_procs_ring_ent procs_ring[ERG_PROCS_RING];
};

/* The cgroup v2 path of a cgroup id, as /proc/PID/cgroup shows it from the
 * root of the hierarchy ("/a/b"; "/" for the root). Taken at exit, while
 * the cgroup certainly still exists. */
struct erg_cgpath {
  char path[ERG_BPF_CGPATH_LEN];
};

/* Per-CPU: what is running here since when (for slice and in-flight time).
 * A switch writes seq_begin first and seq_end last, with the charge of the
 * old slice in between; userspace copies the value front to back, so a copy
 * with seq_end == seq_begin was not written meanwhile (seqlock with the
 * counters in reverse order of the copy). */
struct erg_cpu_state {
  __u64 seq_end;      /* = seq_begin when no switch is being written */
  __u64 ts;           /* bpf_ktime_get_ns() at switch-in, 0 = unknown */
  struct erg_key key; /* tgid 0: idle */
  __u64 perf_base[3]; /* cycles, instructions, LLC misses at switch-in */
  __u64 task;         /* the task switched in (its task_struct's address) */
  __u64 runtime_in;   /* its se.sum_exec_runtime at switch-in */
  __u32 tid;          /* its thread id (0: idle) */
  __u32 pad;
  __u64 seq_begin; /* switches begun on this CPU */
};

enum erg_bpf_stat {
  ERG_STAT_MAP_FULL = 0,  /* events dropped: procs map full */
  ERG_STAT_LOST_EXIT_NS,  /* ns of a dead thread's last slice with no entry left */
  ERG_STAT_UNSEEN_SWITCH, /* switch-outs whose switch-in this program did not see */
  ERG_STAT_N
};

#endif

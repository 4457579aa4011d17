// SPDX-License-Identifier: GPL-3.0-or-later
/* Internal to bpf/: the loader state shared by erg_bpf.c (open, load,
 * features) and erg_bpf_drain.c (drain). Only with ERG_HAVE_BPF. */
#ifndef ERG_BPF_INT_H
#define ERG_BPF_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erg_bpf.h"
#include "erg_bpf_shared.h"

_Static_assert(ERG_BPF_NFREQ == ERG_BPF_MAX_FREQ, "frequency slots differ");
_Static_assert(ERG_BPF_NCAP == ERG_BPF_MAX_CAP, "capacity classes differ");

#define NFEAT 9
#define NPERF 3

struct erg_kern;
struct erg_kern_l;

/* Map fds, whichever loader created them. */
struct erg_bpf_fds {
  int procs, cpu_state, cpu_freq, cpu_class, stats, cgpaths;
  int perf[NPERF];
  int threads; /* per-thread records (tests write it) */
  int groups;  /* direct-mapped group counters (mmap'ed: groups below) */
  int groups_used;
};

struct erg_bpf {
  struct erg_kern *skel;    /* libbpf loader, or */
  struct erg_kern_l *lskel; /* the light skeleton's in-kernel loader */
  struct erg_bpf_fds fd;
  unsigned features;
  const char *reason[NFEAT];
  char reason_buf[NFEAT][128]; /* reasons that quote an errno */
  char root[PATH_MAX];
  int ncpu;            /* possible CPUs: map sizes, CPU ids */
  bool *online;        /* per possible CPU, at open */
  uint32_t *cpu_class; /* per CPU, index into classes */
  uint32_t classes[ERG_BPF_MAX_CAP];
  int nclass;
  uint32_t *freq;              /* scratch for sysfs frequency refresh */
  int *perf_fd;                /* NPERF * ncpu, -1 = none */
  int *heal_fd;                /* per CPU software clock running erg_cpu_heal, -1 = none */
  char heal_why[160];          /* why there is no heal clock; "" when it runs */
  char records_why[80];        /* why slices are not charged per thread; "" when they are */
  struct erg_group *groups;    /* the groups map, mmap'ed (ERG_BPF_GROUP_SLOTS) */
  size_t groups_len;           /* bytes mapped */
  struct erg_group_used *used; /* its slots' bits, mmap'ed (one page) */
  struct erg_key *keys;
  struct erg_counts *vals;
  uint64_t *running; /* per record: the in-flight part drain_settle added */
  size_t cap;        /* capacity of keys/vals */
  char *snap[2];     /* per-CPU state before and after the map read */
  char *snap_tmp;    /* re-read of CPUs caught mid-switch */
  long *redo;        /* groups to re-read, at most one per CPU */
  uint64_t exited, drains, unsettled, running_only;
  uint64_t procs_deleted; /* entries deleted from procs (see erg_group_used) */
  /* The keys in procs as the drain knows them: from its last batch read,
   * plus the kernel's ring (erg_group_used) up to ring_next, less its own
   * deletes. */
  struct erg_key *pkeys;
  size_t npkeys, pkeys_cap;
  uint64_t ring_next;
  uint64_t procs_batches; /* batch reads of procs (tests) */
  uint64_t drain_mono_ns; /* where the last drain cut its counters */
  erg_bpf_cut_cb cut_cb;
  void *cut_user;
};

/* Drain-side flag on a record made for a group that runs but has no map
 * entry (never kept in the kernel's map). */
#define ERG_FLAG_UNSEEN_GROUP (1u << 31)
/* Drain-side flags: where a record's counters were read (a group is in its
 * groups slot, in procs, or, after a race between two CPUs making its
 * counters, in both: the drain adds the two). */
#define ERG_FLAG_IN_HASH (1u << 30)
#define ERG_FLAG_IN_SLOT (1u << 29)

_Static_assert(sizeof(struct erg_group) == 320, "a groups slot is 5 cache lines");

/* A per-CPU map value as the kernel copies it out: rounded up to 8 bytes. */
static inline size_t cpu_state_stride(void) {
  return (sizeof(struct erg_cpu_state) + 7) & ~(size_t)7;
}

/* Writes sysfs scaling_cur_freq into the cpu_freq map (erg_bpf.c). */
void erg_bpf_freq_refresh(struct erg_bpf *b);

#endif

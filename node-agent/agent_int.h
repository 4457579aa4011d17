// SPDX-License-Identifier: GPL-3.0-or-later
/* Internal to the agent library: the state shared by the /proc and the
 * BPF collection paths. */
#ifndef ERG_AGENT_INT_H
#define ERG_AGENT_INT_H

#include <stddef.h>
#include <string.h>

#include "erg_agent.h"
#include "erg_bpf.h"

/* A process's CPU time per frequency and per core capacity, cumulative as
 * the last drain saw it (BPF path, only with the freq or capacity feature). */
struct proc_split {
  uint32_t khz[ERG_BPF_MAX_FREQ];
  uint64_t freq_ns[ERG_BPF_MAX_FREQ];
  uint64_t freq_other_ns;
  uint64_t cap_ns[ERG_BPF_MAX_CAP];
  uint64_t capacity_weighted_ns;
};

/* Storage for the split entries of one reported process; the pointers are
 * set once the sweep's arrays stop moving. */
struct proc_extra {
  Erg__FreqTime freq[ERG_BPF_MAX_FREQ + 1]; /* + the "other frequencies" entry */
  Erg__FreqTime *freq_ptrs[ERG_BPF_MAX_FREQ + 1];
  size_t n_freq;
  Erg__CapacityTime cap[ERG_BPF_MAX_CAP];
  Erg__CapacityTime *cap_ptrs[ERG_BPF_MAX_CAP];
  size_t n_cap;
  uint64_t capacity_weighted_ns;
};

struct proc_prev {
  uint32_t pid;
  uint64_t start_ticks;
  uint64_t cpu; /* ticks on the /proc path, ns on the BPF path */
  uint64_t read_bytes, write_bytes;
  uint64_t wakeups, migrations, cycles, instructions, llc_misses;
  int used;
};

/* Open-addressed table of last sweep's counters; rebuilt every sweep, so no
 * deletions are ever needed. split, parallel to slots, exists only when
 * with_split is set: most nodes have no frequency or capacity split, and
 * the table should stay small there. */
struct proc_table {
  struct proc_prev *slots;
  struct proc_split *split;
  size_t cap, used;
  int with_split;
};

/* A cgroup path as the agent keeps it. k8s v2 paths (kubepods.slice/
 * kubepods-burstable-pod<uid>.slice/cri-containerd-<64 hex>.scope) run to
 * ~200 bytes; longer ones are cut, and their keys with them. */
#define AGENT_CGROUP_MAX 512

/* The strings a sample's Proc points at: comm, cgroup path, and the job,
 * unit and container keys packed one after the other (NUL-separated). */
struct agent_strings {
  char comm[64]; /* as erg_proc_stat.comm */
  char cgroup[AGENT_CGROUP_MAX];
  char keys[sizeof(struct erg_group_keys)];
};

/* Length of packed keys (job, unit, container, each NUL-terminated). */
static inline size_t agent_keys_len(const char *keys) {
  size_t n = 0;
  for (int i = 0; i < 3; i++)
    n += strlen(keys + n) + 1;
  return n;
}

/* cgroup v2 id -> path (cgcache.c), bounded: when full the oldest entry
 * is overwritten (oldest: the next slot to go, entries fill in order). */
#define AGENT_CGCACHE_MAX 8192
struct cgcache_entry {
  uint64_t id;
  char path[AGENT_CGROUP_MAX];
};
struct cgroup_cache {
  char root[256]; /* cgroup2 mount */
  struct cgcache_entry *e;
  size_t n, cap, oldest;
  size_t max; /* 0: AGENT_CGCACHE_MAX (tests set less) */
  uint64_t last_walk_ns;
  /* id -> entry index + 1 (0: free), open addressing over 2 * cap slots:
   * a lookup per exited process was a scan of up to 8192 entries. */
  uint32_t *idx;
  size_t idx_cap;
};
const char *cgcache_find(const struct cgroup_cache *c, uint64_t id);
void cgcache_put(struct cgroup_cache *c, uint64_t id, const char *path);
void cgcache_learn(struct cgroup_cache *c, uint64_t id, const char *path);
void cgcache_walk(struct cgroup_cache *c);
void cgcache_free(struct cgroup_cache *c);

/* A live process's identity as /proc/PID/cgroup gave it (identcache.c),
 * kept between sweeps on the eBPF path. */
#define IDENT_MAX 4096                       /* entries (~0.8 kB each) */
#define IDENT_MAX_AGE_NS (10 * ERG_NS_PER_S) /* read again after this */
#define IDENT_VIEW_MAX_AGE_NS ERG_NS_PER_S   /* the kernel's view must be this recent */
struct agent_ident {
  uint32_t pid;
  uint64_t start_ns;
  uint64_t cgroup_id; /* the kernel's v2 id when it was read */
  uint32_t kuid;      /* the kernel's uid then */
  uint32_t uid;       /* /proc/PID/status's (the same, without the kernel's lag) */
  uint64_t shmem;     /* its RssShmem, bytes */
  uint64_t read_ns;   /* CLOCK_MONOTONIC of the read */
  char comm[16];      /* the kernel's name then */
  char cgroup[AGENT_CGROUP_MAX];
  char keys[sizeof(struct erg_group_keys)]; /* job, unit, container as agent_strings */
};
struct ident_cache;
struct ident_cache *ident_new(size_t max); /* max 0: IDENT_MAX */
void ident_free(struct ident_cache *c);
size_t ident_count(const struct ident_cache *c);
/* The entry of (pid, start) if it was read at most IDENT_MAX_AGE_NS before
 * now_ns while the kernel's view (kv: cgroup_id, kuid, comm) was as now,
 * and that view was taken (kv->read_ns) after the read and at most
 * IDENT_VIEW_MAX_AGE_NS before now_ns; else NULL. */
const struct agent_ident *ident_get(struct ident_cache *c, uint32_t pid, uint64_t start,
                                    const struct agent_ident *kv, uint64_t now_ns);
/* Remembers e (all of it) as read at e->read_ns. */
void ident_put(struct ident_cache *c, const struct agent_ident *e);
/* The process exited: its entry goes. */
void ident_drop(struct ident_cache *c, uint32_t pid, uint64_t start);

/* The keys of exited processes by their cgroup ids (agent_bpf.c). */
#define AGENT_EXIT_KEYS 64
struct agent_exit_keys {
  uint64_t id, v1; /* cgroup v2 id (0: unused slot), v1 id with ERG_CGV1_BIT or 0 */
  char keys[sizeof(struct erg_group_keys)];
};

/* ---- user names (users.c) ---- */
#define AGENT_USER_NAME_MAX 65      /* longest name sent: 64 bytes */
#define AGENT_USERS_PER_SAMPLE 1024 /* distinct uids named in one sample */
struct agent_users;
struct agent_users *agent_users_new(void);
void agent_users_free(struct agent_users *u);
/* The name of uid (cached), or NULL when the node has none. */
const char *agent_users_name(struct agent_users *u, uint32_t uid, uint64_t now_ns);
/* Sets s->users to the names of the uids of s's procs (valid until the
 * next call). */
void agent_users_fill(struct agent_users *u, Erg__Sample *s, uint64_t now_ns);

/* What opening the GPUs found, for the caller to log (erg_agent_gpu_note):
 * at most two lines, each with its erg_log level. */
#define AGENT_GPU_NOTES 2
struct agent_gpu_notes {
  size_t n;
  int level[AGENT_GPU_NOTES];
  char text[AGENT_GPU_NOTES][1100];
};

/* Which block devices are whole physical disks (totals.c). */
#define AGENT_DISKS_MAX 256
#define AGENT_DISKS_TTL_NS (60 * ERG_NS_PER_S)
struct agent_disks {
  struct {
    char name[32];
    int physical;
  } dev[AGENT_DISKS_MAX];
  size_t n;
  uint64_t checked_ns; /* CLOCK_MONOTONIC when the answers were cleared */
};

/* The node files every sweep reads, kept open (totals.c). */
enum { AGENT_KEPT_STAT, AGENT_KEPT_MEMINFO, AGENT_KEPT_NETDEV, AGENT_KEPT_DISKSTATS, AGENT_KEPT_N };
void agent_kept_close(struct erg_agent *a);

/* Busy-time slices per sample at most (sub_interval_seconds). */
#define AGENT_MAX_SLICES 255

struct erg_agent {
  struct agent_users *users;
  struct erg_agent_config cfg;
  long ticks_per_s;
  long page_bytes;
  char boot_id[40];
  struct proc_table prev, cur;
  struct erg_cpu_totals cpu_prev;
  /* The busy counter read between sweeps (erg_agent_subsample): the
   * slices' ends of the next sample, and its slices as sent. */
  uint64_t sub_mono[AGENT_MAX_SLICES], sub_busy[AGENT_MAX_SLICES];
  size_t nsub;
  int sub_bad; /* the counter went back (scope gone): no slices this time */
  uint64_t slice_busy[AGENT_MAX_SLICES + 1], slice_end[AGENT_MAX_SLICES + 1];
  uint64_t disk_prev_r, disk_prev_w, disk_cur_r, disk_cur_w, net_prev_rx, net_prev_tx;
  struct agent_disks disks;
  int kept_fd[AGENT_KEPT_N]; /* node files kept open (totals.c): fd + 1, 0 none, -1 never */
  uint64_t rt_prev, mono_prev;
  uint64_t seq;
  int have_prev;
  Erg__Hello hello;
  char *features[16];
  struct erg_bpf *bpf;              /* NULL: the /proc path */
  int bpf_names_current;            /* erg_bpf_names_current: no /proc/PID/comm read */
  struct agent_gpu *gpu;            /* NULL: no GPUs (agent_gpu.c) */
  struct agent_gpu_notes gpu_notes; /* from opening them (erg_agent_gpu_note) */
  char gpu_stopped[512];            /* why they failed ("": they did not) */
  int gpu_stopped_said;             /* erg_agent_gpu_stopped returned it */
  int hello_changed;                /* erg_agent_hello_changed */
  struct cgroup_cache *cgroups;
  struct ident_cache *idents;        /* live processes' identity (eBPF path) */
  struct agent_exit_keys *exit_keys; /* AGENT_EXIT_KEYS, NULL: none kept */
  /* This sweep's node totals: on the eBPF path read at the drain's cut. */
  struct {
    struct erg_cpu_totals cpu;
    uint64_t mem, rx, tx;
    int have;
  } tot;
  struct erg_bpf_stats bpf_prev; /* at the last sweep, for the deltas */
  Erg__BpfHealth bpf_health;
  int map_full_noted;                    /* the process map's overflow was noted (once) */
  uint64_t map_full_news;                /* its drops then, until erg_agent_map_full */
  char bpf_unavailable[256];             /* why collection = auto fell back to /proc */
  uint32_t cap_classes[ERG_BPF_MAX_CAP]; /* capacity of each class (BPF path) */
  int ncap_classes;
  struct proc_extra *extra; /* parallel to procs when the tables have a split */
  size_t extra_cap;
  char scope_cpu[640], scope_mem[640]; /* the scope's accounting files */
  /* The sample under construction and what it points at. */
  Erg__Sample sample;
  Erg__Interval interval;
  Erg__NodeTotals totals;
  Erg__Proc *procs;
  Erg__Proc **proc_ptrs;
  struct agent_strings *strings; /* parallel to procs */
  size_t nprocs, procs_cap;
};

/* Growth of the counter at field_off since the previous sweep; all of it for
 * a process new in this sweep; 0 if the counter went back (never negative). */
static inline uint64_t agent_delta(uint64_t now, const struct proc_prev *old, size_t field_off) {
  if (!old)
    return now;
  uint64_t then = *(const uint64_t *)((const char *)old + field_off);
  return now >= then ? now - then : 0;
}
#define AGENT_DELTA(now, old, field) agent_delta(now, old, offsetof(struct proc_prev, field))

/* The files declared below are layered, each calling only the ones before
 * it, so no two call each other (scripts/cycles.py): proctable.c,
 * agent_procs.c; scope.c; totals.c; agent_bpf.c, agent_config.c; agent.c. */

/* Process table (proctable.c). */
struct proc_prev *table_find(struct proc_table *t, uint32_t pid, uint64_t start, int insert);
int table_reset(struct proc_table *t, size_t want);
void table_free(struct proc_table *t);
/* The split of slot s, or NULL when the table has none. */
static inline struct proc_split *table_split(const struct proc_table *t,
                                             const struct proc_prev *s) {
  return t->split && s ? &t->split[s - t->slots] : NULL;
}

/* Process entries (agent_procs.c). */
int agent_read(struct erg_agent *a, const char *rel, char *buf, size_t len);
Erg__Proc *agent_proc_slot(struct erg_agent *a);
/* Fills uid, rss, cgroup and grouping keys of slot p from /proc/<pid>
 * (not read when exited: the pid may be reused; then the keys come from
 * cgroup and, on hybrid hosts, cgroup_v1: the exited process's v1 path).
 * Returns 1 when /proc/<pid>/cgroup was read (the keys are its), else 0. */
int agent_proc_describe(struct erg_agent *a, Erg__Proc *p, uint32_t pid, const char *cgroup,
                        const char *cgroup_v1, int exited, uint64_t *shmem);
/* Slot p's cgroup and keys (packed as agent_strings.keys) from what is
 * known of them; nothing is read. */
void agent_proc_describe_known(struct erg_agent *a, Erg__Proc *p, const char *cgroup,
                               const char *keys);
/* Slot p's rss (RssAnon + RssFile) from /proc/<pid>/statm, with shmem its
 * RssShmem as last read from status (0 when the process is gone). */
void agent_proc_rss(struct erg_agent *a, Erg__Proc *p, uint32_t pid, uint64_t shmem);
uint64_t agent_ticks_to_ns(const struct erg_agent *a, uint64_t t);

/* Node totals (totals.c): read into a->tot, for this sweep. */
void agent_sweep_totals(struct erg_agent *a);

/* Scope (scope.c). */
int agent_cgroup2_root(char *out, size_t len);
int agent_scope_normalize(const char *in, char *out, size_t outlen, char *why, size_t whylen);
int agent_scope_open(struct erg_agent *a, char *why, size_t whylen);
int agent_scope_contains(const struct erg_agent *a, const char *cgroup);
int agent_pid_cgroup(struct erg_agent *a, uint32_t pid, char *out, size_t len);
uint64_t agent_scope_busy_ns(const struct erg_agent *a);
/* The cumulative busy ns the sample's cpu_busy_ns is a difference of. */
uint64_t agent_busy_counter_ns(const struct erg_agent *a, const struct erg_cpu_totals *cpu);
uint64_t agent_scope_mem_bytes(const struct erg_agent *a);

/* GPUs (agent_gpu.c): readings of gpu.h into the sample. It calls nothing
 * of the agent: agent.c drives it and adds the processes it names. */
struct agent_gpu;
int agent_gpu_config(struct erg_agent_config *cfg, const char *key, const char *value, char *why,
                     size_t whylen);
/* Opens the GPUs as cfg says and appends their features: 0 with *out NULL
 * when there are none (or gpu = off), -1 when gpu = nvml (rocm) and NVML
 * (ROCm SMI) is unusable. notes: what an operator hears of it. */
int agent_gpu_open(struct agent_gpu **out, const struct erg_agent_config *cfg, char **features,
                   size_t *nfeatures, size_t maxfeatures, struct agent_gpu_notes *notes, char *why,
                   size_t whylen);
/* Reads the GPUs (with ready, for this sample). -1: they failed (why, to
 * be said once), their features removed; close them. */
int agent_gpu_read(struct agent_gpu *ag, int ready, char **features, size_t *nfeatures, char *why,
                   size_t whylen);
/* The pids using a GPU in this sample that procs lacks (valid until the
 * next call). */
size_t agent_gpu_missing(struct agent_gpu *ag, const Erg__Proc *procs, size_t nprocs,
                         const uint32_t **pids);
/* The GPUs into s, each process's use of them onto its entry in procs. */
void agent_gpu_attach(struct agent_gpu *ag, Erg__Sample *s, Erg__Proc *procs, size_t nprocs);
void agent_gpu_close(struct agent_gpu *ag);

/* BPF path (agent_bpf.c). */
int agent_bpf_start(struct erg_agent *a, char *why, size_t whylen);
/* Drains the kernel counters into the sample; adds the CPU time seen.
 * -1 with why when the drain failed. */
int agent_bpf_collect(struct erg_agent *a, uint64_t *sum_cpu_ns, char *why, size_t whylen);
/* The BPF path's health since the last sweep into the sample (s->bpf);
 * notes the process map's first overflow (erg_agent_map_full). */
void agent_bpf_health(struct erg_agent *a, Erg__Sample *s);
void agent_bpf_stop(struct erg_agent *a);

#endif

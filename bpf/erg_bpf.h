// SPDX-License-Identifier: GPL-3.0-or-later
/* erg eBPF collection: per task group (process) CPU time, its split by CPU
 * frequency and core capacity, wakeups, migrations, block I/O bytes and, where
 * a PMU exists, cycles, instructions and LLC misses. A process that exits is
 * handed over once with its final counts, so short-lived processes are
 * charged. See docs/bpf.md.
 *
 * Built without BPF support (ERG_HAVE_BPF undefined or 0), the same API links
 * and erg_bpf_open fails with the reason "built without BPF support". */
#ifndef ERG_BPF_H
#define ERG_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ERG_BPF_MAX_FREQ 8          /* distinct frequencies kept per process */
#define ERG_BPF_MAX_CAP 4           /* distinct core capacity classes */
#define ERG_BPF_CAPACITY_SCALE 1024 /* capacity of the biggest core */

/* Feature bits: what this node can measure. */
enum {
  ERG_BPF_F_CPU_TIME = 1u << 0,
  ERG_BPF_F_FREQ = 1u << 1,
  ERG_BPF_F_CAPACITY = 1u << 2,
  ERG_BPF_F_WAKEUPS = 1u << 3,
  ERG_BPF_F_MIGRATIONS = 1u << 4,
  ERG_BPF_F_BLKIO = 1u << 5,
  ERG_BPF_F_CYCLES = 1u << 6,
  ERG_BPF_F_INSTRUCTIONS = 1u << 7,
  ERG_BPF_F_LLC_MISSES = 1u << 8,
};
#define ERG_BPF_F_ALL 0x1ffu

struct erg_bpf_opts {
  const char *sysfs_cpu_root; /* NULL: /sys/devices/system/cpu */
  bool disable_perf;          /* do not try hardware counters */
  bool libbpf_loader;         /* skip the light skeleton (tests; see docs/bpf.md) */
  bool no_thread_records;     /* no per-thread records (tests of the fallback) */
};

struct erg_bpf_proc {
  uint32_t pid;           /* tgid */
  uint64_t start_time_ns; /* leader start, CLOCK_BOOTTIME ns; /proc starttime =
                             start_time_ns / (1e9 / sysconf(_SC_CLK_TCK)) */
  char comm[16];          /* group leader's comm */
  uint32_t uid;           /* real uid of the leader */
  uint64_t cgroup_id;     /* cgroup v2 id (inode number of its directory) */
  uint64_t cgroup_v1_id;  /* exited, on a host with a v1 freezer hierarchy: its
                             cgroup, for erg_bpf_cgroup_path; 0: none */
  uint64_t meta_ns;       /* CLOCK_MONOTONIC when the kernel last took comm,
                             uid and cgroup_id (at most every 100 ms, as the
                             group's threads leave a CPU); 0: not known */
  /* Cumulative since the process was first seen. Counters of features not
   * in erg_bpf_features() are 0 and must not be reported. */
  uint64_t cpu_ns, wakeups, migrations, read_bytes, write_bytes;
  /* The part of cpu_ns that is slices still running: wall time since their
   * switch-in, an estimate. Their switch-out charges the thread's runtime,
   * which leaves out steal time (and IRQ time with IRQ_TIME_ACCOUNTING), so
   * the next cpu_ns may be lower by up to that much; cpu_ns - running_ns
   * never steps back. */
  uint64_t running_ns;
  uint64_t cycles, instructions, llc_misses;
  uint32_t nfreq; /* on-CPU time per CPU frequency */
  struct {
    uint32_t khz;
    uint64_t cpu_ns;
  } freq[ERG_BPF_MAX_FREQ];
  uint64_t freq_other_ns;           /* at frequencies beyond the first 8 */
  uint64_t cap_ns[ERG_BPF_MAX_CAP]; /* on-CPU ns per class, see erg_bpf_capacity_classes */
  uint64_t capacity_weighted_ns;    /* sum of ns * capacity / 1024 */
  bool exited;                      /* final record; the process is forgotten */
  bool kthread;                     /* a kernel thread: no memory of its own */
};

struct erg_bpf_stats {
  uint64_t map_full_drops;  /* events lost because the process map was full */
  uint64_t lost_exit_ns;    /* CPU ns of exit stragglers after the handover */
  uint64_t unseen_switches; /* switch-outs whose switch-in was not seen */
  uint64_t exited;          /* exited processes handed over so far */
  uint64_t drains;
  uint64_t unsettled;    /* group re-reads that never got a consistent
                            view of its running slices (then undercounted
                            by them until the next drain) */
  uint64_t running_only; /* records of groups running with no entry yet
                            (never switched out since the attach) */
};

struct erg_bpf;

/* Loads and attaches the programs. Returns 0, or -1 with a one-line reason
 * ("no BTF at /sys/kernel/btf/vmlinux", "permission denied: needs CAP_BPF
 * and CAP_PERFMON", ...) in why. */
int erg_bpf_open(struct erg_bpf **out, const struct erg_bpf_opts *opts, char *why, size_t whylen);
unsigned erg_bpf_features(const struct erg_bpf *b);
/* Why a feature is absent ("no cpufreq driver", ...) or NULL if present. */
const char *erg_bpf_feature_reason(const struct erg_bpf *b, unsigned bit);
/* "cpu_time", "freq", ...; NULL for an unknown bit. */
const char *erg_bpf_feature_name(unsigned bit);

/* Calls cb once per live process with cumulative counters (including the
 * slices running right now: a process that has not left its CPU since the
 * programs attached comes with that slice alone, its comm from /proc, uid
 * and cgroup_id 0), and once per exited process with its final
 * counts (exited = true), after which it is forgotten. Returns the number of
 * records or -1 with reason in why. */
typedef void (*erg_bpf_drain_cb)(const struct erg_bpf_proc *p, void *user);
int erg_bpf_drain(struct erg_bpf *b, erg_bpf_drain_cb cb, void *user, char *why, size_t whylen);
/* cb(user) runs in every drain right after the counters are cut, before the
 * first record: node-wide readings taken there (/proc/stat busy time) cover
 * the same time as the records, however long the callbacks then take. */
typedef void (*erg_bpf_cut_cb)(void *user);
void erg_bpf_set_cut_cb(struct erg_bpf *b, erg_bpf_cut_cb cb, void *user);
void erg_bpf_stats(const struct erg_bpf *b, struct erg_bpf_stats *out);
/* CLOCK_MONOTONIC at which the last drain cut the counters (running slices
 * are charged up to it); 0 before the first drain. */
uint64_t erg_bpf_drain_time_ns(const struct erg_bpf *b);
/* The cgroup v2 path ("/a/b", from the hierarchy root) of cgroup id, as the
 * kernel had it when one of its processes exited: still known after the
 * cgroup was removed. 0, or -1 if the kernel recorded none (the cgroup had
 * no exits, or is deeper than 16 levels, or was evicted: 1024 are kept). */
int erg_bpf_cgroup_path(const struct erg_bpf *b, uint64_t id, char *out, size_t len);
/* Capacity of each class (ascending), as used for cap_ns; returns count. */
int erg_bpf_capacity_classes(const struct erg_bpf *b, uint32_t out[ERG_BPF_MAX_CAP]);
void erg_bpf_close(struct erg_bpf *b);
/* NULL when every online CPU runs the unseen-switch repair clock (docs/bpf.md
 * "Unseen switches"), else why not ("perf_event_open ... on CPU 3: ..."). */
const char *erg_bpf_heal_reason(const struct erg_bpf *b);
/* NULL when slices are charged from per-thread records (exact whatever
 * switches the tracepoint misses, docs/bpf.md "Exact slices"), else why
 * not (only erg_bpf_opts.no_thread_records turns them off). */
const char *erg_bpf_thread_records_reason(const struct erg_bpf *b);
/* Which loader loaded the programs: "light" (in-kernel loader, 5.17+) or
 * "libbpf" (reads the kernel BTF in this process). */
const char *erg_bpf_loader(const struct erg_bpf *b);
/* True when a group's name follows its leader's renames (prctl, exec) at
 * once (the task_rename program is attached): a live process's name then
 * needs no read of /proc/PID/comm. */
bool erg_bpf_names_current(const struct erg_bpf *b);

/* ---- sysfs helpers (pure, no BPF) ---- */
/* Parses a sysfs CPU list ("0-3,5,7-8\n") into mask[0..max) (CPUs >= max
 * are ignored); returns how many of them are set, -1 if malformed. */
int erg_bpf_parse_cpu_list(const char *s, bool *mask, int max);
/* root/online into mask; without that file every CPU counts as online.
 * Returns the count set, -1 if the file is malformed. */
int erg_bpf_read_online(const char *root, bool *mask, int max);
/* Reads root/cpuN/cpu_capacity for online N < max into out[N] (0 where
 * absent or offline).
 * Returns the number of CPUs scanned (highest present N + 1), 0 if no CPU
 * has the file, -1 if root cannot be read. */
int erg_bpf_read_capacities(const char *root, uint32_t *out, int max);
/* Same for root/cpuN/cpufreq/scaling_cur_freq (kHz). */
int erg_bpf_read_frequencies(const char *root, uint32_t *out, int max);
/* Distinct nonzero capacities of caps[0..n) in ascending order into classes;
 * returns their count, or -1 if there are more than maxc. The capacity
 * feature needs at least 2. */
int erg_bpf_capacity_group(const uint32_t *caps, int n, uint32_t *classes, int maxc);

#endif

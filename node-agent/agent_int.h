/* Internal to the agent library: the state shared by the /proc and the
 * BPF collection paths. */
#ifndef ERG_AGENT_INT_H
#define ERG_AGENT_INT_H

#include "erg_agent.h"
#include "erg_bpf.h"

struct proc_prev {
  uint32_t pid;
  uint64_t start_ticks;
  uint64_t cpu;              /* ticks on the /proc path, ns on the BPF path */
  uint64_t read_bytes, write_bytes;
  uint64_t wakeups, migrations, cycles, instructions, llc_misses;
  int used;
};

/* Open-addressed table of last sweep's counters; rebuilt every sweep, so no
 * deletions are ever needed. */
struct proc_table {
  struct proc_prev *slots;
  size_t cap, used;
};

struct erg_agent {
  struct erg_agent_config cfg;
  long ticks_per_s;
  char boot_id[40];
  struct proc_table prev, cur;
  struct erg_cpu_totals cpu_prev;
  uint64_t disk_prev_r, disk_prev_w, disk_cur_r, disk_cur_w, net_prev_rx, net_prev_tx;
  uint64_t rt_prev, mono_prev;
  uint64_t seq;
  int have_prev;
  Erg__Hello hello;
  char *features[16];
  struct erg_bpf *bpf;      /* NULL: the /proc path */
  struct cgroup_cache *cgroups;
  char scope_cpu[640], scope_mem[640]; /* the scope's accounting files */
  /* The sample under construction and what it points at. */
  Erg__Sample sample;
  Erg__Interval interval;
  Erg__NodeTotals totals;
  Erg__Proc *procs;
  Erg__Proc **proc_ptrs;
  char (*strings)[3][128];
  size_t nprocs, procs_cap;
};

struct proc_prev *table_find(struct proc_table *t, uint32_t pid, uint64_t start, int insert);
int table_reset(struct proc_table *t, size_t want);
int agent_read(struct erg_agent *a, const char *rel, char *buf, size_t len);
Erg__Proc *agent_proc_slot(struct erg_agent *a);
/* Fills uid, rss, cgroup and grouping keys of slot p from /proc/<pid>. */
void agent_proc_describe(struct erg_agent *a, Erg__Proc *p, uint32_t pid, const char *cgroup);
void agent_read_totals(struct erg_agent *a, struct erg_cpu_totals *cpu, uint64_t *mem,
                       uint64_t *rx, uint64_t *tx);
void agent_fill_sample(struct erg_agent *a, uint64_t rt, uint64_t mono,
                       const struct erg_cpu_totals *cpu, uint64_t mem, uint64_t rx, uint64_t tx,
                       uint64_t sum_cpu_ns);
void agent_advance(struct erg_agent *a, uint64_t rt, uint64_t mono,
                   const struct erg_cpu_totals *cpu, uint64_t rx, uint64_t tx);
uint64_t agent_ticks_to_ns(const struct erg_agent *a, uint64_t t);

/* Scope (scope.c). */
int agent_cgroup2_root(char *out, size_t len);
int agent_scope_normalize(const char *in, char *out, size_t outlen, char *why, size_t whylen);
int agent_scope_open(struct erg_agent *a, char *why, size_t whylen);
int agent_scope_contains(const struct erg_agent *a, const char *cgroup);
int agent_pid_cgroup(struct erg_agent *a, uint32_t pid, char *out, size_t len);
uint64_t agent_scope_busy_ns(const struct erg_agent *a);
uint64_t agent_scope_mem_bytes(const struct erg_agent *a);

/* BPF path (agent_bpf.c). */
int agent_bpf_start(struct erg_agent *a, char *why, size_t whylen);
/* Drains the kernel counters into the sample; adds the CPU time seen. */
int agent_bpf_collect(struct erg_agent *a, uint64_t *sum_cpu_ns);
void agent_bpf_stop(struct erg_agent *a);

#endif

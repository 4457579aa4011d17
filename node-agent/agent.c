/* The /proc collection path: one sweep per interval, deltas per
 * (pid, start time) against the previous sweep. */
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "agent_int.h"

static size_t table_hash(uint32_t pid, uint64_t start) {
  return (size_t)((pid * 2654435761u) ^ (start * 0x9E3779B97F4A7C15ULL));
}

static int table_alloc(struct proc_table *t, size_t cap) {
  t->slots = calloc(cap, sizeof *t->slots);
  t->split = t->with_split ? calloc(cap, sizeof *t->split) : NULL;
  t->cap = t->slots && (t->split || !t->with_split) ? cap : 0;
  t->used = 0;
  return t->cap ? 0 : -1;
}

void table_free(struct proc_table *t) {
  free(t->slots);
  free(t->split);
  t->slots = NULL;
  t->split = NULL;
  t->cap = t->used = 0;
}

int table_reset(struct proc_table *t, size_t want) {
  size_t cap = 1024;
  while (cap < want * 2)
    cap <<= 1;
  if (cap != t->cap) {
    table_free(t);
    return table_alloc(t, cap);
  }
  memset(t->slots, 0, cap * sizeof *t->slots);
  if (t->split)
    memset(t->split, 0, cap * sizeof *t->split);
  t->used = 0;
  return 0;
}

/* Doubles the table when a burst of new processes fills it mid-sweep. */
static int table_grow(struct proc_table *t) {
  struct proc_table n = {.with_split = t->with_split};
  if (table_alloc(&n, t->cap * 2) != 0) {
    table_free(&n);
    return -1;
  }
  for (size_t i = 0; i < t->cap; i++) {
    const struct proc_prev *o = &t->slots[i];
    if (!o->used)
      continue;
    struct proc_prev *s = table_find(&n, o->pid, o->start_ticks, 1);
    *s = *o;
    if (t->split)
      *table_split(&n, s) = t->split[i];
  }
  table_free(t);
  *t = n;
  return 0;
}

struct proc_prev *table_find(struct proc_table *t, uint32_t pid, uint64_t start,
                                    int insert) {
  if (!t->cap)
    return NULL;
  if (insert && (t->used + 1) * 2 > t->cap && table_grow(t) != 0)
    return NULL;
  size_t i = table_hash(pid, start) & (t->cap - 1);
  for (;;) {
    struct proc_prev *s = &t->slots[i];
    if (!s->used) {
      if (!insert)
        return NULL;
      s->used = 1;
      s->pid = pid;
      s->start_ticks = start;
      t->used++;
      return s;
    }
    if (s->pid == pid && s->start_ticks == start)
      return s;
    i = (i + 1) & (t->cap - 1);
  }
}

void erg_agent_config_defaults(struct erg_agent_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  if (gethostname(cfg->node, sizeof cfg->node) != 0)
    strcpy(cfg->node, "localhost");
  cfg->node[sizeof cfg->node - 1] = '\0';
  strcpy(cfg->collector, "tcp://127.0.0.1:9711");
  cfg->interval_seconds = 1.0;
  cfg->queue_samples = 3600;
  cfg->resend_samples = 60;
  strcpy(cfg->proc_root, "/proc");
  strcpy(cfg->collection, "auto");
  cfg->log_level = ERG_LOG_INFO;
}

/* The collector's public key, inline (40 Z85 characters) or a file holding
 * it. Z85 has '/': 38 % of keys hold one, and were read as a file name
 * before. A value that decodes is the key unless a file has that name. */
int erg_agent_server_key(const char *value, char out[ERG_KEY_Z85_LEN + 1], char *why,
                         size_t whylen) {
  uint8_t bin[32];
  char inner[400];
  if (strlen(value) == ERG_KEY_Z85_LEN && zmq_z85_decode(bin, value) && access(value, F_OK)) {
    memcpy(out, value, ERG_KEY_Z85_LEN + 1);
    return 0;
  }
  if (erg_key_read_file(value, out, inner, sizeof inner) == 0)
    return 0;
  snprintf(why, whylen, "'%.64s' is neither a 40-character Z85 CURVE key nor a readable key "
           "file (%s)", value, inner);
  return -1;
}

/* Read at load, so that a cut or mistyped key fails the config check, not
 * the agent's start. */
static int agent_config_server_key(struct erg_agent_config *cfg, const char *value, char *why,
                                   size_t whylen) {
  char key[ERG_KEY_Z85_LEN + 1], inner[500];
  if (strlen(value) >= sizeof cfg->curve_server_key) {
    snprintf(why, whylen, "key 'curve_server_key': longer than %zu bytes",
             sizeof cfg->curve_server_key - 1);
    return -1;
  }
  if (erg_agent_server_key(value, key, inner, sizeof inner) != 0) {
    snprintf(why, whylen, "key 'curve_server_key': %s", inner);
    return -1;
  }
  erg_strlcpy(cfg->curve_server_key, value, sizeof cfg->curve_server_key);
  return 0;
}

static int agent_config_cb(void *user, const char *section, const char *key, const char *value,
                           char *why, size_t whylen) {
  struct erg_agent_config *cfg = user;
  if (strcmp(section, "agent") != 0) {
    snprintf(why, whylen, "unknown section [%s] (erg-agent reads [agent])", section);
    return -1;
  }
  if (strcmp(key, "node") == 0) {
    if (!value[0] || strlen(value) >= sizeof cfg->node) {
      snprintf(why, whylen, "key 'node': must be 1..%zu bytes", sizeof cfg->node - 1);
      return -1;
    }
    erg_strlcpy(cfg->node, value, sizeof cfg->node);
    return 0;
  }
  if (strcmp(key, "collector") == 0) {
    char inner[200];
    if (strlen(value) >= sizeof cfg->collector || erg_config_endpoint(value, inner, sizeof inner)) {
      snprintf(why, whylen, "key 'collector': %s", strlen(value) >= sizeof cfg->collector
                                                        ? "too long" : inner);
      return -1;
    }
    erg_strlcpy(cfg->collector, value, sizeof cfg->collector);
    return 0;
  }
  if (strcmp(key, "curve_server_key") == 0)
    return agent_config_server_key(cfg, value, why, whylen);
  if (strcmp(key, "curve_secret_key_file") == 0) {
    erg_strlcpy(cfg->curve_secret_key_file, value, sizeof cfg->curve_secret_key_file);
    return 0;
  }
  if (strcmp(key, "collection") == 0) {
    if (strcmp(value, "auto") && strcmp(value, "bpf") && strcmp(value, "proc")) {
      snprintf(why, whylen, "key 'collection': '%s' is not auto, bpf or proc", value);
      return -1;
    }
    erg_strlcpy(cfg->collection, value, sizeof cfg->collection);
    return 0;
  }
  if (strcmp(key, "scope") == 0)
    return agent_scope_normalize(value, cfg->scope, sizeof cfg->scope, why, whylen);
  if (strcmp(key, "proc_root") == 0) {
    erg_strlcpy(cfg->proc_root, value, sizeof cfg->proc_root);
    return 0;
  }
  if (strcmp(key, "sysfs_cpu_root") == 0) {
    erg_strlcpy(cfg->sysfs_cpu_root, value, sizeof cfg->sysfs_cpu_root);
    return 0;
  }
  if (strcmp(key, "gpu") == 0 || strcmp(key, "nvml_library") == 0) /* agent_gpu.c */
    return agent_gpu_config(cfg, key, value, why, whylen);
  char inner[256];
  int rc = -1;
  if (strcmp(key, "interval_seconds") == 0)
    rc = erg_config_double(value, 0.1, 3600, &cfg->interval_seconds, inner, sizeof inner);
  else if (strcmp(key, "queue_samples") == 0)
    rc = erg_config_long(value, 1, 10000000, &cfg->queue_samples, inner, sizeof inner);
  else if (strcmp(key, "resend_samples") == 0)
    rc = erg_config_long(value, 0, 100000, &cfg->resend_samples, inner, sizeof inner);
  else if (strcmp(key, "heartbeat_seconds") == 0) /* ×3 must fit ZMTP's 6553 s TTL */
    rc = erg_config_double(value, 0.1, 600, &cfg->heartbeat_seconds, inner, sizeof inner);
  else if (strcmp(key, "log_level") == 0) {
    cfg->log_level = erg_log_level_parse(value);
    rc = cfg->log_level < 0 ? -1 : 0;
    snprintf(inner, sizeof inner, "'%s' is not one of error, warning, info, debug", value);
  } else {
    snprintf(why, whylen, "unknown key '%s' in [agent]", key);
    return -1;
  }
  if (rc != 0)
    snprintf(why, whylen, "key '%s': %s", key, inner);
  return rc;
}

int erg_agent_config_load(const char *path, struct erg_agent_config *cfg,
                          struct erg_config_error *err) {
  return erg_config_parse(path, agent_config_cb, cfg, err);
}

int erg_agent_config_set(struct erg_agent_config *cfg, const char *key, const char *value,
                         char *why, size_t whylen) {
  return agent_config_cb(cfg, "agent", key, value, why, whylen);
}

int agent_read(struct erg_agent *a, const char *rel, char *buf, size_t len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", a->cfg.proc_root, rel);
  return erg_read_file(path, buf, len) < 0 ? -1 : 0;
}

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
      /* The one line an operator needs to see when nodes fall back. */
      erg_warn("BPF unavailable: %s; using /proc", bwhy);
    }
  }
  if (agent_gpu_open(&a->gpu, cfg, a->features, &a->hello.n_features,
                     sizeof a->features / sizeof a->features[0], why, whylen) != 0) {
    erg_agent_close(a);
    return -1;
  }
  *out = a;
  return 0;
}

const Erg__Hello *erg_agent_hello(struct erg_agent *a) { return &a->hello; }

int erg_agent_hello_changed(struct erg_agent *a) {
  int c = a->hello_changed;
  a->hello_changed = 0;
  return c;
}

/* The procs' string fields point into a->strings; when that block moves,
 * every pointer into it moves by the same offset. Offsets are taken as
 * integers before the realloc, so no freed pointer is ever used. */
static void agent_strings_rebase(struct erg_agent *a, uintptr_t old_base, size_t old_len) {
  uintptr_t new_base = (uintptr_t)a->strings;
  for (size_t i = 0; i < a->nprocs; i++) {
    char **f[] = {&a->procs[i].comm, &a->procs[i].cgroup, &a->procs[i].job,
                  &a->procs[i].unit, &a->procs[i].container};
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

/* uid, rss, cgroup and the grouping keys of slot p. cgroup may be given
 * (scoped: already read; exited: resolved from the kernel's cgroup id) or
 * NULL to read /proc. An exited process's pid may already belong to a new
 * process, so its /proc is not read at all. */
void agent_proc_describe(struct erg_agent *a, Erg__Proc *p, uint32_t pid, const char *cgroup,
                         const char *cgroup_v1, int exited) {
  char path[128], buf[4096];
  size_t idx = (size_t)(p - a->procs);
  char *cg = a->strings[idx].cgroup;
  struct erg_proc_status status = {0};
  snprintf(path, sizeof path, "%u/status", pid);
  if (!exited && agent_read(a, path, buf, sizeof buf) == 0 &&
      erg_proc_parse_status(buf, &status) == 0)
    p->uid = status.uid;
  p->rss_bytes = status.rss_anon_bytes + status.rss_file_bytes;
  snprintf(path, sizeof path, "%u/cgroup", pid);
  int have = !exited && agent_read(a, path, buf, sizeof buf) == 0;
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
  char *k = a->strings[idx].keys;
  size_t jl = strlen(keys.job), ul = strlen(keys.unit);
  memcpy(k, keys.job, jl + 1);
  memcpy(k + jl + 1, keys.unit, ul + 1);
  memcpy(k + jl + 1 + ul + 1, keys.container, strlen(keys.container) + 1);
  p->job = k;
  p->unit = k + jl + 1;
  p->container = k + jl + 1 + ul + 1;
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
  agent_proc_describe(a, p, st.pid, cgp, NULL, 0);
}

/* Whole physical disks only: partitions, device-mapper and md devices
 * would count the same bytes twice, loop and ram devices not at all. */
static int disk_is_physical(const char *dev) {
  char path[128];
  snprintf(path, sizeof path, "/sys/block/%s/device", dev);
  return access(path, F_OK) == 0;
}

static void agent_read_disk(struct erg_agent *a, uint64_t *r, uint64_t *w) {
  char buf[16384];
  *r = *w = 0;
  if (agent_read(a, "diskstats", buf, sizeof buf) == 0)
    erg_proc_parse_diskstats(buf, disk_is_physical, r, w);
}

void agent_read_totals(struct erg_agent *a, struct erg_cpu_totals *cpu, uint64_t *mem,
                              uint64_t *rx, uint64_t *tx) {
  char buf[16384];
  memset(cpu, 0, sizeof *cpu);
  if (agent_read(a, "stat", buf, sizeof buf) == 0)
    erg_proc_parse_cpu_totals(buf, cpu);
  *mem = 0;
  if (agent_read(a, "meminfo", buf, sizeof buf) == 0)
    erg_proc_parse_meminfo(buf, mem);
  *rx = *tx = 0;
  if (agent_read(a, "net/dev", buf, sizeof buf) == 0)
    erg_proc_parse_netdev(buf, rx, tx);
  agent_read_disk(a, &a->disk_cur_r, &a->disk_cur_w);
  if (a->cfg.scope[0]) {
    cpu->scope_busy_ns = agent_scope_busy_ns(a);
    uint64_t m = agent_scope_mem_bytes(a);
    *mem = m ? m : *mem;
  }
}

void agent_fill_sample(struct erg_agent *a, uint64_t rt, uint64_t mono,
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
                  ? cpu->scope_busy_ns - a->cpu_prev.scope_busy_ns : 0;
    idle_ns = cap > busy_ns ? cap - busy_ns : 0;
  }
  a->totals.cpu_busy_ns = busy_ns;
  a->totals.cpu_idle_ns = idle_ns;
  a->totals.mem_used_bytes = mem;
  a->totals.disk_read_bytes = a->disk_cur_r >= a->disk_prev_r ? a->disk_cur_r - a->disk_prev_r : 0;
  a->totals.disk_write_bytes =
      a->disk_cur_w >= a->disk_prev_w ? a->disk_cur_w - a->disk_prev_w : 0;
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
  s->collection = a->hello.collection;
  if (a->users)
    agent_users_fill(a->users, s, mono);
}

void agent_advance(struct erg_agent *a, uint64_t rt, uint64_t mono,
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
}

/* The /proc path's share of a sweep: every process under proc_root. */
static int agent_proc_collect(struct erg_agent *a, uint64_t *sum_cpu_ns) {
  DIR *d = opendir(a->cfg.proc_root);
  if (!d)
    return -1;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] < '1' || de->d_name[0] > '9')
      continue;
    agent_sweep_pid(a, de->d_name, sum_cpu_ns);
  }
  closedir(d);
  return 0;
}

void agent_sweep_totals(struct erg_agent *a) {
  agent_read_totals(a, &a->tot.cpu, &a->tot.mem, &a->tot.rx, &a->tot.tx);
  a->tot.have = 1;
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
  agent_proc_describe(a, p, pid, a->cfg.scope[0] ? cg : NULL, NULL, 0);
}

/* The GPUs' readings, and their processes into the sample. GPUs that fail
 * leave the hello (a->hello_changed) and the samples. */
static void agent_sweep_gpus(struct erg_agent *a, int ready) {
  if (a->gpu && agent_gpu_read(a->gpu, ready, a->features, &a->hello.n_features) != 0) {
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
int erg_agent_sweep(struct erg_agent *a, const Erg__Sample **out) {
  uint64_t rt = erg_time_realtime_ns(), mono = erg_time_monotonic_ns();
  uint64_t sum_cpu_ns = 0;
  if (table_reset(&a->cur, a->prev.used + 64) != 0)
    return -1;
  a->nprocs = 0;
  /* /proc: totals first, as ever (processes are read all through the
   * sweep). eBPF: the drain reads them at its cut (agent_bpf_start). */
  a->tot.have = 0;
  if (!a->bpf)
    agent_sweep_totals(a);
  int rc = a->bpf ? agent_bpf_collect(a, &sum_cpu_ns) : agent_proc_collect(a, &sum_cpu_ns);
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

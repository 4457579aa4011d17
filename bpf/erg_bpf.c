/* Userspace loader and drain for erg.bpf.c (libbpf skeleton). */
#include "erg_bpf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"

#define ERG_SYSFS_CPU_DEFAULT "/sys/devices/system/cpu"
#define ERG_BTF_VMLINUX "/sys/kernel/btf/vmlinux"

#if !defined(ERG_HAVE_BPF) || !ERG_HAVE_BPF

int erg_bpf_open(struct erg_bpf **out, const struct erg_bpf_opts *opts, char *why,
                 size_t whylen)
{
  (void)opts;
  *out = NULL;
  erg_strlcpy(why, "built without BPF support", whylen);
  return -1;
}
unsigned erg_bpf_features(const struct erg_bpf *b) { (void)b; return 0; }
const char *erg_bpf_feature_reason(const struct erg_bpf *b, unsigned bit)
{
  (void)b;
  (void)bit;
  return "built without BPF support";
}
int erg_bpf_drain(struct erg_bpf *b, erg_bpf_drain_cb cb, void *user, char *why,
                  size_t whylen)
{
  (void)b;
  (void)cb;
  (void)user;
  erg_strlcpy(why, "built without BPF support", whylen);
  return -1;
}
void erg_bpf_stats(const struct erg_bpf *b, struct erg_bpf_stats *out)
{
  (void)b;
  memset(out, 0, sizeof(*out));
}
int erg_bpf_capacity_classes(const struct erg_bpf *b, uint32_t out[ERG_BPF_MAX_CAP])
{
  (void)b;
  (void)out;
  return 0;
}
void erg_bpf_close(struct erg_bpf *b) { (void)b; }

#else /* ERG_HAVE_BPF */

#include <limits.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "erg_bpf_shared.h"
#include "erg_kern.skel.h"

_Static_assert(ERG_BPF_NFREQ == ERG_BPF_MAX_FREQ, "frequency slots differ");
_Static_assert(ERG_BPF_NCAP == ERG_BPF_MAX_CAP, "capacity classes differ");

#define NFEAT 9
#define NPERF 3
#define DRAIN_CHUNK 1024

struct erg_bpf {
  struct erg_kern *skel;
  unsigned features;
  const char *reason[NFEAT];
  char root[PATH_MAX];
  int ncpu;
  uint32_t *cpu_class; /* per CPU, index into classes */
  uint32_t classes[ERG_BPF_MAX_CAP];
  int nclass;
  uint32_t *freq; /* scratch for sysfs frequency refresh */
  int *perf_fd;   /* NPERF * ncpu, -1 = none */
  struct erg_key *keys;
  struct erg_counts *vals;
  size_t cap; /* capacity of keys/vals */
  uint64_t exited, drains;
};

/* ---- libbpf messages: kept, not printed, so a reason can quote them ---- */
static char libbpf_last[160];

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
  char buf[sizeof(libbpf_last)];
  size_t n;

  if (level == LIBBPF_DEBUG)
    return 0;
  vsnprintf(buf, sizeof(buf), fmt, ap);
  n = strlen(buf);
  while (n && buf[n - 1] == '\n')
    buf[--n] = '\0';
  if (n)
    memcpy(libbpf_last, buf, n + 1);
  return 0;
}

static int bit_index(unsigned bit)
{
  return __builtin_ctz(bit);
}

static void feature_drop(struct erg_bpf *b, unsigned bit, const char *reason)
{
  b->features &= ~bit;
  b->reason[bit_index(bit)] = reason;
}

/* ---- tracepoint probing ---- */
static bool btf_has_tracepoint(const struct btf *btf, const char *tp)
{
  char name[128];

  snprintf(name, sizeof(name), "btf_trace_%s", tp);
  return btf && btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) > 0;
}

/* Disables programs whose tracepoint this kernel lacks, and their feature. */
static int bpf_tracepoints_probe(struct erg_bpf *b, char *why, size_t whylen)
{
  struct btf *btf = btf__load_vmlinux_btf();
  struct erg_kern *s = b->skel;
  const struct {
    struct bpf_program *prog;
    const char *tp;
    unsigned bit; /* 0: required */
  } t[] = {
      {s->progs.erg_sched_switch, "sched_switch", 0},
      {s->progs.erg_sched_process_exit, "sched_process_exit", 0},
      {s->progs.erg_sched_wakeup, "sched_wakeup", ERG_BPF_F_WAKEUPS},
      {s->progs.erg_sched_wakeup_new, "sched_wakeup_new", ERG_BPF_F_WAKEUPS},
      {s->progs.erg_sched_migrate_task, "sched_migrate_task", ERG_BPF_F_MIGRATIONS},
      {s->progs.erg_block_bio_queue, "block_bio_queue", ERG_BPF_F_BLKIO},
      {s->progs.erg_cpu_frequency, "cpu_frequency", 0},
  };

  if (!btf) {
    snprintf(why, whylen, "cannot read kernel BTF: %s", strerror(errno));
    return -1;
  }
  for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    if (btf_has_tracepoint(btf, t[i].tp))
      continue;
    if (t[i].prog == s->progs.erg_cpu_frequency) {
      /* Frequencies then come from sysfs at each drain only. */
      bpf_program__set_autoload(t[i].prog, false);
      continue;
    }
    if (!t[i].bit) {
      snprintf(why, whylen, "kernel lacks tracepoint %s", t[i].tp);
      btf__free(btf);
      return -1;
    }
    bpf_program__set_autoload(t[i].prog, false);
    feature_drop(b, t[i].bit, "tracepoint missing in this kernel");
  }
  btf__free(btf);
  return 0;
}

/* ---- capacity and frequency from sysfs ---- */
static void capacity_setup(struct erg_bpf *b)
{
  uint32_t *caps = calloc((size_t)b->ncpu, sizeof(*caps));
  int n = caps ? erg_bpf_read_capacities(b->root, caps, b->ncpu) : -1;

  b->nclass = n > 0 ? erg_bpf_capacity_group(caps, n, b->classes, ERG_BPF_MAX_CAP) : 0;
  if (n <= 0)
    feature_drop(b, ERG_BPF_F_CAPACITY, "no cpu_capacity in sysfs");
  else if (b->nclass < 0)
    feature_drop(b, ERG_BPF_F_CAPACITY, "more than 4 core capacity classes");
  else if (b->nclass < 2)
    feature_drop(b, ERG_BPF_F_CAPACITY, "all cores have the same capacity");
  for (int c = 0; c < b->ncpu && (b->features & ERG_BPF_F_CAPACITY); c++)
    for (int k = 0; k < b->nclass; k++)
      if (caps[c] == b->classes[k])
        b->cpu_class[c] = (uint32_t)k;
  free(caps);
}

static void freq_setup(struct erg_bpf *b)
{
  if (erg_bpf_read_frequencies(b->root, b->freq, b->ncpu) <= 0)
    feature_drop(b, ERG_BPF_F_FREQ, "no cpufreq scaling_cur_freq in sysfs");
}

/* The cpu_frequency tracepoint is silent without a cpufreq driver, and
 * intel_pstate in active mode never emits it: the sysfs value, refreshed at
 * every drain, is the floor of what we know. */
static void freq_refresh(struct erg_bpf *b)
{
  int fd = bpf_map__fd(b->skel->maps.cpu_freq);
  int n = erg_bpf_read_frequencies(b->root, b->freq, b->ncpu);

  for (int c = 0; c < n; c++) {
    uint32_t key = (uint32_t)c;
    if (b->freq[c])
      bpf_map_update_elem(fd, &key, &b->freq[c], BPF_ANY);
  }
}

/* ---- hardware counters ---- */
static int perf_open_cpu(uint64_t config, int cpu)
{
  struct perf_event_attr a;

  memset(&a, 0, sizeof(a));
  a.type = PERF_TYPE_HARDWARE;
  a.size = sizeof(a);
  a.config = config;
  return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* One counter per CPU for each event; an event is a feature only when it
 * opens on every CPU (a VM without a virtual PMU fails here). */
static void perf_setup(struct erg_bpf *b, bool disabled)
{
  static const uint64_t cfg[NPERF] = {PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS,
                                      PERF_COUNT_HW_CACHE_MISSES};
  static const unsigned bit[NPERF] = {ERG_BPF_F_CYCLES, ERG_BPF_F_INSTRUCTIONS,
                                      ERG_BPF_F_LLC_MISSES};

  for (int e = 0; e < NPERF; e++) {
    int *fd = &b->perf_fd[e * b->ncpu];
    if (disabled) {
      feature_drop(b, bit[e], "disabled by option");
      continue;
    }
    for (int c = 0; c < b->ncpu; c++) {
      fd[c] = perf_open_cpu(cfg[e], c);
      if (fd[c] >= 0)
        continue;
      feature_drop(b, bit[e], errno == ENOENT || errno == EOPNOTSUPP
                                  ? "no hardware PMU event (VM?)"
                                  : "perf_event_open failed (needs CAP_PERFMON)");
      for (int k = 0; k <= c; k++) {
        if (fd[k] >= 0)
          close(fd[k]);
        fd[k] = -1;
      }
      break;
    }
  }
}

static int perf_maps_fill(struct erg_bpf *b)
{
  struct bpf_map *m[NPERF] = {b->skel->maps.perf_cycles, b->skel->maps.perf_instr,
                              b->skel->maps.perf_llc};

  for (int e = 0; e < NPERF; e++)
    for (int c = 0; c < b->ncpu; c++) {
      uint32_t key = (uint32_t)c;
      int fd = b->perf_fd[e * b->ncpu + c];
      if (fd >= 0 && bpf_map_update_elem(bpf_map__fd(m[e]), &key, &fd, BPF_ANY))
        return -1;
    }
  return 0;
}

static int cpu_maps_fill(struct erg_bpf *b)
{
  int fclass = bpf_map__fd(b->skel->maps.cpu_class);

  for (int c = 0; c < b->ncpu; c++) {
    uint32_t key = (uint32_t)c;
    if (bpf_map_update_elem(fclass, &key, &b->cpu_class[c], BPF_ANY))
      return -1;
  }
  if (b->features & ERG_BPF_F_FREQ)
    freq_refresh(b);
  return 0;
}

/* ---- open / close ---- */
static void load_reason(int err, char *why, size_t whylen)
{
  if (err == -EPERM || err == -EACCES)
    snprintf(why, whylen, "permission denied loading BPF (needs root, or CAP_BPF, "
                          "CAP_PERFMON and CAP_SYS_RESOURCE)");
  else
    snprintf(why, whylen, "loading BPF programs failed: %s%s%s", strerror(-err),
             libbpf_last[0] ? ": " : "", libbpf_last);
}

static int bpf_alloc(struct erg_bpf *b, const struct erg_bpf_opts *opts)
{
  const char *root = opts && opts->sysfs_cpu_root ? opts->sysfs_cpu_root
                                                  : ERG_SYSFS_CPU_DEFAULT;

  erg_strlcpy(b->root, root, sizeof(b->root));
  b->ncpu = libbpf_num_possible_cpus();
  if (b->ncpu <= 0)
    return -1;
  b->cpu_class = calloc((size_t)b->ncpu, sizeof(*b->cpu_class));
  b->freq = calloc((size_t)b->ncpu, sizeof(*b->freq));
  b->perf_fd = malloc(sizeof(int) * NPERF * (size_t)b->ncpu);
  if (!b->cpu_class || !b->freq || !b->perf_fd)
    return -1;
  for (int i = 0; i < NPERF * b->ncpu; i++)
    b->perf_fd[i] = -1;
  return 0;
}

static int bpf_load(struct erg_bpf *b, const struct erg_bpf_opts *opts, char *why,
                    size_t whylen)
{
  struct erg_kern *s = b->skel;
  int err;

  if (bpf_tracepoints_probe(b, why, whylen))
    return -1;
  capacity_setup(b);
  freq_setup(b);
  perf_setup(b, opts && opts->disable_perf);
  bpf_map__set_max_entries(s->maps.cpu_freq, (uint32_t)b->ncpu);
  bpf_map__set_max_entries(s->maps.cpu_class, (uint32_t)b->ncpu);
  s->rodata->freq_on = (b->features & ERG_BPF_F_FREQ) != 0;
  s->rodata->cap_on = (b->features & ERG_BPF_F_CAPACITY) != 0;
  s->rodata->perf_on =
      (b->features & (ERG_BPF_F_CYCLES | ERG_BPF_F_INSTRUCTIONS | ERG_BPF_F_LLC_MISSES)) != 0;
  err = erg_kern__load(s);
  if (err) {
    load_reason(err, why, whylen);
    return -1;
  }
  if (cpu_maps_fill(b) || perf_maps_fill(b)) {
    snprintf(why, whylen, "filling BPF maps failed: %s", strerror(errno));
    return -1;
  }
  err = erg_kern__attach(s);
  if (err) {
    snprintf(why, whylen, "attaching BPF programs failed: %s", strerror(-err));
    return -1;
  }
  return 0;
}

int erg_bpf_open(struct erg_bpf **out, const struct erg_bpf_opts *opts, char *why,
                 size_t whylen)
{
  struct erg_bpf *b;

  *out = NULL;
  if (access(ERG_BTF_VMLINUX, R_OK) != 0) {
    snprintf(why, whylen, "kernel has no BTF (%s: %s)", ERG_BTF_VMLINUX, strerror(errno));
    return -1;
  }
  libbpf_set_print(libbpf_quiet);
  libbpf_last[0] = '\0';
  b = calloc(1, sizeof(*b));
  if (!b || bpf_alloc(b, opts)) {
    snprintf(why, whylen, "out of memory or no possible CPUs");
    erg_bpf_close(b);
    return -1;
  }
  b->features = ERG_BPF_F_ALL;
  b->skel = erg_kern__open();
  if (!b->skel) {
    snprintf(why, whylen, "opening BPF object failed: %s", strerror(errno));
    erg_bpf_close(b);
    return -1;
  }
  if (bpf_load(b, opts, why, whylen)) {
    erg_bpf_close(b);
    return -1;
  }
  *out = b;
  return 0;
}

void erg_bpf_close(struct erg_bpf *b)
{
  if (!b)
    return;
  erg_kern__destroy(b->skel);
  for (int i = 0; b->perf_fd && i < NPERF * b->ncpu; i++)
    if (b->perf_fd[i] >= 0)
      close(b->perf_fd[i]);
  free(b->perf_fd);
  free(b->cpu_class);
  free(b->freq);
  free(b->keys);
  free(b->vals);
  free(b);
}

unsigned erg_bpf_features(const struct erg_bpf *b)
{
  return b ? b->features : 0;
}

const char *erg_bpf_feature_reason(const struct erg_bpf *b, unsigned bit)
{
  if (!b)
    return "BPF not loaded";
  if (!erg_bpf_feature_name(bit))
    return "unknown feature";
  return (b->features & bit) ? NULL : b->reason[bit_index(bit)];
}

int erg_bpf_capacity_classes(const struct erg_bpf *b, uint32_t out[ERG_BPF_MAX_CAP])
{
  if (!b || !(b->features & ERG_BPF_F_CAPACITY))
    return 0;
  memcpy(out, b->classes, sizeof(b->classes));
  return b->nclass;
}

void erg_bpf_stats(const struct erg_bpf *b, struct erg_bpf_stats *out)
{
  int fd = bpf_map__fd(b->skel->maps.stats);
  uint64_t v[ERG_STAT_N] = {0};

  for (uint32_t i = 0; i < ERG_STAT_N; i++)
    bpf_map_lookup_elem(fd, &i, &v[i]);
  out->map_full_drops = v[ERG_STAT_MAP_FULL];
  out->lost_exit_ns = v[ERG_STAT_LOST_EXIT_NS];
  out->exited = b->exited;
  out->drains = b->drains;
}

/* ---- drain ---- */
static int drain_reserve(struct erg_bpf *b, size_t need)
{
  struct erg_key *k;
  struct erg_counts *v;
  size_t cap = b->cap ? b->cap : DRAIN_CHUNK;

  if (need <= b->cap)
    return 0;
  while (cap < need)
    cap *= 2;
  k = realloc(b->keys, cap * sizeof(*k));
  if (!k)
    return -1;
  b->keys = k;
  v = realloc(b->vals, cap * sizeof(*v));
  if (!v)
    return -1;
  b->vals = v;
  b->cap = cap;
  return 0;
}

/* Fallback for kernels without batch ops on hash maps (before 5.6). */
static long drain_read_iter(struct erg_bpf *b, int fd)
{
  struct erg_key key, next, *prev = NULL;
  size_t n = 0;

  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    if (drain_reserve(b, n + 1))
      return -1;
    if (bpf_map_lookup_elem(fd, &next, &b->vals[n]) == 0)
      b->keys[n++] = next;
    key = next;
    prev = &key;
  }
  return (long)n;
}

static long drain_read(struct erg_bpf *b)
{
  int fd = bpf_map__fd(b->skel->maps.procs);
  LIBBPF_OPTS(bpf_map_batch_opts, o);
  struct erg_key token; /* hash batch token is a bucket index, key size is ample */
  size_t n = 0;
  bool first = true;

  for (;;) {
    __u32 count = DRAIN_CHUNK;
    int err;
    if (drain_reserve(b, n + DRAIN_CHUNK))
      return -1;
    err = bpf_map_lookup_batch(fd, first ? NULL : &token, &token, &b->keys[n], &b->vals[n],
                               &count, &o);
    if (err && errno != ENOENT)
      return (first && (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP))
                 ? drain_read_iter(b, fd)
                 : -1;
    n += count;
    first = false;
    if (err)
      return (long)n;
  }
}

static int key_cmp(const void *a, const void *b)
{
  const struct erg_key *x = a, *y = b;

  if (x->tgid != y->tgid)
    return x->tgid < y->tgid ? -1 : 1;
  return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Finds the record of key among the n sorted keys. */
static long key_find(const struct erg_key *keys, size_t n, const struct erg_key *k)
{
  const struct erg_key *f = bsearch(k, keys, n, sizeof(*k), key_cmp);
  return f ? f - keys : -1;
}

static void sort_records(struct erg_bpf *b, size_t n)
{
  /* Sort keys and values together: sort an index, then permute. */
  struct pair {
    struct erg_key k;
    struct erg_counts v;
  } *p = malloc(n * sizeof(*p));

  if (!p)
    return;
  for (size_t i = 0; i < n; i++) {
    p[i].k = b->keys[i];
    p[i].v = b->vals[i];
  }
  qsort(p, n, sizeof(*p), key_cmp); /* key is the first member */
  for (size_t i = 0; i < n; i++) {
    b->keys[i] = p[i].k;
    b->vals[i] = p[i].v;
  }
  free(p);
}

static void freq_slot_add(struct erg_counts *c, uint32_t khz, uint64_t d)
{
  for (int i = 0; i < ERG_BPF_NFREQ; i++) {
    if (c->freq_khz[i] == 0)
      c->freq_khz[i] = khz;
    if (c->freq_khz[i] == khz) {
      c->freq_ns[i] += d;
      return;
    }
  }
  c->freq_other_ns += d;
}

/* Slices still running are charged up to now, so that a process that never
 * leaves its CPU still shows progress. The clock is read after the process
 * map and before the per-CPU state: a slice seen here has not been added to
 * the map yet, and will be later with an end >= now, so counts stay
 * monotonic from drain to drain. */
static void drain_add_running(struct erg_bpf *b, size_t n)
{
  size_t sz = (sizeof(struct erg_cpu_state) + 7) & ~(size_t)7;
  char *st = malloc(sz * (size_t)b->ncpu);
  struct timespec ts;
  uint32_t zero = 0;
  uint64_t now;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  if (!st || bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.cpu_state), &zero, st)) {
    free(st);
    return;
  }
  for (int c = 0; c < b->ncpu; c++) {
    const struct erg_cpu_state *s = (const void *)(st + sz * (size_t)c);
    long i = s->key.tgid && s->ts && now > s->ts ? key_find(b->keys, n, &s->key) : -1;
    struct erg_counts *v;
    uint64_t d = now - s->ts;
    if (i < 0 || (b->vals[i].flags & ERG_FLAG_EXITED))
      continue;
    v = &b->vals[i];
    v->cpu_ns += d;
    if ((b->features & ERG_BPF_F_CAPACITY) && b->cpu_class[c] < ERG_BPF_NCAP)
      v->cap_ns[b->cpu_class[c]] += d;
    if ((b->features & ERG_BPF_F_FREQ) && b->freq[c])
      freq_slot_add(v, b->freq[c], d);
  }
  free(st);
}

static void proc_fill(const struct erg_bpf *b, const struct erg_key *k,
                      const struct erg_counts *c, struct erg_bpf_proc *p)
{
  memset(p, 0, sizeof(*p));
  p->pid = k->tgid;
  p->start_time_ns = k->start_ns;
  memcpy(p->comm, c->comm, sizeof(p->comm));
  p->comm[sizeof(p->comm) - 1] = '\0';
  p->uid = c->uid;
  p->cgroup_id = c->cgroup_id;
  p->cpu_ns = c->cpu_ns;
  p->wakeups = c->wakeups;
  p->migrations = c->migrations;
  p->read_bytes = c->read_bytes;
  p->write_bytes = c->write_bytes;
  p->cycles = c->cycles;
  p->instructions = c->instructions;
  p->llc_misses = c->llc_misses;
  for (int i = 0; i < ERG_BPF_NFREQ; i++)
    if (c->freq_khz[i]) {
      p->freq[p->nfreq].khz = c->freq_khz[i];
      p->freq[p->nfreq++].cpu_ns = c->freq_ns[i];
    }
  p->freq_other_ns = c->freq_other_ns;
  for (int i = 0; i < ERG_BPF_NCAP; i++) {
    p->cap_ns[i] = c->cap_ns[i];
    if (i < b->nclass)
      p->capacity_weighted_ns += c->cap_ns[i] * b->classes[i] / ERG_BPF_CAPACITY_SCALE;
  }
  p->exited = (c->flags & ERG_FLAG_EXITED) != 0;
}

int erg_bpf_drain(struct erg_bpf *b, erg_bpf_drain_cb cb, void *user, char *why,
                  size_t whylen)
{
  int fd = bpf_map__fd(b->skel->maps.procs);
  struct erg_bpf_proc p;
  long n;

  if (b->features & ERG_BPF_F_FREQ)
    freq_refresh(b);
  n = drain_read(b);
  if (n < 0) {
    snprintf(why, whylen, "reading the BPF process map failed: %s", strerror(errno));
    return -1;
  }
  sort_records(b, (size_t)n);
  drain_add_running(b, (size_t)n);
  for (long i = 0; i < n; i++) {
    proc_fill(b, &b->keys[i], &b->vals[i], &p);
    cb(&p, user);
    if (p.exited) {
      bpf_map_delete_elem(fd, &b->keys[i]);
      b->exited++;
    }
  }
  b->drains++;
  return (int)n;
}

#endif /* ERG_HAVE_BPF */

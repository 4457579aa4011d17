// SPDX-License-Identifier: GPL-3.0-or-later
/* Userspace loader for erg.bpf.c (libbpf skeleton); the drain is in
 * erg_bpf_drain.c. Built only with BPF support: erg_bpf_none.c stands in
 * otherwise (bpf/CMakeLists.txt picks one). */
#include "erg_bpf.h"

#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "erg_bpf_int.h"
#include "erg_common.h"
#include "erg_kern.lskel.h"
#include "erg_kern.skel.h"

#define ERG_SYSFS_CPU_DEFAULT "/sys/devices/system/cpu"
#define ERG_BTF_VMLINUX "/sys/kernel/btf/vmlinux"

/* ---- libbpf messages: kept, not printed, so a reason can quote them ---- */
static char libbpf_last[160];

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap) {
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

static int bit_index(unsigned bit) { return __builtin_ctz(bit); }

static void feature_drop(struct erg_bpf *b, unsigned bit, const char *reason) {
  b->features &= ~bit;
  b->reason[bit_index(bit)] = reason;
}

/* ---- tracepoint probing ---- */
static bool btf_has_tracepoint(const struct btf *btf, const char *tp) {
  char name[128];

  snprintf(name, sizeof(name), "btf_trace_%s", tp);
  return btf && btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) > 0;
}

/* Disables programs whose tracepoint this kernel lacks, and their feature. */
static int bpf_tracepoints_probe(struct erg_bpf *b, char *why, size_t whylen) {
  struct btf *btf = btf__load_vmlinux_btf();
  struct erg_kern *s = b->skel;
  const struct {
    struct bpf_program *prog;
    const char *tp;
    unsigned bit;  /* the feature it serves; 0: none */
    bool optional; /* without it: left out, no feature lost */
  } t[] = {
      {s->progs.erg_sched_switch, "sched_switch", 0, false},
      {s->progs.erg_sched_process_exit, "sched_process_exit", 0, false},
      /* Without it a new process's entry is made at its first switch-out
       * (docs/bpf.md). Wakeups come from sched_switch. */
      {s->progs.erg_sched_wakeup_new, "sched_wakeup_new", 0, true},
      /* Without it migrations stay 0. */
      {s->progs.erg_sched_migrate_task, "sched_migrate_task", 0, true},
      {s->progs.erg_block_bio_queue, "block_bio_queue", ERG_BPF_F_BLKIO, false},
      /* Frequencies then come from sysfs at each drain only; names from
       * the 100 ms refresh (and /proc, in the agent). */
      {s->progs.erg_cpu_frequency, "cpu_frequency", 0, true},
      {s->progs.erg_task_rename, "task_rename", 0, true},
  };

  if (!btf) {
    snprintf(why, whylen, "cannot read kernel BTF: %s", strerror(errno));
    return -1;
  }
  for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    if (btf_has_tracepoint(btf, t[i].tp))
      continue;
    if (t[i].optional) {
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
static void capacity_setup(struct erg_bpf *b) {
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

static void freq_setup(struct erg_bpf *b) {
  if (erg_bpf_read_frequencies(b->root, b->freq, b->ncpu) <= 0)
    feature_drop(b, ERG_BPF_F_FREQ, "no cpufreq scaling_cur_freq in sysfs");
}

/* The cpu_frequency tracepoint is silent without a cpufreq driver, and
 * intel_pstate in active mode never emits it: the sysfs value, refreshed at
 * every drain, is the floor of what we know. */
void erg_bpf_freq_refresh(struct erg_bpf *b) {
  int fd = b->fd.cpu_freq;
  int n = erg_bpf_read_frequencies(b->root, b->freq, b->ncpu);

  for (int c = 0; c < n; c++) {
    uint32_t key = (uint32_t)c;
    if (b->freq[c])
      bpf_map_update_elem(fd, &key, &b->freq[c], BPF_ANY);
  }
}

/* ---- hardware counters ---- */
/* A CPU-wide event (all tasks on cpu): the hardware counters and the
 * repair clock below. */
static int perf_open_event(uint32_t type, uint64_t config, uint64_t period, int cpu) {
  struct perf_event_attr a;

  memset(&a, 0, sizeof(a));
  a.type = type;
  a.size = sizeof(a);
  a.config = config;
  a.sample_period = period;
  a.disabled = period != 0; /* a sampling event starts once its program is set */
  return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Why an event is not a feature, with the errno perf_event_open gave. */
static void perf_drop(struct erg_bpf *b, unsigned bit, int cpu, int err) {
  char *buf = b->reason_buf[bit_index(bit)];
  const char *hint = err == ENOENT || err == EOPNOTSUPP ? " (no hardware PMU event: VM?)"
                     : err == EACCES || err == EPERM    ? " (needs CAP_PERFMON)"
                                                        : "";

  snprintf(buf, sizeof(b->reason_buf[0]), "perf_event_open on CPU %d: %s%s", cpu, strerror(err),
           hint);
  feature_drop(b, bit, buf);
}

static void perf_close_event(struct erg_bpf *b, int e) {
  int *fd = &b->perf_fd[e * b->ncpu];

  for (int c = 0; c < b->ncpu; c++) {
    if (fd[c] >= 0)
      close(fd[c]);
    fd[c] = -1;
  }
}

/* One counter per online CPU for each event; an event is a feature only
 * when it opens on every one of them (a VM without a virtual PMU fails
 * here). Offline CPUs (SMT off, hotplug slots) are possible but cannot
 * count: ENODEV there must not cost the feature. */
static void perf_setup(struct erg_bpf *b, bool disabled) {
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
      if (!b->online[c])
        continue;
      fd[c] = perf_open_event(PERF_TYPE_HARDWARE, cfg[e], 0, c);
      if (fd[c] >= 0)
        continue;
      perf_drop(b, bit[e], c, errno);
      perf_close_event(b, e);
      break;
    }
  }
}

static int perf_maps_fill(struct erg_bpf *b) {
  for (int e = 0; e < NPERF; e++)
    for (int c = 0; c < b->ncpu; c++) {
      uint32_t key = (uint32_t)c;
      int fd = b->perf_fd[e * b->ncpu + c];
      if (fd >= 0 && bpf_map_update_elem(b->fd.perf[e], &key, &fd, BPF_ANY))
        return -1;
    }
  return 0;
}

/* ---- unseen-switch repair ---- */
#define HEAL_PERIOD_NS 250000000ull

static void heal_close(struct erg_bpf *b) {
  for (int c = 0; b->heal_fd && c < b->ncpu; c++) {
    if (b->heal_fd[c] >= 0)
      close(b->heal_fd[c]);
    b->heal_fd[c] = -1;
  }
}

/* A software clock on every online CPU runs erg_cpu_heal 4 times a second
 * (erg.bpf.c). Without it the counts stay exact; a missed switch-in then
 * gives a slice in flight to the wrong group until the task leaves its CPU. */
static void heal_setup(struct erg_bpf *b) {
  int prog = b->lskel ? b->lskel->progs.erg_cpu_heal.prog_fd
                      : bpf_program__fd(b->skel->progs.erg_cpu_heal);

  b->heal_why[0] = '\0';
  for (int c = 0; c < b->ncpu; c++) {
    int fd;
    if (!b->online[c])
      continue;
    fd = perf_open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, HEAL_PERIOD_NS, c);
    if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) != 0 ||
        ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
      snprintf(b->heal_why, sizeof(b->heal_why), "%s on CPU %d: %s",
               fd < 0 ? "perf_event_open of a software clock" : "attaching to the software clock",
               c, strerror(errno));
      if (fd >= 0)
        close(fd);
      heal_close(b);
      return;
    }
    b->heal_fd[c] = fd;
  }
}

bool erg_bpf_names_current(const struct erg_bpf *b) {
  /* The light skeleton loads every program or none. */
  return b && (b->lskel || (b->skel && bpf_program__autoload(b->skel->progs.erg_task_rename)));
}

const char *erg_bpf_heal_reason(const struct erg_bpf *b) {
  return !b ? "BPF not loaded" : b->heal_why[0] ? b->heal_why : NULL;
}

const char *erg_bpf_thread_records_reason(const struct erg_bpf *b) {
  return !b ? "BPF not loaded" : b->records_why[0] ? b->records_why : NULL;
}

/* Per-thread records (docs/bpf.md "Exact slices") are on unless a test
 * asks for the fallback. */
static void records_setup(struct erg_bpf *b, const struct erg_bpf_opts *opts) {
  b->records_why[0] = '\0';
  if (opts && opts->no_thread_records)
    snprintf(b->records_why, sizeof(b->records_why), "turned off (no_thread_records)");
}

static int cpu_maps_fill(struct erg_bpf *b) {
  int fclass = b->fd.cpu_class;

  for (int c = 0; c < b->ncpu; c++) {
    uint32_t key = (uint32_t)c;
    if (bpf_map_update_elem(fclass, &key, &b->cpu_class[c], BPF_ANY))
      return -1;
  }
  if (b->features & ERG_BPF_F_FREQ)
    erg_bpf_freq_refresh(b);
  return 0;
}

/* ---- open / close ---- */
static void load_reason(int err, char *why, size_t whylen) {
  if (err == -EPERM || err == -EACCES)
    snprintf(why, whylen,
             "permission denied loading BPF (needs root, or CAP_BPF, "
             "CAP_PERFMON and CAP_SYS_RESOURCE)");
  else
    snprintf(why, whylen, "loading BPF programs failed: %s%s%s", strerror(-err),
             libbpf_last[0] ? ": " : "", libbpf_last);
}

static int bpf_alloc(struct erg_bpf *b, const struct erg_bpf_opts *opts) {
  const char *root = opts && opts->sysfs_cpu_root ? opts->sysfs_cpu_root : ERG_SYSFS_CPU_DEFAULT;

  erg_strlcpy(b->root, root, sizeof(b->root));
  b->ncpu = libbpf_num_possible_cpus();
  if (b->ncpu <= 0)
    return -1;
  b->cpu_class = calloc((size_t)b->ncpu, sizeof(*b->cpu_class));
  b->online = calloc((size_t)b->ncpu, sizeof(*b->online));
  if (!b->online || erg_bpf_read_online(b->root, b->online, b->ncpu) <= 0)
    return -1;
  b->freq = calloc((size_t)b->ncpu, sizeof(*b->freq));
  b->perf_fd = malloc(sizeof(int) * NPERF * (size_t)b->ncpu);
  b->heal_fd = malloc(sizeof(int) * (size_t)b->ncpu);
  b->snap[0] = malloc(cpu_state_stride() * (size_t)b->ncpu);
  b->snap[1] = malloc(cpu_state_stride() * (size_t)b->ncpu);
  b->snap_tmp = malloc(cpu_state_stride() * (size_t)b->ncpu);
  b->redo = malloc(sizeof(*b->redo) * (size_t)b->ncpu);
  if (!b->cpu_class || !b->freq || !b->perf_fd || !b->heal_fd || !b->snap[0] || !b->snap[1] ||
      !b->snap_tmp || !b->redo)
    return -1;
  for (int i = 0; i < NPERF * b->ncpu; i++)
    b->perf_fd[i] = -1;
  for (int i = 0; i < b->ncpu; i++)
    b->heal_fd[i] = -1;
  return 0;
}

/* The drain reads the groups table and its bits in place and frees a slot
 * with two stores (erg_bpf_drain.c): a copy through bpf() would move 2.6 MB
 * a drain. */
static int groups_map(struct erg_bpf *b) {
  long page = sysconf(_SC_PAGESIZE);
  size_t len = sizeof(struct erg_group) * ERG_BPF_GROUP_SLOTS;
  void *p;

  len = (len + (size_t)page - 1) & ~((size_t)page - 1);
  p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd.groups, 0);
  if (p == MAP_FAILED)
    return -1;
  b->groups = p;
  b->groups_len = len;
  p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd.groups_used, 0);
  if (p == MAP_FAILED)
    return -1;
  b->used = p;
  return 0;
}

static bool perf_any(const struct erg_bpf *b) {
  return (b->features & (ERG_BPF_F_CYCLES | ERG_BPF_F_INSTRUCTIONS | ERG_BPF_F_LLC_MISSES)) != 0;
}

/* The light skeleton: a loader program does CO-RE relocation and finds the
 * tracepoints' BTF ids inside the kernel (5.17+), so this process never
 * parses the ~6 MB vmlinux BTF (libbpf keeps two copies of it while loading:
 * +11 MB peak RSS). All programs are loaded: a kernel lacking one of the
 * tracepoints fails here and gets the libbpf loader, which can leave
 * programs out. */
static int load_light(struct erg_bpf *b) {
  struct erg_kern_l *l = erg_kern_l__open();

  if (!l)
    return -1;
  l->rodata->freq_on = (b->features & ERG_BPF_F_FREQ) != 0;
  l->rodata->cap_on = (b->features & ERG_BPF_F_CAPACITY) != 0;
  l->rodata->perf_on = perf_any(b);
  l->rodata->records_on = b->records_why[0] == '\0';
  /* Sizes baked in at build time are the build host's: set them here. */
  l->maps.cpu_freq.max_entries = (uint32_t)b->ncpu;
  l->maps.cpu_class.max_entries = (uint32_t)b->ncpu;
  l->maps.perf_cycles.max_entries = (uint32_t)b->ncpu;
  l->maps.perf_instr.max_entries = (uint32_t)b->ncpu;
  l->maps.perf_llc.max_entries = (uint32_t)b->ncpu;
  if (erg_kern_l__load(l)) {
    erg_kern_l__destroy(l);
    return -1;
  }
  b->fd = (struct erg_bpf_fds){
      l->maps.procs.map_fd,
      l->maps.cpu_state.map_fd,
      l->maps.cpu_freq.map_fd,
      l->maps.cpu_class.map_fd,
      l->maps.stats.map_fd,
      l->maps.cgpaths.map_fd,
      {l->maps.perf_cycles.map_fd, l->maps.perf_instr.map_fd, l->maps.perf_llc.map_fd},
      l->maps.threads.map_fd,
      l->maps.groups.map_fd,
      l->maps.groups_used.map_fd};
  b->lskel = l;
  return 0;
}

/* libbpf's loader: reads the kernel BTF itself, so it can leave out the
 * programs of tracepoints this kernel lacks (and their features). */
static int load_full(struct erg_bpf *b, char *why, size_t whylen) {
  struct erg_kern *s = erg_kern__open();
  int err;

  if (!s) {
    snprintf(why, whylen, "opening BPF object failed: %s", strerror(errno));
    return -1;
  }
  b->skel = s;
  if (bpf_tracepoints_probe(b, why, whylen))
    return -1;
  bpf_map__set_max_entries(s->maps.cpu_freq, (uint32_t)b->ncpu);
  bpf_map__set_max_entries(s->maps.cpu_class, (uint32_t)b->ncpu);
  s->rodata->freq_on = (b->features & ERG_BPF_F_FREQ) != 0;
  s->rodata->cap_on = (b->features & ERG_BPF_F_CAPACITY) != 0;
  s->rodata->perf_on = perf_any(b);
  s->rodata->records_on = b->records_why[0] == '\0';
  err = erg_kern__load(s);
  if (err) {
    load_reason(err, why, whylen);
    return -1;
  }
  b->fd = (struct erg_bpf_fds){bpf_map__fd(s->maps.procs),
                               bpf_map__fd(s->maps.cpu_state),
                               bpf_map__fd(s->maps.cpu_freq),
                               bpf_map__fd(s->maps.cpu_class),
                               bpf_map__fd(s->maps.stats),
                               bpf_map__fd(s->maps.cgpaths),
                               {bpf_map__fd(s->maps.perf_cycles), bpf_map__fd(s->maps.perf_instr),
                                bpf_map__fd(s->maps.perf_llc)},
                               bpf_map__fd(s->maps.threads),
                               bpf_map__fd(s->maps.groups),
                               bpf_map__fd(s->maps.groups_used)};
  return 0;
}

static int bpf_load(struct erg_bpf *b, const struct erg_bpf_opts *opts, char *why, size_t whylen) {
  int err;

  capacity_setup(b);
  freq_setup(b);
  perf_setup(b, opts && opts->disable_perf);
  records_setup(b, opts);
  if ((opts && opts->libbpf_loader) || load_light(b) != 0)
    if (load_full(b, why, whylen) != 0)
      return -1;
  /* Maps are filled before attaching, so no slice sees an empty class map. */
  if (cpu_maps_fill(b) || perf_maps_fill(b) || groups_map(b)) {
    snprintf(why, whylen, "filling BPF maps failed: %s", strerror(errno));
    return -1;
  }
  err = b->lskel ? erg_kern_l__attach(b->lskel) : erg_kern__attach(b->skel);
  if (err) {
    snprintf(why, whylen, "attaching BPF programs failed: %s", strerror(-err));
    return -1;
  }
  heal_setup(b);
  return 0;
}

int erg_bpf_open(struct erg_bpf **out, const struct erg_bpf_opts *opts, char *why, size_t whylen) {
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
    snprintf(why, whylen, "out of memory, or no possible or online CPUs");
    erg_bpf_close(b);
    return -1;
  }
  b->features = ERG_BPF_F_ALL;
  if (bpf_load(b, opts, why, whylen)) {
    erg_bpf_close(b);
    return -1;
  }
  *out = b;
  return 0;
}

const char *erg_bpf_loader(const struct erg_bpf *b) { return b && b->lskel ? "light" : "libbpf"; }

void erg_bpf_close(struct erg_bpf *b) {
  if (!b)
    return;
  heal_close(b);
  free(b->heal_fd);
  if (b->groups)
    munmap(b->groups, b->groups_len);
  if (b->used)
    munmap(b->used, (size_t)sysconf(_SC_PAGESIZE));
  if (b->lskel)
    erg_kern_l__destroy(b->lskel);
  erg_kern__destroy(b->skel);
  for (int i = 0; b->perf_fd && i < NPERF * b->ncpu; i++)
    if (b->perf_fd[i] >= 0)
      close(b->perf_fd[i]);
  free(b->perf_fd);
  free(b->cpu_class);
  free(b->online);
  free(b->freq);
  free(b->keys);
  free(b->pkeys);
  free(b->vals);
  free(b->running);
  free(b->snap[0]);
  free(b->snap[1]);
  free(b->snap_tmp);
  free(b->redo);
  free(b);
}

unsigned erg_bpf_features(const struct erg_bpf *b) { return b ? b->features : 0; }

const char *erg_bpf_feature_reason(const struct erg_bpf *b, unsigned bit) {
  if (!b)
    return "BPF not loaded";
  if (!erg_bpf_feature_name(bit))
    return "unknown feature";
  return (b->features & bit) ? NULL : b->reason[bit_index(bit)];
}

int erg_bpf_capacity_classes(const struct erg_bpf *b, uint32_t out[ERG_BPF_MAX_CAP]) {
  if (!b || !(b->features & ERG_BPF_F_CAPACITY))
    return 0;
  memcpy(out, b->classes, sizeof(b->classes));
  return b->nclass;
}

uint64_t erg_bpf_drain_time_ns(const struct erg_bpf *b) { return b->drain_mono_ns; }

void erg_bpf_set_cut_cb(struct erg_bpf *b, erg_bpf_cut_cb cb, void *user) {
  b->cut_cb = cb;
  b->cut_user = user;
}

int erg_bpf_cgroup_path(const struct erg_bpf *b, uint64_t id, char *out, size_t len) {
  struct erg_cgpath v;

  if (!b || bpf_map_lookup_elem(b->fd.cgpaths, &id, &v) != 0)
    return -1;
  v.path[sizeof(v.path) - 1] = '\0';
  erg_strlcpy(out, v.path, len);
  return 0;
}

void erg_bpf_stats(const struct erg_bpf *b, struct erg_bpf_stats *out) {
  int fd = b->fd.stats;
  uint64_t v[ERG_STAT_N] = {0};

  for (uint32_t i = 0; i < ERG_STAT_N; i++)
    bpf_map_lookup_elem(fd, &i, &v[i]);
  out->map_full_drops = v[ERG_STAT_MAP_FULL];
  out->lost_exit_ns = v[ERG_STAT_LOST_EXIT_NS];
  out->unseen_switches = v[ERG_STAT_UNSEEN_SWITCH];
  out->exited = b->exited;
  out->drains = b->drains;
  out->unsettled = b->unsettled;
  out->running_only = b->running_only;
}

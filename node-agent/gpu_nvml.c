// SPDX-License-Identifier: GPL-3.0-or-later
/* GPU sampling through NVML (NVIDIA), loaded with dlopen: no build-time
 * dependency, and a node without the driver simply has no GPUs. One
 * backend of gpu.c (gpu_backend.h); libc and libdl only
 * (tests/gpu/device_check.sh builds it with gpu.c and gpu_rocm.c alone).
 *
 * Energy: the board energy counter's difference (Volta and newer), else
 * the trapezoid of the power readings at the interval's ends. Per-process
 * shares: nvmlDeviceGetProcessUtilization returns, per driver sample
 * period, one sample per process with non-zero SM or memory utilization;
 * a process's share of a GPU is its sum of smUtil over the interval's
 * samples divided by the sum for all processes. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_backend.h"
#include "gpu_nvml_abi.h"

/* Samples closer than this belong to one driver period (the driver's
 * period is 1/6 s to 1 s). */
#define NVML_PERIOD_SLACK_US 10000ULL

struct nvml_api {
  void *dl;
  nvmlInit_v2_fn init;
  nvmlShutdown_fn shutdown;
  nvmlErrorString_fn error_string;
  nvmlDeviceGetCount_v2_fn count;
  nvmlDeviceGetHandleByIndex_v2_fn handle;
  nvmlDeviceGetUUID_fn uuid;
  nvmlDeviceGetName_fn name;
  /* Optional: a driver without one lacks that reading. */
  nvmlDeviceGetPowerUsage_fn power;
  nvmlDeviceGetTotalEnergyConsumption_fn energy;
  nvmlDeviceGetUtilizationRates_fn util;
  nvmlDeviceGetProcessUtilization_fn proc_util;
  nvmlDeviceGetComputeRunningProcesses_v3_fn compute_procs;
  nvmlDeviceGetMigMode_fn mig_mode;
};

/* What the last reading of one device left for the next interval. */
struct nvml_prev {
  nvmlDevice_t h;
  bool have_energy, have_power;
  unsigned long long energy_mj;
  double power_w;
  unsigned long long last_ts;   /* newest process sample seen, µs */
  unsigned long long period_us; /* shortest gap between sample periods seen; 0: unknown */
  /* The shares of the last interval with process samples, and the time
   * since (nvml_proc_finish): an interval shorter than the driver's
   * period can end before the period's samples exist. */
  struct nvml_share {
    uint32_t pid;
    double share;
  } * last;
  size_t nlast;
  double last_age_s;
  /* The last reading found the GPU idle: utilization 0, no compute
   * process, no new process sample (see nvml_skip_proc_util). */
  bool idle;
};

struct nvml_gpu {
  struct nvml_api api;
  bool initialised;
  size_t n;
  struct erg_gpu_device dev[ERG_GPU_MAX_DEVICES];
  struct nvml_prev prev[ERG_GPU_MAX_DEVICES];
  struct erg_gpu_clock clock;
  nvmlProcessUtilizationSample_t *us;
  unsigned us_cap;
  nvmlProcessInfo_t *pi;
  unsigned pi_cap;
  unsigned long long *ts;
  struct erg_gpu_proc *procs;
  size_t nprocs, procs_cap;
};

static const char *nvml_str(const struct nvml_gpu *g, nvmlReturn_t r) {
  const char *s = g->api.error_string ? g->api.error_string(r) : NULL;
  return s ? s : "unknown NVML error";
}

/* A reading that is just not there now (or on this GPU); anything else
 * means the GPU or the driver is gone. */
static bool nvml_soft(nvmlReturn_t r) {
  return r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_NO_PERMISSION ||
         r == NVML_ERROR_NOT_FOUND || r == NVML_ERROR_NO_DATA ||
         r == NVML_ERROR_INSUFFICIENT_SIZE || r == NVML_ERROR_NOT_READY || r == NVML_ERROR_TIMEOUT;
}

static int nvml_fail(struct nvml_gpu *g, const struct erg_gpu_device *d, const char *fn,
                     nvmlReturn_t r, char *why, size_t whylen) {
  if (d)
    snprintf(why, whylen, "GPU %u (%s): %s: %s", d->index, d->uuid, fn, nvml_str(g, r));
  else
    snprintf(why, whylen, "%s: %s", fn, nvml_str(g, r));
  return -1;
}

static int nvml_load(struct nvml_api *api, const char *library, bool *absent, char *why,
                     size_t whylen) {
  api->dl = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!api->dl) {
    *absent = true;
    snprintf(why, whylen, "%s", dlerror());
    return -1;
  }
  static const struct erg_gpu_sym syms[] = {
#define NVML_SYM(f, n, req) {n, offsetof(struct nvml_api, f), req}
      NVML_SYM(init, "nvmlInit_v2", true),
      NVML_SYM(shutdown, "nvmlShutdown", true),
      NVML_SYM(error_string, "nvmlErrorString", true),
      NVML_SYM(count, "nvmlDeviceGetCount_v2", true),
      NVML_SYM(handle, "nvmlDeviceGetHandleByIndex_v2", true),
      NVML_SYM(uuid, "nvmlDeviceGetUUID", true),
      NVML_SYM(name, "nvmlDeviceGetName", true),
      NVML_SYM(power, "nvmlDeviceGetPowerUsage", false),
      NVML_SYM(energy, "nvmlDeviceGetTotalEnergyConsumption", false),
      NVML_SYM(util, "nvmlDeviceGetUtilizationRates", false),
      NVML_SYM(proc_util, "nvmlDeviceGetProcessUtilization", false),
      NVML_SYM(compute_procs, "nvmlDeviceGetComputeRunningProcesses_v3", false),
      NVML_SYM(mig_mode, "nvmlDeviceGetMigMode", false),
#undef NVML_SYM
  };
  const char *missing;
  if (erg_gpu_dlsyms(api->dl, api, syms, sizeof syms / sizeof syms[0], &missing)) {
    snprintf(why, whylen, "%s lacks %s (driver too old?)", library, missing);
    return -1;
  }
  return 0;
}

/* Probes one device's identity and what it can report. */
static int nvml_probe(struct nvml_gpu *g, unsigned i, char *why, size_t whylen) {
  struct erg_gpu_device *d = &g->dev[g->n];
  struct nvml_prev *p = &g->prev[g->n];
  memset(d, 0, sizeof *d);
  memset(p, 0, sizeof *p);
  d->index = i;
  snprintf(d->uuid, sizeof d->uuid, "index-%u", i);
  nvmlReturn_t r = g->api.handle(i, &p->h);
  if (r != NVML_SUCCESS)
    return nvml_fail(g, d, "nvmlDeviceGetHandleByIndex_v2", r, why, whylen);
  if ((r = g->api.uuid(p->h, d->uuid, sizeof d->uuid)) != NVML_SUCCESS)
    return nvml_fail(g, d, "nvmlDeviceGetUUID", r, why, whylen);
  if ((r = g->api.name(p->h, d->name, sizeof d->name)) != NVML_SUCCESS && !nvml_soft(r))
    return nvml_fail(g, d, "nvmlDeviceGetName", r, why, whylen);
  d->uuid[sizeof d->uuid - 1] = d->name[sizeof d->name - 1] = '\0';
  unsigned cur = 0, pending = 0;
  if (g->api.mig_mode && g->api.mig_mode(p->h, &cur, &pending) == NVML_SUCCESS)
    d->mig = cur == NVML_DEVICE_MIG_ENABLE;
  unsigned long long mj;
  unsigned mw;
  if (g->api.energy) {
    r = g->api.energy(p->h, &mj);
    if (r != NVML_SUCCESS && !nvml_soft(r))
      return nvml_fail(g, d, "nvmlDeviceGetTotalEnergyConsumption", r, why, whylen);
    d->energy_counter = r == NVML_SUCCESS;
  }
  if (g->api.power) {
    r = g->api.power(p->h, &mw);
    if (r != NVML_SUCCESS && !nvml_soft(r))
      return nvml_fail(g, d, "nvmlDeviceGetPowerUsage", r, why, whylen);
    d->power_reading = r == NVML_SUCCESS;
  }
  /* MIG: NVML has no per-process utilization (documented). */
  if (g->api.proc_util && !d->mig) {
    unsigned cnt = g->us_cap;
    r = g->api.proc_util(p->h, g->us, &cnt, ~0ULL);
    if (r != NVML_SUCCESS && !nvml_soft(r))
      return nvml_fail(g, d, "nvmlDeviceGetProcessUtilization", r, why, whylen);
    d->proc_util = r != NVML_ERROR_NOT_SUPPORTED && r != NVML_ERROR_NO_PERMISSION;
  }
  g->n++;
  return 0;
}

static void nvml_close(void *b);

static int nvml_open(void **out, const char *library, bool *absent, char *why, size_t whylen) {
  *absent = false;
  struct nvml_gpu *g = calloc(1, sizeof *g);
  if (g) {
    g->us_cap = g->pi_cap = 256;
    g->us = calloc(g->us_cap, sizeof *g->us);
    g->ts = calloc(g->us_cap, sizeof *g->ts);
    g->pi = calloc(g->pi_cap, sizeof *g->pi);
  }
  if (!g || !g->us || !g->ts || !g->pi) {
    snprintf(why, whylen, "out of memory");
    nvml_close(g);
    return -1;
  }
  if (nvml_load(&g->api, library ? library : "libnvidia-ml.so.1", absent, why, whylen) != 0) {
    nvml_close(g);
    return -1;
  }
  nvmlReturn_t r = g->api.init();
  if (r != NVML_SUCCESS) {
    nvml_fail(g, NULL, "nvmlInit_v2", r, why, whylen);
    nvml_close(g);
    return -1;
  }
  g->initialised = true;
  unsigned count = 0;
  if ((r = g->api.count(&count)) != NVML_SUCCESS) {
    nvml_fail(g, NULL, "nvmlDeviceGetCount_v2", r, why, whylen);
    nvml_close(g);
    return -1;
  }
  if (count == 0) {
    *absent = true;
    snprintf(why, whylen, "NVML sees no GPU");
    nvml_close(g);
    return -1;
  }
  for (unsigned i = 0; i < count && g->n < ERG_GPU_MAX_DEVICES; i++)
    if (nvml_probe(g, i, why, whylen) != 0) {
      nvml_close(g);
      return -1;
    }
  *out = g;
  return 0;
}

static const struct erg_gpu_device *nvml_devices(const void *b, size_t *n) {
  const struct nvml_gpu *g = b;
  *n = g->n;
  return g->dev;
}

/* Grows the sample buffer (and its time stamps' scratch array) or the
 * process buffer of g to hold want entries. */
static int nvml_grow(struct nvml_gpu *g, bool util, unsigned want) {
  unsigned n = want + want / 4 + 16;
  if (util) {
    nvmlProcessUtilizationSample_t *s = realloc(g->us, (size_t)n * sizeof *s);
    if (s)
      g->us = s;
    unsigned long long *t = s ? realloc(g->ts, (size_t)n * sizeof *t) : NULL;
    if (!t)
      return -1; /* us_cap unchanged: a larger g->us is harmless */
    g->ts = t;
    g->us_cap = n;
  } else {
    nvmlProcessInfo_t *p = realloc(g->pi, (size_t)n * sizeof *p);
    if (!p)
      return -1;
    g->pi = p;
    g->pi_cap = n;
  }
  return 0;
}

/* Device k's process utilization samples since its last time stamp (util)
 * or its compute processes, in a buffer grown until they fit: 0 and *cnt
 * entries, 1 when there are none to read (a soft error), -1 (fatal, *rr). */
static int nvml_list(struct nvml_gpu *g, size_t k, bool util, unsigned *cnt, nvmlReturn_t *rr) {
  const struct nvml_prev *p = &g->prev[k];
  for (int tries = 0; tries < 4; tries++) {
    unsigned cap = util ? g->us_cap : g->pi_cap;
    *cnt = cap;
    *rr = util ? g->api.proc_util(p->h, g->us, cnt, p->last_ts)
               : g->api.compute_procs(p->h, cnt, g->pi);
    if (*rr == NVML_ERROR_INSUFFICIENT_SIZE && *cnt > cap) {
      if (nvml_grow(g, util, *cnt) != 0)
        return 1;
      continue;
    }
    if (*rr != NVML_SUCCESS)
      return nvml_soft(*rr) ? 1 : -1;
    *cnt = *cnt < cap ? *cnt : cap;
    return 0;
  }
  return 1;
}

static struct erg_gpu_proc *nvml_proc_push(struct nvml_gpu *g, uint32_t pid, unsigned dev) {
  if (g->nprocs == g->procs_cap) {
    size_t cap = g->procs_cap ? g->procs_cap * 2 : 64;
    struct erg_gpu_proc *p = realloc(g->procs, cap * sizeof *p);
    if (!p)
      return NULL;
    g->procs = p;
    g->procs_cap = cap;
  }
  struct erg_gpu_proc *p = &g->procs[g->nprocs++];
  memset(p, 0, sizeof *p);
  p->pid = pid;
  p->device = dev;
  p->gpu_instance = p->compute_instance = ERG_GPU_NO_INSTANCE;
  return p;
}

static int cmp_ull(const void *a, const void *b) {
  unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
  return (x > y) - (x < y);
}

static int cmp_proc(const void *a, const void *b) {
  const struct erg_gpu_proc *x = a, *y = b;
  return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Per-process utilization of device k since the last reading: sums of
 * smUtil and memUtil per pid into the device's entries (sm_percent and
 * mem_percent hold the sums until nvml_proc_finish). Returns the number of
 * driver periods seen, or -1 (fatal). */
static long nvml_proc_util(struct nvml_gpu *g, size_t k, bool baseline, nvmlReturn_t *rr) {
  struct nvml_prev *p = &g->prev[k];
  unsigned cnt;
  int res = nvml_list(g, k, true, &cnt, rr);
  if (res < 0)
    return -1;
  /* NOT_FOUND: read, and no process had activity. */
  g->dev[k].has_proc_util = res == 0 || *rr == NVML_ERROR_NOT_FOUND;
  if (res > 0)
    return 0;
  size_t nts = 0;
  unsigned long long newest = p->last_ts;
  for (unsigned i = 0; i < cnt; i++) {
    const nvmlProcessUtilizationSample_t *s = &g->us[i];
    if (s->timeStamp <= p->last_ts)
      continue; /* the driver filters; this guards against one that does not */
    g->ts[nts++] = s->timeStamp;
    newest = s->timeStamp > newest ? s->timeStamp : newest;
    if (baseline)
      continue;
    struct erg_gpu_proc *e = nvml_proc_push(g, s->pid, (unsigned)k);
    if (!e)
      break;
    e->sm_percent = s->smUtil;
    e->mem_percent = s->memUtil;
  }
  /* Distinct periods, and the driver's period: the shortest gap between
   * two (periods without activity have no samples, so gaps only grow). */
  qsort(g->ts, nts, sizeof *g->ts, cmp_ull);
  long periods = 0;
  unsigned long long start = p->last_ts;
  for (size_t i = 0; i < nts; i++) {
    if (periods && g->ts[i] - start <= NVML_PERIOD_SLACK_US)
      continue;
    unsigned long long gap = g->ts[i] - start;
    if (start && gap > NVML_PERIOD_SLACK_US && (!p->period_us || gap < p->period_us))
      p->period_us = gap;
    start = g->ts[i];
    periods++;
  }
  p->last_ts = newest;
  return periods;
}

/* Remembers device k's shares of this interval (e[0..m), with samples). */
static void nvml_shares_keep(struct nvml_gpu *g, size_t k, const struct erg_gpu_proc *e, size_t m) {
  struct nvml_prev *p = &g->prev[k];
  struct nvml_share *a = m ? realloc(p->last, m * sizeof *a) : p->last;
  p->nlast = 0;
  p->last_age_s = 0;
  if (!a)
    return; /* no memory: no carrying, the shares of this interval stand */
  p->last = a;
  for (size_t i = 0; i < m; i++)
    if (e[i].sm_share > 0)
      a[p->nlast++] = (struct nvml_share){e[i].pid, e[i].sm_share};
}

/* An interval without any process sample on device k while it was busy at
 * the reading: the driver's period (1/6 s to 1 s) is longer than the
 * interval, and this period's samples come with a later reading. Its
 * processes keep the shares of the last interval with samples while at
 * most one driver period (1 s while unknown, +10 %) has passed since: a
 * whole period without samples is an idle one (NVML sends none then), and
 * every share stays 0 (the energy is nobody's). Renormalised over the
 * processes still listed. */
static void nvml_shares_carry(struct nvml_gpu *g, size_t k, struct erg_gpu_proc *e, size_t m) {
  struct nvml_prev *p = &g->prev[k];
  const struct erg_gpu_device *d = &g->dev[k];
  double period = p->period_us ? (double)p->period_us / 1e6 : 1.0;
  p->last_age_s += d->seconds;
  if (!p->nlast || p->last_age_s > 1.1 * period || !d->has_proc_util || !d->has_util ||
      d->util_percent == 0)
    return;
  double sum = 0;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < p->nlast; j++)
      if (p->last[j].pid == e[i].pid) {
        e[i].sm_share = p->last[j].share;
        sum += e[i].sm_share;
      }
  for (size_t i = 0; i < m && sum > 0; i++)
    e[i].sm_share /= sum;
}

/* Merges the entries of device k from first on (one per compute process
 * and per utilization sample) into one per pid, and turns the sums into
 * shares and means over the interval's periods. */
static void nvml_proc_finish(struct nvml_gpu *g, size_t k, size_t first, long periods) {
  struct erg_gpu_proc *e = g->procs + first;
  size_t n = g->nprocs - first, m = 0;
  if (n > 1) /* e is NULL when the GPU has no entries (an idle one, skipped) */
    qsort(e, n, sizeof *e, cmp_proc);
  for (size_t i = 0; i < n; i++) {
    if (m && e[m - 1].pid == e[i].pid) {
      e[m - 1].sm_percent += e[i].sm_percent;
      e[m - 1].mem_percent += e[i].mem_percent;
      e[m - 1].used_memory_bytes += e[i].used_memory_bytes;
      /* The process list's entry knows the MIG instance, samples do not. */
      if (e[m - 1].gpu_instance == ERG_GPU_NO_INSTANCE) {
        e[m - 1].gpu_instance = e[i].gpu_instance;
        e[m - 1].compute_instance = e[i].compute_instance;
      }
    } else {
      e[m++] = e[i];
    }
  }
  g->nprocs = first + m;
  const struct erg_gpu_device *d = &g->dev[k];
  double expect = g->prev[k].period_us ? d->seconds * 1e6 / (double)g->prev[k].period_us : 0;
  double nper = (double)periods > expect ? (double)periods : expect;
  double total = 0;
  for (size_t i = 0; i < m; i++)
    total += e[i].sm_percent;
  if (total <= 0 && periods == 0)
    nvml_shares_carry(g, k, e, m);
  for (size_t i = 0; i < m; i++) {
    if (total > 0 || periods > 0)
      e[i].sm_share = total > 0 ? e[i].sm_percent / total : 0;
    e[i].sm_percent = nper > 0 ? e[i].sm_percent / nper : 0;
    e[i].mem_percent = nper > 0 ? e[i].mem_percent / nper : 0;
    if (e[i].sm_percent > 100)
      e[i].sm_percent = 100;
    if (e[i].mem_percent > 100)
      e[i].mem_percent = 100;
  }
  if (total > 0)
    nvml_shares_keep(g, k, e, m);
}

/* The processes holding a compute context on device k, with their memory:
 * 0, 1 when the list could not be read (a soft error), -1 (fatal, *rr). */
static int nvml_compute_procs(struct nvml_gpu *g, size_t k, nvmlReturn_t *rr) {
  unsigned cnt;
  int res = nvml_list(g, k, false, &cnt, rr);
  if (res != 0)
    return res;
  for (unsigned i = 0; i < cnt; i++) {
    struct erg_gpu_proc *e = nvml_proc_push(g, g->pi[i].pid, (unsigned)k);
    if (!e)
      break;
    if (g->pi[i].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE_ULL)
      e->used_memory_bytes = g->pi[i].usedGpuMemory;
    /* 0xFFFFFFFF without MIG: the same as ERG_GPU_NO_INSTANCE. */
    e->gpu_instance = g->pi[i].gpuInstanceId;
    e->compute_instance = g->pi[i].computeInstanceId;
  }
  return 0;
}

/* Energy and power of device k over the interval. */
static int nvml_energy(struct nvml_gpu *g, size_t k, bool baseline, const char **fn,
                       nvmlReturn_t *rr) {
  struct erg_gpu_device *d = &g->dev[k];
  struct nvml_prev *p = &g->prev[k];
  unsigned long long mj = 0;
  unsigned mw = 0;
  bool have_e = false, have_p = false;
  d->has_energy = d->energy_from_counter = false;
  d->energy_counter_joules = d->energy_power_joules = d->power_now_watts = -1;
  if (d->energy_counter) {
    *fn = "nvmlDeviceGetTotalEnergyConsumption";
    if ((*rr = g->api.energy(p->h, &mj)) != NVML_SUCCESS && !nvml_soft(*rr))
      return -1;
    have_e = *rr == NVML_SUCCESS;
  }
  if (d->power_reading) {
    *fn = "nvmlDeviceGetPowerUsage";
    if ((*rr = g->api.power(p->h, &mw)) != NVML_SUCCESS && !nvml_soft(*rr))
      return -1;
    have_p = *rr == NVML_SUCCESS;
  }
  if (have_p)
    d->power_now_watts = mw / 1000.0;
  /* A counter that went back: the driver was reloaded; use the power. */
  erg_gpu_energy_settle(d,
                        !baseline && have_e && p->have_energy && mj >= p->energy_mj
                            ? (double)(mj - p->energy_mj) / 1000.0
                            : -1,
                        !baseline && p->have_power ? p->power_w : -1);
  p->have_energy = have_e;
  p->energy_mj = mj;
  p->have_power = have_p;
  p->power_w = d->power_now_watts;
  return 0;
}

/* Per-process utilization is the costly call of a pass; an idle GPU has
 * nothing in it. Skipped when device k is idle at this reading and was at
 * the last one: utilization 0 (the driver's last period), no process holds
 * a compute context (the list was read), and the last call brought no
 * sample. The shares then count as read, all 0. Left out: a process whose
 * context and every kernel fall between two readings, outside both
 * utilization periods (a whole life under a second); its samples come
 * with the next call that is made (last_ts is not moved). */
static bool nvml_skip_proc_util(const struct nvml_gpu *g, size_t k, bool idle_now) {
  return idle_now && g->prev[k].idle;
}

static int nvml_sample(void *b, uint64_t now_ns, struct erg_gpu_interval *out, char *why,
                       size_t whylen) {
  struct nvml_gpu *g = b;
  bool baseline;
  double seconds = erg_gpu_clock_begin(&g->clock, now_ns, &baseline);
  g->nprocs = 0;
  for (size_t k = 0; k < g->n; k++) {
    struct erg_gpu_device *d = &g->dev[k];
    nvmlReturn_t r;
    const char *fn = "";
    d->seconds = seconds;
    if (nvml_energy(g, k, baseline, &fn, &r) != 0)
      return nvml_fail(g, d, fn, r, why, whylen);
    d->has_util = d->has_proc_util = false;
    if (g->api.util) {
      nvmlUtilization_t u;
      if ((r = g->api.util(g->prev[k].h, &u)) != NVML_SUCCESS && !nvml_soft(r))
        return nvml_fail(g, d, "nvmlDeviceGetUtilizationRates", r, why, whylen);
      d->has_util = r == NVML_SUCCESS;
      d->util_percent = d->has_util ? u.gpu : 0;
      d->mem_util_percent = d->has_util ? u.memory : 0;
    }
    size_t first = g->nprocs;
    int listed = 1;
    if (!baseline && g->api.compute_procs && (listed = nvml_compute_procs(g, k, &r)) < 0)
      return nvml_fail(g, d, "nvmlDeviceGetComputeRunningProcesses_v3", r, why, whylen);
    bool idle = listed == 0 && g->nprocs == first && d->has_util && d->util_percent == 0;
    long periods = 0;
    if (d->proc_util && nvml_skip_proc_util(g, k, idle))
      d->has_proc_util = true;
    else if (d->proc_util && (periods = nvml_proc_util(g, k, baseline, &r)) < 0)
      return nvml_fail(g, d, "nvmlDeviceGetProcessUtilization", r, why, whylen);
    g->prev[k].idle = idle && periods == 0;
    if (!baseline)
      nvml_proc_finish(g, k, first, periods);
  }
  return erg_gpu_clock_end(&g->clock, now_ns, baseline, out, g->dev, g->n, g->procs, g->nprocs);
}

static void nvml_close(void *b) {
  struct nvml_gpu *g = b;
  if (!g)
    return;
  if (g->initialised)
    g->api.shutdown();
  if (g->api.dl)
    dlclose(g->api.dl);
  free(g->us);
  free(g->ts);
  free(g->pi);
  free(g->procs);
  for (size_t k = 0; k < ERG_GPU_MAX_DEVICES; k++)
    free(g->prev[k].last);
  free(g);
}

const struct erg_gpu_backend erg_gpu_nvml_backend = {"nvml", nvml_open, nvml_devices, nvml_sample,
                                                     nvml_close};

// SPDX-License-Identifier: GPL-3.0-or-later
/* GPUs in the agent's samples (docs/gpu.md): each GPU's energy, power and
 * utilization over the interval (Sample.gpus) and each process's use of
 * them (Proc.gpu), on the process entries the sweep built, so a GPU
 * process carries its command, job, unit, container and user like any
 * other. The readings come from gpu.h (gpu.c: NVML for NVIDIA, ROCm SMI
 * for AMD); agent.c drives this file and adds the GPU processes its sweep
 * left out. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "gpu.h"

/* Features announced while the GPUs are read; dropped if they fail. */
#define GPU_F_ENERGY "gpu_energy"
#define GPU_F_SHARE "gpu_sm_share"

struct gpu_link {
  size_t proc; /* index in a->procs */
  size_t use;  /* index in iv.procs */
};

struct agent_gpu {
  struct erg_gpu *g;
  struct erg_gpu_interval iv;
  int have_iv;       /* iv is this sample's */
  uint32_t *missing; /* agent_gpu_missing */
  Erg__Gpu gpus[ERG_GPU_MAX_DEVICES];
  Erg__Gpu *gpu_ptrs[ERG_GPU_MAX_DEVICES];
  struct gpu_link *links;
  Erg__GpuUse *uses;
  Erg__GpuUse **use_ptrs;
  size_t nlinks, cap;
};

int agent_gpu_config(struct erg_agent_config *cfg, const char *key, const char *value, char *why,
                     size_t whylen) {
  if (!strcmp(key, "gpu")) {
    if (strcmp(value, "auto") && strcmp(value, "off") && strcmp(value, "nvml") &&
        strcmp(value, "rocm")) {
      snprintf(why, whylen, "key 'gpu': '%s' is not auto, off, nvml or rocm", value);
      return -1;
    }
    erg_strlcpy(cfg->gpu, value, sizeof cfg->gpu);
    return 0;
  }
  bool rocm = !strcmp(key, "rocm_smi_library");
  char *dst = rocm ? cfg->rocm_smi_library : cfg->nvml_library;
  size_t cap = rocm ? sizeof cfg->rocm_smi_library : sizeof cfg->nvml_library;
  if (strlen(value) >= cap) {
    snprintf(why, whylen, "key '%s': longer than %zu bytes", key, cap - 1);
    return -1;
  }
  erg_strlcpy(dst, value, cap);
  return 0;
}

/* The config's library, else the environment's; NULL: the default names. */
static const char *gpu_library(const char *cfg, const char *env) {
  const char *lib = cfg[0] ? cfg : getenv(env);
  return lib && lib[0] ? lib : NULL;
}

/* Adds a line for the caller to log. */
static void gpu_note(struct agent_gpu_notes *notes, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void gpu_note(struct agent_gpu_notes *notes, int level, const char *fmt, ...) {
  if (notes->n >= AGENT_GPU_NOTES)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(notes->text[notes->n], sizeof notes->text[0], fmt, ap);
  va_end(ap);
  notes->level[notes->n++] = level;
}

int agent_gpu_open(struct agent_gpu **out, const struct erg_agent_config *cfg, char **features,
                   size_t *nfeatures, size_t maxfeatures, struct agent_gpu_notes *notes, char *why,
                   size_t whylen) {
  *out = NULL;
  notes->n = 0;
  if (!strcmp(cfg->gpu, "off"))
    return 0;
  /* auto: NVIDIA's and AMD's stacks both, whichever are there. */
  bool nvml = !strcmp(cfg->gpu, "nvml"), rocm = !strcmp(cfg->gpu, "rocm");
  struct erg_gpu_options o = {
      .nvml = !rocm,
      .rocm = !nvml,
      .nvml_library = gpu_library(cfg->nvml_library, "ERG_NVML_LIBRARY"),
      .rocm_library = gpu_library(cfg->rocm_smi_library, "ERG_ROCM_SMI_LIBRARY"),
  };
  char gwhy[1024];
  bool absent;
  struct erg_gpu *g;
  if (erg_gpu_open_with(&g, &o, &absent, gwhy, sizeof gwhy) != 0) {
    if (nvml || rocm) {
      snprintf(why, whylen, "gpu = %s, but %s is unusable: %s", cfg->gpu,
               nvml ? "NVML" : "ROCm SMI", gwhy);
      return -1;
    }
    /* No GPU stack is the normal node: said only at debug level. */
    if (absent)
      gpu_note(notes, ERG_LOG_DEBUG, "no GPUs: %s", gwhy);
    else
      gpu_note(notes, ERG_LOG_INFO, "GPUs not sampled: %s", gwhy);
    return 0;
  }
  /* One stack works, the other is there but failed: said too. */
  if (gwhy[0])
    gpu_note(notes, ERG_LOG_INFO, "GPUs not sampled: %s", gwhy);
  struct agent_gpu *ag = calloc(1, sizeof *ag);
  if (!ag) {
    erg_gpu_close(g);
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  ag->g = g;
  size_t n, energy = 0, shares = 0, counters = 0;
  const struct erg_gpu_device *d = erg_gpu_devices(g, &n);
  for (size_t i = 0; i < n; i++) {
    energy += d[i].energy_counter || d[i].power_reading;
    shares += d[i].proc_util;
    counters += d[i].energy_counter;
  }
  if (energy && *nfeatures < maxfeatures)
    features[(*nfeatures)++] = (char *)GPU_F_ENERGY;
  if (shares && *nfeatures < maxfeatures)
    features[(*nfeatures)++] = (char *)GPU_F_SHARE;
  gpu_note(notes, ERG_LOG_INFO,
           "GPUs: %zu through %s (%s%s): energy counter on %zu, per-process shares on %zu", n,
           erg_gpu_backend(g), d[0].name, n > 1 ? ", ..." : "", counters, shares);
  *out = ag;
  return 0;
}

void agent_gpu_close(struct agent_gpu *ag) {
  if (!ag)
    return;
  erg_gpu_close(ag->g);
  free(ag->links);
  free(ag->uses);
  free(ag->use_ptrs);
  free(ag->missing);
  free(ag);
}

int agent_gpu_read(struct agent_gpu *ag, int ready, char **features, size_t *nfeatures, char *why,
                   size_t whylen) {
  char gwhy[400];
  int r = erg_gpu_sample(ag->g, erg_time_monotonic_ns(), &ag->iv, gwhy, sizeof gwhy);
  ag->have_iv = r > 0 && ready;
  if (r >= 0)
    return 0;
  /* The caller closes the GPUs, and the CPU side goes on as on a node
   * without them. */
  snprintf(why, whylen, "%s; features %s and %s off, CPU sampling goes on", gwhy, GPU_F_ENERGY,
           GPU_F_SHARE);
  size_t m = 0;
  for (size_t i = 0; i < *nfeatures; i++)
    if (strncmp(features[i], "gpu_", 4))
      features[m++] = features[i];
  *nfeatures = m;
  return -1;
}

struct pid_index {
  uint32_t pid;
  int exited;
  size_t idx;
};

static int cmp_pid_index(const void *x, const void *y) {
  const struct pid_index *a = x, *b = y;
  if (a->pid != b->pid)
    return (a->pid > b->pid) - (a->pid < b->pid);
  return a->exited - b->exited; /* the live process first */
}

/* procs sorted by pid, the live entry of a pid first. */
static struct pid_index *gpu_index(const Erg__Proc *procs, size_t n) {
  struct pid_index *ix = malloc((n ? n : 1) * sizeof *ix);
  for (size_t i = 0; ix && i < n; i++)
    ix[i] = (struct pid_index){procs[i].pid, procs[i].exited, i};
  if (ix)
    qsort(ix, n, sizeof *ix, cmp_pid_index);
  return ix;
}

/* The entry of pid in procs, or -1. */
static long gpu_find(const struct pid_index *ix, size_t n, uint32_t pid) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (ix[mid].pid < pid)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && ix[lo].pid == pid ? (long)ix[lo].idx : -1;
}

size_t agent_gpu_missing(struct agent_gpu *ag, const Erg__Proc *procs, size_t nprocs,
                         const uint32_t **pids) {
  size_t m = 0;
  struct pid_index *ix = ag->have_iv ? gpu_index(procs, nprocs) : NULL;
  uint32_t *out = ix ? realloc(ag->missing, (ag->iv.nprocs + 1) * sizeof *out) : NULL;
  if (out) {
    ag->missing = out;
    /* iv.procs are sorted by GPU, then pid: a pid on two GPUs is one entry. */
    for (size_t u = 0; u < ag->iv.nprocs; u++) {
      uint32_t pid = ag->iv.procs[u].pid;
      int dup = 0;
      for (size_t i = 0; i < m && !dup; i++)
        dup = out[i] == pid;
      if (!dup && gpu_find(ix, nprocs, pid) < 0)
        out[m++] = pid;
    }
  }
  free(ix);
  *pids = ag->missing;
  return m;
}

static int cmp_link(const void *x, const void *y) {
  const struct gpu_link *a = x, *b = y;
  if (a->proc != b->proc)
    return (a->proc > b->proc) - (a->proc < b->proc);
  return (a->use > b->use) - (a->use < b->use);
}

/* Each GPU process's entry in procs (one not there, gone or outside the
 * scope, is left out), in the order of procs then GPUs. */
static int gpu_link(struct agent_gpu *ag, const Erg__Proc *procs, size_t nprocs) {
  ag->nlinks = 0;
  if (ag->iv.nprocs > ag->cap) {
    size_t cap = ag->iv.nprocs * 2;
    struct gpu_link *l = realloc(ag->links, cap * sizeof *l);
    Erg__GpuUse *u = l ? realloc(ag->uses, cap * sizeof *u) : NULL;
    Erg__GpuUse **up = u ? realloc(ag->use_ptrs, cap * sizeof *up) : NULL;
    ag->links = l ? l : ag->links;
    ag->uses = u ? u : ag->uses;
    ag->use_ptrs = up ? up : ag->use_ptrs;
    if (!up)
      return -1;
    ag->cap = cap;
  }
  struct pid_index *ix = gpu_index(procs, nprocs);
  if (!ix)
    return -1;
  for (size_t u = 0; u < ag->iv.nprocs; u++) {
    long idx = gpu_find(ix, nprocs, ag->iv.procs[u].pid);
    if (idx >= 0)
      ag->links[ag->nlinks++] = (struct gpu_link){(size_t)idx, u};
  }
  free(ix);
  qsort(ag->links, ag->nlinks, sizeof *ag->links, cmp_link);
  return 0;
}

/* Device k was idle over the interval: its shares were read and no process
 * the library listed (in the agent's scope or not) had activity, nor was
 * it busy at the reading (a process the library did not list). Its board
 * energy is then idle power, which ergd treats as the node's idle
 * (docs/gpu.md). */
static bool gpu_idle(const struct erg_gpu_interval *iv, size_t k) {
  const struct erg_gpu_device *d = &iv->devices[k];
  if (!d->has_proc_util || (d->has_util && d->util_percent > 0))
    return false;
  for (size_t i = 0; i < iv->nprocs; i++)
    if (iv->procs[i].device == k && iv->procs[i].sm_share > 0)
      return false;
  return true;
}

void agent_gpu_attach(struct agent_gpu *ag, Erg__Sample *s, Erg__Proc *procs, size_t nprocs) {
  if (!ag->have_iv)
    return;
  for (size_t k = 0; k < ag->iv.ndevices; k++) {
    const struct erg_gpu_device *d = &ag->iv.devices[k];
    Erg__Gpu *m = &ag->gpus[k];
    erg__gpu__init(m);
    m->index = d->index;
    m->uuid = (char *)d->uuid;
    m->name = (char *)d->name;
    m->interval_ns = (uint64_t)(d->seconds * 1e9 + 0.5);
    m->has_energy = d->has_energy;
    m->energy_joules = d->has_energy ? d->energy_joules : 0;
    m->energy_from_counter = d->energy_from_counter;
    m->power_watts = d->has_energy ? d->power_watts : 0;
    m->util_percent = d->util_percent;
    m->mem_util_percent = d->mem_util_percent;
    m->mig = d->mig;
    m->sm_shares = d->has_proc_util;
    m->idle = gpu_idle(&ag->iv, k);
    ag->gpu_ptrs[k] = m;
  }
  s->gpus = ag->gpu_ptrs;
  s->n_gpus = ag->iv.ndevices;
  if (gpu_link(ag, procs, nprocs) != 0)
    return;
  /* Each process's uses are contiguous in use_ptrs. */
  for (size_t i = 0; i < ag->nlinks; i++) {
    const struct erg_gpu_proc *g = &ag->iv.procs[ag->links[i].use];
    Erg__GpuUse *u = &ag->uses[i];
    erg__gpu_use__init(u);
    u->gpu_index = ag->iv.devices[g->device].index;
    u->sm_share = g->sm_share;
    u->sm_percent = g->sm_percent;
    u->mem_percent = g->mem_percent;
    u->used_memory_bytes = g->used_memory_bytes;
    u->has_mig_instance = g->gpu_instance != ERG_GPU_NO_INSTANCE;
    u->mig_gpu_instance = u->has_mig_instance ? g->gpu_instance : 0;
    u->mig_compute_instance = u->has_mig_instance ? g->compute_instance : 0;
    ag->use_ptrs[i] = u;
    Erg__Proc *p = &procs[ag->links[i].proc];
    if (!p->n_gpu)
      p->gpu = &ag->use_ptrs[i];
    p->n_gpu++;
  }
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* gpu.h over the backends (gpu_backend.h), chosen at run time: every stack
 * asked for that loads and sees a GPU is opened, NVML first, then ROCm
 * SMI, so a node with GPUs of both vendors (say an AMD APU beside an NVIDIA
 * card) has all of them. With one stack open (the usual node) its readings
 * pass through untouched; with two, the devices are listed one after the
 * other (ROCm SMI's indices after NVML's) and the processes' device
 * positions follow. libc only. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_backend.h"

#define GPU_PARTS 2

struct gpu_part {
  const struct erg_gpu_backend *be;
  void *b;
  size_t n; /* its devices kept (the total is at most ERG_GPU_MAX_DEVICES) */
};

struct erg_gpu {
  struct gpu_part part[GPU_PARTS];
  size_t nparts;
  char name[16];
  /* Several parts only: the devices and processes of all of them. */
  size_t ndev;
  struct erg_gpu_device dev[ERG_GPU_MAX_DEVICES];
  struct erg_gpu_proc *procs;
  size_t nprocs, cap;
};

/* Appends text to why ("; " between), as far as it fits. */
static void gpu_why_add(char *why, size_t whylen, const char *text) {
  size_t len = strlen(why);
  if (len + 1 < whylen)
    snprintf(why + len, whylen - len, "%s%s", len ? "; " : "", text);
}

/* The devices of every part, ROCm SMI's indices after NVML's. */
static void gpu_merge_devices(struct erg_gpu *g) {
  g->ndev = 0;
  unsigned base = 0;
  for (size_t p = 0; p < g->nparts; p++) {
    size_t n;
    const struct erg_gpu_device *d = g->part[p].be->devices(g->part[p].b, &n);
    unsigned top = 0;
    for (size_t i = 0; i < g->part[p].n && i < n; i++) {
      g->dev[g->ndev] = d[i];
      g->dev[g->ndev++].index = base + d[i].index;
      top = d[i].index + 1 > top ? d[i].index + 1 : top;
    }
    base += top;
  }
}

int erg_gpu_open_with(struct erg_gpu **out, const struct erg_gpu_options *opts, bool *absent,
                      char *why, size_t whylen) {
  *absent = false;
  if (whylen)
    why[0] = '\0';
  struct erg_gpu *g = calloc(1, sizeof *g);
  if (!g) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  const struct {
    bool want;
    const struct erg_gpu_backend *be;
    const char *library;
  } stacks[GPU_PARTS] = {{opts->nvml, &erg_gpu_nvml_backend, opts->nvml_library},
                         {opts->rocm, &erg_gpu_rocm_backend, opts->rocm_library}};
  char failed[512] = "", missing[512] = "";
  size_t total = 0;
  for (size_t i = 0; i < GPU_PARTS; i++) {
    if (!stacks[i].want)
      continue;
    char w[400];
    bool abs = false;
    void *b = NULL;
    const char *lib = stacks[i].library && stacks[i].library[0] ? stacks[i].library : NULL;
    if (stacks[i].be->open(&b, lib, &abs, w, sizeof w) != 0) {
      gpu_why_add(abs ? missing : failed, abs ? sizeof missing : sizeof failed, w);
      continue;
    }
    size_t n;
    stacks[i].be->devices(b, &n);
    if (total + n > ERG_GPU_MAX_DEVICES)
      n = ERG_GPU_MAX_DEVICES - total;
    if (!n) { /* no room left: more than 64 GPUs */
      stacks[i].be->close(b);
      continue;
    }
    g->part[g->nparts++] = (struct gpu_part){stacks[i].be, b, n};
    total += n;
    if (g->name[0])
      strcat(g->name, "+");
    strcat(g->name, stacks[i].be->name); /* "nvml+rocm" at most */
  }
  if (!g->nparts) {
    *absent = !failed[0];
    snprintf(why, whylen, "%s",
             failed[0]    ? failed
             : missing[0] ? missing
                          : "no GPU stack asked for");
    free(g);
    return -1;
  }
  snprintf(why, whylen, "%s", failed);
  if (g->nparts > 1)
    gpu_merge_devices(g);
  *out = g;
  return 0;
}

int erg_gpu_open(struct erg_gpu **out, const char *library, bool *absent, char *why,
                 size_t whylen) {
  struct erg_gpu_options o = {.nvml = true, .nvml_library = library};
  return erg_gpu_open_with(out, &o, absent, why, whylen);
}

const char *erg_gpu_backend(const struct erg_gpu *g) { return g->name; }

double erg_gpu_clock_begin(const struct erg_gpu_clock *c, uint64_t now_ns, bool *baseline) {
  *baseline = !c->have_prev;
  return *baseline || now_ns <= c->prev_ns ? 0 : (double)(now_ns - c->prev_ns) / 1e9;
}

int erg_gpu_clock_end(struct erg_gpu_clock *c, uint64_t now_ns, bool baseline,
                      struct erg_gpu_interval *out, const struct erg_gpu_device *devices,
                      size_t ndevices, const struct erg_gpu_proc *procs, size_t nprocs) {
  c->prev_ns = now_ns;
  c->have_prev = true;
  *out = (struct erg_gpu_interval){
      .ndevices = ndevices, .devices = devices, .nprocs = nprocs, .procs = procs};
  return baseline ? 0 : 1;
}

void erg_gpu_energy_settle(struct erg_gpu_device *d, double counter_joules,
                           double prev_power_watts) {
  d->energy_counter_joules = counter_joules >= 0 ? counter_joules : -1;
  d->energy_power_joules = prev_power_watts >= 0 && d->power_now_watts >= 0
                               ? (prev_power_watts + d->power_now_watts) / 2 * d->seconds
                               : -1;
  d->has_energy = d->energy_from_counter = false;
  if (d->energy_counter_joules >= 0) {
    d->energy_joules = d->energy_counter_joules;
    d->has_energy = d->energy_from_counter = true;
  } else if (d->energy_power_joules >= 0) {
    d->energy_joules = d->energy_power_joules;
    d->has_energy = true;
  }
  d->power_watts = d->has_energy && d->seconds > 0 ? d->energy_joules / d->seconds : 0;
}

const struct erg_gpu_device *erg_gpu_devices(const struct erg_gpu *g, size_t *n) {
  if (g->nparts == 1)
    return g->part[0].be->devices(g->part[0].b, n);
  *n = g->ndev;
  return g->dev;
}

int erg_gpu_sample(struct erg_gpu *g, uint64_t now_ns, struct erg_gpu_interval *out, char *why,
                   size_t whylen) {
  if (g->nparts == 1)
    return g->part[0].be->sample(g->part[0].b, now_ns, out, why, whylen);
  struct erg_gpu_interval iv[GPU_PARTS];
  int r = 1;
  size_t want = 0;
  for (size_t p = 0; p < g->nparts; p++) {
    int rp = g->part[p].be->sample(g->part[p].b, now_ns, &iv[p], why, whylen);
    if (rp < 0)
      return -1;
    r = rp < r ? rp : r;
    want += iv[p].nprocs;
  }
  if (want > g->cap) {
    struct erg_gpu_proc *pp = realloc(g->procs, want * sizeof *pp);
    if (!pp) {
      snprintf(why, whylen, "out of memory");
      return -1;
    }
    g->procs = pp;
    g->cap = want;
  }
  gpu_merge_devices(g);
  g->nprocs = 0;
  unsigned first = 0;
  for (size_t p = 0; p < g->nparts; p++) {
    for (size_t i = 0; i < iv[p].nprocs; i++)
      if (iv[p].procs[i].device < g->part[p].n) {
        g->procs[g->nprocs] = iv[p].procs[i];
        g->procs[g->nprocs++].device += first;
      }
    first += (unsigned)g->part[p].n;
  }
  out->ndevices = g->ndev;
  out->devices = g->dev;
  out->nprocs = g->nprocs;
  out->procs = g->procs;
  return r;
}

void erg_gpu_close(struct erg_gpu *g) {
  if (!g)
    return;
  for (size_t p = 0; p < g->nparts; p++)
    g->part[p].be->close(g->part[p].b);
  free(g->procs);
  free(g);
}

int erg_gpu_dlsyms(void *dl, void *api, const struct erg_gpu_sym *syms, size_t n,
                   const char **missing) {
  for (size_t i = 0; i < n; i++) {
    void *p = dlsym(dl, syms[i].name);
    if (!p && syms[i].required) {
      *missing = syms[i].name;
      return -1;
    }
    /* POSIX: a data pointer from dlsym may be converted to a function pointer. */
    memcpy((char *)api + syms[i].off, &p, sizeof p);
  }
  return 0;
}

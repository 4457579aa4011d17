// SPDX-License-Identifier: GPL-3.0-or-later
/* One GPU backend (one vendor's management library, loaded with dlopen),
 * as gpu.c drives it: the functions of gpu.h for that stack alone. A
 * backend's state is its own (void *); it returns errors and never logs.
 * gpu_nvml.c: NVIDIA, NVML; gpu_rocm.c: AMD, ROCm SMI. */
#ifndef ERG_GPU_BACKEND_H
#define ERG_GPU_BACKEND_H

#include "gpu.h"

struct erg_gpu_backend {
  const char *name; /* "nvml", "rocm" */
  /* library NULL: the backend's default names. As erg_gpu_open. */
  int (*open)(void **out, const char *library, bool *absent, char *why, size_t whylen);
  const struct erg_gpu_device *(*devices)(const void *b, size_t *n);
  int (*sample)(void *b, uint64_t now_ns, struct erg_gpu_interval *out, char *why, size_t whylen);
  void (*close)(void *b);
};

/* The interval's energy of d from what its backend read (gpu.c), the same
 * for every vendor: counter_joules, the energy counter's delta (< 0: none,
 * e.g. the first interval or a counter that went back), else the trapezoid
 * of prev_power_watts and d->power_now_watts (either < 0: none). Sets
 * energy_counter_joules, energy_power_joules, energy_joules, has_energy,
 * energy_from_counter and power_watts (the interval's mean, 0 without
 * energy); d->seconds must be the interval's. */
void erg_gpu_energy_settle(struct erg_gpu_device *d, double counter_joules,
                           double prev_power_watts);

/* A backend's readings in time (gpu.c), the same for every vendor: the
 * first reading is the baseline (no interval yet); each later one ends the
 * interval since the one before. */
struct erg_gpu_clock {
  uint64_t prev_ns; /* the previous reading's time (monotonic) */
  bool have_prev;
};
/* A reading at now_ns begins: the interval's seconds (0 for the baseline,
 * which *baseline says, or a clock that did not move). */
double erg_gpu_clock_begin(const struct erg_gpu_clock *c, uint64_t now_ns, bool *baseline);
/* The reading at now_ns is done: it starts the next interval; out gets the
 * devices and processes read. Returns the backend's sample result: 1, or 0
 * for the baseline. */
int erg_gpu_clock_end(struct erg_gpu_clock *c, uint64_t now_ns, bool baseline,
                      struct erg_gpu_interval *out, const struct erg_gpu_device *devices,
                      size_t ndevices, const struct erg_gpu_proc *procs, size_t nprocs);

/* A backend's library function: its name, where its pointer goes in the
 * backend's table of functions, and whether the backend needs it. */
struct erg_gpu_sym {
  const char *name;
  size_t off;
  bool required;
};
/* Fills api (the backend's table) from dl with syms[0..n) (gpu.c): 0, or
 * -1 with *missing the first required function dl lacks. Absent optional
 * ones are NULL. */
int erg_gpu_dlsyms(void *dl, void *api, const struct erg_gpu_sym *syms, size_t n,
                   const char **missing);

extern const struct erg_gpu_backend erg_gpu_nvml_backend;
extern const struct erg_gpu_backend erg_gpu_rocm_backend;

#endif

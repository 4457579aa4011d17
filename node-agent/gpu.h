// SPDX-License-Identifier: GPL-3.0-or-later
/* GPU sampling: per GPU, board energy, mean power and utilization over an
 * interval; per process, its share of each GPU's activity. Two backends
 * implement it behind gpu_backend.h, chosen at run time (gpu.c): NVIDIA
 * through NVML (gpu_nvml.c) and AMD through ROCm SMI (gpu_rocm.c), each
 * loaded with dlopen. The backends and gpu.c use libc and libdl only, so
 * tests/gpu/device_check.sh can build them alone; they return errors and
 * never log. */
#ifndef ERG_GPU_H
#define ERG_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ERG_GPU_MAX_DEVICES 64
#define ERG_GPU_TEXT 96 /* uuid, name: NVML's *_V2_BUFFER_SIZE */

/* One GPU. The identity and capability fields are set at open; the
 * readings by each erg_gpu_sample over the interval since the last one. */
struct erg_gpu_device {
  /* The backend's device index; with NVML and ROCm SMI both open, the AMD
   * GPUs follow the NVIDIA ones (NVML's count + ROCm SMI's index). */
  unsigned index;
  char uuid[ERG_GPU_TEXT]; /* NVML: GPU-…; ROCm SMI: AMD-<unique id> or AMD-pci-<address> */
  char name[ERG_GPU_TEXT];
  bool mig;            /* MIG mode on: no per-process utilization */
  bool energy_counter; /* has a board energy counter (NVML: Volta and newer) */
  bool power_reading;  /* has a board power reading */
  bool proc_util;      /* reports per-process shares */
  /* Readings over the interval. */
  double seconds;               /* from the previous reading to this one */
  bool has_energy;              /* energy_joules and power_watts are set */
  bool energy_from_counter;     /* energy_joules is the counter's difference */
  double energy_joules;         /* counter difference, else integrated power */
  double energy_counter_joules; /* -1: no counter reading this interval */
  double energy_power_joules;   /* trapezoid of the power readings; -1: none */
  double power_watts;           /* mean: energy_joules / seconds */
  double power_now_watts;       /* the last power reading; -1: none */
  bool has_util;
  unsigned util_percent;     /* kernels running, % of the driver's last period (AMD: busy %) */
  unsigned mem_util_percent; /* device memory busy, same */
  bool has_proc_util;        /* the processes' shares were read this interval */
};

/* One process's use of one GPU over the interval: the processes that held
 * a compute context at the reading or had activity in the interval. */
struct erg_gpu_proc {
  uint32_t pid;    /* as the driver sees it (the host's pid namespace) */
  unsigned device; /* position in erg_gpu_interval.devices */
  /* This process's part of the GPU's activity in the interval, 0..1; the
   * shares of a GPU sum to 1 when it had any activity, to 0 when none (or
   * without has_proc_util). NVML: its sum of the driver's per-period SM
   * utilization over the sum for every process. ROCm SMI (docs/gpu.md):
   * its CU occupancy at the reading over the GPU's processes', else its
   * part of their VRAM, else equal parts; 0 for all when the GPU is idle. */
  double sm_share;
  double sm_percent;  /* NVML: its mean SM utilization over the interval, %; AMD: CU occupancy */
  double mem_percent; /* NVML: its mean memory-controller utilization, %; AMD: 0 */
  uint64_t used_memory_bytes; /* at the reading; 0: unknown */
  /* MIG: the GPU instance and compute instance the process runs in (NVML's
   * process list); ERG_GPU_NO_INSTANCE without MIG or when not known. */
  uint32_t gpu_instance, compute_instance;
};
#define ERG_GPU_NO_INSTANCE 0xFFFFFFFFu

struct erg_gpu_interval {
  size_t ndevices;
  const struct erg_gpu_device *devices;
  size_t nprocs;
  const struct erg_gpu_proc *procs; /* sorted by device, then pid */
};

/* Which GPU stacks erg_gpu_open_with tries, and where their libraries are. */
struct erg_gpu_options {
  bool nvml;                /* NVIDIA: NVML */
  bool rocm;                /* AMD: ROCm SMI */
  const char *nvml_library; /* NULL or "": libnvidia-ml.so.1 */
  /* NULL or "": librocm_smi64.so.7, .so.6, .so.5, .so.1, .so, then
   * /opt/rocm/lib/librocm_smi64.so, the first that loads. */
  const char *rocm_library;
};

struct erg_gpu;

/* Opens every stack opts asks for that loads and sees a GPU (NVML first,
 * then ROCm SMI). 0 when one did: why then holds the other stacks'
 * failures other than an absent library ("" if none), for the caller to
 * say; -1 when none did, with why, and *absent set when no stack is there
 * at all (a node without the GPU stack, not an error for auto). */
int erg_gpu_open_with(struct erg_gpu **out, const struct erg_gpu_options *opts, bool *absent,
                      char *why, size_t whylen);
/* NVML alone, library as nvml_library above (tests/gpu/gpu_check.c). */
int erg_gpu_open(struct erg_gpu **out, const char *library, bool *absent, char *why, size_t whylen);
const char *erg_gpu_backend(const struct erg_gpu *g); /* "nvml", "rocm" or "nvml+rocm" */
/* The GPUs found (readings as of the last erg_gpu_sample). */
const struct erg_gpu_device *erg_gpu_devices(const struct erg_gpu *g, size_t *n);
/* Reads every GPU at now_ns (CLOCK_MONOTONIC). 1: *out holds the interval
 * since the previous call, valid until the next; 0: the first call, a
 * baseline; -1: the GPU stack failed (a GPU lost, the driver gone) and
 * why says how: close it, it will not recover. */
int erg_gpu_sample(struct erg_gpu *g, uint64_t now_ns, struct erg_gpu_interval *out, char *why,
                   size_t whylen);
void erg_gpu_close(struct erg_gpu *g);

#endif

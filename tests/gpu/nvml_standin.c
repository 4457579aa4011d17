// SPDX-License-Identifier: GPL-3.0-or-later
/* A stand-in for NVIDIA's libnvidia-ml.so.1, for tests: no GPU exists on
 * the machines erg's tests run on, so this library serves scripted GPUs,
 * processes, utilization and power through the NVML functions erg uses
 * (node-agent/gpu_nvml_abi.h). It is not NVML; tests/gpu/device_check.sh
 * checks erg against the real one on a GPU host.
 *
 * The script (standin_script.c parses it, for rocm_standin.c too), named
 * by ERG_NVML_STANDIN_SCRIPT (unset: nvmlInit_v2 fails with "driver not
 * loaded"), one directive a line, '#' starts a comment:
 *
 *   gpu IDX [uuid=S] [name=S] [energy=1|0] [power=1|0] [procutil=1|0]
 *           [mig=0|1|na] [energy_start_mj=E]
 *   at T gpu=IDX power_w=W [util=U] [memutil=M] [proc=PID:SM[:MEM[:USED_MIB[:GI/CI]]]]...
 *   period_ms MS           driver sample period of process utilization (100)
 *   fail_after_calls N     every call after the Nth returns GPU_IS_LOST
 *   fail_at T              every call from T seconds on returns GPU_IS_LOST
 *   fail_when PATH         every call once the file PATH exists: GPU_IS_LOST
 *   init_error CODE        nvmlInit_v2 returns CODE
 *
 * "at" sets a GPU's state from T seconds on (since nvmlInit_v2, or the
 * clock set by nvml_standin_set_time): its power, utilization and
 * processes (SM and memory utilization in %, memory in MiB). The energy
 * counter (mJ) is energy_start_mj plus the exact integral of that
 * piecewise-constant power, so it differs from integrated power readings
 * when the power changes between readings. Process utilization comes as
 * NVML gives it: per period, one sample per process whose SM or memory
 * utilization is non-zero, time-stamped at the period's end. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_nvml_abi.h"
#include "standin_script.h"

static int initialised;
static long calls;
static unsigned long long ts_base_us;

/* Test control (not NVML): from now on the clock is this, in seconds. */
void nvml_standin_set_time(double seconds);
void nvml_standin_set_time(double seconds) { ss_set_time(seconds); }
/* NVML calls so far (not NVML either). */
long nvml_standin_calls(void);
long nvml_standin_calls(void) { return calls; }

/* nvmlDeviceGetProcessUtilization calls so far (not NVML). */
static long proc_util_calls;
long nvml_standin_proc_util_calls(void);
long nvml_standin_proc_util_calls(void) { return proc_util_calls; }

/* Every entry point: counts the call, fails as the script says. */
#define SI_ENTER()                                                                                 \
  do {                                                                                             \
    if (!initialised)                                                                              \
      return NVML_ERROR_UNINITIALIZED;                                                             \
    calls++;                                                                                       \
    if (ss_failing(calls))                                                                         \
      return NVML_ERROR_GPU_IS_LOST;                                                               \
  } while (0)

static struct ss_gpu *si_dev(nvmlDevice_t d) {
  struct ss_gpu *g = (struct ss_gpu *)d;
  return g >= ss.gpus && g < ss.gpus + ss.ngpu ? g : NULL;
}
#define SI_DEV(d, g)                                                                               \
  struct ss_gpu *g = si_dev(d);                                                                    \
  if (!g)                                                                                          \
  return NVML_ERROR_INVALID_ARGUMENT

nvmlReturn_t nvmlInit_v2(void) {
  calls = 1; /* counted from each init */
  int rc = ss_load("ERG_NVML_STANDIN_SCRIPT", "nvml_standin", "GPU-standin-", "erg NVML stand-in");
  if (rc != 0)
    return rc > 0 ? NVML_ERROR_DRIVER_NOT_LOADED : NVML_ERROR_UNKNOWN;
  if (ss.init_error)
    return (nvmlReturn_t)ss.init_error;
  /* ERG_NVML_STANDIN_EPOCH (unix seconds): the script's time 0, so that
   * another program (erg-pdusim --gpu-start) follows the same clock. */
  ts_base_us = ss_start("ERG_NVML_STANDIN_EPOCH");
  initialised = 1;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
  if (!initialised)
    return NVML_ERROR_UNINITIALIZED;
  calls++;
  initialised = 0;
  return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
  SI_ENTER();
  *count = (unsigned)ss.ngpu;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *dev) {
  SI_ENTER();
  if (index >= (unsigned)ss.ngpu)
    return NVML_ERROR_INVALID_ARGUMENT;
  *dev = (nvmlDevice_t)(void *)&ss.gpus[index];
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned int length) {
  SI_ENTER();
  SI_DEV(dev, g);
  if (strlen(g->uuid) >= length)
    return NVML_ERROR_INSUFFICIENT_SIZE;
  strcpy(uuid, g->uuid);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned int length) {
  SI_ENTER();
  SI_DEV(dev, g);
  if (strlen(g->name) >= length)
    return NVML_ERROR_INSUFFICIENT_SIZE;
  strcpy(name, g->name);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int *current, unsigned int *pending) {
  SI_ENTER();
  SI_DEV(dev, g);
  if (g->mig < 0)
    return NVML_ERROR_NOT_SUPPORTED;
  *current = *pending = g->mig ? NVML_DEVICE_MIG_ENABLE : 0;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t dev, unsigned int *milliwatts) {
  SI_ENTER();
  SI_DEV(dev, g);
  if (!g->power)
    return NVML_ERROR_NOT_SUPPORTED;
  *milliwatts = (unsigned)(ss_state_at(g, ss_now())->power_w * 1000 + 0.5);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t dev, unsigned long long *mj) {
  SI_ENTER();
  SI_DEV(dev, g);
  if (!g->energy)
    return NVML_ERROR_NOT_SUPPORTED;
  double e = ss_energy_mj(g, ss_now());
  *mj = (unsigned long long)e;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t dev, nvmlUtilization_t *u) {
  SI_ENTER();
  SI_DEV(dev, g);
  const struct ss_state *s = ss_state_at(g, ss_now());
  u->gpu = s->util;
  u->memory = s->memutil;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned int *count,
                                                     nvmlProcessInfo_t *infos) {
  SI_ENTER();
  SI_DEV(dev, g);
  const struct ss_state *s = ss_state_at(g, ss_now());
  if (*count < (unsigned)s->nproc || (!infos && s->nproc)) {
    *count = (unsigned)s->nproc;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (int i = 0; i < s->nproc; i++)
    infos[i] = (nvmlProcessInfo_t){.pid = s->proc[i].pid,
                                   .usedGpuMemory = s->proc[i].used_bytes,
                                   .gpuInstanceId = s->proc[i].gi,
                                   .computeInstanceId = s->proc[i].ci};
  *count = (unsigned)s->nproc;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t dev,
                                             nvmlProcessUtilizationSample_t *samples,
                                             unsigned int *count,
                                             unsigned long long lastSeenTimeStamp) {
  SI_ENTER();
  proc_util_calls++;
  SI_DEV(dev, g);
  if (!g->procutil || g->mig > 0)
    return NVML_ERROR_NOT_SUPPORTED;
  int64_t now = ss_now();
  /* Periods ending after lastSeenTimeStamp and by now; the driver keeps
   * the last 100 or so. */
  int64_t period_us = ss.period_us, k = 1, last_k = now / period_us;
  if (lastSeenTimeStamp >= ts_base_us)
    k = lastSeenTimeStamp - ts_base_us >= (unsigned long long)now
            ? last_k + 1
            : (int64_t)(lastSeenTimeStamp - ts_base_us) / period_us + 1;
  if (k < last_k - 100)
    k = last_k - 100;
  unsigned n = 0;
  for (; k <= last_k; k++) {
    const struct ss_state *s = ss_state_at(g, k * period_us);
    for (int i = 0; i < s->nproc; i++) {
      if (!s->proc[i].sm && !s->proc[i].mem)
        continue;
      if (samples && n < *count)
        samples[n] = (nvmlProcessUtilizationSample_t){
            .pid = s->proc[i].pid,
            .timeStamp = ts_base_us + (unsigned long long)(k * period_us),
            .smUtil = s->proc[i].sm,
            .memUtil = s->proc[i].mem};
      n++;
    }
  }
  if (!n)
    return NVML_ERROR_NOT_FOUND;
  if (!samples || n > *count) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  *count = n;
  return NVML_SUCCESS;
}

/* The signatures above are the ones erg's ABI header declares. */
#define SI_SAME(f) _Static_assert(__builtin_types_compatible_p(__typeof__(&f), f##_fn), #f)
SI_SAME(nvmlInit_v2);
SI_SAME(nvmlShutdown);
SI_SAME(nvmlErrorString);
SI_SAME(nvmlDeviceGetCount_v2);
SI_SAME(nvmlDeviceGetHandleByIndex_v2);
SI_SAME(nvmlDeviceGetUUID);
SI_SAME(nvmlDeviceGetName);
SI_SAME(nvmlDeviceGetMigMode);
SI_SAME(nvmlDeviceGetPowerUsage);
SI_SAME(nvmlDeviceGetTotalEnergyConsumption);
SI_SAME(nvmlDeviceGetUtilizationRates);
SI_SAME(nvmlDeviceGetComputeRunningProcesses_v3);
SI_SAME(nvmlDeviceGetProcessUtilization);

// SPDX-License-Identifier: GPL-3.0-or-later
/* Cost of erg-agent's NVML calls per GPU and per call (issue 37): for
 * PASSES passes, INTERVAL seconds apart, each GPU gets the calls of one
 * agent sampling pass (node-agent/gpu_nvml.c nvml_sample: energy counter,
 * power, utilization rates, compute processes, process utilization since
 * the last time stamp), each timed alone in process CPU time and wall time.
 * Prints one JSON object: per GPU, its utilization as read, and per call
 * the mean CPU and wall µs per pass; the total per GPU; the pass total. So
 * it shows whether a pass grows with the GPUs and which call dominates,
 * and what nvmlDeviceGetProcessUtilization costs on an idle GPU (the call
 * a pass could leave out there). libc and libdl only:
 *
 *   gcc -O2 -I node-agent tests/gpu/nvml_cost.c -ldl -o nvml_cost
 *   ./nvml_cost [PASSES=20] [INTERVAL_S=1] [LIBRARY=libnvidia-ml.so.1]
 *
 * Exit 0; 2 when NVML cannot be loaded or sees no GPU. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_nvml_abi.h"

#define MAXGPU 64
#define NCALL 5

static const char *call_name[NCALL] = {"nvmlDeviceGetTotalEnergyConsumption",
                                       "nvmlDeviceGetPowerUsage", "nvmlDeviceGetUtilizationRates",
                                       "nvmlDeviceGetComputeRunningProcesses_v3",
                                       "nvmlDeviceGetProcessUtilization"};

static uint64_t now_ns(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *sym(void *dl, const char *name) {
  void *p = dlsym(dl, name);
  if (!p) {
    printf("{\"error\":\"NVML lacks %s\"}\n", name);
    exit(2);
  }
  return p;
}

int main(int argc, char **argv) {
  int passes = argc > 1 ? atoi(argv[1]) : 20;
  double interval = argc > 2 ? atof(argv[2]) : 1.0;
  const char *lib = argc > 3 ? argv[3] : "libnvidia-ml.so.1";
  void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    printf("{\"error\":\"dlopen %s: %s\"}\n", lib, dlerror());
    return 2;
  }
  nvmlInit_v2_fn init;
  nvmlDeviceGetCount_v2_fn count;
  nvmlDeviceGetHandleByIndex_v2_fn handle;
  nvmlDeviceGetTotalEnergyConsumption_fn energy;
  nvmlDeviceGetPowerUsage_fn power;
  nvmlDeviceGetUtilizationRates_fn util;
  nvmlDeviceGetComputeRunningProcesses_v3_fn procs;
  nvmlDeviceGetProcessUtilization_fn putil;
  void *p;
#define LOAD(var, name) (p = sym(dl, name), memcpy(&var, &p, sizeof p))
  LOAD(init, "nvmlInit_v2");
  LOAD(count, "nvmlDeviceGetCount_v2");
  LOAD(handle, "nvmlDeviceGetHandleByIndex_v2");
  LOAD(energy, "nvmlDeviceGetTotalEnergyConsumption");
  LOAD(power, "nvmlDeviceGetPowerUsage");
  LOAD(util, "nvmlDeviceGetUtilizationRates");
  LOAD(procs, "nvmlDeviceGetComputeRunningProcesses_v3");
  LOAD(putil, "nvmlDeviceGetProcessUtilization");
#undef LOAD
  unsigned n = 0;
  if (init() != NVML_SUCCESS || count(&n) != NVML_SUCCESS || n == 0) {
    printf("{\"error\":\"NVML sees no GPU\"}\n");
    return 2;
  }
  if (n > MAXGPU)
    n = MAXGPU;
  static nvmlDevice_t h[MAXGPU];
  static unsigned long long last_ts[MAXGPU];
  static uint64_t cpu[MAXGPU][NCALL], wall[MAXGPU][NCALL];
  static unsigned util_sum[MAXGPU], util_busy[MAXGPU];
  static nvmlProcessUtilizationSample_t us[1024];
  static nvmlProcessInfo_t pi[1024];
  for (unsigned k = 0; k < n; k++)
    handle(k, &h[k]);
  uint64_t pass_cpu = 0, pass_wall = 0;
  for (int i = 0; i <= passes; i++) { /* pass 0: warm-up, not counted */
    uint64_t pc = now_ns(CLOCK_PROCESS_CPUTIME_ID), pw = now_ns(CLOCK_MONOTONIC);
    for (unsigned k = 0; k < n; k++)
      for (int c = 0; c < NCALL; c++) {
        uint64_t c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
        unsigned long long mj;
        unsigned mw, cnt = 1024;
        nvmlUtilization_t u = {0, 0};
        switch (c) {
          case 0:
            energy(h[k], &mj);
            break;
          case 1:
            power(h[k], &mw);
            break;
          case 2:
            if (util(h[k], &u) == NVML_SUCCESS && i > 0) {
              util_sum[k] += u.gpu;
              util_busy[k] += u.gpu > 0;
            }
            break;
          case 3:
            procs(h[k], &cnt, pi);
            break;
          case 4:
            if (putil(h[k], us, &cnt, last_ts[k]) == NVML_SUCCESS)
              for (unsigned s = 0; s < cnt && s < 1024; s++)
                last_ts[k] = us[s].timeStamp > last_ts[k] ? us[s].timeStamp : last_ts[k];
            break;
        }
        if (i > 0) {
          cpu[k][c] += now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
          wall[k][c] += now_ns(CLOCK_MONOTONIC) - w0;
        }
      }
    if (i > 0) {
      pass_cpu += now_ns(CLOCK_PROCESS_CPUTIME_ID) - pc;
      pass_wall += now_ns(CLOCK_MONOTONIC) - pw;
    }
    if (i < passes) {
      struct timespec t = {(time_t)interval, (long)((interval - (long)interval) * 1e9)};
      nanosleep(&t, NULL);
    }
  }
  double np = passes > 0 ? passes : 1;
  printf("{\"passes\":%d,\"interval_s\":%.3f,\"gpus\":[", passes, interval);
  for (unsigned k = 0; k < n; k++) {
    double tc = 0, tw = 0;
    printf("%s{\"index\":%u,\"util_mean_percent\":%.1f,\"busy_passes\":%u,\"calls\":{",
           k ? "," : "", k, util_sum[k] / np, util_busy[k]);
    for (int c = 0; c < NCALL; c++) {
      tc += cpu[k][c] / np / 1e3;
      tw += wall[k][c] / np / 1e3;
      printf("%s\"%s\":{\"cpu_us\":%.1f,\"wall_us\":%.1f}", c ? "," : "", call_name[c],
             cpu[k][c] / np / 1e3, wall[k][c] / np / 1e3);
    }
    printf("},\"cpu_us\":%.1f,\"wall_us\":%.1f}", tc, tw);
  }
  printf("],\"pass\":{\"cpu_ms\":%.3f,\"wall_ms\":%.3f,\"cpu_percent_at_1_hz\":%.4f}}\n",
         pass_cpu / np / 1e6, pass_wall / np / 1e6, pass_cpu / np / 1e7);
  return 0;
}

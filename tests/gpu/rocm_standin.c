// SPDX-License-Identifier: GPL-3.0-or-later
/* A stand-in for AMD's ROCm SMI (librocm_smi64), for tests: no GPU exists
 * on the machines erg's tests run on, so this library serves scripted
 * GPUs, processes, busy % and power through the ROCm SMI functions erg
 * uses (node-agent/gpu_rocm_abi.h). It is not ROCm SMI.
 *
 * The script is the NVML stand-in's (standin_script.h), named by
 * ERG_ROCM_STANDIN_SCRIPT (unset: rsmi_init fails with INIT_ERROR);
 * ERG_ROCM_STANDIN_EPOCH as ERG_NVML_STANDIN_EPOCH. Here:
 *
 *   gpu: energy=0 no energy accumulator; power=0 no power reading;
 *        procutil=0 no CU occupancy (the per-device call says
 *        CU_OCCUPANCY_INVALID, the per-pid one 0, as ROCm SMI does);
 *        unique_id=HEX (else NOT_SUPPORTED; the PCI address is
 *        0000:1N:00.0 for GPU N); energy_res_uj=R the accumulator's
 *        resolution (15.3 µJ)
 *   at:  util= busy %, memutil= memory busy %, proc=PID:CU%:MEM:VRAM_MIB
 *        (MEM unused)
 *   fail_at / fail_after_calls / fail_when: UNEXPECTED_SIZE (the library's EIO)
 *
 * Built twice: librocm_standin.so has every function gpu_rocm.c looks up;
 * librocm_standin_old.so (ROCM_STANDIN_OLD) only those of Debian 12's
 * 5.2.3: no rsmi_dev_power_get, rsmi_dev_current_socket_power_get nor
 * rsmi_compute_process_info_by_device_get, so erg falls back to average
 * power and per-pid process figures. The process list, as ROCm SMI's,
 * gives pids (and pasids) only. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_rocm_abi.h"
#include "standin_script.h"

static int initialised;
static long calls;

/* Test control (not ROCm SMI): from now on the clock is this, in seconds. */
void rocm_standin_set_time(double seconds);
void rocm_standin_set_time(double seconds) { ss_set_time(seconds); }
/* ROCm SMI calls so far (not ROCm SMI either). */
long rocm_standin_calls(void);
long rocm_standin_calls(void) { return calls; }

/* Every entry point: counts the call, fails as the script says. */
#define RS_ENTER()                                                                                 \
  do {                                                                                             \
    if (!initialised)                                                                              \
      return RSMI_STATUS_INIT_ERROR;                                                               \
    calls++;                                                                                       \
    if (ss_failing(calls))                                                                         \
      return RSMI_STATUS_UNEXPECTED_SIZE;                                                          \
  } while (0)
#define RS_DEV(i, g)                                                                               \
  if ((i) >= (uint32_t)ss.ngpu)                                                                    \
    return RSMI_STATUS_INVALID_ARGS;                                                               \
  const struct ss_gpu *g = &ss.gpus[i]

rsmi_status_t rsmi_init(uint64_t init_flags) {
  (void)init_flags;
  calls = 1; /* counted from each init */
  int rc = ss_load("ERG_ROCM_STANDIN_SCRIPT", "rocm_standin", "", "erg ROCm SMI stand-in");
  if (rc != 0)
    return rc > 0 ? RSMI_STATUS_INIT_ERROR : RSMI_STATUS_UNKNOWN_ERROR;
  if (ss.init_error)
    return (rsmi_status_t)ss.init_error;
  ss_start("ERG_ROCM_STANDIN_EPOCH");
  initialised = 1;
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_shut_down(void) {
  if (!initialised)
    return RSMI_STATUS_INIT_ERROR;
  calls++;
  initialised = 0;
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_status_string(rsmi_status_t status, const char **status_string) {
  switch (status) {
    case RSMI_STATUS_SUCCESS:
      *status_string = "RSMI_STATUS_SUCCESS: The function has been executed successfully.";
      break;
    case RSMI_STATUS_INVALID_ARGS:
      *status_string = "RSMI_STATUS_INVALID_ARGS: The provided arguments do not meet the "
                       "preconditions required for the input.";
      break;
    case RSMI_STATUS_NOT_SUPPORTED:
      *status_string = "RSMI_STATUS_NOT_SUPPORTED: The requested information or action is not "
                       "available for the given input, on the given system";
      break;
    case RSMI_STATUS_NOT_FOUND:
      *status_string = "RSMI_STATUS_NOT_FOUND: An item was searched for but not found";
      break;
    case RSMI_STATUS_INSUFFICIENT_SIZE:
      *status_string =
          "RSMI_STATUS_INSUFFICIENT_SIZE: Not enough resources were available for the operation";
      break;
    case RSMI_STATUS_INIT_ERROR:
      *status_string = "RSMI_STATUS_INIT_ERROR: An error occurred during initialization, during "
                       "monitor discovery or when when initializing internal data structures";
      break;
    case RSMI_STATUS_UNEXPECTED_SIZE:
      *status_string = "RSMI_STATUS_UNEXPECTED_SIZE: An unexpected amount of data was read";
      break;
    default:
      *status_string = "RSMI_STATUS_UNKNOWN_ERROR: An unknown error prevented the call from "
                       "completing successfully";
      break;
  }
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_num_monitor_devices(uint32_t *num_devices) {
  RS_ENTER();
  *num_devices = (uint32_t)ss.ngpu;
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_name_get(uint32_t dv_ind, char *name, size_t len) {
  RS_ENTER();
  RS_DEV(dv_ind, g);
  if (!name || !len)
    return RSMI_STATUS_INVALID_ARGS;
  snprintf(name, len, "%s", g->name);
  return strlen(g->name) >= len ? RSMI_STATUS_INSUFFICIENT_SIZE : RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_unique_id_get(uint32_t dv_ind, uint64_t *id) {
  RS_ENTER();
  RS_DEV(dv_ind, g);
  if (!g->unique_id)
    return RSMI_STATUS_NOT_SUPPORTED;
  *id = g->unique_id;
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_pci_id_get(uint32_t dv_ind, uint64_t *bdfid) {
  RS_ENTER();
  RS_DEV(dv_ind, g);
  (void)g;
  *bdfid = (uint64_t)(0x10 + dv_ind) << 8; /* domain 0, bus 1N, device 0, function 0 */
  return RSMI_STATUS_SUCCESS;
}

static rsmi_status_t rs_power(uint32_t dv_ind, uint64_t *power) {
  RS_ENTER();
  RS_DEV(dv_ind, g);
  if (!g->power)
    return RSMI_STATUS_NOT_SUPPORTED;
  *power = (uint64_t)(ss_state_at(g, ss_now())->power_w * 1e6 + 0.5);
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_power_ave_get(uint32_t dv_ind, uint32_t sensor_ind, uint64_t *power) {
  if (sensor_ind != 0)
    return RSMI_STATUS_INVALID_ARGS;
  return rs_power(dv_ind, power);
}

rsmi_status_t rsmi_dev_energy_count_get(uint32_t dv_ind, uint64_t *power, float *counter_resolution,
                                        uint64_t *timestamp) {
  RS_ENTER();
  RS_DEV(dv_ind, g);
  if (!g->energy)
    return RSMI_STATUS_NOT_SUPPORTED;
  int64_t t = ss_now();
  *counter_resolution = (float)g->energy_res_uj;
  *power = (uint64_t)(ss_energy_mj(g, t) * 1000.0 / (double)*counter_resolution);
  *timestamp = (uint64_t)t * 1000;
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_busy_percent_get(uint32_t dv_ind, uint32_t *busy_percent) {
  RS_ENTER();
  RS_DEV(dv_ind, g);
  *busy_percent = ss_state_at(g, ss_now())->util;
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_busy_percent_get(uint32_t dv_ind, uint32_t *busy_percent) {
  RS_ENTER();
  RS_DEV(dv_ind, g);
  *busy_percent = ss_state_at(g, ss_now())->memutil;
  return RSMI_STATUS_SUCCESS;
}

/* pid on GPU i now, or NULL. */
static const struct ss_proc *rs_proc_on(int i, uint32_t pid) {
  const struct ss_state *s = ss_state_at(&ss.gpus[i], ss_now());
  for (int k = 0; k < s->nproc; k++)
    if (s->proc[k].pid == pid)
      return &s->proc[k];
  return NULL;
}

rsmi_status_t rsmi_compute_process_info_get(rsmi_process_info_t *procs, uint32_t *num_items) {
  RS_ENTER();
  if (!num_items)
    return RSMI_STATUS_INVALID_ARGS;
  uint32_t pids[SS_GPUS * SS_PROCS], n = 0;
  for (int i = 0; i < ss.ngpu; i++) {
    const struct ss_state *s = ss_state_at(&ss.gpus[i], ss_now());
    for (int k = 0; k < s->nproc; k++) {
      uint32_t j = 0;
      while (j < n && pids[j] != s->proc[k].pid)
        j++;
      if (j == n)
        pids[n++] = s->proc[k].pid;
    }
  }
  if (!procs) {
    *num_items = n;
    return RSMI_STATUS_SUCCESS;
  }
  uint32_t w = n < *num_items ? n : *num_items;
  for (uint32_t j = 0; j < w; j++) /* the list has pids only, as ROCm SMI's */
    procs[j] = (rsmi_process_info_t){.process_id = pids[j], .pasid = 0x8000 + pids[j] % 0x8000};
  *num_items = w;
  return w < n ? RSMI_STATUS_INSUFFICIENT_SIZE : RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_compute_process_gpus_get(uint32_t pid, uint32_t *dv_indices,
                                            uint32_t *num_devices) {
  RS_ENTER();
  if (!num_devices)
    return RSMI_STATUS_INVALID_ARGS;
  uint32_t n = 0, w = 0;
  for (int i = 0; i < ss.ngpu; i++)
    if (rs_proc_on(i, pid)) {
      if (dv_indices && w < *num_devices)
        dv_indices[w++] = (uint32_t)i;
      n++;
    }
  if (!n)
    return RSMI_STATUS_NOT_FOUND;
  *num_devices = dv_indices ? w : n;
  return dv_indices && w < n ? RSMI_STATUS_INSUFFICIENT_SIZE : RSMI_STATUS_SUCCESS;
}

/* Summed over the process's GPUs; CU occupancy over the CUs of those that
 * report it (all GPUs here have as many CUs: the mean of their %), else 0. */
rsmi_status_t rsmi_compute_process_info_by_pid_get(uint32_t pid, rsmi_process_info_t *proc) {
  RS_ENTER();
  if (!proc)
    return RSMI_STATUS_INVALID_ARGS;
  rsmi_process_info_t r = {.process_id = pid, .pasid = 0x8000 + pid % 0x8000};
  unsigned on = 0, cu_gpus = 0, cu = 0;
  for (int i = 0; i < ss.ngpu; i++) {
    const struct ss_proc *p = rs_proc_on(i, pid);
    if (!p)
      continue;
    on++;
    r.vram_usage += p->used_bytes;
    if (ss.gpus[i].procutil) {
      cu_gpus++;
      cu += p->sm;
    }
  }
  if (!on)
    return RSMI_STATUS_NOT_FOUND;
  r.cu_occupancy = cu_gpus ? cu / cu_gpus : 0;
  *proc = r;
  return RSMI_STATUS_SUCCESS;
}

#ifndef ROCM_STANDIN_OLD
rsmi_status_t rsmi_dev_current_socket_power_get(uint32_t dv_ind, uint64_t *socket_power) {
  return rs_power(dv_ind, socket_power);
}

rsmi_status_t rsmi_dev_power_get(uint32_t dv_ind, uint64_t *power, RSMI_POWER_TYPE *type) {
  if (!power || !type)
    return RSMI_STATUS_INVALID_ARGS;
  rsmi_status_t r = rs_power(dv_ind, power);
  *type = r == RSMI_STATUS_SUCCESS ? RSMI_CURRENT_POWER : RSMI_INVALID_POWER;
  return r;
}

rsmi_status_t rsmi_compute_process_info_by_device_get(uint32_t pid, uint32_t dv_ind,
                                                      rsmi_process_info_t *proc) {
  RS_ENTER();
  RS_DEV(dv_ind, g);
  if (!proc)
    return RSMI_STATUS_INVALID_ARGS;
  const struct ss_proc *p = rs_proc_on((int)dv_ind, pid);
  if (!p)
    return RSMI_STATUS_NOT_FOUND;
  *proc = (rsmi_process_info_t){.process_id = pid,
                                .pasid = 0x8000 + pid % 0x8000,
                                .vram_usage = p->used_bytes,
                                .cu_occupancy = g->procutil ? p->sm : CU_OCCUPANCY_INVALID};
  return RSMI_STATUS_SUCCESS;
}
#endif

/* The signatures above are the ones erg's ABI header declares. */
#define RS_SAME(f) _Static_assert(__builtin_types_compatible_p(__typeof__(&f), f##_fn), #f)
RS_SAME(rsmi_init);
RS_SAME(rsmi_shut_down);
RS_SAME(rsmi_status_string);
RS_SAME(rsmi_num_monitor_devices);
RS_SAME(rsmi_dev_name_get);
RS_SAME(rsmi_dev_unique_id_get);
RS_SAME(rsmi_dev_pci_id_get);
RS_SAME(rsmi_dev_power_ave_get);
RS_SAME(rsmi_dev_energy_count_get);
RS_SAME(rsmi_dev_busy_percent_get);
RS_SAME(rsmi_dev_memory_busy_percent_get);
RS_SAME(rsmi_compute_process_info_get);
RS_SAME(rsmi_compute_process_gpus_get);
RS_SAME(rsmi_compute_process_info_by_pid_get);
#ifndef ROCM_STANDIN_OLD
RS_SAME(rsmi_dev_current_socket_power_get);
RS_SAME(rsmi_dev_power_get);
RS_SAME(rsmi_compute_process_info_by_device_get);
#endif

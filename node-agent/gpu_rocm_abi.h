// SPDX-License-Identifier: GPL-3.0-or-later
/* The few parts of ROCm SMI's ABI (librocm_smi64, AMD) that erg uses,
 * declared here so that erg builds without ROCm's headers and loads the
 * library at run time (dlopen). Names, values and layouts as ROCm SMI
 * documents them in rocm_smi/rocm_smi.h ("rsmi_status_t",
 * "rsmi_process_info_t", "RSMI_POWER_TYPE", the functions below); Debian
 * 12's librocm-smi-dev 5.2.3 and ROCm 6's header agree on everything
 * listed here. Only what is listed here is relied on; functions newer than
 * 5.2 are looked up with dlsym and may be missing.
 * tests/gpu/rocm_standin.c implements the same. */
#ifndef ERG_GPU_ROCM_ABI_H
#define ERG_GPU_ROCM_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Four bytes, unsigned (UNKNOWN_ERROR is 0xFFFFFFFF), as in rocm_smi.h. */
typedef enum {
  RSMI_STATUS_SUCCESS = 0x0,
  RSMI_STATUS_INVALID_ARGS = 0x1,
  RSMI_STATUS_NOT_SUPPORTED = 0x2,
  RSMI_STATUS_FILE_ERROR = 0x3,
  RSMI_STATUS_PERMISSION = 0x4,
  RSMI_STATUS_OUT_OF_RESOURCES = 0x5,
  RSMI_STATUS_INTERNAL_EXCEPTION = 0x6,
  RSMI_STATUS_INPUT_OUT_OF_BOUNDS = 0x7,
  RSMI_STATUS_INIT_ERROR = 0x8,
  RSMI_STATUS_NOT_YET_IMPLEMENTED = 0x9,
  RSMI_STATUS_NOT_FOUND = 0xA,
  RSMI_STATUS_INSUFFICIENT_SIZE = 0xB,
  RSMI_STATUS_INTERRUPT = 0xC,
  RSMI_STATUS_UNEXPECTED_SIZE = 0xD, /* the library's EIO: a device gone */
  RSMI_STATUS_NO_DATA = 0xE,
  RSMI_STATUS_UNEXPECTED_DATA = 0xF,
  RSMI_STATUS_BUSY = 0x10,
  RSMI_STATUS_REFCOUNT_OVERFLOW = 0x11,
  RSMI_STATUS_SETTING_UNAVAILABLE = 0x12, /* ROCm 6 */
  RSMI_STATUS_AMDGPU_RESTART_ERR = 0x13,  /* ROCm 6 */
  RSMI_STATUS_UNKNOWN_ERROR = 0xFFFFFFFF
} rsmi_status_t;

/* rsmi_dev_power_get's kind of reading (ROCm 6). */
typedef enum {
  RSMI_AVERAGE_POWER = 0,
  RSMI_CURRENT_POWER = 1,
  RSMI_INVALID_POWER = 0xFFFFFFFF
} RSMI_POWER_TYPE;

/* One process using the GPUs (KFD's /sys/class/kfd/kfd/proc/<pid>). The
 * list (rsmi_compute_process_info_get) fills process_id and pasid only;
 * the per-pid and per-device calls fill the rest. */
typedef struct {
  uint32_t process_id;
  uint32_t pasid;
  uint64_t vram_usage;   /* bytes */
  uint64_t sdma_usage;   /* µs of SDMA (copy engine) time, cumulative */
  uint32_t cu_occupancy; /* % of the GPU's compute units its waves occupy, now */
} rsmi_process_info_t;

/* cu_occupancy on a GPU whose kernel does not report it (per-device call;
 * the per-pid call of 5.x leaves 0). */
#define CU_OCCUPANCY_INVALID 0xFFFFFFFFu

/* The functions, as pointer types for dlsym. */
typedef rsmi_status_t (*rsmi_init_fn)(uint64_t init_flags);
typedef rsmi_status_t (*rsmi_shut_down_fn)(void);
typedef rsmi_status_t (*rsmi_status_string_fn)(rsmi_status_t status, const char **status_string);
typedef rsmi_status_t (*rsmi_num_monitor_devices_fn)(uint32_t *num_devices);
typedef rsmi_status_t (*rsmi_dev_name_get_fn)(uint32_t dv_ind, char *name, size_t len);
typedef rsmi_status_t (*rsmi_dev_unique_id_get_fn)(uint32_t dv_ind, uint64_t *id);
/* BDFID: domain << 32 | bus << 8 | device << 3 | function. */
typedef rsmi_status_t (*rsmi_dev_pci_id_get_fn)(uint32_t dv_ind, uint64_t *bdfid);
/* Power in µW: average (sensor 0); newer than 5.2: current socket power,
 * and the generic one (socket power, else average). */
typedef rsmi_status_t (*rsmi_dev_power_ave_get_fn)(uint32_t dv_ind, uint32_t sensor_ind,
                                                   uint64_t *power);
typedef rsmi_status_t (*rsmi_dev_current_socket_power_get_fn)(uint32_t dv_ind,
                                                              uint64_t *socket_power);
typedef rsmi_status_t (*rsmi_dev_power_get_fn)(uint32_t dv_ind, uint64_t *power,
                                               RSMI_POWER_TYPE *type);
/* The energy accumulator: energy = power × counter_resolution µJ;
 * timestamp in ns. */
typedef rsmi_status_t (*rsmi_dev_energy_count_get_fn)(uint32_t dv_ind, uint64_t *power,
                                                      float *counter_resolution,
                                                      uint64_t *timestamp);
typedef rsmi_status_t (*rsmi_dev_busy_percent_get_fn)(uint32_t dv_ind, uint32_t *busy_percent);
typedef rsmi_status_t (*rsmi_dev_memory_busy_percent_get_fn)(uint32_t dv_ind,
                                                             uint32_t *busy_percent);
/* procs NULL: *num_items set to the number of processes. */
typedef rsmi_status_t (*rsmi_compute_process_info_get_fn)(rsmi_process_info_t *procs,
                                                          uint32_t *num_items);
/* Summed over the GPUs the process uses (cu_occupancy: over their CUs). */
typedef rsmi_status_t (*rsmi_compute_process_info_by_pid_get_fn)(uint32_t pid,
                                                                 rsmi_process_info_t *proc);
/* On one GPU (newer than 5.2). */
typedef rsmi_status_t (*rsmi_compute_process_info_by_device_get_fn)(uint32_t pid, uint32_t dv_ind,
                                                                    rsmi_process_info_t *proc);
/* The device indices the process has queues on. */
typedef rsmi_status_t (*rsmi_compute_process_gpus_get_fn)(uint32_t pid, uint32_t *dv_indices,
                                                          uint32_t *num_devices);

#endif

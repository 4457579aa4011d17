// SPDX-License-Identifier: GPL-3.0-or-later
/* The few parts of NVML's ABI that erg uses, declared here so that erg
 * builds without NVIDIA's headers and loads libnvidia-ml.so.1 at run time
 * (dlopen). Names, values and layouts as NVML documents them in nvml.h
 * (NVML API reference, "nvmlReturn_t", "nvmlUtilization_t",
 * "nvmlProcessInfo_v2_t", "nvmlProcessUtilizationSample_t"); only what is
 * listed here is relied on. tests/gpu/nvml_standin.c implements the same. */
#ifndef ERG_GPU_NVML_ABI_H
#define ERG_GPU_NVML_ABI_H

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef struct nvmlDevice_st *nvmlDevice_t;

#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_MIG_ENABLE 0x1
#define NVML_VALUE_NOT_AVAILABLE_ULL 0xffffffffffffffffULL /* (-1) as usedGpuMemory */

typedef struct nvmlUtilization_st {
  unsigned int gpu;    /* % of the last sample period a kernel was executing */
  unsigned int memory; /* % of it device memory was read or written */
} nvmlUtilization_t;

/* nvmlProcessInfo_v2_t, the layout nvmlDeviceGetComputeRunningProcesses_v3 fills. */
typedef struct nvmlProcessInfo_st {
  unsigned int pid;
  unsigned long long usedGpuMemory; /* bytes, or NVML_VALUE_NOT_AVAILABLE */
  unsigned int gpuInstanceId;       /* MIG only; 0xFFFFFFFF otherwise */
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;

/* One per process with non-zero utilization in one driver sample period. */
typedef struct nvmlProcessUtilizationSample_st {
  unsigned int pid;
  unsigned long long timeStamp; /* CPU time stamp, microseconds */
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/* The functions, as pointer types for dlsym. */
typedef nvmlReturn_t (*nvmlInit_v2_fn)(void);
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef const char *(*nvmlErrorString_fn)(nvmlReturn_t);
typedef nvmlReturn_t (*nvmlDeviceGetCount_v2_fn)(unsigned int *count);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int index, nvmlDevice_t *dev);
typedef nvmlReturn_t (*nvmlDeviceGetUUID_fn)(nvmlDevice_t dev, char *uuid, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetName_fn)(nvmlDevice_t dev, char *name, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetPowerUsage_fn)(nvmlDevice_t dev, unsigned int *milliwatts);
typedef nvmlReturn_t (*nvmlDeviceGetTotalEnergyConsumption_fn)(nvmlDevice_t dev,
                                                               unsigned long long *millijoules);
typedef nvmlReturn_t (*nvmlDeviceGetUtilizationRates_fn)(nvmlDevice_t dev, nvmlUtilization_t *u);
typedef nvmlReturn_t (*nvmlDeviceGetProcessUtilization_fn)(nvmlDevice_t dev,
                                                           nvmlProcessUtilizationSample_t *samples,
                                                           unsigned int *count,
                                                           unsigned long long lastSeenTimeStamp);
typedef nvmlReturn_t (*nvmlDeviceGetComputeRunningProcesses_v3_fn)(nvmlDevice_t dev,
                                                                   unsigned int *count,
                                                                   nvmlProcessInfo_t *infos);
typedef nvmlReturn_t (*nvmlDeviceGetMigMode_fn)(nvmlDevice_t dev, unsigned int *current,
                                                unsigned int *pending);

#endif

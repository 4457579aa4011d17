/* A stand-in for NVIDIA's libnvidia-ml.so.1, for tests: no GPU exists on
 * the machines erg's tests run on, so this library serves scripted GPUs,
 * processes, utilization and power through the NVML functions erg uses
 * (node-agent/gpu_nvml_abi.h). It is not NVML; tests/gpu/device_check.sh
 * checks erg against the real one on a GPU host.
 *
 * The script, named by ERG_NVML_STANDIN_SCRIPT (unset: nvmlInit_v2 fails
 * with "driver not loaded"), one directive a line, '#' starts a comment:
 *
 *   gpu IDX [uuid=S] [name=S] [energy=1|0] [power=1|0] [procutil=1|0]
 *           [mig=0|1|na] [energy_start_mj=E]
 *   at T gpu=IDX power_w=W [util=U] [memutil=M] [proc=PID:SM[:MEM[:USED_MIB]]]...
 *   period_ms MS           driver sample period of process utilization (100)
 *   fail_after_calls N     every call after the Nth returns GPU_IS_LOST
 *   fail_at T              every call from T seconds on returns GPU_IS_LOST
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
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_nvml_abi.h"

#define SI_GPUS 8
#define SI_STATES 64
#define SI_PROCS 16

struct si_proc {
  unsigned pid, sm, mem;
  unsigned long long used_bytes;
};
struct si_state {
  int64_t t_us;
  double power_w;
  unsigned util, memutil;
  int nproc;
  struct si_proc proc[SI_PROCS];
};
struct si_gpu {
  char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE], name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
  int energy, power, procutil, mig; /* mig -1: not supported */
  double energy_start_mj;
  int nstate;
  struct si_state state[SI_STATES];
};

static struct si_gpu gpus[SI_GPUS];
static int ngpu, initialised, init_error, manual;
static int64_t period_us = 100000, fail_at_us = -1, manual_us;
static long fail_after = -1, calls;
static struct timespec t0;
static unsigned long long ts_base_us;

/* Test control (not NVML): from now on the clock is this, in seconds. */
void nvml_standin_set_time(double seconds);
void nvml_standin_set_time(double seconds) {
  manual = 1;
  manual_us = (int64_t)(seconds * 1e6 + 0.5);
}
/* NVML calls so far (not NVML either). */
long nvml_standin_calls(void);
long nvml_standin_calls(void) { return calls; }

static int64_t si_now(void) {
  if (manual)
    return manual_us;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)(t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000;
}

static int si_cmp_state(const void *a, const void *b) {
  const struct si_state *x = a, *y = b;
  return (x->t_us > y->t_us) - (x->t_us < y->t_us);
}

static int si_bad(const char *path, int line, const char *what) {
  fprintf(stderr, "nvml_standin: %s:%d: %s\n", path, line, what);
  return -1;
}

static int si_gpu_line(char *rest, const char *path, int line) {
  char *tok = strtok(rest, " \t");
  int idx = tok ? atoi(tok) : -1;
  if (idx != ngpu || idx >= SI_GPUS)
    return si_bad(path, line, "gpu lines must number 0, 1, ... (at most 8)");
  struct si_gpu *g = &gpus[ngpu++];
  memset(g, 0, sizeof *g);
  snprintf(g->uuid, sizeof g->uuid, "GPU-standin-%d", idx);
  snprintf(g->name, sizeof g->name, "erg NVML stand-in");
  g->energy = g->power = g->procutil = 1;
  g->energy_start_mj = 5e6;
  while ((tok = strtok(NULL, " \t")) != NULL) {
    if (!strncmp(tok, "uuid=", 5))
      snprintf(g->uuid, sizeof g->uuid, "%s", tok + 5);
    else if (!strncmp(tok, "name=", 5))
      snprintf(g->name, sizeof g->name, "%s", tok + 5);
    else if (!strncmp(tok, "energy=", 7))
      g->energy = atoi(tok + 7);
    else if (!strncmp(tok, "power=", 6))
      g->power = atoi(tok + 6);
    else if (!strncmp(tok, "procutil=", 9))
      g->procutil = atoi(tok + 9);
    else if (!strncmp(tok, "mig=", 4))
      g->mig = strcmp(tok + 4, "na") ? atoi(tok + 4) : -1;
    else if (!strncmp(tok, "energy_start_mj=", 16))
      g->energy_start_mj = atof(tok + 16);
    else
      return si_bad(path, line, "unknown gpu option");
  }
  return 0;
}

static int si_at_line(char *rest, const char *path, int line) {
  char *tok = strtok(rest, " \t");
  if (!tok)
    return si_bad(path, line, "at: no time");
  struct si_state st = {.t_us = (int64_t)(atof(tok) * 1e6 + 0.5)};
  int idx = -1;
  while ((tok = strtok(NULL, " \t")) != NULL) {
    if (!strncmp(tok, "gpu=", 4))
      idx = atoi(tok + 4);
    else if (!strncmp(tok, "power_w=", 8))
      st.power_w = atof(tok + 8);
    else if (!strncmp(tok, "util=", 5))
      st.util = (unsigned)atoi(tok + 5);
    else if (!strncmp(tok, "memutil=", 8))
      st.memutil = (unsigned)atoi(tok + 8);
    else if (!strncmp(tok, "proc=", 5) && st.nproc < SI_PROCS) {
      struct si_proc *p = &st.proc[st.nproc++];
      unsigned mib = 0;
      if (sscanf(tok + 5, "%u:%u:%u:%u", &p->pid, &p->sm, &p->mem, &mib) < 2)
        return si_bad(path, line, "proc=PID:SM[:MEM[:USED_MIB]]");
      p->used_bytes = (unsigned long long)mib << 20;
    } else
      return si_bad(path, line, "unknown at option");
  }
  if (idx < 0 || idx >= ngpu || gpus[idx].nstate == SI_STATES)
    return si_bad(path, line, "at: gpu=IDX of a gpu line above (at most 64 states each)");
  gpus[idx].state[gpus[idx].nstate++] = st;
  return 0;
}

static int si_load(void) {
  const char *path = getenv("ERG_NVML_STANDIN_SCRIPT");
  ngpu = init_error = 0;
  period_us = 100000;
  fail_at_us = fail_after = -1;
  if (!path)
    return NVML_ERROR_DRIVER_NOT_LOADED;
  FILE *f = fopen(path, "r");
  if (!f)
    return si_bad(path, 0, "cannot open the script"), NVML_ERROR_UNKNOWN;
  char buf[2048];
  int line = 0, rc = 0;
  while (rc == 0 && fgets(buf, sizeof buf, f)) {
    line++;
    buf[strcspn(buf, "#\n")] = '\0';
    char *rest = buf + strspn(buf, " \t");
    char *word = strsep(&rest, " \t");
    if (!word || !*word)
      continue;
    if (!strcmp(word, "gpu"))
      rc = si_gpu_line(rest ? rest : (char *)"", path, line);
    else if (!strcmp(word, "at"))
      rc = si_at_line(rest ? rest : (char *)"", path, line);
    else if (!strcmp(word, "period_ms") && rest)
      period_us = (int64_t)(atof(rest) * 1000);
    else if (!strcmp(word, "fail_after_calls") && rest)
      fail_after = atol(rest);
    else if (!strcmp(word, "fail_at") && rest)
      fail_at_us = (int64_t)(atof(rest) * 1e6 + 0.5);
    else if (!strcmp(word, "init_error") && rest)
      init_error = atoi(rest);
    else
      rc = si_bad(path, line, "unknown directive");
  }
  fclose(f);
  for (int i = 0; i < ngpu; i++)
    qsort(gpus[i].state, (size_t)gpus[i].nstate, sizeof gpus[i].state[0], si_cmp_state);
  return rc ? NVML_ERROR_UNKNOWN : init_error;
}

/* The state of g at t (before its first "at": all zero). */
static const struct si_state *si_state_at(const struct si_gpu *g, int64_t t) {
  static const struct si_state zero;
  const struct si_state *s = &zero;
  for (int i = 0; i < g->nstate && g->state[i].t_us <= t; i++)
    s = &g->state[i];
  return s;
}

/* Every entry point: counts the call, fails as the script says. */
#define SI_ENTER()                                                            \
  do {                                                                        \
    if (!initialised)                                                         \
      return NVML_ERROR_UNINITIALIZED;                                        \
    calls++;                                                                  \
    if ((fail_after >= 0 && calls > fail_after) ||                            \
        (fail_at_us >= 0 && si_now() >= fail_at_us))                          \
      return NVML_ERROR_GPU_IS_LOST;                                          \
  } while (0)

static struct si_gpu *si_dev(nvmlDevice_t d) {
  struct si_gpu *g = (struct si_gpu *)d;
  return g >= gpus && g < gpus + ngpu ? g : NULL;
}
#define SI_DEV(d, g)                                                          \
  struct si_gpu *g = si_dev(d);                                               \
  if (!g)                                                                     \
  return NVML_ERROR_INVALID_ARGUMENT

nvmlReturn_t nvmlInit_v2(void) {
  calls = 1; /* counted from each init */
  int rc = si_load();
  if (rc != NVML_SUCCESS)
    return (nvmlReturn_t)rc;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  /* ERG_NVML_STANDIN_EPOCH (unix seconds): the script's time 0, so that
   * another program (erg-pdusim --gpu-start) follows the same clock. */
  const char *epoch = getenv("ERG_NVML_STANDIN_EPOCH");
  if (epoch && *epoch) {
    long long back = (long long)((rt.tv_sec + rt.tv_nsec / 1e9 - atof(epoch)) * 1e9);
    long long mono = (long long)t0.tv_sec * 1000000000LL + t0.tv_nsec - back;
    t0.tv_sec = (time_t)(mono / 1000000000LL);
    t0.tv_nsec = (long)(mono % 1000000000LL);
  }
  ts_base_us = (unsigned long long)rt.tv_sec * 1000000ULL + (unsigned long long)rt.tv_nsec / 1000;
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
  case NVML_SUCCESS: return "Success";
  case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
  case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
  case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
  case NVML_ERROR_NOT_FOUND: return "Not Found";
  case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
  case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
  case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
  default: return "Unknown Error";
  }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
  SI_ENTER();
  *count = (unsigned)ngpu;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *dev) {
  SI_ENTER();
  if (index >= (unsigned)ngpu)
    return NVML_ERROR_INVALID_ARGUMENT;
  *dev = (nvmlDevice_t)(void *)&gpus[index];
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
  *milliwatts = (unsigned)(si_state_at(g, si_now())->power_w * 1000 + 0.5);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t dev, unsigned long long *mj) {
  SI_ENTER();
  SI_DEV(dev, g);
  if (!g->energy)
    return NVML_ERROR_NOT_SUPPORTED;
  int64_t t = si_now();
  double e = g->energy_start_mj; /* W x µs = nJ x 1000 = µJ; / 1000 = mJ */
  for (int i = 0; i < g->nstate && g->state[i].t_us < t; i++) {
    int64_t end = i + 1 < g->nstate && g->state[i + 1].t_us < t ? g->state[i + 1].t_us : t;
    e += g->state[i].power_w * (double)(end - g->state[i].t_us) / 1000.0;
  }
  *mj = (unsigned long long)e;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t dev, nvmlUtilization_t *u) {
  SI_ENTER();
  SI_DEV(dev, g);
  const struct si_state *s = si_state_at(g, si_now());
  u->gpu = s->util;
  u->memory = s->memutil;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned int *count,
                                                     nvmlProcessInfo_t *infos) {
  SI_ENTER();
  SI_DEV(dev, g);
  const struct si_state *s = si_state_at(g, si_now());
  if (*count < (unsigned)s->nproc || (!infos && s->nproc)) {
    *count = (unsigned)s->nproc;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (int i = 0; i < s->nproc; i++)
    infos[i] = (nvmlProcessInfo_t){.pid = s->proc[i].pid,
                                   .usedGpuMemory = s->proc[i].used_bytes,
                                   .gpuInstanceId = 0xFFFFFFFFu,
                                   .computeInstanceId = 0xFFFFFFFFu};
  *count = (unsigned)s->nproc;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t dev,
                                             nvmlProcessUtilizationSample_t *samples,
                                             unsigned int *count,
                                             unsigned long long lastSeenTimeStamp) {
  SI_ENTER();
  SI_DEV(dev, g);
  if (!g->procutil || g->mig > 0)
    return NVML_ERROR_NOT_SUPPORTED;
  int64_t now = si_now();
  /* Periods ending after lastSeenTimeStamp and by now; the driver keeps
   * the last 100 or so. */
  int64_t k = 1, last_k = now / period_us;
  if (lastSeenTimeStamp >= ts_base_us)
    k = lastSeenTimeStamp - ts_base_us >= (unsigned long long)now
            ? last_k + 1 : (int64_t)(lastSeenTimeStamp - ts_base_us) / period_us + 1;
  if (k < last_k - 100)
    k = last_k - 100;
  unsigned n = 0;
  for (; k <= last_k; k++) {
    const struct si_state *s = si_state_at(g, k * period_us);
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

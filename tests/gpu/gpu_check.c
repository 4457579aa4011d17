// SPDX-License-Identifier: GPL-3.0-or-later
/* gpu_check: the agent's GPU sampling (node-agent/gpu_nvml.c) on a real
 * GPU host, for tests/gpu/device_check.sh. Built from gpu.h's files and
 * this one alone (libc and libdl: gcc -I node-agent gpu_check.c gpu.c
 * gpu_nvml.c gpu_rocm.c -ldl); erg_gpu_open opens NVML alone. Samples every --interval for
 * --seconds and prints one JSON object: the GPUs seen, the SM share of --load-pid (and of
 * --idle-pid) on the GPU the load ran on, each GPU's energy from NVML's counter against its
 * integrated power readings over the same intervals, and the cost of one sampling pass. The top
 * process on the load's GPU tells a load pid that NVML does not see (the check run in another pid
 * namespace). Exit 0: the goals (load share >= 90 %, energy within 2 %) met or not applicable; 1: a
 * goal missed or the GPUs failed; 2: no GPU or bad arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu.h"

struct per_gpu {
  double e_counter, e_power, e_chosen, seconds; /* over intervals with both readings */
  double sm_total, sm_load, sm_idle;            /* sums of sm_percent */
  unsigned long long idle_mem, load_mem;
  int load_seen, idle_seen;
};

static uint64_t now_ns(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void sleep_until(uint64_t mono) {
  struct timespec t = {(time_t)(mono / 1000000000ULL), (long)(mono % 1000000000ULL)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0)
    ;
}

/* A JSON string of text that may hold anything (GPU names are plain). */
static void json_str(const char *s) {
  putchar('"');
  for (; *s; s++)
    if (*s == '"' || *s == '\\')
      printf("\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      printf("\\u%04x", *s);
    else
      putchar(*s);
  putchar('"');
}

static double absd(double x) { return x < 0 ? -x : x; }

/* SM use summed per (GPU, pid): the top process says whether the load's
 * pid is the one NVML sees (not, in another pid namespace). */
#define TOP_MAX 256
static struct {
  unsigned device;
  uint32_t pid;
  double sm;
} top[TOP_MAX];
static size_t ntop;

static void top_add(unsigned device, uint32_t pid, double sm) {
  size_t i = 0;
  while (i < ntop && (top[i].device != device || top[i].pid != pid))
    i++;
  if (i == TOP_MAX)
    return;
  if (i == ntop) {
    top[ntop].device = device;
    top[ntop].pid = pid;
    top[ntop++].sm = 0;
  }
  top[i].sm += sm;
}

int main(int argc, char **argv) {
  double seconds = 30, interval = 0.1;
  long load_pid = 0, idle_pid = 0;
  const char *lib = getenv("ERG_NVML_LIBRARY");
  for (int i = 1; i < argc; i += 2) { /* --option value */
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--seconds") && v)
      seconds = atof(v);
    else if (!strcmp(argv[i], "--interval") && v)
      interval = atof(v);
    else if (!strcmp(argv[i], "--load-pid") && v)
      load_pid = atol(v);
    else if (!strcmp(argv[i], "--idle-pid") && v)
      idle_pid = atol(v);
    else if (!strcmp(argv[i], "--library") && v)
      lib = v;
    else {
      fprintf(stderr, "usage: gpu_check [--seconds N] [--interval S] [--load-pid P] "
                      "[--idle-pid P] [--library PATH]\n");
      return 2;
    }
  }
  if (seconds <= 0 || interval < 0.01 || interval > seconds) {
    fprintf(stderr, "gpu_check: need 0.01 <= --interval <= --seconds\n");
    return 2;
  }
  struct erg_gpu *g;
  bool absent;
  char why[400];
  if (erg_gpu_open(&g, lib && lib[0] ? lib : NULL, &absent, why, sizeof why) != 0) {
    printf("{\"gpus\":[],\"error\":");
    json_str(why);
    printf("}\n");
    return 2;
  }
  size_t n;
  const struct erg_gpu_device *dev = erg_gpu_devices(g, &n);
  struct per_gpu *acc = calloc(n, sizeof *acc);
  if (!acc)
    return 2;
  struct erg_gpu_interval iv;
  uint64_t start = now_ns(CLOCK_MONOTONIC), next = start;
  uint64_t cpu_total = 0, wall_total = 0;
  long passes = 0;
  const char *error = NULL;
  while (next - start <= (uint64_t)(seconds * 1e9)) {
    sleep_until(next);
    uint64_t c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
    int r = erg_gpu_sample(g, w0, &iv, why, sizeof why);
    cpu_total += now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
    wall_total += now_ns(CLOCK_MONOTONIC) - w0;
    passes++;
    next += (uint64_t)(interval * 1e9);
    if (r < 0) {
      error = why;
      break;
    }
    if (r == 0)
      continue;
    for (size_t k = 0; k < iv.ndevices; k++) {
      const struct erg_gpu_device *d = &iv.devices[k];
      if (d->energy_counter_joules >= 0 && d->energy_power_joules >= 0) {
        acc[k].e_counter += d->energy_counter_joules;
        acc[k].e_power += d->energy_power_joules;
        acc[k].seconds += d->seconds;
      }
      if (d->has_energy)
        acc[k].e_chosen += d->energy_joules;
    }
    for (size_t i = 0; i < iv.nprocs; i++) {
      const struct erg_gpu_proc *p = &iv.procs[i];
      struct per_gpu *a = &acc[p->device];
      a->sm_total += p->sm_percent;
      top_add(p->device, p->pid, p->sm_percent);
      if (load_pid && p->pid == (uint32_t)load_pid) {
        a->sm_load += p->sm_percent;
        a->load_seen = 1;
        a->load_mem = p->used_memory_bytes;
      }
      if (idle_pid && p->pid == (uint32_t)idle_pid) {
        a->sm_idle += p->sm_percent;
        a->idle_seen = 1;
        a->idle_mem = p->used_memory_bytes;
      }
    }
  }
  double wall = (double)(now_ns(CLOCK_MONOTONIC) - start) / 1e9;
  /* The load's GPU: where it used the most SM (else the busiest). */
  size_t lk = 0, busiest = 0;
  for (size_t k = 1; k < n; k++) {
    if (acc[k].sm_load > acc[lk].sm_load)
      lk = k;
    if (acc[k].sm_total > acc[busiest].sm_total)
      busiest = k;
  }
  if (acc[lk].sm_load == 0)
    lk = busiest;
  size_t t = TOP_MAX;
  for (size_t i = 0; i < ntop; i++)
    if (top[i].device == lk && (t == TOP_MAX || top[i].sm > top[t].sm))
      t = i;
  int ok = !error;
  printf("{\"backend\":\"%s\",\"library\":", erg_gpu_backend(g));
  json_str(lib && lib[0] ? lib : "libnvidia-ml.so.1");
  printf(",\"seconds\":%.1f,\"interval_s\":%.3f,\"passes\":%ld,\"gpus\":[", wall, interval, passes);
  int energy_ok = -1;
  for (size_t k = 0; k < n; k++) {
    const struct per_gpu *a = &acc[k];
    double rel = a->e_counter > 0 ? absd(a->e_counter - a->e_power) / a->e_counter : -1;
    printf("%s{\"index\":%u,\"uuid\":", k ? "," : "", dev[k].index);
    json_str(dev[k].uuid);
    printf(",\"name\":");
    json_str(dev[k].name);
    printf(",\"mig\":%s,\"energy_counter\":%s,\"power_reading\":%s,\"proc_util\":%s,"
           "\"energy_joules\":%.3f,\"compared_seconds\":%.2f,\"energy_counter_joules\":%.3f,"
           "\"energy_integrated_power_joules\":%.3f,\"energy_rel_diff\":",
           dev[k].mig ? "true" : "false", dev[k].energy_counter ? "true" : "false",
           dev[k].power_reading ? "true" : "false", dev[k].proc_util ? "true" : "false",
           a->e_chosen, a->seconds, a->e_counter, a->e_power);
    if (rel >= 0) {
      printf("%.4f}", rel);
      energy_ok = (energy_ok != 0) && rel <= 0.02;
    } else {
      printf("null}");
    }
  }
  printf("],\"load\":");
  double share = -1;
  if (load_pid) {
    const struct per_gpu *a = &acc[lk];
    share = a->sm_total > 0 ? a->sm_load / a->sm_total : 0;
    printf("{\"pid\":%ld,\"seen\":%s,\"gpu_index\":%u,\"sm_share\":%.4f,"
           "\"used_memory_bytes\":%llu,\"top_pid\":%u,\"top_sm_share\":%.4f}",
           load_pid, a->load_seen ? "true" : "false", dev[lk].index, share, a->load_mem,
           t < ntop ? top[t].pid : 0, t < ntop && a->sm_total > 0 ? top[t].sm / a->sm_total : 0);
  } else {
    printf("null");
  }
  printf(",\"idle\":");
  if (idle_pid) {
    const struct per_gpu *a = &acc[lk];
    int seen = 0;
    unsigned long long mem = 0;
    for (size_t k = 0; k < n; k++) {
      seen |= acc[k].idle_seen;
      mem = acc[k].idle_seen ? acc[k].idle_mem : mem;
    }
    printf("{\"pid\":%ld,\"seen\":%s,\"sm_share\":%.4f,\"used_memory_bytes\":%llu}", idle_pid,
           seen ? "true" : "false", a->sm_total > 0 ? a->sm_idle / a->sm_total : 0, mem);
  } else {
    printf("null");
  }
  double cpu_per = passes ? (double)cpu_total / (double)passes / 1e6 : 0;
  printf(",\"cost\":{\"cpu_ms_per_pass\":%.3f,\"wall_ms_per_pass\":%.3f,"
         "\"cpu_percent_at_1_pass_per_s\":%.4f}",
         cpu_per, passes ? (double)wall_total / (double)passes / 1e6 : 0, cpu_per / 10);
  printf(",\"goals\":{\"load_share_ge_0.90\":%s,\"energy_within_2pct\":%s}",
         share < 0      ? "null"
         : share >= 0.9 ? "true"
                        : "false",
         energy_ok < 0 ? "null"
         : energy_ok   ? "true"
                       : "false");
  printf(",\"error\":");
  if (error)
    json_str(error);
  else
    printf("null");
  printf("}\n");
  ok = ok && (share < 0 || share >= 0.9) && energy_ok != 0;
  erg_gpu_close(g);
  free(acc);
  return ok ? 0 : 1;
}

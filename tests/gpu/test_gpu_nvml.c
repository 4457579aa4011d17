// SPDX-License-Identifier: GPL-3.0-or-later
/* The NVML GPU sampler (node-agent/gpu_nvml.c) against the NVML stand-in
 * (nvml_standin.c): no GPU exists here, so the stand-in serves scripted
 * GPUs on a clock this test sets. Checks each GPU's energy over an
 * interval (the energy counter preferred to integrated power, power used
 * where a GPU has no counter), per-process SM shares, means and memory,
 * MIG, a GPU lost mid-run, and a node without NVML. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../erg_test.h"
#include "gpu.h"
#include "standin_test.h"

static struct standin nvml;

static int load(void **state) {
  (void)state;
  standin_load(&nvml, STANDIN_PATH, "nvml_standin_set_time", "ERG_NVML_STANDIN_SCRIPT",
               "gpu_script");
  return 0;
}

static struct erg_gpu *open_standin(void) {
  bool absent;
  char why[256];
  int rc = erg_gpu_open(&standin_gpu, STANDIN_PATH, &absent, why, sizeof why);
  erg_assert(rc == 0, "open: %d: %s", rc, why);
  return standin_gpu;
}

/* GPU 0 has the energy counter and its power steps from 100 W to 300 W at
 * 1.2 s; GPU 1 has none and steps from 50 W to 150 W at 1.5 s. */
static void test_energy_and_shares(void **state) {
  (void)state;
  standin_script(
      &nvml, "period_ms 100\n"
             "gpu 0 uuid=GPU-a name=StandIn-A energy=1 mig=0\n"
             "gpu 1 uuid=GPU-b name=StandIn-B energy=0 mig=na\n"
             "at 0 gpu=0 power_w=100 util=50 memutil=5 proc=1001:30:10:512 proc=1002:10:5:256\n"
             "at 1.2 gpu=0 power_w=300 util=90 memutil=20 proc=1001:60:20:512 proc=1002:40:10:256\n"
             "at 0 gpu=1 power_w=50 proc=2001:0:0:128\n"
             "at 1.5 gpu=1 power_w=150 util=40 proc=2001:40:0:128\n");
  standin_time(&nvml, 0);
  struct erg_gpu *g = open_standin();
  size_t n;
  const struct erg_gpu_device *d = erg_gpu_devices(g, &n);
  erg_assert(n == 2, "%zu GPUs", n);
  erg_assert(!strcmp(d[0].uuid, "GPU-a") && !strcmp(d[0].name, "StandIn-A"),
             "GPU 0: " STANDIN_DEV_FMT, STANDIN_DEV(d[0]));
  erg_assert(d[0].energy_counter && d[0].power_reading && d[0].proc_util && !d[0].mig,
             "GPU 0: " STANDIN_DEV_FMT, STANDIN_DEV(d[0]));
  erg_assert(!d[1].energy_counter && d[1].power_reading && d[1].proc_util,
             "GPU 1: " STANDIN_DEV_FMT, STANDIN_DEV(d[1]));
  erg_assert(!strcmp(erg_gpu_backend(g), "nvml"), "backend %s", erg_gpu_backend(g));
  struct erg_gpu_interval iv;
  char why[256];
  standin_assert_sample(g, 1.0, &iv, why, 0); /* baseline */
  standin_assert_sample(g, 2.0, &iv, why, 1);
  erg_assert(iv.ndevices == 2, "%zu devices", iv.ndevices);
  standin_assert_step_energy(&iv);
  /* Periods ending in (1.0, 2.0]: at 1.1 the first state (1001: 30, 1002:
   * 10), at 1.2 ... 2.0 the second (60, 40): sums 570 and 370 over 10
   * periods of 100 ms. */
  erg_assert(iv.nprocs == 3, "%zu processes", iv.nprocs);
  const struct erg_gpu_proc *p = iv.procs;
  erg_assert(p[0].device == 0 && p[0].pid == 1001 && p[1].device == 0 && p[1].pid == 1002,
             "0: " STANDIN_PROC_FMT "; 1: " STANDIN_PROC_FMT, STANDIN_PROC(p[0]),
             STANDIN_PROC(p[1]));
  standin_assert_near(p[0].sm_share, 570.0 / 940, 1e-9);
  standin_assert_near(p[1].sm_share, 370.0 / 940, 1e-9);
  standin_assert_near(p[0].sm_percent, 57, 1e-9);
  standin_assert_near(p[1].sm_percent, 37, 1e-9);
  standin_assert_near(p[0].mem_percent, (10 + 9 * 20) / 10.0, 1e-9);
  erg_assert(p[0].used_memory_bytes == 512ull << 20 && p[1].used_memory_bytes == 256ull << 20,
             "0: " STANDIN_PROC_FMT "; 1: " STANDIN_PROC_FMT, STANDIN_PROC(p[0]),
             STANDIN_PROC(p[1]));
  /* GPU 1's only process: idle until 1.5 s (no samples: NVML reports
   * non-zero utilization only), then 40 % in 6 periods of 10. */
  erg_assert(p[2].device == 1 && p[2].pid == 2001, STANDIN_PROC_FMT, STANDIN_PROC(p[2]));
  standin_assert_near(p[2].sm_share, 1.0, 1e-9);
  standin_assert_near(p[2].sm_percent, 24, 1e-9);
  erg_assert(p[2].used_memory_bytes == 128ull << 20, STANDIN_PROC_FMT, STANDIN_PROC(p[2]));
  /* Constant power: counter and trapezoid agree, 300 J over 1 s. */
  standin_assert_sample(g, 3.0, &iv, why, 1);
  standin_assert_near(iv.devices[0].energy_joules, 300, 0.002);
  standin_assert_near(iv.devices[0].energy_power_joules, 300, 1e-9);
  standin_assert_near(iv.devices[1].energy_joules, 150, 1e-9);
  if (iv.nprocs == 3) {
    standin_assert_near(iv.procs[0].sm_share, 0.6, 1e-9);
    standin_assert_near(iv.procs[0].sm_percent, 60, 1e-9);
  }
  /* Half a second: energy scales, so does the mean. */
  standin_assert_sample(g, 3.5, &iv, why, 1);
  standin_assert_near(iv.devices[0].energy_joules, 150, 0.002);
  standin_assert_near(iv.devices[0].power_watts, 300, 0.004);
  standin_close();
}

/* MIG: no per-process utilization, the processes still listed with their
 * memory and no share; no power reading at all: no energy. */
static void test_mig_and_no_power(void **state) {
  (void)state;
  standin_script(&nvml, "gpu 0 mig=1 energy=0 power=0\n"
                        "at 0 gpu=0 power_w=80 util=30 proc=3001:50:0:64:2/0\n");
  standin_time(&nvml, 0);
  struct erg_gpu *g = open_standin();
  size_t n;
  const struct erg_gpu_device *d = erg_gpu_devices(g, &n);
  erg_assert(n == 1 && d[0].mig && !d[0].proc_util && !d[0].energy_counter && !d[0].power_reading,
             "%zu GPUs, GPU 0: " STANDIN_DEV_FMT, n, STANDIN_DEV(d[0]));
  struct erg_gpu_interval iv;
  char why[256];
  standin_assert_sample(g, 1.0, &iv, why, 0);
  standin_assert_sample(g, 2.0, &iv, why, 1);
  erg_assert(!iv.devices[0].has_energy && !iv.devices[0].has_proc_util,
             "has_energy %d has_proc_util %d", iv.devices[0].has_energy,
             iv.devices[0].has_proc_util);
  erg_assert(iv.nprocs == 1 && iv.procs[0].pid == 3001 && iv.procs[0].sm_share == 0 &&
                 iv.procs[0].used_memory_bytes == 64ull << 20,
             "%zu processes, the first: " STANDIN_PROC_FMT, iv.nprocs, STANDIN_PROC(iv.procs[0]));
  /* Its MIG instance, from the process list. */
  erg_assert(iv.procs[0].gpu_instance == 2 && iv.procs[0].compute_instance == 0,
             "MIG instance %u/%u, want 2/0", iv.procs[0].gpu_instance,
             iv.procs[0].compute_instance);
  standin_close();
}

/* A driver period (1 s) longer than the sampling interval: an interval
 * that ends before the period's samples exist keeps the processes' last
 * shares while at most a period has passed since them; a whole period
 * without samples (the processes idle) or an idle GPU gets none. */
static void test_carried_shares(void **state) {
  (void)state;
  standin_script(&nvml, "period_ms 1000\ngpu 0\n"
                        "at 0 gpu=0 power_w=200 util=80 proc=1001:60:0:64 proc=1002:20:0:64\n"
                        "at 2.5 gpu=0 power_w=200 util=80 proc=1001:0:0:64 proc=1002:0:0:64\n"
                        "at 4.5 gpu=0 power_w=200 util=80 proc=1001:60:0:64 proc=1002:20:0:64\n"
                        "at 5.2 gpu=0 power_w=60 util=0 proc=1001:0:0:64 proc=1002:0:0:64\n");
  standin_time(&nvml, 0);
  struct erg_gpu *g = open_standin();
  struct erg_gpu_interval iv;
  char why[256];
  /* want: the shares of 1001 and 1002 after sampling at t. */
  static const struct {
    double t, a, b;
  } at[] = {{1.2, 0.75, 0.25}, /* the period ending at 1.0 */
            {1.5, 0.75, 0.25}, /* none yet: carried */
            {2.1, 0.75, 0.25}, /* 2.0's */
            {2.6, 0.75, 0.25}, /* carried */
            {3.1, 0.75, 0.25}, /* 3.0's period was idle, but under a period since: carried */
            {3.7, 0, 0},       /* 1.6 s since: no more */
            {5.1, 0.75, 0.25}, /* 5.0's */
            {5.5, 0, 0}};      /* the GPU idle at the reading: nothing carried */
  standin_assert_sample(g, 0.5, &iv, why, 0);
  for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
    standin_assert_sample(g, at[i].t, &iv, why, 1);
    erg_assert(iv.nprocs == 2 && iv.procs[0].pid == 1001 && iv.procs[1].pid == 1002,
               "at %.1f: %zu processes", at[i].t, iv.nprocs);
    erg_assert(fabs(iv.procs[0].sm_share - at[i].a) < 1e-9 &&
                   fabs(iv.procs[1].sm_share - at[i].b) < 1e-9,
               "at %.1f: shares %g and %g, want %g and %g", at[i].t, iv.procs[0].sm_share,
               iv.procs[1].sm_share, at[i].a, at[i].b);
  }
  standin_close();
}

/* Per-process utilization is not asked for while a GPU stays idle (no
 * compute process, utilization 0 at this reading and the last, no sample
 * in the last answer): the shares count as read, all 0. The stand-in
 * counts the calls (NVML has no such counter). */
static void test_idle_skip(void **state) {
  (void)state;
  standin_script(&nvml, "period_ms 100\ngpu 0\n"
                        "at 0 gpu=0 power_w=60 util=0\n"
                        "at 3 gpu=0 power_w=200 util=50 proc=1001:40:0:64\n"
                        "at 4.95 gpu=0 power_w=60 util=0\n");
  standin_time(&nvml, 0);
  struct erg_gpu *g = open_standin();
  void *sym = dlsym(nvml.handle, "nvml_standin_proc_util_calls");
  long (*calls)(void);
  erg_assert(sym != NULL, "stand-in lacks nvml_standin_proc_util_calls");
  memcpy(&calls, &sym, sizeof sym);
  struct erg_gpu_interval iv;
  char why[256];
  /* want: the calls so far after sampling at t, and 1001's share. */
  static const struct {
    double t;
    long calls;
    size_t nprocs;
  } at[] = {{1.0, 2, 0},  /* idle, but not known idle at the baseline */
            {1.5, 2, 0},  /* idle twice: skipped */
            {2.5, 2, 0},  /* skipped */
            {3.5, 3, 1},  /* busy: read */
            {5.0, 4, 1},  /* idle now, busy before: read (3.6 ... 4.9's samples) */
            {5.5, 5, 0},  /* the last answer had samples: read */
            {6.0, 5, 0}}; /* skipped again */
  long c0 = calls();      /* counted since the library was loaded */
  standin_assert_sample(g, 0.5, &iv, why, 0);
  erg_assert(calls() - c0 == 1, "baseline: %ld calls", calls() - c0);
  for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
    standin_assert_sample(g, at[i].t, &iv, why, 1);
    erg_assert(calls() - c0 == at[i].calls, "at %.1f: %ld calls, want %ld", at[i].t, calls() - c0,
               at[i].calls);
    erg_assert(iv.devices[0].has_proc_util, "at %.1f: shares not read", at[i].t);
    erg_assert(iv.nprocs == at[i].nprocs, "at %.1f: %zu processes", at[i].t, iv.nprocs);
    if (at[i].t == 5.0)
      continue;
    for (size_t j = 0; j < iv.nprocs; j++)
      erg_assert(iv.procs[j].sm_share == (at[i].t == 3.5 ? 1.0 : 0.0), "at %.1f: share %g", at[i].t,
                 iv.procs[j].sm_share);
  }
  standin_close();
}

/* A GPU lost mid-run: the sampler says so and which call; before it, the
 * readings are whole. */
static void test_lost(void **state) {
  (void)state;
  standin_script(&nvml, "gpu 0\nat 0 gpu=0 power_w=100 proc=1:10\nfail_at 2.5\n");
  standin_time(&nvml, 0);
  struct erg_gpu *g = open_standin();
  struct erg_gpu_interval iv;
  char why[256] = "";
  standin_assert_sample(g, 1.0, &iv, why, 0);
  standin_assert_sample(g, 2.0, &iv, why, 1);
  standin_assert_near(iv.devices[0].energy_joules, 100, 0.002);
  standin_assert_sample(g, 3.0, &iv, why, -1);
  erg_assert(strstr(why, "GPU 0 (GPU-standin-0)") && strstr(why, "GPU is lost"), "why: %s", why);
  standin_close();
  /* The same by call count: open takes 9 calls for one GPU, the
   * baseline's 4th call after them fails. */
  standin_script(&nvml, "gpu 0\nat 0 gpu=0 power_w=100\nfail_after_calls 12\n");
  g = open_standin();
  standin_assert_sample(g, 1.0, &iv, why, -1);
  erg_assert(strstr(why, "nvmlDeviceGetProcessUtilization: GPU is lost"), "why: %s", why);
  standin_close();
}

/* No library: absent, an error the caller may keep quiet; a library
 * whose driver is not loaded: not absent, and why says so. */
static void test_absent(void **state) {
  (void)state;
  bool absent = false;
  char why[256];
  int rc = erg_gpu_open(&standin_gpu, "/nonexistent/libnvidia-ml.so.1", &absent, why, sizeof why);
  erg_assert(rc == -1, "open: %d", rc);
  erg_assert(absent && standin_gpu == NULL, "absent %d: %s", absent, why);
  unsetenv("ERG_NVML_STANDIN_SCRIPT");
  rc = erg_gpu_open(&standin_gpu, STANDIN_PATH, &absent, why, sizeof why);
  erg_assert(rc == -1, "open without a script: %d", rc);
  erg_assert(!absent && strstr(why, "nvmlInit_v2: Driver Not Loaded"), "absent %d: %s", absent,
             why);
  standin_script(&nvml, "# no gpu lines\n");
  rc = erg_gpu_open(&standin_gpu, STANDIN_PATH, &absent, why, sizeof why);
  erg_assert(rc == -1, "open with no GPU: %d", rc);
  erg_assert(absent, "absent %d: %s", absent, why);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_energy_and_shares, standin_teardown),
      cmocka_unit_test_teardown(test_mig_and_no_power, standin_teardown),
      cmocka_unit_test_teardown(test_carried_shares, standin_teardown),
      cmocka_unit_test_teardown(test_idle_skip, standin_teardown),
      cmocka_unit_test_teardown(test_lost, standin_teardown),
      cmocka_unit_test_teardown(test_absent, standin_teardown),
  };
  return cmocka_run_group_tests(tests, load, standin_unload);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* The ROCm SMI GPU sampler (node-agent/gpu_rocm.c) against the ROCm SMI
 * stand-in (rocm_standin.c), and gpu.c's choice of stacks: no GPU exists
 * here, so the stand-ins serve scripted GPUs on a clock this test sets.
 * Checks each GPU's identity and energy over an interval (the energy
 * accumulator preferred to integrated power, power where a GPU has no
 * accumulator), per-process shares (CU occupancy, else VRAM, else equal;
 * none on an idle GPU), the fallbacks of a ROCm SMI 5.2 library (average
 * power, per-pid figures), a GPU lost mid-run, no library, and NVIDIA's
 * and AMD's GPUs on one node. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../erg_test.h"
#include "gpu.h"
#include "standin_test.h"

/* The ROCm SMI stand-in, its ROCm SMI 5.2 build and the NVML one. The
 * old build reads the same variable as the new: one script for both. */
static struct standin rocm, rocm_old, nvml;

static int load(void **state) {
  (void)state;
  standin_load(&rocm, STANDIN_PATH, "rocm_standin_set_time", "ERG_ROCM_STANDIN_SCRIPT",
               "rocm_script");
  standin_load(&rocm_old, STANDIN_OLD_PATH, "rocm_standin_set_time", "ERG_ROCM_STANDIN_SCRIPT",
               "rocm_old_script");
  standin_load(&nvml, NVML_STANDIN_PATH, "nvml_standin_set_time", "ERG_NVML_STANDIN_SCRIPT",
               "rocm_nvml_script");
  return 0;
}

static struct erg_gpu *open_rocm(const char *lib) {
  bool absent;
  char why[256];
  struct erg_gpu_options o = {.rocm = true, .rocm_library = lib};
  int rc = erg_gpu_open_with(&standin_gpu, &o, &absent, why, sizeof why);
  erg_assert(rc == 0, "open %s: %d: %s", lib, rc, why);
  erg_assert(why[0] == '\0', "open %s: %s", lib, why);
  return standin_gpu;
}

/* The process of pid on device position dev, or NULL. */
static const struct erg_gpu_proc *find(const struct erg_gpu_interval *iv, unsigned dev,
                                       uint32_t pid) {
  for (size_t i = 0; i < iv->nprocs; i++)
    if (iv->procs[i].device == dev && iv->procs[i].pid == pid)
      return &iv->procs[i];
  return NULL;
}

/* The processes of an interval, for a check's message. */
static const char *procs_text(const struct erg_gpu_interval *iv) {
  static char buf[1024];
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < iv->nprocs && len < sizeof buf; i++)
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s" STANDIN_PROC_FMT, i ? "; " : "",
                            STANDIN_PROC(iv->procs[i]));
  return buf;
}

/* GPU 0 has the energy accumulator and reports CU occupancy, its power
 * steps from 100 W to 300 W at 1.2 s; GPU 1 has neither, and steps from
 * 50 W to 150 W at 1.5 s. */
static void test_energy_and_shares(void **state) {
  (void)state;
  standin_script(&rocm,
                 "gpu 0 name=Instinct-A unique_id=1a2b3c4d5e6f7081\n"
                 "gpu 1 name=Instinct-B energy=0 procutil=0\n"
                 "at 0 gpu=0 power_w=100 util=50 memutil=5 proc=1001:30:0:512 proc=1002:10:0:256\n"
                 "at 1.2 gpu=0 power_w=300 util=90 memutil=20 proc=1001:60:0:512 "
                 "proc=1002:20:0:256\n"
                 "at 0 gpu=1 power_w=50 util=0 proc=2001:0:0:128 proc=2002:0:0:384\n"
                 "at 1.5 gpu=1 power_w=150 util=40 proc=2001:40:0:128 proc=2002:0:0:384\n"
                 /* 4 s: GPU 1 idle (busy 0 %, no CU occupancy reported). */
                 "at 4 gpu=1 power_w=50 util=0 proc=2001:0:0:128 proc=2002:0:0:384\n"
                 /* 5 s: GPU 0 busy, no CU occupied: VRAM; GPU 1 busy, no VRAM: equal. */
                 "at 5 gpu=0 power_w=200 util=80 proc=1001:0:0:512 proc=1002:0:0:1536\n"
                 "at 5 gpu=1 power_w=80 util=30 proc=2001:0:0:0 proc=2002:0:0:0\n");
  standin_time(&rocm, 0);
  struct erg_gpu *g = open_rocm(STANDIN_PATH);
  size_t n;
  const struct erg_gpu_device *d = erg_gpu_devices(g, &n);
  erg_assert(n == 2, "%zu GPUs", n);
  erg_assert(!strcmp(erg_gpu_backend(g), "rocm"), "backend %s", erg_gpu_backend(g));
  erg_assert(d[0].index == 0 && !strcmp(d[0].uuid, "AMD-1a2b3c4d5e6f7081") &&
                 !strcmp(d[0].name, "Instinct-A"),
             "GPU 0: " STANDIN_DEV_FMT, STANDIN_DEV(d[0]));
  /* No unique id: the PCI address. */
  erg_assert(d[1].index == 1 && !strcmp(d[1].uuid, "AMD-pci-0000:11:00.0"),
             "GPU 1: " STANDIN_DEV_FMT, STANDIN_DEV(d[1]));
  erg_assert(d[0].energy_counter && d[0].power_reading && d[0].proc_util && !d[0].mig,
             "GPU 0: " STANDIN_DEV_FMT, STANDIN_DEV(d[0]));
  erg_assert(!d[1].energy_counter && d[1].power_reading && d[1].proc_util,
             "GPU 1: " STANDIN_DEV_FMT, STANDIN_DEV(d[1]));
  struct erg_gpu_interval iv;
  char why[256];
  standin_assert_sample(g, 1.0, &iv, why, 0); /* baseline */
  standin_assert_sample(g, 2.0, &iv, why, 1);
  erg_assert(iv.ndevices == 2, "%zu devices", iv.ndevices);
  standin_assert_step_energy(&iv);
  erg_assert(iv.devices[0].has_proc_util && iv.devices[1].has_proc_util,
             "has_proc_util GPU 0 %d GPU 1 %d", iv.devices[0].has_proc_util,
             iv.devices[1].has_proc_util);
  /* GPU 0 by CU occupancy at the reading (60 % and 20 %); GPU 1 reports
   * none and is busy: by VRAM (128 and 384 MiB). */
  erg_assert(iv.nprocs == 4, "%zu processes: %s", iv.nprocs, procs_text(&iv));
  const struct erg_gpu_proc *a = find(&iv, 0, 1001), *b = find(&iv, 0, 1002);
  const struct erg_gpu_proc *c = find(&iv, 1, 2001), *e = find(&iv, 1, 2002);
  erg_assert(a && b && c && e && iv.procs[0].pid == 1001 && iv.procs[3].pid == 2002,
             "processes: %s", procs_text(&iv));
  standin_assert_near(a->sm_share, 0.75, 1e-9);
  standin_assert_near(b->sm_share, 0.25, 1e-9);
  standin_assert_near(a->sm_percent, 60, 1e-9);
  standin_assert_near(b->sm_percent, 20, 1e-9);
  erg_assert(a->mem_percent == 0, STANDIN_PROC_FMT, STANDIN_PROC(*a));
  erg_assert(a->used_memory_bytes == 512ull << 20 && b->used_memory_bytes == 256ull << 20,
             "1001: " STANDIN_PROC_FMT "; 1002: " STANDIN_PROC_FMT, STANDIN_PROC(*a),
             STANDIN_PROC(*b));
  standin_assert_near(c->sm_share, 0.25, 1e-9);
  standin_assert_near(e->sm_share, 0.75, 1e-9);
  erg_assert(c->sm_percent == 0 && e->used_memory_bytes == 384ull << 20,
             "2001: " STANDIN_PROC_FMT "; 2002: " STANDIN_PROC_FMT, STANDIN_PROC(*c),
             STANDIN_PROC(*e));
  /* Constant power: accumulator and trapezoid agree, 300 J over 1 s. */
  standin_assert_sample(g, 3.0, &iv, why, 1);
  standin_assert_near(iv.devices[0].energy_joules, 300, 0.002);
  standin_assert_near(iv.devices[0].energy_power_joules, 300, 1e-9);
  standin_assert_near(iv.devices[1].energy_joules, 150, 1e-9);
  /* GPU 1 idle: its processes are listed with their memory, no share. */
  standin_assert_sample(g, 4.5, &iv, why, 1);
  standin_assert_near(iv.devices[0].energy_joules, 450, 0.003);
  c = find(&iv, 1, 2001);
  e = find(&iv, 1, 2002);
  erg_assert(c && e && c->sm_share == 0 && e->sm_share == 0 && e->used_memory_bytes == 384ull << 20,
             "processes: %s", procs_text(&iv));
  standin_assert_sample(g, 5.5, &iv, why, 1);
  a = find(&iv, 0, 1001);
  b = find(&iv, 0, 1002);
  c = find(&iv, 1, 2001);
  e = find(&iv, 1, 2002);
  erg_assert(a && b && c && e, "processes: %s", procs_text(&iv));
  standin_assert_near(a->sm_share, 0.25, 1e-9); /* VRAM: 512 of 2048 MiB */
  standin_assert_near(b->sm_share, 0.75, 1e-9);
  standin_assert_near(c->sm_share, 0.5, 1e-9); /* equal */
  standin_assert_near(e->sm_share, 0.5, 1e-9);
  /* 0.5 s at 300 W then 0.5 s at 200 W. */
  standin_assert_near(iv.devices[0].energy_joules, 250, 0.003);
  standin_close();
}

/* A ROCm SMI 5.2 library (Debian 12's): average power, and the processes'
 * figures per pid, summed over their GPUs. */
static void test_old_library(void **state) {
  (void)state;
  void *h = rocm_old.handle;
  erg_assert(
      !dlsym(h, "rsmi_dev_power_get") && !dlsym(h, "rsmi_compute_process_info_by_device_get") &&
          dlsym(h, "rsmi_dev_power_ave_get"),
      "%s: rsmi_dev_power_get %p, rsmi_compute_process_info_by_device_get %p, "
      "rsmi_dev_power_ave_get %p",
      rocm_old.library, dlsym(h, "rsmi_dev_power_get"),
      dlsym(h, "rsmi_compute_process_info_by_device_get"), dlsym(h, "rsmi_dev_power_ave_get"));
  standin_script(&rocm_old,
                 "gpu 0 energy=0\n"
                 "gpu 1 energy=0\n"
                 "at 0 gpu=0 power_w=200 util=70 proc=3001:40:0:1024 proc=3002:40:0:256\n"
                 "at 0 gpu=1 power_w=100 util=70 proc=3001:20:0:1024\n");
  standin_time(&rocm_old, 0);
  struct erg_gpu *g = open_rocm(STANDIN_OLD_PATH);
  size_t n;
  const struct erg_gpu_device *d = erg_gpu_devices(g, &n);
  erg_assert(n == 2 && d[0].power_reading && !d[0].energy_counter && d[0].proc_util,
             "%zu GPUs, GPU 0: " STANDIN_DEV_FMT, n, STANDIN_DEV(d[0]));
  erg_assert(!strcmp(d[0].uuid, "AMD-pci-0000:10:00.0"), "GPU 0: " STANDIN_DEV_FMT,
             STANDIN_DEV(d[0]));
  struct erg_gpu_interval iv;
  char why[256];
  standin_assert_sample(g, 1.0, &iv, why, 0);
  standin_assert_sample(g, 2.0, &iv, why, 1);
  standin_assert_near(iv.devices[0].energy_joules, 200, 1e-9);
  standin_assert_near(iv.devices[1].energy_joules, 100, 1e-9);
  /* 3001 uses both GPUs: per pid, 2 GiB over both (1 GiB each) and the
   * mean of its CU occupancy, 30 %, on each. */
  const struct erg_gpu_proc *a = find(&iv, 0, 3001), *b = find(&iv, 0, 3002),
                            *c = find(&iv, 1, 3001);
  erg_assert(iv.nprocs == 3 && a && b && c, "%zu processes: %s", iv.nprocs, procs_text(&iv));
  standin_assert_near(a->sm_share, 30.0 / 70, 1e-9);
  standin_assert_near(b->sm_share, 40.0 / 70, 1e-9);
  standin_assert_near(c->sm_share, 1, 1e-9);
  erg_assert(a->used_memory_bytes == 1ull << 30 && c->used_memory_bytes == 1ull << 30,
             "processes: %s", procs_text(&iv));
  standin_assert_near(c->sm_percent, 30, 1e-9);
  standin_close();
}

/* A GPU lost mid-run: the sampler says so and which call; before it, the
 * readings are whole. */
static void test_lost(void **state) {
  (void)state;
  standin_script(&rocm,
                 "gpu 0 unique_id=abc\nat 0 gpu=0 power_w=100 util=10 proc=1:10\nfail_at 2.5\n");
  standin_time(&rocm, 0);
  struct erg_gpu *g = open_rocm(STANDIN_PATH);
  struct erg_gpu_interval iv;
  char why[256] = "";
  standin_assert_sample(g, 1.0, &iv, why, 0);
  standin_assert_sample(g, 2.0, &iv, why, 1);
  standin_assert_near(iv.devices[0].energy_joules, 100, 0.002);
  erg_assert(iv.nprocs == 1 && iv.procs[0].sm_share == 1, "%zu processes: %s", iv.nprocs,
             procs_text(&iv));
  standin_assert_sample(g, 3.0, &iv, why, -1);
  erg_assert(strstr(why, "GPU 0 (AMD-0000000000000abc): rsmi_dev_energy_count_get: "
                         "RSMI_STATUS_UNEXPECTED_SIZE"),
             "why: %s", why);
  standin_close();
  /* The same by call count: open takes 7 calls for one GPU with a unique
   * id, a sample 4 per GPU and then the process list, the 16th, fails. */
  standin_script(&rocm, "gpu 0 unique_id=abc\nat 0 gpu=0 power_w=100\nfail_after_calls 15\n");
  g = open_rocm(STANDIN_PATH);
  standin_assert_sample(g, 1.0, &iv, why, 0);
  standin_assert_sample(g, 2.0, &iv, why, -1);
  erg_assert(strstr(why, "rsmi_compute_process_info_get: RSMI_STATUS_UNEXPECTED_SIZE"), "why: %s",
             why);
  standin_close();
}

/* No library: absent, an error the caller may keep quiet; a library
 * whose driver is not there: not absent, and why says so. */
static void test_absent(void **state) {
  (void)state;
  bool absent = false;
  char why[256];
  struct erg_gpu_options o = {.rocm = true, .rocm_library = "/nonexistent/librocm_smi64.so"};
  int rc = erg_gpu_open_with(&standin_gpu, &o, &absent, why, sizeof why);
  erg_assert(rc == -1, "open: %d", rc);
  erg_assert(absent && standin_gpu == NULL && strstr(why, "/nonexistent/librocm_smi64.so"),
             "absent %d: %s", absent, why);
  unsetenv("ERG_ROCM_STANDIN_SCRIPT");
  o.rocm_library = STANDIN_PATH;
  rc = erg_gpu_open_with(&standin_gpu, &o, &absent, why, sizeof why);
  erg_assert(rc == -1, "open without a script: %d", rc);
  erg_assert(!absent && strstr(why, "rsmi_init: RSMI_STATUS_INIT_ERROR"), "absent %d: %s", absent,
             why);
  standin_script(&rocm, "# no gpu lines\n");
  rc = erg_gpu_open_with(&standin_gpu, &o, &absent, why, sizeof why);
  erg_assert(rc == -1, "open with no GPU: %d", rc);
  erg_assert(absent && strstr(why, "ROCm SMI sees no GPU"), "absent %d: %s", absent, why);
  /* Some other library under that name: unusable, not absent. */
  o.rocm_library = NVML_STANDIN_PATH;
  rc = erg_gpu_open_with(&standin_gpu, &o, &absent, why, sizeof why);
  erg_assert(rc == -1, "open the NVML stand-in: %d", rc);
  erg_assert(!absent && strstr(why, "lacks rsmi_init"), "absent %d: %s", absent, why);
}

/* NVIDIA's and AMD's GPUs on one node: both stacks open, the AMD GPUs
 * after the NVIDIA one; a stack that fails at open is said beside the
 * other's GPUs; one that fails mid-run stops both. */
static void test_both(void **state) {
  (void)state;
  standin_script(&nvml, "gpu 0 uuid=GPU-nv name=NV\n"
                        "at 0 gpu=0 power_w=200 proc=4001:50:0:64\n");
  standin_script(&rocm, "gpu 0 name=AMD-A\ngpu 1 name=AMD-B\n"
                        "at 0 gpu=0 power_w=100 util=10 proc=5001:10:0:32\n"
                        "at 0 gpu=1 power_w=50 util=10 proc=5002:10:0:32\n"
                        "fail_at 3.5\n");
  struct erg_gpu_options o = {
      .nvml = true, .rocm = true, .nvml_library = NVML_STANDIN_PATH, .rocm_library = STANDIN_PATH};
  bool absent;
  char why[256];
  standin_time(&rocm, 0);
  standin_time(&nvml, 0);
  int rc = erg_gpu_open_with(&standin_gpu, &o, &absent, why, sizeof why);
  erg_assert(rc == 0, "open both: %d: %s", rc, why);
  struct erg_gpu *g = standin_gpu;
  erg_assert(why[0] == '\0' && !strcmp(erg_gpu_backend(g), "nvml+rocm"), "backend %s: %s",
             erg_gpu_backend(g), why);
  size_t n;
  const struct erg_gpu_device *d = erg_gpu_devices(g, &n);
  erg_assert(n == 3, "%zu GPUs", n);
  erg_assert(d[0].index == 0 && !strcmp(d[0].uuid, "GPU-nv") && d[1].index == 1 &&
                 !strcmp(d[1].name, "AMD-A") && d[2].index == 2 && !strcmp(d[2].name, "AMD-B"),
             "0: " STANDIN_DEV_FMT "; 1: " STANDIN_DEV_FMT "; 2: " STANDIN_DEV_FMT,
             STANDIN_DEV(d[0]), STANDIN_DEV(d[1]), STANDIN_DEV(d[2]));
  struct erg_gpu_interval iv;
  standin_assert_sample(g, 1.0, &iv, why, 0);
  standin_assert_sample(g, 2.0, &iv, why, 1);
  erg_assert(iv.ndevices == 3 && iv.devices[2].index == 2, "%zu devices, the third index %u",
             iv.ndevices, iv.ndevices >= 3 ? iv.devices[2].index : 0);
  standin_assert_near(iv.devices[0].energy_joules, 200, 0.002);
  standin_assert_near(iv.devices[1].energy_joules, 100, 0.002);
  standin_assert_near(iv.devices[2].energy_joules, 50, 0.002);
  erg_assert(iv.nprocs == 3, "%zu processes: %s", iv.nprocs, procs_text(&iv));
  erg_assert(iv.procs[0].pid == 4001 && iv.procs[0].device == 0 && iv.procs[1].pid == 5001 &&
                 iv.procs[1].device == 1 && iv.procs[2].pid == 5002 && iv.procs[2].device == 2 &&
                 iv.procs[2].sm_share == 1,
             "processes: %s", procs_text(&iv));
  standin_assert_sample(g, 4.0, &iv, why, -1);
  erg_assert(strstr(why, "RSMI_STATUS_UNEXPECTED_SIZE"), "why: %s", why);
  standin_close();
  /* NVML's library is there without its driver: ROCm SMI's GPUs alone,
   * and why says what NVML said. */
  unsetenv("ERG_NVML_STANDIN_SCRIPT");
  standin_time(&rocm, 0);
  standin_time(&nvml, 0);
  rc = erg_gpu_open_with(&standin_gpu, &o, &absent, why, sizeof why);
  erg_assert(rc == 0, "open without NVML's driver: %d: %s", rc, why);
  g = standin_gpu;
  erg_assert(!strcmp(erg_gpu_backend(g), "rocm") && strstr(why, "nvmlInit_v2: Driver Not Loaded"),
             "backend %s: %s", erg_gpu_backend(g), why);
  erg_gpu_devices(g, &n);
  erg_assert(n == 2, "%zu GPUs", n);
  standin_close();
  /* Neither there: absent. */
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  o.rocm_library = "/nonexistent/librocm_smi64.so";
  rc = erg_gpu_open_with(&standin_gpu, &o, &absent, why, sizeof why);
  erg_assert(rc == -1 && absent, "open neither: %d, absent %d: %s", rc, absent, why);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_energy_and_shares, standin_teardown),
      cmocka_unit_test_teardown(test_old_library, standin_teardown),
      cmocka_unit_test_teardown(test_lost, standin_teardown),
      cmocka_unit_test_teardown(test_absent, standin_teardown),
      cmocka_unit_test_teardown(test_both, standin_teardown),
  };
  return cmocka_run_group_tests(tests, load, standin_unload);
}

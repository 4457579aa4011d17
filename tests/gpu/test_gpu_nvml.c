/* The NVML GPU sampler (node-agent/gpu_nvml.c) against the NVML stand-in
 * (nvml_standin.c): no GPU exists here, so the stand-in serves scripted
 * GPUs on a clock this test sets. Checks each GPU's energy over an
 * interval (the energy counter preferred to integrated power, power used
 * where a GPU has no counter), per-process SM shares, means and memory,
 * MIG, a GPU lost mid-run, and a node without NVML. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

static int failures;
#define CHECK(c)                                                                                   \
  do {                                                                                             \
    if (!(c)) {                                                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                        \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)
#define NEAR(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))

static void (*set_time)(double);
static char script[256];

static void write_script(const char *text) {
  FILE *f = fopen(script, "w");
  if (!f) {
    perror(script);
    exit(1);
  }
  fputs(text, f);
  fclose(f);
  setenv("ERG_NVML_STANDIN_SCRIPT", script, 1);
}

static struct erg_gpu *open_standin(void) {
  struct erg_gpu *g = NULL;
  bool absent;
  char why[256];
  if (erg_gpu_open(&g, STANDIN_PATH, &absent, why, sizeof why) != 0) {
    fprintf(stderr, "open: %s\n", why);
    failures++;
    return NULL;
  }
  return g;
}

static int sample_at(struct erg_gpu *g, double t, struct erg_gpu_interval *iv, char *why,
                     size_t whylen) {
  set_time(t);
  return erg_gpu_sample(g, (uint64_t)(t * 1e9 + 0.5), iv, why, whylen);
}

/* GPU 0 has the energy counter and its power steps from 100 W to 300 W at
 * 1.2 s; GPU 1 has none and steps from 50 W to 150 W at 1.5 s. */
static void test_energy_and_shares(void) {
  write_script(
      "period_ms 100\n"
      "gpu 0 uuid=GPU-a name=StandIn-A energy=1 mig=0\n"
      "gpu 1 uuid=GPU-b name=StandIn-B energy=0 mig=na\n"
      "at 0 gpu=0 power_w=100 util=50 memutil=5 proc=1001:30:10:512 proc=1002:10:5:256\n"
      "at 1.2 gpu=0 power_w=300 util=90 memutil=20 proc=1001:60:20:512 proc=1002:40:10:256\n"
      "at 0 gpu=1 power_w=50 proc=2001:0:0:128\n"
      "at 1.5 gpu=1 power_w=150 util=40 proc=2001:40:0:128\n");
  set_time(0);
  struct erg_gpu *g = open_standin();
  if (!g)
    return;
  size_t n;
  const struct erg_gpu_device *d = erg_gpu_devices(g, &n);
  CHECK(n == 2);
  CHECK(!strcmp(d[0].uuid, "GPU-a") && !strcmp(d[0].name, "StandIn-A"));
  CHECK(d[0].energy_counter && d[0].power_reading && d[0].proc_util && !d[0].mig);
  CHECK(!d[1].energy_counter && d[1].power_reading && d[1].proc_util);
  CHECK(!strcmp(erg_gpu_backend(g), "nvml"));
  struct erg_gpu_interval iv;
  char why[256];
  CHECK(sample_at(g, 1.0, &iv, why, sizeof why) == 0); /* baseline */
  CHECK(sample_at(g, 2.0, &iv, why, sizeof why) == 1);
  CHECK(iv.ndevices == 2);
  /* GPU 0: the counter integrates the step exactly, 0.2 s x 100 W +
   * 0.8 s x 300 W = 260 J; the two readings' trapezoid says 200 J. */
  NEAR(iv.devices[0].seconds, 1.0, 1e-9);
  CHECK(iv.devices[0].has_energy && iv.devices[0].energy_from_counter);
  NEAR(iv.devices[0].energy_counter_joules, 260, 0.002);
  NEAR(iv.devices[0].energy_power_joules, 200, 1e-9);
  NEAR(iv.devices[0].energy_joules, 260, 0.002);
  NEAR(iv.devices[0].power_watts, 260, 0.002);
  NEAR(iv.devices[0].power_now_watts, 300, 1e-9);
  CHECK(iv.devices[0].has_util && iv.devices[0].util_percent == 90 &&
        iv.devices[0].mem_util_percent == 20);
  /* GPU 1: no counter, so the trapezoid: (50 + 150) / 2 x 1 s. */
  CHECK(iv.devices[1].has_energy && !iv.devices[1].energy_from_counter);
  CHECK(iv.devices[1].energy_counter_joules < 0);
  NEAR(iv.devices[1].energy_joules, 100, 1e-9);
  NEAR(iv.devices[1].power_watts, 100, 1e-9);
  /* Periods ending in (1.0, 2.0]: at 1.1 the first state (1001: 30, 1002:
   * 10), at 1.2 ... 2.0 the second (60, 40): sums 570 and 370 over 10
   * periods of 100 ms. */
  CHECK(iv.nprocs == 3);
  if (iv.nprocs == 3) {
    const struct erg_gpu_proc *p = iv.procs;
    CHECK(p[0].device == 0 && p[0].pid == 1001 && p[1].device == 0 && p[1].pid == 1002);
    NEAR(p[0].sm_share, 570.0 / 940, 1e-9);
    NEAR(p[1].sm_share, 370.0 / 940, 1e-9);
    NEAR(p[0].sm_percent, 57, 1e-9);
    NEAR(p[1].sm_percent, 37, 1e-9);
    NEAR(p[0].mem_percent, (10 + 9 * 20) / 10.0, 1e-9);
    CHECK(p[0].used_memory_bytes == 512ull << 20 && p[1].used_memory_bytes == 256ull << 20);
    /* GPU 1's only process: idle until 1.5 s (no samples: NVML reports
     * non-zero utilization only), then 40 % in 6 periods of 10. */
    CHECK(p[2].device == 1 && p[2].pid == 2001);
    NEAR(p[2].sm_share, 1.0, 1e-9);
    NEAR(p[2].sm_percent, 24, 1e-9);
    CHECK(p[2].used_memory_bytes == 128ull << 20);
  }
  /* Constant power: counter and trapezoid agree, 300 J over 1 s. */
  CHECK(sample_at(g, 3.0, &iv, why, sizeof why) == 1);
  NEAR(iv.devices[0].energy_joules, 300, 0.002);
  NEAR(iv.devices[0].energy_power_joules, 300, 1e-9);
  NEAR(iv.devices[1].energy_joules, 150, 1e-9);
  if (iv.nprocs == 3) {
    NEAR(iv.procs[0].sm_share, 0.6, 1e-9);
    NEAR(iv.procs[0].sm_percent, 60, 1e-9);
  }
  /* Half a second: energy scales, so does the mean. */
  CHECK(sample_at(g, 3.5, &iv, why, sizeof why) == 1);
  NEAR(iv.devices[0].energy_joules, 150, 0.002);
  NEAR(iv.devices[0].power_watts, 300, 0.004);
  erg_gpu_close(g);
}

/* MIG: no per-process utilization, the processes still listed with their
 * memory and no share; no power reading at all: no energy. */
static void test_mig_and_no_power(void) {
  write_script("gpu 0 mig=1 energy=0 power=0\n"
               "at 0 gpu=0 power_w=80 util=30 proc=3001:50:0:64\n");
  set_time(0);
  struct erg_gpu *g = open_standin();
  if (!g)
    return;
  size_t n;
  const struct erg_gpu_device *d = erg_gpu_devices(g, &n);
  CHECK(n == 1 && d[0].mig && !d[0].proc_util && !d[0].energy_counter && !d[0].power_reading);
  struct erg_gpu_interval iv;
  char why[256];
  CHECK(sample_at(g, 1.0, &iv, why, sizeof why) == 0);
  CHECK(sample_at(g, 2.0, &iv, why, sizeof why) == 1);
  CHECK(!iv.devices[0].has_energy && !iv.devices[0].has_proc_util);
  CHECK(iv.nprocs == 1 && iv.procs[0].pid == 3001 && iv.procs[0].sm_share == 0 &&
        iv.procs[0].used_memory_bytes == 64ull << 20);
  erg_gpu_close(g);
}

/* A GPU lost mid-run: the sampler says so and which call; before it, the
 * readings are whole. */
static void test_lost(void) {
  write_script("gpu 0\nat 0 gpu=0 power_w=100 proc=1:10\nfail_at 2.5\n");
  set_time(0);
  struct erg_gpu *g = open_standin();
  if (!g)
    return;
  struct erg_gpu_interval iv;
  char why[256] = "";
  CHECK(sample_at(g, 1.0, &iv, why, sizeof why) == 0);
  CHECK(sample_at(g, 2.0, &iv, why, sizeof why) == 1);
  NEAR(iv.devices[0].energy_joules, 100, 0.002);
  CHECK(sample_at(g, 3.0, &iv, why, sizeof why) == -1);
  CHECK(strstr(why, "GPU 0 (GPU-standin-0)") && strstr(why, "GPU is lost"));
  erg_gpu_close(g);
  /* The same by call count: open takes 9 calls for one GPU, the
   * baseline's 4th call after them fails. */
  write_script("gpu 0\nat 0 gpu=0 power_w=100\nfail_after_calls 12\n");
  g = open_standin();
  if (!g)
    return;
  CHECK(sample_at(g, 1.0, &iv, why, sizeof why) == -1);
  CHECK(strstr(why, "nvmlDeviceGetProcessUtilization: GPU is lost"));
  erg_gpu_close(g);
}

/* No library: absent, an error the caller may keep quiet; a library
 * whose driver is not loaded: not absent, and why says so. */
static void test_absent(void) {
  struct erg_gpu *g = NULL;
  bool absent = false;
  char why[256];
  CHECK(erg_gpu_open(&g, "/nonexistent/libnvidia-ml.so.1", &absent, why, sizeof why) == -1);
  CHECK(absent && g == NULL);
  unsetenv("ERG_NVML_STANDIN_SCRIPT");
  CHECK(erg_gpu_open(&g, STANDIN_PATH, &absent, why, sizeof why) == -1);
  CHECK(!absent && strstr(why, "nvmlInit_v2: Driver Not Loaded"));
  write_script("# no gpu lines\n");
  CHECK(erg_gpu_open(&g, STANDIN_PATH, &absent, why, sizeof why) == -1);
  CHECK(absent);
}

int main(void) {
  void *h = dlopen(STANDIN_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!h || !(*(void **)&set_time = dlsym(h, "nvml_standin_set_time"))) {
    fprintf(stderr, "cannot load the stand-in %s: %s\n", STANDIN_PATH, dlerror());
    return 1;
  }
  snprintf(script, sizeof script, "%s/gpu_script_%d.txt", TEST_DIR, (int)getpid());
  test_energy_and_shares();
  test_mig_and_no_power();
  test_lost();
  test_absent();
  unlink(script);
  dlclose(h);
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("gpu_nvml: all checks passed\n");
  return failures ? 1 : 0;
}

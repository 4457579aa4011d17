/* The ROCm SMI GPU sampler (node-agent/gpu_rocm.c) against the ROCm SMI
 * stand-in (rocm_standin.c), and gpu.c's choice of stacks: no GPU exists
 * here, so the stand-ins serve scripted GPUs on a clock this test sets.
 * Checks each GPU's identity and energy over an interval (the energy
 * accumulator preferred to integrated power, power where a GPU has no
 * accumulator), per-process shares (CU occupancy, else VRAM, else equal;
 * none on an idle GPU), the fallbacks of a ROCm SMI 5.2 library (average
 * power, per-pid figures), a GPU lost mid-run, no library, and NVIDIA's
 * and AMD's GPUs on one node. */
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

static void (*set_time)(double), (*set_time_old)(double), (*set_time_nvml)(double);
static char script[256], nvml_script[256];

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fputs(text, f);
  fclose(f);
}

static void write_script(const char *text) {
  write_file(script, text);
  setenv("ERG_ROCM_STANDIN_SCRIPT", script, 1);
}

static struct erg_gpu *open_rocm(const char *lib) {
  struct erg_gpu *g = NULL;
  bool absent;
  char why[256];
  struct erg_gpu_options o = {.rocm = true, .rocm_library = lib};
  if (erg_gpu_open_with(&g, &o, &absent, why, sizeof why) != 0) {
    fprintf(stderr, "open: %s\n", why);
    failures++;
    return NULL;
  }
  CHECK(why[0] == '\0');
  return g;
}

static int sample_at(struct erg_gpu *g, double t, struct erg_gpu_interval *iv, char *why,
                     size_t whylen) {
  set_time(t);
  set_time_old(t);
  set_time_nvml(t);
  return erg_gpu_sample(g, (uint64_t)(t * 1e9 + 0.5), iv, why, whylen);
}

/* The process of pid on device position dev, or NULL. */
static const struct erg_gpu_proc *find(const struct erg_gpu_interval *iv, unsigned dev,
                                       uint32_t pid) {
  for (size_t i = 0; i < iv->nprocs; i++)
    if (iv->procs[i].device == dev && iv->procs[i].pid == pid)
      return &iv->procs[i];
  return NULL;
}

/* GPU 0 has the energy accumulator and reports CU occupancy, its power
 * steps from 100 W to 300 W at 1.2 s; GPU 1 has neither, and steps from
 * 50 W to 150 W at 1.5 s. */
static void test_energy_and_shares(void) {
  write_script("gpu 0 name=Instinct-A unique_id=1a2b3c4d5e6f7081\n"
               "gpu 1 name=Instinct-B energy=0 procutil=0\n"
               "at 0 gpu=0 power_w=100 util=50 memutil=5 proc=1001:30:0:512 proc=1002:10:0:256\n"
               "at 1.2 gpu=0 power_w=300 util=90 memutil=20 proc=1001:60:0:512 proc=1002:20:0:256\n"
               "at 0 gpu=1 power_w=50 util=0 proc=2001:0:0:128 proc=2002:0:0:384\n"
               "at 1.5 gpu=1 power_w=150 util=40 proc=2001:40:0:128 proc=2002:0:0:384\n"
               /* 4 s: GPU 1 idle (busy 0 %, no CU occupancy reported). */
               "at 4 gpu=1 power_w=50 util=0 proc=2001:0:0:128 proc=2002:0:0:384\n"
               /* 5 s: GPU 0 busy, no CU occupied: VRAM; GPU 1 busy, no VRAM: equal. */
               "at 5 gpu=0 power_w=200 util=80 proc=1001:0:0:512 proc=1002:0:0:1536\n"
               "at 5 gpu=1 power_w=80 util=30 proc=2001:0:0:0 proc=2002:0:0:0\n");
  set_time(0);
  struct erg_gpu *g = open_rocm(STANDIN_PATH);
  if (!g)
    return;
  size_t n;
  const struct erg_gpu_device *d = erg_gpu_devices(g, &n);
  CHECK(n == 2);
  CHECK(!strcmp(erg_gpu_backend(g), "rocm"));
  CHECK(d[0].index == 0 && !strcmp(d[0].uuid, "AMD-1a2b3c4d5e6f7081") &&
        !strcmp(d[0].name, "Instinct-A"));
  /* No unique id: the PCI address. */
  CHECK(d[1].index == 1 && !strcmp(d[1].uuid, "AMD-pci-0000:11:00.0"));
  CHECK(d[0].energy_counter && d[0].power_reading && d[0].proc_util && !d[0].mig);
  CHECK(!d[1].energy_counter && d[1].power_reading && d[1].proc_util);
  struct erg_gpu_interval iv;
  char why[256];
  CHECK(sample_at(g, 1.0, &iv, why, sizeof why) == 0); /* baseline */
  CHECK(sample_at(g, 2.0, &iv, why, sizeof why) == 1);
  CHECK(iv.ndevices == 2);
  /* GPU 0: the accumulator integrates the step exactly, 0.2 s x 100 W +
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
  /* GPU 1: no accumulator, so the trapezoid: (50 + 150) / 2 x 1 s. */
  CHECK(iv.devices[1].has_energy && !iv.devices[1].energy_from_counter);
  CHECK(iv.devices[1].energy_counter_joules < 0);
  NEAR(iv.devices[1].energy_joules, 100, 1e-9);
  NEAR(iv.devices[1].power_watts, 100, 1e-9);
  CHECK(iv.devices[0].has_proc_util && iv.devices[1].has_proc_util);
  /* GPU 0 by CU occupancy at the reading (60 % and 20 %); GPU 1 reports
   * none and is busy: by VRAM (128 and 384 MiB). */
  CHECK(iv.nprocs == 4);
  const struct erg_gpu_proc *a = find(&iv, 0, 1001), *b = find(&iv, 0, 1002);
  const struct erg_gpu_proc *c = find(&iv, 1, 2001), *e = find(&iv, 1, 2002);
  CHECK(a && b && c && e && iv.procs[0].pid == 1001 && iv.procs[3].pid == 2002);
  if (a && b && c && e) {
    NEAR(a->sm_share, 0.75, 1e-9);
    NEAR(b->sm_share, 0.25, 1e-9);
    NEAR(a->sm_percent, 60, 1e-9);
    NEAR(b->sm_percent, 20, 1e-9);
    CHECK(a->mem_percent == 0);
    CHECK(a->used_memory_bytes == 512ull << 20 && b->used_memory_bytes == 256ull << 20);
    NEAR(c->sm_share, 0.25, 1e-9);
    NEAR(e->sm_share, 0.75, 1e-9);
    CHECK(c->sm_percent == 0 && e->used_memory_bytes == 384ull << 20);
  }
  /* Constant power: accumulator and trapezoid agree, 300 J over 1 s. */
  CHECK(sample_at(g, 3.0, &iv, why, sizeof why) == 1);
  NEAR(iv.devices[0].energy_joules, 300, 0.002);
  NEAR(iv.devices[0].energy_power_joules, 300, 1e-9);
  NEAR(iv.devices[1].energy_joules, 150, 1e-9);
  /* GPU 1 idle: its processes are listed with their memory, no share. */
  CHECK(sample_at(g, 4.5, &iv, why, sizeof why) == 1);
  NEAR(iv.devices[0].energy_joules, 450, 0.003);
  c = find(&iv, 1, 2001);
  e = find(&iv, 1, 2002);
  CHECK(c && e && c->sm_share == 0 && e->sm_share == 0 && e->used_memory_bytes == 384ull << 20);
  CHECK(sample_at(g, 5.5, &iv, why, sizeof why) == 1);
  a = find(&iv, 0, 1001);
  b = find(&iv, 0, 1002);
  c = find(&iv, 1, 2001);
  e = find(&iv, 1, 2002);
  CHECK(a && b && c && e);
  if (a && b && c && e) {
    NEAR(a->sm_share, 0.25, 1e-9); /* VRAM: 512 of 2048 MiB */
    NEAR(b->sm_share, 0.75, 1e-9);
    NEAR(c->sm_share, 0.5, 1e-9); /* equal */
    NEAR(e->sm_share, 0.5, 1e-9);
  }
  /* 0.5 s at 300 W then 0.5 s at 200 W. */
  NEAR(iv.devices[0].energy_joules, 250, 0.003);
  erg_gpu_close(g);
}

/* A ROCm SMI 5.2 library (Debian 12's): average power, and the processes'
 * figures per pid, summed over their GPUs. */
static void test_old_library(void) {
  void *h = dlopen(STANDIN_OLD_PATH, RTLD_NOW | RTLD_LOCAL);
  CHECK(h && !dlsym(h, "rsmi_dev_power_get") &&
        !dlsym(h, "rsmi_compute_process_info_by_device_get") && dlsym(h, "rsmi_dev_power_ave_get"));
  write_script("gpu 0 energy=0\n"
               "gpu 1 energy=0\n"
               "at 0 gpu=0 power_w=200 util=70 proc=3001:40:0:1024 proc=3002:40:0:256\n"
               "at 0 gpu=1 power_w=100 util=70 proc=3001:20:0:1024\n");
  set_time_old(0);
  struct erg_gpu *g = open_rocm(STANDIN_OLD_PATH);
  if (g) {
    size_t n;
    const struct erg_gpu_device *d = erg_gpu_devices(g, &n);
    CHECK(n == 2 && d[0].power_reading && !d[0].energy_counter && d[0].proc_util);
    CHECK(!strcmp(d[0].uuid, "AMD-pci-0000:10:00.0"));
    struct erg_gpu_interval iv;
    char why[256];
    CHECK(sample_at(g, 1.0, &iv, why, sizeof why) == 0);
    CHECK(sample_at(g, 2.0, &iv, why, sizeof why) == 1);
    NEAR(iv.devices[0].energy_joules, 200, 1e-9);
    NEAR(iv.devices[1].energy_joules, 100, 1e-9);
    /* 3001 uses both GPUs: per pid, 2 GiB over both (1 GiB each) and the
     * mean of its CU occupancy, 30 %, on each. */
    const struct erg_gpu_proc *a = find(&iv, 0, 3001), *b = find(&iv, 0, 3002),
                              *c = find(&iv, 1, 3001);
    CHECK(iv.nprocs == 3 && a && b && c);
    if (a && b && c) {
      NEAR(a->sm_share, 30.0 / 70, 1e-9);
      NEAR(b->sm_share, 40.0 / 70, 1e-9);
      NEAR(c->sm_share, 1, 1e-9);
      CHECK(a->used_memory_bytes == 1ull << 30 && c->used_memory_bytes == 1ull << 30);
      NEAR(c->sm_percent, 30, 1e-9);
    }
    erg_gpu_close(g);
  }
  if (h)
    dlclose(h);
}

/* A GPU lost mid-run: the sampler says so and which call; before it, the
 * readings are whole. */
static void test_lost(void) {
  write_script("gpu 0 unique_id=abc\nat 0 gpu=0 power_w=100 util=10 proc=1:10\nfail_at 2.5\n");
  set_time(0);
  struct erg_gpu *g = open_rocm(STANDIN_PATH);
  if (!g)
    return;
  struct erg_gpu_interval iv;
  char why[256] = "";
  CHECK(sample_at(g, 1.0, &iv, why, sizeof why) == 0);
  CHECK(sample_at(g, 2.0, &iv, why, sizeof why) == 1);
  NEAR(iv.devices[0].energy_joules, 100, 0.002);
  CHECK(iv.nprocs == 1 && iv.procs[0].sm_share == 1);
  CHECK(sample_at(g, 3.0, &iv, why, sizeof why) == -1);
  CHECK(strstr(why, "GPU 0 (AMD-0000000000000abc): rsmi_dev_energy_count_get: "
                    "RSMI_STATUS_UNEXPECTED_SIZE"));
  erg_gpu_close(g);
  /* The same by call count: open takes 7 calls for one GPU with a unique
   * id, a sample 4 per GPU and then the process list, the 16th, fails. */
  write_script("gpu 0 unique_id=abc\nat 0 gpu=0 power_w=100\nfail_after_calls 15\n");
  g = open_rocm(STANDIN_PATH);
  if (!g)
    return;
  CHECK(sample_at(g, 1.0, &iv, why, sizeof why) == 0);
  CHECK(sample_at(g, 2.0, &iv, why, sizeof why) == -1);
  CHECK(strstr(why, "rsmi_compute_process_info_get: RSMI_STATUS_UNEXPECTED_SIZE"));
  erg_gpu_close(g);
}

/* No library: absent, an error the caller may keep quiet; a library
 * whose driver is not there: not absent, and why says so. */
static void test_absent(void) {
  struct erg_gpu *g = NULL;
  bool absent = false;
  char why[256];
  struct erg_gpu_options o = {.rocm = true, .rocm_library = "/nonexistent/librocm_smi64.so"};
  CHECK(erg_gpu_open_with(&g, &o, &absent, why, sizeof why) == -1);
  CHECK(absent && g == NULL && strstr(why, "/nonexistent/librocm_smi64.so"));
  unsetenv("ERG_ROCM_STANDIN_SCRIPT");
  o.rocm_library = STANDIN_PATH;
  CHECK(erg_gpu_open_with(&g, &o, &absent, why, sizeof why) == -1);
  CHECK(!absent && strstr(why, "rsmi_init: RSMI_STATUS_INIT_ERROR"));
  write_script("# no gpu lines\n");
  CHECK(erg_gpu_open_with(&g, &o, &absent, why, sizeof why) == -1);
  CHECK(absent && strstr(why, "ROCm SMI sees no GPU"));
  /* Some other library under that name: unusable, not absent. */
  o.rocm_library = NVML_STANDIN_PATH;
  CHECK(erg_gpu_open_with(&g, &o, &absent, why, sizeof why) == -1);
  CHECK(!absent && strstr(why, "lacks rsmi_init"));
}

/* NVIDIA's and AMD's GPUs on one node: both stacks open, the AMD GPUs
 * after the NVIDIA one; a stack that fails at open is said beside the
 * other's GPUs; one that fails mid-run stops both. */
static void test_both(void) {
  write_file(nvml_script, "gpu 0 uuid=GPU-nv name=NV\n"
                          "at 0 gpu=0 power_w=200 proc=4001:50:0:64\n");
  setenv("ERG_NVML_STANDIN_SCRIPT", nvml_script, 1);
  write_script("gpu 0 name=AMD-A\ngpu 1 name=AMD-B\n"
               "at 0 gpu=0 power_w=100 util=10 proc=5001:10:0:32\n"
               "at 0 gpu=1 power_w=50 util=10 proc=5002:10:0:32\n"
               "fail_at 3.5\n");
  struct erg_gpu_options o = {
      .nvml = true, .rocm = true, .nvml_library = NVML_STANDIN_PATH, .rocm_library = STANDIN_PATH};
  struct erg_gpu *g = NULL;
  bool absent;
  char why[256];
  set_time(0);
  set_time_nvml(0);
  CHECK(erg_gpu_open_with(&g, &o, &absent, why, sizeof why) == 0);
  if (!g)
    return;
  CHECK(why[0] == '\0' && !strcmp(erg_gpu_backend(g), "nvml+rocm"));
  size_t n;
  const struct erg_gpu_device *d = erg_gpu_devices(g, &n);
  CHECK(n == 3 && d[0].index == 0 && !strcmp(d[0].uuid, "GPU-nv") && d[1].index == 1 &&
        !strcmp(d[1].name, "AMD-A") && d[2].index == 2 && !strcmp(d[2].name, "AMD-B"));
  struct erg_gpu_interval iv;
  CHECK(sample_at(g, 1.0, &iv, why, sizeof why) == 0);
  CHECK(sample_at(g, 2.0, &iv, why, sizeof why) == 1);
  CHECK(iv.ndevices == 3 && iv.devices[2].index == 2);
  NEAR(iv.devices[0].energy_joules, 200, 0.002);
  NEAR(iv.devices[1].energy_joules, 100, 0.002);
  NEAR(iv.devices[2].energy_joules, 50, 0.002);
  CHECK(iv.nprocs == 3);
  if (iv.nprocs == 3)
    CHECK(iv.procs[0].pid == 4001 && iv.procs[0].device == 0 && iv.procs[1].pid == 5001 &&
          iv.procs[1].device == 1 && iv.procs[2].pid == 5002 && iv.procs[2].device == 2 &&
          iv.procs[2].sm_share == 1);
  CHECK(sample_at(g, 4.0, &iv, why, sizeof why) == -1);
  CHECK(strstr(why, "RSMI_STATUS_UNEXPECTED_SIZE"));
  erg_gpu_close(g);
  /* NVML's library is there without its driver: ROCm SMI's GPUs alone,
   * and why says what NVML said. */
  unsetenv("ERG_NVML_STANDIN_SCRIPT");
  set_time(0);
  set_time_nvml(0);
  g = NULL;
  CHECK(erg_gpu_open_with(&g, &o, &absent, why, sizeof why) == 0);
  if (g) {
    CHECK(!strcmp(erg_gpu_backend(g), "rocm") && strstr(why, "nvmlInit_v2: Driver Not Loaded"));
    erg_gpu_devices(g, &n);
    CHECK(n == 2);
    erg_gpu_close(g);
  }
  /* Neither there: absent. */
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  o.rocm_library = "/nonexistent/librocm_smi64.so";
  CHECK(erg_gpu_open_with(&g, &o, &absent, why, sizeof why) == -1 && absent);
}

static void *sym(void *h, const char *name) {
  void *p = h ? dlsym(h, name) : NULL;
  if (!p) {
    fprintf(stderr, "cannot load a stand-in: %s\n", dlerror());
    exit(1);
  }
  return p;
}

int main(void) {
  void *h = dlopen(STANDIN_PATH, RTLD_NOW | RTLD_LOCAL);
  void *ho = dlopen(STANDIN_OLD_PATH, RTLD_NOW | RTLD_LOCAL);
  void *hn = dlopen(NVML_STANDIN_PATH, RTLD_NOW | RTLD_LOCAL);
  void *p = sym(h, "rocm_standin_set_time");
  memcpy(&set_time, &p, sizeof p);
  p = sym(ho, "rocm_standin_set_time");
  memcpy(&set_time_old, &p, sizeof p);
  p = sym(hn, "nvml_standin_set_time");
  memcpy(&set_time_nvml, &p, sizeof p);
  snprintf(script, sizeof script, "%s/rocm_script_%d.txt", TEST_DIR, (int)getpid());
  snprintf(nvml_script, sizeof nvml_script, "%s/rocm_nvml_script_%d.txt", TEST_DIR, (int)getpid());
  test_energy_and_shares();
  test_old_library();
  test_lost();
  test_absent();
  test_both();
  unlink(script);
  unlink(nvml_script);
  dlclose(h);
  dlclose(ho);
  dlclose(hn);
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("gpu_rocm: all checks passed\n");
  return failures ? 1 : 0;
}

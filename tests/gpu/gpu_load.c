// SPDX-License-Identifier: GPL-3.0-or-later
/* gpu_load: a GPU load for tests/gpu/device_check.sh where the host has no
 * PyTorch. Uses the CUDA driver API loaded with dlopen("libcuda.so.1")
 * (libc and libdl only, no CUDA toolkit): the kernel is PTX text the
 * driver compiles for whatever GPU is there.
 *
 *   gpu_load load SECONDS READY-FILE   kernels that keep every SM busy
 *   gpu_load idle SECONDS READY-FILE   a context and 1 MiB, no kernels
 *
 * READY-FILE is created once the context (and, for load, the first kernel)
 * is up. Exit 0 when SECONDS passed, 1 on a CUDA error (printed). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult; /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream;
typedef unsigned long long CUdeviceptr;

/* Each thread runs two dependent FMA chains for `iters` rounds and stores
 * the sum, so nothing is optimised away. PTX 6.0 / sm_50: the driver JITs
 * it for newer GPUs. */
static const char ptx[] = ".version 6.0\n"
                          ".target sm_50\n"
                          ".address_size 64\n"
                          ".visible .entry spin(.param .u64 out, .param .u32 iters)\n"
                          "{\n"
                          "  .reg .pred p;\n"
                          "  .reg .f32 f<4>;\n"
                          "  .reg .b32 r<6>;\n"
                          "  .reg .b64 rd<4>;\n"
                          "  ld.param.u64 rd1, [out];\n"
                          "  ld.param.u32 r1, [iters];\n"
                          "  mov.u32 r2, %tid.x;\n"
                          "  mov.u32 r3, %ctaid.x;\n"
                          "  mov.u32 r4, %ntid.x;\n"
                          "  mad.lo.u32 r5, r3, r4, r2;\n"
                          "  cvt.rn.f32.u32 f1, r5;\n"
                          "  mov.f32 f2, 0f3F800000;\n"
                          "  mov.u32 r2, 0;\n"
                          "LOOP:\n"
                          "  fma.rn.f32 f1, f1, 0f3F7FFFFF, f2;\n"
                          "  fma.rn.f32 f2, f2, 0f3F7FFFFF, f1;\n"
                          "  add.u32 r2, r2, 1;\n"
                          "  setp.lt.u32 p, r2, r1;\n"
                          "  @p bra LOOP;\n"
                          "  add.f32 f3, f1, f2;\n"
                          "  cvta.to.global.u64 rd2, rd1;\n"
                          "  mul.wide.u32 rd3, r5, 4;\n"
                          "  add.u64 rd2, rd2, rd3;\n"
                          "  st.global.f32 [rd2], f3;\n"
                          "  ret;\n"
                          "}\n";

static struct {
  CUresult (*init)(unsigned);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*ctx_create)(CUcontext *, unsigned, CUdevice);
  CUresult (*mem_alloc)(CUdeviceptr *, size_t);
  CUresult (*module_load)(CUmodule *, const void *);
  CUresult (*function_get)(CUfunction *, CUmodule, const char *);
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, CUstream, void **, void **);
  CUresult (*sync)(void);
  CUresult (*error_string)(CUresult, const char **);
} cu;

static int check(CUresult r, const char *what) {
  if (r == 0)
    return 0;
  const char *s = NULL;
  if (cu.error_string)
    cu.error_string(r, &s);
  fprintf(stderr, "gpu_load: %s: CUDA error %d (%s)\n", what, r, s ? s : "?");
  return -1;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void touch(const char *path) {
  FILE *f = fopen(path, "w");
  if (f)
    fclose(f);
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[1], "load") != 0 && strcmp(argv[1], "idle") != 0)) {
    fprintf(stderr, "usage: gpu_load load|idle SECONDS READY-FILE\n");
    return 2;
  }
  int load = strcmp(argv[1], "load") == 0;
  double seconds = atof(argv[2]);
  void *h = dlopen("libcuda.so.1", RTLD_NOW);
  if (!h) {
    fprintf(stderr, "gpu_load: %s\n", dlerror());
    return 1;
  }
#define SYM(field, name)                                                                           \
  if (!(*(void **)&cu.field = dlsym(h, name))) {                                                   \
    fprintf(stderr, "gpu_load: libcuda.so.1 lacks %s\n", name);                                    \
    return 1;                                                                                      \
  }
  SYM(init, "cuInit");
  SYM(device_get, "cuDeviceGet");
  SYM(ctx_create, "cuCtxCreate_v2");
  SYM(mem_alloc, "cuMemAlloc_v2");
  SYM(module_load, "cuModuleLoadData");
  SYM(function_get, "cuModuleGetFunction");
  SYM(launch, "cuLaunchKernel");
  SYM(sync, "cuCtxSynchronize");
  *(void **)&cu.error_string = dlsym(h, "cuGetErrorString");

  CUdevice dev;
  CUcontext ctx;
  CUdeviceptr out;
  enum { BLOCKS = 4096, THREADS = 256 };
  if (check(cu.init(0), "cuInit") || check(cu.device_get(&dev, 0), "cuDeviceGet") ||
      check(cu.ctx_create(&ctx, 0, dev), "cuCtxCreate") ||
      check(cu.mem_alloc(&out, (size_t)BLOCKS * THREADS * 4), "cuMemAlloc"))
    return 1;
  double end = now_s() + seconds;
  if (!load) {
    touch(argv[3]);
    while (now_s() < end)
      usleep(100000);
    return 0;
  }
  CUmodule mod;
  CUfunction fn;
  if (check(cu.module_load(&mod, ptx), "cuModuleLoadData (PTX JIT)") ||
      check(cu.function_get(&fn, mod, "spin"), "cuModuleGetFunction"))
    return 1;
  unsigned iters = 1u << 16; /* ~ms per kernel on a large GPU */
  void *params[] = {&out, &iters};
  int ready = 0;
  while (now_s() < end) {
    for (int i = 0; i < 8; i++)
      if (check(cu.launch(fn, BLOCKS, 1, 1, THREADS, 1, 1, 0, NULL, params, NULL),
                "cuLaunchKernel"))
        return 1;
    if (check(cu.sync(), "cuCtxSynchronize"))
      return 1;
    if (!ready) {
      touch(argv[3]);
      ready = 1;
    }
  }
  return 0;
}

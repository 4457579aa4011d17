// SPDX-License-Identifier: GPL-3.0-or-later
/* standin_test.h: what test_gpu_nvml.c and test_gpu_rocm.c share around
 * the GPU stand-ins (nvml_standin.c, rocm_standin.c). Include it after
 * "../erg_test.h"; TEST_DIR (a compile definition) is the folder for the
 * scripts, the test's build folder.
 *
 *  struct standin; standin_load(s, library, set_time, env, name)
 *      For the group setup: dlopens a stand-in library (the same instance
 *      the sampler will dlopen by that path) and its clock setter (the
 *      symbol set_time), names its script TEST_DIR/<name>_<pid>.txt, and
 *      registers it. A failure fails the setup (erg_assert).
 *  standin_unload(state)
 *      The group teardown: removes the scripts, dlcloses the stand-ins.
 *  standin_script(s, text)
 *      Writes the stand-in's script and names it in its variable env.
 *  standin_time(s, t)
 *      Sets one stand-in's clock to t seconds (before an open).
 *  standin_sample(g, t, iv, why, whylen)
 *      Sets every registered stand-in's clock to t and samples at t.
 *  standin_assert_sample(g, t, iv, why, want)
 *      standin_sample (why an array) that must return want; the message
 *      shows what it returned and why.
 *  standin_assert_near(a, b, tol)
 *      erg_assert that |a - b| <= tol, showing a and b.
 *  standin_assert_step_energy(iv)
 *      The energy checks of the scenario both tests script (GPU 0 with a
 *      counter stepping 100 -> 300 W at 1.2 s, GPU 1 without, 50 -> 150 W
 *      at 1.5 s), sampled over (1.0, 2.0] s.
 *  standin_gpu, standin_close(), standin_teardown (a cmocka teardown)
 *      A case opens its sampler into standin_gpu and ends with
 *      standin_close(); standin_teardown, as the case's teardown, closes
 *      one that a failed check left open.
 *  STANDIN_DEV_FMT/STANDIN_DEV(d), STANDIN_PROC_FMT/STANDIN_PROC(p)
 *      printf format and arguments of a device's capabilities and of a
 *      process's figures, for the checks' messages. */
#ifndef ERG_STANDIN_TEST_H
#define ERG_STANDIN_TEST_H

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

struct standin {
  const char *library; /* the stand-in's path */
  const char *env;     /* the variable naming its script */
  char script[256];    /* TEST_DIR/<name>_<pid>.txt */
  void *handle;
  void (*set_time)(double);
};

#define STANDIN_MAX 4
static struct standin *standins_[STANDIN_MAX];
static size_t nstandins_;
static struct erg_gpu *standin_gpu;

__attribute__((unused)) static void standin_load(struct standin *s, const char *library,
                                                 const char *set_time, const char *env,
                                                 const char *name) {
  s->library = library;
  s->env = env;
  snprintf(s->script, sizeof s->script, "%s/%s_%d.txt", TEST_DIR, name, (int)getpid());
  erg_assert(nstandins_ < STANDIN_MAX, "more than %d stand-ins", STANDIN_MAX);
  s->handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  erg_assert(s->handle != NULL, "cannot load the stand-in %s: %s", library, dlerror());
  void *p = dlsym(s->handle, set_time);
  erg_assert(p != NULL, "the stand-in %s lacks %s: %s", library, set_time, dlerror());
  memcpy(&s->set_time, &p, sizeof p);
  standins_[nstandins_++] = s;
}

__attribute__((unused)) static int standin_unload(void **state) {
  (void)state;
  for (size_t i = 0; i < nstandins_; i++) {
    unlink(standins_[i]->script);
    dlclose(standins_[i]->handle);
  }
  nstandins_ = 0;
  return 0;
}

__attribute__((unused)) static void standin_script(const struct standin *s, const char *text) {
  FILE *f = fopen(s->script, "w");
  erg_assert(f != NULL, "%s: %s", s->script, strerror(errno));
  int put = fputs(text, f);
  erg_assert(fclose(f) == 0 && put >= 0, "cannot write %s", s->script);
  setenv(s->env, s->script, 1);
}

__attribute__((unused)) static void standin_time(const struct standin *s, double t) {
  s->set_time(t);
}

__attribute__((unused)) static int
standin_sample(struct erg_gpu *g, double t, struct erg_gpu_interval *iv, char *why, size_t whylen) {
  for (size_t i = 0; i < nstandins_; i++)
    standins_[i]->set_time(t);
  return erg_gpu_sample(g, (uint64_t)(t * 1e9 + 0.5), iv, why, whylen);
}

#define standin_assert_sample(g, t, iv, why, want)                                                 \
  do {                                                                                             \
    int rc_ = standin_sample(g, t, iv, why, sizeof(why));                                          \
    erg_assert(rc_ == (want), "sample at %g s returned %d, want %d%s%s", (double)(t), rc_, (want), \
               rc_ < 0 ? ": " : "", rc_ < 0 ? (why) : "");                                         \
  } while (0)

#define standin_assert_near(a, b, tol)                                                             \
  erg_assert(fabs((double)(a) - (double)(b)) <= (tol), "got %.12g, want %.12g within %g",          \
             (double)(a), (double)(b), (double)(tol))

/* The energy scenario both stand-in tests script, sampled over (1.0, 2.0]
 * s: GPU 0 with an energy counter, its power stepping from 100 W to 300 W
 * at 1.2 s, util 90 % and memory 20 % at the reading; GPU 1 without a
 * counter, stepping from 50 W to 150 W at 1.5 s. */
__attribute__((unused)) static void standin_assert_step_energy(const struct erg_gpu_interval *ivp) {
  const struct erg_gpu_interval iv = *ivp;
  /* GPU 0: the counter (ROCm: accumulator) integrates the step exactly, 0.2 s x 100 W +
   * 0.8 s x 300 W = 260 J; the two readings' trapezoid says 200 J. */
  standin_assert_near(iv.devices[0].seconds, 1.0, 1e-9);
  erg_assert(iv.devices[0].has_energy && iv.devices[0].energy_from_counter,
             "has_energy %d energy_from_counter %d", iv.devices[0].has_energy,
             iv.devices[0].energy_from_counter);
  standin_assert_near(iv.devices[0].energy_counter_joules, 260, 0.002);
  standin_assert_near(iv.devices[0].energy_power_joules, 200, 1e-9);
  standin_assert_near(iv.devices[0].energy_joules, 260, 0.002);
  standin_assert_near(iv.devices[0].power_watts, 260, 0.002);
  standin_assert_near(iv.devices[0].power_now_watts, 300, 1e-9);
  erg_assert(iv.devices[0].has_util && iv.devices[0].util_percent == 90 &&
                 iv.devices[0].mem_util_percent == 20,
             "has_util %d util_percent %u mem_util_percent %u", iv.devices[0].has_util,
             iv.devices[0].util_percent, iv.devices[0].mem_util_percent);
  /* GPU 1: no counter, so the trapezoid: (50 + 150) / 2 x 1 s. */
  erg_assert(iv.devices[1].has_energy && !iv.devices[1].energy_from_counter,
             "has_energy %d energy_from_counter %d", iv.devices[1].has_energy,
             iv.devices[1].energy_from_counter);
  erg_assert(iv.devices[1].energy_counter_joules < 0, "energy_counter_joules %g",
             iv.devices[1].energy_counter_joules);
  standin_assert_near(iv.devices[1].energy_joules, 100, 1e-9);
  standin_assert_near(iv.devices[1].power_watts, 100, 1e-9);
}

__attribute__((unused)) static void standin_close(void) {
  if (standin_gpu)
    erg_gpu_close(standin_gpu);
  standin_gpu = NULL;
}

__attribute__((unused)) static int standin_teardown(void **state) {
  (void)state;
  standin_close();
  return 0;
}

#define STANDIN_DEV_FMT                                                                            \
  "index %u uuid \"%s\" name \"%s\" mig %d energy_counter %d power_reading %d proc_util %d"
#define STANDIN_DEV(d)                                                                             \
  (d).index, (d).uuid, (d).name, (d).mig, (d).energy_counter, (d).power_reading, (d).proc_util
#define STANDIN_PROC_FMT                                                                           \
  "pid %u device %u sm_share %.12g sm_percent %.12g mem_percent %.12g used_memory_bytes %llu"
#define STANDIN_PROC(p)                                                                            \
  (unsigned)(p).pid, (p).device, (p).sm_share, (p).sm_percent, (p).mem_percent,                    \
      (unsigned long long)(p).used_memory_bytes

#endif

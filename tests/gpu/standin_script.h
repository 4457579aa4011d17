// SPDX-License-Identifier: GPL-3.0-or-later
/* The script of the GPU stand-ins (nvml_standin.c, rocm_standin.c): both
 * serve scripted GPUs from one format, parsed here, on one clock. Linked
 * into each stand-in module, hidden: the two may load into one process.
 *
 * One directive a line, '#' starts a comment:
 *
 *   gpu IDX [uuid=S] [name=S] [energy=1|0] [power=1|0] [procutil=1|0]
 *           [mig=0|1|na] [energy_start_mj=E] [unique_id=HEX] [energy_res_uj=R]
 *   at T gpu=IDX power_w=W [util=U] [memutil=M] [proc=PID:SM[:MEM[:USED_MIB[:GI/CI]]]]...
 *   period_ms MS           driver sample period of process utilization (100)
 *   fail_after_calls N     every call after the Nth fails (GPU lost)
 *   fail_at T              every call from T seconds on fails (GPU lost)
 *   fail_when PATH         every call once the file PATH exists fails (GPU
 *                          lost when the test says: no race with the clock)
 *   init_error CODE        the library's init returns CODE
 *
 * "at" sets a GPU's state from T seconds on (since the library's init, or
 * the clock set by the stand-in's *_set_time): its power, utilization and
 * processes (SM and memory utilization in %, memory in MiB). The energy
 * counter is energy_start_mj plus the exact integral of that
 * piecewise-constant power. Options a stand-in has no use for are ignored
 * by it (mig, period_ms: NVML; unique_id, energy_res_uj: ROCm SMI). */
#ifndef ERG_STANDIN_SCRIPT_H
#define ERG_STANDIN_SCRIPT_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

#define SS_GPUS 8
#define SS_STATES 64
#define SS_PROCS 16
#define SS_TEXT 96

struct ss_proc {
  unsigned pid, sm, mem;
  unsigned long long used_bytes;
  unsigned gi, ci; /* MIG instance (NVML only), 0xFFFFFFFF: none */
};
struct ss_state {
  int64_t t_us;
  double power_w;
  unsigned util, memutil;
  int nproc;
  struct ss_proc proc[SS_PROCS];
};
struct ss_gpu {
  char uuid[SS_TEXT], name[SS_TEXT];
  int energy, power, procutil, mig; /* mig -1: not supported */
  double energy_start_mj;
  unsigned long long unique_id; /* 0: none */
  double energy_res_uj;
  int nstate;
  struct ss_state state[SS_STATES];
};
struct ss_script {
  struct ss_gpu gpus[SS_GPUS];
  int ngpu, init_error;
  int64_t period_us, fail_at_us;
  long fail_after;
  char fail_when[256]; /* "": none */
};

extern struct ss_script ss;

/* Reads the script named by the variable env into ss, who naming the
 * stand-in in messages (uuid and name defaults: "<uuid_prefix>N", name).
 * 0: read; 1: the variable is unset; -1: unreadable or bad (said on
 * stderr). */
int ss_load(const char *env, const char *who, const char *uuid_prefix, const char *name);
/* Starts the script's clock now, or at the unix time in the variable
 * epoch_env when set. Returns the real time now, µs since the epoch. */
unsigned long long ss_start(const char *epoch_env);
/* Seconds on the script's clock from now on (tests). */
void ss_set_time(double seconds);
int64_t ss_now(void);
/* The state of g at t (before its first "at": all zero). */
const struct ss_state *ss_state_at(const struct ss_gpu *g, int64_t t);
/* g's energy counter at t, mJ. */
double ss_energy_mj(const struct ss_gpu *g, int64_t t);
/* 1 when a call, the calls-th since init, fails as the script says. */
int ss_failing(long calls);

#pragma GCC visibility pop

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/* The GPU stand-ins' script and clock (standin_script.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "standin_script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ss_script ss;

static const char *ss_who = "standin";
static int manual;
static int64_t manual_us;
static struct timespec t0;

void ss_set_time(double seconds) {
  manual = 1;
  manual_us = (int64_t)(seconds * 1e6 + 0.5);
}

int64_t ss_now(void) {
  if (manual)
    return manual_us;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)(t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000;
}

static int ss_cmp_state(const void *a, const void *b) {
  const struct ss_state *x = a, *y = b;
  return (x->t_us > y->t_us) - (x->t_us < y->t_us);
}

static int ss_bad(const char *path, int line, const char *what) {
  fprintf(stderr, "%s: %s:%d: %s\n", ss_who, path, line, what);
  return -1;
}

static int ss_gpu_line(char *rest, const char *path, int line, const char *uuid_prefix,
                       const char *name) {
  char *tok = strtok(rest, " \t");
  int idx = tok ? atoi(tok) : -1;
  if (idx != ss.ngpu || idx >= SS_GPUS)
    return ss_bad(path, line, "gpu lines must number 0, 1, ... (at most 8)");
  struct ss_gpu *g = &ss.gpus[ss.ngpu++];
  memset(g, 0, sizeof *g);
  snprintf(g->uuid, sizeof g->uuid, "%s%d", uuid_prefix, idx);
  snprintf(g->name, sizeof g->name, "%s", name);
  g->energy = g->power = g->procutil = 1;
  g->energy_start_mj = 5e6;
  g->energy_res_uj = 15.3;
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
    else if (!strncmp(tok, "unique_id=", 10))
      g->unique_id = strtoull(tok + 10, NULL, 16);
    else if (!strncmp(tok, "energy_res_uj=", 14))
      g->energy_res_uj = atof(tok + 14);
    else
      return ss_bad(path, line, "unknown gpu option");
  }
  return 0;
}

static int ss_at_line(char *rest, const char *path, int line) {
  char *tok = strtok(rest, " \t");
  if (!tok)
    return ss_bad(path, line, "at: no time");
  struct ss_state st = {.t_us = (int64_t)(atof(tok) * 1e6 + 0.5)};
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
    else if (!strncmp(tok, "proc=", 5) && st.nproc < SS_PROCS) {
      struct ss_proc *p = &st.proc[st.nproc++];
      unsigned mib = 0;
      p->gi = p->ci = 0xFFFFFFFFu;
      int got =
          sscanf(tok + 5, "%u:%u:%u:%u:%u/%u", &p->pid, &p->sm, &p->mem, &mib, &p->gi, &p->ci);
      if (got < 2 || got == 5)
        return ss_bad(path, line, "proc=PID:SM[:MEM[:USED_MIB[:GI/CI]]]");
      p->used_bytes = (unsigned long long)mib << 20;
    } else
      return ss_bad(path, line, "unknown at option");
  }
  if (idx < 0 || idx >= ss.ngpu || ss.gpus[idx].nstate == SS_STATES)
    return ss_bad(path, line, "at: gpu=IDX of a gpu line above (at most 64 states each)");
  ss.gpus[idx].state[ss.gpus[idx].nstate++] = st;
  return 0;
}

int ss_load(const char *env, const char *who, const char *uuid_prefix, const char *name) {
  const char *path = getenv(env);
  ss_who = who;
  ss.ngpu = ss.init_error = 0;
  ss.period_us = 100000;
  ss.fail_at_us = ss.fail_after = -1;
  ss.fail_when[0] = '\0';
  if (!path)
    return 1;
  FILE *f = fopen(path, "r");
  if (!f)
    return ss_bad(path, 0, "cannot open the script");
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
      rc = ss_gpu_line(rest ? rest : (char *)"", path, line, uuid_prefix, name);
    else if (!strcmp(word, "at"))
      rc = ss_at_line(rest ? rest : (char *)"", path, line);
    else if (!strcmp(word, "period_ms") && rest)
      ss.period_us = (int64_t)(atof(rest) * 1000);
    else if (!strcmp(word, "fail_after_calls") && rest)
      ss.fail_after = atol(rest);
    else if (!strcmp(word, "fail_when") && rest)
      snprintf(ss.fail_when, sizeof ss.fail_when, "%s", rest);
    else if (!strcmp(word, "fail_at") && rest)
      ss.fail_at_us = (int64_t)(atof(rest) * 1e6 + 0.5);
    else if (!strcmp(word, "init_error") && rest)
      ss.init_error = atoi(rest);
    else
      rc = ss_bad(path, line, "unknown directive");
  }
  fclose(f);
  for (int i = 0; i < ss.ngpu; i++)
    qsort(ss.gpus[i].state, (size_t)ss.gpus[i].nstate, sizeof ss.gpus[i].state[0], ss_cmp_state);
  return rc;
}

unsigned long long ss_start(const char *epoch_env) {
  clock_gettime(CLOCK_MONOTONIC, &t0);
  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  /* The script's time 0 as unix seconds, so that another program
   * (erg-pdusim --gpu-start) follows the same clock. */
  const char *epoch = getenv(epoch_env);
  if (epoch && *epoch) {
    long long back = (long long)((rt.tv_sec + rt.tv_nsec / 1e9 - atof(epoch)) * 1e9);
    long long mono = (long long)t0.tv_sec * 1000000000LL + t0.tv_nsec - back;
    t0.tv_sec = (time_t)(mono / 1000000000LL);
    t0.tv_nsec = (long)(mono % 1000000000LL);
  }
  return (unsigned long long)rt.tv_sec * 1000000ULL + (unsigned long long)rt.tv_nsec / 1000;
}

const struct ss_state *ss_state_at(const struct ss_gpu *g, int64_t t) {
  static const struct ss_state zero;
  const struct ss_state *s = &zero;
  for (int i = 0; i < g->nstate && g->state[i].t_us <= t; i++)
    s = &g->state[i];
  return s;
}

double ss_energy_mj(const struct ss_gpu *g, int64_t t) {
  double e = g->energy_start_mj; /* W x µs = µJ; / 1000 = mJ */
  for (int i = 0; i < g->nstate && g->state[i].t_us < t; i++) {
    int64_t end = i + 1 < g->nstate && g->state[i + 1].t_us < t ? g->state[i + 1].t_us : t;
    e += g->state[i].power_w * (double)(end - g->state[i].t_us) / 1000.0;
  }
  return e;
}

int ss_failing(long calls) {
  return (ss.fail_after >= 0 && calls > ss.fail_after) ||
         (ss.fail_at_us >= 0 && ss_now() >= ss.fail_at_us) ||
         (ss.fail_when[0] && access(ss.fail_when, F_OK) == 0);
}

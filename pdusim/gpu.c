// SPDX-License-Identifier: GPL-3.0-or-later
/* --gpu-script NODE=FILE: the GPU board power of the NVML stand-in's
 * script (tests/gpu/nvml_standin.c, docs/gpu.md) added to a node's meter,
 * times --gpu-ac-factor (the power supply's AC per board watt), so a test
 * without a GPU has a truth with GPU power in it. Only the "at T gpu=N
 * power_w=W" lines count; T is seconds since --gpu-start (unix seconds;
 * default erg-pdusim's start), the stand-in's ERG_NVML_STANDIN_EPOCH. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

int sim_gpu_script_load(struct sim_gpu_script *g, const char *path, char *why, size_t whylen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(why, whylen, "cannot open %s", path);
    return -1;
  }
  char line[2048];
  g->n = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "#\n")] = '\0';
    double t, w = -1;
    int gpu = -1;
    if (sscanf(line, " at %lf", &t) != 1)
      continue;
    for (char *p = strtok(line, " \t"); p; p = strtok(NULL, " \t"))
      if (!strncmp(p, "gpu=", 4))
        gpu = atoi(p + 4);
      else if (!strncmp(p, "power_w=", 8))
        w = atof(p + 8);
    if (gpu < 0 || gpu >= SIM_GPUS || w < 0 || g->n >= SIM_GPU_STATES) {
      fclose(f);
      snprintf(why, whylen, "%s: want 'at T gpu=N power_w=W' (N < %d, %d lines at most)", path,
               SIM_GPUS, SIM_GPU_STATES);
      return -1;
    }
    g->t[g->n] = t;
    g->gpu[g->n] = gpu;
    g->watts[g->n++] = w;
  }
  fclose(f);
  return 0;
}

double sim_gpu_script_watts(const struct sim_gpu_script *g, double since_start_s) {
  double now[SIM_GPUS] = {0}, best_t[SIM_GPUS];
  for (int i = 0; i < SIM_GPUS; i++)
    best_t[i] = -1;
  for (int i = 0; i < g->n; i++)
    if (g->t[i] <= since_start_s && g->t[i] >= best_t[g->gpu[i]]) {
      best_t[g->gpu[i]] = g->t[i];
      now[g->gpu[i]] = g->watts[i];
    }
  double sum = 0;
  for (int i = 0; i < SIM_GPUS; i++)
    sum += now[i];
  return sum;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* GPUs of agent samples (docs/gpu.md, "In the collector"): each
 * process's GPU energy (Σ_gpu board energy x its SM share) goes into the
 * grid beside its CPU time, the node's board energy into the node's cell
 * (feature gpu_watts); per GPU the last power and the energy so far for
 * /metrics; per cell the GPU part of each job's attributed power and of
 * the node's, into their archives (gpu_job, gpu) and /metrics. Samples are
 * checked before (ingest_check.c: finite, shares ≤ 1, power and energy
 * below INGEST_GPU_MAX_WATTS). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "erg_fit.h"
#include "state.h"

/* The node's GPU of a device index, added when new (NULL past
 * NODE_GPUS_MAX or out of memory). */
static struct node_gpu *node_gpu_of(struct node_state *n, uint32_t index, const char *uuid) {
  if (!n->gpus && !(n->gpus = calloc(1, sizeof *n->gpus)))
    return NULL;
  struct node_gpus *g = n->gpus;
  for (size_t i = 0; i < g->n; i++)
    if (g->gpu[i].index == index) {
      if (uuid && uuid[0] && strcmp(g->gpu[i].uuid, uuid) != 0) /* another board in the slot */
        erg_name_sanitize(uuid, strlen(uuid), g->gpu[i].uuid);
      return &g->gpu[i];
    }
  if (g->n >= NODE_GPUS_MAX)
    return NULL;
  struct node_gpu *d = &g->gpu[g->n++];
  *d = (struct node_gpu){.index = index, .power_watts = NAN};
  erg_name_sanitize(uuid ? uuid : "", uuid ? strlen(uuid) : 0, d->uuid);
  return d;
}

/* The sample's GPU with device index i that measured its energy, NULL if
 * none. */
static const Erg__Gpu *sample_gpu(const Erg__Sample *s, uint32_t index) {
  for (size_t g = 0; g < s->n_gpus; g++)
    if (s->gpus[g]->index == index)
      return s->gpus[g]->has_energy ? s->gpus[g] : NULL;
  return NULL;
}

double node_gpu_sample(struct node_state *n, const Erg__Sample *s, struct erg_grid_proc *procs) {
  double board = 0, idle = 0;
  bool any = false;
  for (size_t g = 0; g < s->n_gpus; g++) {
    const Erg__Gpu *gp = s->gpus[g];
    if (!gp->has_energy)
      continue;
    board += gp->energy_joules;
    idle += gp->idle ? gp->energy_joules : 0;
    any = true;
    struct node_gpu *d = node_gpu_of(n, gp->index, gp->uuid);
    if (d) {
      d->power_watts = gp->power_watts;
      d->energy_joules += gp->energy_joules;
    }
  }
  if (!any)
    return 0;
  for (size_t i = 0; i < s->n_procs; i++) {
    const Erg__Proc *p = s->procs[i];
    for (size_t u = 0; u < p->n_gpu; u++) {
      const Erg__Gpu *gp = sample_gpu(s, p->gpu[u]->gpu_index);
      if (gp)
        procs[i].gpu_joules += gp->energy_joules * p->gpu[u]->sm_share;
    }
  }
  const Erg__Interval *iv = s->interval;
  erg_grid_add_gpu(&n->grid, iv->realtime_start_ns, iv->realtime_end_ns, board, idle);
  return board;
}

void node_gpu_free(struct node_state *n) {
  if (n->gpus)
    profile_known_free(&n->gpus->known);
  free(n->gpus);
  n->gpus = NULL;
}

/* ---- the GPU part of a cell's attributed power ---- */

/* A job's entry, found by name; when full, the one seen longest ago
 * makes room (its counter starts again if it comes back). */
static struct gpu_job *gpu_job_of(struct gpu_jobs *t, const char *job, size_t len) {
  if (len >= sizeof t->job[0].job)
    len = sizeof t->job[0].job - 1;
  size_t oldest = 0;
  for (size_t i = 0; i < t->n; i++) {
    if (!strncmp(t->job[i].job, job, len) && t->job[i].job[len] == '\0')
      return &t->job[i];
    if (t->job[i].last_t < t->job[oldest].last_t)
      oldest = i;
  }
  size_t i = t->n < GPU_JOBS_MAX ? t->n++ : oldest;
  memset(&t->job[i], 0, sizeof t->job[i]);
  memcpy(t->job[i].job, job, len);
  return &t->job[i];
}

/* Adds watts to the job's entry of e[0..*n) (names malloc'd). */
static int gpu_entry_add(struct profile_entry *e, size_t *n, const char *job, size_t len,
                         double watts) {
  for (size_t i = 0; i < *n; i++)
    if (!strncmp(e[i].key, job, len) && e[i].key[len] == '\0') {
      e[i].watts += watts;
      return 0;
    }
  char *k = strndup(job, len);
  if (!k)
    return -1;
  e[(*n)++] = (struct profile_entry){.key = k, .watts = watts};
  return 0;
}

void node_gpu_cell(struct collector *c, struct node_state *n, const struct erg_grid_result *r,
                   const struct erg_attr_share *sh, const struct erg_cell_power *pw) {
  const struct erg_grid_cell *cell = r->cell;
  struct erg_cell_model cm = node_model_cell(n->model);
  /* Without a GPU term the GPU part of a key's power is not known (the
   * CPU-share fallback does not separate it). */
  int kg = erg_cell_model_gpu(&cm);
  if (kg < 0 || (r->flags & ERG_CELL_NO_AGENT) || !n->gpus)
    return;
  int64_t t_end = r->t0 + r->step;
  /* No GPU readings in the cell (GPUs lost): no process is known to use
   * the boards, the known jobs get their 0 W and the node's GPU part is
   * unknown (the measurement's excess is [system]'s, attribute.c). */
  if (!(cell->seen & (1u << ERG_FEAT_GPU))) {
    node_write_gpu_keys(c, n, t_end, NULL, 0, NAN);
    return;
  }
  /* Each key's share of the dynamic power is its model activity scaled to
   * the measurement (erg_attribute_cell); its GPU part is the GPU term
   * scaled alike, so it never exceeds the key's share and the parts of
   * all rows add up to the GPU term's share of the cell. The idle GPUs'
   * term is idle power (attribute.c), not activity: the node's GPU part
   * holds it as it is. */
  double activity = pw->modelled_watts - cm.model->idle_watts - pw->gpu_idle_watts;
  double scale = isfinite(activity) && activity > 0 && isfinite(pw->dynamic_watts)
                     ? pw->dynamic_watts / activity
                     : 0;
  struct profile_entry *e = malloc((cell->nkeys + 1) * sizeof *e);
  size_t ne = 0;
  double node = pw->gpu_idle_watts, rates[ERG_NFEATURES];
  bool ok = e != NULL;
  for (size_t i = 0; ok && i <= cell->nkeys; i++) {
    if (i < cell->nkeys)
      erg_grid_key_rates(cell, i, r->step, rates);
    else {
      erg_grid_system_rates(cell, r->step, rates);
      /* Less the idle GPUs' (attribute.c): idle power, counted above. */
      if (pw->gpu_idle_watts > 0)
        rates[ERG_FEAT_GPU] -= erg_grid_gpu_idle_rate(cell, r->step);
    }
    double w = scale * erg_model_term(cm.model, (size_t)kg, rates[ERG_FEAT_GPU]);
    if (!(w > 0))
      continue;
    w = w < sh[i].watts ? w : sh[i].watts > 0 ? sh[i].watts : 0;
    node += w;
    const char *job;
    size_t jl = i < cell->nkeys ? profile_key_field(cell->keys[i].key, PROFILE_JOB, &job) : 0;
    if (jl && w > 0)
      ok = gpu_entry_add(e, &ne, job, jl, w) == 0;
  }
  if (!ok) {
    if (c->store_errors++ == 0)
      erg_warn("node %s: out of memory for the GPU part of a cell", n->name);
  } else {
    node_write_gpu_keys(c, n, t_end, e, ne, node);
  }
  if (ok && ne && !c->gpu_jobs)
    c->gpu_jobs = calloc(1, sizeof *c->gpu_jobs);
  for (size_t i = 0; i < ne; i++) {
    if (ok && c->gpu_jobs) {
      struct gpu_job *g = gpu_job_of(c->gpu_jobs, e[i].key, strlen(e[i].key));
      g->joules += e[i].watts * r->step;
      g->last_t = t_end;
    }
    free((char *)e[i].key);
  }
  free(e);
}

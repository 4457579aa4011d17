/* GPUs of agent samples (docs/gpu.md, "In the collector"): each
 * process's GPU energy (Σ_gpu board energy x its SM share) goes into the
 * grid beside its CPU time, the node's board energy into the node's cell
 * (feature gpu_watts); per GPU the last power and the energy so far for
 * /metrics; per job the model's GPU part of its energy. Samples are
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

void node_gpu_sample(struct node_state *n, const Erg__Sample *s, struct erg_grid_proc *procs) {
  double board = 0;
  bool any = false;
  for (size_t g = 0; g < s->n_gpus; g++) {
    const Erg__Gpu *gp = s->gpus[g];
    if (!gp->has_energy)
      continue;
    board += gp->energy_joules;
    any = true;
    struct node_gpu *d = node_gpu_of(n, gp->index, gp->uuid);
    if (d) {
      d->power_watts = gp->power_watts;
      d->energy_joules += gp->energy_joules;
    }
  }
  if (!any)
    return;
  for (size_t i = 0; i < s->n_procs; i++) {
    const Erg__Proc *p = s->procs[i];
    for (size_t u = 0; u < p->n_gpu; u++) {
      const Erg__Gpu *gp = sample_gpu(s, p->gpu[u]->gpu_index);
      if (gp)
        procs[i].gpu_joules += gp->energy_joules * p->gpu[u]->sm_share;
    }
  }
  const Erg__Interval *iv = s->interval;
  erg_grid_add_gpu(&n->grid, iv->realtime_start_ns, iv->realtime_end_ns, board);
}

void node_gpu_free(struct node_state *n) {
  free(n->gpus);
  n->gpus = NULL;
}

/* ---- per-job GPU energy ---- */

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

void node_gpu_cell(struct collector *c, struct node_state *n, const struct erg_grid_result *r) {
  const struct erg_grid_cell *cell = r->cell;
  if (!(cell->seen & (1u << ERG_FEAT_GPU)) || !cell->extra || (r->flags & ERG_CELL_NO_AGENT))
    return;
  struct erg_cell_model cm = node_model_cell(n->model);
  double beta = NAN;
  for (size_t k = 0; cm.model && k < cm.model->nfeatures; k++)
    if (cm.feature_map[k] == ERG_FEAT_GPU)
      beta = cm.model->coef[k];
  /* Without a model with a GPU coefficient the GPU part of a process's
   * energy is not known: the CPU-share fallback does not separate it. */
  if (!isfinite(beta))
    return;
  int64_t t_end = r->t0 + r->step;
  for (size_t i = 0; i < cell->nkeys; i++) {
    const char *job;
    size_t jl = profile_key_field(cell->keys[i].key, PROFILE_JOB, &job);
    double joules = beta * cell->extra[i].gpu_joules;
    if (!jl || !(joules > 0))
      continue;
    if (!c->gpu_jobs && !(c->gpu_jobs = calloc(1, sizeof *c->gpu_jobs)))
      return;
    struct gpu_job *e = gpu_job_of(c->gpu_jobs, job, jl);
    e->joules += joules;
    e->last_t = t_end;
    c->keys_dirty = 1;
  }
}

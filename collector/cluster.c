// SPDX-License-Identifier: GPL-3.0-or-later
/* Cluster-wide job power: each node adds its jobs' watts for a cell when it
 * finalises that cell; nodes finalise the same cell time at slightly
 * different moments (lag compensation lengthens a node's settle delay), so
 * sums wait per cell end until every node is past it, or the cell is older
 * than the horizon. Cells are handed out in time order, once. */
#include <stdlib.h>
#include <string.h>

#include "collector_int.h"

struct cluster_cell {
  int64_t t_end;
  struct profile_entry *jobs; /* keys owned (strdup) */
  size_t n, cap;
  struct erg_name_index index; /* over jobs[], 2 * cap slots */
};

struct cluster {
  struct cluster_cell *cells; /* pending, ascending t_end */
  size_t ncells;
  int64_t flushed; /* newest t_end handed out */
  uint64_t late;   /* contributions for cells already handed out */
};

struct cluster *cluster_new(void) {
  return calloc(1, sizeof(struct cluster));
}

static void cell_clear(struct cluster_cell *c) {
  for (size_t i = 0; i < c->n; i++)
    free((char *)c->jobs[i].key);
  free(c->jobs);
  erg_name_index_free(&c->index);
}

void cluster_free(struct cluster *cl) {
  if (!cl)
    return;
  for (size_t i = 0; i < cl->ncells; i++)
    cell_clear(&cl->cells[i]);
  free(cl->cells);
  free(cl);
}

uint64_t cluster_late(const struct cluster *cl) { return cl->late; }

static struct cluster_cell *cluster_cell(struct cluster *cl, int64_t t_end) {
  size_t i = 0;
  while (i < cl->ncells && cl->cells[i].t_end < t_end)
    i++;
  if (i < cl->ncells && cl->cells[i].t_end == t_end)
    return &cl->cells[i];
  struct cluster_cell *a = realloc(cl->cells, (cl->ncells + 1) * sizeof *a);
  if (!a)
    return NULL;
  cl->cells = a;
  if (i < cl->ncells)
    memmove(&a[i + 1], &a[i], (cl->ncells - i) * sizeof *a);
  a[i] = (struct cluster_cell){.t_end = t_end};
  cl->ncells++;
  return &a[i];
}

static const char *cell_job_name(const void *jobs, size_t i) {
  return ((const struct profile_entry *)jobs)[i].key;
}

/* Doubles the jobs array and rebuilds the index at twice its size. */
static int cell_grow(struct cluster_cell *c) {
  size_t cap = c->cap ? 2 * c->cap : 8;
  struct profile_entry *a = realloc(c->jobs, cap * sizeof *a);
  if (!a)
    return -1;
  c->jobs = a;
  if (erg_name_index_rebuild(&c->index, 2 * cap, cell_job_name, a, c->n) != 0)
    return -1;
  c->cap = cap;
  return 0;
}

int cluster_add(struct cluster *cl, int64_t t_end, const char *job, double watts) {
  return cluster_add_unc(cl, t_end, job, watts, 0, 0);
}

int cluster_add_unc(struct cluster *cl, int64_t t_end, const char *job, double watts, double sd,
                    double var) {
  if (t_end <= cl->flushed) {
    cl->late += job != NULL;
    return 1;
  }
  struct cluster_cell *c = cluster_cell(cl, t_end);
  if (!c)
    return -1;
  if (!job)
    return 0;
  /* Every node adds its jobs to the cell: by hash, as a large cluster
   * has thousands of jobs running in one cell. */
  uint32_t *slot = erg_name_index_slot(&c->index, job, cell_job_name, c->jobs);
  if (slot && *slot) {
    c->jobs[*slot - 1].watts += watts;
    c->jobs[*slot - 1].sd_watts += sd; /* linearly, as docs/model.md says */
    c->jobs[*slot - 1].var_watts2 += var;
    return 0;
  }
  if (c->n == c->cap && cell_grow(c) != 0)
    return -1;
  char *k = strdup(job);
  if (!k)
    return -1;
  c->jobs[c->n++] =
      (struct profile_entry){.key = k, .watts = watts, .sd_watts = sd, .var_watts2 = var};
  *erg_name_index_slot(&c->index, job, cell_job_name, c->jobs) = (uint32_t)c->n;
  return 0;
}

void cluster_flush(struct cluster *cl, int64_t done_until, cluster_cell_fn fn, void *user) {
  size_t k = 0;
  for (; k < cl->ncells && cl->cells[k].t_end <= done_until; k++) {
    struct cluster_cell *c = &cl->cells[k];
    fn(user, c->t_end, c->jobs, c->n);
    cl->flushed = c->t_end;
    cell_clear(c);
  }
  if (k == 0)
    return;
  memmove(cl->cells, cl->cells + k, (cl->ncells - k) * sizeof *cl->cells);
  cl->ncells -= k;
}

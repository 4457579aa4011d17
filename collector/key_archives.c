// SPDX-License-Identifier: GPL-3.0-or-later
/* The profile keys' archives over time: each cell writes its keys' watts
 * and an explicit 0 W for every known key that is absent, keys idle past
 * key_expire_seconds are forgotten, and a node's set is bounded by
 * key_archives_max (the key idle longest loses its archive). The same for
 * the cluster-wide job sums (cluster.c) and the GPU part of a node's jobs
 * and of the cluster-wide sums (gpu.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "erg_store.h"
#include "state.h"

/* A per-node key pushed out of a full known set loses its archive too, so
 * a node never holds more than key_archives_max archives per kind however
 * many names pass through; cluster-wide job archives are job history and
 * only expire by age. */
static void keys_evict(struct collector *c, const char *node, const char *kind, char *key) {
  if (!key)
    return;
  if (node) {
    erg_debug("node %s: %s key '%s' evicted (key_archives_max)", node, kind, key);
    writer_remove_key(c->writer, node, kind, key);
    c->keys_evicted++;
  }
  free(key);
}

/* Writes one cell's values of a known-key set: the entries given, and an
 * explicit 0 W for every key written before but absent now, so stacked
 * graphs and reports see "idle", not "unknown". Keys idle longer than
 * key_expire_seconds are forgotten (their archives then expire in the
 * store); the set is bounded, the key idle longest makes room. */
/* A key archive's data sources with its interval's parts (unc). */
static const char *const keys_unc_ds[3] = {"watts", "sd", "var"};

static void keys_put(struct collector *c, const char *node, const char *kind, const char *key,
                     int64_t t_end, double watts, double sd, double var, int unc) {
  if (unc)
    writer_key_ds(c->writer, node, kind, key, t_end, keys_unc_ds, (double[3]){watts, sd, var}, 3);
  else
    writer_key(c->writer, node, kind, key, t_end, watts);
}

void keys_write(struct collector *c, const char *node, const char *kind,
                struct profile_known *known, const struct profile_entry *e, size_t n, int64_t t_end,
                size_t max_keys, int unc) {
  double step = c->cfg->step_seconds;
  for (size_t i = 0; i < n; i++) {
    char *evicted = NULL;
    struct profile_known_key *k = profile_known_touch(known, e[i].key, t_end, max_keys, &evicted);
    keys_evict(c, node, kind, evicted);
    if (k) {
      k->joules += e[i].watts * step;
      k->watts = e[i].watts;
      if (unc && isfinite(e[i].sd_watts) && isfinite(e[i].var_watts2)) {
        k->sd_joules += e[i].sd_watts * step;
        k->var_joules2 += e[i].var_watts2 * step;
      }
    }
    keys_put(c, node, kind, e[i].key, t_end, e[i].watts, e[i].sd_watts, e[i].var_watts2, unc);
  }
  int64_t idle = c->cfg->key_expire_seconds;
  /* A cluster-wide job gets its 0 W for an hour after it was last seen,
   * not for key_expire_seconds: an ended job is history, 4,096 of them
   * would cost as many updates per cell, and its archive's mtime then
   * tells when it last ran (pages rank recent jobs by it). */
  if (!node && (idle <= 0 || idle > CLUSTER_JOB_ZERO_SECONDS))
    idle = CLUSTER_JOB_ZERO_SECONDS;
  if (idle > 0)
    profile_known_expire(known, t_end, idle);
  for (size_t i = 0; i < known->n; i++)
    if (known->keys[i].last_t != t_end) {
      known->keys[i].watts = 0;
      keys_put(c, node, kind, known->keys[i].key, t_end, 0, 0, 0, unc);
    }
  c->keys_dirty = 1;
}

/* After a restart, the keys written before (archives updated within
 * key_expire_seconds) are known again, so they keep getting 0 W while
 * absent. Their last_t is kept off the step multiples that t_end takes. */
void keys_settle(struct collector *c, const char *node, const char *kind,
                 struct profile_known *known, size_t max_keys) {
  /* More archives than allowed (a lower key_archives_max than the last
   * run's): the ones idle longest go now, not at the next churn. */
  char *old;
  while (known->n > max_keys && (old = profile_known_pop_oldest(known)))
    keys_evict(c, node, kind, old);
  for (size_t i = 0; i < known->n; i++)
    if (known->keys[i].last_t % (int64_t)c->cfg->step_seconds == 0)
      known->keys[i].last_t--;
}

void keys_load(struct collector *c, const char *node, const char *kind, struct profile_known *known,
               int64_t now, size_t max_keys) {
  char dir[1024];
  if (erg_store_kind_dir(c->store, node, kind, dir, sizeof dir) != 0)
    return;
  profile_known_load(known, dir, now, c->cfg->key_expire_seconds);
  keys_settle(c, node, kind, known, max_keys);
}

/* Every kind of profile key of a node's cell, and its jobs' watts into the
 * cluster sums (all jobs, before top-N folding). */
void node_write_keys(struct collector *c, struct node_state *n, int64_t t_end,
                     const struct erg_attr_share *sh, size_t nkeys) {
  struct profile_rollup r;
  if (profile_rollup(&r, sh, nkeys, n->known, c->cfg->top_processes, c->cfg->key_min_share) != 0) {
    if (c->store_errors++ == 0)
      erg_warn("node %s: out of memory rolling up profile keys", n->name);
    return;
  }
  /* Key archives of every kind carry their keys' interval parts
   * (docs/model.md, "Uncertainty"): variance as W² × step, as stored. */
  int unc = c->cfg->energy_intervals;
  if (unc)
    unc_keys_scale(&r, c->cfg->step_seconds);
  for (int k = 0; k < PROFILE_NKINDS; k++)
    keys_write(c, n->name, profile_kind_names[k], &n->known[k], r.out[k], r.nout[k], t_end,
               erg_collector_key_archives_max(c->cfg), unc);
  /* After the cell's user archives, so the directory is the store's. */
  char *tsv = n->user_names.dirty ? user_names_tsv(&n->user_names) : NULL;
  if (tsv)
    writer_names(c->writer, n->name, "user", tsv);
  free(tsv);
  tsv = NULL;
  /* Whose its jobs are; job ids and uids as the profile keys hold them. */
  int changed = 0, commands = 0;
  for (size_t i = 0; i < nkeys; i++) {
    const char *job, *uid, *comm;
    size_t jl = profile_key_field(sh[i].key, PROFILE_JOB, &job);
    size_t ul = profile_key_field(sh[i].key, PROFILE_USER, &uid);
    size_t cl = profile_key_field(sh[i].key, PROFILE_COMMAND, &comm);
    if (jl && ul && ul < 12) {
      uint32_t u = (uint32_t)strtoul(uid, NULL, 10);
      changed |= job_users_note(&n->job_users, job, jl, u, t_end) > 0;
      /* Its first command, as the tuple holds it (control bytes replaced). */
      commands |= job_users_command(n->job_users, job, jl, u, comm, cl);
    }
  }
  if (changed && (tsv = job_users_tsv(n->job_users)))
    writer_job_users(c->writer, n->name, tsv);
  free(tsv);
  tsv = NULL;
  if ((commands || changed) && (tsv = job_commands_tsv(n->job_users)))
    writer_job_commands(c->writer, n->name, tsv);
  free(tsv);
  cluster_add(c->cluster, t_end, NULL, 0);
  for (size_t i = 0; i < r.nall[PROFILE_JOB]; i++) {
    const struct profile_entry *e = &r.all[PROFILE_JOB][i];
    cluster_add_unc(c->cluster, t_end, e->key, e->watts, unc ? e->sd_watts : 0,
                    unc ? e->var_watts2 : 0);
  }
  profile_rollup_free(&r);
}

/* Kinds of the GPU part (docs/gpu.md): per job, and the node's whole. */
#define GPU_JOB_KIND "gpu_job"
#define GPU_NODE_KIND "gpu"
#define GPU_NODE_KEY "node"

void node_write_gpu_keys(struct collector *c, struct node_state *n, int64_t t_end,
                         const struct profile_entry *e, size_t ne, double node_watts) {
  struct node_gpus *g = n->gpus;
  size_t max = erg_collector_key_archives_max(c->cfg);
  /* Read once, on the loop like the cluster jobs: only GPU nodes pay. */
  if (!g->known_loaded) {
    keys_load(c, n->name, GPU_JOB_KIND, &g->known, t_end, max);
    g->known_loaded = 1;
  }
  /* Only jobs with a job archive here: erg jobs reads a job's GPU part on
   * the nodes that hold its archive, and a job folded into [other] (below
   * key_min_share) would only churn archives. */
  struct profile_entry *w = ne ? malloc(ne * sizeof *w) : NULL;
  size_t nw = 0;
  for (size_t i = 0; w && i < ne; i++)
    if (profile_known_find(&n->known[PROFILE_JOB], e[i].key))
      w[nw++] = e[i];
  keys_write(c, n->name, GPU_JOB_KIND, &g->known, w, nw, t_end, max, 0);
  free(w);
  /* The cluster sums take every job, as the cluster job archives do (all
   * jobs, before top-N folding). */
  cluster_add(c->gpu_cluster, t_end, NULL, 0);
  for (size_t i = 0; i < ne; i++)
    cluster_add(c->gpu_cluster, t_end, e[i].key, e[i].watts);
  if (isfinite(node_watts))
    writer_key(c->writer, n->name, GPU_NODE_KIND, GPU_NODE_KEY, t_end, node_watts);
}

/* cluster_flush's hand-out: a cluster cell's job sums into the
 * cluster-wide job archives, the known ones read at the first. */
void cluster_write_cell(void *user, int64_t t_end, const struct profile_entry *jobs, size_t njobs) {
  struct collector *c = user;
  if (!c->cluster_jobs_loaded) {
    keys_load(c, NULL, "job", &c->cluster_jobs, t_end, CLUSTER_MAX_KNOWN_JOBS);
    c->cluster_jobs_loaded = 1;
  }
  keys_write(c, NULL, "job", &c->cluster_jobs, jobs, njobs, t_end, CLUSTER_MAX_KNOWN_JOBS,
             c->cfg->energy_intervals);
}

void cluster_write_gpu_cell(void *user, int64_t t_end, const struct profile_entry *jobs,
                            size_t njobs) {
  struct collector *c = user;
  if (!c->cluster_gpu_jobs_loaded) {
    keys_load(c, NULL, GPU_JOB_KIND, &c->cluster_gpu_jobs, t_end, CLUSTER_MAX_KNOWN_JOBS);
    c->cluster_gpu_jobs_loaded = 1;
  }
  keys_write(c, NULL, GPU_JOB_KIND, &c->cluster_gpu_jobs, jobs, njobs, t_end,
             CLUSTER_MAX_KNOWN_JOBS, 0);
}

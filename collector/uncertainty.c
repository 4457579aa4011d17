// SPDX-License-Identifier: GPL-3.0-or-later
/* Per-job uncertainty in ergd (docs/model.md, "Uncertainty"): what is
 * known of a node's cell power besides its model, and the two
 * accumulators of each job — an sd that adds linearly over cells (the
 * model's coefficients, a power factor, an equal split: the same error in
 * every cell) and a variance that adds (meter quantum, lag, misfit) — as
 * archives beside the job's energy: nodes/NODE/job_sd/ and job_var/ (the
 * node's jobs that have a job archive there), cluster/job_sd/ and job_var/
 * (every job, summed over nodes: sd linearly, variance as is). Both are
 * stored as rates, so a job's interval over any period is the integral
 * of its archives, as its energy is: sd_J = ∫ job_sd dt, var_J = ∫
 * job_var dt (job_var holds the cell's variance in W² times the step).
 * The node's dynamic power has the same two in nodes/NODE/dynamic_unc/
 * (keys sd and var). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "erg_fit.h"
#include "state.h"

/* A x V readings: the configured power factor is taken as good to 5 %. */
#define UNC_POWER_FACTOR_REL 0.05
/* A cell aligned with an unsure lag: 15 % of its dynamic power off (the
 * issue-14 trial: 65–79 W at load changes of ~300 W); a lag the meter
 * cannot resolve (unshifted): 5 %. */
#define UNC_LAG_UNSURE_REL 0.15
#define UNC_LAG_UNRESOLVED_REL 0.05
/* A power reading's quantum when nothing better is known: 1 W. */
#define UNC_READING_QUANTUM_WATTS 1.0

enum { UNC_SD, UNC_VAR, UNC_NKINDS };
static const char *const unc_kinds[UNC_NKINDS] = {"job_sd", "job_var"};
/* The node's dynamic power: nodes/NODE/dynamic_unc/sd.rrd and var.rrd. */
#define UNC_DYNAMIC_KIND "dynamic_unc"

struct node_unc {
  struct profile_known known[UNC_NKINDS];
  struct profile_known dyn_known; /* dynamic_unc/: the keys "sd" and "var" */
  int loaded;
};

struct cluster_unc {
  struct cluster *sum[UNC_NKINDS];
  struct profile_known known[UNC_NKINDS];
  int loaded;
};

/* The meter's part: each feed's quantum (an energy counter's step over
 * both ends of the cell, q² / 6 / step²; a power reading's, Q² / 12),
 * scaled by the feed's factor. */
static double unc_feeds_var(const struct collector *c, const struct erg_node_feed *feeds, int nf,
                            double step, bool *av) {
  double var = 0;
  for (int f = 0; f < nf; f++) {
    const struct source_state *ss = &c->sources[feeds[f].source];
    const struct erg_pdu_counter *pc = &ss->counters[feeds[f].channel];
    double k = fabs(feeds[f].factor), q = pc->resolution_joules;
    if (q > 0 && !pc->coarse)
      var += k * k * q * q / (6 * step * step);
    else
      var += k * k * UNC_READING_QUANTUM_WATTS * UNC_READING_QUANTUM_WATTS / 12;
    *av |= ss->power_estimated[feeds[f].channel];
  }
  return var;
}

void node_unc_cell(const struct collector *c, const struct node_state *n,
                   const struct erg_grid_result *r, struct erg_unc_cell *in) {
  *in = (struct erg_unc_cell){0};
  struct erg_cell_model cm = node_model_cell(n->model);
  const struct erg_model *m = cm.model;
  if (m && m->metrics.cells > 0 && isfinite(m->metrics.rmse_watts))
    in->misfit_watts = m->metrics.rmse_watts;
  if (m)
    in->misfit_cells = m->misfit_correlation_cells;
  double P = r->measured_watts, step = r->step > 0 ? r->step : 1;
  if (!isfinite(P))
    return; /* estimated: the misfit stands in for the meter */
  double idle = m ? m->idle_watts : n->idle_watts, D = P > idle ? P - idle : 0;
  bool av = false;
  const struct erg_collector_config *cfg = c->cfg;
  if (n->group >= 0 && n->group < c->ngroups && c->groups[n->group].cfg) {
    const struct erg_group_config *g = c->groups[n->group].cfg;
    in->meter_var_watts2 = n->share * n->share * unc_feeds_var(c, g->feeds, g->nfeeds, step, &av);
    /* An equal split knows nothing of the member's part: anywhere from 0
     * to twice it, uniform (sd P/√3), the same in every such cell. With
     * the members' models, the group's misfit moves power between them. */
    if (n->share_equal)
      in->meter_sd_corr_watts = P / sqrt(3);
    else
      in->meter_var_watts2 += in->misfit_watts * in->misfit_watts * n->share * (1 - n->share);
  } else if (n->cfg_index >= 0) {
    const struct erg_node_config *nc = &cfg->nodes[n->cfg_index];
    in->meter_var_watts2 = unc_feeds_var(c, nc->feeds, nc->nfeeds, step, &av);
  }
  if (av) {
    double pf = UNC_POWER_FACTOR_REL * P;
    in->meter_sd_corr_watts = sqrt(in->meter_sd_corr_watts * in->meter_sd_corr_watts + pf * pf);
  }
  double lag = 0;
  if (cfg->lag_max_seconds && erg_lag_cell_unsure(&n->lag, r->t0, r->step))
    lag = UNC_LAG_UNSURE_REL * D;
  else if (cfg->lag_max_seconds && erg_lag_unresolved(&n->lag))
    lag = UNC_LAG_UNRESOLVED_REL * D;
  in->meter_var_watts2 += lag * lag;
}

/* Adds (sd, var) to the job's entries (names malloc'd). */
static int unc_entry_add(struct profile_entry *e[UNC_NKINDS], size_t *n, const char *job,
                         size_t len, double sd, double var) {
  for (size_t i = 0; i < *n; i++)
    if (!strncmp(e[UNC_SD][i].key, job, len) && e[UNC_SD][i].key[len] == '\0') {
      e[UNC_SD][i].watts += sd;
      e[UNC_VAR][i].watts += var;
      return 0;
    }
  char *k = strndup(job, len);
  if (!k)
    return -1;
  e[UNC_SD][*n] = (struct profile_entry){.key = k, .watts = sd};
  e[UNC_VAR][(*n)++] = (struct profile_entry){.key = k, .watts = var};
  return 0;
}

static struct cluster_unc *unc_cluster(struct collector *c) {
  if (c->unc)
    return c->unc;
  struct cluster_unc *u = calloc(1, sizeof *u);
  if (!u)
    return NULL;
  for (int k = 0; k < UNC_NKINDS; k++)
    if (!(u->sum[k] = cluster_new())) {
      cluster_free(u->sum[0]);
      free(u);
      return NULL;
    }
  return c->unc = u;
}

void node_write_unc(struct collector *c, struct node_state *n, int64_t t_end,
                    const struct erg_attr_share *sh, size_t nkeys,
                    const struct erg_cell_power *pw) {
  struct cluster_unc *cu = unc_cluster(c);
  if (!n->unc)
    n->unc = calloc(1, sizeof *n->unc);
  struct profile_entry *e[UNC_NKINDS] = {malloc((nkeys + 1) * sizeof **e),
                                         malloc((nkeys + 1) * sizeof **e)};
  struct profile_entry *w[UNC_NKINDS] = {malloc((nkeys + 1) * sizeof **w),
                                         malloc((nkeys + 1) * sizeof **w)};
  size_t ne = 0, nw = 0;
  int ok = cu && n->unc && e[0] && e[1] && w[0] && w[1];
  for (size_t i = 0; ok && i < nkeys; i++) {
    const char *job;
    size_t jl = profile_key_field(sh[i].key, PROFILE_JOB, &job);
    /* The step turns a cell's W² into the J²/s whose integral is J². */
    if (jl && unc_entry_add(e, &ne, job, jl, sh[i].job_sd_watts,
                            sh[i].job_var_watts2 * c->cfg->step_seconds) != 0)
      ok = 0;
  }
  if (!ok) {
    if (c->store_errors++ == 0)
      erg_warn("node %s: out of memory for the jobs' uncertainty", n->name);
  } else {
    size_t max = erg_collector_key_archives_max(c->cfg);
    if (!n->unc->loaded) {
      for (int k = 0; k < UNC_NKINDS; k++)
        keys_load(c, n->name, unc_kinds[k], &n->unc->known[k], t_end, max);
      keys_load(c, n->name, UNC_DYNAMIC_KIND, &n->unc->dyn_known, t_end, 2);
      n->unc->loaded = 1;
    }
    /* The node's dynamic power: sd in W, variance × step in J²/s, as a job's. */
    struct profile_entry dyn[2] = {
        {.key = "sd", .watts = pw->dynamic_sd_watts},
        {.key = "var", .watts = pw->dynamic_var_watts2 * c->cfg->step_seconds}};
    keys_write(c, n->name, UNC_DYNAMIC_KIND, &n->unc->dyn_known, dyn, 2, t_end, 2);
    /* Only jobs with a job archive here, as the GPU part (key_archives.c). */
    for (size_t i = 0; i < ne; i++)
      if (profile_known_find(&n->known[PROFILE_JOB], e[UNC_SD][i].key)) {
        w[UNC_SD][nw] = e[UNC_SD][i];
        w[UNC_VAR][nw++] = e[UNC_VAR][i];
      }
    for (int k = 0; k < UNC_NKINDS; k++) {
      keys_write(c, n->name, unc_kinds[k], &n->unc->known[k], w[k], nw, t_end, max);
      cluster_add(cu->sum[k], t_end, NULL, 0);
      for (size_t i = 0; i < ne; i++)
        cluster_add(cu->sum[k], t_end, e[k][i].key, e[k][i].watts);
    }
  }
  for (size_t i = 0; e[UNC_SD] && i < ne; i++)
    free((char *)e[UNC_SD][i].key);
  for (int k = 0; k < UNC_NKINDS; k++) {
    free(e[k]);
    free(w[k]);
  }
}

static void unc_write_cell(struct collector *c, int k, int64_t t_end,
                           const struct profile_entry *jobs, size_t njobs) {
  struct cluster_unc *u = c->unc;
  if (!u->loaded) {
    for (int i = 0; i < UNC_NKINDS; i++)
      keys_load(c, NULL, unc_kinds[i], &u->known[i], t_end, CLUSTER_MAX_KNOWN_JOBS);
    u->loaded = 1;
  }
  keys_write(c, NULL, unc_kinds[k], &u->known[k], jobs, njobs, t_end, CLUSTER_MAX_KNOWN_JOBS);
}

static void unc_write_sd(void *user, int64_t t_end, const struct profile_entry *jobs,
                         size_t njobs) {
  unc_write_cell(user, UNC_SD, t_end, jobs, njobs);
}

static void unc_write_var(void *user, int64_t t_end, const struct profile_entry *jobs,
                          size_t njobs) {
  unc_write_cell(user, UNC_VAR, t_end, jobs, njobs);
}

void unc_flush(struct collector *c, int64_t done_until) {
  if (!c->unc)
    return;
  cluster_flush(c->unc->sum[UNC_SD], done_until, unc_write_sd, c);
  cluster_flush(c->unc->sum[UNC_VAR], done_until, unc_write_var, c);
}

void node_unc_free(struct node_state *n) {
  if (!n || !n->unc)
    return;
  for (int k = 0; k < UNC_NKINDS; k++)
    profile_known_free(&n->unc->known[k]);
  profile_known_free(&n->unc->dyn_known);
  free(n->unc);
  n->unc = NULL;
}

void unc_free(struct collector *c) {
  if (!c || !c->unc)
    return;
  for (int k = 0; k < UNC_NKINDS; k++) {
    cluster_free(c->unc->sum[k]);
    profile_known_free(&c->unc->known[k]);
  }
  free(c->unc);
  c->unc = NULL;
}

int unc_job_sums(const struct collector *c, const char *job, double *sd_j, double *var_j) {
  if (!c->unc)
    return -1;
  const struct profile_known_key *a = profile_known_find(&c->unc->known[UNC_SD], job),
                                 *b = profile_known_find(&c->unc->known[UNC_VAR], job);
  if (!a || !b)
    return -1;
  *sd_j = a->joules;
  *var_j = b->joules;
  return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Per-job uncertainty in ergd (docs/model.md, "Uncertainty"): what is
 * known of a node's cell power besides its model, and the two parts of
 * each key's interval (every kind; jobs the ones billed) — an sd that adds linearly over cells (the
 * model's coefficients, a power factor, an equal split: the same error in every cell) and a
 * variance that adds (meter quantum and noise, lag, misfit) — as the data sources "sd" and "var" of
 * the key's own archives (nodes/NODE/KIND/ and cluster/job/, key_archives.c; cluster sums: sd
 * linearly, variance as is). Both are rates, so a job's interval over any
 * period is the integral of its archive, as its energy is: sd_J = ∫ sd dt,
 * var_J = ∫ var dt (var holds the cell's variance in W² times the step).
 * The node's dynamic power has the same two in
 * nodes/NODE/dynamic_unc/node.rrd. */
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

/* The node's dynamic power: nodes/NODE/dynamic_unc/node.rrd (sd, var). */
#define UNC_DYNAMIC_KIND "dynamic_unc"
#define UNC_DYNAMIC_KEY "node"

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
  in->misfit_watts = erg_model_misfit_watts(m);
  if (m)
    in->misfit_cells = m->misfit_correlation_cells;
  in->noise_watts = erg_model_noise_watts(m);
  double P = r->measured_watts, step = r->step > 0 ? r->step : 1;
  if (!isfinite(P))
    return; /* estimated: the misfit stands in for the meter */
  double idle = m ? m->idle_watts : n->idle_watts, D = P > idle ? P - idle : 0;
  bool av = false;
  const struct erg_collector_config *cfg = c->cfg;
  if (n->group >= 0 && n->group < c->ngroups && c->groups[n->group].cfg) {
    const struct erg_group_config *g = c->groups[n->group].cfg;
    in->meter_var_watts2 =
        n->share * n->share *
        (unc_feeds_var(c, g->feeds, g->nfeeds, step, &av) + r->sample_var_watts2);
    /* An equal split knows nothing of the member's part: anywhere from 0
     * to twice it, uniform (sd P/√3), the same in every such cell. With
     * the members' models, the group's misfit moves power between them. */
    if (n->share_equal)
      in->meter_sd_corr_watts = P / sqrt(3);
    else {
      in->meter_var_watts2 += in->misfit_watts * in->misfit_watts * n->share * (1 - n->share);
      /* the members' coefficients move power between them (groups.c) */
      in->meter_sd_corr_watts = isfinite(n->share_sd_watts) ? n->share_sd_watts : 0;
    }
  } else if (n->cfg_index >= 0) {
    const struct erg_node_config *nc = &cfg->nodes[n->cfg_index];
    /* Power readings held between samples miss what the power did in
     * between (a BMC's sensor samples once a second a load that moves
     * within it): an error of the node's energy, not only of its split
     * (grid.c, erg_grid_add_sample_var; 0 with an energy counter). */
    in->meter_var_watts2 =
        unc_feeds_var(c, nc->feeds, nc->nfeeds, step, &av) + r->sample_var_watts2;
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

/* A cell's rolled-up keys (profile_rollup: each key's sd and variance in
 * W², summed over its rows' groups) with their variance × step, as the
 * archives store it (a rate that integrates to J²). */
void unc_keys_scale(struct profile_rollup *r, double step) {
  for (int k = 0; k < PROFILE_NKINDS; k++) {
    for (size_t i = 0; i < r->nout[k]; i++)
      r->out[k][i].var_watts2 *= step;
    for (size_t i = 0; i < r->nall[k]; i++)
      r->all[k][i].var_watts2 *= step;
  }
}

/* The node's dynamic power's: nodes/NODE/dynamic_unc/node.rrd, sources
 * sd (W) and var (W² × step, J²/s), as a job's. */
static const char *const unc_dynamic_ds[2] = {"sd", "var"};

void node_write_unc(struct collector *c, struct node_state *n, int64_t t_end,
                    const struct erg_cell_power *pw) {
  double v[2] = {pw->dynamic_sd_watts, pw->dynamic_var_watts2 * c->cfg->step_seconds};
  writer_key_ds(c->writer, n->name, UNC_DYNAMIC_KIND, UNC_DYNAMIC_KEY, t_end, unc_dynamic_ds, v, 2);
}

int unc_job_sums(const struct collector *c, const char *job, double *sd_j, double *var_j) {
  if (!c->cfg->energy_intervals)
    return -1;
  const struct profile_known_key *a = profile_known_find(&c->cluster_jobs, job);
  if (!a)
    return -1;
  *sd_j = a->sd_joules;
  *var_j = a->var_joules2;
  return 0;
}

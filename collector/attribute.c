// SPDX-License-Identifier: GPL-3.0-or-later
/* Attribution of a finalised cell's power (docs/model.md): with the node's
 * model through erg_attribute_cell, else by CPU-time share of measured
 * minus the configured idle power, through erg_attribute_cell as well.
 * Both conserve the cell's power and follow the idle policy. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collector_int.h"
#include "erg_collector.h"
#include "erg_fit.h"

/* A row's key of one kind, for grouping the rows by it. */
struct unc_row_key {
  const char *s;
  size_t len;
};

static uint64_t unc_key_hash(const struct unc_row_key *k) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < k->len; i++)
    h = (h ^ (unsigned char)k->s[i]) * 1099511628211ULL;
  return h;
}

/* Rows 0..n-1 by their key rk[p] into groups 0..: group[p], first[g] the
 * group's first row; slot: 2^bits >= 2n zeroed ints. Returns the count. */
static size_t unc_group_rows(const struct unc_row_key *rk, size_t n, int *group, size_t *first,
                             int *slot, size_t mask) {
  size_t ng = 0;
  memset(slot, 0, (mask + 1) * sizeof *slot);
  for (size_t p = 0; p < n; p++) {
    size_t j = unc_key_hash(&rk[p]) & mask;
    for (;; j = (j + 1) & mask) {
      if (!slot[j]) {
        slot[j] = (int)p + 1;
        first[ng] = p;
        group[p] = (int)ng++;
        break;
      }
      const struct unc_row_key *o = &rk[slot[j] - 1];
      if (o->len == rk[p].len && !memcmp(o->s, rk[p].s, o->len)) {
        group[p] = group[slot[j] - 1];
        break;
      }
    }
  }
  return ng;
}

/* Each key's uncertainty in the cell, every kind of key (docs/model.md,
 * "Uncertainty"), onto the first row of the key: the rows of one key move
 * together under every error of the cell, so they are propagated as one
 * group (their gradients add before the quadratic form: not as if
 * independent). Rows without a value of the kind are one group ([none]),
 * [system] one of its own. The node's dynamic power is every row as one
 * group under the separate policy (what no row gets of the idle power):
 * into dyn[0] (sd) and dyn[1] (variance). */
static int cell_key_uncertainty(const struct erg_model *m, double idle_watts,
                                const struct erg_attribution *a, const double *x,
                                const struct erg_grid_cell *c, int policy,
                                const struct erg_unc_cell *in, struct erg_attr_share *shares,
                                double dyn[2]) {
  size_t nrow = c->nkeys + 1, mask = 1, nk = ERG_ATTR_KINDS;
  while (mask + 1 < 2 * nrow)
    mask = 2 * mask + 1;
  int *group = calloc(nk * nrow, sizeof *group), *slot = malloc((mask + 1) * sizeof *slot);
  size_t *first = malloc(nk * nrow * sizeof *first);
  struct unc_row_key *rk = malloc(nk * nrow * sizeof *rk);
  struct erg_unc_group *g = malloc(nk * nrow * sizeof *g);
  int rc = group && slot && first && rk && g ? 0 : -1;
  /* Each row's fields, its tuple split once (profile_key_field's). */
  for (size_t p = 0; rc == 0 && p < c->nkeys; p++)
    for (size_t k = 0; k < nk; k++) {
      struct unc_row_key *f = &rk[k * nrow + p];
      f->len = k ? profile_key_field(rk[(k - 1) * nrow + p].s, 1, &f->s)
                 : profile_key_field(c->keys[p].key, 0, &f->s);
    }
  const int *groups[ERG_ATTR_KINDS];
  size_t ng[ERG_ATTR_KINDS];
  struct erg_unc_group *outs[ERG_ATTR_KINDS];
  for (size_t k = 0; rc == 0 && k < nk; k++) {
    int *gk = group + k * nrow;
    size_t *fk = first + k * nrow;
    ng[k] = unc_group_rows(rk + k * nrow, c->nkeys, gk, fk, slot, mask);
    fk[ng[k]] = c->nkeys; /* [system] alone */
    gk[c->nkeys] = (int)ng[k]++;
    groups[k] = gk;
    outs[k] = g + k * nrow;
  }
  /* Every kind in one pass over the rows' activities. */
  if (rc == 0)
    rc = erg_attribute_uncertainty_sets(m, idle_watts, a, x, nrow, c->nkeys,
                                        (enum erg_idle_policy)policy, in, nk, groups, ng, outs);
  for (size_t k = 0; rc == 0 && k < nk; k++)
    for (size_t q = 0; q < ng[k]; q++) {
      size_t r = first[k * nrow + q];
      shares[r].key_sd_watts[k] = outs[k][q].sd_corr_watts;
      shares[r].key_var_watts2[k] = outs[k][q].var_watts2;
    }
  for (size_t p = 0; rc == 0 && p < nrow; p++)
    group[p] = 0;
  if (rc == 0)
    rc = erg_attribute_uncertainty(m, idle_watts, a, x, nrow, c->nkeys, ERG_IDLE_SEPARATE, in,
                                   group, 1, g);
  if (rc == 0) {
    dyn[0] = g[0].sd_corr_watts;
    dyn[1] = g[0].var_watts2;
  }
  free(group);
  free(slot);
  free(first);
  free(rk);
  free(g);
  return rc;
}

/* Without a model: the configured idle power is a guess (sd 20 %) and the
 * split by CPU time an assumption (a quarter of the dynamic power as its
 * misfit): wide on purpose (docs/model.md, "Uncertainty"). */
#define UNC_NO_MODEL_IDLE_REL 0.2
#define UNC_NO_MODEL_MISFIT_REL 0.25
/* Beyond the training range a coefficient is extrapolated: its sd grows by
 * half of it per unit of the excess ratio (1.2 x the training maximum:
 * 10 %, 1.5 x: 25 %, 3 x and beyond: the coefficient itself); the
 * utilisation beyond its maximum does so to every curve term. (20 % per
 * unit, at most 20 %, missed the harness's jobE at 1.2-1.5 x.) */
#define UNC_BEYOND_REL 0.5
#define UNC_BEYOND_REL_MAX 1.0

/* The model with the extrapolated coefficients' variance raised (a copy;
 * NULL when out of memory or the model has no covariance: m as it is). */
static struct erg_model *unc_beyond_model(const struct erg_model *m,
                                          const struct erg_cell_power *pw) {
  if (!pw->beyond_training || m->ncov != m->nfeatures + 1 || !(pw->beyond_training_max > 0))
    return NULL;
  struct erg_model *mm = malloc(sizeof *mm);
  if (!mm)
    return NULL;
  *mm = *m;
  double excess = pw->beyond_value / pw->beyond_training_max - 1;
  double rel = UNC_BEYOND_REL * excess;
  rel = rel < UNC_BEYOND_REL_MAX ? rel : UNC_BEYOND_REL_MAX;
  bool curve = !strcmp(pw->beyond_feature, "cpu_utilization");
  for (size_t k = 0; k < m->nfeatures; k++)
    if (curve ? erg_derived_index(m->feature[k]) >= 0 : !strcmp(m->feature[k], pw->beyond_feature))
      mm->cov[1 + k][1 + k] += rel * m->coef[k] * rel * m->coef[k];
  return mm;
}

/* Without a fitted model, a CPU-only pseudo-model (idle = the configured
 * idle power, 1 W per CPU-second) goes through the same erg_attribute_cell
 * as a fitted one: dynamic power by CPU share, all of it to [system] when
 * no CPU time was seen, and idle_policy meaning the same with and without
 * a model. */
static int cpu_share(const struct erg_grid_cell *c, double measured_watts, double idle_watts,
                     int idle_policy, const struct erg_unc_cell *unc, struct erg_attr_share *shares,
                     struct erg_cell_power *out) {
  if (!isfinite(measured_watts))
    return 1; /* erg_attribute_cell would predict; a pseudo-model must not */
  struct erg_model m = {.version = ERG_MODEL_VERSION, .nfeatures = 1, .coef = {1}};
  m.idle_watts = idle_watts;
  size_t nrow = c->nkeys + 1;
  double *x = malloc(2 * nrow * sizeof *x);
  struct erg_attribution a;
  if (!x)
    return -1;
  double *w = x + nrow;
  for (size_t p = 0; p < c->nkeys; p++)
    x[p] = c->keys[p].cpu_seconds;
  x[c->nkeys] = c->system_cpu_seconds;
  int rc = erg_attribute_cell(&m, measured_watts, x, nrow, c->nkeys,
                              (enum erg_idle_policy)idle_policy, w, &a);
  for (size_t p = 0; rc == 0 && p < nrow; p++)
    shares[p] =
        (struct erg_attr_share){.key = p < c->nkeys ? c->keys[p].key : "[system]", .watts = w[p]};
  double dyn[2] = {0, 0};
  if (rc == 0 && unc) {
    struct erg_unc_cell in = *unc;
    in.misfit_watts = UNC_NO_MODEL_MISFIT_REL * a.dynamic_watts;
    in.misfit_any_row = true; /* the split by CPU time is itself the guess */
    m.ncov = 2;
    m.cov[0][0] = UNC_NO_MODEL_IDLE_REL * idle_watts * UNC_NO_MODEL_IDLE_REL * idle_watts;
    rc = cell_key_uncertainty(&m, idle_watts, &a, x, c, idle_policy, &in, shares, dyn);
  }
  free(x);
  if (rc != 0)
    return -1;
  *out = (struct erg_cell_power){.total_watts = a.total_watts,
                                 .idle_watts = a.idle_watts,
                                 .dynamic_watts = a.dynamic_watts,
                                 .idle_separate_watts = a.idle_separate_watts,
                                 .modelled_watts = NAN,
                                 .estimated = false,
                                 .dynamic_sd_watts = dyn[0],
                                 .dynamic_var_watts2 = dyn[1]};
  return 0;
}

int erg_attribute_cpu_share(const struct erg_grid_cell *c, double measured_watts, double idle_watts,
                            int idle_policy, struct erg_attr_share *shares,
                            struct erg_cell_power *out) {
  return cpu_share(c, measured_watts, idle_watts, idle_policy, NULL, shares, out);
}

/* ---- a finalised cell, with the node's model when there is one ---- */

/* The cell's mean of its samples' curve tails (what the journal has and
 * the fit took, issue 38) in t, or NULL when the cell has none or they are
 * of another CPU count than the model's. */
static const double *cell_tails(const struct erg_cell_model *cm, const struct erg_grid_cell *c,
                                double *t) {
  if (!(c->tail_covered_seconds > 0) || c->tail_ncpu != cm->model->ncpu)
    return NULL;
  for (int d = 0; d < ERG_NDERIVED; d++)
    t[d] = c->tail_seconds[d] / c->tail_covered_seconds;
  return t;
}

/* Model feature k's node-level value from the node's rates: a measured
 * feature as is, a derived one from the cell's tails as the fit took them
 * (tails NULL: none), or from the node's mean CPU utilisation beyond the
 * trained range (the curve continued). */
static double cell_node_value(const struct erg_cell_model *cm, size_t k, const double *node,
                              const double *tails) {
  int f = cm->feature_map[k];
  if (f >= ERG_NFEATURES) {
    double v = erg_model_derived_value_cell(cm->model, k, node[ERG_FEAT_CPU], tails);
    return isfinite(v) ? v : 0;
  }
  return f >= 0 ? node[f] : 0;
}

/* Rows of model features, keys first and [system] last, from the cell's
 * per-key rates mapped to the model's feature order. A derived (node-level)
 * feature is split by the rows' parts of the curve's energy (each agent
 * sample's curve power by its CPU shares, erg_grid_key_extra.curve_joules:
 * a job running while the node was lightly loaded gets that load's power
 * per CPU-second, not the cell's mean), else by CPU share; either way its
 * rows sum to the node's value and attribution conserves as for any other
 * feature. */
static double *cell_feature_rows(const struct erg_cell_model *cm, const struct erg_grid_result *r) {
  const struct erg_grid_cell *c = r->cell;
  size_t nf = cm->model->nfeatures, nrow = c->nkeys + 1;
  double *x = calloc(nrow * (nf ? nf : 1), sizeof *x), *cpu = malloc(2 * nrow * sizeof *cpu);
  if (!x || !cpu) {
    free(x);
    free(cpu);
    return NULL;
  }
  double *curve = cpu + nrow, curve_keys = 0, curve_sum = 0;
  double rates[ERG_NFEATURES], node[ERG_NFEATURES], cpu_sum = 0;
  for (size_t p = 0; p < nrow; p++) {
    if (p < c->nkeys)
      erg_grid_key_rates(c, p, r->step, rates);
    else
      erg_grid_system_rates(c, r->step, rates);
    for (size_t k = 0; k < nf; k++) {
      int f = cm->feature_map[k];
      x[p * nf + k] = f >= 0 && f < ERG_NFEATURES ? rates[f] : 0;
    }
    cpu[p] = rates[ERG_FEAT_CPU] > 0 ? rates[ERG_FEAT_CPU] : 0;
    cpu_sum += cpu[p];
    double w = p < c->nkeys ? (c->extra ? c->extra[p].curve_joules : 0)
                            : c->curve_joules - curve_keys; /* [system]: the rest */
    curve[p] = isfinite(w) && w > 0 ? w : 0;
    curve_keys += p < c->nkeys ? curve[p] : 0;
    curve_sum += curve[p];
  }
  /* Shares of the curve's energy where the samples had one, else CPU's. */
  const double *by = curve_sum > 0 ? curve : cpu;
  double by_sum = curve_sum > 0 ? curve_sum : cpu_sum;
  erg_grid_node_rates(c, r->step, node);
  double tbuf[ERG_NDERIVED];
  const double *tails = cell_tails(cm, c, tbuf);
  for (size_t k = 0; k < nf && by_sum > 0; k++) {
    if (cm->feature_map[k] < ERG_NFEATURES)
      continue;
    double v = cell_node_value(cm, k, node, tails);
    for (size_t p = 0; p < nrow; p++)
      x[p * nf + k] = v * by[p] / by_sum;
  }
  free(cpu);
  return x;
}

/* The model's node-level prediction from the cell's node totals; notes
 * in out whether a node feature was beyond the model's training range. */
static double cell_predict(const struct erg_cell_model *cm, const struct erg_grid_result *r,
                           struct erg_cell_power *out) {
  double node[ERG_NFEATURES], x[ERG_FIT_MAX_FEATURES], tbuf[ERG_NDERIVED];
  erg_grid_node_rates(r->cell, r->step, node);
  const double *tails = cell_tails(cm, r->cell, tbuf);
  for (size_t k = 0; k < cm->model->nfeatures; k++)
    x[k] = cell_node_value(cm, k, node, tails);
  struct erg_range_excess e;
  if (erg_model_beyond_training(cm->model, x, node[ERG_FEAT_CPU], &e)) {
    out->beyond_training = true;
    erg_strlcpy(out->beyond_feature, e.feature, sizeof out->beyond_feature);
    out->beyond_value = e.value;
    out->beyond_training_max = e.training_max;
  }
  return erg_model_predict(cm->model, x);
}

double erg_cell_predict(const struct erg_cell_model *cm, const struct erg_grid_cell *c,
                        unsigned step) {
  if (!cm || !cm->model || !c)
    return NAN;
  struct erg_grid_result r = {.t0 = c->t0, .step = step, .cell = c};
  struct erg_cell_power ignored = {0};
  return cell_predict(cm, &r, &ignored);
}

size_t erg_cell_model_x(const struct erg_cell_model *cm, const struct erg_grid_cell *c,
                        unsigned step, double *x) {
  if (!cm || !cm->model || !c)
    return 0;
  double node[ERG_NFEATURES], tbuf[ERG_NDERIVED];
  erg_grid_node_rates(c, step, node);
  const double *tails = cell_tails(cm, c, tbuf);
  for (size_t k = 0; k < cm->model->nfeatures; k++)
    x[k] = cell_node_value(cm, k, node, tails);
  return cm->model->nfeatures;
}

double erg_cell_predict_var(const struct erg_cell_model *cm, const struct erg_grid_cell *c,
                            unsigned step) {
  if (!cm || !cm->model || !c)
    return NAN;
  const struct erg_model *m = cm->model;
  if (m->ncov != m->nfeatures + 1)
    return 0;
  double x[ERG_FIT_MAX_FEATURES], v = 0;
  erg_cell_model_x(cm, c, step, x);
  for (size_t k = 0; k < m->nfeatures; k++)
    for (size_t e = 0; e < m->nfeatures; e++)
      v += x[k] * m->cov[1 + k][1 + e] * x[e];
  return isfinite(v) && v > 0 ? v : 0;
}

int erg_cell_model_gpu(const struct erg_cell_model *cm) {
  for (size_t k = 0; cm && cm->model && k < cm->model->nfeatures; k++)
    if (cm->feature_map[k] == ERG_FEAT_GPU)
      return cm->model->coef[k] > 0 && isfinite(cm->model->coef[k]) ? (int)k : -1;
  return -1;
}

void erg_cell_model_curve(const struct erg_cell_model *cm, double ncpu, double coef[ERG_NDERIVED]) {
  memset(coef, 0, ERG_NDERIVED * sizeof *coef);
  const struct erg_model *m = cm ? cm->model : NULL;
  if (!m || !cm->feature_map || !(m->ncpu > 0) || m->ncpu != ncpu)
    return;
  for (size_t k = 0; k < m->nfeatures; k++) {
    int d = cm->feature_map[k] - ERG_NFEATURES;
    if (d >= 0 && d < ERG_NDERIVED && isfinite(m->coef[k]) && m->coef[k] > 0)
      coef[d] = m->coef[k];
  }
}

/* A cell without GPU readings on a node whose model has a GPU term (the
 * GPUs were lost, NVML failed): the boards still draw power the meter
 * sees, but no process is known to use it. What the measurement exceeds
 * the prediction by goes to [system] as GPU power, so the processes keep
 * their modelled shares instead of absorbing the GPUs' power. */
static void cell_gpu_unseen(const struct erg_cell_model *cm, const struct erg_grid_result *r,
                            double total, double *x) {
  int k = erg_cell_model_gpu(cm);
  if (k < 0 || r->cell->seen & (1u << ERG_FEAT_GPU) || !isfinite(r->measured_watts) ||
      !isfinite(cm->model->idle_watts))
    return;
  struct erg_cell_power ignored = {0};
  double excess = total - cell_predict(cm, r, &ignored);
  if (excess > 0)
    x[r->cell->nkeys * cm->model->nfeatures + (size_t)k] = excess / cm->model->coef[k];
}

/* The idle GPUs' power in a cell with GPU readings (boards no process
 * used): their board term leaves [system]'s row (x) and is returned, to be
 * idle power that follows the idle policy like β0 (docs/gpu.md, issue 26:
 * "the GPU's idle part follows the node's idle policy"). 0 without a GPU
 * term or an idle GPU. */
static double cell_gpu_idle(const struct erg_cell_model *cm, const struct erg_grid_result *r,
                            double *x) {
  int k = erg_cell_model_gpu(cm);
  if (k < 0 || !(r->cell->seen & (1u << ERG_FEAT_GPU)))
    return 0;
  double rate = erg_grid_gpu_idle_rate(r->cell, r->step);
  double *sys = &x[r->cell->nkeys * cm->model->nfeatures + (size_t)k];
  rate = rate < *sys ? rate : *sys;
  if (!(rate > 0))
    return 0;
  *sys -= rate;
  return erg_model_term(cm->model, (size_t)k, rate);
}

static int cell_attribute_model(const struct erg_cell_model *cm, const struct erg_grid_result *r,
                                struct erg_attr_share *shares, struct erg_cell_power *out) {
  const struct erg_grid_cell *c = r->cell;
  bool no_meter = r->flags & ERG_CELL_NO_METER, no_agent = r->flags & ERG_CELL_NO_AGENT;
  out->modelled_watts = no_agent ? NAN : cell_predict(cm, r, out);
  /* Without a reading the prediction stands in, marked estimated. */
  double total = no_meter ? out->modelled_watts : r->measured_watts;
  if (!isfinite(total))
    return 1;
  double *x = cell_feature_rows(cm, r), *w = malloc((c->nkeys + 1) * sizeof *w);
  struct erg_attribution a;
  int rc = x && w ? 0 : -1;
  double gpu_idle = 0, idle = cm->model->idle_watts;
  if (rc == 0) {
    cell_gpu_unseen(cm, r, total, x);
    gpu_idle = cell_gpu_idle(cm, r, x);
  }
  if (rc == 0 &&
      erg_attribute_cell_idle(cm->model, idle + gpu_idle, total, x, c->nkeys + 1, c->nkeys,
                              (enum erg_idle_policy)cm->idle_policy, w, &a) != 0)
    rc = 1;
  for (size_t p = 0; rc == 0 && p <= c->nkeys; p++)
    shares[p] =
        (struct erg_attr_share){.key = p < c->nkeys ? c->keys[p].key : "[system]", .watts = w[p]};
  double dyn[2] = {0, 0};
  if (rc == 0 && cm->unc) {
    struct erg_model *beyond = unc_beyond_model(cm->model, out);
    if (cell_key_uncertainty(beyond ? beyond : cm->model, idle + gpu_idle, &a, x, c,
                             cm->idle_policy, cm->unc, shares, dyn) != 0)
      rc = -1;
    free(beyond);
  }
  if (rc == 0) {
    out->total_watts = a.total_watts;
    out->idle_watts = a.idle_watts;
    out->dynamic_watts = a.dynamic_watts;
    out->idle_separate_watts = a.idle_separate_watts;
    out->estimated = no_meter;
    out->dynamic_sd_watts = dyn[0];
    out->dynamic_var_watts2 = dyn[1];
    /* Below the idle power both parts of it shrink alike. */
    out->gpu_idle_watts = gpu_idle > 0 ? gpu_idle * a.idle_watts / (idle + gpu_idle) : 0;
  }
  free(x);
  free(w);
  return rc;
}

int erg_cell_attribute(const struct erg_cell_model *cm, double idle_watts,
                       const struct erg_grid_result *r, struct erg_attr_share *shares,
                       struct erg_cell_power *out) {
  *out = (struct erg_cell_power){.total_watts = NAN,
                                 .idle_watts = NAN,
                                 .dynamic_watts = NAN,
                                 .idle_separate_watts = NAN,
                                 .modelled_watts = NAN};
  if (cm && cm->model)
    return cell_attribute_model(cm, r, shares, out);
  /* No model: CPU share of measured − configured idle, and no estimate for
   * cells without a reading. */
  if (r->flags & ERG_CELL_NO_METER)
    return 1;
  return cpu_share(r->cell, r->measured_watts, idle_watts, cm ? cm->idle_policy : ERG_IDLE_SEPARATE,
                   cm ? cm->unc : NULL, shares, out);
}

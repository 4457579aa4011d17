// SPDX-License-Identifier: GPL-3.0-or-later
/* Nodes behind one shared meter ([group.NAME], docs/model.md "Shared
 * meters"). Every member's grid receives the whole meter; before a cell is
 * finalised the members' models predict each member's power in it, and
 * each member is given the measured power in proportion, so the shares
 * add up to the meter exactly and a busy node gets more than an idle one.
 * The meter lag is estimated once, from the group's summed activity, by
 * the first member; the others follow it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collector_int.h"
#include "erg_fit.h"
#include "state.h"

int groups_build(struct collector *c) {
  const struct erg_collector_config *cfg = c->cfg;
  if (cfg->ngroups == 0)
    return 0;
  c->groups = calloc((size_t)cfg->ngroups, sizeof *c->groups);
  if (!c->groups)
    return -1;
  c->ngroups = cfg->ngroups;
  for (int g = 0; g < cfg->ngroups; g++) {
    struct group_state *gs = &c->groups[g];
    gs->cfg = &cfg->groups[g];
    for (int m = 0; m < gs->cfg->nmembers; m++)
      for (size_t i = 0; i < c->nnodes; i++)
        if (c->nodes[i]->cfg_index == gs->cfg->members[m]) {
          c->nodes[i]->group = g;
          /* Its measured power is the whole meter: the group's window. */
          c->nodes[i]->grid.tailwin_group = true;
          gs->members[gs->nmembers++] = c->nodes[i];
        }
    if (gs->nmembers != gs->cfg->nmembers)
      return -1; /* configured nodes exist from the start */
    gs->cov_stamp = NAN;
  }
  return 0;
}

void groups_free(struct collector *c) {
  for (int g = 0; c->groups && g < c->ngroups; g++) {
    free(c->groups[g].cov);
    group_tailwin_free(&c->groups[g]);
  }
  free(c->groups);
  c->groups = NULL;
  c->ngroups = 0;
}

struct erg_lag *node_lag(struct collector *c, struct node_state *n) {
  return n->group >= 0 ? &c->groups[n->group].members[0]->lag : &n->lag;
}

bool node_lag_follows(const struct collector *c, const struct node_state *n) {
  return n->group >= 0 && c->groups[n->group].members[0] != n;
}

/* A member whose model has a GPU term, with agent data but no GPU
 * readings in the cell (its GPUs were lost, NVML failed): its boards
 * still draw power the meter sees, which its prediction lacks
 * (attribute.c's cell_gpu_unseen for a node on its own meter). */
static bool member_gpus_unseen(const struct erg_cell_model *cm, const struct erg_grid_cell *cell,
                               unsigned step) {
  return cell && cell->agent_seconds >= step * 0.5 && !(cell->seen & (1u << ERG_FEAT_GPU)) &&
         erg_cell_model_gpu(cm) >= 0;
}

/* The model's term of the member's idle GPUs in the cell (docs/gpu.md
 * "Idle GPUs follow the idle policy"): idle power, not predicted activity. */
static double member_gpu_idle(const struct erg_cell_model *cm, const struct erg_grid_cell *cell,
                              unsigned step) {
  int k = erg_cell_model_gpu(cm);
  if (k < 0 || !cell || !(cell->seen & (1u << ERG_FEAT_GPU)))
    return 0;
  return erg_model_term(cm->model, (size_t)k, erg_grid_gpu_idle_rate(cell, step));
}

/* The members' cross covariance of the fit their models are of, looked
 * for once per fit (the models' common created_unix_seconds) and again
 * when the file changes while none is loaded: loaded when
 * MODEL_DIR/group/NAME.json is of that fit and names every member with its
 * model's features. Said once per attempt either way. */
static void group_cov_update(struct group_state *g) {
  double stamp = NAN;
  for (int m = 0; m < g->nmembers; m++) {
    const struct erg_model *mm = node_model_cell(g->members[m]->model).model;
    if (!mm || (m > 0 && mm->created_unix_seconds != stamp))
      return; /* no model yet, or of different fits: nothing to look for */
    stamp = mm->created_unix_seconds;
  }
  if ((stamp == g->cov_stamp && g->cov) || g->nmembers > ERG_GROUP_MAX_NODES)
    return;
  char path[1200], safe[ERG_NAME_MAX], why[1400];
  erg_name_sanitize(g->cfg->name, strlen(g->cfg->name), safe);
  snprintf(path, sizeof path, "%s/group/%s.json", node_model_dir(g->members[0]->model), safe);
  /* Not read for this fit: again only once the file changed (it may come
   * after the models, copied by hand). */
  struct stat st;
  struct timespec mtime = stat(path, &st) == 0 ? st.st_mtim : (struct timespec){0, 0};
  if (stamp == g->cov_stamp && mtime.tv_sec == g->cov_mtime.tv_sec &&
      mtime.tv_nsec == g->cov_mtime.tv_nsec)
    return;
  g->cov_stamp = stamp;
  g->cov_mtime = mtime;
  free(g->cov);
  g->cov = NULL;
  struct erg_group_cov *gc = malloc(sizeof *gc);
  if (!gc)
    return;
  if (erg_group_cov_load(gc, path, why, sizeof why) != 0) {
    erg_warn("group %s: the members' cross covariance not read (%s): each member's split "
             "interval takes the others' errors as independent (narrower than the joint fit's "
             "where members' coefficients trade off); `erg fit --group %s` writes it",
             g->cfg->name, why, g->cfg->name);
    free(gc);
    return;
  }
  for (int m = 0; m < g->nmembers; m++) {
    const struct node_state *n = g->members[m];
    g->cov_index[m] = erg_group_cov_member(gc, n->name, node_model_cell(n->model).model);
    if (g->cov_index[m] < 0) {
      erg_warn("group %s: %s is not of the fit of node %s's model (another fit, or its features "
               "differ): not used; `erg fit --group %s` writes both again",
               g->cfg->name, path, n->name, g->cfg->name);
      free(gc);
      return;
    }
  }
  g->cov = gc;
  erg_info("group %s: the members' cross covariance from %s", g->cfg->name, path);
}

/* V[a][b] = Cov(d_a, d_b) of the members' dynamic predictions from the
 * loaded cross covariance, x[m] member m's features in the cell. */
static void group_cross(const struct group_state *g, double x[][ERG_FIT_MAX_FEATURES],
                        double V[][ERG_GROUP_MAX_NODES]) {
  for (int a = 0; a < g->nmembers; a++)
    for (int b = 0; b <= a; b++)
      V[a][b] = V[b][a] =
          erg_group_cov_cross(g->cov, (size_t)g->cov_index[a], x[a], (size_t)g->cov_index[b], x[b]);
}

void group_split_cell(struct collector *c, struct group_state *g, int64_t t0) {
  double pred[ERG_MAX_GROUP_NODES], dyn[ERG_MAX_GROUP_NODES], pvar[ERG_MAX_GROUP_NODES],
      sum = 0, dsum = 0, pvsum = 0;
  bool unseen[ERG_MAX_GROUP_NODES];
  int missing = 0, nunseen = 0;
  unsigned step = c->cfg->step_seconds;
  /* The members' features for the cross covariance (loaded: ≤ 16 members). */
  if (c->cfg->energy_intervals)
    group_cov_update(g);
  double x[ERG_GROUP_MAX_NODES][ERG_FIT_MAX_FEATURES];
  bool cross = g->cov && c->cfg->energy_intervals;
  for (int m = 0; m < g->nmembers; m++) {
    const struct node_state *n = g->members[m];
    struct erg_cell_model cm = node_model_cell(n->model);
    /* A member with no data for the cell (agent away) draws its idle. */
    const struct erg_grid_cell *cell = erg_grid_open_cell(&n->grid, t0);
    struct erg_grid_cell none = {.t0 = t0};
    cross = cross && erg_cell_model_x(&cm, cell ? cell : &none, step, x[m]) ==
                         g->cov->nfeatures[g->cov_index[m]];
    pred[m] = erg_cell_predict(&cm, cell ? cell : &none, step);
    dyn[m] = cm.model ? pred[m] - cm.model->idle_watts - member_gpu_idle(&cm, cell, step) : NAN;
    unseen[m] = member_gpus_unseen(&cm, cell, step);
    pvar[m] = c->cfg->energy_intervals ? erg_cell_predict_var(&cm, cell ? cell : &none, step) : 0;
    pvar[m] = isfinite(pvar[m]) ? pvar[m] : 0;
    pvsum += pvar[m];
    nunseen += unseen[m];
    if (!isfinite(pred[m]) || pred[m] < 0) {
      missing++;
      continue;
    }
    sum += pred[m];
    dsum += dyn[m] > 0 ? dyn[m] : 0;
  }
  /* Until every member has a model there is nothing to weigh by: an equal
   * split, as fixed factors would give (erg fit --group makes models). */
  bool equal = missing > 0 || !(sum > 0);
  if (equal) {
    g->equal_split_cells++;
    if (!g->equal_said) {
      g->equal_said = 1;
      erg_warn("group %s: %d of %d nodes have no model yet: the shared meter is split "
               "equally until `erg fit --group %s` has fitted them (logged once; "
               "erg_group_equal_split_cells_total)",
               g->cfg->name, missing, g->nmembers, g->cfg->name);
    }
    for (int m = 0; m < g->nmembers; m++) {
      g->members[m]->share = 1.0 / g->nmembers;
      g->members[m]->share_equal = 1;
      g->members[m]->share_sd_watts = 0;
    }
    return;
  }
  if (g->equal_said) {
    g->equal_said = 0;
    erg_info("group %s: every node has a model: the shared meter is split by them", g->cfg->name);
  }
  /* Each member gets its prediction; what the meter shows beyond the sum
   * (model error, noise) is activity the models missed, so it goes with the
   * predicted dynamic power, not with idle (nor the idle GPUs' term): an
   * idle member behind a busy one keeps its idle. With no dynamic power
   * predicted it goes by the whole prediction. An excess while members' GPUs went unread is their
   * boards' power, known to be theirs: it goes to them in equal parts (and
   * there to [system], as on a meter of their own), so that the other
   * members do not absorb it. The shares are fractions of the meter,
   * applied to whatever it measured in the cell. */
  double meter = erg_grid_open_watts(&g->members[0]->grid, t0),
         resid = isfinite(meter) ? meter - sum : 0;
  double w[ERG_MAX_GROUP_NODES], wsum = 0;
  for (int m = 0; m < g->nmembers; m++) {
    double d = dyn[m] > 0 ? dyn[m] : 0;
    if (resid > 0 && nunseen > 0)
      w[m] = pred[m] + (unseen[m] ? resid / nunseen : 0);
    else
      w[m] = pred[m] + resid * (dsum > 0 ? d / dsum : pred[m] / sum);
    w[m] = w[m] > 0 ? w[m] : 0; /* the meter far below the models: none below 0 W */
    wsum += w[m];
  }
  /* A member's dynamic part is the meter's dynamic power D times
   * ψ = d_m / Σ d (what the split above comes to): the members' dynamic
   * predictions' errors δd_j move it by D / Σ d · Σ_j (1[j = m] − ψ) δd_j,
   * of variance (D / Σ d)² gᵀ V g over their covariance V: the joint fit's,
   * cross terms included, when its file is loaded; else V's diagonal
   * (each member's own block), the members as if independent. */
  double D = isfinite(meter) ? meter - (sum - dsum) : dsum;
  double V[ERG_GROUP_MAX_NODES][ERG_GROUP_MAX_NODES];
  if (cross)
    group_cross(g, x, V);
  g->cross_cov_cells += cross;
  for (int m = 0; m < g->nmembers; m++) {
    g->members[m]->share = wsum > 0 ? w[m] / wsum : pred[m] / sum;
    g->members[m]->share_equal = 0;
    double psi = dsum > 0 ? (dyn[m] > 0 ? dyn[m] : 0) / dsum : 0, v = 0;
    if (cross)
      for (int a = 0; a < g->nmembers; a++)
        for (int b = 0; b < g->nmembers; b++)
          v += ((a == m) - psi) * ((b == m) - psi) * V[a][b];
    else
      v = (1 - psi) * (1 - psi) * pvar[m] + psi * psi * (pvsum - pvar[m]);
    g->members[m]->share_sd_watts = dsum > 0 && D > 0 && v > 0 ? D / dsum * sqrt(v) : 0;
  }
}

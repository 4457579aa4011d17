// SPDX-License-Identifier: GPL-3.0-or-later
/* Finalising grid cells: once a cell can get no more data (the settle
 * delay, the meter lag, a held counter), its power is attributed with the
 * node's model and it goes to the journal, the store and the key archives
 * (key_archives.c); shared meters close their members' cells together. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "erg_fit.h"
#include "erg_store.h"
#include "state.h"

/* A cluster cell is complete once every node with a grid has finalised
 * it; a node that lags behind the horizon (settle + largest lag + a step)
 * does not hold the others back, its contribution then counts as late. */
static void collector_flush_cluster(struct collector *c, int64_t now) {
  int64_t done = INT64_MAX;
  for (size_t i = 0; i < c->nnodes; i++) {
    int64_t nf = c->nodes[i]->grid.next_final;
    if (nf && nf < done)
      done = nf;
  }
  int64_t horizon =
      now - (int64_t)((c->cfg->settle_steps + 2) * c->cfg->step_seconds + c->cfg->lag_max_seconds);
  if (done == INT64_MAX || done < horizon)
    done = horizon;
  cluster_flush(c->cluster, done, cluster_write_cell, c);
  cluster_flush(c->gpu_cluster, done, cluster_write_gpu_cell, c);
}

/* A feed of the node reads power estimated from A x V (source state of
 * its channels' last readings: what a PDU offers does not change). */
static bool node_power_estimated(const struct collector *c, const struct node_state *n) {
  const struct erg_node_config *nc = NULL;
  for (int i = 0; i < c->cfg->nnodes && !nc; i++)
    if (!strcmp(c->cfg->nodes[i].name, n->name))
      nc = &c->cfg->nodes[i];
  for (int f = 0; nc && f < nc->nfeeds; f++)
    if (c->sources[nc->feeds[f].source].power_estimated[nc->feeds[f].channel])
      return true;
  return false;
}

struct cell_ctx {
  struct collector *c;
  struct node_state *n;
};

/* The cell's journal row: node feature rates, columns as seen so far. */
static void node_journal(struct collector *c, struct node_state *n, const struct erg_grid_result *r,
                         bool estimated) {
  double x[ERG_NFEATURES];
  erg_grid_node_rates(r->cell, r->step, x);
  /* Disk bytes always (the agent always reads them); counters only once
   * seen, so a node without perf counters has no all-zero columns. */
  n->journal_columns |= (1u << ERG_FEAT_DISK) | (r->cell->seen & ~(1u << ERG_FEAT_CPU));
  /* The curve's tails as the cell's mean over its samples (issue 38);
   * always, as the disk bytes ("nan" until the node's CPU count is
   * known), so a node's first agent sample does not rotate the file. */
  n->journal_columns |= ERG_JOURNAL_TAILS;
  int flags =
      r->flags | (estimated ? ERG_CELL_ESTIMATED : 0) | (n->group >= 0 ? ERG_CELL_SHARED : 0);
  if (node_power_estimated(c, n))
    flags |= ERG_CELL_POWER_ESTIMATED;
  /* A cell aligned with no or a wavering lag estimate is off by tens of
   * watts where the load changes: kept, but flagged so the fit skips it. */
  if (c->cfg->lag_max_seconds && erg_lag_cell_unsure(&n->lag, r->t0, r->step)) {
    flags |= ERG_CELL_LAG_UNSURE;
    n->lag_unsure_cells++;
  } else if (c->cfg->lag_max_seconds && erg_lag_unresolved(&n->lag)) {
    n->lag_unresolved_cells++;
  }
  struct erg_journal_row jr = {.t0 = r->t0,
                               .step_seconds = r->step,
                               .measured_watts = r->measured_watts,
                               .flags = flags,
                               .cpu_seconds_per_second = x[ERG_FEAT_CPU],
                               .disk_bytes_per_second = x[ERG_FEAT_DISK],
                               .instructions_per_second = x[ERG_FEAT_INSTRUCTIONS],
                               .cycles_per_second = x[ERG_FEAT_CYCLES],
                               .gpu_watts =
                                   r->cell->seen & (1u << ERG_FEAT_GPU) ? x[ERG_FEAT_GPU] : NAN,
                               .columns = n->journal_columns,
                               .ncpu = n->ncpu,
                               .average_seconds = (unsigned)n->lag.average_seconds};
  for (int d = 0; d < ERG_NDERIVED; d++)
    jr.tails[d] = r->cell->tail_covered_seconds > 0
                      ? r->cell->tail_seconds[d] / r->cell->tail_covered_seconds
                      : NAN;
  char why[256];
  int rc =
      erg_journal_append_cached(c->journal_dir, n->name, &jr, c->cfg->journal_max_bytes,
                                c->cfg->journal_max_age_seconds, &n->journal_file, why, sizeof why);
  c->store_errors += rc != 0;
  store_spell_note(&c->journal_spell, rc ? why : NULL,
                   (int64_t)(erg_time_monotonic_ns() / ERG_NS_PER_S));
}

/* Cells beyond the model's training range are counted (/metrics); the
 * first one of each model is logged with the feature and by how much. */
static void node_beyond_training(struct node_state *n, const struct erg_cell_power *pw) {
  n->out_of_range_cells++;
  if (!node_model_first_beyond(n->model))
    return;
  erg_warn("node %s: %s %.4g is %.2f x its training maximum %.4g: linear terms extrapolated, "
           "the utilisation curve continued with its end slope; expected after a first fit on "
           "little or idle data: a refit once the node has run its usual load covers it (once "
           "per model; such cells are counted in erg_cells_out_of_training_range_total)",
           n->name, pw->beyond_feature, pw->beyond_value,
           pw->beyond_value / pw->beyond_training_max, pw->beyond_training_max);
}

/* The tails' window chosen for the node (tailwin.c): kept for /metrics,
 * logged when it changes. */
static void node_tail_window(struct collector *c, struct node_state *n) {
  struct erg_tailwin_status st;
  erg_tailwin_status(&n->grid, &st);
  if (st.update_seconds > 0)
    n->meter_update_seconds = st.update_seconds;
  if (st.choices == n->tail_choices)
    return;
  n->tail_choices = st.choices;
  n->tail_window_seconds = st.window_seconds;
  if ((st.chosen == n->tail_chosen && st.choices > 1) || n->group >= 0)
    return; /* a member's is its group's, said and chosen anew by it */
  _Static_assert(ERG_TAILWIN_CANDS == 5, "one RMSE per candidate");
  erg_info("node %s: the curve's tails from %s (meter updates every %.3f s; held-out RMSE "
           "%.3f / %.3f / %.3f / %.3f / %.3f W)",
           n->name, erg_tailwin_what(st.chosen), st.update_seconds, st.rmse_watts[0],
           st.rmse_watts[1], st.rmse_watts[2], st.rmse_watts[3], st.rmse_watts[4]);
  n->tail_chosen = st.chosen;
  node_tailwin_save(c, n, st.chosen, st.update_seconds);
}

static void collector_cell(void *user, const struct erg_grid_result *whole) {
  struct cell_ctx *ctx = user;
  struct collector *c = ctx->c;
  struct node_state *n = ctx->n;
  /* A group member's power is its share of the shared meter; the journal
   * keeps the whole meter for the joint fit. */
  struct erg_grid_result shared = *whole;
  if (n->group >= 0)
    shared.measured_watts *= n->share;
  const struct erg_grid_result *r = &shared;
  int64_t t_end = r->t0 + r->step;
  struct erg_store_node_cell cell = {.t_end = t_end,
                                     .measured_watts = r->measured_watts,
                                     .modelled_watts = NAN,
                                     .idle_watts = NAN,
                                     .dynamic_watts = NAN,
                                     .unattributed_watts = NAN};
  n->last_measured_watts = r->measured_watts;
  node_tail_window(c, n);
  node_model_note_measured(n->model, whole->measured_watts);
  struct erg_attr_share *sh = malloc((r->cell->nkeys + 1) * sizeof *sh);
  if (!sh)
    return;
  struct erg_cell_model cm = node_model_cell(n->model);
  struct erg_unc_cell unc;
  if (c->cfg->energy_intervals) {
    node_unc_cell(c, n, r, &unc);
    cm.unc = &unc;
  }
  struct erg_cell_power pw;
  int rc = erg_cell_attribute(&cm, n->idle_watts, r, sh, &pw);
  cell.modelled_watts = pw.modelled_watts;
  n->last_modelled_watts = pw.modelled_watts;
  if (pw.beyond_training)
    node_beyond_training(n, &pw);
  if (rc == 0) {
    cell.estimated = pw.estimated;
    cell.idle_watts = pw.idle_watts;
    cell.dynamic_watts = pw.dynamic_watts;
    cell.unattributed_watts = (r->flags & ERG_CELL_NO_AGENT) ? pw.dynamic_watts : 0;
    n->last_idle_watts = pw.idle_watts;
  }
  node_journal(c, n, whole, rc == 0 && pw.estimated);
  writer_node(c->writer, n->name, &cell);
  if (isfinite(r->measured_watts))
    n->measured_joules += r->measured_watts * r->step;
  /* Dynamic energy counts where keys are written, so Σ key energy of any
   * kind equals it; without agent data it is unattributed. */
  if (rc == 0 && isfinite(pw.idle_watts) && isfinite(pw.dynamic_watts)) {
    n->idle_joules += pw.idle_watts * r->step;
    if (r->flags & ERG_CELL_NO_AGENT)
      n->unattributed_joules += pw.dynamic_watts * r->step;
    else {
      n->dynamic_joules += pw.dynamic_watts * r->step;
      n->dynamic_sd_joules += pw.dynamic_sd_watts * r->step;
      n->dynamic_var_joules2 += pw.dynamic_var_watts2 * r->step * r->step;
    }
  }
  if (rc == 0 && !(r->flags & ERG_CELL_NO_AGENT)) {
    node_write_keys(c, n, t_end, sh, r->cell->nkeys);
    if (c->cfg->energy_intervals)
      node_write_unc(c, n, t_end, &pw);
    node_gpu_cell(c, n, r, sh, &pw);
    n->has_data = 1;
    c->render_due |= c->last_render == 0;
  }
  free(sh);
}

/* How long an energy counter without power readings may stand still and
 * still have its next move spread back over the time since (pdu.c,
 * holding): the cells it covers stay open meanwhile, so it must fit in the
 * grid's ring beside the settle delay and the largest lag. */
unsigned collector_hold_max_seconds(const struct collector *c) {
  const struct erg_collector_config *cfg = c->cfg;
  long ring = (long)(ERG_GRID_SLOTS - cfg->settle_steps - 4) * cfg->step_seconds -
              (long)cfg->lag_max_seconds;
  return ring < (long)cfg->step_seconds    ? 0
         : ring > COUNTER_HOLD_MAX_SECONDS ? COUNTER_HOLD_MAX_SECONDS
                                           : (unsigned)ring;
}

/* The longest a feed of the node has been held, in whole seconds: cells
 * after its last move wait for the next one. */
static unsigned node_held_seconds(const struct collector *c, const struct node_state *n) {
  if (n->cfg_index < 0)
    return 0;
  const struct erg_node_config *nc = &c->cfg->nodes[n->cfg_index];
  uint64_t now = erg_time_realtime_ns(), held = 0;
  for (int f = 0; f < nc->nfeeds; f++) {
    const struct erg_node_feed *fd = &nc->feeds[f];
    const struct erg_pdu_counter *pc = &c->sources[fd->source].counters[fd->channel];
    if (pc->held && now > pc->prev_t_ns && now - pc->prev_t_ns > held)
      held = now - pc->prev_t_ns;
  }
  return (unsigned)((held + ERG_NS_PER_S - 1) / ERG_NS_PER_S);
}

/* How long after a cell's end it may still get data: the settle delay, and
 * the lag, as shifted meter data for a cell arrives lag seconds later, or
 * since a held counter's last move, whichever is longer. */
static unsigned node_settle_seconds(const struct collector *c, const struct node_state *n) {
  unsigned lag = (unsigned)ceil(erg_lag_shift_seconds(&n->lag));
  unsigned settle = c->cfg->settle_steps * c->cfg->step_seconds + lag, held;
  if ((held = node_held_seconds(c, n)) > 0 && held + lag + c->cfg->step_seconds > settle)
    settle = held + lag + c->cfg->step_seconds;
  return settle;
}

/* The members of a group close each cell together: their models weigh
 * their shares of the meter first (groups.c). Returns the cells closed. */
static size_t group_finalize(struct collector *c, struct group_state *g, int64_t now) {
  unsigned settle = 0, step = c->cfg->step_seconds;
  struct node_state *lead = g->members[0];
  for (int m = 0; m < g->nmembers; m++) {
    struct node_state *n = g->members[m];
    if (!n->loaded)
      return 0;  /* its stored state is still being read: wait for it */
    if (m > 0) { /* the lag the first member estimated from the group */
      erg_lag_follow(&n->lag, &lead->lag);
      n->lag_seconds = lead->lag_seconds;
      n->lag_correlation = lead->lag_correlation;
      n->lag_confidence = lead->lag_confidence;
      n->lag_shift_seconds = lead->lag_shift_seconds;
    }
    unsigned s = node_settle_seconds(c, n);
    settle = s > settle ? s : settle;
  }
  size_t closed = 0;
  for (;;) {
    int64_t t0 = 0;
    for (int m = 0; m < g->nmembers; m++) {
      int64_t nf = g->members[m]->grid.next_final;
      if (nf && (t0 == 0 || nf < t0))
        t0 = nf;
    }
    if (t0 == 0 || t0 + (int64_t)step + (int64_t)settle > now)
      return closed;
    group_tailwin_cell(c, g, t0);
    group_split_cell(c, g, t0);
    for (int m = 0; m < g->nmembers; m++) {
      struct cell_ctx ctx = {c, g->members[m]};
      closed +=
          erg_grid_finalize(&g->members[m]->grid, t0 + step + settle, settle, collector_cell, &ctx);
    }
  }
}

/* An agent sends in order, so once it sends time t its data for the cells
 * before t's window is complete; meter data exists only in real time, so
 * it is complete for cells past the settle delay. After a long collector
 * outage an agent's backlog arrives faster than wall-clock finalisation
 * moves the grid's window (ERG_GRID_SLOTS cells): close the cells that are
 * complete on both counts now, instead of dropping the backlog as future. */
void node_make_room(struct collector *c, struct node_state *n, uint64_t t_end_ns) {
  int64_t step = c->cfg->step_seconds;
  int64_t first_open = ((int64_t)(t_end_ns / ERG_NS_PER_S) / step - (ERG_GRID_SLOTS - 1)) * step;
  if (n->grid.next_final == 0 || first_open <= n->grid.next_final)
    return;
  /* finalize closes cell t0 while t0 + step + settle <= its "now". */
  int64_t now = (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S);
  int64_t upto = first_open + node_settle_seconds(c, n);
  struct cell_ctx ctx = {c, n};
  if (n->group >= 0 ? group_finalize(c, &c->groups[n->group], upto < now ? upto : now)
                    : erg_grid_finalize(&n->grid, upto < now ? upto : now,
                                        node_settle_seconds(c, n), collector_cell, &ctx))
    writer_commit(c->writer);
}

void collector_finalize(struct collector *c, int64_t now) {
  for (size_t i = 0; i < c->nnodes; i++) {
    struct node_state *n = c->nodes[i];
    struct cell_ctx ctx = {c, n};
    if (!n->loaded)
      continue; /* its stored state is still being read */
    node_model_tick(n->model, now);
    if (c->cfg->lag_max_seconds && now % 10 == 0 && !node_lag_follows(c, n))
      node_estimate_lag(c, n);
    if (n->group < 0)
      erg_grid_finalize(&n->grid, now, node_settle_seconds(c, n), collector_cell, &ctx);
  }
  for (int g = 0; g < c->ngroups; g++)
    group_finalize(c, &c->groups[g], now);
  collector_flush_cluster(c, now);
  writer_commit(c->writer);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Is a refitted model worse than the one in use? Both are scored on the
 * candidate's held-out cells (docs/model.md, "Not installing a worse
 * model"): each model's MAE stored from its own window says as much about
 * the window as about the model, so comparing those refuses a needed refit
 * after a hardware change, and lets a lucky quiet window install a worse
 * model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"
#include "fit_int.h"

void erg_holdout_init(struct erg_holdout *h) {
  erg_dataset_init(&h->cells);
  h->predicted_watts = NULL;
  h->idle_watts = NULL;
}

void erg_holdout_free(struct erg_holdout *h) {
  erg_dataset_free(&h->cells);
  free(h->predicted_watts);
  free(h->idle_watts);
  erg_holdout_init(h);
}

int fit_holdout_begin(struct erg_holdout *h, const struct erg_dataset *ds, size_t max_rows) {
  char why[128];
  erg_holdout_free(h);
  erg_strlcpy(h->cells.node, ds->node, sizeof h->cells.node);
  h->cells.step_seconds = ds->step_seconds;
  for (size_t k = 0; k < ds->nfeatures; k++)
    if (erg_dataset_add_feature(&h->cells, ds->feature[k], why, sizeof why) < 0)
      return -1;
  h->predicted_watts = malloc((max_rows ? max_rows : 1) * sizeof *h->predicted_watts);
  h->idle_watts = malloc((max_rows ? max_rows : 1) * sizeof *h->idle_watts);
  return h->predicted_watts && h->idle_watts ? 0 : -1;
}

int fit_holdout_add(struct erg_holdout *h, const struct erg_dataset *ds, size_t i,
                    double predicted_watts, double idle_watts) {
  double x[ERG_FIT_MAX_FEATURES];
  for (size_t k = 0; k < ds->nfeatures; k++)
    x[k] = ds->x[k][i];
  h->predicted_watts[h->cells.nrows] = predicted_watts;
  h->idle_watts[h->cells.nrows] = idle_watts;
  return erg_dataset_add_row(&h->cells, ds->time_unix_seconds[i], ds->row_step_seconds[i],
                             ds->measured_watts[i], ds->flags[i], x);
}

/* Where each of m's features comes from in ds: a measured feature is its
 * column by name; a derived one is computed from the CPU column with m's
 * own ncpu, as ergd computes it for m (the data's CPU count may differ
 * after a hardware change). -1: ds cannot give it; its name goes into
 * missing. */
static void compare_columns(const struct erg_model *m, const struct erg_dataset *ds, int *col,
                            int *derived, char *missing, size_t len) {
  int cpu = fit_dataset_column(ds, FIT_CPU_COLUMN);
  missing[0] = '\0';
  for (size_t k = 0; k < m->nfeatures; k++) {
    derived[k] = erg_derived_index(m->feature[k]);
    col[k] = derived[k] >= 0 ? (m->ncpu > 0 ? cpu : -1) : fit_dataset_column(ds, m->feature[k]);
    if (col[k] < 0 && strlen(missing) + strlen(m->feature[k]) + 3 < len)
      strcat(strcat(missing, missing[0] ? ", " : ""), m->feature[k]);
  }
}

/* Row i's curve tails (the cell's means a journal carries, issue 38) in
 * t when ds has them all for m's CPU count, else NULL. */
static const double *compare_tails(const struct erg_model *m, const struct erg_dataset *ds,
                                   size_t i, double *t) {
  int nc = fit_dataset_column(ds, ERG_NCPU_COLUMN);
  if (nc < 0 || ds->x[nc][i] != m->ncpu)
    return NULL;
  for (int d = 0; d < ERG_NDERIVED; d++) {
    int c = fit_dataset_column(ds, erg_derived_names[d]);
    if (c < 0)
      return NULL;
    t[d] = ds->x[c][i];
  }
  return t;
}

/* m's prediction of row i, as ergd predicts the cell (the curve's tails
 * the row's own within the trained range); NaN when an input is missing
 * there. */
static double compare_predict(const struct erg_model *m, const struct erg_dataset *ds,
                              const int *col, const int *derived, size_t i) {
  double x[ERG_FIT_MAX_FEATURES], tbuf[ERG_NDERIVED];
  const double *tails = compare_tails(m, ds, i, tbuf);
  for (size_t k = 0; k < m->nfeatures; k++) {
    double v = col[k] < 0 ? NAN : ds->x[col[k]][i];
    x[k] = derived[k] >= 0 ? erg_model_derived_value_cell(m, k, v, tails) : v;
    if (!isfinite(x[k]))
      return NAN;
  }
  return erg_model_predict(m, x);
}

struct compare_result {
  size_t cells;                      /* held-out cells current could be scored on */
  double mae_current, mae_candidate; /* over those cells */
  char missing[256];                 /* current's features the cells lack */
};

static void compare_score(const struct erg_model *current, const struct erg_holdout *h,
                          struct compare_result *s) {
  const struct erg_dataset *ds = &h->cells;
  int col[ERG_FIT_MAX_FEATURES], derived[ERG_FIT_MAX_FEATURES];
  double ae_cur = 0, ae_new = 0;
  compare_columns(current, ds, col, derived, s->missing, sizeof s->missing);
  s->cells = 0;
  for (size_t i = 0; i < ds->nrows; i++) {
    double p = compare_predict(current, ds, col, derived, i), y = ds->measured_watts[i];
    if (!isfinite(p))
      continue;
    ae_cur += fabs(p - y);
    ae_new += fabs(h->predicted_watts[i] - y);
    s->cells++;
  }
  s->mae_current = s->cells ? ae_cur / (double)s->cells : NAN;
  s->mae_candidate = s->cells ? ae_new / (double)s->cells : NAN;
}

/* The tolerance covers that current may have been fitted on some of these
 * cells (an earlier refit of the same journal), a small in-sample edge,
 * and keeps equal models from being swapped back and forth. */
bool erg_model_is_worse(const struct erg_model *current, const struct erg_model *candidate,
                        const struct erg_holdout *holdout, double tolerance, char *why,
                        size_t whylen) {
  size_t n = holdout ? holdout->cells.nrows : 0;
  if (n == 0 || candidate->metrics.cells == 0) {
    snprintf(why, whylen, "new model has no held-out validation");
    return true;
  }
  if (!current) {
    snprintf(why, whylen, "held-out MAE %.2f W (new), no current model",
             candidate->metrics.mae_watts);
    return false;
  }
  struct compare_result s;
  compare_score(current, holdout, &s);
  /* A model that cannot predict most of what the node measures now is no
   * yardstick, and no better than the one that can. */
  if (s.cells * 2 < n) {
    snprintf(why, whylen,
             "held-out MAE %.2f W (new); the current model can be scored on only %zu "
             "of %zu held-out cells (%s%s): replaced",
             candidate->metrics.mae_watts, s.cells, n,
             s.missing[0] ? "the data lacks " : "its features are missing in most cells",
             s.missing);
    return false;
  }
  bool worse = s.mae_candidate > s.mae_current * (1 + tolerance);
  char own[64] = "none";
  if (current->metrics.cells && isfinite(current->metrics.mae_watts))
    snprintf(own, sizeof own, "%.2f W", current->metrics.mae_watts);
  snprintf(why, whylen,
           "held-out MAE %.2f W (new) vs %.2f W (current) on the same %zu of %zu "
           "cells (current's own validation: %s)%s",
           s.mae_candidate, s.mae_current, s.cells, n, own, worse ? ": worse" : "");
  return worse;
}

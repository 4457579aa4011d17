// SPDX-License-Identifier: GPL-3.0-or-later
/* The model file's optional "coefficient_covariance" (docs/model.md,
 * "Uncertainty"): the fit's covariance of (idle_watts, coefficients), for
 * the per-job intervals. Files without it load with ncov = 0. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fit_int.h"

#define COV_IDLE_TERM "idle_watts"

json_t *fit_cov_to_json(const struct erg_model *m) {
  if (m->ncov != m->nfeatures + 1 || m->ncov > ERG_MODEL_COV_MAX)
    return NULL;
  json_t *terms = json_array(), *rows = json_array();
  json_array_append_new(terms, json_string(COV_IDLE_TERM));
  for (size_t k = 0; k < m->nfeatures; k++)
    json_array_append_new(terms, json_string(m->feature[k]));
  for (size_t t = 0; t < m->ncov; t++) {
    json_t *row = json_array();
    for (size_t e = 0; e < m->ncov; e++)
      json_array_append_new(row, json_real(isfinite(m->cov[t][e]) ? m->cov[t][e] : 0));
    json_array_append_new(rows, row);
  }
  return json_pack("{s:s, s:I, s:f, s:o, s:o}", "method", "cluster-robust sandwich, time blocks",
                   "block_cells", (json_int_t)m->cov_block_cells, "misfit_correlation_cells",
                   m->misfit_correlation_cells > 0 ? m->misfit_correlation_cells : 1.0, "terms",
                   terms, "matrix", rows);
}

int fit_cov_from_json(struct erg_model *m, json_t *j, char *why, size_t whylen) {
  json_t *terms, *rows;
  json_int_t block = 0;
  double tau = 1;
  m->ncov = 0;
  if (!j)
    return 0;
  if (json_unpack(j, "{s:o, s:o, s?I, s?F}", "terms", &terms, "matrix", &rows, "block_cells",
                  &block, "misfit_correlation_cells", &tau) != 0 ||
      !isfinite(tau) || tau < 0 || !json_is_array(terms) || !json_is_array(rows)) {
    snprintf(why, whylen, "coefficient_covariance: needs the arrays terms and matrix");
    return -1;
  }
  size_t nt = json_array_size(terms);
  if (nt != m->nfeatures + 1 || nt > ERG_MODEL_COV_MAX || json_array_size(rows) != nt) {
    snprintf(why, whylen, "coefficient_covariance: %zu terms for %zu features", nt, m->nfeatures);
    return -1;
  }
  for (size_t t = 0; t < nt; t++) {
    const char *name = json_string_value(json_array_get(terms, t));
    const char *want = t ? m->feature[t - 1] : COV_IDLE_TERM;
    json_t *row = json_array_get(rows, t);
    if (!name || strcmp(name, want) != 0 || !json_is_array(row) || json_array_size(row) != nt) {
      snprintf(why, whylen, "coefficient_covariance: term %zu is not %s or its row not %zu long", t,
               want, nt);
      return -1;
    }
    for (size_t e = 0; e < nt; e++) {
      json_t *v = json_array_get(row, e);
      m->cov[t][e] = json_is_number(v) ? json_number_value(v) : NAN;
      if (!isfinite(m->cov[t][e]) || (t == e && m->cov[t][e] < 0)) {
        snprintf(why, whylen, "coefficient_covariance: entry %zu,%zu is not a finite variance", t,
                 e);
        return -1;
      }
    }
  }
  m->ncov = nt;
  m->cov_block_cells = block > 0 ? (size_t)block : 0;
  m->misfit_correlation_cells = tau;
  return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* The utilisation curve's shape (docs/model.md, "Utilisation curve: convex
 * at light load"). With rising tail coefficients d_1 ≤ d_2 ≤ … the curve
 * Σ d_i T_i is convex (its Bernstein coefficients c_j = d_1 + … + d_j have
 * rising differences), and its slope at 0 is 8·d_1, the smallest of the
 * d_i: a few noisy cells near idle can no longer raise the curve's foot
 * without raising it everywhere. The fit solves for e_k ≥ 0 with
 * d_i = Σ_{k ≤ i} e_k, i.e. NNLS on the columns S_k = Σ_{i ≥ k} T_i, one
 * chain per node (a group's "NODE:" columns), and maps e back to d. */
#include <math.h>
#include <string.h>

#include "fit_int.h"

/* The node prefix of a feature name ("" for a node's own columns). */
static size_t name_prefix(const char *name) {
  const char *colon = strrchr(name, ':');
  return colon ? (size_t)(colon - name) + 1 : 0;
}

void fit_shape_init(struct fit_shape *sh, const struct erg_dataset *ds, const size_t *sel,
                    size_t nsel) {
  memset(sh, 0, sizeof *sh);
  sh->nsel = nsel;
  int d[ERG_FIT_MAX_FEATURES];
  for (size_t s = 0; s < nsel; s++) {
    const char *name = ds->feature[sel[s]];
    d[s] = erg_derived_index(name + name_prefix(name));
    if (d[s] >= ERG_NDERIVED)
      d[s] = -1; /* older bases are not tails */
    sh->up[s] = sh->down[s] = -1;
    sh->ntails += d[s] >= 0;
  }
  /* up: the next tail of the same node with a higher index. */
  for (size_t s = 0; s < nsel; s++)
    for (size_t a = 0; d[s] >= 0 && a < nsel; a++) {
      const char *ns = ds->feature[sel[s]], *na = ds->feature[sel[a]];
      size_t ps = name_prefix(ns);
      if (d[a] <= d[s] || name_prefix(na) != ps || strncmp(ns, na, ps) != 0)
        continue;
      if (sh->up[s] < 0 || d[a] < d[sh->up[s]])
        sh->up[s] = (int)a;
    }
  for (size_t s = 0; s < nsel; s++)
    if (sh->up[s] >= 0)
      sh->down[sh->up[s]] = (int)s;
  for (size_t s = 0; s < nsel; s++)
    sh->tail[s] = d[s] >= 0;
}

double fit_shape_column(const struct fit_shape *sh, const struct erg_dataset *ds, const size_t *sel,
                        size_t s, size_t row) {
  double v = ds->x[sel[s]][row];
  for (int a = sh->up[s]; a >= 0; a = sh->up[a])
    v += ds->x[sel[a]][row];
  return v;
}

/* The chain below s and s itself: L[s][a] = 1. */
static bool shape_low(const struct fit_shape *sh, size_t s, size_t a) {
  if (a == s)
    return true;
  for (int b = sh->down[s]; b >= 0; b = sh->down[b])
    if ((size_t)b == a)
      return true;
  return false;
}

void fit_shape_coef(const struct fit_shape *sh, const double *e, double *beta) {
  for (size_t s = 0; s < sh->nsel; s++) {
    beta[s] = 0;
    for (size_t a = 0; a < sh->nsel; a++)
      if (shape_low(sh, s, a))
        beta[s] += e[a];
  }
}

void fit_shape_cov(const struct fit_shape *sh, size_t nt,
                   double cov[ERG_FIT_COV_TERMS][ERG_FIT_COV_TERMS]) {
  double t[ERG_FIT_COV_TERMS][ERG_FIT_COV_TERMS];
  /* Term 0 is β0, term 1 + s feature s; cov ← L cov Lᵀ. */
#define L(i, j) ((i) == 0 || (j) == 0 ? (i) == (j) : shape_low(sh, (i)-1, (j)-1))
  for (size_t i = 0; i < nt; i++)
    for (size_t j = 0; j < nt; j++) {
      double v = 0;
      for (size_t k = 0; k < nt; k++)
        if (L(i, k))
          v += cov[k][j];
      t[i][j] = v;
    }
  for (size_t i = 0; i < nt; i++)
    for (size_t j = 0; j < nt; j++) {
      double v = 0;
      for (size_t k = 0; k < nt; k++)
        if (L(j, k))
          v += t[i][k];
      cov[i][j] = v;
    }
#undef L
}

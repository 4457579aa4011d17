// SPDX-License-Identifier: GPL-3.0-or-later
/* Robust non-negative least squares: iteratively reweighted NNLS.
 *
 * Why not gsl_multifit_robust followed by clipping or projection: the
 * projection of an unconstrained robust fit onto β ≥ 0 is not the best
 * constrained fit (with collinear features, clipping one coefficient to 0
 * leaves its partner wrong). Doing the active-set NNLS (Lawson–Hanson)
 * inside each reweighting step gives the constrained M-estimate itself:
 * a few Huber steps from the plain NNLS start (safe against a bad start),
 * then Tukey bisquare steps (outliers get weight 0) until β settles.
 *
 * The weighted problem is reduced to its Gram matrix AᵀWA (q ≤ 33 columns,
 * summed row by row), and passive-set subproblems are solved by SVD with
 * tiny singular values dropped, so exactly collinear columns do not break
 * it. Columns arrive scaled to unit RMS, which keeps AᵀWA well conditioned. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>

#include "fit_int.h"

#define HUBER_C 1.345
#define BISQUARE_C 4.685
#define HUBER_STEPS 4
#define IRLS_MAX_STEPS 60
#define SV_CUTOFF 1e-13

/* z_P = argmin over the passive set P of ||G_PP z − c_P|| (pseudo-inverse). */
static int nnls_subsolve(const gsl_matrix *G, const gsl_vector *c, const int *passive, size_t q,
                         double *z) {
  size_t idx[FIT_MAX_COLS], m = 0;
  for (size_t j = 0; j < q; j++) {
    z[j] = 0;
    if (passive[j])
      idx[m++] = j;
  }
  if (m == 0)
    return 0;
  gsl_matrix *U = gsl_matrix_alloc(m, m), *V = gsl_matrix_alloc(m, m);
  gsl_vector *S = gsl_vector_alloc(m), *work = gsl_vector_alloc(m), *b = gsl_vector_alloc(m),
             *x = gsl_vector_alloc(m);
  int rc = -1;
  if (!U || !V || !S || !work || !b || !x)
    goto out;
  for (size_t a = 0; a < m; a++) {
    gsl_vector_set(b, a, gsl_vector_get(c, idx[a]));
    for (size_t e = 0; e < m; e++)
      gsl_matrix_set(U, a, e, gsl_matrix_get(G, idx[a], idx[e]));
  }
  if (gsl_linalg_SV_decomp(U, V, S, work) != 0)
    goto out;
  /* gsl_linalg_SV_solve ignores zero singular values: zero the tiny ones. */
  double smax = gsl_vector_get(S, 0);
  for (size_t a = 0; a < m; a++)
    if (gsl_vector_get(S, a) <= SV_CUTOFF * smax)
      gsl_vector_set(S, a, 0);
  if (gsl_linalg_SV_solve(U, V, S, b, x) != 0)
    goto out;
  for (size_t a = 0; a < m; a++)
    z[idx[a]] = gsl_vector_get(x, a);
  rc = 0;
out:
  gsl_matrix_free(U);
  gsl_matrix_free(V);
  gsl_vector_free(S);
  gsl_vector_free(work);
  gsl_vector_free(b);
  gsl_vector_free(x);
  return rc;
}

/* Lawson–Hanson active set on the normal equations G x = c, x ≥ 0. */
static int nnls_gram(const gsl_matrix *G, const gsl_vector *c, size_t q, double *x) {
  int passive[FIT_MAX_COLS] = {0};
  double z[FIT_MAX_COLS], gmax = 0;
  for (size_t j = 0; j < q; j++) {
    x[j] = 0;
    gmax = fmax(gmax, fabs(gsl_vector_get(c, j)));
  }
  double tol = 1e-12 * (gmax > 0 ? gmax : 1);
  for (size_t outer = 0; outer < 3 * q + 3; outer++) {
    /* Most promising inactive column: largest gradient c − G x. */
    size_t best = q;
    double bestg = tol;
    for (size_t j = 0; j < q; j++) {
      if (passive[j])
        continue;
      double g = gsl_vector_get(c, j);
      for (size_t e = 0; e < q; e++)
        g -= gsl_matrix_get(G, j, e) * x[e];
      if (g > bestg) {
        bestg = g;
        best = j;
      }
    }
    if (best == q)
      return 0;
    passive[best] = 1;
    for (size_t inner = 0; inner < 3 * q + 3; inner++) {
      if (nnls_subsolve(G, c, passive, q, z) != 0)
        return -1;
      double alpha = 1;
      int feasible = 1;
      for (size_t j = 0; j < q; j++)
        if (passive[j] && z[j] <= 0) {
          feasible = 0;
          double a = x[j] / (x[j] - z[j]);
          if (a < alpha)
            alpha = a;
        }
      if (feasible) {
        memcpy(x, z, q * sizeof *x);
        break;
      }
      /* Step towards z until the first coefficient hits 0; drop those. */
      for (size_t j = 0; j < q; j++) {
        x[j] += alpha * (z[j] - x[j]);
        if (passive[j] && x[j] <= 1e-15 * (fabs(z[j]) + 1)) {
          passive[j] = 0;
          x[j] = 0;
        }
      }
      if (best < q && !passive[best])
        break; /* the column just added cannot help: avoid cycling */
    }
  }
  return 0;
}

/* One weighted NNLS solve: A is n × q, sw = sqrt(weights). G = AᵀWA and
 * c = AᵀWy are summed row by row in one pass over A: GSL's reference
 * CBLAS dsyrk walks the whole n × q matrix once per element of G
 * (91 passes over 12 MB at 120k × 13), which was half of a fit's time. */
static int irls_step(const gsl_matrix *A, const gsl_vector *y, const gsl_vector *sw, gsl_matrix *G,
                     gsl_vector *c, double *b) {
  size_t n = A->size1, q = A->size2;
  double g[FIT_MAX_COLS][FIT_MAX_COLS] = {{0}}, cv[FIT_MAX_COLS] = {0};
  for (size_t i = 0; i < n; i++) {
    double s = gsl_vector_get(sw, i), w = s * s;
    if (w == 0)
      continue; /* a bisquare-rejected outlier */
    const double *row = A->data + i * A->tda;
    double wy = w * gsl_vector_get(y, i);
    for (size_t j = 0; j < q; j++) {
      double wa = w * row[j];
      cv[j] += wy * row[j];
      for (size_t e = 0; e <= j; e++)
        g[j][e] += wa * row[e];
    }
  }
  for (size_t j = 0; j < q; j++) {
    gsl_vector_set(c, j, cv[j]);
    for (size_t e = 0; e <= j; e++) {
      gsl_matrix_set(G, j, e, g[j][e]);
      gsl_matrix_set(G, e, j, g[j][e]);
    }
  }
  return nnls_gram(G, c, q, b);
}

/* Residuals r = y − A b and a robust scale (MAD / 0.6745). */
static double irls_residuals(const gsl_matrix *A, const gsl_vector *y, const double *b,
                             gsl_vector *r, double *absr) {
  size_t n = A->size1, q = A->size2;
  gsl_vector_const_view bv = gsl_vector_const_view_array(b, q);
  gsl_vector_memcpy(r, y);
  gsl_blas_dgemv(CblasNoTrans, -1.0, A, &bv.vector, 1.0, r);
  for (size_t i = 0; i < n; i++)
    absr[i] = fabs(gsl_vector_get(r, i));
  return gsl_stats_median(absr, 1, n) / 0.6745;
}

static void irls_weights(const gsl_vector *r, double scale, int huber, gsl_vector *sw) {
  for (size_t i = 0; i < r->size; i++) {
    double u = fabs(gsl_vector_get(r, i)) / scale, w;
    if (huber)
      w = u <= HUBER_C ? 1 : HUBER_C / u;
    else {
      double t = u / BISQUARE_C;
      w = t < 1 ? (1 - t * t) * (1 - t * t) : 0;
    }
    gsl_vector_set(sw, i, sqrt(w));
  }
}

static bool irls_converged(const double *b, const double *prev, size_t q) {
  double big = 0, diff = 0;
  for (size_t j = 0; j < q; j++) {
    big = fmax(big, fabs(b[j]));
    diff = fmax(diff, fabs(b[j] - prev[j]));
  }
  return diff <= 1e-7 * (big > 0 ? big : 1);
}

int fit_robust_nnls(const gsl_matrix *A, const gsl_vector *y, double *b, fit_step_fn step,
                    void *user) {
  size_t n = A->size1, q = A->size2;
  gsl_matrix *G = gsl_matrix_alloc(q, q);
  gsl_vector *c = gsl_vector_alloc(q), *sw = gsl_vector_alloc(n), *r = gsl_vector_alloc(n);
  double *absr = malloc(n * sizeof *absr), prev[FIT_MAX_COLS], yscale = 0;
  int rc = -1;
  if (!G || !c || !sw || !r || !absr)
    goto out;
  for (size_t i = 0; i < n; i++)
    yscale = fmax(yscale, fabs(gsl_vector_get(y, i)));
  gsl_vector_set_all(sw, 1.0);
  if (irls_step(A, y, sw, G, c, b) != 0)
    goto out;
  for (int it = 0; it < IRLS_MAX_STEPS; it++) {
    if (step && step(user, (double)(it + 1) / IRLS_MAX_STEPS) != 0) {
      rc = -2;
      goto out;
    }
    double scale = irls_residuals(A, y, b, r, absr);
    /* An (almost) exact fit has no outliers to down-weight. */
    if (!(scale > 1e-12 * (yscale > 0 ? yscale : 1)))
      break;
    irls_weights(r, scale, it < HUBER_STEPS, sw);
    memcpy(prev, b, q * sizeof *b);
    if (irls_step(A, y, sw, G, c, b) != 0)
      goto out;
    if (it >= HUBER_STEPS && irls_converged(b, prev, q))
      break;
  }
  rc = 0;
out:
  gsl_matrix_free(G);
  gsl_vector_free(c);
  gsl_vector_free(sw);
  gsl_vector_free(r);
  free(absr);
  return rc;
}

/* The work space of the passive-set errors below: residuals and weights of
 * n rows, an SVD of up to q x q. */
struct pcov_ws {
  gsl_vector *r, *sw, *S, *work;
  gsl_matrix *U, *V;
  double *absr;
};

static void pcov_free(struct pcov_ws *w) {
  gsl_vector_free(w->r);
  gsl_vector_free(w->sw);
  gsl_vector_free(w->S);
  gsl_vector_free(w->work);
  gsl_matrix_free(w->U);
  gsl_matrix_free(w->V);
  free(w->absr);
}

/* 0, or -1 out of memory (w half-built: pcov_free takes it). */
static int pcov_alloc(struct pcov_ws *w, size_t n, size_t q) {
  *w = (struct pcov_ws){.r = gsl_vector_alloc(n),
                        .sw = gsl_vector_alloc(n),
                        .S = gsl_vector_alloc(q),
                        .work = gsl_vector_alloc(q),
                        .U = gsl_matrix_alloc(q, q),
                        .V = gsl_matrix_alloc(q, q),
                        .absr = malloc(n * sizeof *w->absr)};
  return w->r && w->sw && w->S && w->work && w->U && w->V && w->absr ? 0 : -1;
}

/* The SVD G = U S Vᵀ of the m x m matrix whose lower triangle g holds (G
 * gets both halves; it is w->U's corner and becomes U). 0, -1 when GSL
 * fails. */
static int pcov_svd(struct pcov_ws *w, double g[FIT_MAX_COLS][FIT_MAX_COLS], size_t m,
                    gsl_matrix_view *G, gsl_matrix_view *Vm, gsl_vector_view *Sm) {
  *G = gsl_matrix_submatrix(w->U, 0, 0, m, m);
  for (size_t a = 0; a < m; a++)
    for (size_t e = 0; e < m; e++)
      gsl_matrix_set(&G->matrix, a, e, e <= a ? g[a][e] : g[e][a]);
  *Vm = gsl_matrix_submatrix(w->V, 0, 0, m, m);
  *Sm = gsl_vector_subvector(w->S, 0, m);
  gsl_vector_view Wm = gsl_vector_subvector(w->work, 0, m);
  return gsl_linalg_SV_decomp(&G->matrix, &Vm->matrix, &Sm->vector, &Wm.vector) ? -1 : 0;
}

/* se_j = s · sqrt([(A_PᵀWA_P)⁺]_jj), w the bisquare weights at b. */
int fit_robust_nnls_se(const gsl_matrix *A, const gsl_vector *y, const double *b, double *se) {
  size_t n = A->size1, q = A->size2, idx[FIT_MAX_COLS], m = 0;
  struct pcov_ws ws;
  int rc = -1;
  if (pcov_alloc(&ws, n, q))
    goto out;
  for (size_t j = 0; j < q; j++) {
    se[j] = INFINITY;
    if (b[j] > 0)
      idx[m++] = j;
  }
  double scale = irls_residuals(A, y, b, ws.r, ws.absr), sumw = 0, sumwr2 = 0;
  if (!(scale > 0) || m == 0 || !(n > m)) {
    rc = 0; /* exact fit or nothing passive: no error to estimate */
    goto out;
  }
  irls_weights(ws.r, scale, 0, ws.sw);
  double g[FIT_MAX_COLS][FIT_MAX_COLS] = {{0}}, xa[FIT_MAX_COLS];
  for (size_t i = 0; i < n; i++) {
    double w = gsl_vector_get(ws.sw, i) * gsl_vector_get(ws.sw, i), ri = gsl_vector_get(ws.r, i);
    const double *row = A->data + i * A->tda;
    if (w == 0)
      continue;
    sumw += w;
    sumwr2 += w * ri * ri;
    for (size_t a = 0; a < m; a++)
      xa[a] = row[idx[a]];
    for (size_t a = 0; a < m; a++)
      for (size_t e = 0; e <= a; e++)
        g[a][e] += w * xa[a] * xa[e];
  }
  if (!(sumw > (double)m)) {
    rc = 0;
    goto out;
  }
  gsl_matrix_view G, Vm;
  gsl_vector_view Sm;
  if (pcov_svd(&ws, g, m, &G, &Vm, &Sm))
    goto out;
  double s2 = sumwr2 / (sumw - (double)m), smax = gsl_vector_get(&Sm.vector, 0);
  for (size_t a = 0; a < m; a++) {
    double v = 0;
    for (size_t k = 0; k < m; k++) {
      double sk = gsl_vector_get(&Sm.vector, k), vk = gsl_matrix_get(&Vm.matrix, a, k);
      if (sk > SV_CUTOFF * smax)
        v += vk * vk / sk;
    }
    se[idx[a]] = v > 0 ? sqrt(s2 * v) : INFINITY;
  }
  rc = 0;
out:
  pcov_free(&ws);
  return rc;
}

/* Cluster-robust sandwich covariance of b over time blocks of block rows
 * (consecutive rows of A): bread B = (A_PᵀWA_P)⁺ over the passive columns,
 * meat Σ_blocks u uᵀ with u = Σ_{i in block} w_i r_i a_{i,P} (w r = ψ(r),
 * the bisquare's influence), cov = G/(G−1) · B M B for G blocks. Residuals
 * that persist over a block (a load the model misreads for minutes) count
 * as one, not as independent cells. A column the constraint holds at 0
 * gets the variance it would have if it alone were freed, the others as
 * fitted (bread 1 / Σ w a², meat its block sums of w r a), no covariance:
 * its one-sided bound's width (β ≥ 0; up to ~2σ the data would not tell).
 * Freeing them all (the unconstrained refit's covariance) is no use: the
 * held terms are mostly the utilisation curve's, collinear with the
 * active ones, and its sd ran to kW on the accuracy harness's journals.
 * Columns of zeros get 0. cov is q × q, row-major. */
int fit_robust_nnls_cov(const gsl_matrix *A, const gsl_vector *y, const double *b, size_t block,
                        double *cov, double *tau) {
  size_t n = A->size1, q = A->size2, idx[FIT_MAX_COLS], m = 0;
  struct pcov_ws ws;
  int rc = -1;
  for (size_t j = 0; j < q * q; j++)
    cov[j] = 0;
  *tau = 1;
  if (pcov_alloc(&ws, n, q))
    goto out;
  for (size_t j = 0; j < q; j++)
    if (b[j] > 0)
      idx[m++] = j;
  double scale = irls_residuals(A, y, b, ws.r, ws.absr);
  block = block ? block : 1;
  size_t nblocks = (n + block - 1) / block;
  if (!(scale > 0) || m == 0 || !(n > m) || nblocks < 2) {
    rc = 0;
    goto out;
  }
  irls_weights(ws.r, scale, 0, ws.sw);
  double g[FIT_MAX_COLS][FIT_MAX_COLS] = {{0}}, meat[FIT_MAX_COLS][FIT_MAX_COLS] = {{0}};
  double u[FIT_MAX_COLS] = {0}, rsum = 0, rsum2 = 0, r2 = 0;
  /* The held columns' own bread and meat (hb: Σ w a², hu: a block's Σ w r a). */
  double hb[FIT_MAX_COLS] = {0}, hu[FIT_MAX_COLS] = {0}, hm[FIT_MAX_COLS] = {0};
  for (size_t i = 0; i < n; i++) {
    double w = gsl_vector_get(ws.sw, i) * gsl_vector_get(ws.sw, i), ri = gsl_vector_get(ws.r, i);
    const double *row = A->data + i * A->tda;
    rsum += w * ri;
    r2 += w * ri * w * ri;
    for (size_t a = 0; w > 0 && a < m; a++) {
      u[a] += w * ri * row[idx[a]];
      for (size_t e = 0; e <= a; e++)
        g[a][e] += w * row[idx[a]] * row[idx[e]];
    }
    for (size_t j = 0; w > 0 && j < q; j++)
      if (!(b[j] > 0)) {
        hu[j] += w * ri * row[j];
        hb[j] += w * row[j] * row[j];
      }
    if ((i + 1) % block == 0 || i + 1 == n) {
      for (size_t j = 0; j < q; j++) {
        hm[j] += hu[j] * hu[j];
        hu[j] = 0;
      }
      rsum2 += rsum * rsum;
      rsum = 0;
      for (size_t a = 0; a < m; a++)
        for (size_t e = 0; e < m; e++)
          meat[a][e] += u[a] * u[e];
      for (size_t a = 0; a < m; a++)
        u[a] = 0;
    }
  }
  gsl_matrix_view G, Vm;
  gsl_vector_view Sm;
  if (pcov_svd(&ws, g, m, &G, &Vm, &Sm))
    goto out;
  /* B = V diag(1/s) Uᵀ (symmetric: U = V on the kept singular values). */
  double B[FIT_MAX_COLS][FIT_MAX_COLS], smax = gsl_vector_get(&Sm.vector, 0);
  for (size_t a = 0; a < m; a++)
    for (size_t e = 0; e < m; e++) {
      double v = 0;
      for (size_t k = 0; k < m; k++) {
        double sk = gsl_vector_get(&Sm.vector, k);
        if (sk > SV_CUTOFF * smax)
          v += gsl_matrix_get(&Vm.matrix, a, k) * gsl_matrix_get(&G.matrix, e, k) / sk;
      }
      B[a][e] = v;
    }
  double corr = (double)nblocks / (double)(nblocks - 1), BM[FIT_MAX_COLS][FIT_MAX_COLS];
  for (size_t a = 0; a < m; a++)
    for (size_t e = 0; e < m; e++) {
      double v = 0;
      for (size_t k = 0; k < m; k++)
        v += B[a][k] * meat[k][e];
      BM[a][e] = v;
    }
  for (size_t a = 0; a < m; a++)
    for (size_t e = 0; e < m; e++) {
      double v = 0;
      for (size_t k = 0; k < m; k++)
        v += BM[a][k] * B[e][k];
      cov[idx[a] * q + idx[e]] = corr * v;
    }
  for (size_t j = 0; j < q; j++)
    if (!(b[j] > 0) && hb[j] > 0)
      cov[j * q + j] = corr * hm[j] / (hb[j] * hb[j]);
  /* The residuals' persistence: the variance of block sums over the sum
   * of variances, in cells (1: independent; at most the block). */
  if (r2 > 0)
    *tau = rsum2 / r2 < 1 ? 1 : rsum2 / r2 > (double)block ? (double)block : rsum2 / r2;
  rc = 0;
out:
  pcov_free(&ws);
  return rc;
}

double fit_nested_pvalue(const gsl_matrix *Af, const double *bf, const gsl_matrix *Ac,
                         const double *bc, const gsl_vector *y) {
  size_t n = Af->size1, pf = 0, pc = 0;
  gsl_vector *rf = gsl_vector_alloc(n), *rc = gsl_vector_alloc(n), *sw = gsl_vector_alloc(n);
  double *absr = malloc(n * sizeof *absr), p = 0;
  if (!rf || !rc || !sw || !absr)
    goto out;
  for (size_t j = 0; j < Af->size2; j++)
    pf += bf[j] > 0;
  for (size_t j = 0; j < Ac->size2; j++)
    pc += bc[j] > 0;
  double scale = irls_residuals(Af, y, bf, rf, absr);
  irls_residuals(Ac, y, bc, rc, absr);
  if (!(scale > 0)) {
    /* The free fit is exact: the constrained one must be too. */
    double big = 0;
    for (size_t i = 0; i < n; i++)
      big = fmax(big, fabs(gsl_vector_get(rc, i)));
    p = big <= 1e-9 * (1 + fabs(gsl_vector_get(y, 0))) ? 1 : 0;
    goto out;
  }
  irls_weights(rf, scale, 0, sw);
  double sumw = 0, ssf = 0, ssc = 0;
  for (size_t i = 0; i < n; i++) {
    double w = gsl_vector_get(sw, i) * gsl_vector_get(sw, i), a = gsl_vector_get(rf, i),
           b = gsl_vector_get(rc, i);
    sumw += w;
    ssf += w * a * a;
    ssc += w * b * b;
  }
  double df1 = pf > pc ? (double)(pf - pc) : 1, df2 = sumw - (double)pf;
  if (!(df2 >= 1) || !(ssf > 0)) {
    p = ssc <= ssf ? 1 : 0;
    goto out;
  }
  double f = ((ssc - ssf) / df1) / (ssf / df2);
  p = f <= 0 ? 1 : gsl_cdf_fdist_Q(f, df1, df2);
out:
  gsl_vector_free(rf);
  gsl_vector_free(rc);
  gsl_vector_free(sw);
  free(absr);
  return p;
}

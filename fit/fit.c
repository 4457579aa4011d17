// SPDX-License-Identifier: GPL-3.0-or-later
/* erg_fit: picks usable rows and features, validates on held-out time
 * blocks, then refits on everything (docs/model.md, "Fit" and
 * "Validation"). The numerical core is in solve.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_statistics_double.h>

#include "erg_common.h"
#include "fit_int.h"

struct fit_ctx {
  const struct erg_dataset *ds;  /* the rows fitted: features smoothed for an averaging meter */
  const struct erg_dataset *raw; /* the cells' own features (ds when not smoothed) */
  const struct erg_fit_options *o;
  size_t *rows; /* usable rows, time order */
  size_t nrows;
  size_t sel[ERG_FIT_MAX_FEATURES]; /* dataset feature of each model feature */
  size_t nsel;
  int cpu_col, ncpu_col; /* dataset columns defining utilisation; -1: none */
  bool idle_fixed;
  double idle_watts;
  size_t idle_rows;
  int stage, nstages;
  char stage_name[64];
  size_t dropped[ERG_FIT_MAX_FEATURES]; /* dataset features left out as weak */
  double dropped_t[ERG_FIT_MAX_FEATURES];
  size_t ndropped;
};

struct fit_coef {
  double beta0;
  double beta[ERG_FIT_MAX_FEATURES];
  double xmax[ERG_FIT_MAX_FEATURES]; /* largest value seen in training */
  double u_max;                      /* largest utilisation seen in training; 0: none */
  bool want_se;                      /* set by the caller: fill se */
  double se[ERG_FIT_MAX_FEATURES];   /* standard error of beta (fit_robust_nnls_se) */
  bool want_cov;                     /* set by the caller: fill cov (the final fit) */
  size_t ncov, cov_block;            /* (β0, β) terms in cov; 0: none */
  double tau;                        /* residual persistence, cells */
  double cov[ERG_FIT_COV_TERMS][ERG_FIT_COV_TERMS];
  enum erg_curve_shape curve_shape; /* the curve fitted: MONOTONE, CONVEX; AUTO: none */
};

void erg_fit_options_init(struct erg_fit_options *o) {
  memset(o, 0, sizeof *o);
  o->holdout_fraction = 0.25;
  o->dynamic_threshold_watts = -1;
  /* Rising only: the convex curve's bias near 0 outweighed its lower spread
   * in the end-to-end run (docs/accuracy.md, "Light load"). */
  o->curve_shape = ERG_CURVE_MONOTONE;
}

/* A row flagged ERG_ROW_SHARED measured a group's meter, not this node:
 * never fitted as its power (group.c fits such rows jointly). */
static bool row_usable(const struct erg_dataset *ds, size_t i) {
  return (ds->flags[i] & (ERG_ROW_UNUSABLE | ERG_ROW_IDLE)) == 0 && isfinite(ds->measured_watts[i]);
}

static bool row_candidate(const struct erg_dataset *ds, size_t i) {
  return row_usable(ds, i) && !(ds->flags[i] & ERG_ROW_SHARED);
}

/* A group's per-node column "NODE:feature" (group.c) is judged as its
 * feature: a curve term by its reach, CPU time as CPU time. */
static const char *fit_base_name(const char *name) {
  const char *colon = strrchr(name, ':');
  return colon ? colon + 1 : name;
}

/* A feature is used when at least half the candidate rows have it and it
 * varies; a constant column carries nothing the intercept does not. It must
 * also be off its minimum in FIT_MIN_SUPPORT of the rows (at least 8): a
 * column that is 0 but for a few blips (disk reads of a program start)
 * gets a coefficient fitted to noise, e.g. 1.7 kW per MB/s, and attribution
 * then gives a process most of a cell for a 50 kB read (accuracy.short
 * failed in CI that way: one job +22 %, its neighbour -15 %). */
#define FIT_MIN_SUPPORT 0.05
/* A curve basis function that stays below this fraction of its peak on
 * [0, 1] over all cells is left out: the node never worked where it has
 * weight. Trained up to u = 0.13 only (a busy host starved the harness),
 * u^6 (≤ 6e-6 there) got 1.4 MW and the curve's end slope with it. */
#define FIT_MIN_CURVE_REACH 0.02

static void fit_select_features(struct fit_ctx *c) {
  const struct erg_dataset *ds = c->ds;
  size_t ncand = 0;
  for (size_t i = 0; i < ds->nrows; i++)
    ncand += row_candidate(ds, i);
  for (size_t k = 0; k < ds->nfeatures; k++) {
    size_t have = 0;
    if (strcmp(ds->feature[k], ERG_NCPU_COLUMN) == 0)
      continue; /* defines utilisation; not a power feature */
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < ds->nrows; i++) {
      double v = ds->x[k][i];
      if (!row_candidate(ds, i) || !isfinite(v))
        continue;
      have++;
      lo = fmin(lo, v);
      hi = fmax(hi, v);
    }
    size_t off = 0;
    for (size_t i = 0; i < ds->nrows; i++) {
      double v = ds->x[k][i];
      off += row_candidate(ds, i) && isfinite(v) && v - lo > 1e-12 * fmax(fabs(hi), fabs(lo));
    }
    size_t support = (size_t)ceil(FIT_MIN_SUPPORT * (double)ncand);
    int d = erg_derived_index(fit_base_name(ds->feature[k]));
    if (d >= 0 && !(hi >= FIT_MIN_CURVE_REACH * erg_derived_peak(d)))
      continue;
    /* off >= 8 also means the column varies. */
    if (have * 2 >= ncand && off >= (support > 8 ? support : 8))
      c->sel[c->nsel++] = k;
  }
  c->cpu_col = fit_dataset_column(ds, FIT_CPU_COLUMN);
  c->ncpu_col = fit_dataset_column(ds, ERG_NCPU_COLUMN);
}

/* Utilisation of dataset row i (NaN without cpu and ncpu columns). */
static double fit_row_utilization(const struct fit_ctx *c, size_t i) {
  if (c->cpu_col < 0 || c->ncpu_col < 0)
    return NAN;
  return erg_derived_utilization(c->ds->x[c->cpu_col][i], c->ds->x[c->ncpu_col][i]);
}

/* The same of the cell's own features: the range the model is trained on
 * is the one its cells reached, which predictions of single cells meet. */
static double fit_raw_utilization(const struct fit_ctx *c, size_t i) {
  if (c->cpu_col < 0 || c->ncpu_col < 0)
    return NAN;
  return erg_derived_utilization(c->raw->x[c->cpu_col][i], c->raw->x[c->ncpu_col][i]);
}

static int double_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

struct row_time {
  double t;
  size_t i;
};

static int row_time_cmp(const void *a, const void *b) {
  const struct row_time *x = a, *y = b;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

/* Candidate rows with every selected feature finite, sorted by time. */
static int fit_collect_rows(struct fit_ctx *c) {
  const struct erg_dataset *ds = c->ds;
  struct row_time *rt = malloc((ds->nrows ? ds->nrows : 1) * sizeof *rt);
  c->rows = malloc((ds->nrows ? ds->nrows : 1) * sizeof *c->rows);
  if (!rt || !c->rows) {
    free(rt);
    return -1;
  }
  size_t n = 0;
  for (size_t i = 0; i < ds->nrows; i++) {
    bool ok = row_candidate(ds, i);
    for (size_t s = 0; ok && s < c->nsel; s++)
      ok = isfinite(ds->x[c->sel[s]][i]);
    if (ok)
      rt[n++] = (struct row_time){ds->time_unix_seconds[i], i};
  }
  qsort(rt, n, sizeof *rt, row_time_cmp);
  for (size_t j = 0; j < n; j++)
    c->rows[j] = rt[j].i;
  c->nrows = n;
  free(rt);
  return 0;
}

/* Idle from a recorded idle profile, else from the flag-8 rows: their
 * median, robust to a stray burst. */
static int fit_idle_profile(struct fit_ctx *c) {
  const struct erg_dataset *ds = c->ds;
  if (c->o->idle_profile) {
    c->idle_fixed = true;
    c->idle_watts = c->o->idle_profile->mean_watts;
    c->idle_rows = c->o->idle_profile->cells;
    return 0;
  }
  double *v = malloc((ds->nrows ? ds->nrows : 1) * sizeof *v);
  if (!v)
    return -1;
  size_t n = 0;
  for (size_t i = 0; i < ds->nrows; i++)
    if ((ds->flags[i] & ERG_ROW_IDLE) && !(ds->flags[i] & (ERG_ROW_UNUSABLE | ERG_ROW_SHARED)) &&
        isfinite(ds->measured_watts[i]))
      v[n++] = ds->measured_watts[i];
  if (n > 0) {
    c->idle_fixed = true;
    c->idle_watts = gsl_stats_median(v, 1, n);
    c->idle_rows = n;
  }
  free(v);
  return 0;
}

static int fit_step_progress(void *user, double fraction) {
  struct fit_ctx *c = user;
  if (c->o->progress)
    c->o->progress(c->o->progress_user, c->stage_name, (c->stage + fraction) / c->nstages);
  return c->o->cancel && atomic_load(c->o->cancel);
}

/* The covariance of (β0, β) of the fit just made (A, y scaled, b): the
 * cluster-robust sandwich over time blocks of √n cells (rows are in time
 * order), scaled back; a fixed idle's variance is its profile's mean's
 * (stddev² / (cells − 1), widened by Student's t), uncorrelated with the rest. Too many terms:
 * none. */
static int fit_coef_cov(const struct fit_ctx *c, const gsl_matrix *A, const gsl_vector *y,
                        const double *b, const double *scale, size_t off, struct fit_coef *out) {
  size_t q = A->size2, nt = c->nsel + 1, n = A->size1;
  out->ncov = 0;
  if (nt > ERG_FIT_COV_TERMS)
    return 0;
  double *cov = malloc(q * q * sizeof *cov);
  size_t block = (size_t)lround(sqrt((double)n));
  if (!cov || fit_robust_nnls_cov(A, y, b, block ? block : 1, cov, &out->tau) != 0) {
    free(cov);
    return -1;
  }
  memset(out->cov, 0, sizeof out->cov);
  /* Term t (0: β0, 1 + s: feature s) is column t + off − 1 of A, or none
   * (a fixed idle). */
  for (size_t t = 0; t < nt; t++)
    for (size_t e = 0; e < nt; e++) {
      if ((t == 0 || e == 0) && !off)
        continue;
      size_t ct = t + off - 1, ce = e + off - 1;
      out->cov[t][e] = cov[ct * q + ce] / (scale[ct] * scale[ce]);
    }
  /* A mean of few cells: the sample variance (n − 1) and Student's t for
   * the 95 % interval the variance stands for, folded into the variance
   * (6 cells: × 2.1, 30: × 1.1). */
  const struct erg_idle_profile *ip = c->o->idle_profile;
  if (!off && ip && ip->cells > 1 && isfinite(ip->stddev_watts)) {
    double n = (double)ip->cells, t = gsl_cdf_tdist_Pinv(0.975, n - 1) / 1.959964;
    out->cov[0][0] = ip->stddev_watts * ip->stddev_watts / (n - 1) * t * t;
  } else if (!off && ip && ip->cells > 0 && isfinite(ip->stddev_watts)) {
    out->cov[0][0] = ip->stddev_watts * ip->stddev_watts;
  }
  out->ncov = nt;
  out->cov_block = block ? block : 1;
  free(cov);
  return 0;
}

/* The design matrix of rows, columns scaled to unit RMS (scale[]); with
 * sh, the convex parameterisation's columns (fit_shape_column). */
static void fit_design(const struct fit_ctx *c, const size_t *rows, size_t n,
                       const struct fit_shape *sh, gsl_matrix *A, double *scale) {
  const struct erg_dataset *ds = c->ds;
  size_t off = c->idle_fixed ? 0 : 1;
  scale[0] = 1;
  for (size_t j = 0; off && j < n; j++)
    gsl_matrix_set(A, j, 0, 1.0);
  for (size_t s = 0; s < c->nsel; s++) {
    double ss = 0;
    for (size_t j = 0; j < n; j++) {
      double v = sh ? fit_shape_column(sh, ds, c->sel, s, rows[j]) : ds->x[c->sel[s]][rows[j]];
      gsl_matrix_set(A, j, s + off, v);
      ss += v * v;
    }
    scale[s + off] = ss > 0 ? sqrt(ss / (double)n) : 1;
    for (size_t j = 0; j < n; j++)
      gsl_matrix_set(A, j, s + off, gsl_matrix_get(A, j, s + off) / scale[s + off]);
  }
}

/* Fits the model on the given dataset rows. Columns are scaled to unit RMS
 * for conditioning and the coefficients scaled back. The curve is fitted
 * rising (the tails' coefficients ≥ 0) and, when the options ask (AUTO,
 * CONVEX), also rising and convex (fit/shape.c); AUTO keeps the convex fit
 * unless the cells reject it (F test of the two, p < ERG_FIT_CONVEX_P). */
static int fit_rows(struct fit_ctx *c, const size_t *rows, size_t n, struct fit_coef *out) {
  const struct erg_dataset *ds = c->ds;
  size_t off = c->idle_fixed ? 0 : 1, q = c->nsel + off;
  double scale[FIT_MAX_COLS], b[FIT_MAX_COLS], scale_c[FIT_MAX_COLS], bc[FIT_MAX_COLS];
  struct fit_shape sh;
  fit_shape_init(&sh, ds, c->sel, c->nsel);
  bool try_convex = sh.ntails >= 2 && c->o->curve_shape != ERG_CURVE_MONOTONE;
  gsl_matrix *A = gsl_matrix_alloc(n, q), *Ac = try_convex ? gsl_matrix_alloc(n, q) : NULL;
  gsl_vector *y = gsl_vector_alloc(n);
  int rc = -1;
  if (!A || !y || (try_convex && !Ac))
    goto out;
  for (size_t s = 0; s < c->nsel; s++) {
    double mx = 0;
    for (size_t j = 0; j < n; j++)
      mx = fmax(mx, c->raw->x[c->sel[s]][rows[j]]);
    out->xmax[s] = mx;
  }
  out->u_max = 0;
  for (size_t j = 0; j < n; j++) {
    double u = fit_raw_utilization(c, rows[j]);
    out->u_max = u > out->u_max ? u : out->u_max;
  }
  for (size_t j = 0; j < n; j++) {
    double p = ds->measured_watts[rows[j]];
    gsl_vector_set(y, j, c->idle_fixed ? p - c->idle_watts : p);
  }
  fit_design(c, rows, n, NULL, A, scale);
  out->curve_shape = sh.ntails ? ERG_CURVE_MONOTONE : ERG_CURVE_AUTO;
  if (c->o->curve_shape != ERG_CURVE_CONVEX || !try_convex)
    if ((rc = fit_robust_nnls(A, y, b, fit_step_progress, c)) != 0)
      goto out;
  if (try_convex) {
    fit_design(c, rows, n, &sh, Ac, scale_c);
    if ((rc = fit_robust_nnls(Ac, y, bc, fit_step_progress, c)) != 0)
      goto out;
    if (c->o->curve_shape == ERG_CURVE_CONVEX ||
        fit_nested_pvalue(A, b, Ac, bc, y) >= ERG_FIT_CONVEX_P) {
      gsl_matrix *t = A;
      A = Ac;
      Ac = t;
      memcpy(b, bc, sizeof b);
      memcpy(scale, scale_c, sizeof scale);
      out->curve_shape = ERG_CURVE_CONVEX;
    }
  }
  bool convex = out->curve_shape == ERG_CURVE_CONVEX;
  double e[ERG_FIT_MAX_FEATURES];
  out->beta0 = c->idle_fixed ? c->idle_watts : b[0];
  for (size_t s = 0; s < c->nsel; s++)
    e[s] = b[s + off] / scale[s + off];
  if (convex)
    fit_shape_coef(&sh, e, out->beta);
  else
    memcpy(out->beta, e, c->nsel * sizeof *e);
  double se[FIT_MAX_COLS];
  if (out->want_se && (rc = fit_robust_nnls_se(A, y, b, se)) != 0)
    goto out;
  /* A tail's se is of its e under the convex fit; only linear features'
   * se is read (fit_final), and those are the same columns either way. */
  for (size_t s = 0; out->want_se && s < c->nsel; s++)
    out->se[s] = se[s + off] / scale[s + off];
  if (out->want_cov && (rc = fit_coef_cov(c, A, y, b, scale, off, out)) != 0)
    goto out;
  if (convex && out->want_cov && out->ncov)
    fit_shape_cov(&sh, out->ncov, out->cov);
  rc = 0;
out:
  gsl_matrix_free(A);
  gsl_matrix_free(Ac);
  gsl_vector_free(y);
  return rc;
}

/* A linear feature other than the CPU time whose coefficient the data do
 * not support, t = β / se below FIT_MIN_T, is left out of the model.
 * Linear terms extrapolate beyond the training range (predict.c), so a
 * coefficient fitted to noise does too: in integration.refit, whole-machine
 * disk bursts at 3× the trained rate put 285 W on cells that drew none.
 * One at a time, weakest first: of two collinear features (both weak
 * alone) the one left then carries what they share. Curve terms are
 * judged by their reach (FIT_MIN_CURVE_REACH), not here: the Bernstein
 * basis is collinear by design. */
#define FIT_MIN_T 3.0

static bool fit_weak_candidate(const struct fit_ctx *c, size_t s) {
  const char *name = fit_base_name(c->ds->feature[c->sel[s]]);
  return erg_derived_index(name) < 0 && strcmp(name, FIT_CPU_COLUMN) != 0;
}

/* Removes model feature s from the selection and from f. */
static void fit_drop_feature(struct fit_ctx *c, struct fit_coef *f, size_t s, double t) {
  if (c->ndropped < ERG_FIT_MAX_FEATURES) {
    c->dropped_t[c->ndropped] = t;
    c->dropped[c->ndropped++] = c->sel[s];
  }
  size_t tail = c->nsel - s - 1;
  memmove(&c->sel[s], &c->sel[s + 1], tail * sizeof *c->sel);
  memmove(&f->beta[s], &f->beta[s + 1], tail * sizeof *f->beta);
  memmove(&f->xmax[s], &f->xmax[s + 1], tail * sizeof *f->xmax);
  memmove(&f->se[s], &f->se[s + 1], tail * sizeof *f->se);
  c->nsel--;
  /* Its covariance row and column go too (a refit replaces the rest). */
  if (f->ncov > s + 1) {
    for (size_t t = 0; t < f->ncov; t++)
      memmove(&f->cov[t][s + 1], &f->cov[t][s + 2], (f->ncov - s - 2) * sizeof(double));
    memmove(&f->cov[s + 1], &f->cov[s + 2], (f->ncov - s - 2) * sizeof f->cov[0]);
    f->ncov--;
  } else {
    f->ncov = 0;
  }
}

/* The fit on all cells, with weak features left out: f is the final
 * model's. A candidate at β = 0 goes without a refit (the NNLS solution
 * without that column is the same); a weak one with β > 0 is dropped and
 * the fit repeated. Usually one fit, as without the check. */
static int fit_final(struct fit_ctx *c, struct fit_coef *f) {
  for (;;) {
    bool any = false;
    for (size_t s = 0; s < c->nsel; s++)
      any |= fit_weak_candidate(c, s);
    *f = (struct fit_coef){.want_se = any, .want_cov = true};
    int rc = fit_rows(c, c->rows, c->nrows, f);
    if (rc != 0 || !any)
      return rc;
    for (size_t s = c->nsel; s-- > 0;)
      if (c->nsel > 1 && fit_weak_candidate(c, s) && !(f->beta[s] > 0))
        fit_drop_feature(c, f, s, 0);
    size_t weakest = c->nsel;
    double tmin = FIT_MIN_T;
    for (size_t s = 0; s < c->nsel; s++) {
      double t = f->beta[s] / f->se[s];
      if (fit_weak_candidate(c, s) && t < tmin)
        weakest = s, tmin = t;
    }
    if (weakest == c->nsel || c->nsel < 2)
      return 0;
    fit_drop_feature(c, f, weakest, tmin);
  }
}

/* As erg_model_predict, with the fold's coefficients and training maxima:
 * linear terms as they are, the utilisation curve continued beyond the
 * fold's largest utilisation (erg_derived_value_extended). */
static double coef_predict(const struct fit_ctx *c, const struct fit_coef *f, size_t row) {
  const struct erg_dataset *ds = c->ds;
  double p = f->beta0, coef[ERG_NDERIVED_ALL] = {0}, u = fit_row_utilization(c, row);
  int d[ERG_FIT_MAX_FEATURES];
  for (size_t s = 0; s < c->nsel; s++)
    if ((d[s] = erg_derived_index(ds->feature[c->sel[s]])) >= 0)
      coef[d[s]] = f->beta[s];
  for (size_t s = 0; s < c->nsel; s++) {
    double x = ds->x[c->sel[s]][row];
    /* Within the trained range a tail is the row's own (a journal's cell
     * mean, or the tail of its mean u: the same as derived); beyond it the
     * curve goes on. */
    if (d[s] >= 0 && !isnan(u) && f->u_max > 0 && u > f->u_max)
      x = erg_derived_value_extended(d[s], u, f->u_max, coef);
    else if (d[s] >= 0 && !isnan(u) && !isfinite(x))
      x = erg_derived_value_extended(d[s], u, f->u_max, coef);
    p += f->beta[s] * x;
  }
  return p;
}

/* Held-out metrics over n cells: measured y, predicted yhat, model idle. */
static void fit_metrics(const double *y, const double *yhat, const double *idle, size_t n,
                        double threshold, struct erg_fit_metrics *m) {
  memset(m, 0, sizeof *m);
  m->mape_total_percent = m->mape_dynamic_percent = m->r2 = NAN;
  if (n == 0)
    return;
  double sae = 0, sse = 0, sape = 0, sdape = 0, mean = 0, sst = 0;
  size_t nape = 0;
  for (size_t i = 0; i < n; i++)
    mean += y[i] / (double)n;
  for (size_t i = 0; i < n; i++) {
    double e = fabs(yhat[i] - y[i]);
    sae += e;
    sse += e * e;
    sst += (y[i] - mean) * (y[i] - mean);
    if (y[i] > 0) {
      sape += e / y[i];
      nape++;
    }
    /* Dynamic error: P̂−P is the same error on P−idle, but relative to
     * the part idle does not flatter; cells barely above idle would blow
     * the ratio up, so they are left out. */
    double thr = threshold >= 0 ? threshold : fmax(5.0, 0.10 * idle[i]);
    double dyn = y[i] - idle[i];
    if (dyn >= thr && dyn > 0) {
      sdape += e / dyn;
      m->cells_dynamic++;
    }
  }
  m->cells = n;
  m->mae_watts = sae / (double)n;
  m->rmse_watts = sqrt(sse / (double)n);
  if (nape)
    m->mape_total_percent = 100 * sape / (double)nape;
  if (m->cells_dynamic)
    m->mape_dynamic_percent = 100 * sdape / (double)m->cells_dynamic;
  if (sst > 0)
    m->r2 = 1 - sse / sst;
}

/* Held-out blocks: fold b of k holds out rows [b·n/k, (b+1)·n/k) of the
 * time-ordered rows; the holdout mode is a single last block. */
static int fit_validate(struct fit_ctx *c, size_t min_rows, struct erg_fit_metrics *m, char *why,
                        size_t whylen) {
  size_t n = c->nrows, k = c->o->folds > 1 ? (size_t)c->o->folds : 1;
  double *y = malloc(n * sizeof *y), *yhat = malloc(n * sizeof *yhat),
         *idle = malloc(n * sizeof *idle);
  size_t *train = malloc(n * sizeof *train), nt = 0;
  int rc = -1;
  if (!y || !yhat || !idle || !train) {
    snprintf(why, whylen, "out of memory");
    goto out;
  }
  for (size_t b = 0; b < k; b++) {
    size_t lo = k > 1 ? b * n / k : n - (size_t)floor(c->o->holdout_fraction * (double)n + 0.5);
    size_t hi = k > 1 ? (b + 1) * n / k : n, ntrain = 0;
    for (size_t j = 0; j < n; j++)
      if (j < lo || j >= hi)
        train[ntrain++] = c->rows[j];
    if (ntrain < min_rows || hi == lo) {
      snprintf(why, whylen,
               "validation block %zu: %zu training and %zu held-out cells (need %zu "
               "and 1)",
               b + 1, ntrain, hi - lo, min_rows);
      goto out;
    }
    struct fit_coef f = {0};
    c->stage = (int)b + 1;
    snprintf(c->stage_name, sizeof c->stage_name, "validation %zu/%zu", b + 1, k);
    if ((rc = fit_rows(c, train, ntrain, &f)) != 0) {
      if (rc == -2)
        snprintf(why, whylen, "cancelled");
      else
        snprintf(why, whylen, "fit failed in validation block %zu", b + 1);
      rc = -1;
      goto out;
    }
    for (size_t j = lo; j < hi; j++, nt++) {
      y[nt] = c->ds->measured_watts[c->rows[j]];
      yhat[nt] = coef_predict(c, &f, c->rows[j]);
      idle[nt] = f.beta0;
      if (c->o->holdout &&
          fit_holdout_add(c->o->holdout, c->ds, c->rows[j], yhat[nt], f.beta0) != 0) {
        snprintf(why, whylen, "out of memory");
        rc = -1;
        goto out;
      }
    }
  }
  fit_metrics(y, yhat, idle, nt, c->o->dynamic_threshold_watts, m);
  rc = 0;
out:
  free(y);
  free(yhat);
  free(idle);
  free(train);
  return rc;
}

/* The node's CPU count over the used cells (median: a hot-plugged CPU in
 * an old rotation does not decide it); 0 when the journal has none. */
static double fit_ncpu(const struct fit_ctx *c) {
  const struct erg_dataset *ds = c->ds;
  size_t nc = ds->nfeatures, n = 0;
  for (size_t k = 0; k < ds->nfeatures; k++)
    if (strcmp(ds->feature[k], ERG_NCPU_COLUMN) == 0)
      nc = k;
  double *v = nc < ds->nfeatures ? malloc(c->nrows * sizeof *v) : NULL;
  for (size_t j = 0; v && j < c->nrows; j++)
    if (ds->x[nc][c->rows[j]] > 0)
      v[n++] = ds->x[nc][c->rows[j]];
  double r = 0;
  if (n) {
    qsort(v, n, sizeof *v, double_cmp);
    r = v[n / 2];
  }
  free(v);
  return r;
}

static void fit_fill_model(const struct fit_ctx *c, const struct fit_coef *f, struct erg_model *m) {
  const struct erg_dataset *ds = c->ds;
  m->version = ERG_MODEL_VERSION;
  erg_strlcpy(m->node, c->o->node ? c->o->node : ds->node, sizeof m->node);
  m->nfeatures = c->nsel;
  for (size_t s = 0; s < c->nsel; s++) {
    erg_strlcpy(m->feature[s], ds->feature[c->sel[s]], ERG_FIT_NAME_MAX);
    m->coef[s] = f->beta[s];
    m->feature_max[s] = f->xmax[s];
  }
  m->utilization_max = f->u_max;
  m->curve_shape = f->curve_shape;
  /* A model file holds ERG_MODEL_COV_MAX terms; the caller may take all. */
  size_t nt = f->ncov == c->nsel + 1 ? f->ncov : 0;
  m->ncov = nt <= ERG_MODEL_COV_MAX ? nt : 0;
  for (size_t t = 0; t < m->ncov; t++)
    memcpy(m->cov[t], f->cov[t], m->ncov * sizeof m->cov[t][0]);
  if (c->o->cov_out && c->o->cov_out_n) {
    for (size_t t = 0; t < nt; t++)
      memcpy(&c->o->cov_out[t * nt], f->cov[t], nt * sizeof f->cov[t][0]);
    *c->o->cov_out_n = nt;
  }
  m->cov_block_cells = f->cov_block;
  m->misfit_correlation_cells = nt ? f->tau : 0;
  m->nleft_out = c->ndropped;
  for (size_t d = 0; d < c->ndropped; d++) {
    erg_strlcpy(m->left_out[d], ds->feature[c->dropped[d]], ERG_FIT_NAME_MAX);
    m->left_out_t[d] = c->dropped_t[d];
  }
  m->idle_watts = f->beta0;
  m->idle_source = c->o->idle_profile ? ERG_IDLE_FROM_RECORDED
                   : c->idle_fixed    ? ERG_IDLE_FROM_PROFILE
                                      : ERG_IDLE_FROM_FIT;
  m->idle_rows = c->idle_rows;
  if (c->o->idle_profile) {
    m->has_idle_profile = true;
    m->idle_profile = *c->o->idle_profile;
  }
  m->ncpu = fit_ncpu(c);
  m->step_seconds = ds->step_seconds > 0 ? ds->step_seconds : ds->row_step_seconds[c->rows[0]];
  m->train_first_unix_seconds = ds->time_unix_seconds[c->rows[0]];
  m->train_last_unix_seconds = ds->time_unix_seconds[c->rows[c->nrows - 1]];
  m->train_rows = c->nrows;
  if (c->o->folds > 1)
    snprintf(m->validation, sizeof m->validation, "%d time-block folds", c->o->folds);
  else if (m->metrics.cells)
    snprintf(m->validation, sizeof m->validation, "holdout last %.0f%%",
             100 * c->o->holdout_fraction);
  else
    snprintf(m->validation, sizeof m->validation, "none");
  m->created_unix_seconds = (double)time(NULL);
}

/* A journal mostly of a shared meter's rows is no node's own power any
 * more: refused, rather than fitted on the few rows before the node joined
 * its group (their model would replace the group's). Fewer shared rows
 * than own ones (the node just joined) are skipped. */
static int fit_check_shared(const struct fit_ctx *c, char *why, size_t whylen) {
  const struct erg_dataset *ds = c->ds;
  size_t shared = 0, own = 0;
  for (size_t i = 0; i < ds->nrows; i++)
    if (row_usable(ds, i)) {
      shared += (ds->flags[i] & ERG_ROW_SHARED) != 0;
      own += (ds->flags[i] & ERG_ROW_SHARED) == 0;
    }
  if (shared == 0 || shared < own)
    return 0;
  const char *node = c->o->node ? c->o->node : ds->node[0] ? ds->node : "?";
  snprintf(why, whylen,
           "node %s's power is a shared meter (journal flag 64): fit its group with "
           "`erg fit --group NAME --nodes ...` (%zu of %zu usable rows are flagged 64)",
           node, shared, shared + own);
  return -1;
}

static int fit_run(struct fit_ctx *c, struct erg_model *m, char *why, size_t whylen) {
  const struct erg_fit_options *o = c->o;
  if (o->holdout_fraction < 0 || o->holdout_fraction >= 1 || o->folds < 0 || o->folds > 100) {
    snprintf(why, whylen, "holdout fraction must be in [0, 1) and folds in 0..100");
    return -1;
  }
  if (fit_check_shared(c, why, whylen) != 0)
    return -1;
  fit_select_features(c);
  if (fit_collect_rows(c) != 0 || fit_idle_profile(c) != 0) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  if (c->nsel == 0) {
    snprintf(why, whylen, "no usable feature (none present in most rows and varying)");
    return -1;
  }
  size_t min_rows = 2 * (c->nsel + 1) > 8 ? 2 * (c->nsel + 1) : 8;
  if (c->nrows < min_rows) {
    snprintf(why, whylen, "%zu usable cells, need at least %zu", c->nrows, min_rows);
    return -1;
  }
  bool validate = o->folds > 1 || o->holdout_fraction > 0;
  c->nstages = (o->folds > 1 ? o->folds : 1) + 1;
  /* The final fit first: it decides the feature set (fit_final) that the
   * validation then scores. */
  struct fit_coef f;
  snprintf(c->stage_name, sizeof c->stage_name, "final fit");
  if (fit_final(c, &f) != 0) {
    snprintf(why, whylen, o->cancel && atomic_load(o->cancel) ? "cancelled" : "final fit failed");
    return -1;
  }
  c->stage = 1;
  memset(m, 0, sizeof *m);
  /* The held-out cells are kept so a caller can score another model on
   * exactly them (erg_model_is_worse). */
  if (o->holdout && fit_holdout_begin(o->holdout, c->ds, validate ? c->nrows : 0) != 0) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  if (validate && fit_validate(c, min_rows, &m->metrics, why, whylen) != 0)
    return -1;
  if (!validate)
    fit_metrics(NULL, NULL, NULL, 0, 0, &m->metrics);
  fit_fill_model(c, &f, m);
  char reason[300];
  if (erg_model_check(m, reason, sizeof reason) != 0) {
    snprintf(why, whylen, "no model: %s", reason);
    return -1;
  }
  if (o->progress)
    o->progress(o->progress_user, "done", 1.0);
  return 0;
}

int erg_fit(const struct erg_dataset *ds, const struct erg_fit_options *o, struct erg_model *m,
            char *why, size_t whylen) {
  struct erg_fit_options defaults;
  if (!o) {
    erg_fit_options_init(&defaults);
    o = &defaults;
  }
  /* An averaging meter's rows are fitted on features smoothed by its
   * kernel (fit/smooth.c): once here, for validation and the final fit. */
  struct erg_dataset smoothed;
  int sm = erg_dataset_smoothed(ds, &smoothed, why, whylen);
  if (sm < 0)
    return -1;
  struct fit_ctx c = {.ds = sm ? &smoothed : ds, .raw = ds, .o = o};
  /* GSL aborts on errors by default; a library must return them instead. */
  gsl_error_handler_t *old = gsl_set_error_handler_off();
  int rc = fit_run(&c, m, why, whylen);
  gsl_set_error_handler(old);
  free(c.rows);
  if (sm)
    erg_dataset_smoothed_free(&smoothed);
  return rc;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Internals shared by the fit library's files. */
#ifndef ERG_FIT_INT_H
#define ERG_FIT_INT_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include <jansson.h>

#include "erg_fit.h"

#define FIT_MAX_COLS (ERG_FIT_MAX_FEATURES + 1)
/* The column that defines utilisation (with ERG_NCPU_COLUMN). */
#define FIT_CPU_COLUMN "cpu_seconds_per_second"

/* Index of ds's column name, -1 when ds has none. */
int fit_dataset_column(const struct erg_dataset *ds, const char *name);

/* Called once per reweighting step with the fraction of the step budget;
 * non-zero stops the fit (cancelled). */
typedef int (*fit_step_fn)(void *user, double fraction);

/* Robust (Huber, then bisquare) non-negative least squares: b (A->size2
 * values) minimises the robust loss of y − A b subject to b ≥ 0. A needs
 * at least one row and one column. Returns 0, -1 on failure, -2 when step
 * asked to stop. */
int fit_robust_nnls(const gsl_matrix *A, const gsl_vector *y, double *b, fit_step_fn step,
                    void *user);
/* Standard errors of the b that fit_robust_nnls returned (same A, y):
 * from the final robust weights w, s² = Σ w r² / (Σ w − p) and the
 * pseudo-inverse of AᵀWA over the p columns with b > 0 (the NNLS passive
 * set; a column at 0 gets INFINITY). An approximation (the weights are
 * taken as given), good enough to tell a coefficient fitted to noise from
 * one the data support. */
int fit_robust_nnls_se(const gsl_matrix *A, const gsl_vector *y, const double *b, double *se);

/* The model's "coefficient_covariance" object (fit/model_cov.c), NULL
 * when it has none; reading it back (j NULL: none, ncov 0). */
/* Writes j (its reference taken; NULL: "cannot encode WHAT") with
 * json_dumps flags and a final newline, atomically; 0, or -1 and why. */
int fit_json_save(json_t *j, size_t flags, const char *path, const char *what, char *why,
                  size_t whylen);
json_t *fit_cov_to_json(const struct erg_model *m);
int fit_cov_from_json(struct erg_model *m, json_t *j, char *why, size_t whylen);

/* Cluster-robust (sandwich) covariance of that b over time blocks of
 * block consecutive rows (fit/solve.c; docs/model.md "Uncertainty"): q × q
 * into cov, row-major; a column held at 0 the variance it would have
 * freed alone (no covariance), 0 for columns of zeros; tau the residuals' persistence
 * in cells (Σ block sums² / Σ r², 1 … block). Returns 0 or -1. */
int fit_robust_nnls_cov(const gsl_matrix *A, const gsl_vector *y, const double *b, size_t block,
                        double *cov, double *tau);

/* The convex curve's parameterisation (fit/shape.c): for each selected
 * feature s whether it is a tail and its chain neighbours among the same
 * node's tails (up: next higher tail, down: next lower; -1: none). */
struct fit_shape {
  size_t nsel, ntails;
  bool tail[ERG_FIT_MAX_FEATURES];
  int up[ERG_FIT_MAX_FEATURES], down[ERG_FIT_MAX_FEATURES];
};
void fit_shape_init(struct fit_shape *sh, const struct erg_dataset *ds, const size_t *sel,
                    size_t nsel);
/* Column s of the convex fit at a row: x_s plus the tails above it. */
double fit_shape_column(const struct fit_shape *sh, const struct erg_dataset *ds, const size_t *sel,
                        size_t s, size_t row);
/* The model's coefficients beta of the convex fit's e (nsel values). */
void fit_shape_coef(const struct fit_shape *sh, const double *e, double *beta);
/* The covariance of (β0, e) turned into that of (β0, β): nt = nsel + 1. */
void fit_shape_cov(const struct fit_shape *sh, size_t nt,
                   double cov[ERG_FIT_COV_TERMS][ERG_FIT_COV_TERMS]);
/* The constrained fit (Ac, bc) nested in the free one (Af, bf), same y:
 * the p-value of the F test of their residuals under the free fit's
 * bisquare weights (1: the constraint costs nothing; 0: rejected). */
double fit_nested_pvalue(const gsl_matrix *Af, const double *bf, const gsl_matrix *Ac,
                         const double *bc, const gsl_vector *y);

/* For the top basis function of a curve (u^n: tail8_8, bernstein6_6 or
 * the cubic's bernstein3), the utilisation u of its value v (v^(1/n)); -1
 * for any other feature d. */
double fit_basis_root(int d, double v);

/* Held-out metrics as the model file's "validation" object. */
json_t *fit_metrics_to_json(const char *method, const struct erg_fit_metrics *x);
/* The model as the JSON object that erg_model_save writes. */
json_t *fit_model_to_json(const struct erg_model *m);
/* The idle profile's fields as a JSON object (file and model share them). */
json_t *fit_idle_profile_to_json(const struct erg_idle_profile *p);
int fit_idle_profile_from_json(struct erg_idle_profile *p, json_t *j, char *why, size_t whylen);

/* Empties h and gives it ds's node, step and columns, with room for
 * max_rows predictions. */
int fit_holdout_begin(struct erg_holdout *h, const struct erg_dataset *ds, size_t max_rows);
/* Appends ds's row i, held out, with the validation fit's prediction and
 * idle. */
int fit_holdout_add(struct erg_holdout *h, const struct erg_dataset *ds, size_t i,
                    double predicted_watts, double idle_watts);

#endif

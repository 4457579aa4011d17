// SPDX-License-Identifier: GPL-3.0-or-later
/* Uncertainty of one cell's shares (docs/model.md, "Uncertainty"): linear
 * propagation of the meter's error and of the model's coefficient error
 * through erg_attribute_cell_idle's rescaling to the measured power, and
 * the model's misfit. Per group of rows (a job), since the rows of one
 * job move together under every error source of the cell. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "erg_fit.h"

void erg_unc_interval(double energy, double sd_corr, double var, double *low, double *high) {
  double sd = sqrt(sd_corr * sd_corr + (var > 0 ? var : 0));
  *low = energy - ERG_UNC_Z95 * sd;
  *low = *low > 0 ? *low : 0;
  *high = energy + ERG_UNC_Z95 * sd;
}

double erg_model_noise_watts(const struct erg_model *m) {
  if (!m)
    return 0;
  const struct erg_idle_profile *ip = &m->idle_profile;
  /* The sample sd of n cells, and Student's t as for the profile's mean
   * (fit.c): the node's error is the noise over its cells minus the mean's
   * over the window, both ∝ the one σ that n cells estimate, so a 95 %
   * interval of their sum is t_{0.975, n−1} (not 1.96) of the plug-in sd
   * (6 cells: 93.8 % covered with the plug-in noise, 95.0 % with t). */
  if (m->has_idle_profile && ip->cells > 1 && isfinite(ip->stddev_watts) && ip->stddev_watts >= 0) {
    double n = (double)ip->cells, t = gsl_cdf_tdist_Pinv(0.975, n - 1) / ERG_UNC_Z95;
    return ip->stddev_watts * sqrt(n / (n - 1)) * t;
  }
  if (m->metrics.cells > 0 && isfinite(m->metrics.rmse_watts) && m->metrics.rmse_watts > 0)
    return m->metrics.rmse_watts;
  return 0;
}

double erg_model_misfit_watts(const struct erg_model *m) {
  if (!m || !(m->metrics.cells > 0) || !isfinite(m->metrics.rmse_watts) ||
      !(m->metrics.rmse_watts > 0))
    return 0;
  double r2 = m->metrics.rmse_watts * m->metrics.rmse_watts;
  const struct erg_idle_profile *ip = &m->idle_profile;
  if (m->has_idle_profile && ip->cells > 1 && isfinite(ip->stddev_watts) && ip->stddev_watts >= 0) {
    double n = (double)ip->cells,
           tau = m->misfit_correlation_cells > 1 ? m->misfit_correlation_cells : 1;
    double noise2 = ip->stddev_watts * ip->stddev_watts * n / (n - 1);
    r2 -= noise2 / tau;
  }
  return r2 > 0 ? sqrt(r2) : 0;
}

/* As attribute.c's: s_p = Σ β_k x_{k,p}, negative or non-finite as 0. */
static double unc_activity(const struct erg_model *m, const double *xp) {
  double s = 0;
  for (size_t k = 0; k < m->nfeatures; k++)
    s += erg_model_term(m, k, xp[k]);
  return isfinite(s) && s > 0 ? s : 0;
}

/* gᵀ C g over the model's (β0, β) covariance. */
static double unc_quadratic(const struct erg_model *m, const double *g, size_t nt) {
  double q = 0;
  for (size_t i = 0; i < nt; i++) {
    if (g[i] == 0)
      continue;
    double row = 0;
    for (size_t e = 0; e < nt; e++)
      row += m->cov[i][e] * g[e];
    q += g[i] * row;
  }
  return q > 0 ? q : 0;
}

/* Each group's fractions in one pass over the rows: F of the dynamic
 * power, H of the idle power (attribute.c's rules), gx = Σ x over its rows
 * with activity. */
struct unc_fractions {
  double F, H, gx[ERG_FIT_MAX_FEATURES];
  bool has_system;
};

static void unc_fractions(const struct erg_model *m, const double *x, const double *s, double S,
                          size_t nproc, size_t system_index, size_t active,
                          enum erg_idle_policy policy, const int *group, size_t ngroups,
                          struct unc_fractions *fr) {
  size_t K = m->nfeatures;
  for (size_t g = 0; g < ngroups; g++) {
    fr[g].F = fr[g].H = 0;
    fr[g].has_system = false;
    memset(fr[g].gx, 0, K * sizeof *fr[g].gx);
  }
  for (size_t p = 0; p < nproc; p++) {
    if (group[p] < 0 || (size_t)group[p] >= ngroups)
      continue;
    struct unc_fractions *f = &fr[group[p]];
    double fp = S > 0 ? s[p] / S : 0, h = 0;
    if (policy == ERG_IDLE_EVEN)
      h = active ? (s[p] > 0 ? 1.0 / (double)active : 0) : 1.0 / (double)nproc;
    else if (policy == ERG_IDLE_PROPORTIONAL)
      h = fp;
    f->F += fp;
    f->H += h;
    f->has_system |= p == system_index;
    for (size_t k = 0; s[p] > 0 && k < K; k++)
      f->gx[k] += x[p * K + k];
  }
  /* No modelled activity: [system] takes the dynamic power (and the idle
   * power under the proportional policy). */
  for (size_t g = 0; g < ngroups && !(S > 0); g++)
    if (fr[g].has_system) {
      fr[g].F += 1;
      fr[g].H += policy == ERG_IDLE_PROPORTIONAL;
    }
}

/* A measured cell's misfit ε moves power between the rows only as far as
 * their features differ: taken as errors of the model's terms, term k's
 * δ_k X_k independent with a variance of its part of the activity
 * (w_k = β_k X_k / S, so their sum's is the misfit's), a group's share
 * F·ε − Σ_k δ_k x_{k,g} is off by −Σ_k δ_k (x_{k,g} − F·X_k), of variance
 * ε² · Σ_k w_k (x_{k,g} / X_k − F)². A group whose rows are of one term
 * each gets F(1 − F) (two keys of different features: the misfit is in
 * one or the other); a group of the node's feature mix (rows of CPU time
 * alone, where every term is split by CPU share) 0. */
static double unc_misfit_split(const struct erg_model *m, const struct unc_fractions *fr,
                               const double *X, double S) {
  if (!(S > 0))
    return 0;
  double q = 0;
  for (size_t k = 0; k < m->nfeatures; k++) {
    double t = erg_model_term(m, k, X[k]);
    if (!(t > 0) || !(X[k] > 0))
      continue;
    double d = fr->gx[k] / X[k] - fr->F;
    q += t / S * d * d;
  }
  return q;
}

int erg_attribute_uncertainty_sets(const struct erg_model *m, double idle_watts,
                                   const struct erg_attribution *a, const double *x, size_t nproc,
                                   size_t system_index, enum erg_idle_policy policy,
                                   const struct erg_unc_cell *in, size_t nsets,
                                   const int *const *groups, const size_t *ngroups,
                                   struct erg_unc_group *const *outs) {
  if (!m || !a || !x || !in || (nsets && (!groups || !ngroups || !outs)) || nproc == 0 ||
      system_index >= nproc || (unsigned)policy > ERG_IDLE_PROPORTIONAL ||
      m->nfeatures > ERG_FIT_MAX_FEATURES)
    return -1;
  size_t maxg = 1;
  for (size_t i = 0; i < nsets; i++) {
    if (!groups[i] || (!outs[i] && ngroups[i]))
      return -1;
    maxg = ngroups[i] > maxg ? ngroups[i] : maxg;
  }
  size_t K = m->nfeatures, nt = K + 1;
  double *s = malloc(nproc * sizeof *s), S = 0, X[ERG_FIT_MAX_FEATURES] = {0};
  struct unc_fractions *frs = malloc(maxg * sizeof *frs);
  if (!s || !frs) {
    free(s);
    free(frs);
    return -1;
  }
  /* The rows' activities once for every set of groups. */
  size_t active = 0;
  for (size_t p = 0; p < nproc; p++) {
    s[p] = unc_activity(m, x + p * K);
    S += s[p];
    active += s[p] > 0;
    for (size_t k = 0; s[p] > 0 && k < K; k++)
      X[k] += x[p * K + k];
  }
  bool have_cov = m->ncov == nt && nt <= ERG_MODEL_COV_MAX;
  bool above = idle_watts < a->total_watts, prop = policy == ERG_IDLE_PROPORTIONAL;
  double D = a->dynamic_watts > 0 ? a->dynamic_watts : 0;
  /* β_k moves the split through f_p = s_p / S, times what is split by f. */
  double split = above ? D + (prop ? a->idle_watts : 0) : (prop ? a->total_watts : 0);
  double misfit = in->misfit_watts > 0 ? in->misfit_watts : 0;
  double persist = in->misfit_cells > 1 ? in->misfit_cells : 1;
  /* The misfit moves power between the rows of a measured cell, never more
   * than its dynamic power. */
  if (!a->estimated && misfit > D)
    misfit = D;
  for (size_t set = 0; set < nsets; set++) {
    const int *group = groups[set];
    size_t ng = ngroups[set];
    struct erg_unc_group *out = outs[set];
    unc_fractions(m, x, s, S, nproc, system_index, active, policy, group, ng, frs);
    for (size_t g = 0; g < ng; g++) {
      const struct unc_fractions *fr = &frs[g];
      double grad[ERG_FIT_MAX_FEATURES + 1];
      /* w = (P − β0)·F + β0·H above the idle power, P·H below it. */
      double dP = above ? fr->F : fr->H;
      grad[0] = above ? fr->H - fr->F : 0;
      for (size_t k = 0; k < K; k++)
        grad[1 + k] = S > 0 ? split * (fr->gx[k] - fr->F * X[k]) / S : 0;
      /* An estimated cell's power is the prediction β0 + Σ β_k X_k itself. */
      if (a->estimated) {
        grad[0] += dP;
        for (size_t k = 0; k < K; k++)
          grad[1 + k] += dP * X[k];
      }
      double corr = have_cov ? unc_quadratic(m, grad, nt) : 0;
      corr += dP * dP * in->meter_sd_corr_watts * in->meter_sd_corr_watts;
      double var = dP * dP * (in->meter_var_watts2 > 0 ? in->meter_var_watts2 : 0);
      /* The reading's noise is in the measured power, whoever it goes to. */
      if (!a->estimated && in->noise_watts > 0)
        var += dP * dP * in->noise_watts * in->noise_watts;
      /* A misfit that persists over τ cells adds τ times its variance to a
       * sum over cells (its variance per cell, as if independent). */
      if (a->estimated) {
        var += persist * dP * dP * misfit * misfit;
      } else {
        double f = fr->F < 0 ? 0 : fr->F > 1 ? 1 : fr->F;
        var += persist * misfit * misfit *
               (in->misfit_any_row ? f * (1 - f) : unc_misfit_split(m, fr, X, S));
      }
      out[g] = (struct erg_unc_group){.sd_corr_watts = sqrt(corr), .var_watts2 = var};
    }
  }
  free(s);
  free(frs);
  return 0;
}

int erg_attribute_uncertainty(const struct erg_model *m, double idle_watts,
                              const struct erg_attribution *a, const double *x, size_t nproc,
                              size_t system_index, enum erg_idle_policy policy,
                              const struct erg_unc_cell *in, const int *group, size_t ngroups,
                              struct erg_unc_group *out) {
  if (!group || (!out && ngroups))
    return -1;
  return erg_attribute_uncertainty_sets(m, idle_watts, a, x, nproc, system_index, policy, in, 1,
                                        &group, &ngroups, &out);
}

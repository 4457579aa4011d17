// SPDX-License-Identifier: GPL-3.0-or-later
/* Averaging meters: the kernel a trailing mean puts on the cell grid, and
 * the training rows' features smoothed by it (docs/model.md, "Averaging
 * meters"). The fit regresses each cell's measured power on features; a
 * meter that averages N seconds measures a weighted mean of neighbouring
 * cells' power, so its rows get the same weighted mean of the features.
 * Prediction and attribution keep each cell's own features. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit_int.h"

/* ∫_{-∞}^{v} max(0, S − |x|) dx: the triangle of half-width S. */
static double tri_integral(double v, double s) {
  if (v <= -s)
    return 0;
  if (v <= 0)
    return (v + s) * (v + s) / 2;
  if (v < s)
    return s * s - (s - v) * (s - v) / 2;
  return s * s;
}

int erg_meter_kernel(double average_seconds, double step_seconds, double offset_seconds, double *w,
                     int max_k) {
  if (!(step_seconds > 0) || !isfinite(offset_seconds) || max_k < 0)
    return -1;
  if (!(average_seconds > 1)) {
    w[0] = 1;
    return 0;
  }
  double n = average_seconds, s = step_seconds;
  /* The window [a, b) relative to the placed time; s − t of a point s of
   * cell k and t of cell 0 spreads as a triangle of half-width S about
   * k·S, so the cell gets the triangle's mass over [a, b). */
  double a = offset_seconds - n / 2, b = offset_seconds + n / 2;
  int k_max = (int)ceil(fmax(fabs(a), fabs(b)) / s);
  if (k_max > max_k)
    return -1;
  double sum = 0;
  for (int k = -k_max; k <= k_max; k++) {
    double c = k * s;
    w[k + k_max] = (tri_integral(b - c, s) - tri_integral(a - c, s)) / (s * n);
    sum += w[k + k_max];
  }
  /* Exactly 1 in exact arithmetic; rounding only. */
  for (int k = 0; k <= 2 * k_max; k++)
    w[k] /= sum;
  return k_max;
}

struct smooth_row {
  double t;
  size_t i;
};

static int smooth_row_cmp(const void *x, const void *y) {
  const struct smooth_row *a = x, *b = y;
  return a->t < b->t ? -1 : a->t > b->t ? 1 : (a->i > b->i) - (a->i < b->i);
}

/* The row at time t with step s (binary search over by, sorted); -1: none. */
static long smooth_find(const struct smooth_row *by, size_t n, double t, double s,
                        const struct erg_dataset *ds) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (by[mid].t < t - 1e-6)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (; lo < n && by[lo].t <= t + 1e-6; lo++)
    if (fabs(ds->row_step_seconds[by[lo].i] - s) < 1e-6)
      return (long)by[lo].i;
  return -1;
}

void erg_dataset_smoothed_free(struct erg_dataset *out) {
  if (!out)
    return;
  for (size_t k = 0; k < out->nfeatures; k++)
    free(out->x[k]);
  memset(out, 0, sizeof *out);
}

int erg_dataset_smoothed(const struct erg_dataset *ds, struct erg_dataset *out, char *why,
                         size_t whylen) {
  bool any = false;
  for (size_t i = 0; ds->row_average_seconds && i < ds->nrows && !any; i++)
    any = ds->row_average_seconds[i] > 1;
  if (!any)
    return 0;
  *out = *ds;
  /* Shared with ds until replaced below; spans are ds's to free. */
  out->spans = NULL;
  out->nspans = 0;
  for (size_t k = 0; k < ds->nfeatures; k++)
    out->x[k] = NULL;
  struct smooth_row *by = malloc((ds->nrows ? ds->nrows : 1) * sizeof *by);
  bool ok = by != NULL;
  for (size_t k = 0; ok && k < ds->nfeatures; k++)
    ok = (out->x[k] = malloc((ds->nrows ? ds->nrows : 1) * sizeof(double))) != NULL;
  if (!ok) {
    free(by);
    erg_dataset_smoothed_free(out);
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < ds->nrows; i++)
    by[i] = (struct smooth_row){ds->time_unix_seconds[i], i};
  qsort(by, ds->nrows, sizeof *by, smooth_row_cmp);
  int rc = 1;
  double w[2 * ERG_METER_KERNEL_MAX_K + 1];
  for (size_t i = 0; i < ds->nrows; i++) {
    double s = ds->row_step_seconds[i];
    int kk = erg_meter_kernel(ds->row_average_seconds[i], s, 0, w, ERG_METER_KERNEL_MAX_K);
    if (kk < 0) {
      snprintf(why, whylen, "average_seconds=%g over %g s cells: no kernel",
               ds->row_average_seconds[i], s);
      rc = -1;
      break;
    }
    long nb[2 * ERG_METER_KERNEL_MAX_K + 1];
    for (int k = -kk; k <= kk; k++)
      nb[k + kk] =
          k ? smooth_find(by, ds->nrows, ds->time_unix_seconds[i] + k * s, s, ds) : (long)i;
    for (size_t f = 0; f < ds->nfeatures; f++) {
      /* The CPU count defines utilisation; it is no power term. */
      if (!strcmp(ds->feature[f], ERG_NCPU_COLUMN)) {
        out->x[f][i] = ds->x[f][i];
        continue;
      }
      double v = 0;
      for (int k = 0; k <= 2 * kk; k++)
        v += nb[k] < 0 ? NAN : w[k] * ds->x[f][nb[k]];
      out->x[f][i] = v;
    }
  }
  free(by);
  if (rc < 0)
    erg_dataset_smoothed_free(out);
  return rc;
}

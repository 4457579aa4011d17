// SPDX-License-Identifier: GPL-3.0-or-later
/* Shared meters: the joint fit of a group of nodes behind one meter
 * (docs/model.md, "Shared meters: the joint fit"). The members' journal
 * rows are joined on cell time, the meter is regressed on their features
 * with erg_fit (pooled: summed features, one β for all; per-node: one
 * column per member and feature), and the result is split into one model
 * per member that predicts that member alone. Only the sum of the
 * members' idle powers is identified; the idle split decides the parts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

#include "erg_common.h"
#include "fit_int.h"

const char *erg_group_form_name(enum erg_group_form f) {
  return f == ERG_GROUP_POOLED ? "pooled" : f == ERG_GROUP_PER_NODE ? "per-node" : "auto";
}

const char *erg_idle_split_name(enum erg_idle_split s) {
  return s == ERG_IDLE_SPLIT_WEIGHTS   ? "weights"
         : s == ERG_IDLE_SPLIT_PROFILE ? "profile"
                                       : "equal";
}

void erg_group_options_init(struct erg_group_options *o) {
  memset(o, 0, sizeof *o);
  o->require_shared = true;
  erg_fit_options_init(&o->fit);
}

/* The members' rows joined on cell time: idx[j * n + m] is member m's row
 * of joined row j. */
struct group_join {
  size_t n, rows;
  size_t *idx;
};

/* The columns of the joint regression: column c is member[c]'s feature
 * (per-node) or the sum over members (pooled, member[c] == n); col[c][m]
 * is member m's dataset column, -1 where it has none. */
struct group_cols {
  size_t ncols;
  size_t member[ERG_FIT_MAX_FEATURES];
  int col[ERG_FIT_MAX_FEATURES][ERG_GROUP_MAX_NODES];
};

struct row_ref {
  double t;
  size_t i;
};

static int row_ref_cmp(const void *a, const void *b) {
  const struct row_ref *x = a, *y = b;
  return x->t < y->t ? -1 : x->t > y->t;
}

/* The meter agrees when all members journalled the same value for the cell
 * (same lag alignment); rounding in the journal is identical for all. */
static bool group_same_watts(double a, double b) {
  return fabs(a - b) <= 1e-6 * fmax(fabs(a), fabs(b));
}

/* Usable rows of each member in time order (flag 64 required when asked),
 * then their intersection on time. */
static int group_join(const struct erg_dataset *const *mem, size_t n, bool require_shared,
                      struct group_join *J, struct erg_group_result *r) {
  struct row_ref *ref[ERG_GROUP_MAX_NODES] = {0};
  size_t len[ERG_GROUP_MAX_NODES] = {0}, pos[ERG_GROUP_MAX_NODES] = {0}, cap = SIZE_MAX;
  int rc = -1;
  J->n = n;
  for (size_t m = 0; m < n; m++) {
    const struct erg_dataset *ds = mem[m];
    if (!(ref[m] = malloc((ds->nrows ? ds->nrows : 1) * sizeof *ref[m])))
      goto out;
    for (size_t i = 0; i < ds->nrows; i++) {
      if ((ds->flags[i] & (ERG_ROW_UNUSABLE | ERG_ROW_IDLE)) || !isfinite(ds->measured_watts[i]))
        continue;
      if (require_shared && !(ds->flags[i] & ERG_ROW_SHARED)) {
        r->rows_not_shared++;
        continue;
      }
      ref[m][len[m]++] = (struct row_ref){ds->time_unix_seconds[i], i};
    }
    qsort(ref[m], len[m], sizeof *ref[m], row_ref_cmp);
    cap = len[m] < cap ? len[m] : cap;
  }
  if (!(J->idx = malloc((cap ? cap : 1) * n * sizeof *J->idx)))
    goto out;
  for (;;) {
    double t = -INFINITY;
    bool done = false, all = true;
    for (size_t m = 0; m < n && !done; m++)
      done = pos[m] == len[m];
    for (size_t m = 0; m < n && !done; m++)
      t = fmax(t, ref[m][pos[m]].t);
    for (size_t m = 0; m < n && !done; m++) {
      while (pos[m] < len[m] && ref[m][pos[m]].t < t)
        pos[m]++;
      done = pos[m] == len[m];
      all = all && !done && ref[m][pos[m]].t == t;
    }
    if (done)
      break;
    if (!all)
      continue;
    const struct erg_dataset *d0 = mem[0];
    size_t i0 = ref[0][pos[0]].i;
    bool agree = true;
    for (size_t m = 1; m < n; m++) {
      size_t i = ref[m][pos[m]].i;
      agree = agree && group_same_watts(mem[m]->measured_watts[i], d0->measured_watts[i0]) &&
              mem[m]->row_step_seconds[i] == d0->row_step_seconds[i0];
    }
    for (size_t m = 0; m < n; m++)
      J->idx[J->rows * n + m] = ref[m][pos[m]++].i;
    if (agree)
      J->rows++;
    else
      r->rows_mismatched++;
  }
  r->rows_joined = J->rows;
  rc = 0;
out:
  for (size_t m = 0; m < n; m++)
    free(ref[m]);
  return rc;
}

/* Member m's value of its column col in joined row j. */
static double group_x(const struct erg_dataset *const *mem, const struct group_join *J, size_t m,
                      int col, size_t j) {
  return col < 0 ? NAN : mem[m]->x[col][J->idx[j * J->n + m]];
}

/* Condition number and largest correlation of the members' CPU time over
 * the joined rows. The identifiability of per-node coefficients is the
 * separation of the members: the curve and perf counters are collinear
 * with a node's own CPU time by construction (a node's own fit copes with
 * that), so they would only blur this measure. */
static void group_identify(const struct erg_dataset *const *mem, const char *const *nodes,
                           const struct group_join *J, struct erg_group_result *r, char *note,
                           size_t notelen) {
  size_t n = J->n, k = 0;
  int cpu[ERG_GROUP_MAX_NODES];
  double mean[ERG_GROUP_MAX_NODES] = {0}, sd[ERG_GROUP_MAX_NODES] = {0};
  double R[ERG_GROUP_MAX_NODES][ERG_GROUP_MAX_NODES] = {{0}};
  r->condition_number = INFINITY;
  r->max_correlation = NAN;
  note[0] = '\0';
  for (size_t m = 0; m < n; m++)
    if ((cpu[m] = fit_dataset_column(mem[m], FIT_CPU_COLUMN)) < 0) {
      snprintf(note, notelen, "%s has no %s", nodes[m], FIT_CPU_COLUMN);
      return;
    }
  for (size_t pass = 0; pass < 3; pass++) {
    k = 0;
    for (size_t j = 0; j < J->rows; j++) {
      double z[ERG_GROUP_MAX_NODES];
      bool ok = true;
      for (size_t m = 0; m < n && ok; m++)
        ok = isfinite(z[m] = group_x(mem, J, m, cpu[m], j));
      if (!ok)
        continue;
      k++;
      for (size_t a = 0; a < n; a++) {
        if (pass == 0)
          mean[a] += z[a];
        else if (pass == 1)
          sd[a] += (z[a] - mean[a]) * (z[a] - mean[a]);
        for (size_t b = 0; pass == 2 && b < n; b++)
          R[a][b] += (z[a] - mean[a]) / sd[a] * (z[b] - mean[b]) / sd[b];
      }
    }
    for (size_t a = 0; a < n && k > 0; a++) {
      if (pass == 0)
        mean[a] /= (double)k;
      else if (pass == 1)
        sd[a] = sqrt(sd[a] / (double)k);
      if (pass == 1 && !(sd[a] > 1e-12 * fmax(fabs(mean[a]), 1e-300))) {
        snprintf(note, notelen, "cpu of %s does not vary", nodes[a]);
        return;
      }
    }
    if (k <= n) {
      snprintf(note, notelen, "%zu joined rows with every member's CPU time", k);
      return;
    }
  }
  double best = -1;
  for (size_t a = 0; a < n; a++)
    for (size_t b = a + 1; b < n; b++) {
      R[a][b] /= (double)k;
      if (fabs(R[a][b]) > best) {
        best = fabs(R[a][b]);
        r->max_correlation = R[a][b];
        r->corr_a = a;
        r->corr_b = b;
      }
    }
  /* cond(Z) = sqrt(cond(ZᵀZ)), ZᵀZ/k the correlation matrix: an n × n SVD
   * instead of one of the rows × n matrix, exact enough far beyond 30. */
  gsl_matrix *A = gsl_matrix_alloc(n, n), *V = gsl_matrix_alloc(n, n);
  gsl_vector *S = gsl_vector_alloc(n), *w = gsl_vector_alloc(n);
  if (A && V && S && w) {
    for (size_t a = 0; a < n; a++)
      for (size_t b = 0; b < n; b++)
        gsl_matrix_set(A, a, b, a == b ? R[a][a] / (double)k : a < b ? R[a][b] : R[b][a]);
    if (gsl_linalg_SV_decomp(A, V, S, w) == 0 && gsl_vector_get(S, n - 1) > 0)
      r->condition_number = sqrt(gsl_vector_get(S, 0) / gsl_vector_get(S, n - 1));
  }
  gsl_matrix_free(A);
  gsl_matrix_free(V);
  gsl_vector_free(S);
  gsl_vector_free(w);
}

/* A member's GPU board power (docs/gpu.md): a journal has the column once
 * the node had GPU readings, so a member without it has no GPU: 0 W. */
#define GROUP_GPU_COLUMN "gpu_watts"

/* The first member with a dataset column for column k (pooled: member 0
 * unless it lacks gpu_watts). */
static size_t group_col_owner(const struct group_cols *c, size_t n, size_t k) {
  if (c->member[k] < n)
    return c->member[k];
  for (size_t m = 0; m < n; m++)
    if (c->col[k][m] >= 0)
      return m;
  return 0;
}

/* Already a pooled column of an earlier member's? */
static bool group_pooled_has(const struct erg_dataset *const *mem, size_t n,
                             const struct group_cols *c, const char *name) {
  for (size_t k = 0; k < c->ncols; k++) {
    size_t m = group_col_owner(c, n, k);
    if (strcmp(mem[m]->feature[c->col[k][m]], name) == 0)
      return true;
  }
  return false;
}

/* Pooled columns: the features every member has (ncpu is none), and
 * gpu_watts when some member has it: summed over the members with GPUs,
 * the others' 0 (a missing counter column is not measured, but a missing
 * GPU column is no GPU). Without it the GPU node's board power would be
 * the joint fit's residual, and ergd's split would give it to whichever
 * member's predicted dynamic power is largest. */
static void group_cols_pooled(const struct erg_dataset *const *mem, size_t n,
                              struct group_cols *c) {
  c->ncols = 0;
  for (size_t d = 0; d < n; d++)
    for (size_t k = 0; k < mem[d]->nfeatures && c->ncols < ERG_FIT_MAX_FEATURES; k++) {
      const char *name = mem[d]->feature[k];
      if (strcmp(name, ERG_NCPU_COLUMN) == 0 || group_pooled_has(mem, n, c, name))
        continue;
      bool all = true, gpu = strcmp(name, GROUP_GPU_COLUMN) == 0;
      for (size_t m = 0; m < n; m++) {
        c->col[c->ncols][m] = fit_dataset_column(mem[m], name);
        all = all && c->col[c->ncols][m] >= 0;
      }
      if (all || gpu)
        c->member[c->ncols++] = n;
    }
}

/* Per-node columns: every member's features (ncpu none), the curve too
 * when curve is set. -1 when they are more than a model holds. */
static int group_cols_per_node(const struct erg_dataset *const *mem, size_t n, bool curve,
                               struct group_cols *c) {
  c->ncols = 0;
  for (size_t m = 0; m < n; m++)
    for (size_t k = 0; k < mem[m]->nfeatures; k++) {
      const char *name = mem[m]->feature[k];
      if (strcmp(name, ERG_NCPU_COLUMN) == 0 || (!curve && erg_derived_index(name) >= 0))
        continue;
      if (c->ncols == ERG_FIT_MAX_FEATURES)
        return -1;
      for (size_t e = 0; e < n; e++)
        c->col[c->ncols][e] = e == m ? (int)k : -1;
      c->member[c->ncols++] = m;
    }
  return 0;
}

/* Column c's name: the feature, "NODE:feature" per node (fit.c judges it by
 * the part after the colon). */
static int group_col_name(const struct erg_dataset *const *mem, const char *const *nodes, size_t n,
                          const struct group_cols *c, size_t col, char *out) {
  size_t m = group_col_owner(c, n, col);
  const char *f = mem[m]->feature[c->col[col][m]];
  int len = c->member[col] < n ? snprintf(out, ERG_FIT_NAME_MAX, "%s:%s", nodes[m], f)
                               : snprintf(out, ERG_FIT_NAME_MAX, "%s", f);
  if (len >= ERG_FIT_NAME_MAX)
    len = snprintf(out, ERG_FIT_NAME_MAX, "#%zu:%s", m, f);
  return len < ERG_FIT_NAME_MAX ? 0 : -1;
}

/* The joined dataset: the meter and the columns (summed when pooled). */
static int group_dataset(const struct erg_dataset *const *mem, const char *const *nodes,
                         const struct group_join *J, const struct group_cols *c,
                         struct erg_dataset *ds, char *why, size_t whylen) {
  size_t n = J->n, rows = J->rows ? J->rows : 1;
  erg_dataset_init(ds);
  ds->step_seconds = mem[0]->step_seconds;
  ds->cap = rows;
  ds->time_unix_seconds = malloc(rows * sizeof(double));
  ds->row_step_seconds = malloc(rows * sizeof(double));
  ds->measured_watts = malloc(rows * sizeof(double));
  ds->flags = malloc(rows * sizeof(unsigned));
  ds->row_average_seconds = malloc(rows * sizeof(double));
  bool ok = ds->time_unix_seconds && ds->row_step_seconds && ds->measured_watts && ds->flags &&
            ds->row_average_seconds;
  for (size_t k = 0; ok && k < c->ncols; k++) {
    ds->nfeatures++;
    ok = (ds->x[k] = malloc(rows * sizeof(double))) != NULL;
  }
  if (!ok) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  for (size_t k = 0; k < c->ncols; k++) {
    if (group_col_name(mem, nodes, n, c, k, ds->feature[k]) != 0) {
      snprintf(why, whylen, "feature name too long for a per-node column");
      return -1;
    }
    for (size_t e = 0; e < k; e++)
      if (strcmp(ds->feature[e], ds->feature[k]) == 0) {
        snprintf(why, whylen, "per-node columns named alike: %s", ds->feature[k]);
        return -1;
      }
  }
  for (size_t j = 0; j < J->rows; j++) {
    size_t i0 = J->idx[j * n];
    ds->time_unix_seconds[j] = mem[0]->time_unix_seconds[i0];
    ds->row_step_seconds[j] = mem[0]->row_step_seconds[i0];
    ds->measured_watts[j] = mem[0]->measured_watts[i0];
    /* The meter is the joined row's own power: no ERG_ROW_SHARED. */
    ds->flags[j] = 0;
    /* One meter: an averaging one (a chassis manager's mean) smooths the
     * joined row as erg_fit smooths a node's (fit/smooth.c); a member whose
     * journal says so speaks for the meter. */
    ds->row_average_seconds[j] = 0;
    for (size_t m = 0; m < n; m++) {
      size_t im = J->idx[j * n + m];
      ds->flags[j] |= mem[m]->flags[im] & ERG_ROW_POWER_ESTIMATED;
      if (mem[m]->row_average_seconds &&
          mem[m]->row_average_seconds[im] > ds->row_average_seconds[j])
        ds->row_average_seconds[j] = mem[m]->row_average_seconds[im];
    }
    for (size_t k = 0; k < c->ncols; k++) {
      double v = 0;
      for (size_t m = 0; m < n; m++)
        if (c->member[k] == m || (c->member[k] == n && c->col[k][m] >= 0))
          v += group_x(mem, J, m, c->col[k][m], j); /* pooled: no column, no GPU */
      ds->x[k][j] = v;
    }
  }
  ds->nrows = J->rows;
  return 0;
}

/* The identifiability in words, for the reason line. */
static void group_numbers(const char *const *nodes, const struct erg_group_result *r, char *out,
                          size_t outlen) {
  if (isnan(r->max_correlation))
    snprintf(out, outlen, "condition %.3g", r->condition_number);
  else
    snprintf(out, outlen, "condition %.3g, largest correlation r=%.2f: cpu of %s and %s",
             r->condition_number, r->max_correlation, nodes[r->corr_a], nodes[r->corr_b]);
}

/* The form to fit and why; the per-node columns in *c when per-node. */
static void group_choose(const struct erg_dataset *const *mem, const char *const *nodes, size_t n,
                         const struct erg_group_options *o, const char *note, struct group_cols *c,
                         struct erg_group_result *r) {
  char nums[200];
  group_numbers(nodes, r, nums, sizeof nums);
  r->identified = !note[0] && r->condition_number <= ERG_GROUP_MAX_CONDITION &&
                  fabs(r->max_correlation) <= ERG_GROUP_MAX_CORRELATION;
  r->form = ERG_GROUP_POOLED;
  if (o->form == ERG_GROUP_POOLED) {
    snprintf(r->reason, sizeof r->reason, "pooled as asked (%s)", nums);
    return;
  }
  if (!r->identified) {
    if (note[0])
      snprintf(r->reason, sizeof r->reason, "per-node coefficients not identified (%s)", note);
    else if (fabs(r->max_correlation) > ERG_GROUP_MAX_CORRELATION)
      snprintf(r->reason, sizeof r->reason,
               "per-node coefficients not identified (cpu of %s and %s correlate r=%.2f, "
               "condition %.3g)",
               nodes[r->corr_a], nodes[r->corr_b], r->max_correlation, r->condition_number);
    else
      snprintf(r->reason, sizeof r->reason,
               "per-node coefficients not identified (condition %.3g > %g; %s)",
               r->condition_number, ERG_GROUP_MAX_CONDITION, nums);
    return;
  }
  /* Each member's curve is ERG_NDERIVED more columns: only with the rows
   * for them. */
  bool fits = group_cols_per_node(mem, n, true, c) == 0;
  size_t need = ERG_GROUP_ROWS_PER_COLUMN * c->ncols;
  if (fits && r->rows_joined >= need) {
    r->form = ERG_GROUP_PER_NODE;
    r->curve_per_node = true;
    snprintf(r->reason, sizeof r->reason, "per-node coefficients identified (%s)", nums);
  } else if (group_cols_per_node(mem, n, false, c) == 0) {
    r->form = ERG_GROUP_PER_NODE;
    if (fits)
      snprintf(r->reason, sizeof r->reason,
               "per-node coefficients identified (%s); linear per "
               "node: %zu joined rows, the utilisation curves need %zu (%d per column)",
               nums, r->rows_joined, need, ERG_GROUP_ROWS_PER_COLUMN);
    else
      snprintf(r->reason, sizeof r->reason,
               "per-node coefficients identified (%s); linear per "
               "node: the utilisation curves need more than %d columns",
               nums, ERG_FIT_MAX_FEATURES);
  } else
    snprintf(r->reason, sizeof r->reason, "per-node needs more than %d columns",
             ERG_FIT_MAX_FEATURES);
}

/* Each member's part of Σ idle; -1 when the split's inputs are unusable. */
static int group_idle_fractions(size_t n, const struct erg_group_options *o, double *frac,
                                double *total_profile, char *why, size_t whylen) {
  double sum = 0;
  for (size_t m = 0; m < n; m++) {
    double w = o->idle_split == ERG_IDLE_SPLIT_WEIGHTS   ? o->weights[m]
               : o->idle_split == ERG_IDLE_SPLIT_PROFILE ? o->profiles[m].mean_watts
                                                         : 1;
    if (!(w >= 0 && isfinite(w))) {
      snprintf(why, whylen, "idle split: member %zu's %s is not a number >= 0", m + 1,
               o->idle_split == ERG_IDLE_SPLIT_WEIGHTS ? "weight" : "idle profile");
      return -1;
    }
    sum += frac[m] = w;
  }
  if (!(sum > 0)) {
    snprintf(why, whylen, "idle split: the %s sum to 0", erg_idle_split_name(o->idle_split));
    return -1;
  }
  for (size_t m = 0; m < n; m++)
    frac[m] /= sum;
  *total_profile = sum;
  return 0;
}

static int double_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Member m's training maxima, CPU count and utilisation over the rows the
 * joint fit used: its own data, so ergd checks its own range. */
static void group_member_range(const struct erg_dataset *mem, const struct group_join *J, size_t m,
                               const bool *used, struct erg_model *mm) {
  int cpu = fit_dataset_column(mem, FIT_CPU_COLUMN), nc = fit_dataset_column(mem, ERG_NCPU_COLUMN);
  int col[ERG_FIT_MAX_FEATURES];
  double *v = malloc((J->rows ? J->rows : 1) * sizeof *v);
  size_t nv = 0;
  for (size_t k = 0; k < mm->nfeatures; k++)
    col[k] = fit_dataset_column(mem, mm->feature[k]);
  for (size_t j = 0; j < J->rows; j++) {
    if (!used[j])
      continue;
    size_t i = J->idx[j * J->n + m];
    for (size_t k = 0; k < mm->nfeatures; k++)
      if (col[k] >= 0 && mem->x[col[k]][i] > mm->feature_max[k])
        mm->feature_max[k] = mem->x[col[k]][i];
    if (cpu >= 0 && nc >= 0) {
      double u = erg_derived_utilization(mem->x[cpu][i], mem->x[nc][i]);
      mm->utilization_max = u > mm->utilization_max ? u : mm->utilization_max;
    }
    if (v && nc >= 0 && mem->x[nc][i] > 0)
      v[nv++] = mem->x[nc][i];
  }
  /* Median, as a single node's fit takes it: a hot-plugged CPU in an old
   * rotation does not decide it. */
  if (nv)
    qsort(v, nv, sizeof *v, double_cmp);
  mm->ncpu = nv ? v[nv / 2] : 0;
  free(v);
}

/* Joined row j is one the fit used: every column of the model present. */
static bool *group_used_rows(const struct erg_dataset *ds, const struct erg_model *gm) {
  bool *used = malloc((ds->nrows ? ds->nrows : 1) * sizeof *used);
  int col[ERG_FIT_MAX_FEATURES];
  for (size_t k = 0; k < gm->nfeatures; k++)
    col[k] = fit_dataset_column(ds, gm->feature[k]);
  for (size_t j = 0; used && j < ds->nrows; j++) {
    used[j] = true;
    for (size_t k = 0; k < gm->nfeatures && used[j]; k++)
      used[j] = col[k] >= 0 && isfinite(ds->x[col[k]][j]);
  }
  return used;
}

/* Member m's model from the joint one: its columns' coefficients (all of
 * them when pooled), its part of the idle, the group's metrics; its terms'
 * covariance from the joint fit's, cov (nc terms, row-major), which a
 * model of several members' terms cannot hold itself (4 members with the
 * curve: 33 terms). */
static void group_member_model(const struct erg_dataset *const *mem, const char *const *nodes,
                               size_t m, const struct erg_dataset *ds, const struct group_cols *c,
                               const struct erg_model *gm, const double *cov, size_t nc,
                               struct erg_model *mm, size_t *from) {
  memset(mm, 0, sizeof *mm);
  mm->version = ERG_MODEL_VERSION;
  erg_strlcpy(mm->node, nodes[m], sizeof mm->node);
  /* from: the joint term of each member term (ERG_FIT_MAX_FEATURES + 1) */
  memset(from, 0, (ERG_FIT_MAX_FEATURES + 1) * sizeof *from);
  for (size_t k = 0; k < gm->nfeatures; k++) {
    int col = fit_dataset_column(ds, gm->feature[k]);
    if (col < 0 || c->col[col][m] < 0)
      continue;
    erg_strlcpy(mm->feature[mm->nfeatures], mem[m]->feature[c->col[col][m]], ERG_FIT_NAME_MAX);
    from[mm->nfeatures + 1] = k + 1;
    mm->coef[mm->nfeatures++] = gm->coef[k];
  }
  /* The member's terms' covariance is the joint fit's over them; its idle
   * (a fixed part of the group's, group_member_idle) is scaled there. */
  if (cov && nc == gm->nfeatures + 1 && mm->nfeatures + 1 <= ERG_MODEL_COV_MAX) {
    mm->ncov = mm->nfeatures + 1;
    mm->cov_block_cells = gm->cov_block_cells;
    mm->misfit_correlation_cells = gm->misfit_correlation_cells;
    for (size_t t = 0; t < mm->ncov; t++)
      for (size_t e = 0; e < mm->ncov; e++)
        mm->cov[t][e] = cov[from[t] * nc + from[e]];
  }
  for (size_t k = 0; k < gm->nleft_out; k++) {
    int col = fit_dataset_column(ds, gm->left_out[k]);
    if (col < 0 || c->col[col][m] < 0)
      continue;
    erg_strlcpy(mm->left_out[mm->nleft_out], mem[m]->feature[c->col[col][m]], ERG_FIT_NAME_MAX);
    mm->left_out_t[mm->nleft_out++] = gm->left_out_t[k];
  }
  mm->idle_source = ERG_IDLE_FROM_FIT;
  mm->curve_shape = gm->curve_shape;
  mm->step_seconds = gm->step_seconds;
  mm->train_first_unix_seconds = gm->train_first_unix_seconds;
  mm->train_last_unix_seconds = gm->train_last_unix_seconds;
  mm->train_rows = gm->train_rows;
  erg_strlcpy(mm->validation, gm->validation, sizeof mm->validation);
  mm->metrics = gm->metrics;
  mm->created_unix_seconds = gm->created_unix_seconds;
}

static void group_fill_info(const char *const *nodes, size_t n, const struct erg_group_options *o,
                            const struct erg_group_result *r, double frac,
                            struct erg_model_group *g) {
  erg_strlcpy(g->name, o->name, sizeof g->name);
  g->nnodes = n;
  for (size_t m = 0; m < n; m++)
    erg_strlcpy(g->nodes[m], nodes[m], sizeof g->nodes[m]);
  erg_strlcpy(g->form, erg_group_form_name(r->form), sizeof g->form);
  erg_strlcpy(g->idle_split, erg_idle_split_name(o->idle_split), sizeof g->idle_split);
  g->idle_watts = r->idle_watts;
  g->idle_fraction = frac;
  g->idle_scale = r->idle_scale;
  g->condition_number = r->condition_number;
  g->max_correlation = r->max_correlation;
  if (!isnan(r->max_correlation)) {
    erg_strlcpy(g->max_correlation_nodes[0], nodes[r->corr_a], ERG_FIT_NAME_MAX);
    erg_strlcpy(g->max_correlation_nodes[1], nodes[r->corr_b], ERG_FIT_NAME_MAX);
  }
}

static int group_check_args(const char *const *nodes, size_t n, const struct erg_group_options *o,
                            char *why, size_t whylen) {
  if (n < 2 || n > ERG_GROUP_MAX_NODES || !o || !o->name || !o->name[0] ||
      strlen(o->name) >= ERG_FIT_NAME_MAX) {
    snprintf(why, whylen, "a group needs a name (< %d bytes) and 2..%d members", ERG_FIT_NAME_MAX,
             ERG_GROUP_MAX_NODES);
    return -1;
  }
  for (size_t m = 0; m < n; m++) {
    if (!nodes[m][0] || strlen(nodes[m]) >= ERG_FIT_NAME_MAX) {
      snprintf(why, whylen, "member %zu: empty or long node name", m + 1);
      return -1;
    }
    for (size_t e = 0; e < m; e++)
      if (strcmp(nodes[e], nodes[m]) == 0) {
        snprintf(why, whylen, "node %s is a member twice", nodes[m]);
        return -1;
      }
  }
  if ((o->idle_split == ERG_IDLE_SPLIT_WEIGHTS && !o->weights) ||
      (o->idle_split == ERG_IDLE_SPLIT_PROFILE && !o->profiles)) {
    snprintf(why, whylen, "idle split %s without its %s", erg_idle_split_name(o->idle_split),
             o->idle_split == ERG_IDLE_SPLIT_WEIGHTS ? "weights" : "profiles");
    return -1;
  }
  return 0;
}

/* The fit once the rows are joined; ds is the joined dataset. */
static int group_run(const struct erg_dataset *const *mem, const char *const *nodes, size_t n,
                     const struct erg_group_options *o, const struct group_join *J,
                     struct erg_dataset *ds, struct erg_model *models, struct erg_group_result *r,
                     char *why, size_t whylen) {
  char note[160], reason[400];
  double frac[ERG_GROUP_MAX_NODES], total_profile;
  struct group_cols c = {.ncols = 0}; /* group_choose fills it only per node */
  if (group_idle_fractions(n, o, frac, &total_profile, why, whylen) != 0)
    return -1;
  if (J->rows == 0) {
    snprintf(why, whylen,
             "group %s: no cell that every member journalled with the same "
             "meter value (%zu disagreeing, %zu usable rows without flag 64)",
             o->name, r->rows_mismatched, r->rows_not_shared);
    return -1;
  }
  group_identify(mem, nodes, J, r, note, sizeof note);
  group_choose(mem, nodes, n, o, note, &c, r);
  if (r->form == ERG_GROUP_POOLED)
    group_cols_pooled(mem, n, &c);
  if (group_dataset(mem, nodes, J, &c, ds, why, whylen) != 0)
    return -1;
  struct erg_fit_options fo = o->fit;
  fo.node = o->name;
  fo.idle_profile = o->idle_sum;
  fo.holdout = NULL;
  size_t nc = 0;
  double *cov = malloc(sizeof(double) * ERG_FIT_COV_TERMS * ERG_FIT_COV_TERMS);
  fo.cov_out = cov;
  fo.cov_out_n = cov ? &nc : NULL;
  struct erg_model gm;
  if (erg_fit(ds, &fo, &gm, reason, sizeof reason) != 0) {
    snprintf(why, whylen, "group %s (%s): %s", o->name, erg_group_form_name(r->form), reason);
    free(cov);
    return -1;
  }
  r->idle_watts = gm.idle_watts;
  r->idle_fixed = o->idle_sum != NULL;
  r->idle_scale = o->idle_split == ERG_IDLE_SPLIT_PROFILE ? gm.idle_watts / total_profile : NAN;
  r->metrics = gm.metrics;
  r->rows_used = gm.train_rows;
  erg_strlcpy(r->validation, gm.validation, sizeof r->validation);
  bool *used = group_used_rows(ds, &gm);
  if (!used) {
    snprintf(why, whylen, "out of memory");
    free(cov);
    return -1;
  }
  int rc = 0;
  struct erg_group_cov *gc = o->cov_out;
  if (gc) {
    memset(gc, 0, sizeof *gc);
    erg_strlcpy(gc->name, o->name, sizeof gc->name);
    gc->created_unix_seconds = gm.created_unix_seconds;
    gc->nnodes = n;
  }
  bool have_cov = cov && nc == gm.nfeatures + 1 && nc <= ERG_GROUP_COV_TERMS;
  for (size_t m = 0; m < n && rc == 0; m++) {
    size_t from[ERG_FIT_MAX_FEATURES + 1];
    group_member_model(mem, nodes, m, ds, &c, &gm, cov, nc, &models[m], from);
    if (gc) { /* the member's features' joint terms: its cross blocks */
      erg_strlcpy(gc->nodes[m], nodes[m], sizeof gc->nodes[m]);
      gc->nfeatures[m] = models[m].nfeatures;
      for (size_t k = 0; k < models[m].nfeatures; k++) {
        erg_strlcpy(gc->feature[m][k], models[m].feature[k], sizeof gc->feature[m][k]);
        gc->term[m][k] = from[k + 1];
      }
    }
    group_member_range(mem[m], J, m, used, &models[m]);
    models[m].idle_watts = frac[m] * gm.idle_watts;
    for (size_t t = 0; t < models[m].ncov; t++) {
      models[m].cov[0][t] *= frac[m];
      models[m].cov[t][0] *= frac[m];
    }
    /* Its part of the group's idle, not a fit of its own (issue 38). */
    models[m].idle_source = o->idle_sum ? ERG_IDLE_FROM_GROUP_PROFILE : ERG_IDLE_FROM_GROUP_FIT;
    models[m].idle_rows = o->idle_sum ? o->idle_sum->cells : 0;
    group_fill_info(nodes, n, o, r, frac[m], &models[m].group);
    if (erg_model_check(&models[m], reason, sizeof reason) != 0) {
      snprintf(why, whylen, "group %s: no model for %s: %s", o->name, nodes[m], reason);
      rc = -1;
    }
  }
  if (gc && have_cov && rc == 0) {
    gc->nterms = nc;
    for (size_t a = 0; a < nc; a++)
      for (size_t b = 0; b < nc; b++)
        gc->cov[a][b] = cov[a * nc + b];
  }
  free(used);
  free(cov);
  return rc;
}

int erg_group_fit(const struct erg_dataset *const *members, const char *const *nodes, size_t n,
                  const struct erg_group_options *o, struct erg_model *models,
                  struct erg_group_result *r, char *why, size_t whylen) {
  memset(r, 0, sizeof *r);
  r->condition_number = r->max_correlation = r->idle_scale = NAN;
  if (group_check_args(nodes, n, o, why, whylen) != 0)
    return -1;
  struct group_join J = {0};
  struct erg_dataset ds;
  erg_dataset_init(&ds);
  gsl_error_handler_t *old = gsl_set_error_handler_off();
  int rc = group_join(members, n, o->require_shared, &J, r);
  if (rc != 0)
    snprintf(why, whylen, "out of memory");
  else
    rc = group_run(members, nodes, n, o, &J, &ds, models, r, why, whylen);
  gsl_set_error_handler(old);
  erg_dataset_free(&ds);
  free(J.idx);
  return rc;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* erg fit library: reads the per-node training journal, fits the linear
 * power model P = idle + Σ β_k·x_k (non-negative, robust), validates it on
 * held-out time blocks, stores it as JSON and attributes a cell's power to
 * processes with it. Formats and maths: docs/model.md. */
#ifndef ERG_FIT_H
#define ERG_FIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define ERG_MODEL_VERSION 1
/* Columns of a dataset and features of a model: a journal's own (at most
 * ERG_JOURNAL_MAX_FEATURES) plus ncpu and the curve, or a shared meter's
 * per-node columns (docs/model.md, "Shared meters"). */
#define ERG_FIT_MAX_FEATURES 64
#define ERG_JOURNAL_MAX_FEATURES 32 /* feature columns of one journal file */
#define ERG_FIT_NAME_MAX 64
/* Terms (idle + features) whose covariance a model keeps. */
#define ERG_MODEL_COV_MAX 24
/* Terms (β0 and every feature) of a fit's own covariance. */
#define ERG_FIT_COV_TERMS (ERG_FIT_MAX_FEATURES + 1)

/* Journal row flags (the `flags` column). */
enum {
  ERG_ROW_METER_MISSING = 1,
  ERG_ROW_AGENT_MISSING = 2,
  ERG_ROW_ESTIMATED = 4,
  ERG_ROW_IDLE = 8,
  ERG_ROW_LAG_UNSURE = 16, /* meter aligned with no or an uncertain lag estimate */
  /* the meter's power is A x V (or VA) x a configured power factor: kept
   * for training (a wrong power factor scales every coefficient alike) */
  ERG_ROW_POWER_ESTIMATED = 32,
  /* measured_watts is the whole shared meter of the node's group
   * (docs/model.md, Shared meters): never fitted as this node's power */
  ERG_ROW_SHARED = 64,
};
#define ERG_ROW_UNUSABLE                                                                           \
  (ERG_ROW_METER_MISSING | ERG_ROW_AGENT_MISSING | ERG_ROW_ESTIMATED | ERG_ROW_LAG_UNSURE)

/* ---- dataset: journal rows of one node ----
 * Features are stored by column; a feature that a file lacks (older rotated
 * journal) is NaN in that file's rows. */
struct erg_dataset {
  char node[ERG_FIT_NAME_MAX]; /* from the journal header, "" if none */
  double step_seconds;         /* from the first header that gave one */
  size_t nfeatures;
  char feature[ERG_FIT_MAX_FEATURES][ERG_FIT_NAME_MAX];
  size_t nrows, cap;
  double *time_unix_seconds;
  double *row_step_seconds;
  double *measured_watts; /* NaN when missing */
  unsigned *flags;
  /* The trailing mean, in seconds, that the meter of each row showed (its
   * journal's average_seconds; 0 or 1: an instantaneous meter): the fit
   * smooths that row's features by the meter's kernel (erg_meter_kernel). */
  double *row_average_seconds;
  /* What erg_dataset_add_row gives the rows it adds next (the journal
   * reader sets it from each file's header; 0 after erg_dataset_init). */
  double meter_average_seconds;
  double *x[ERG_FIT_MAX_FEATURES]; /* x[k][row] */
  size_t malformed_lines;          /* skipped, summed over files */
  size_t duplicate_rows;           /* skipped: a cell time already read */
  size_t implausible_rows;         /* skipped: values no node measures (below) */
  size_t lag_unsure_rows;          /* rows read with ERG_ROW_LAG_UNSURE */
  size_t files;
  /* Rows of each file read, [first, first + n), in strictly rising time. */
  struct erg_dataset_span {
    size_t first, n;
  } * spans;
  size_t nspans;
};

void erg_dataset_init(struct erg_dataset *ds);
void erg_dataset_free(struct erg_dataset *ds);
/* Declares a feature column; returns its index or -1 (bad name, too many). */
int erg_dataset_add_feature(struct erg_dataset *ds, const char *name, char *why, size_t whylen);
/* Appends one row; x holds ds->nfeatures values in column order. Its
 * meter's average is ds->meter_average_seconds. */
int erg_dataset_add_row(struct erg_dataset *ds, double time_unix_seconds, double step_seconds,
                        double measured_watts, unsigned flags, const double *x);
/* What a journal row may hold (issue 23): measured power 0..1 MW, feature
 * rates 0..1e15 per second, at most 100,000 CPUs and CPU time per second
 * at most twice the CPU count (+1). Rows beyond are skipped and counted in
 * implausible_rows; NaN is "not measured" and stays. */
#define ERG_FIT_MAX_WATTS 1e6
#define ERG_FIT_MAX_RATE 1e15
#define ERG_FIT_MAX_CPUS 1e5
/* Appends the rows of one journal file (see docs/model.md). Malformed lines
 * are skipped and counted; so are rows whose time is not after the file's
 * previous row or that another file read already has (a cell journalled
 * twice around a crash must count once; the first copy is kept). A wrong
 * version, a node that differs from rows already read, or a repeated
 * column header that differs is an error. */
int erg_journal_read(struct erg_dataset *ds, const char *path, char *why, size_t whylen);
/* As erg_journal_read, calling progress (if not NULL) every 256 KiB read
 * with the bytes of this file read so far; a non-zero return stops the
 * read: -1, why "cancelled" (the rows read so far stay in ds). */
typedef int (*erg_journal_progress_fn)(void *user, size_t bytes_read);
int erg_journal_read_progress(struct erg_dataset *ds, const char *path,
                              erg_journal_progress_fn progress, void *user, char *why,
                              size_t whylen);

/* ---- averaging meters (docs/model.md, "Averaging meters") ----
 * A meter that shows the trailing mean of average_seconds = N seconds,
 * its readings moved back by the lag plus (N − 1) / 2 s (ergd's
 * placement: the window's middle on the reading's time, offset_seconds
 * after it when the placement is off by that much), measures in a cell
 * of step_seconds = S not the cell's own power but the weighted mean of
 * cells −K … K around it: w[K + k] = (1 / (S N)) ∫∫ over t in cell 0 and
 * s in cell k with s − t in the window [δ − N/2, δ + N/2] (a trapezoid,
 * box(S) ∗ box(N), integrated over each cell). N = 5, S = 5, δ = 0:
 * ⅛, ¾, ⅛. Writes 2K + 1 weights (summing to 1) into w, at most
 * 2 max_k + 1; returns K (0 with w[0] = 1 for N ≤ 1), -1 for a bad step
 * or a kernel wider than max_k. */
#define ERG_METER_KERNEL_MAX_K 32 /* N ≤ 60 s (config.c) on cells of 1 s or more */
int erg_meter_kernel(double average_seconds, double step_seconds, double offset_seconds, double *w,
                     int max_k);
/* out gets ds's rows with every feature column but ncpu smoothed by its
 * row's meter kernel, the features of the cells ±k·S around it (same
 * step) weighted by w (the meter averages power, and power is linear in
 * each column, the curve's tails included); a row whose kernel reaches a
 * cell ds lacks, or a NaN there, gets NaN (the fit leaves it out). The
 * other columns are shared with ds (not copied): free out with
 * erg_dataset_smoothed_free only, before ds. Returns 1 when some row's
 * meter averages (out is set), 0 when none does (out untouched), -1 on
 * out of memory or a bad kernel (why). */
int erg_dataset_smoothed(const struct erg_dataset *ds, struct erg_dataset *out, char *why,
                         size_t whylen);
void erg_dataset_smoothed_free(struct erg_dataset *out);

/* The journal's `ncpu` column (the node's CPU count) is a dataset column
 * like a feature, but never a fit feature itself: it defines utilisation. */
#define ERG_NCPU_COLUMN "ncpu"

/* ---- derived node-level features (docs/model.md, "Utilisation curve") ----
 * Functions of the node's CPU utilisation u = cpu_seconds_per_second / ncpu
 * (clamped to [0, 1]). The fit's curve: the tails of the degree-8
 * Bernstein basis, T_i(u) = Σ_{j≥i} C(8, j) u^j (1−u)^(8−j), i = 1..8
 * (T_1 = 1 − (1−u)^8, T_8 = u^8). Each is non-decreasing on [0, 1], so
 * non-negative coefficients give exactly the polynomials through 0 whose
 * Bernstein coefficients rise (c_1 ≤ … ≤ c_8): a curve that never falls
 * with load, straight, convex, concave or S-shaped. Model files of older
 * versions have Bernstein polynomials themselves, of degree 6 (b_j ≥ 0,
 * not monotone) or 3; both are still read and evaluated as before. A
 * process gets the node's value in proportion to its CPU share, so
 * attribution still conserves. */
enum erg_derived {
  ERG_DERIVED_T8_1 = 0, /* Bernstein tails: the fit's curve */
  ERG_DERIVED_T8_2,
  ERG_DERIVED_T8_3,
  ERG_DERIVED_T8_4,
  ERG_DERIVED_T8_5,
  ERG_DERIVED_T8_6,
  ERG_DERIVED_T8_7,
  ERG_DERIVED_T8_8,
  ERG_NDERIVED,                    /* the ones erg_dataset_derive adds */
  ERG_DERIVED_B6_1 = ERG_NDERIVED, /* older model files: degree-6 Bernstein */
  ERG_DERIVED_B6_2,
  ERG_DERIVED_B6_3,
  ERG_DERIVED_B6_4,
  ERG_DERIVED_B6_5,
  ERG_DERIVED_B6_6,
  ERG_DERIVED_B3_1, /* older model files: the cubic */
  ERG_DERIVED_B3_2,
  ERG_DERIVED_B3_3,
  ERG_NDERIVED_ALL
};
extern const char *const erg_derived_names[ERG_NDERIVED_ALL];
int erg_derived_index(const char *name); /* -1: not a derived feature */
/* u = clamp(cpu / ncpu, 0, 1); NaN when cpu or ncpu is unusable. */
double erg_derived_utilization(double cpu_seconds_per_second, double ncpu);
/* Node-level value of derived feature d; NaN when cpu or ncpu is unusable. */
double erg_derived_value(int d, double cpu_seconds_per_second, double ncpu);
/* The largest value of derived feature d on [0, 1] (at u = j/n; a tail's
 * at u = 1). */
double erg_derived_peak(int d);
/* Derived feature d at utilisation u for a curve fitted up to u_max (> 0;
 * 0: not known) with coefficients coef[ERG_NDERIVED_ALL] (0 for features
 * not in the model): the basis value up to u_max; beyond it the curve
 * continues as a straight line with the slope of its secant over the top
 * quarter of the trained range: continuous, and rising or level for the
 * tails (an older basis's falling end is held level). docs/model.md,
 * "Beyond the training range". */
double erg_derived_value_extended(int d, double u, double u_max, const double *coef);
/* Adds the derived columns (the tails) to ds, computed from
 * cpu_seconds_per_second and the ncpu column (ncpu_default > 0 stands in
 * where a row has none). A row that already has all the tails (a journal
 * that carries them: the cell's mean of the tails of its samples, issue
 * 38), each in [0, 1], keeps them. Returns the number of columns added (0
 * when ncpu is unknown), -1 on error. */
int erg_dataset_derive(struct erg_dataset *ds, double ncpu_default, char *why, size_t whylen);
/* Removes the derived columns a journal carries (the tails), for a fit
 * without the curve (erg fit --linear, a pooled group): the journal's own
 * features only, as before journals carried them. */
void erg_dataset_drop_derived(struct erg_dataset *ds);

/* ---- idle profile (docs/model.md, "Idle profile") ----
 * The node's power over a window the operator declares quiet, taken from
 * its journal; the fit then uses mean_watts as β0 instead of fitting it. */
struct erg_idle_profile {
  char node[ERG_FIT_NAME_MAX];
  double mean_watts, stddev_watts;
  size_t cells;
  double first_unix_seconds, last_unix_seconds; /* first cell start, last cell end */
  double ncpu;                                  /* 0: unknown (utilisation taken per CPU) */
  double mean_utilization, max_utilization;     /* busy CPU / ncpu over the cells */
  double recorded_unix_seconds;
};

/* Cells wholly inside [from, to) with a reading and agent data, metered
 * alone (rows flagged ERG_ROW_SHARED hold a group's power). Refuses
 * (-1, why says which cell and how busy) when the mean utilisation exceeds
 * max_utilization or a cell exceeds 3 × max_utilization, or fewer than 3
 * cells qualify. */
int erg_idle_profile_from_dataset(const struct erg_dataset *ds, double from, double to,
                                  double max_utilization, double ncpu_default,
                                  struct erg_idle_profile *p, char *why, size_t whylen);
/* The quietest window of length_seconds: consecutive usable cells (as
 * above, no gap on the journal's grid, none above 3 × max_utilization)
 * with the lowest mean utilisation, the latest of equals; then as
 * erg_idle_profile_from_dataset over it. -1 and why when no window
 * qualifies (no stretch that long, or the quietest is too busy). */
int erg_idle_profile_find_quiet(const struct erg_dataset *ds, double length_seconds,
                                double max_utilization, double ncpu_default,
                                struct erg_idle_profile *p, char *why, size_t whylen);
int erg_idle_profile_save(const struct erg_idle_profile *p, const char *path, char *why,
                          size_t whylen);
int erg_idle_profile_load(struct erg_idle_profile *p, const char *path, char *why, size_t whylen);
/* MODEL_DIR/idle/NODE.json (node sanitised): a subdirectory, so no node's
 * model file can collide with it. */
int erg_idle_profile_path(const char *model_dir, const char *node, char *out, size_t outlen);

/* ---- model ---- */
/* The utilisation curve's shape (docs/model.md, "Convex at light load"). */
enum erg_curve_shape {
  ERG_CURVE_AUTO = 0, /* convex unless the cells reject it (F test p < ERG_FIT_CONVEX_P) */
  ERG_CURVE_MONOTONE, /* rising only: the curve before issue 38 */
  ERG_CURVE_CONVEX,   /* rising and convex */
};
#define ERG_FIT_CONVEX_P 0.01
/* "auto", "monotone", "convex"; parse: -1 if unknown. */
const char *erg_curve_shape_name(enum erg_curve_shape s);
int erg_curve_shape_parse(const char *s);

/* PROFILE: median of flag-8 journal rows (older harnesses); RECORDED: an
 * erg_idle_profile (`erg fit --idle`). A group member's model (erg fit
 * --group) holds its part of the group's idle: GROUP_PROFILE when that
 * was the group's recorded idle (`erg fit --idle --group`), GROUP_FIT
 * when the joint fit's intercept; either split by the model's idle_split. */
enum erg_idle_source {
  ERG_IDLE_FROM_FIT = 0,
  ERG_IDLE_FROM_PROFILE = 1,
  ERG_IDLE_FROM_RECORDED,
  ERG_IDLE_FROM_GROUP_PROFILE,
  ERG_IDLE_FROM_GROUP_FIT,
};
/* The model file's "idle_source" value of s: "fit", "idle_rows",
 * "idle_profile", "group_idle_profile" or "group_fit". */
const char *erg_idle_source_name(enum erg_idle_source s);

struct erg_fit_metrics {
  double mae_watts, rmse_watts;
  double mape_total_percent;   /* mean |P̂−P| / P */
  double mape_dynamic_percent; /* mean |P̂−P| / (P−idle), cells with P−idle ≥ threshold */
  double r2;
  size_t cells;         /* held-out cells evaluated */
  size_t cells_dynamic; /* of which counted in mape_dynamic */
};

/* Shared meter (docs/model.md, "Shared meters: the joint fit"): a model
 * that is one member's part of a group's joint fit. It predicts that member
 * alone; its metrics are the group's (the members' summed prediction
 * against the meter). */
#define ERG_GROUP_MAX_NODES 16
struct erg_model_group {
  char name[ERG_FIT_NAME_MAX]; /* "": not a group member's model */
  size_t nnodes;
  char nodes[ERG_GROUP_MAX_NODES][ERG_FIT_NAME_MAX];
  char form[16];           /* "pooled" or "per-node" */
  char idle_split[16];     /* "equal", "weights" or "profile" */
  double idle_watts;       /* Σ idle of the members: the fitted intercept */
  double idle_fraction;    /* this member's part of it */
  double idle_scale;       /* profile split: fitted Σ idle / Σ profiles; else NaN */
  double condition_number; /* identifiability (erg_group_fit); NaN: not known */
  double max_correlation;
  char max_correlation_nodes[2][ERG_FIT_NAME_MAX];
};

struct erg_model {
  int version;
  char node[ERG_FIT_NAME_MAX];
  size_t nfeatures;
  char feature[ERG_FIT_MAX_FEATURES][ERG_FIT_NAME_MAX];
  double coef[ERG_FIT_MAX_FEATURES];        /* watts per unit of the feature, ≥ 0 */
  double feature_max[ERG_FIT_MAX_FEATURES]; /* training maximum; 0: not known */
  double utilization_max;                   /* largest training utilisation (curve); 0: not known */
  /* Features the fit left out as not supported by the data (t = β/se < 3;
   * docs/model.md): written to the model file for the operator, not read. */
  size_t nleft_out;
  char left_out[ERG_FIT_MAX_FEATURES][ERG_FIT_NAME_MAX];
  double left_out_t[ERG_FIT_MAX_FEATURES];
  double idle_watts; /* β0 */
  enum erg_idle_source idle_source;
  /* The fitted curve's shape: MONOTONE or CONVEX; AUTO: no curve, or a
   * model file from before (read as it is). */
  enum erg_curve_shape curve_shape;
  size_t idle_rows; /* idle-profile rows behind idle_watts */
  bool has_idle_profile;
  struct erg_idle_profile idle_profile; /* when has_idle_profile */
  double ncpu; /* node CPUs for derived features; 0: unknown (they count as 0) */
  double step_seconds;
  double train_first_unix_seconds, train_last_unix_seconds;
  size_t train_rows;
  char validation[64]; /* e.g. "holdout last 25%" */
  struct erg_fit_metrics metrics;
  double created_unix_seconds;
  struct erg_model_group group; /* group.name "" for a node's own model */
  /* Covariance of (β0, β_1 … β_K) from the fit (docs/model.md, "Uncertainty"):
   * cov[0][0] is β0's (W²), cov[1+k][1+e] β_k's and β_e's. ncov = K + 1 when
   * known; 0 when not (an older file, more than ERG_MODEL_COV_MAX terms):
   * intervals then from the residuals only. A group member's is its block
   * of the joint fit's (which may have more terms). */
  size_t ncov;
  double cov[ERG_MODEL_COV_MAX][ERG_MODEL_COV_MAX];
  size_t cov_block_cells; /* cells per time block of the cluster-robust sandwich */
  /* How many cells a residual persists (1: independent): the variance of
   * the residuals' block sums over their summed variance; 0: not known. */
  double misfit_correlation_cells;
};

/* Node-level prediction β0 + Σ β_k x_k; x in model feature order (derived
 * features at their node-level value, erg_model_derived_value). */
double erg_model_predict(const struct erg_model *m, const double *x);
/* β_k x_k: each term of the prediction and of a process's attribution
 * activity. Linear terms go on beyond the training maximum (a linear cost
 * stays linear: clamping it moved a disk job's energy to its neighbour);
 * the utilisation curve is continued by erg_model_derived_value. */
double erg_model_term(const struct erg_model *m, size_t k, double x);
/* The utilisation the model's curve was fitted up to: utilization_max, or
 * in files without it the root of the top basis function's training
 * maximum (u_max^n); 0 when not known. */
double erg_model_utilization_max(const struct erg_model *m);
/* Node-level value of the model's derived feature k (a curve basis
 * function) at the node's CPU time, using m->ncpu: continued beyond the
 * training utilisation as erg_derived_value_extended says. NaN when
 * feature k is not derived or ncpu is unknown. */
double erg_model_derived_value(const struct erg_model *m, size_t k, double cpu_seconds_per_second);
/* The same for a cell whose tails are known: tails[d] (ERG_NDERIVED of
 * them, the cell's mean of its samples' T8_1..T8_8 as ergd journals them,
 * m->ncpu's utilisation) is the value of a tail feature within the
 * trained utilisation, as the fit took it (issue 38: the curve at the
 * cell's mean is below what the meter shows of a load that changes within
 * the cell). tails NULL, a tail not finite in [0, 1], another basis or a
 * cell beyond the trained utilisation: erg_model_derived_value. */
double erg_model_derived_value_cell(const struct erg_model *m, size_t k,
                                    double cpu_seconds_per_second, const double *tails);
/* The node-level feature furthest beyond its training maximum in a cell:
 * x are the node values in model order (derived ones are judged by the
 * node's utilisation against erg_model_utilization_max instead). */
struct erg_range_excess {
  char feature[ERG_FIT_NAME_MAX]; /* a feature name, or "cpu_utilization" */
  double value, training_max;     /* value > training_max */
};
/* True (and *out filled) when some feature is beyond its training maximum. */
bool erg_model_beyond_training(const struct erg_model *m, const double *x,
                               double cpu_seconds_per_second, struct erg_range_excess *out);
/* 0 when m can describe a node: idle 0..ERG_FIT_MAX_WATTS, coefficients
 * finite, 0..ERG_FIT_MAX_WATTS per unit and within it at the training
 * maximum, the whole prediction there within it too, ncpu and training
 * maxima numbers, and not everything 0 (a model of 0 W); else -1 and why.
 * erg_fit refuses such a result, ergd such a model file. */
int erg_model_check(const struct erg_model *m, char *why, size_t whylen);
int erg_model_save(const struct erg_model *m, const char *path, char *why, size_t whylen);
int erg_model_load(struct erg_model *m, const char *path, char *why, size_t whylen);

/* ---- held-out cells of a fit: to compare two models on the same data ---- */
struct erg_holdout {
  struct erg_dataset cells; /* the validation's held-out rows, every column of the dataset */
  double *predicted_watts;  /* the validation fit's prediction of each of them */
  /* The idle (β0) of the validation fit that predicted each: what its
   * dynamic metrics subtract (to score them another way, e.g. weighted). */
  double *idle_watts;
};
void erg_holdout_init(struct erg_holdout *h);
void erg_holdout_free(struct erg_holdout *h);

/* Should candidate (fitted with its held-out cells in holdout) not replace
 * current? Both are scored on the same held-out cells: candidate by its
 * validation fits' predictions, current by erg_model_predict (its own
 * feature set, ncpu and training maxima). True when candidate's MAE
 * exceeds current's by more than tolerance (relative), or candidate has
 * no held-out cells. False when current is NULL, or can be scored on
 * fewer than half of the cells (it needs a feature the data lacks).
 * Writes a one-line reason with both MAEs either way. */
bool erg_model_is_worse(const struct erg_model *current, const struct erg_model *candidate,
                        const struct erg_holdout *holdout, double tolerance, char *why,
                        size_t whylen);

/* ---- fit ---- */
typedef void (*erg_fit_progress_fn)(void *user, const char *stage, double fraction);

struct erg_fit_options {
  double holdout_fraction;        /* last fraction of usable cells held out (default 0.25) */
  int folds;                      /* > 1: k contiguous time blocks, each held out once */
  double dynamic_threshold_watts; /* < 0 (default): max(5 W, 10% of idle) */
  const char *node;               /* overrides the journal's node name */
  const struct erg_idle_profile *idle_profile; /* β0 fixed to its mean; NULL: none */
  erg_fit_progress_fn progress;
  void *progress_user;
  const atomic_int *cancel;         /* non-zero: stop at the next reweighting step */
  struct erg_holdout *holdout;      /* non-NULL: receives the held-out cells (emptied first) */
  enum erg_curve_shape curve_shape; /* MONOTONE (default); AUTO: convex unless rejected */
  /* Non-NULL (both): receives the covariance of the model's (β0, β_1 …
   * β_K), row-major, (K + 1)² values, whatever K — a model holds at most
   * ERG_MODEL_COV_MAX terms, a group's joint fit has more (its members'
   * blocks are taken from it) — and *cov_out_n = K + 1, or 0 when there
   * is none. Room for ERG_FIT_COV_TERMS² values. */
  double *cov_out;
  size_t *cov_out_n;
};

void erg_fit_options_init(struct erg_fit_options *o);
/* Validates on held-out blocks, then refits on all usable rows. Returns 0,
 * or -1 with a reason (too few rows, no usable feature, cancelled, ...). GSL's
 * abort-on-error handler is switched off for the call (process-wide), so
 * do not run it concurrently with other GSL users that rely on it. */
int erg_fit(const struct erg_dataset *ds, const struct erg_fit_options *o, struct erg_model *m,
            char *why, size_t whylen);

/* ---- shared meter: joint fit of a group (docs/model.md, "Shared meters") ----
 * One meter measures several nodes (members). Each member's journal has its
 * own features and, in rows flagged ERG_ROW_SHARED, the whole meter's
 * power. The members' rows are joined on their cell time; a joined row
 * needs a usable row (no flag 1, 2, 4, 8 or 16) of every member whose
 * measured powers agree (1e-6 relative). Then one regression of the meter
 * on the members' features:
 *   pooled:   x_k = Σ_n x_{n,k}; one β shared by all members;
 *   per-node: one column per member and feature; each member its own β
 *             (without the utilisation curve when the rows are fewer than
 *             ERG_GROUP_ROWS_PER_COLUMN × the columns with it).
 * Only Σ idle is identified; it is split by the idle split. */
#define ERG_GROUP_MAX_CONDITION 30.0  /* per-node identified: condition number at most */
#define ERG_GROUP_MAX_CORRELATION 0.9 /* ... and no two members' CPU time correlate more */
#define ERG_GROUP_ROWS_PER_COLUMN 10  /* per-node with the curve: rows per column */

enum erg_group_form { ERG_GROUP_AUTO = 0, ERG_GROUP_POOLED, ERG_GROUP_PER_NODE };
enum erg_idle_split { ERG_IDLE_SPLIT_EQUAL = 0, ERG_IDLE_SPLIT_WEIGHTS, ERG_IDLE_SPLIT_PROFILE };
const char *erg_group_form_name(enum erg_group_form f); /* "auto", "pooled", "per-node" */
const char *erg_idle_split_name(enum erg_idle_split s); /* "equal", "weights", "profile" */

struct erg_group_cov;
struct erg_group_options {
  const char *name;         /* the group: written into every member's model */
  enum erg_group_form form; /* AUTO: per-node when identified, else pooled */
  enum erg_idle_split idle_split;
  const double *weights;                   /* WEIGHTS: one per member, >= 0, normalised */
  const struct erg_idle_profile *profiles; /* PROFILE: one per member, measured alone */
  /* The meter while every member was idle (erg fit --idle --group): Σ idle
   * fixed to its mean instead of fitted; NULL: fitted. */
  const struct erg_idle_profile *idle_sum;
  bool require_shared;        /* only rows flagged ERG_ROW_SHARED join (default) */
  struct erg_fit_options fit; /* holdout, folds, threshold, progress, cancel;
                                 node, idle_profile and holdout are not used */
  /* Non-NULL: receives the joint fit's covariance across the members
   * (cov_out->nterms 0 when the fit had none). */
  struct erg_group_cov *cov_out;
};
void erg_group_options_init(struct erg_group_options *o);

struct erg_group_result {
  enum erg_group_form form; /* the form fitted: POOLED or PER_NODE */
  bool curve_per_node;      /* per-node with each member's utilisation curve */
  bool identified;          /* per-node coefficients identified (thresholds above) */
  char reason[512];         /* why this form, one line */
  /* Identifiability over the joined rows: the condition number of the
   * members' CPU-time columns standardised (mean 0, sd 1), INFINITY when
   * one does not vary; the largest |Pearson r| of two members' CPU time. */
  double condition_number, max_correlation;
  size_t corr_a, corr_b;          /* the members of max_correlation */
  size_t rows_joined;             /* rows every member has, with the same meter value */
  size_t rows_mismatched;         /* rows every member has, meter values disagreeing */
  size_t rows_not_shared;         /* usable member rows without ERG_ROW_SHARED (require_shared) */
  size_t rows_used;               /* of rows_joined, fitted (every used column present) */
  double idle_watts;              /* Σ idle (fitted intercept, or the recorded idle_sum) */
  bool idle_fixed;                /* idle_watts is options.idle_sum's mean */
  double idle_scale;              /* PROFILE: idle_watts / Σ profile means; else NaN */
  struct erg_fit_metrics metrics; /* held out: summed prediction against the meter */
  char validation[64];
};

/* Fits the group of n members (2..ERG_GROUP_MAX_NODES): members[i] is node
 * nodes[i]'s journal dataset after erg_dataset_derive (its own ncpu).
 * models[i] receives member i's model: idle_i + Σ β_{i,k} x_{i,k} with
 * its ncpu and training maxima, the group's metrics and models[i].group
 * filled. Returns 0, or -1 and why (too few joined rows, a degenerate
 * member model, ...). Switches GSL's error handler as erg_fit does. */
int erg_group_fit(const struct erg_dataset *const *members, const char *const *nodes, size_t n,
                  const struct erg_group_options *o, struct erg_model *models,
                  struct erg_group_result *r, char *why, size_t whylen);

/* ---- a group's covariance across its members (docs/model.md, "Shared
 * meters") ----
 * A member's model file holds its own block of the joint fit's covariance;
 * how one member's coefficients err with another's (the joint fit knows
 * their sum better than their split: most often negatively) is in
 * MODEL_DIR/group/NAME.json, written by `erg fit --group` beside them. It
 * keeps the joint covariance over the joint terms (intercept first) and,
 * per member, the joint term of each of its model's features (pooled: the
 * members share terms). created_unix_seconds is the members' models'
 * (one fit): a member model of another fit does not go with it. */
#define ERG_GROUP_COV_TERMS ERG_FIT_COV_TERMS
struct erg_group_cov {
  char name[ERG_FIT_NAME_MAX];
  double created_unix_seconds;
  size_t nnodes;
  char nodes[ERG_GROUP_MAX_NODES][ERG_FIT_NAME_MAX];
  size_t nfeatures[ERG_GROUP_MAX_NODES];
  char feature[ERG_GROUP_MAX_NODES][ERG_FIT_MAX_FEATURES][ERG_FIT_NAME_MAX];
  size_t term[ERG_GROUP_MAX_NODES][ERG_FIT_MAX_FEATURES]; /* 1..nterms-1 */
  size_t nterms;                                          /* 0: none */
  double cov[ERG_GROUP_COV_TERMS][ERG_GROUP_COV_TERMS];
};
/* Written atomically (symmetrised) / read and checked (sizes, names,
 * finite, variances ≥ 0, symmetric to 1e-9 of the two variances'
 * geometric mean); 0, or -1 and why. */
int erg_group_cov_save(const struct erg_group_cov *g, const char *path, char *why, size_t whylen);
int erg_group_cov_load(struct erg_group_cov *g, const char *path, char *why, size_t whylen);
/* The member of node `node` whose features are m's, of the same fit, or -1. */
int erg_group_cov_member(const struct erg_group_cov *g, const char *node,
                         const struct erg_model *m);
/* Cov(x_aᵀβ_a, x_bᵀβ_b) of members a and b (a == b: the variance of a's
 * dynamic prediction), x in each member's model feature order. */
double erg_group_cov_cross(const struct erg_group_cov *g, size_t a, const double *xa, size_t b,
                           const double *xb);

/* ---- attribution of one cell ---- */
enum erg_idle_policy { ERG_IDLE_SEPARATE = 0, ERG_IDLE_EVEN, ERG_IDLE_PROPORTIONAL };
int erg_idle_policy_parse(const char *s); /* -1 if unknown */
const char *erg_idle_policy_name(enum erg_idle_policy p);

struct erg_attribution {
  double total_watts;         /* measured, or the prediction when estimated */
  double idle_watts;          /* min(β0, total); erg_attribute_cell_idle: its idle_watts */
  double dynamic_watts;       /* total − idle */
  double idle_separate_watts; /* idle left unassigned: idle_watts for SEPARATE, else 0 */
  bool estimated;
};

/* x: nproc rows of m->nfeatures values (row-major) in model feature order,
 * one of them (system_index) the [system] pseudo-process. watts[p] receives
 * p's share; idle_separate_watts + Σ watts == total_watts to rounding.
 * Returns -1 when nproc is 0, system_index is out of range, or the cell
 * can be neither measured nor predicted. */
int erg_attribute_cell(const struct erg_model *m, double measured_watts, const double *x,
                       size_t nproc, size_t system_index, enum erg_idle_policy policy,
                       double *watts, struct erg_attribution *out);
/* The same with idle_watts in place of the model's β0: β0 plus the power
 * of idle devices (idle GPUs' board term, docs/gpu.md), which then
 * follows the idle policy as β0 does; x must then not carry that power. */
int erg_attribute_cell_idle(const struct erg_model *m, double idle_watts, double measured_watts,
                            const double *x, size_t nproc, size_t system_index,
                            enum erg_idle_policy policy, double *watts,
                            struct erg_attribution *out);

/* ---- uncertainty of a cell's shares (fit/uncertainty.c; docs/model.md,
 * "Uncertainty") ----
 * What is known of the cell's power besides the model: the meter's
 * independent variance (quantum, noise, lag), its error common to every
 * cell (a power factor of A x V readings, a shared meter split equally)
 * and the model's misfit (held-out RMSE: what the model does not explain). */
struct erg_unc_cell {
  double meter_var_watts2;    /* independent from cell to cell */
  double meter_sd_corr_watts; /* the same sign in every cell: adds linearly */
  double misfit_watts;        /* sd of the power the model misses (held-out RMSE) */
  double misfit_cells;        /* cells a misfit persists (its variance × this); <= 1: 1 */
  /* sd per cell of what the meter shows beyond the power the truth has
   * (reading noise; erg_model_noise_watts): measured cells only,
   * independent from cell to cell, split like the meter (F² to a job). */
  double noise_watts;
  /* The misfit may lie in any one row, whatever the features say (F(1 − F)
   * of it to a group): for a split that is itself an assumption (the
   * CPU-share pseudo-model). false: it lies in the model's terms, so rows
   * of the same feature mix take it in proportion (docs/model.md). */
  bool misfit_any_row;
};
/* The meter's noise per cell as the node's model knows it: the sample sd
 * of the idle profile's cells (at idle the power is constant, so what
 * varies there is the reading) times t_{0.975, cells−1} / 1.96 (a sd
 * estimated from few cells), else the held-out RMSE (an upper bound:
 * noise and misfit), else 0. */
double erg_model_noise_watts(const struct erg_model *m);
/* The sd per cell of the power the model misses, net of the reading noise
 * the held-out RMSE also holds (counted as noise_watts already): with an
 * idle profile √(RMSE² − σ_n² / τ), σ_n the profile cells' sample sd and
 * τ misfit_correlation_cells (the RMSE² × τ the misfit term takes holds
 * the noise's σ_n² once: its residuals do not persist), at least 0;
 * without a profile (no separate noise figure) the RMSE; 0 without
 * validation. */
double erg_model_misfit_watts(const struct erg_model *m);
/* A group of rows (a job): sd_corr_watts adds linearly over cells (the
 * model's coefficients and correlated meter errors are the same in every
 * cell), var_watts2 in quadrature (meter noise, misfit). */
struct erg_unc_group {
  double sd_corr_watts, var_watts2;
};
/* After erg_attribute_cell_idle(m, idle_watts, ..., a) of the same rows x:
 * for every group g in 0..ngroups-1 (group[p] = g for the rows in it, -1
 * for rows in none) the uncertainty of Σ_{p in g} watts[p]. Linear
 * propagation: the share's gradient in the measured power and in (β0, β)
 * through the rescaling to the measured power, with m's covariance when
 * m->ncov == m->nfeatures + 1 (else the coefficient part is 0). Returns -1
 * on bad arguments. No allocation. */
int erg_attribute_uncertainty(const struct erg_model *m, double idle_watts,
                              const struct erg_attribution *a, const double *x, size_t nproc,
                              size_t system_index, enum erg_idle_policy policy,
                              const struct erg_unc_cell *in, const int *group, size_t ngroups,
                              struct erg_unc_group *out);
/* The same for nsets sets of groups of the same rows at once (groups[i],
 * ngroups[i] -> outs[i]), the rows' activities computed once: e.g. the
 * rows grouped by each kind of key. */
int erg_attribute_uncertainty_sets(const struct erg_model *m, double idle_watts,
                                   const struct erg_attribution *a, const double *x, size_t nproc,
                                   size_t system_index, enum erg_idle_policy policy,
                                   const struct erg_unc_cell *in, size_t nsets,
                                   const int *const *groups, const size_t *ngroups,
                                   struct erg_unc_group *const *outs);
/* The 95 % interval of a sum with linear sd c and variance v: E ± 1.96 ·
 * √(c² + v), the low end at least 0. */
#define ERG_UNC_Z95 1.959964
void erg_unc_interval(double energy, double sd_corr, double var, double *low, double *high);

/* ---- JSON, for callers that print what the files hold (fit/json.c) ----
 * jansson objects (json_decref them), NULL when out of memory: the model
 * as erg_model_save writes it, the idle profile as erg_idle_profile_save
 * does, held-out metrics as a model's "validation" (method: how they were
 * held out, as erg_model.validation). */
struct json_t;
struct json_t *erg_model_json(const struct erg_model *m);
struct json_t *erg_idle_profile_json(const struct erg_idle_profile *p);
struct json_t *erg_fit_metrics_json(const char *method, const struct erg_fit_metrics *x);

#endif

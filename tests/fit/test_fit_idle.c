// SPDX-License-Identifier: GPL-3.0-or-later
/* Idle profile (`erg fit --idle`): recorded from a quiet window of the
 * journal, refused on a busy one, used by the fit as β0, stored in the
 * model; and it makes attribution right where a fitted intercept does not:
 * a line through the convex curve P = 100 + 150·u^1.4 crosses u = 0 below
 * 100 W, and those watts land in every job's dynamic share. Also: model
 * files of the previous format still load. */
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "../erg_test.h"
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "erg_cli.h"
#include "erg_fit.h"
#include "fit_test.h"

#define NCPU 4
#define IDLE_W 100.0
#define T0 1763700000.0
#define QUIET 24 /* cells */
#define TRAIN 600

static double truth_dynamic(double u) { return 150 * pow(fmin(fmax(u, 0), 1), 1.4); }

/* One cell at load level u, jittered within the cell; returns its
 * measured power (1 W noise), the mean load and the true dynamic power. */
static double cell_power(gsl_rng *r, double level, double *u_mean, double *dynamic) {
  double us = 0, ds = 0;
  for (int s = 0; s < 10; s++) {
    double u = fmin(fmax(level + (level > 0.01 ? gsl_ran_gaussian(r, 0.05) : 0), 0), 1);
    us += u;
    ds += truth_dynamic(u);
  }
  *u_mean = us / 10;
  *dynamic = ds / 10;
  return IDLE_W + *dynamic + gsl_ran_gaussian(r, 1.0);
}

/* QUIET quiet cells (background 0.2 % CPU), TRAIN training cells, then 12
 * quiet cells with one burst (to be refused). */
static void make_dataset(struct erg_dataset *ds) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 11);
  char why[128];
  erg_dataset_init(ds);
  snprintf(ds->node, sizeof ds->node, "n1");
  ds->step_seconds = 5;
  erg_dataset_add_feature(ds, "cpu_seconds_per_second", why, sizeof why);
  erg_dataset_add_feature(ds, ERG_NCPU_COLUMN, why, sizeof why);
  static const double levels[] = {0, 0, 0.2, 0.4, 0.6, 0.8, 1};
  for (int i = 0; i < QUIET + TRAIN + 12; i++) {
    double level = i < QUIET || i >= QUIET + TRAIN ? 0.002 : levels[gsl_rng_uniform_int(r, 7)];
    if (i == QUIET + TRAIN + 6)
      level = 0.5; /* the burst */
    double u, dyn, p = cell_power(r, level, &u, &dyn);
    double x[2] = {u * NCPU, NCPU};
    erg_dataset_add_row(ds, T0 + 5.0 * i, 5, p, 0, x);
  }
  gsl_rng_free(r);
}

static void test_record_and_refuse(void **state) {
  (void)state;
  struct erg_dataset ds;
  struct erg_idle_profile p;
  char why[256];
  make_dataset(&ds);
  assert_int_equal(
      erg_idle_profile_from_dataset(&ds, T0, T0 + 5 * QUIET, 0.05, 0, &p, why, sizeof why), 0);
  assert_int_equal(p.cells, QUIET);
  assert_true(fabs(p.mean_watts - IDLE_W) < 0.6);
  assert_true(p.stddev_watts > 0.5 && p.stddev_watts < 1.5);
  assert_true(p.mean_utilization < 0.01);
  assert_true(p.ncpu == NCPU);
  assert_true(p.first_unix_seconds == T0 && p.last_unix_seconds == T0 + 5 * QUIET);
  /* The training part is busy. */
  assert_int_equal(
      erg_idle_profile_from_dataset(&ds, T0, T0 + 5 * (QUIET + 40), 0.05, 0, &p, why, sizeof why),
      -1);
  assert_non_null(strstr(why, "not idle: mean CPU utilisation"));
  /* Quiet on average, but with a burst. */
  double t = T0 + 5 * (QUIET + TRAIN);
  assert_int_equal(erg_idle_profile_from_dataset(&ds, t, t + 60, 0.05, 0, &p, why, sizeof why), -1);
  assert_non_null(strstr(why, "choose a quieter window"));
  /* Too short. */
  assert_int_equal(erg_idle_profile_from_dataset(&ds, T0, T0 + 10, 0.05, 0, &p, why, sizeof why),
                   -1);
  assert_non_null(strstr(why, "need 3"));
  erg_dataset_free(&ds);
}

/* Process rows in the model's feature order: CPU time, and a derived
 * feature's node value split by CPU share. */
static void process_rows(const struct erg_model *m, const double *cpu, size_t n, double *x) {
  double sum = 0;
  for (size_t p = 0; p < n; p++)
    sum += cpu[p];
  for (size_t p = 0; p < n; p++)
    for (size_t k = 0; k < m->nfeatures; k++) {
      int d = erg_derived_index(m->feature[k]);
      x[p * m->nfeatures + k] =
          d >= 0 ? (sum > 0 ? erg_derived_value(d, sum, m->ncpu) * cpu[p] / sum : 0)
          : strcmp(m->feature[k], "cpu_seconds_per_second") == 0 ? cpu[p]
                                                                 : 0;
    }
}

/* Relative error of job A's attributed dynamic energy over evaluation
 * cells (jobs A and B at different loads, truth = A's CPU share of the
 * simulator's dynamic power). */
static double job_error(const struct erg_model *m) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 99);
  double erg = 0, truth = 0;
  for (int i = 0; i < 400; i++) {
    /* CPUs busy with A and B (of NCPU). */
    double a = 0.4 + 0.8 * gsl_rng_uniform(r), b = 2.4 * gsl_rng_uniform(r);
    double u, dyn, p = cell_power(r, (a + b) / NCPU, &u, &dyn);
    double cpu[3] = {u * NCPU * a / (a + b), u * NCPU * b / (a + b), 0};
    double x[3 * ERG_FIT_MAX_FEATURES], w[3];
    struct erg_attribution at;
    process_rows(m, cpu, 3, x);
    assert_int_equal(erg_attribute_cell(m, p, x, 3, 2, ERG_IDLE_SEPARATE, w, &at), 0);
    assert_true(fabs(at.idle_separate_watts + w[0] + w[1] + w[2] - p) < 1e-9 * p);
    erg += w[0];
    truth += dyn * a / (a + b);
  }
  gsl_rng_free(r);
  return (erg - truth) / truth;
}

static void test_fit_uses_profile(void **state) {
  (void)state;
  struct erg_dataset ds;
  struct erg_idle_profile p;
  struct erg_fit_options o;
  struct erg_model lin_fit, lin_prof, curve_fit, curve_prof;
  char why[256];
  make_dataset(&ds);
  assert_int_equal(
      erg_idle_profile_from_dataset(&ds, T0, T0 + 5 * QUIET, 0.05, 0, &p, why, sizeof why), 0);
  erg_fit_options_init(&o);
  assert_int_equal(erg_fit(&ds, &o, &lin_fit, why, sizeof why), 0);
  o.idle_profile = &p;
  assert_int_equal(erg_fit(&ds, &o, &lin_prof, why, sizeof why), 0);
  assert_int_equal(erg_dataset_derive(&ds, 0, why, sizeof why), ERG_NDERIVED);
  assert_int_equal(erg_fit(&ds, &o, &curve_prof, why, sizeof why), 0);
  o.idle_profile = NULL;
  assert_int_equal(erg_fit(&ds, &o, &curve_fit, why, sizeof why), 0);

  assert_int_equal(lin_fit.idle_source, ERG_IDLE_FROM_FIT);
  assert_int_equal(lin_prof.idle_source, ERG_IDLE_FROM_RECORDED);
  assert_true(lin_prof.has_idle_profile && lin_prof.idle_rows == QUIET);
  assert_true(lin_prof.idle_watts == p.mean_watts);
  /* The idle's variance: the profile mean's, from its sample variance and
   * Student's t over its cells (docs/model.md, "Uncertainty"). */
  double tq = gsl_cdf_tdist_Pinv(0.975, (double)p.cells - 1) / 1.959964;
  double want = p.stddev_watts * p.stddev_watts / ((double)p.cells - 1) * tq * tq;
  erg_assert(lin_prof.ncov > 0 && fabs(lin_prof.cov[0][0] - want) <= 1e-9 * want,
             "idle variance %g, want %g (%zu cells, stddev %g)", lin_prof.cov[0][0], want, p.cells,
             p.stddev_watts);
  assert_true(curve_prof.idle_watts == p.mean_watts);
  double e_lin_fit = job_error(&lin_fit), e_lin_prof = job_error(&lin_prof);
  double e_curve_fit = job_error(&curve_fit), e_curve_prof = job_error(&curve_prof);
  printf("idle: profile %.2f W; fitted: linear %.2f W, curve %.2f W\n"
         "job A energy error: linear+fitted idle %+.2f %%, linear+profile %+.2f %%, "
         "curve+fitted idle %+.2f %%, curve+profile %+.2f %%\n"
         "held-out dynamic MAPE: linear %.2f %%, linear+profile %.2f %%, curve+profile %.2f %%\n",
         p.mean_watts, lin_fit.idle_watts, curve_fit.idle_watts, 100 * e_lin_fit, 100 * e_lin_prof,
         100 * e_curve_fit, 100 * e_curve_prof, lin_fit.metrics.mape_dynamic_percent,
         lin_prof.metrics.mape_dynamic_percent, curve_prof.metrics.mape_dynamic_percent);
  /* The fitted intercept of a line is well below the real idle ... */
  assert_true(lin_fit.idle_watts < IDLE_W - 3);
  /* ... so jobs get several per cent too much; with the profile not. */
  assert_true(e_lin_fit > 0.04);
  assert_true(fabs(e_lin_prof) < 0.02);
  assert_true(fabs(e_curve_prof) < 0.02);
  assert_true(curve_prof.metrics.mape_dynamic_percent < lin_prof.metrics.mape_dynamic_percent);
  erg_dataset_free(&ds);
}

static void test_files(void **state) {
  (void)state;
  struct erg_dataset ds;
  struct erg_idle_profile p, q;
  struct erg_fit_options o;
  struct erg_model m, back;
  char why[256];
  make_dataset(&ds);
  assert_int_equal(
      erg_idle_profile_from_dataset(&ds, T0, T0 + 5 * QUIET, 0.05, 0, &p, why, sizeof why), 0);
  char *path = fit_test_file("");
  assert_int_equal(erg_idle_profile_save(&p, path, why, sizeof why), 0);
  assert_int_equal(erg_idle_profile_load(&q, path, why, sizeof why), 0);
  assert_true(fabs(q.mean_watts - p.mean_watts) < 1e-9 && q.cells == p.cells && q.ncpu == NCPU);
  assert_string_equal(q.node, "n1");
  /* A model file is not an idle profile. */
  erg_fit_options_init(&o);
  o.idle_profile = &p;
  assert_int_equal(erg_dataset_derive(&ds, 0, why, sizeof why), ERG_NDERIVED);
  assert_int_equal(erg_fit(&ds, &o, &m, why, sizeof why), 0);
  assert_true(m.ncpu == NCPU);
  assert_int_equal(erg_model_save(&m, path, why, sizeof why), 0);
  assert_int_equal(erg_idle_profile_load(&q, path, why, sizeof why), -1);
  assert_int_equal(erg_model_load(&back, path, why, sizeof why), 0);
  assert_true(back.has_idle_profile && back.idle_source == ERG_IDLE_FROM_RECORDED);
  assert_true(back.ncpu == NCPU && fabs(back.idle_profile.mean_watts - p.mean_watts) < 1e-9);
  assert_int_equal(back.nfeatures, 1 + ERG_NDERIVED);
  fit_test_unlink(path);
  /* A model file of the first format (flag-8 idle rows, no ncpu). */
  path = fit_test_file(
      "{\"format\": \"erg-model\", \"version\": 1, \"node\": \"n1\", \"idle_watts\": 99.5,\n"
      " \"idle_source\": \"idle_profile\", \"idle_profile_rows\": 7, \"step_seconds\": 5,\n"
      " \"features\": [{\"name\": \"cpu_seconds_per_second\", \"coefficient_watts_per_unit\": "
      "50}],\n"
      " \"training\": {\"first_unix_seconds\": 1, \"last_unix_seconds\": 2, \"cells\": 3},\n"
      " \"validation\": {\"method\": \"holdout last 25%\", \"cells\": 9, \"cells_dynamic\": 8,\n"
      "  \"mae_watts\": 1.5, \"rmse_watts\": 2, \"mape_total_percent\": 1,\n"
      "  \"mape_dynamic_percent\": 3, \"r2\": 0.9}}\n");
  assert_int_equal(erg_model_load(&back, path, why, sizeof why), 0);
  assert_int_equal(back.idle_source, ERG_IDLE_FROM_PROFILE);
  assert_true(!back.has_idle_profile && back.ncpu == 0 && back.idle_rows == 7);
  fit_test_unlink(path);
  erg_dataset_free(&ds);
}

/* Writes the dataset as an erg journal file (ncpu column included). */
static char *dataset_journal(const struct erg_dataset *ds) {
  size_t cap = 256 + ds->nrows * 64, len = 0;
  char *text = malloc(cap);
  len += (size_t)snprintf(text, cap,
                          "# erg-journal v1 node=n1 step_seconds=5\n"
                          "time_unix_seconds,step_seconds,measured_watts,flags,"
                          "cpu_seconds_per_second,ncpu\n");
  for (size_t i = 0; i < ds->nrows; i++)
    len +=
        (size_t)snprintf(text + len, cap - len, "%.0f,5,%.3f,0,%.6f,%.0f\n",
                         ds->time_unix_seconds[i], ds->measured_watts[i], ds->x[0][i], ds->x[1][i]);
  char *path = fit_test_file(text);
  free(text);
  return path;
}

static int run(const char **argv) {
  int argc = 0;
  while (argv[argc])
    argc++;
  return erg_fit_cli(argc, (char **)argv);
}

static void test_cli(void **state) {
  (void)state;
  struct erg_dataset ds;
  make_dataset(&ds);
  char *journal = dataset_journal(&ds);
  erg_dataset_free(&ds);
  char dir[] = "/tmp/erg-fit-idle-XXXXXX", from[32], to[32], model[128], profile[128], why[256];
  assert_non_null(mkdtemp(dir));
  snprintf(from, sizeof from, "%.0f", T0);
  snprintf(to, sizeof to, "%.0f", T0 + 5 * QUIET);
  snprintf(model, sizeof model, "%s/n1.json", dir);
  snprintf(profile, sizeof profile, "%s/idle/n1.json", dir);

  /* Usage: a window is needed, and only one kind. */
  assert_int_equal(
      run((const char *[]){"fit", "--idle", "--node", "n1", "--journal", journal, NULL}), 1);
  assert_int_equal(run((const char *[]){"fit", "--idle", "--node", "n1", "--from", from, "--to", to,
                                        "--last", "5m", NULL}),
                   1);
  assert_int_equal(
      run((const char *[]){"fit", "--node", "n1", "--last", "5m", "--journal", journal, NULL}), 1);
  /* A busy window (training) is refused and nothing is written. */
  assert_int_equal(
      run((const char *[]){"fit", "--idle", "--node", "n1", "--journal", journal, "--from", from,
                           "--to", "2025-11-21T04:43:20Z", "--model-dir", dir, NULL}),
      2);
  assert_int_not_equal(access(profile, F_OK), 0);
  /* The quiet window: recorded under MODEL_DIR/idle/. */
  assert_int_equal(run((const char *[]){"fit", "--idle", "--node", "n1", "--journal", journal,
                                        "--from", from, "--to", to, "--model-dir", dir, NULL}),
                   0);
  struct erg_idle_profile p;
  assert_int_equal(erg_idle_profile_load(&p, profile, why, sizeof why), 0);
  /* The journal's last minute has a burst: --last 1m is refused. */
  assert_int_equal(run((const char *[]){"fit", "--idle", "--node", "n1", "--journal", journal,
                                        "--last", "1m", "--out", "/dev/null", NULL}),
                   2);
  /* The fit next to it (--out in the same directory) uses the profile. */
  assert_int_equal(
      run((const char *[]){"fit", "--node", "n1", "--journal", journal, "--out", model, NULL}), 0);
  struct erg_model m;
  assert_int_equal(erg_model_load(&m, model, why, sizeof why), 0);
  assert_int_equal(m.idle_source, ERG_IDLE_FROM_RECORDED);
  assert_true(fabs(m.idle_watts - p.mean_watts) < 1e-9);
  assert_int_equal(m.nfeatures, 1 + ERG_NDERIVED);
  /* --no-idle-profile and --linear: intercept fitted, journal features only. */
  assert_int_equal(run((const char *[]){"fit", "--node", "n1", "--journal", journal, "--out", model,
                                        "--no-idle-profile", "--linear", "--force", NULL}),
                   0);
  assert_int_equal(erg_model_load(&m, model, why, sizeof why), 0);
  assert_int_equal(m.idle_source, ERG_IDLE_FROM_FIT);
  assert_int_equal(m.nfeatures, 1);
  /* A file that is not an idle profile is refused. */
  assert_int_equal(
      run((const char *[]){"fit", "--journal", journal, "--idle-profile", model, "--json", NULL}),
      2);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
  fit_test_unlink(journal);
}

/* A quiet stretch of 150 cells (12.5 min), 300 busy cells, then the last
 * 10 minutes: quiet but for a busy last 30 cells. */
static void make_auto_dataset(struct erg_dataset *ds) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 12);
  char why[128];
  erg_dataset_init(ds);
  snprintf(ds->node, sizeof ds->node, "n1");
  ds->step_seconds = 5;
  erg_dataset_add_feature(ds, "cpu_seconds_per_second", why, sizeof why);
  erg_dataset_add_feature(ds, ERG_NCPU_COLUMN, why, sizeof why);
  for (int i = 0; i < 570; i++) {
    double level = i < 150   ? 0.002
                   : i < 450 ? 0.3 + 0.5 * gsl_rng_uniform(r)
                   : i < 540 ? 0.01
                             : 0.6;
    double u, dyn, p = cell_power(r, level, &u, &dyn);
    double x[2] = {u * NCPU, NCPU};
    erg_dataset_add_row(ds, T0 + 5.0 * i, 5, p, 0, x);
  }
  gsl_rng_free(r);
}

/* `erg fit --idle --auto`: the quietest 10 minutes of the journal, when the
 * last 10 minutes were busy; refused when no window qualifies. */
static void test_auto_window(void **state) {
  (void)state;
  struct erg_dataset ds;
  struct erg_idle_profile p;
  char why[512];
  make_auto_dataset(&ds);
  assert_int_equal(erg_idle_profile_find_quiet(&ds, 600, 0.05, 0, &p, why, sizeof why), 0);
  assert_true(p.first_unix_seconds >= T0 && p.last_unix_seconds <= T0 + 5 * 150);
  assert_true(p.last_unix_seconds - p.first_unix_seconds == 600);
  assert_int_equal(p.cells, 120);
  assert_true(fabs(p.mean_watts - IDLE_W) < 1);
  /* 15 minutes: no quiet stretch is that long (the busy cells end each). */
  assert_int_equal(erg_idle_profile_find_quiet(&ds, 900, 0.05, 0, &p, why, sizeof why), -1);
  assert_non_null(strstr(why, "no window of 900 s"));
  /* Stricter than the quietest window's mean: refused with that window. */
  assert_int_equal(erg_idle_profile_find_quiet(&ds, 600, 0.001, 0, &p, why, sizeof why), -1);
  assert_non_null(strstr(why, "the quietest window of 600 s"));
  assert_non_null(strstr(why, "not idle"));
  /* A cell missing its meter reading splits the quiet stretch. */
  ds.flags[75] = ERG_ROW_METER_MISSING;
  assert_int_equal(erg_idle_profile_find_quiet(&ds, 600, 0.05, 0, &p, why, sizeof why), -1);
  /* Rows of a shared meter are no node's idle power. */
  for (size_t i = 0; i < ds.nrows; i++)
    ds.flags[i] = ERG_ROW_SHARED;
  assert_int_equal(erg_idle_profile_from_dataset(&ds, T0, T0 + 600, 0.05, 0, &p, why, sizeof why),
                   -1);
  assert_non_null(strstr(why, "shared meter"));
  erg_dataset_free(&ds);

  make_auto_dataset(&ds);
  char *journal = dataset_journal(&ds);
  erg_dataset_free(&ds);
  char dir[] = "/tmp/erg-fit-idle-XXXXXX", profile[128];
  assert_non_null(mkdtemp(dir));
  snprintf(profile, sizeof profile, "%s/idle/n1.json", dir);
  assert_int_equal(run((const char *[]){"fit", "--idle", "--node", "n1", "--journal", journal,
                                        "--last", "10m", "--model-dir", dir, NULL}),
                   2);
  assert_int_not_equal(access(profile, F_OK), 0);
  /* Usage: --auto is a window of its own; --length goes with it. */
  assert_int_equal(run((const char *[]){"fit", "--idle", "--node", "n1", "--journal", journal,
                                        "--auto", "--last", "10m", NULL}),
                   1);
  assert_int_equal(run((const char *[]){"fit", "--idle", "--node", "n1", "--journal", journal,
                                        "--last", "10m", "--length", "5m", NULL}),
                   1);
  assert_int_equal(
      run((const char *[]){"fit", "--node", "n1", "--journal", journal, "--auto", NULL}), 1);
  assert_int_equal(run((const char *[]){"fit", "--idle", "--node", "n1", "--journal", journal,
                                        "--auto", "--model-dir", dir, NULL}),
                   0);
  assert_int_equal(erg_idle_profile_load(&p, profile, why, sizeof why), 0);
  assert_true(p.first_unix_seconds >= T0 && p.last_unix_seconds <= T0 + 5 * 150);
  assert_true(fabs(p.mean_watts - IDLE_W) < 1);
  /* Refused, with a hint that works (issue 36): the longest quiet stretch
   * (150 cells, 750 s) in whole minutes. stderr goes to a file meanwhile. */
  char errf[160], hint[4096] = "";
  snprintf(errf, sizeof errf, "%s/stderr", dir);
  fflush(stderr);
  int saved = dup(2), fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(saved >= 0 && fd >= 0 && dup2(fd, 2) == 2);
  int rc = run((const char *[]){"fit", "--idle", "--node", "n1", "--journal", journal, "--auto",
                                "--length", "20m", "--model-dir", dir, NULL});
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  FILE *hf = fopen(errf, "r");
  assert_non_null(hf);
  size_t hn = fread(hint, 1, sizeof hint - 1, hf);
  hint[hn] = '\0';
  fclose(hf);
  erg_assert(rc == 2 && strstr(hint, "hint: --length 720s finds that stretch"), "rc %d: %s", rc,
             hint);
  assert_int_equal(run((const char *[]){"fit", "--idle", "--node", "n1", "--journal", journal,
                                        "--auto", "--length", "720s", "--model-dir", dir, NULL}),
                   0);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
  fit_test_unlink(journal);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_record_and_refuse),
      cmocka_unit_test(test_fit_uses_profile),
      cmocka_unit_test(test_files),
      cmocka_unit_test(test_cli),
      cmocka_unit_test(test_auto_window),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

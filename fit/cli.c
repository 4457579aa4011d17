/* `erg fit`: read journals, fit, print the held-out validation, write the
 * model (refusing to replace a better one unless --force). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erg_common.h"
#include "fit_int.h"

#define CLI_MAX_JOURNALS 64
#define CLI_ROTATIONS 99

struct cli_opts {
  const char *journal[CLI_MAX_JOURNALS];
  int njournal;
  const char *node, *data_dir, *out;
  bool json, progress, force;
  struct erg_fit_options fit;
};

static void cli_usage(FILE *f) {
  fprintf(f,
          "usage: erg fit [--journal FILE]... [--node NODE] [--data-dir DIR] [--out MODEL.json]\n"
          "               [--force] [--json] [--holdout FRACTION | --folds K] [--progress]\n"
          "Fits the node power model P = idle + sum(beta_k * x_k) from training journals.\n"
          "  --journal FILE    journal to read (repeatable); default DATA_DIR/journal/NODE.csv\n"
          "                    and its rotations NODE.csv.1, .2, ...\n"
          "  --node NODE       node name (checked against the journals, names the model)\n"
          "  --data-dir DIR    collector data directory (default /var/lib/erg)\n"
          "  --out FILE        write the model; refused if its held-out MAE is worse than the\n"
          "                    model already there, unless --force\n"
          "  --json            print the model with its validation as JSON\n"
          "  --holdout F       hold out the last fraction F of the cells (default 0.25)\n"
          "  --folds K         instead, K contiguous time blocks, each held out once\n"
          "  --progress        progress on stderr\n"
          "Exit: 0 ok, 1 usage, 2 data error (or a worse model refused).\n");
}

static int cli_parse(int argc, char **argv, struct cli_opts *o) {
  static const struct option longopts[] = {
      {"journal", required_argument, 0, 'j'}, {"node", required_argument, 0, 'n'},
      {"data-dir", required_argument, 0, 'd'}, {"out", required_argument, 0, 'o'},
      {"json", no_argument, 0, 'J'},          {"holdout", required_argument, 0, 'H'},
      {"folds", required_argument, 0, 'k'},   {"progress", no_argument, 0, 'p'},
      {"force", no_argument, 0, 'f'},         {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  char why[128];
  double v;
  long k;
  optind = 0; /* glibc: full reset, erg's main may have used getopt */
  for (int c; (c = getopt_long(argc, argv, "+", longopts, NULL)) != -1;) {
    switch (c) {
    case 'j':
      if (o->njournal == CLI_MAX_JOURNALS)
        return fprintf(stderr, "erg fit: too many --journal\n"), -1;
      o->journal[o->njournal++] = optarg;
      break;
    case 'n': o->node = optarg; break;
    case 'd': o->data_dir = optarg; break;
    case 'o': o->out = optarg; break;
    case 'J': o->json = true; break;
    case 'p': o->progress = true; break;
    case 'f': o->force = true; break;
    case 'H':
      if (erg_config_double(optarg, 0, 0.9, &v, why, sizeof why) != 0)
        return fprintf(stderr, "erg fit: --holdout: %s\n", why), -1;
      o->fit.holdout_fraction = v;
      break;
    case 'k':
      if (erg_config_long(optarg, 2, 100, &k, why, sizeof why) != 0)
        return fprintf(stderr, "erg fit: --folds: %s\n", why), -1;
      o->fit.folds = (int)k;
      break;
    case 'h': cli_usage(stdout); return 1;
    default: cli_usage(stderr); return -1;
    }
  }
  if (optind != argc || (o->njournal == 0 && !o->node)) {
    cli_usage(stderr);
    return -1;
  }
  return 0;
}

/* DATA_DIR/journal/NODE.csv and the rotations that exist. */
static int cli_read_default(struct erg_dataset *ds, const struct cli_opts *o, char *why,
                            size_t whylen) {
  char safe[ERG_NAME_MAX], base[1024], path[1100];
  erg_name_sanitize(o->node, strlen(o->node), safe);
  snprintf(base, sizeof base, "%s/journal/%s.csv", o->data_dir ? o->data_dir : "/var/lib/erg",
           safe);
  if (erg_journal_read(ds, base, why, whylen) != 0)
    return -1;
  for (int i = 1; i <= CLI_ROTATIONS; i++) {
    snprintf(path, sizeof path, "%s.%d", base, i);
    if (access(path, F_OK) != 0)
      break;
    if (erg_journal_read(ds, path, why, whylen) != 0)
      return -1;
  }
  return 0;
}

/* One line, rewritten in place, only when the whole percent changes. */
static void cli_progress(void *user, const char *stage, double fraction) {
  int *last = user, pct = (int)(100 * fraction);
  if (pct == *last)
    return;
  *last = pct;
  fprintf(stderr, "\rerg fit: %-16s %3d%%%s", stage, pct, fraction >= 1 ? "\n" : "");
}

static void cli_print_metric(const char *name, double v, const char *unit) {
  if (isfinite(v))
    printf("  %-14s %10.3f %s\n", name, v, unit);
  else
    printf("  %-14s %10s\n", name, "-");
}

static void cli_print_table(const struct erg_model *m, const struct erg_dataset *ds) {
  printf("node %s: %zu cells used of %zu rows in %zu file(s), %zu malformed line(s) skipped\n",
         m->node[0] ? m->node : "?", m->train_rows, ds->nrows, ds->files, ds->malformed_lines);
  printf("idle_watts %.3f (%s", m->idle_watts,
         m->idle_source == ERG_IDLE_FROM_PROFILE ? "idle profile" : "fit");
  if (m->idle_source == ERG_IDLE_FROM_PROFILE)
    printf(", %zu rows", m->idle_rows);
  printf(")\n%-44s %s\n", "feature", "watts per unit");
  for (size_t k = 0; k < m->nfeatures; k++)
    printf("  %-42s %.6g\n", m->feature[k], m->coef[k]);
  const struct erg_fit_metrics *x = &m->metrics;
  printf("held-out validation (%s):\n", m->validation);
  cli_print_metric("MAE", x->cells ? x->mae_watts : NAN, "W");
  cli_print_metric("RMSE", x->cells ? x->rmse_watts : NAN, "W");
  cli_print_metric("MAPE total", x->mape_total_percent, "%");
  cli_print_metric("MAPE dynamic", x->mape_dynamic_percent, "%");
  cli_print_metric("R2", x->r2, "");
  printf("  %-14s %10zu (dynamic: %zu)\n", "cells", x->cells, x->cells_dynamic);
}

static void cli_print_json(const struct erg_model *m, const struct erg_dataset *ds) {
  json_t *j = fit_model_to_json(m);
  if (!j)
    return;
  json_object_set_new(j, "journal", json_pack("{s:I, s:I, s:I}", "files", (json_int_t)ds->files,
                                              "rows", (json_int_t)ds->nrows, "malformed_lines",
                                              (json_int_t)ds->malformed_lines));
  json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
  putchar('\n');
  json_decref(j);
}

/* Writes the model unless the one already at --out validated better. */
static int cli_install(const struct cli_opts *o, const struct erg_model *m) {
  struct erg_model current;
  char why[256];
  if (!o->force && access(o->out, F_OK) == 0 &&
      erg_model_load(&current, o->out, why, sizeof why) == 0 &&
      erg_model_is_worse(&current, m, 0.05, why, sizeof why)) {
    fprintf(stderr, "erg fit: not replacing %s: %s (use --force)\n", o->out, why);
    return 2;
  }
  if (erg_model_save(m, o->out, why, sizeof why) != 0) {
    fprintf(stderr, "erg fit: %s\n", why);
    return 2;
  }
  if (!o->json)
    printf("model written to %s\n", o->out);
  return 0;
}

static int cli_run(struct cli_opts *o, struct erg_dataset *ds) {
  char why[512];
  int rc = 0;
  for (int i = 0; rc == 0 && i < o->njournal; i++)
    rc = erg_journal_read(ds, o->journal[i], why, sizeof why);
  if (rc == 0 && o->njournal == 0)
    rc = cli_read_default(ds, o, why, sizeof why);
  if (rc == 0 && o->node && ds->node[0] && strcmp(o->node, ds->node) != 0) {
    char safe[ERG_NAME_MAX];
    erg_name_sanitize(o->node, strlen(o->node), safe);
    if (strcmp(safe, ds->node) != 0) {
      snprintf(why, sizeof why, "journal is of node '%s', not '%s'", ds->node, o->node);
      rc = -1;
    }
  }
  if (rc != 0) {
    fprintf(stderr, "erg fit: %s\n", why);
    return 2;
  }
  if (ds->malformed_lines && !o->json)
    fprintf(stderr, "erg fit: %zu malformed journal line(s) skipped\n", ds->malformed_lines);
  o->fit.node = o->node;
  int last_percent = -1;
  if (o->progress) {
    o->fit.progress = cli_progress;
    o->fit.progress_user = &last_percent;
  }
  struct erg_model m;
  if (erg_fit(ds, &o->fit, &m, why, sizeof why) != 0) {
    fprintf(stderr, "erg fit: %s\n", why);
    return 2;
  }
  if (o->json)
    cli_print_json(&m, ds);
  else
    cli_print_table(&m, ds);
  return o->out ? cli_install(o, &m) : 0;
}

int erg_fit_cli(int argc, char **argv) {
  struct cli_opts o = {0};
  erg_fit_options_init(&o.fit);
  int rc = cli_parse(argc, argv, &o);
  if (rc != 0)
    return rc > 0 ? 0 : 1;
  struct erg_dataset ds;
  erg_dataset_init(&ds);
  rc = cli_run(&o, &ds);
  erg_dataset_free(&ds);
  return rc;
}

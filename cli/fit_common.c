// SPDX-License-Identifier: GPL-3.0-or-later
/* What `erg fit` for one node (fit.c) and for a group (fit_group.c) both
 * use: reading journals, preparing rows, the journal's JSON, MODEL_DIR. */
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli_fit.h"
#include "erg_common.h"

/* Rotated journals read: NODE.csv.1 ... .99 (ergd keeps fewer). */
#define CLI_ROTATIONS 99

/* One line, rewritten in place, only when the whole percent changes. */
void cli_progress(void *user, const char *stage, double fraction) {
  int *last = user, pct = (int)(100 * fraction);
  if (pct == *last)
    return;
  *last = pct;
  fprintf(stderr, "\rerg fit: %-16s %3d%%%s", stage, pct, fraction >= 1 ? "\n" : "");
}

/* The journal files to read: the --journal ones, else JOURNAL_DIR/NODE.csv
 * and the rotations that exist. NULL-terminated, malloc'd. */
static char **cli_journal_paths(const struct cli_opts *o, const char *node) {
  char **paths = calloc(CLI_MAX_JOURNALS + CLI_ROTATIONS + 2, sizeof *paths);
  if (!paths)
    return NULL;
  if (o->njournal) {
    for (int i = 0; i < o->njournal; i++)
      paths[i] = strdup(o->journal[i]);
    return paths;
  }
  char safe[ERG_NAME_MAX], base[1024], path[1100];
  erg_name_sanitize(node, strlen(node), safe);
  if (o->journal_dir)
    snprintf(base, sizeof base, "%s/%s.csv", o->journal_dir, safe);
  else
    snprintf(base, sizeof base, "%s/journal/%s.csv", o->data_dir ? o->data_dir : "/var/lib/erg",
             safe);
  paths[0] = strdup(base);
  for (int i = 1; i <= CLI_ROTATIONS; i++) {
    snprintf(path, sizeof path, "%s.%d", base, i);
    if (access(path, F_OK) != 0)
      break;
    paths[i] = strdup(path);
  }
  return paths;
}

static void cli_paths_free(char **paths) {
  for (size_t i = 0; paths && paths[i]; i++)
    free(paths[i]);
  free(paths);
}

/* Reading progress over all files, by bytes. */
struct cli_reading {
  size_t done, total; /* bytes of the files already read; of all files */
  int *last_percent;
};

static int cli_read_progress(void *user, size_t bytes_read) {
  struct cli_reading *r = user;
  /* Below 100 % until the end: ergd may append while we read. */
  double f = r->total ? (double)(r->done + bytes_read) / (double)r->total : 0;
  cli_progress(r->last_percent, "reading journal", fmin(f, 0.99));
  return 0;
}

static int cli_read_all(struct erg_dataset *ds, char **paths, int *last_percent, char *why,
                        size_t whylen) {
  struct cli_reading r = {.last_percent = last_percent};
  struct stat st;
  for (size_t i = 0; paths[i]; i++)
    r.total += stat(paths[i], &st) == 0 ? (size_t)st.st_size : 0;
  for (size_t i = 0; paths[i]; i++) {
    if (erg_journal_read_progress(ds, paths[i], last_percent ? cli_read_progress : NULL, &r, why,
                                  whylen) != 0)
      return -1;
    r.done += stat(paths[i], &st) == 0 ? (size_t)st.st_size : 0;
    if (last_percent && paths[i + 1])
      cli_read_progress(&r, 0);
  }
  if (last_percent)
    cli_progress(last_percent, "reading journal", 1.0);
  return 0;
}

/* Rows flagged 64: a shared meter's, never fitted as this node's power. */
size_t cli_shared_rows(const struct erg_dataset *ds) {
  size_t n = 0;
  for (size_t i = 0; i < ds->nrows; i++)
    n += (ds->flags[i] & ERG_ROW_SHARED) != 0;
  return n;
}

/* Rows flagged 16 the fit skipped (0 with --keep-lag-unsure). */
size_t cli_lag_skipped(const struct cli_opts *o, const struct erg_dataset *ds) {
  return o->keep_lag_unsure ? 0 : ds->lag_unsure_rows;
}

json_t *cli_journal_json(const struct cli_opts *o, const struct erg_dataset *ds) {
  return json_pack(
      "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "files", (json_int_t)ds->files, "rows",
      (json_int_t)ds->nrows, "malformed_lines", (json_int_t)ds->malformed_lines, "duplicate_rows",
      (json_int_t)ds->duplicate_rows, "implausible_rows", (json_int_t)ds->implausible_rows,
      "lag_unsure_rows", (json_int_t)ds->lag_unsure_rows, "lag_unsure_rows_skipped",
      (json_int_t)cli_lag_skipped(o, ds), "shared_rows_skipped", (json_int_t)cli_shared_rows(ds));
}

int cli_load(const struct cli_opts *o, const char *node, struct erg_dataset *ds, int *last_percent,
             char *why, size_t whylen) {
  char **paths = cli_journal_paths(o, node);
  int rc = paths ? cli_read_all(ds, paths, last_percent, why, whylen) : -1;
  if (!paths)
    snprintf(why, whylen, "out of memory");
  cli_paths_free(paths);
  if (rc == 0 && node && ds->node[0] && strcmp(node, ds->node) != 0) {
    char safe[ERG_NAME_MAX];
    erg_name_sanitize(node, strlen(node), safe);
    if (strcmp(safe, ds->node) != 0) {
      snprintf(why, whylen, "journal is of node '%s', not '%s'", ds->node, node);
      rc = -1;
    }
  }
  /* A group names the member each note is about. */
  char who[ERG_FIT_NAME_MAX + 8] = "";
  if (o->group)
    snprintf(who, sizeof who, "node %s: ", node);
  if (rc == 0 && ds->malformed_lines && !o->json)
    fprintf(stderr, "erg fit: %s%zu malformed journal line(s) skipped\n", who, ds->malformed_lines);
  if (rc == 0 && ds->duplicate_rows && !o->json)
    fprintf(stderr, "erg fit: %s%zu duplicate journal row(s) skipped (a cell counts once)\n", who,
            ds->duplicate_rows);
  /* Said with --json too: such rows mean a forged or damaged journal. */
  if (rc == 0 && ds->implausible_rows)
    fprintf(stderr,
            "erg fit: %s%zu journal row(s) with impossible values skipped (measured "
            "power outside 0..%g W; a feature negative, infinite or above %g; CPU time per "
            "second above twice ncpu)\n",
            who, ds->implausible_rows, ERG_FIT_MAX_WATTS, ERG_FIT_MAX_RATE);
  return rc;
}

void cli_model_dir(const struct cli_opts *o, char *dir, size_t dirlen) {
  if (o->model_dir)
    erg_strlcpy(dir, o->model_dir, dirlen);
  else if (o->out && !o->idle) {
    char tmp[1024];
    erg_strlcpy(tmp, o->out, sizeof tmp);
    erg_strlcpy(dir, dirname(tmp), dirlen);
  } else
    snprintf(dir, dirlen, "%s/models", o->data_dir ? o->data_dir : "/var/lib/erg");
}

int cli_prepare(const struct cli_opts *o, struct erg_dataset *ds, char *why, size_t whylen) {
  /* --keep-lag-unsure: the rows become ordinary ones for the fit. */
  for (size_t i = 0; o->keep_lag_unsure && i < ds->nrows; i++)
    ds->flags[i] &= ~(unsigned)ERG_ROW_LAG_UNSURE;
  if (o->linear) {
    erg_dataset_drop_derived(ds);
    return 0;
  }
  return erg_dataset_derive(ds, o->ncpu, why, whylen) < 0 ? -1 : 0;
}

void cli_idle_window(const struct cli_opts *o, const struct erg_dataset *ds, double *from,
                     double *to) {
  *from = o->from;
  *to = o->to;
  if (o->last_seconds > 0) {
    *to = -INFINITY;
    for (size_t i = 0; i < ds->nrows; i++)
      *to = fmax(*to, ds->time_unix_seconds[i] + ds->row_step_seconds[i]);
    *from = *to - o->last_seconds;
  }
}

static void cli_print_metric(const char *name, double v, const char *unit) {
  if (isfinite(v))
    printf("  %-14s %10.3f %s\n", name, v, unit);
  else
    printf("  %-14s %10s\n", name, "-");
}

void cli_print_metrics(const struct erg_fit_metrics *x) {
  cli_print_metric("MAE", x->cells ? x->mae_watts : NAN, "W");
  cli_print_metric("RMSE", x->cells ? x->rmse_watts : NAN, "W");
  cli_print_metric("MAPE total", x->mape_total_percent, "%");
  cli_print_metric("MAPE dynamic", x->mape_dynamic_percent, "%");
  cli_print_metric("R2", x->r2, "");
  printf("  %-14s %10zu (dynamic: %zu)\n", "cells", x->cells, x->cells_dynamic);
}

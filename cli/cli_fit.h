// SPDX-License-Identifier: GPL-3.0-or-later
/* Internals of `erg fit` shared by fit.c (one node, idle profiles),
 * fit_group.c (a shared meter's group) and fit_common.c (journals). */
#ifndef ERG_CLI_FIT_H
#define ERG_CLI_FIT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "erg_fit.h"

#define CLI_MAX_JOURNALS 64

struct cli_opts {
  const char *journal[CLI_MAX_JOURNALS];
  int njournal;
  const char *node, *data_dir, *journal_dir, *model_dir, *out, *idle_profile;
  const char *group, *nodes, *form, *idle_split; /* --group mode: fit_group.c */
  bool json, force, idle, linear, no_idle_profile, keep_lag_unsure, auto_window;
  int progress; /* 1 --progress, 0 --no-progress, -1 (default): when stderr is a terminal */
  double from, to, last_seconds; /* --idle window: NaN / 0 when not given */
  double length_seconds;         /* --idle --auto: the window's length (default 10 min) */
  double max_util, ncpu;
  struct erg_fit_options fit;
};

/* Progress line on stderr; user points to the last percent printed. */
void cli_progress(void *user, const char *stage, double fraction);
/* Reads node's journals (--journal, else JOURNAL_DIR/NODE.csv and its
 * rotations) into ds and checks they are of node (NULL: not checked).
 * Says on stderr what was skipped. last_percent: NULL, or progress. */
int cli_load(const struct cli_opts *o, const char *node, struct erg_dataset *ds, int *last_percent,
             char *why, size_t whylen);
/* The rows as the fit takes them: flag 16 cleared with --keep-lag-unsure,
 * the utilisation curve added unless --linear. */
int cli_prepare(const struct cli_opts *o, struct erg_dataset *ds, char *why, size_t whylen);
/* The "journal" object of --json: files, rows and what was skipped. */
json_t *cli_journal_json(const struct cli_opts *o, const struct erg_dataset *ds);
/* Rows flagged 64 (a shared meter's), read but never fitted as one node. */
size_t cli_shared_rows(const struct erg_dataset *ds);
/* Rows flagged 16 the fit skips (0 with --keep-lag-unsure). */
size_t cli_lag_skipped(const struct cli_opts *o, const struct erg_dataset *ds);
/* The --idle window: --from/--to, or with --last D the last D of ds
 * (ending at its newest cell). */
void cli_idle_window(const struct cli_opts *o, const struct erg_dataset *ds, double *from,
                     double *to);
/* MODEL_DIR: --model-dir, else (fit of one node) --out's directory, else
 * DATA_DIR/models. */
void cli_model_dir(const struct cli_opts *o, char *dir, size_t dirlen);
/* The held-out metrics of x as `erg fit` prints them (a row each, "-" for
 * what is not finite, then the cells). */
void cli_print_metrics(const struct erg_fit_metrics *x);
/* `erg fit --group`: checks its options (1 on a usage error, after saying
 * why), fits and writes the members' models (0, or 2 on a data error). */
int cli_group_usage_check(const struct cli_opts *o);
int cli_group_run(struct cli_opts *o, int *last_percent);

#endif

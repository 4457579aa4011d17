// SPDX-License-Identifier: GPL-3.0-or-later
/* What erg report and erg jobs share: the period, --out, the carbon and
 * PUE factors (flags over ergd's [report]), --config, the checks after
 * parsing, the progress line and writing the document. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_int.h"
#include "erg_common.h"

#define CLI_PROGRESS_MIN 50 /* archives before progress is worth showing */

static int energy_fail(const char *who, const char *msg, const char *arg) {
  fprintf(stderr, "erg %s: %s%s%s%s\n", who, msg, arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
  return 1;
}

int cli_energy_config(struct cli_energy *e, const char *path) {
  struct cli_ergd_conf *f = &e->file;
  if (cli_ergd_conf_load(path, f, e->who) != 0)
    return -1;
  e->data_dir = f->data_dir[0] ? f->data_dir : "/var/lib/erg"; /* ergd's default */
  e->r->co2_g_per_kwh = f->report.co2_g_per_kwh;
  e->r->pue = f->report.pue;
  e->carbon_csv = f->report.carbon_csv[0] ? f->report.carbon_csv : NULL;
  e->pue_csv = f->report.pue_csv[0] ? f->report.pue_csv : NULL;
  /* Like ergd: the config's rrdcached address wins over RRDCACHED_ADDRESS
   * (the archives are read through librrd's client, which takes the
   * environment variable). */
  if (f->rrdcached[0])
    setenv("RRDCACHED_ADDRESS", f->rrdcached, 1);
  return 0;
}

int cli_energy_opt(struct cli_energy *e, int c, const char *arg, const char *text, int64_t now) {
  struct erg_report_options *r = e->r;
  switch (c) {
    case '?':
    case ':':
      return e->usage(c == ':' ? "missing value for" : "unknown option", text);
    case 'h':
      return e->usage(NULL, NULL), -1;
    case 'C':
      return 0; /* read before the other options */
    case 'f':
      return erg_report_parse_time(arg, now, &r->from_s) ? e->usage("bad --from", arg) : 0;
    case 't':
      return erg_report_parse_time(arg, now, &r->to_s) ? e->usage("bad --to", arg) : 0;
    case 'o':
      e->out = arg;
      return 0;
    case 'g':
      e->flags |= CLI_FLAG_CO2;
      return cli_number(arg, &r->co2_g_per_kwh) ? energy_fail(e->who, "bad --co2-g-per-kwh", arg)
                                                : 0;
    case 'G':
      e->carbon_csv = arg, e->flags |= CLI_FLAG_CARBON_CSV;
      return 0;
    case 'V':
      e->pue_csv = arg, e->flags |= CLI_FLAG_PUE_CSV;
      return 0;
    case 'U':
      e->flags |= CLI_FLAG_PUE;
      return cli_number(arg, &r->pue) || r->pue < 1
                 ? energy_fail(e->who, "bad --pue (a number >= 1)", arg)
                 : 0;
    default:
      return e->usage(NULL, NULL);
  }
}

int cli_energy_check(struct cli_energy *e, int argc, char **argv, int operand) {
  struct erg_report_options *r = e->r;
  if (operand < argc)
    return e->usage("unexpected argument", argv[operand]);
  if (r->ndata_dirs == 0 && e->data_dir)
    r->data_dirs[r->ndata_dirs++] = e->data_dir;
  if (r->ndata_dirs == 0)
    return e->usage("--data-dir (or --config with [collector] data_dir) is required", NULL);
  if (r->to_s <= r->from_s)
    return e->usage("--to must be later than --from", NULL);
  return 0;
}

/* A constant and a CSV for the same factor: a flag wins over the config
 * file's other one; both as flags, or both in the file, is ambiguous. */
static int energy_pick(double *constant, const char **csv, int flags, int flag_const, int flag_csv,
                       const char *what, const char *who) {
  if ((flags & flag_const) && (flags & flag_csv))
    return energy_fail(who, "give one of these, not both:", what);
  if (flags & flag_const)
    *csv = NULL;
  else if (flags & flag_csv)
    *constant = NAN;
  else if (*csv && !isnan(*constant))
    return energy_fail(who, "ergd's [report] sets both of", what);
  return 0;
}

static int energy_series(const char *path, double min, const char *what, int64_t from,
                         struct erg_series *s, const char *who) {
  char why[600];
  if (erg_series_load(path, min, s, why, sizeof why) != 0) {
    fprintf(stderr, "erg %s: %s\n", who, why);
    return 2;
  }
  /* Unknown before the first row: a report starting earlier would have
   * parts without a factor, so it is refused rather than silently short. */
  if (!erg_series_covers(s, from)) {
    fprintf(stderr, "erg %s: %s: %s starts at %lld, after --from %lld\n", who, path, what,
            (long long)s->t_s[0], (long long)from);
    return 2;
  }
  return 0;
}

int cli_energy_factors(struct cli_energy *e) {
  struct erg_report_options *r = e->r;
  if (energy_pick(&r->co2_g_per_kwh, &e->carbon_csv, e->flags, CLI_FLAG_CO2, CLI_FLAG_CARBON_CSV,
                  "co2_g_per_kwh/carbon_csv", e->who) ||
      energy_pick(&r->pue, &e->pue_csv, e->flags, CLI_FLAG_PUE, CLI_FLAG_PUE_CSV, "pue/pue_csv",
                  e->who))
    return 1;
  if (e->carbon_csv &&
      energy_series(e->carbon_csv, 0, "the carbon intensity", r->from_s, &e->carbon, e->who) != 0)
    return 2;
  if (e->pue_csv && energy_series(e->pue_csv, 1, "the PUE", r->from_s, &e->pue_series, e->who) != 0)
    return 2;
  r->carbon = e->carbon_csv ? &e->carbon : NULL;
  r->pue_series = e->pue_csv ? &e->pue_series : NULL;
  r->progress = cli_energy_progress;
  r->progress_user = e;
  return 0;
}

void cli_energy_free(struct cli_energy *e) {
  erg_series_free(&e->carbon);
  erg_series_free(&e->pue_series);
}

void cli_energy_progress(void *user, size_t done, size_t total, int end) {
  struct cli_energy *e = user;
  if (done == 0 && !end)
    e->progress = isatty(STDERR_FILENO) && total >= CLI_PROGRESS_MIN;
  else if (e->progress && end)
    fputc('\n', stderr);
  else if (e->progress && (done % 10 == 0 || done == total))
    fprintf(stderr, "\rerg report: %zu/%zu archives", done, total);
}

int cli_energy_write(const struct cli_energy *e, const char *doc, size_t len, const char *what,
                     char *why, size_t whylen) {
  if (e->out && erg_write_file_atomic(e->out, doc, len) != 0) {
    snprintf(why, whylen, "cannot write %s: %s", e->out, strerror(errno));
    return -1;
  }
  if (!e->out && (fwrite(doc, 1, len, stdout) != len || fflush(stdout))) {
    snprintf(why, whylen, "cannot write the %s: %s", what, strerror(errno));
    return -1;
  }
  return 0;
}

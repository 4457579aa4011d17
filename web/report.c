/* erg report's command line and output: energy over a period from the
 * RRD archives (read in report_data.c), by node or by profile key
 * (command, job, user, unit, container), as CSV, JSON or HTML; and erg
 * graph: the pages rendered once, for cron. Names from the store reach
 * output only escaped for it (CSV quoting, jansson, erg_html_escape). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <rrd.h>
#include <rrd_client.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "erg_common.h"
#include "erg_store.h"
#include "erg_web.h"
#include "report_int.h"
#include <jansson.h>

static int report_write(const struct report_opts *o, const struct report_table *t, char *why,
                        size_t whylen);

/* ---- command line ---- */

static int report_usage(const char *msg, const char *arg);

static int report_fail(const char *who, const char *msg, const char *arg) {
  fprintf(stderr, "erg %s: %s%s%s%s\n", who, msg, arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
  return 1;
}

/* A constant and a CSV for the same factor: a flag wins over the config
 * file's other one; both as flags, or both in the file, is ambiguous. */
static int report_pick(double *constant, const char **csv, int flags, int flag_const,
                       int flag_csv, const char *what, const char *who) {
  if ((flags & flag_const) && (flags & flag_csv))
    return report_fail(who, "give one of these, not both:", what);
  if (flags & flag_const)
    *csv = NULL;
  else if (flags & flag_csv)
    *constant = NAN;
  else if (*csv && !isnan(*constant))
    return report_fail(who, "ergd's [report] sets both of", what);
  return 0;
}

static int report_series(const char *path, double min, const char *what, int64_t from,
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

int report_factors(struct report_opts *o, const char *who) {
  if (report_pick(&o->co2_g_per_kwh, &o->carbon_csv, o->flags, REPORT_FLAG_CO2,
                  REPORT_FLAG_CARBON_CSV, "co2_g_per_kwh/carbon_csv", who) ||
      report_pick(&o->pue, &o->pue_csv, o->flags, REPORT_FLAG_PUE, REPORT_FLAG_PUE_CSV,
                  "pue/pue_csv", who))
    return 1;
  if (o->carbon_csv && report_series(o->carbon_csv, 0, "the carbon intensity", o->from_s,
                                     &o->carbon, who) != 0)
    return 2;
  if (o->pue_csv &&
      report_series(o->pue_csv, 1, "the PUE", o->from_s, &o->pue_series, who) != 0)
    return 2;
  o->factors = (struct erg_energy_factors){
      .co2_g_per_kwh = o->co2_g_per_kwh, .carbon = o->carbon_csv ? &o->carbon : NULL,
      .pue = isnan(o->pue) ? 1 : o->pue, .pue_series = o->pue_csv ? &o->pue_series : NULL};
  return 0;
}

static int report_usage(const char *msg, const char *arg) {
  if (msg)
    fprintf(stderr, "erg report: %s%s%s%s\n", msg, arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
  fprintf(stderr,
          "usage: erg report (--data-dir DIR... | --config ERGD_CONF) [--from T] [--to T]\n"
          "                  [--by node|command|job|user|unit|container] [--per-node]\n"
          "                  [--format csv|json|html] [--node N]... [--cost-per-kwh X\n"
          "                  --currency CUR] [--co2-g-per-kwh Y | --carbon-csv FILE]\n"
          "                  [--pue X | --pue-csv FILE] [--out FILE]\n"
          "T: 2026-11-01, 2026-11-01T12:00 (UTC), unix seconds, -7d, -12h, -30m, now\n");
  return 1;
}

/* Like ergd: the config's rrdcached address wins over RRDCACHED_ADDRESS
 * (the archives are read through librrd's client, which takes the
 * environment variable). */
static int report_load_config(struct report_opts *o, const char *path) {
  if (cli_ergd_conf_load(path, &o->file, "report") != 0)
    return -1;
  o->data_dir = o->file.data_dir[0] ? o->file.data_dir : "/var/lib/erg"; /* ergd's default */
  o->cost_per_kwh = o->file.report.cost_per_kwh;
  report_factors_config(o);
  if (o->file.report.currency[0])
    o->currency = o->file.report.currency;
  if (o->file.rrdcached[0])
    setenv("RRDCACHED_ADDRESS", o->file.rrdcached, 1);
  return 0;
}

void report_factors_config(struct report_opts *o) {
  o->co2_g_per_kwh = o->file.report.co2_g_per_kwh;
  o->pue = o->file.report.pue;
  o->carbon_csv = o->file.report.carbon_csv[0] ? o->file.report.carbon_csv : NULL;
  o->pue_csv = o->file.report.pue_csv[0] ? o->file.report.pue_csv : NULL;
}

int report_factor_opt(struct report_opts *o, int c, const char *arg, const char *who) {
  switch (c) {
  case 'g':
    o->flags |= REPORT_FLAG_CO2;
    return report_number(arg, &o->co2_g_per_kwh) ? report_fail(who, "bad --co2-g-per-kwh", arg)
                                                 : 0;
  case 'G': o->carbon_csv = arg, o->flags |= REPORT_FLAG_CARBON_CSV; return 0;
  case 'V': o->pue_csv = arg, o->flags |= REPORT_FLAG_PUE_CSV; return 0;
  case 'U':
    o->flags |= REPORT_FLAG_PUE;
    return report_number(arg, &o->pue) || o->pue < 1
               ? report_fail(who, "bad --pue (a number >= 1)", arg) : 0;
  default: return -1;
  }
}

void report_factors_free(struct report_opts *o) {
  erg_series_free(&o->carbon);
  erg_series_free(&o->pue_series);
}

static const char *const report_kinds[] = {"node", "command", "job", "user", "unit", "container"};

static int report_opt(struct report_opts *o, int c, const char *arg, int64_t now) {
  switch (c) {
  case 'd': return report_data_dir_add(o, arg) ? report_usage("too many --data-dir", arg) : 0;
  case 'C': return 0; /* read before the other options */
  case 'f': return erg_report_parse_time(arg, now, &o->from_s) ? report_usage("bad --from", arg) : 0;
  case 't': return erg_report_parse_time(arg, now, &o->to_s) ? report_usage("bad --to", arg) : 0;
  case 'o': o->out = arg; return 0;
  case 'P': o->per_node = 1; return 0;
  case 'c': o->currency = arg; return 0;
  case 'n':
    if (o->nselect >= REPORT_MAX_SELECT)
      return report_usage("too many --node", NULL);
    o->select[o->nselect++] = arg;
    return 0;
  case 'F':
    o->format = arg;
    return strcmp(arg, "csv") && strcmp(arg, "json") && strcmp(arg, "html")
               ? report_usage("unknown --format", arg) : 0;
  case 'k': return report_number(arg, &o->cost_per_kwh) ? report_usage("bad --cost-per-kwh", arg) : 0;
  case 'g': case 'G': case 'V': case 'U': return report_factor_opt(o, c, arg, "report");
  case 'b':
    for (size_t i = 0; i < sizeof report_kinds / sizeof *report_kinds; i++)
      if (!strcmp(arg, report_kinds[i])) {
        o->kind = report_kinds[i];
        o->by_node = i == 0;
        return 0;
      }
    return report_usage("unknown --by", arg);
  default: return report_usage(NULL, NULL);
  }
}

static int report_parse(int argc, char **argv, struct report_opts *o, int64_t now) {
  static const struct option longs[] = {
      {"data-dir", required_argument, 0, 'd'},     {"from", required_argument, 0, 'f'},
      {"to", required_argument, 0, 't'},           {"by", required_argument, 0, 'b'},
      {"format", required_argument, 0, 'F'},       {"node", required_argument, 0, 'n'},
      {"cost-per-kwh", required_argument, 0, 'k'}, {"currency", required_argument, 0, 'c'},
      {"co2-g-per-kwh", required_argument, 0, 'g'}, {"out", required_argument, 0, 'o'},
      {"per-node", no_argument, 0, 'P'},           {"help", no_argument, 0, 'h'},
      {"config", required_argument, 0, 'C'},       {"carbon-csv", required_argument, 0, 'G'},
      {"pue", required_argument, 0, 'U'},          {"pue-csv", required_argument, 0, 'V'},
      {0, 0, 0, 0}};
  *o = (struct report_opts){.from_s = now - 86400, .to_s = now, .kind = "node", .by_node = 1,
                            .format = "csv", .cost_per_kwh = NAN, .co2_g_per_kwh = NAN,
                            .pue = NAN};
  opterr = 0;
  /* --config first, wherever it is: the flags override the file. */
  optind = 0; /* reset getopt: callers (tests) may parse more than once */
  for (int c; (c = getopt_long(argc, argv, ":", longs, NULL)) != -1;)
    if (c == 'C' && report_load_config(o, optarg) != 0)
      return 1;
  optind = 0;
  for (int c; (c = getopt_long(argc, argv, ":", longs, NULL)) != -1;) {
    if (c == '?' || c == ':')
      return report_usage(c == ':' ? "missing value for" : "unknown option", argv[optind - 1]);
    if (c == 'h') {
      report_usage(NULL, NULL);
      return -1;
    }
    if (report_opt(o, c, optarg, now) != 0)
      return 1;
  }
  if (optind < argc)
    return report_usage("unexpected argument", argv[optind]);
  if (!o->data_dir)
    return report_usage("--data-dir (or --config with [collector] data_dir) is required", NULL);
  if (o->to_s <= o->from_s)
    return report_usage("--to must be later than --from", NULL);
  if (!isnan(o->cost_per_kwh) && !o->currency)
    return report_usage("--cost-per-kwh needs --currency", NULL);
  return report_factors(o, "report");
}

int erg_report_cli(int argc, char **argv) {
  struct report_opts o;
  int rc = report_parse(argc, argv, &o, (int64_t)time(NULL));
  struct report_table t = {0};
  char why[2048];
  if (rc == 0 &&
      (report_build(&o, &t, why, sizeof why) != 0 || report_write(&o, &t, why, sizeof why) != 0)) {
    fprintf(stderr, "erg report: %s\n", why);
    rc = 2;
  }
  free(t.rows);
  report_factors_free(&o);
  return rc < 0 ? 0 : rc;
}

/* ---- output ---- */

struct report_col {
  const char *name;
  double v; /* NAN: empty / null */
};

static double report_div(double a, double b) { return b > 0 ? a / b : NAN; }

/* The numeric columns of one row, in output order; returns how many. */
static int report_columns(const struct report_opts *o, const struct report_row *r,
                          double total_j, struct report_col *c) {
  double kwh = r->v.energy_j / REPORT_J_PER_KWH;
  /* Cost and CO2 are paid on what the facility draws (IT energy x PUE). */
  double facility_kwh = r->v.facility_j / REPORT_J_PER_KWH;
  int n = 0;
  c[n++] = (struct report_col){"energy_kwh", kwh};
  c[n++] = (struct report_col){"energy_joules", r->v.energy_j};
  /* Job rows: over the job's own span, not over the cells after it. */
  c[n++] = (struct report_col){"mean_w", report_mean_w(&r->v, r->span)};
  c[n++] = (struct report_col){"peak_w", r->v.peak_w};
  if (o->by_node) {
    c[n++] = (struct report_col){"idle_kwh", r->idle_j / REPORT_J_PER_KWH};
    c[n++] = (struct report_col){"dynamic_kwh", r->dynamic_j / REPORT_J_PER_KWH};
    c[n++] = (struct report_col){"share", report_div(r->v.energy_j, total_j)};
  } else {
    c[n++] = (struct report_col){"share_of_node", report_div(r->v.energy_j, r->node_energy_j)};
  }
  c[n++] = (struct report_col){"known_s", r->v.known_s};
  c[n++] = (struct report_col){"step_s", (double)r->v.step_s};
  if (!o->by_node && !strcmp(o->kind, "job"))
    c[n++] = (struct report_col){"span_s", r->span ? (double)(r->v.last_s - r->v.first_s) : NAN};
  if (!isnan(o->pue) || o->pue_csv)
    c[n++] = (struct report_col){"facility_energy_joules", r->v.facility_j};
  if (!isnan(o->cost_per_kwh))
    c[n++] = (struct report_col){"cost", facility_kwh * o->cost_per_kwh};
  if (!isnan(o->co2_g_per_kwh) || o->carbon_csv)
    c[n++] = (struct report_col){"co2_grams", r->v.co2_g};
  return n;
}

/* --by user rows carry the user's name and, beside it, the uid key. */
static int report_by_user(const struct report_opts *o) { return !strcmp(o->kind, "user"); }

static void report_iso(int64_t t, char out[32]) {
  time_t tt = (time_t)t;
  struct tm tm;
  gmtime_r(&tt, &tm);
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Text fields through erg_csv_text: RFC 4180 quoting, valid UTF-8, no
 * formula a spreadsheet would run (docs/report.md "CSV"). */
static void report_csv(FILE *f, const struct report_opts *o, const struct report_table *t,
                       double total_j) {
  struct report_col c[16];
  struct report_row none = {.v.peak_w = NAN};
  int n = report_columns(o, &none, total_j, c);
  fprintf(f, "node%s%s%s", o->by_node ? "" : ",", o->by_node ? "" : o->kind,
          report_by_user(o) ? ",uid" : "");
  for (int i = 0; i < n; i++)
    fprintf(f, ",%s", c[i].name);
  fprintf(f, "%s\r\n", isnan(o->cost_per_kwh) ? "" : ",currency");
  for (size_t r = 0; r < t->n; r++) {
    erg_csv_text(f, t->rows[r].node);
    if (!o->by_node)
      fputc(',', f), erg_csv_text(f, t->rows[r].key);
    if (report_by_user(o))
      fputc(',', f), erg_csv_text(f, t->rows[r].uid);
    n = report_columns(o, &t->rows[r], total_j, c);
    for (int i = 0; i < n; i++)
      fprintf(f, isnan(c[i].v) ? "," : ",%.10g", c[i].v);
    if (!isnan(o->cost_per_kwh))
      fputc(',', f), erg_csv_text(f, o->currency);
    fputs("\r\n", f);
  }
}

/* jansson takes UTF-8 only: broken sequences become '?'. */
static json_t *report_json_text(const char *s) {
  char *buf = strdup(s);
  if (!buf)
    return json_null();
  erg_utf8_fix(buf, 0);
  json_t *j = json_string(buf);
  free(buf);
  return j ? j : json_string("?");
}

static json_t *report_json_num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static int report_json(FILE *f, const struct report_opts *o, const struct report_table *t,
                       double total_j) {
  char from[32], to[32];
  report_iso(o->from_s, from);
  report_iso(o->to_s, to);
  json_t *root = json_pack("{s:s, s:s, s:I, s:I, s:s, s:f}", "from", from, "to", to,
                           "from_unix", (json_int_t)o->from_s, "to_unix", (json_int_t)o->to_s,
                           "by", o->kind, "total_energy_kwh", total_j / REPORT_J_PER_KWH);
  json_t *rows = json_array();
  if (!root || !rows) {
    json_decref(root);
    json_decref(rows);
    return -1;
  }
  if (o->currency)
    json_object_set_new(root, "currency", report_json_text(o->currency));
  for (size_t r = 0; r < t->n; r++) {
    struct report_col c[16];
    json_t *row = json_object();
    json_object_set_new(row, "node", report_json_text(t->rows[r].node));
    if (!o->by_node)
      json_object_set_new(row, o->kind, report_json_text(t->rows[r].key));
    if (report_by_user(o))
      json_object_set_new(row, "uid", report_json_text(t->rows[r].uid));
    int n = report_columns(o, &t->rows[r], total_j, c);
    for (int i = 0; i < n; i++)
      json_object_set_new(row, c[i].name, report_json_num(c[i].v));
    json_array_append_new(rows, row);
  }
  json_object_set_new(root, "rows", rows);
  int rc = json_dumpf(root, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  fputc('\n', f);
  json_decref(root);
  return rc;
}

static void report_html_text(FILE *f, const char *s) {
  char *e = erg_html_escape(s);
  fputs(e ? e : "?", f);
  free(e);
}

static void report_html(FILE *f, const struct report_opts *o, const struct report_table *t,
                        double total_j) {
  char from[32], to[32], total[32];
  struct report_col c[16];
  struct report_row none = {.v.peak_w = NAN};
  report_iso(o->from_s, from);
  report_iso(o->to_s, to);
  erg_energy_text(total_j, total, sizeof total);
  fprintf(f, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<title>erg energy report</title><style>body{font-family:sans-serif}"
             "td{text-align:right;padding:0 .6em}td.t{text-align:left}</style></head><body>\n"
             "<h1>Energy by %s, %s to %s</h1>\n<p>Total measured: %s",
          o->kind, from, to, total);
  if (o->currency)
    fputs(". Cost in ", f), report_html_text(f, o->currency);
  fprintf(f, ".</p>\n<table>\n<tr><th>node</th>");
  if (!o->by_node)
    fprintf(f, "<th>%s</th>", o->kind);
  if (report_by_user(o))
    fputs("<th>uid</th>", f);
  int n = report_columns(o, &none, total_j, c);
  for (int i = 0; i < n; i++)
    fprintf(f, "<th>%s</th>", c[i].name);
  fputs("</tr>\n", f);
  for (size_t r = 0; r < t->n; r++) {
    fputs("<tr><td class=\"t\">", f);
    report_html_text(f, t->rows[r].node);
    if (!o->by_node)
      fputs("</td><td class=\"t\">", f), report_html_text(f, t->rows[r].key);
    if (report_by_user(o))
      fputs("</td><td class=\"t\">", f), report_html_text(f, t->rows[r].uid);
    fputs("</td>", f);
    n = report_columns(o, &t->rows[r], total_j, c);
    for (int i = 0; i < n; i++)
      fprintf(f, isnan(c[i].v) ? "<td></td>" : "<td>%.6g</td>", c[i].v);
    fputs("</tr>\n", f);
  }
  fputs("</table>\n<p>Energy integrates the stored mean power over known intervals, each "
        "part of the period from the finest archive that holds it; mean_w is over known "
        "time (known_s), for jobs over their span (span_s); step_s is the coarsest "
        "resolution read. [idle] and [unattributed] rows hold what no key carries.</p>\n"
        "</body></html>\n", f);
}

/* Node rows: the sum is over the nodes listed. Key rows: over their nodes'
 * measured energy, each node once. */
static double report_total(const struct report_opts *o, const struct report_table *t) {
  double sum = 0;
  for (size_t r = 0; r < t->n; r++)
    if (o->by_node)
      sum += t->rows[r].v.energy_j;
    else if ((r == 0 || strcmp(t->rows[r].node, t->rows[r - 1].node)) &&
             isfinite(t->rows[r].node_energy_j))
      sum += t->rows[r].node_energy_j;
  return sum;
}

static int report_write(const struct report_opts *o, const struct report_table *t, char *why,
                        size_t whylen) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  double total_j = report_total(o, t);
  int rc = 0;
  if (!strcmp(o->format, "json"))
    rc = report_json(f, o, t, total_j);
  else if (!strcmp(o->format, "html"))
    report_html(f, o, t, total_j);
  else
    report_csv(f, o, t, total_j);
  rc |= fclose(f);
  if (rc == 0 && o->out && erg_write_file_atomic(o->out, buf, len) != 0) {
    snprintf(why, whylen, "cannot write %s: %s", o->out, strerror(errno));
    rc = -1;
  } else if (rc == 0 && !o->out && (fwrite(buf, 1, len, stdout) != len || fflush(stdout))) {
    snprintf(why, whylen, "cannot write the report: %s", strerror(errno));
    rc = -1;
  } else if (rc != 0) {
    snprintf(why, whylen, "cannot format the report");
  }
  free(buf);
  return rc;
}

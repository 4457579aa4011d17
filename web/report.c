// SPDX-License-Identifier: GPL-3.0-or-later
/* erg report's document: the rows (report_data.c) as CSV, JSON or HTML,
 * energy over a period by node or by profile key (command, job, user,
 * unit, container). Names from the store reach the document only escaped
 * for it (CSV quoting, jansson, erg_html_escape). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "erg_common.h"
#include "erg_web.h"
#include "erg_fit.h"
#include "report_int.h"
#include <jansson.h>

void erg_report_options_init(struct erg_report_options *o, int64_t now) {
  *o = (struct erg_report_options){.from_s = now - 86400,
                                   .to_s = now,
                                   .kind = "node",
                                   .format = "csv",
                                   .cost_per_kwh = NAN,
                                   .co2_g_per_kwh = NAN,
                                   .pue = NAN};
}

/* ---- output ---- */

struct report_col {
  const char *name;
  double v; /* NAN: empty / null */
};

static double report_div(double a, double b) { return b > 0 ? a / b : NAN; }

/* The numeric columns of one row, in output order; returns how many. */
static int report_columns(const struct erg_report_options *o, const struct report_table *t,
                          const struct report_row *r, double total_j, struct report_col *c) {
  double kwh = r->v.energy_j / REPORT_J_PER_KWH;
  /* Cost and CO2 are paid on what the facility draws (IT energy x PUE). */
  double facility_kwh = r->v.facility_j / REPORT_J_PER_KWH;
  int n = 0;
  c[n++] = (struct report_col){"energy_kwh", kwh};
  c[n++] = (struct report_col){"energy_joules", r->v.energy_j};
  /* Job rows: over the job's own span, not over the cells after it. */
  c[n++] = (struct report_col){"mean_w", report_mean_w(&r->v, r->span)};
  c[n++] = (struct report_col){"peak_w", r->v.peak_w};
  if (report_by_node(o)) {
    c[n++] = (struct report_col){"idle_kwh", r->idle_j / REPORT_J_PER_KWH};
    c[n++] = (struct report_col){"dynamic_kwh", r->dynamic_j / REPORT_J_PER_KWH};
    c[n++] = (struct report_col){"share", report_div(r->v.energy_j, total_j)};
  } else {
    c[n++] = (struct report_col){"share_of_node", report_div(r->v.energy_j, r->node_energy_j)};
  }
  c[n++] = (struct report_col){"known_s", r->v.known_s};
  c[n++] = (struct report_col){"step_s", (double)r->v.step_s};
  if (!report_by_node(o) && !strcmp(o->kind, "job"))
    c[n++] = (struct report_col){"span_s", r->span ? (double)(r->v.last_s - r->v.first_s) : NAN};
  if (!isnan(o->pue) || o->pue_series)
    c[n++] = (struct report_col){"facility_energy_joules", r->v.facility_j};
  if (!isnan(o->cost_per_kwh))
    c[n++] = (struct report_col){"cost", facility_kwh * o->cost_per_kwh};
  if (!isnan(o->co2_g_per_kwh) || o->carbon)
    c[n++] = (struct report_col){"co2_grams", r->v.co2_g};
  /* Last: a store without GPUs keeps the columns it always had. */
  if (t->gpu)
    c[n++] = (struct report_col){"gpu_energy_joules", r->gpu_j};
  /* After them: the key's 95 % interval, where the store has its parts;
   * node rows: their dynamic energy's. */
  if (t->unc) {
    double low = NAN, high = NAN, e = report_by_node(o) ? r->dynamic_j : r->v.energy_j;
    if (r->unc_known && isfinite(e))
      erg_unc_interval(e, r->unc_sd_j, r->unc_var_j, &low, &high);
    c[n++] =
        (struct report_col){report_by_node(o) ? "dynamic_joules_low" : "energy_joules_low", low};
    c[n++] =
        (struct report_col){report_by_node(o) ? "dynamic_joules_high" : "energy_joules_high", high};
  }
  return n;
}

/* --by user rows carry the user's name and, beside it, the uid key. */
static int report_by_user(const struct erg_report_options *o) { return !strcmp(o->kind, "user"); }

static void report_iso(int64_t t, char out[32]) {
  time_t tt = (time_t)t;
  struct tm tm;
  gmtime_r(&tt, &tm);
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* CSV numbers in fixed point (no 6.79e-07), as many decimals as the unit
 * needs: kWh to the mWh (3.6 J), J to 0.1 J, W to 0.1 W, shares to 1e-6,
 * seconds whole, cost to 1e-4, CO2 to the mg. */
static int report_csv_decimals(const char *col) {
  static const struct {
    const char *name;
    int decimals;
  } d[] = {{"energy_kwh", 6},    {"idle_kwh", 6}, {"dynamic_kwh", 6}, {"share", 6},
           {"share_of_node", 6}, {"known_s", 0},  {"step_s", 0},      {"span_s", 0},
           {"cost", 4},          {"co2_grams", 3}};
  for (size_t i = 0; i < sizeof d / sizeof *d; i++)
    if (!strcmp(d[i].name, col))
      return d[i].decimals;
  return 1; /* joules, watts */
}

/* Text fields through erg_csv_text: RFC 4180 quoting, valid UTF-8, no
 * formula a spreadsheet would run (docs/report.md "CSV"). */
static void report_csv(FILE *f, const struct erg_report_options *o, const struct report_table *t,
                       double total_j) {
  struct report_col c[16];
  struct report_row none = {.v.peak_w = NAN, .gpu_j = NAN};
  int n = report_columns(o, t, &none, total_j, c);
  fprintf(f, "node%s%s%s", report_by_node(o) ? "" : ",", report_by_node(o) ? "" : o->kind,
          report_by_user(o) ? ",uid" : "");
  for (int i = 0; i < n; i++)
    fprintf(f, ",%s", c[i].name);
  fprintf(f, "%s\r\n", isnan(o->cost_per_kwh) ? "" : ",currency");
  for (size_t r = 0; r < t->n; r++) {
    erg_csv_text(f, t->rows[r].node);
    if (!report_by_node(o))
      fputc(',', f), erg_csv_text(f, t->rows[r].key);
    if (report_by_user(o))
      fputc(',', f), erg_csv_text(f, t->rows[r].uid);
    n = report_columns(o, t, &t->rows[r], total_j, c);
    for (int i = 0; i < n; i++)
      if (isnan(c[i].v))
        fputc(',', f);
      else
        fprintf(f, ",%.*f", report_csv_decimals(c[i].name), c[i].v);
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

static int report_json(FILE *f, const struct erg_report_options *o, const struct report_table *t,
                       double total_j) {
  char from[32], to[32];
  report_iso(o->from_s, from);
  report_iso(o->to_s, to);
  json_t *root = json_pack("{s:s, s:s, s:I, s:I, s:s, s:f}", "from", from, "to", to, "from_unix",
                           (json_int_t)o->from_s, "to_unix", (json_int_t)o->to_s, "by", o->kind,
                           "total_energy_kwh", total_j / REPORT_J_PER_KWH);
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
    if (!report_by_node(o))
      json_object_set_new(row, o->kind, report_json_text(t->rows[r].key));
    if (report_by_user(o))
      json_object_set_new(row, "uid", report_json_text(t->rows[r].uid));
    int n = report_columns(o, t, &t->rows[r], total_j, c);
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

static void report_html(FILE *f, const struct erg_report_options *o, const struct report_table *t,
                        double total_j) {
  char from[32], to[32], total[32];
  struct report_col c[16];
  struct report_row none = {.v.peak_w = NAN, .gpu_j = NAN};
  report_iso(o->from_s, from);
  report_iso(o->to_s, to);
  erg_energy_text(total_j, total, sizeof total);
  fprintf(f,
          "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<title>erg energy report</title><style>body{font-family:sans-serif}"
          "td{text-align:right;padding:0 .6em}td.t{text-align:left}</style></head><body>\n"
          "<h1>Energy by %s, %s to %s</h1>\n<p>Total measured: %s",
          o->kind, from, to, total);
  if (o->currency)
    fputs(". Cost in ", f), report_html_text(f, o->currency);
  fprintf(f, ".</p>\n<table>\n<tr><th>node</th>");
  if (!report_by_node(o))
    fprintf(f, "<th>%s</th>", o->kind);
  if (report_by_user(o))
    fputs("<th>uid</th>", f);
  int n = report_columns(o, t, &none, total_j, c);
  for (int i = 0; i < n; i++)
    fprintf(f, "<th>%s</th>", c[i].name);
  fputs("</tr>\n", f);
  for (size_t r = 0; r < t->n; r++) {
    fputs("<tr><td class=\"t\">", f);
    report_html_text(f, t->rows[r].node);
    if (!report_by_node(o))
      fputs("</td><td class=\"t\">", f), report_html_text(f, t->rows[r].key);
    if (report_by_user(o))
      fputs("</td><td class=\"t\">", f), report_html_text(f, t->rows[r].uid);
    fputs("</td>", f);
    n = report_columns(o, t, &t->rows[r], total_j, c);
    for (int i = 0; i < n; i++)
      fprintf(f, isnan(c[i].v) ? "<td></td>" : "<td>%.6g</td>", c[i].v);
    fputs("</tr>\n", f);
  }
  fputs("</table>\n<p>Energy integrates the stored mean power over known intervals, each "
        "part of the period from the finest archive that holds it; mean_w is over known "
        "time (known_s), for jobs over their span (span_s); step_s is the coarsest "
        "resolution read. [idle] and [unattributed] rows hold what no key carries.</p>\n"
        "</body></html>\n",
        f);
}

/* ---- the text table (a terminal's default, like sacct's) ---- */

enum { TC_SKIP, TC_ENERGY, TC_WATTS, TC_SHARE, TC_DURATION, TC_SECONDS, TC_MONEY, TC_GRAMS };

/* How the table shows a CSV column: its header and kind; energies in J
 * (the *_kwh columns are converted), each column in one unit. */
static const struct {
  const char *csv, *head;
  int kind;
  double to_j;
} report_tcols[] = {
    {"energy_kwh", "", TC_SKIP, 0},
    {"energy_joules", "Energy", TC_ENERGY, 1},
    {"mean_w", "MeanW", TC_WATTS, 0},
    {"peak_w", "PeakW", TC_WATTS, 0},
    {"idle_kwh", "Idle", TC_ENERGY, REPORT_J_PER_KWH},
    {"dynamic_kwh", "Dynamic", TC_ENERGY, REPORT_J_PER_KWH},
    {"share", "Share", TC_SHARE, 0},
    {"share_of_node", "OfNode", TC_SHARE, 0},
    {"known_s", "Known", TC_DURATION, 0},
    {"step_s", "Step", TC_SECONDS, 0},
    {"span_s", "Span", TC_DURATION, 0},
    {"facility_energy_joules", "Facility", TC_ENERGY, 1},
    {"cost", "Cost", TC_MONEY, 0},
    {"co2_grams", "CO2g", TC_GRAMS, 0},
    {"gpu_energy_joules", "GPU", TC_ENERGY, 1},
    {"energy_joules_low", "Low95", TC_ENERGY, 1},
    {"energy_joules_high", "High95", TC_ENERGY, 1},
    {"dynamic_joules_low", "DynLow95", TC_ENERGY, 1},
    {"dynamic_joules_high", "DynHigh95", TC_ENERGY, 1},
};
enum { REPORT_NTCOLS = sizeof report_tcols / sizeof *report_tcols, REPORT_TEXT_MAX = 32 };

static int report_tcol(const char *csv) {
  for (int i = 0; i < REPORT_NTCOLS; i++)
    if (!strcmp(report_tcols[i].csv, csv))
      return i;
  return 0; /* TC_SKIP */
}

/* The unit of an energy column: the largest one its largest value reaches. */
static void report_energy_unit(double max_j, const char **unit, double *j_per) {
  static const struct {
    double j;
    const char *unit;
  } u[] = {{3.6e9, "MWh"}, {3.6e6, "kWh"}, {3600, "Wh"}, {1, "J"}};
  size_t i = 0;
  while (i + 1 < sizeof u / sizeof *u && max_j < u[i].j)
    i++;
  *unit = u[i].unit;
  *j_per = u[i].j;
}

/* sacct's elapsed time: [D-]HH:MM:SS. */
static void report_duration(double s, char *out, size_t len) {
  long t = lround(s), d = t / 86400;
  if (d)
    snprintf(out, len, "%ld-%02ld:%02ld:%02ld", d, t % 86400 / 3600, t % 3600 / 60, t % 60);
  else
    snprintf(out, len, "%02ld:%02ld:%02ld", t / 3600, t % 3600 / 60, t % 60);
}

static void report_text_cell(const struct report_row *r, int which, char *out, size_t len) {
  const char *s = which == 0 ? r->node : which == 1 ? r->key : r->uid;
  if (strlen(s) > REPORT_TEXT_MAX) {
    snprintf(out, len, "%.*s+", REPORT_TEXT_MAX - 1, s); /* sacct's mark of a cut */
    erg_utf8_fix(out, 0);
  } else {
    snprintf(out, len, "%s", s);
  }
  erg_utf8_fix(out, 1); /* no control byte reaches the terminal */
}

static void report_text(FILE *f, const struct erg_report_options *o, const struct report_table *t,
                        double total_j) {
  struct report_col c[16];
  struct report_row none = {.v.peak_w = NAN, .gpu_j = NAN};
  int n = report_columns(o, t, &none, total_j, c);
  int ntext = 1 + !report_by_node(o) + report_by_user(o);
  static const char *const kinds[][2] = {{"command", "Command"},
                                         {"job", "Job"},
                                         {"user", "User"},
                                         {"unit", "Unit"},
                                         {"container", "Container"}};
  const char *texthead[3] = {"Node", "", "UID"};
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (!strcmp(o->kind, kinds[i][0]))
      texthead[1] = kinds[i][1];
  int kind[16], width[19] = {0};
  const char *unit[16];
  double j_per[16], to_j[16];
  char head[16][48];
  for (int i = 0; i < n; i++) {
    int k = report_tcol(c[i].name);
    kind[i] = report_tcols[k].kind;
    to_j[i] = report_tcols[k].to_j;
    double max = 0;
    for (size_t r = 0; kind[i] == TC_ENERGY && r < t->n; r++) {
      struct report_col rc[16];
      report_columns(o, t, &t->rows[r], total_j, rc);
      if (isfinite(rc[i].v) && fabs(rc[i].v * to_j[i]) > max)
        max = fabs(rc[i].v * to_j[i]);
    }
    report_energy_unit(max, &unit[i], &j_per[i]);
    if (kind[i] == TC_ENERGY)
      snprintf(head[i], sizeof head[i], "%s[%s]", report_tcols[k].head, unit[i]);
    else if (kind[i] == TC_MONEY)
      snprintf(head[i], sizeof head[i], "Cost[%.8s]", o->currency ? o->currency : "");
    else
      snprintf(head[i], sizeof head[i], "%s", report_tcols[k].head);
  }
  /* Cells as text, then the widths, then the lines. */
  size_t ncell = (size_t)(ntext + n);
  char(*cell)[64] = calloc((t->n ? t->n : 1) * ncell, sizeof *cell);
  if (!cell)
    return;
  for (size_t r = 0; r < t->n; r++) {
    char(*row)[64] = cell + r * ncell;
    for (int i = 0; i < ntext; i++)
      report_text_cell(&t->rows[r], i, row[i], sizeof row[i]);
    struct report_col rc[16];
    report_columns(o, t, &t->rows[r], total_j, rc);
    for (int i = 0; i < n; i++) {
      char *out = row[ntext + i];
      double v = rc[i].v;
      if (!isfinite(v) || kind[i] == TC_SKIP)
        out[0] = '\0';
      else if (kind[i] == TC_ENERGY)
        snprintf(out, 64, j_per[i] == 1 ? "%.0f" : "%.3f", v * to_j[i] / j_per[i]);
      else if (kind[i] == TC_WATTS || kind[i] == TC_GRAMS)
        snprintf(out, 64, "%.1f", v);
      else if (kind[i] == TC_SHARE)
        snprintf(out, 64, "%.1f%%", 100 * v);
      else if (kind[i] == TC_DURATION)
        report_duration(v, out, 64);
      else if (kind[i] == TC_SECONDS)
        snprintf(out, 64, "%.0fs", v);
      else
        snprintf(out, 64, "%.2f", v);
    }
  }
  for (size_t i = 0; i < ncell; i++) {
    const char *h = (int)i < ntext ? texthead[i] : head[i - (size_t)ntext];
    width[i] = (int)strlen(h);
    for (size_t r = 0; r < t->n; r++)
      if ((int)strlen(cell[r * ncell + i]) > width[i])
        width[i] = (int)strlen(cell[r * ncell + i]);
  }
  char from[32], to[32], total[32];
  report_iso(o->from_s, from);
  report_iso(o->to_s, to);
  erg_energy_text(total_j, total, sizeof total);
  fprintf(f, "Energy by %s, %s to %s: %s measured\n\n", o->kind, from, to, total);
  for (int pass = 0; pass < 2; pass++) {
    int first = 1;
    for (size_t i = 0; i < ncell; i++) {
      int skip = (int)i >= ntext && kind[i - (size_t)ntext] == TC_SKIP;
      if (skip)
        continue;
      const char *h = (int)i < ntext ? texthead[i] : head[i - (size_t)ntext];
      fputs(first ? "" : " ", f);
      first = 0;
      if (pass == 1)
        for (int k = 0; k < width[i]; k++)
          fputc('-', f);
      else
        fprintf(f, (int)i < ntext ? "%-*s" : "%*s", width[i], h);
    }
    fputc('\n', f);
  }
  for (size_t r = 0; r < t->n; r++) {
    int first = 1;
    for (size_t i = 0; i < ncell; i++) {
      if ((int)i >= ntext && kind[i - (size_t)ntext] == TC_SKIP)
        continue;
      fprintf(f, (int)i < ntext ? "%s%-*s" : "%s%*s", first ? "" : " ", width[i],
              cell[r * ncell + i]);
      first = 0;
    }
    fputc('\n', f);
  }
  free(cell);
}

/* Node rows: the sum is over the nodes listed. Key rows: over their nodes'
 * measured energy, each node once. */
static double report_total(const struct erg_report_options *o, const struct report_table *t) {
  double sum = 0;
  for (size_t r = 0; r < t->n; r++)
    if (report_by_node(o))
      sum += t->rows[r].v.energy_j;
    else if ((r == 0 || strcmp(t->rows[r].node, t->rows[r - 1].node)) &&
             isfinite(t->rows[r].node_energy_j))
      sum += t->rows[r].node_energy_j;
  return sum;
}

int erg_report_render(const struct erg_report_options *o, char **doc, size_t *len, char *why,
                      size_t whylen) {
  struct report_table t = {0};
  *doc = NULL;
  *len = 0;
  if (report_build(o, &t, why, whylen) != 0) {
    free(t.rows);
    return -1;
  }
  FILE *f = open_memstream(doc, len);
  if (!f) {
    free(t.rows);
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  double total_j = report_total(o, &t);
  int rc = 0;
  if (!strcmp(o->format, "json"))
    rc = report_json(f, o, &t, total_j);
  else if (!strcmp(o->format, "html"))
    report_html(f, o, &t, total_j);
  else if (!strcmp(o->format, "table"))
    report_text(f, o, &t, total_j);
  else
    report_csv(f, o, &t, total_j);
  rc |= fclose(f);
  free(t.rows);
  if (rc != 0) {
    snprintf(why, whylen, "cannot format the report");
    free(*doc);
    *doc = NULL;
    *len = 0;
    return -1;
  }
  return 0;
}

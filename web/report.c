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

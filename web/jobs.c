// SPDX-License-Identifier: GPL-3.0-or-later
/* erg jobs' list: per-job energy from the cluster-wide job archives (read
 * by the report library, report_build with --by job) joined with Slurm's
 * own accounting fields from sacct, as sacct-like columns, parsable2, CSV
 * or JSON; and the push of erg's energy of every ended job into the job's
 * AdminComment so that sacct shows it (docs/hpc.md). Without sacct, or for
 * a job sacct does not know, erg's own fields. */
#include <jansson.h>
#include <math.h>
#include <rrd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "erg_common.h"
#include "erg_web.h"
#include "erg_fit.h"
#include "jobs_int.h"
#include "report_int.h"
#include "web_int.h"

#define JOBS_SETTLE_DEFAULT_S 600

struct erg_jobs {
  struct jobs_job *job;
  size_t n;
};

void erg_jobs_options_init(struct erg_jobs_options *o, int64_t now) {
  *o = (struct erg_jobs_options){.format = "table",
                                 .settle_s = JOBS_SETTLE_DEFAULT_S,
                                 .sacct = "sacct",
                                 .sacctmgr = "sacctmgr"};
  erg_report_options_init(&o->report, now);
  o->report.kind = "job";
}

/* ---- energy and derived numbers ---- */

/* Whether the mean is over sacct's Start..End (1) or over the job's own
 * cells, from its first to its last one with energy (0): never over the
 * period asked, nor the time with data, which goes on with the 0 W cells
 * ergd writes after a job. */
static int jobs_span_sacct(const struct jobs_job *j) {
  return j->start_s > 0 && j->end_s > j->start_s;
}

static double jobs_mean_w(const struct jobs_job *j) {
  if (jobs_span_sacct(j))
    return j->energy_j / (double)(j->end_s - j->start_s);
  return j->last_s > j->first_s ? j->energy_j / (double)(j->last_s - j->first_s) : NAN;
}

/* The GPU part of the job's energy: empty (NAN) where none of its nodes
 * has GPU archives, 0 where they have but the job used no GPU. */
static double jobs_gpu_j(const struct jobs_job *j) { return j->gpu_known ? j->gpu_j : NAN; }

/* The 95 % interval of the job's energy (docs/model.md, "Uncertainty");
 * NAN where no store has the job's uncertainty archives (an older ergd). */
static void jobs_interval(const struct jobs_job *j, double *low, double *high) {
  *low = *high = NAN;
  if (j->unc_known && isfinite(j->energy_j))
    erg_unc_interval(j->energy_j, j->unc_sd_j, j->unc_var_j, low, high);
}

static const char *jobs_span_source(const struct jobs_job *j) {
  return jobs_span_sacct(j) ? "sacct" : j->last_s > j->first_s ? "cells" : "";
}

/* Slurm job ids are decimal; the job archives also hold [none]/[other]. */
int erg_jobs_id_ok(const char *s) {
  size_t n = strspn(s, "0123456789");
  return n > 0 && n < sizeof((struct jobs_job *)0)->id && s[n] == '\0';
}

static int jobs_selected(const struct erg_jobs_options *o, const char *id) {
  for (size_t i = 0; i < o->nselect; i++)
    if (!strcmp(o->select[i], id))
      return 1;
  return o->nselect == 0;
}

/* The jobs with erg data in the period (and the --job ones without). */
static int jobs_collect(const struct erg_jobs_options *o, struct jobs_job **out, size_t *n,
                        char *why, size_t whylen) {
  struct report_table t = {0};
  *out = NULL;
  *n = 0;
  if (report_build(&o->report, &t, why, whylen) != 0) {
    /* A store without job archives yet is an empty list, not an error. */
    if (!strstr(why, "no job archives"))
      return -1;
  }
  size_t cap = t.n + o->nselect + 1;
  struct jobs_job *jobs = calloc(cap, sizeof *jobs);
  if (!jobs) {
    free(t.rows);
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < t.n; i++) {
    const struct report_row *r = &t.rows[i];
    if (!erg_jobs_id_ok(r->key) || !jobs_selected(o, r->key) || r->v.known_s <= 0)
      continue;
    /* Without cluster archives the rows are per node: one job, summed. */
    struct jobs_job *j = jobs_find(jobs, *n, r->key);
    if (j) {
      j->energy_j += r->v.energy_j;
      j->facility_j += r->v.facility_j;
      j->co2_g += r->v.co2_g;
      j->known_s = j->known_s > r->v.known_s ? j->known_s : r->v.known_s;
      j->peak_w = NAN;
      if (r->v.first_s && (!j->first_s || r->v.first_s < j->first_s))
        j->first_s = r->v.first_s;
      j->last_s = r->v.last_s > j->last_s ? r->v.last_s : j->last_s;
      continue;
    }
    j = &jobs[(*n)++];
    erg_strlcpy(j->id, r->key, sizeof j->id);
    j->energy_j = r->v.energy_j;
    j->facility_j = r->v.facility_j;
    j->co2_g = r->v.co2_g;
    j->known_s = r->v.known_s;
    j->peak_w = r->v.peak_w;
    j->first_s = r->v.first_s;
    j->last_s = r->v.last_s;
  }
  free(t.rows);
  for (size_t s = 0; s < o->nselect; s++) {
    if (!jobs_find(jobs, *n, o->select[s])) {
      struct jobs_job *j = &jobs[(*n)++];
      erg_strlcpy(j->id, o->select[s], sizeof j->id);
      j->energy_j = j->known_s = j->peak_w = j->facility_j = j->co2_g = NAN;
    }
  }
  *out = jobs;
  return 0;
}

/* ---- output ---- */

/* GPUEnergyJ beside EnergyJ (issue 26): the columns before keep their
 * places, so parsers that read EnergyJ by position still find it. */
enum {
  C_ID,
  C_USER,
  C_ACCOUNT,
  C_PART,
  C_NAME,
  C_STATE,
  C_START,
  C_END,
  C_NODES,
  C_J,
  C_GJ,
  C_KWH,
  C_W,
  C_SPAN,
  C_FAC,
  C_CO2,
  C_LOW,
  C_HIGH,
  C_N
};
static const struct {
  const char *sacct, *snake;
  int width;
} jobs_cols[C_N] = {
    {"JobID", "job_id", 12},
    {"User", "user", 9},
    {"Account", "account", 10},
    {"Partition", "partition", 10},
    {"JobName", "job_name", 12},
    {"State", "state", 10},
    {"Start", "start", 19},
    {"End", "end", 19},
    {"NodeList", "nodes", 12},
    {"EnergyJ", "energy_joules", 12},
    {"GPUEnergyJ", "gpu_energy_joules", 12},
    {"EnergyKWh", "energy_kwh", 10},
    {"MeanW", "mean_w", 8},
    {"SpanSource", "span_source", 10},
    {"FacilityJ", "facility_energy_joules", 12},
    {"CO2g", "co2_grams", 8},
    {"EnergyLowJ", "energy_joules_low", 12},
    {"EnergyHighJ", "energy_joules_high", 12},
};

/* FacilityJ only where a PUE is given, CO2g only where a carbon intensity
 * is, as in erg report. */
static int jobs_col_shown(const struct erg_jobs_options *o, int c) {
  if (c == C_FAC)
    return !isnan(o->report.pue) || o->report.pue_series;
  if (c == C_CO2)
    return !isnan(o->report.co2_g_per_kwh) || o->report.carbon;
  return 1;
}

/* Times as sacct prints them (local, no zone) or ISO UTC for CSV/JSON. */
static void jobs_time(int64_t t, int utc, char out[32]) {
  time_t tt = (time_t)t;
  struct tm tm;
  if (t <= 0) {
    out[0] = '\0';
    return;
  }
  if (utc)
    gmtime_r(&tt, &tm);
  else
    localtime_r(&tt, &tm);
  strftime(out, 32, utc ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%dT%H:%M:%S", &tm);
}

static void jobs_num(double v, const char *fmt, char out[32]) {
  if (isfinite(v))
    snprintf(out, 32, fmt, v);
  else
    out[0] = '\0';
}

/* One job's cells as text; the energy numbers use the same formats as the
 * AdminComment fields --push writes, so the two read the same. */
static void jobs_cells(const struct jobs_job *j, int utc, char cell[C_N][256]) {
  const char *text[] = {j->id, j->user, j->account, j->partition, j->name, j->state};
  for (int c = C_ID; c <= C_STATE; c++) {
    erg_strlcpy(cell[c], text[c], 256);
    /* Names are the users': no control byte reaches a terminal or a line,
     * and every output (CSV, JSON, the tables) stays valid UTF-8. */
    erg_utf8_fix(cell[c], 1);
  }
  /* Jobs sacct does not know: their first and last cell (SpanSource). */
  jobs_time(j->slurm ? j->start_s : j->first_s, utc, cell[C_START]);
  jobs_time(j->slurm ? j->end_s : j->last_s, utc, cell[C_END]);
  erg_strlcpy(cell[C_NODES], j->nodes, 256);
  erg_utf8_fix(cell[C_NODES], 1);
  jobs_num(j->energy_j, "%.1f", cell[C_J]);
  jobs_num(jobs_gpu_j(j), "%.1f", cell[C_GJ]);
  jobs_num(j->energy_j / REPORT_J_PER_KWH, "%.6f", cell[C_KWH]);
  jobs_num(jobs_mean_w(j), "%.1f", cell[C_W]);
  erg_strlcpy(cell[C_SPAN], jobs_span_source(j), 256);
  jobs_num(j->facility_j, "%.1f", cell[C_FAC]);
  jobs_num(j->co2_g, "%.1f", cell[C_CO2]);
  double low, high;
  jobs_interval(j, &low, &high);
  jobs_num(low, "%.1f", cell[C_LOW]);
  jobs_num(high, "%.1f", cell[C_HIGH]);
}

/* Numbers are right-aligned, texts left. */
static int jobs_right(int c) { return c >= C_J && c != C_SPAN; }

/* c is the first column shown. */
static int first_col(const int *shown, int c) {
  for (int k = 0; k < c; k++)
    if (shown[k])
      return 0;
  return 1;
}

/* sacct's default look: fixed widths, numbers right-aligned, a '+' where
 * a text was cut. */
static void jobs_table(FILE *f, const struct erg_jobs_options *o, const struct jobs_job *jobs,
                       size_t n) {
  /* The table is for people: a column no job fills (Account, Partition,
   * GPUEnergyJ ... without Slurm or GPUs) is left out. parsable2, CSV and
   * JSON keep theirs, for parsers. */
  int shown[C_N], filled[C_N] = {0};
  for (size_t i = 0; i < n; i++) {
    char cell[C_N][256];
    jobs_cells(&jobs[i], 0, cell);
    for (int c = 0; c < C_N; c++)
      filled[c] |= cell[c][0] != '\0';
  }
  for (int c = 0; c < C_N; c++)
    shown[c] = jobs_col_shown(o, c) && (c == C_ID || n == 0 || filled[c]);
  for (int c = 0; c < C_N; c++)
    if (shown[c])
      fprintf(f, jobs_right(c) ? "%s%*s" : "%s%-*s", first_col(shown, c) ? "" : " ",
              jobs_cols[c].width, jobs_cols[c].sacct);
  fputc('\n', f);
  for (int c = 0; c < C_N; c++) {
    if (!shown[c])
      continue;
    char dash[64];
    memset(dash, '-', (size_t)jobs_cols[c].width);
    dash[jobs_cols[c].width] = '\0';
    fprintf(f, "%s%s", first_col(shown, c) ? "" : " ", dash);
  }
  fputc('\n', f);
  for (size_t i = 0; i < n; i++) {
    char cell[C_N][256];
    jobs_cells(&jobs[i], 0, cell);
    for (int c = 0; c < C_N; c++) {
      if (!shown[c])
        continue;
      int w = jobs_cols[c].width;
      if ((int)strlen(cell[c]) > w) {
        cell[c][w - 1] = '+', cell[c][w] = '\0';
        erg_utf8_fix(cell[c], 0); /* the cut may split a character */
      }
      fprintf(f, jobs_right(c) ? "%s%*s" : "%s%-*s", first_col(shown, c) ? "" : " ", w, cell[c]);
    }
    fputc('\n', f);
  }
}

static void jobs_parsable2(FILE *f, const struct erg_jobs_options *o, const struct jobs_job *jobs,
                           size_t n) {
  for (int c = 0; c < C_N; c++)
    if (jobs_col_shown(o, c))
      fprintf(f, "%s%s", c ? "|" : "", jobs_cols[c].sacct);
  fputc('\n', f);
  for (size_t i = 0; i < n; i++) {
    char cell[C_N][256];
    jobs_cells(&jobs[i], 0, cell);
    for (int c = 0; c < C_N; c++)
      if (jobs_col_shown(o, c))
        fprintf(f, "%s%s", c ? "|" : "", cell[c]);
    fputc('\n', f);
  }
}

/* Text cells through erg_csv_text: RFC 4180 quoting, no formula a
 * spreadsheet would run (docs/hpc.md). */
static void jobs_csv(FILE *f, const struct erg_jobs_options *o, const struct jobs_job *jobs,
                     size_t n) {
  for (int c = 0; c < C_N; c++)
    if (jobs_col_shown(o, c))
      fprintf(f, "%s%s", c ? "," : "", jobs_cols[c].snake);
  fputs(",slurm\r\n", f);
  for (size_t i = 0; i < n; i++) {
    char cell[C_N][256];
    jobs_cells(&jobs[i], 1, cell);
    for (int c = 0; c < C_N; c++) {
      if (!jobs_col_shown(o, c))
        continue;
      if (c)
        fputc(',', f);
      if (!jobs_right(c))
        erg_csv_text(f, cell[c]);
      else
        fputs(cell[c], f);
    }
    fprintf(f, ",%d\r\n", jobs[i].slurm);
  }
}

/* jansson wants UTF-8: anything else becomes '?'. */
static json_t *jobs_json_text(const char *s) {
  json_t *j = json_string(s);
  if (j)
    return j;
  char buf[256];
  erg_strlcpy(buf, s, sizeof buf);
  for (char *p = buf; *p; p++)
    if ((unsigned char)*p >= 0x80)
      *p = '?';
  return json_string(buf);
}

static json_t *jobs_json_num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static int jobs_json(FILE *f, const struct erg_jobs_options *o, const struct jobs_job *jobs,
                     size_t n) {
  char from[32], to[32];
  jobs_time(o->report.from_s, 1, from);
  jobs_time(o->report.to_s, 1, to);
  json_t *root = json_pack("{s:s, s:s}", "from", from, "to", to), *arr = json_array();
  for (size_t i = 0; root && arr && i < n; i++) {
    const struct jobs_job *j = &jobs[i];
    char cell[C_N][256];
    jobs_cells(j, 1, cell);
    json_t *row = json_object();
    for (int c = 0; c < C_J; c++)
      json_object_set_new(row, jobs_cols[c].snake,
                          cell[c][0] || c == C_ID ? jobs_json_text(cell[c]) : json_null());
    json_object_set_new(row, "energy_joules", jobs_json_num(j->energy_j));
    json_object_set_new(row, "gpu_energy_joules", jobs_json_num(jobs_gpu_j(j)));
    json_object_set_new(row, "energy_kwh", jobs_json_num(j->energy_j / REPORT_J_PER_KWH));
    json_object_set_new(row, "mean_w", jobs_json_num(jobs_mean_w(j)));
    json_object_set_new(row, "span_source",
                        cell[C_SPAN][0] ? json_string(cell[C_SPAN]) : json_null());
    if (jobs_col_shown(o, C_FAC))
      json_object_set_new(row, "facility_energy_joules", jobs_json_num(j->facility_j));
    json_object_set_new(row, "co2_grams", jobs_json_num(j->co2_g));
    json_object_set_new(row, "peak_w", jobs_json_num(j->peak_w));
    json_object_set_new(row, "known_s", jobs_json_num(j->known_s));
    double low, high;
    jobs_interval(j, &low, &high);
    json_object_set_new(row, "energy_joules_low", jobs_json_num(low));
    json_object_set_new(row, "energy_joules_high", jobs_json_num(high));
    json_object_set_new(row, "slurm", json_boolean(j->slurm));
    json_array_append_new(arr, row);
  }
  if (!root || !arr) {
    json_decref(root);
    json_decref(arr);
    return -1;
  }
  json_object_set_new(root, "jobs", arr);
  int rc = json_dumpf(root, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
  fputc('\n', f);
  json_decref(root);
  return rc;
}

int erg_jobs_render(const struct erg_jobs_options *o, const struct erg_jobs *j, char **doc,
                    size_t *len, char *why, size_t whylen) {
  FILE *f = open_memstream(doc, len);
  if (!f) {
    *doc = NULL;
    *len = 0;
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  int rc = 0;
  if (!strcmp(o->format, "json"))
    rc = jobs_json(f, o, j->job, j->n);
  else if (!strcmp(o->format, "csv"))
    jobs_csv(f, o, j->job, j->n);
  else if (!strcmp(o->format, "parsable2"))
    jobs_parsable2(f, o, j->job, j->n);
  else
    jobs_table(f, o, j->job, j->n);
  rc |= fclose(f);
  if (rc != 0) {
    snprintf(why, whylen, "cannot format the list");
    free(*doc);
    *doc = NULL;
    *len = 0;
    return -1;
  }
  return 0;
}

/* ---- pushing into Slurm's accounting ---- */

/* Until when ergd has written job id's cluster-wide archive (index.tsv
 * names it): the end of its last cell plus nothing more, and the step.
 * ergd writes a job's cells in order, once, and goes on writing 0 W for a
 * while after the job. Returns 0 when the job has no archive (yet). */
static int64_t jobs_archive_last(const char *data_dir, const char *id, int64_t *step_s) {
  char path[1400], line[600];
  int64_t last = 0;
  snprintf(path, sizeof path, "%s/cluster/job/index.tsv", data_dir);
  FILE *f = fopen(path, "r");
  while (f && fgets(line, sizeof line, f)) {
    char *tab = strchr(line, '\t');
    if (!tab)
      continue;
    *tab++ = '\0';
    tab[strcspn(tab, "\r\n")] = '\0';
    if (strcmp(tab, id) || !erg_name_is_safe(line))
      continue;
    snprintf(path, sizeof path, "%s/cluster/job/%s.rrd", data_dir, line);
    rrd_info_t *info = NULL;
    int tries = 0;
    if (access(path, R_OK) == 0)
      do {
        rrd_clear_error();
        info = rrd_info_r(path);
      } while (!info && web_rrd_retry(&tries));
    for (const rrd_info_t *i = info; i; i = i->next)
      if (!strcmp(i->key, "last_update") && i->type == RD_I_CNT)
        last = (int64_t)i->value.u_cnt;
      else if (!strcmp(i->key, "step") && i->type == RD_I_CNT)
        *step_s = (int64_t)i->value.u_cnt;
    rrd_info_free(info);
    break;
  }
  if (f)
    fclose(f);
  return last;
}

/* Final once the archive holds the cell after the job's end: sacct's End
 * is whole seconds, the job may have run into the next second's cell. */
static int jobs_cells_final(const char *data_dir, const struct jobs_job *j) {
  int64_t step_s = 0, last = jobs_archive_last(data_dir, j->id, &step_s);
  return last > 0 && last >= j->end_s + 1 + step_s;
}

/* The job's whole energy, over [start - a minute, now] whatever --from
 * says: the report library then reads the finest archive that holds the
 * job, and the cells outside the job add 0 J. erg jobs prints the same
 * number for any period that holds the whole job at that resolution. */
static int jobs_energy_whole(const struct erg_jobs_options *o, struct jobs_job *j, int64_t now) {
  struct erg_jobs_options one = *o;
  struct jobs_job *found;
  size_t n;
  char why[1024];
  one.report.from_s = j->start_s - 60;
  one.report.to_s = now;
  one.select[0] = j->id;
  one.nselect = 1;
  if (jobs_collect(&one, &found, &n, why, sizeof why) != 0)
    return -1;
  j->energy_j = n ? found[0].energy_j : NAN;
  j->known_s = n ? found[0].known_s : NAN;
  j->facility_j = n ? found[0].facility_j : NAN;
  j->co2_g = n ? found[0].co2_g : NAN;
  j->first_s = n ? found[0].first_s : 0;
  j->last_s = n ? found[0].last_s : 0;
  free(found);
  return 0;
}

/* The fields --push writes: the same numbers erg jobs prints. */
static void jobs_fields(const struct jobs_job *j, char *out, size_t outlen) {
  char cell[C_N][256];
  jobs_cells(j, 0, cell);
  int len =
      snprintf(out, outlen, "erg_energy_joules=%s;erg_energy_kwh=%s;erg_mean_watts=%s%s%s",
               cell[C_J], cell[C_KWH], cell[C_W], cell[C_CO2][0] ? ";erg_co2_g=" : "", cell[C_CO2]);
  /* The 95 % interval after them, where known (readers take fields by name). */
  if (len > 0 && (size_t)len < outlen && cell[C_LOW][0] && cell[C_HIGH][0] &&
      snprintf(out + len, outlen - (size_t)len,
               ";erg_energy_joules_low=%s;erg_energy_joules_high=%s", cell[C_LOW],
               cell[C_HIGH]) >= (int)(outlen - (size_t)len))
    out[len] = '\0';
}

enum jobs_verdict { JOBS_PUSH, JOBS_WAIT, JOBS_SKIP };

/* Whether job j can be pushed now; why says why not. A job's energy is
 * final once its archive has been written past its end, or, failing that
 * (no archive: not on an erg node, or ergd down), settle_s after its end. */
static enum jobs_verdict jobs_judge(const struct erg_jobs_options *o, const struct jobs_job *j,
                                    int64_t now, const char **why) {
  if (!j->slurm)
    return *why = "unknown to sacct", JOBS_SKIP;
  if (!o->force && jobs_comment_has_erg(j->admin_comment))
    return *why = "already has erg's energy (--force to rewrite)", JOBS_SKIP;
  if (j->end_s <= 0)
    return *why = "has not ended", JOBS_WAIT;
  if (!jobs_cells_final(report_data_dir(&o->report), j) && now < j->end_s + (int64_t)o->settle_s)
    return *why = "its last cells are not final yet", JOBS_WAIT;
  return *why = "", JOBS_PUSH;
}

int erg_jobs_push_pass(const struct erg_jobs_options *o, struct erg_jobs *list, int64_t now,
                       erg_jobs_push_fn fn, void *user) {
  struct jobs_slurm slurm = {.sacct = o->sacct, .sacctmgr = o->sacctmgr};
  int waiting = 0, failed = 0;
  for (size_t i = 0; i < list->n; i++) {
    struct jobs_job *j = &list->job[i];
    const char *why;
    enum jobs_verdict v = jobs_judge(o, j, now, &why);
    if (v != JOBS_PUSH) {
      waiting += v == JOBS_WAIT;
      fn(user, j->id, v == JOBS_WAIT ? ERG_JOBS_WAITING : ERG_JOBS_SKIPPED, why);
      continue;
    }
    char fields[1200], err[600];
    if (jobs_energy_whole(o, j, now) != 0 || !isfinite(j->energy_j)) {
      fn(user, j->id, ERG_JOBS_SKIPPED, "no erg data for it");
      continue;
    }
    /* A carbon or PUE CSV starting after the job leaves its CO2 unknown:
     * pushed without erg_co2_g, and said so. */
    if ((o->report.carbon || !isnan(o->report.co2_g_per_kwh)) && !isfinite(j->co2_g))
      fn(user, j->id, ERG_JOBS_NOTE,
         "no erg_co2_g: the carbon or PUE CSV starts after the job's start");
    jobs_fields(j, fields, sizeof fields);
    if (jobs_slurm_push(&slurm, j, fields, err, sizeof err) != 0) {
      fn(user, j->id, ERG_JOBS_FAILED, err);
      failed = 1;
      continue;
    }
    fn(user, j->id, ERG_JOBS_PUSHED, fields);
    /* Pushed: a later pass must not push it again. */
    erg_strlcpy(j->admin_comment, fields, sizeof j->admin_comment);
  }
  return failed ? -1 : waiting;
}

/* ---- the list ---- */

/* A job Slurm does not tell about: RUNNING while its newest cells still
 * have energy (its last one within two steps of the newest its cluster
 * archive holds), ENDED once ergd has written cells after its last one;
 * empty where that cannot be told (no cluster archive, or a period that
 * ends before the archive's newest cell). */
static void jobs_state_from_cells(const struct erg_report_options *o, struct jobs_job *j) {
  int64_t step_s = 0, last = jobs_archive_last(report_data_dir(o), j->id, &step_s);
  if (j->state[0] || last <= 0 || step_s <= 0 || j->last_s <= 0 || o->to_s < last - step_s)
    return;
  erg_strlcpy(j->state, last - j->last_s <= 2 * step_s ? "RUNNING" : "ENDED", sizeof j->state);
}

int erg_jobs_load(const struct erg_jobs_options *o, struct erg_jobs **out, char *why,
                  size_t whylen) {
  struct erg_jobs *j = calloc(1, sizeof *j);
  *out = NULL;
  if (!j) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  if (jobs_collect(o, &j->job, &j->n, why, whylen) != 0) {
    free(j);
    return -1;
  }
  *out = j;
  jobs_erg_fields(&o->report, j->job, j->n);
  struct jobs_slurm slurm = {.sacct = o->sacct, .sacctmgr = o->sacctmgr};
  int rc = j->n && jobs_slurm_fill(&slurm, j->job, j->n, why, whylen) != 0 ? 1 : 0;
  for (size_t i = 0; i < j->n; i++)
    if (!j->job[i].slurm)
      jobs_state_from_cells(&o->report, &j->job[i]);
  return rc;
}

size_t erg_jobs_count(const struct erg_jobs *j) { return j->n; }

size_t erg_jobs_unknown(const struct erg_jobs *j) {
  size_t unknown = 0;
  for (size_t i = 0; i < j->n; i++)
    unknown += !j->job[i].slurm;
  return unknown;
}

void erg_jobs_free(struct erg_jobs *j) {
  if (j)
    free(j->job);
  free(j);
}

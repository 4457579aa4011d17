/* erg report: energy over a period from the RRD archives, by node or by
 * profile key (command, job, user, unit, container), as CSV, JSON or HTML;
 * and erg graph: the pages rendered once, for cron. Names from the store
 * reach output only escaped for it (CSV quoting, jansson, erg_html_escape)
 * and reach paths only as names that erg_name_sanitize leaves unchanged. */
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
#include <jansson.h>

#define REPORT_MAX_RRAS 32
#define REPORT_MAX_SELECT 64
#define REPORT_PROGRESS_MIN 50 /* archives before progress is worth showing */
#define REPORT_J_PER_KWH 3.6e6

struct report_opts {
  const char *data_dir, *out, *format, *currency;
  const char *kind; /* "node" or a profile key kind ("command", ...) */
  int by_node;
  int64_t from_s, to_s;
  const char *select[REPORT_MAX_SELECT]; /* --node */
  size_t nselect;
  double cost_per_kwh, co2_g_per_kwh; /* NAN when not asked for */
};

/* One data source over the period; known_s is the time with known data. */
struct report_value {
  double energy_j, known_s, peak_w;
  unsigned long step_s; /* resolution actually read */
};

struct report_row {
  char node[256], key[256];
  struct report_value v;
  double idle_j, dynamic_j; /* node rows */
  double node_energy_j;     /* key rows: the node's measured energy */
};

struct report_table {
  struct report_row *rows;
  size_t n, cap;
};

struct report_node {
  char dir[ERG_NAME_MAX]; /* sanitized, as on disk */
  char name[256];         /* original when known */
};

static int report_write(const struct report_opts *o, const struct report_table *t, char *why,
                        size_t whylen);

/* ---- times ---- */

static int report_time_relative(const char *s, int64_t now, int64_t *out) {
  char *end;
  errno = 0;
  long long n = strtoll(s + 1, &end, 10);
  if (errno || end == s + 1 || n < 0 || !*end || end[1] != '\0')
    return -1;
  long long mult = *end == 'd' ? 86400 : *end == 'h' ? 3600 : *end == 'm' ? 60
                   : *end == 's' ? 1 : *end == 'w' ? 604800 : 0;
  if (!mult || n > 100LL * 366 * 86400 / mult)
    return -1;
  *out = now - n * mult;
  return 0;
}

/* ISO date or date-time in UTC: 2026-11-01, 2026-11-01T12:00[:00][Z]. */
static int report_time_iso(const char *s, int64_t *out) {
  struct tm tm = {0};
  int consumed = 0, y, mo, d, h = 0, mi = 0, sec = 0;
  if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &consumed) != 3 || consumed != 10)
    return -1;
  const char *p = s + 10;
  if (*p == 'T' || *p == ' ') {
    int n2 = 0;
    if (sscanf(p + 1, "%2d:%2d%n", &h, &mi, &n2) != 2 || n2 != 5)
      return -1;
    p += 6;
    if (*p == ':' && (sscanf(p + 1, "%2d%n", &sec, &n2) != 1 || n2 != 2))
      return -1;
    p += *p == ':' ? 3 : 0;
  }
  p += *p == 'Z';
  if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || y < 1970)
    return -1;
  tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d;
  tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = sec;
  time_t t = timegm(&tm);
  if (t == (time_t)-1 || tm.tm_mday != d) /* timegm normalised e.g. Feb 31 */
    return -1;
  *out = (int64_t)t;
  return 0;
}

int erg_report_parse_time(const char *s, int64_t now, int64_t *out) {
  if (!s || !*s)
    return -1;
  if (!strcmp(s, "now")) {
    *out = now;
    return 0;
  }
  if (s[0] == '-')
    return report_time_relative(s, now, out);
  size_t digits = strspn(s, "0123456789");
  if (digits == strlen(s) && digits <= 12) {
    *out = strtoll(s, NULL, 10);
    return 0;
  }
  return report_time_iso(s, out);
}

/* ---- choosing the resolution ---- */

struct report_rra {
  char cf[16];
  unsigned long rows, pdp;
};

struct report_layout {
  unsigned long step;
  time_t last;
  struct report_rra rra[REPORT_MAX_RRAS];
  int n;
};

static void report_layout_entry(struct report_layout *L, const rrd_info_t *i) {
  int idx, off = 0;
  if (!strcmp(i->key, "step") && i->type == RD_I_CNT)
    L->step = i->value.u_cnt;
  else if (!strcmp(i->key, "last_update") && i->type == RD_I_CNT)
    L->last = (time_t)i->value.u_cnt;
  else if (sscanf(i->key, "rra[%d].%n", &idx, &off) == 1 && off > 0 && idx >= 0 &&
           idx < REPORT_MAX_RRAS) {
    const char *f = i->key + off;
    if (!strcmp(f, "cf") && i->type == RD_I_STR)
      erg_strlcpy(L->rra[idx].cf, i->value.u_str, sizeof L->rra[idx].cf);
    else if (!strcmp(f, "rows") && i->type == RD_I_CNT)
      L->rra[idx].rows = i->value.u_cnt;
    else if (!strcmp(f, "pdp_per_row") && i->type == RD_I_CNT)
      L->rra[idx].pdp = i->value.u_cnt;
    if (idx >= L->n)
      L->n = idx + 1;
  }
}

static int report_layout_read(const char *path, struct report_layout *L, char *why,
                              size_t whylen) {
  memset(L, 0, sizeof *L);
  rrd_clear_error();
  rrd_info_t *info = rrd_info_r(path);
  if (!info) {
    snprintf(why, whylen, "%s: %s", path, rrd_get_error());
    return -1;
  }
  for (const rrd_info_t *i = info; i; i = i->next)
    report_layout_entry(L, i);
  rrd_info_free(info);
  if (!L->step || !L->n) {
    snprintf(why, whylen, "%s: not an RRD archive with RRAs", path);
    return -1;
  }
  return 0;
}

/* The finest AVERAGE resolution whose RRA still holds `from` (RRD's own
 * reach: last update rounded down, minus rows x resolution). If none
 * reaches that far back, the one reaching furthest. Fetching with exactly
 * this step makes rrd_fetch choose that RRA rather than guess. */
static unsigned long report_resolution(const struct report_layout *L, int64_t from) {
  unsigned long best = 0, reach_res = 0;
  int64_t reach = INT64_MAX;
  for (int i = 0; i < L->n; i++) {
    if (strcmp(L->rra[i].cf, "AVERAGE") || !L->rra[i].pdp || !L->rra[i].rows)
      continue;
    unsigned long res = L->rra[i].pdp * L->step;
    int64_t end = (int64_t)L->last - (int64_t)L->last % (int64_t)res;
    int64_t start = end - (int64_t)(res * L->rra[i].rows);
    if (start <= from && (!best || res < best))
      best = res;
    if (start < reach || (start == reach && res < reach_res))
      reach = start, reach_res = res;
  }
  return best ? best : reach_res;
}

static int report_has_cf(const struct report_layout *L, const char *cf, unsigned long res) {
  for (int i = 0; i < L->n; i++)
    if (!strcmp(L->rra[i].cf, cf) && L->rra[i].pdp * L->step == res)
      return 1;
  return 0;
}

/* ---- fetching and integrating ---- */

struct report_fetch {
  time_t start, end;
  unsigned long step, nds;
  char **names;
  rrd_value_t *data;
};

static void report_fetch_free(struct report_fetch *f) {
  for (unsigned long i = 0; f->names && i < f->nds; i++)
    free(f->names[i]);
  free(f->names);
  free(f->data);
  memset(f, 0, sizeof *f);
}

static int report_fetch(const char *path, const char *cf, int64_t from, int64_t to,
                        unsigned long res, struct report_fetch *f, char *why, size_t whylen) {
  memset(f, 0, sizeof *f);
  f->start = (time_t)from;
  f->end = (time_t)to;
  f->step = res;
  rrd_clear_error();
  if (rrd_fetch_r(path, cf, &f->start, &f->end, &f->step, &f->nds, &f->names, &f->data) != 0) {
    snprintf(why, whylen, "fetch %s %s: %s", path, cf, rrd_get_error());
    memset(f, 0, sizeof *f);
    return -1;
  }
  return 0;
}

static long report_ds_index(const struct report_fetch *f, const char *ds) {
  for (unsigned long i = 0; i < f->nds; i++)
    if (!strcmp(f->names[i], ds))
      return (long)i;
  return -1;
}

/* Row r holds the mean over (start + r*step, start + (r+1)*step]; only the
 * part of that interval inside [from, to] counts. Unknown rows count as
 * neither energy nor time: the mean is over known time only. */
static void report_integrate(const struct report_fetch *f, long ds, int64_t from, int64_t to,
                             struct report_value *v) {
  unsigned long rows = f->step ? (unsigned long)(f->end - f->start) / f->step : 0;
  v->energy_j = v->known_s = 0;
  for (unsigned long r = 0; ds >= 0 && r < rows; r++) {
    int64_t lo = (int64_t)f->start + (int64_t)(r * f->step), hi = lo + (int64_t)f->step;
    double w = f->data[r * f->nds + (unsigned long)ds];
    lo = lo > from ? lo : from;
    hi = hi < to ? hi : to;
    if (hi <= lo || isnan(w))
      continue;
    v->energy_j += w * (double)(hi - lo);
    v->known_s += (double)(hi - lo);
  }
}

static double report_peak(const struct report_fetch *f, long ds, int64_t from, int64_t to) {
  unsigned long rows = f->step ? (unsigned long)(f->end - f->start) / f->step : 0;
  double peak = NAN;
  for (unsigned long r = 0; ds >= 0 && r < rows; r++) {
    int64_t lo = (int64_t)f->start + (int64_t)(r * f->step);
    double w = f->data[r * f->nds + (unsigned long)ds];
    if (lo + (int64_t)f->step > from && lo < to && !isnan(w) && !(w <= peak))
      peak = w;
  }
  return peak;
}

/* Integrates up to 3 data sources of one archive over [from, to]: energy
 * from AVERAGE, peak of the first one from MAX at the same resolution
 * (AVERAGE when the archive has no MAX RRA). */
static int report_archive(const char *path, const char *const *ds, int nds, int64_t from,
                          int64_t to, struct report_value *out, char *why, size_t whylen) {
  struct report_layout L;
  memset(out, 0, (size_t)nds * sizeof *out);
  for (int i = 0; i < nds; i++)
    out[i].peak_w = NAN;
  /* Updates still held by rrdcached are not in the file yet. */
  rrdc_flush_if_daemon(NULL, path);
  if (report_layout_read(path, &L, why, whylen) != 0)
    return -1;
  int64_t end = to < (int64_t)L.last ? to : (int64_t)L.last;
  unsigned long res = report_resolution(&L, from);
  out[0].step_s = res;
  if (end <= from || !res)
    return 0; /* nothing stored for the period */
  struct report_fetch f;
  if (report_fetch(path, "AVERAGE", from, end, res, &f, why, whylen) != 0)
    return -1;
  for (int i = 0; i < nds; i++) {
    report_integrate(&f, report_ds_index(&f, ds[i]), from, end, &out[i]);
    out[i].step_s = f.step;
  }
  if (report_has_cf(&L, "MAX", res)) {
    report_fetch_free(&f);
    if (report_fetch(path, "MAX", from, end, res, &f, why, whylen) != 0)
      return -1;
  }
  out[0].peak_w = report_peak(&f, report_ds_index(&f, ds[0]), from, end);
  report_fetch_free(&f);
  return 0;
}

/* ---- nodes and keys in the store ---- */

static int report_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int report_is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Original text of an index or name file: first line, control bytes as '?'. */
static void report_clean_name(char *s) {
  s[strcspn(s, "\r\n")] = '\0';
  for (unsigned char *p = (unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p == 0x7f)
      *p = '?';
}

/* A node's original name from nodes/<dir>/name when that name sanitizes to
 * the directory (so it really is this node's), else the directory name. */
static void report_node_name(const char *nodes_dir, const char *dir, char *out, size_t outlen) {
  char path[1400], buf[512], safe[ERG_NAME_MAX];
  snprintf(path, sizeof path, "%s/%s/name", nodes_dir, dir);
  erg_strlcpy(out, dir, outlen);
  if (erg_read_file(path, buf, sizeof buf) <= 0)
    return;
  report_clean_name(buf);
  erg_name_sanitize(buf, strlen(buf), safe);
  if (!strcmp(safe, dir))
    erg_strlcpy(out, buf, outlen);
}

static int report_node_cmp(const void *a, const void *b) {
  return strcmp(((const struct report_node *)a)->name, ((const struct report_node *)b)->name);
}

static int report_nodes_list(const char *data_dir, struct report_node **out, size_t *n, char *why,
                      size_t whylen) {
  char nodes_dir[1100];
  snprintf(nodes_dir, sizeof nodes_dir, "%s/nodes", data_dir);
  DIR *d = opendir(nodes_dir);
  *out = NULL;
  *n = 0;
  if (!d) {
    snprintf(why, whylen, "no store under %s: %s", data_dir, strerror(errno));
    return -1;
  }
  size_t cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    char safe[ERG_NAME_MAX], path[1400];
    erg_name_sanitize(e->d_name, strlen(e->d_name), safe);
    snprintf(path, sizeof path, "%s/%s", nodes_dir, e->d_name);
    if (strcmp(safe, e->d_name) || !report_is_dir(path))
      continue; /* ".", "..", and anything the store would not have made */
    if (*n == cap) {
      cap = cap ? 2 * cap : 16;
      struct report_node *m = realloc(*out, cap * sizeof *m);
      if (!m)
        break;
      *out = m;
    }
    struct report_node *nd = &(*out)[(*n)++];
    erg_strlcpy(nd->dir, e->d_name, sizeof nd->dir);
    report_node_name(nodes_dir, e->d_name, nd->name, sizeof nd->name);
  }
  closedir(d);
  if (*n)
    qsort(*out, *n, sizeof **out, report_node_cmp);
  return 0;
}

/* ---- building the rows ---- */

struct report_ctx {
  const struct report_opts *o;
  struct report_table *t;
  size_t done, total;
  int progress;
  char why[1600];
};

static int report_row_add(struct report_table *t, struct report_row **row) {
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 64;
    struct report_row *r = realloc(t->rows, cap * sizeof *r);
    if (!r)
      return -1;
    t->rows = r;
    t->cap = cap;
  }
  *row = &t->rows[t->n++];
  memset(*row, 0, sizeof **row);
  return 0;
}

static void report_tick(struct report_ctx *c) {
  c->done++;
  if (c->progress && (c->done % 10 == 0 || c->done == c->total))
    fprintf(stderr, "\rerg report: %zu/%zu archives", c->done, c->total);
}

static int report_node_row(struct report_ctx *c, const struct report_node *nd,
                           struct report_value *measured) {
  static const char *const ds[] = {"measured", "idle", "dynamic"};
  char path[1400];
  struct report_value v[3];
  snprintf(path, sizeof path, "%s/nodes/%s/node.rrd", c->o->data_dir, nd->dir);
  memset(measured, 0, sizeof *measured);
  measured->peak_w = NAN;
  if (!report_is_file(path))
    return 0;
  if (report_archive(path, ds, 3, c->o->from_s, c->o->to_s, v, c->why, sizeof c->why) != 0)
    return -1;
  report_tick(c);
  *measured = v[0];
  if (c->o->by_node) {
    struct report_row *r;
    if (report_row_add(c->t, &r) != 0)
      return -1;
    erg_strlcpy(r->node, nd->name, sizeof r->node);
    r->v = v[0];
    r->idle_j = v[1].energy_j;
    r->dynamic_j = v[2].energy_j;
  }
  return 0;
}

/* Keys of one node from <kind>/index.tsv whose archive exists. */
static int report_key_rows(struct report_ctx *c, const struct report_node *nd,
                           const struct report_value *node_measured) {
  static const char *const ds[] = {"watts"};
  char dir[1400], path[1600], line[1024];
  snprintf(dir, sizeof dir, "%s/nodes/%s/%s", c->o->data_dir, nd->dir, c->o->kind);
  snprintf(path, sizeof path, "%s/index.tsv", dir);
  FILE *f = fopen(path, "r");
  int rc = 0;
  while (f && rc == 0 && fgets(line, sizeof line, f)) {
    char *tab = strchr(line, '\t'), safe[ERG_NAME_MAX];
    if (!tab)
      continue;
    *tab = '\0';
    /* The index is data too: only a name the store could have made is a path. */
    erg_name_sanitize(line, strlen(line), safe);
    snprintf(path, sizeof path, "%s/%s.rrd", dir, safe);
    if (strcmp(safe, line) || !report_is_file(path))
      continue;
    struct report_row *r;
    if ((rc = report_row_add(c->t, &r)) != 0)
      break;
    erg_strlcpy(r->node, nd->name, sizeof r->node);
    report_clean_name(tab + 1);
    erg_strlcpy(r->key, tab + 1, sizeof r->key);
    rc = report_archive(path, ds, 1, c->o->from_s, c->o->to_s, &r->v, c->why, sizeof c->why);
    r->node_energy_j = node_measured->known_s > 0 ? node_measured->energy_j : NAN;
    report_tick(c);
  }
  if (f)
    fclose(f);
  return rc;
}

static int report_node_selected(const struct report_opts *o, const struct report_node *nd) {
  for (size_t i = 0; i < o->nselect; i++)
    if (!strcmp(o->select[i], nd->name) || !strcmp(o->select[i], nd->dir))
      return 1;
  return o->nselect == 0;
}

/* Counts archives for the progress line, and whether any kind dir exists. */
static size_t report_count(const struct report_opts *o, const struct report_node *nodes,
                           size_t n, int *kind_dirs) {
  size_t total = 0;
  *kind_dirs = 0;
  for (size_t i = 0; i < n; i++) {
    char dir[1400];
    total++;
    snprintf(dir, sizeof dir, "%s/nodes/%s/%s", o->data_dir, nodes[i].dir, o->kind);
    if (o->by_node || !report_is_dir(dir))
      continue;
    (*kind_dirs)++;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
      total += strlen(e->d_name) > 4 && !strcmp(e->d_name + strlen(e->d_name) - 4, ".rrd");
    if (d)
      closedir(d);
  }
  return total;
}

static int report_build(const struct report_opts *o, struct report_table *t, char *why, size_t whylen) {
  struct report_node *nodes;
  size_t n, sel = 0;
  if (report_nodes_list(o->data_dir, &nodes, &n, why, whylen) != 0)
    return -1;
  size_t w = 0;
  for (size_t i = 0; i < n; i++)
    if (report_node_selected(o, &nodes[i]))
      nodes[w++] = nodes[i];
  sel = w;
  struct report_ctx c = {.o = o, .t = t};
  int kind_dirs, rc = 0;
  c.total = report_count(o, nodes, sel, &kind_dirs);
  c.progress = isatty(STDERR_FILENO) && c.total >= REPORT_PROGRESS_MIN;
  if (sel == 0 && o->nselect) {
    snprintf(why, whylen, "no node %s under %s", o->select[0], o->data_dir);
    rc = -1;
  } else if (!o->by_node && kind_dirs == 0) {
    snprintf(why, whylen, "no %s archives under %s", o->kind, o->data_dir);
    rc = -1;
  }
  for (size_t i = 0; rc == 0 && i < sel; i++) {
    struct report_value measured;
    rc = report_node_row(&c, &nodes[i], &measured);
    if (rc == 0 && !o->by_node)
      rc = report_key_rows(&c, &nodes[i], &measured);
    if (rc != 0)
      snprintf(why, whylen, "%s", c.why);
  }
  if (c.progress)
    fputc('\n', stderr);
  free(nodes);
  return rc;
}

/* ---- command line ---- */

static int report_usage(const char *msg, const char *arg) {
  if (msg)
    fprintf(stderr, "erg report: %s%s%s%s\n", msg, arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
  fprintf(stderr,
          "usage: erg report --data-dir DIR [--from T] [--to T] [--by node|command|job|user|unit]\n"
          "                  [--format csv|json|html] [--node N]... [--cost-per-kwh X\n"
          "                  --currency CUR] [--co2-g-per-kwh Y] [--out FILE]\n"
          "T: 2026-11-01, 2026-11-01T12:00 (UTC), unix seconds, -7d, -12h, -30m, now\n");
  return 1;
}

static int report_number(const char *s, double *out) {
  char *end;
  errno = 0;
  *out = strtod(s, &end);
  return errno || end == s || *end || !isfinite(*out) || *out < 0 ? -1 : 0;
}

static const char *const report_kinds[] = {"node", "command", "job", "user", "unit", "container"};

static int report_opt(struct report_opts *o, int c, const char *arg, int64_t now) {
  switch (c) {
  case 'd': o->data_dir = arg; return 0;
  case 'f': return erg_report_parse_time(arg, now, &o->from_s) ? report_usage("bad --from", arg) : 0;
  case 't': return erg_report_parse_time(arg, now, &o->to_s) ? report_usage("bad --to", arg) : 0;
  case 'o': o->out = arg; return 0;
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
  case 'g': return report_number(arg, &o->co2_g_per_kwh) ? report_usage("bad --co2-g-per-kwh", arg) : 0;
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
      {"help", no_argument, 0, 'h'},               {0, 0, 0, 0}};
  *o = (struct report_opts){.from_s = now - 86400, .to_s = now, .kind = "node", .by_node = 1,
                            .format = "csv", .cost_per_kwh = NAN, .co2_g_per_kwh = NAN};
  optind = 0; /* reset getopt: callers (tests) may parse more than once */
  opterr = 0;
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
    return report_usage("--data-dir is required", NULL);
  if (o->to_s <= o->from_s)
    return report_usage("--to must be later than --from", NULL);
  if (!isnan(o->cost_per_kwh) && !o->currency)
    return report_usage("--cost-per-kwh needs --currency", NULL);
  return 0;
}

int erg_report_cli(int argc, char **argv) {
  struct report_opts o;
  int rc = report_parse(argc, argv, &o, (int64_t)time(NULL));
  if (rc != 0)
    return rc < 0 ? 0 : rc;
  struct report_table t = {0};
  char why[2048];
  if (report_build(&o, &t, why, sizeof why) != 0 || report_write(&o, &t, why, sizeof why) != 0) {
    fprintf(stderr, "erg report: %s\n", why);
    free(t.rows);
    return 2;
  }
  free(t.rows);
  return 0;
}

/* ---- erg graph ---- */

static int graph_usage(const char *msg) {
  if (msg)
    fprintf(stderr, "erg graph: %s\n", msg);
  fprintf(stderr, "usage: erg graph --data-dir DIR [--www-dir DIR]   (default DIR/www)\n");
  return 1;
}

int erg_graph_cli(int argc, char **argv) {
  static const struct option longs[] = {{"data-dir", required_argument, 0, 'd'},
                                        {"www-dir", required_argument, 0, 'w'},
                                        {0, 0, 0, 0}};
  const char *data = NULL, *www = NULL;
  optind = 0;
  opterr = 0;
  for (int c; (c = getopt_long(argc, argv, ":", longs, NULL)) != -1;) {
    if (c != 'd' && c != 'w')
      return graph_usage("unknown option or missing value");
    *(c == 'd' ? &data : &www) = optarg;
  }
  if (!data || optind < argc)
    return graph_usage(data ? "unexpected argument" : "--data-dir is required");
  char wwwbuf[1100], why[1024];
  if (!www) {
    snprintf(wwwbuf, sizeof wwwbuf, "%s/www", data);
    www = wwwbuf;
  }
  struct report_node *nodes = NULL;
  size_t n = 0;
  struct erg_store *st = NULL;
  struct erg_store_options so = {.root = data};
  int rc = report_nodes_list(data, &nodes, &n, why, sizeof why) != 0 ||
           erg_store_open(&st, &so, why, sizeof why) != 0;
  const char **names = rc ? NULL : calloc(n ? n : 1, sizeof *names);
  /* The pages find a node's files by sanitizing its name: the original
   * name (from the name file) or the directory name both lead back. */
  for (size_t i = 0; names && i < n; i++)
    names[i] = nodes[i].name;
  if (!rc && !names)
    snprintf(why, sizeof why, "out of memory");
  rc = rc || !names || erg_web_render(st, www, names, n, (int64_t)time(NULL), why, sizeof why);
  if (rc)
    fprintf(stderr, "erg graph: %s\n", why);
  free(names);
  free(nodes);
  if (st)
    erg_store_close(st);
  return rc ? 2 : 0;
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
  int n = 0;
  c[n++] = (struct report_col){"energy_kwh", kwh};
  c[n++] = (struct report_col){"energy_j", r->v.energy_j};
  c[n++] = (struct report_col){"mean_w", report_div(r->v.energy_j, r->v.known_s)};
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
  if (!isnan(o->cost_per_kwh))
    c[n++] = (struct report_col){"cost", kwh * o->cost_per_kwh};
  if (!isnan(o->co2_g_per_kwh))
    c[n++] = (struct report_col){"co2_kg", kwh * o->co2_g_per_kwh / 1000};
  return n;
}

static void report_iso(int64_t t, char out[32]) {
  time_t tt = (time_t)t;
  struct tm tm;
  gmtime_r(&tt, &tm);
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* RFC 4180: every text field quoted, quotes doubled. */
static void report_csv_text(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++)
    fputs(*s == '"' ? "\"\"" : (char[2]){*s, 0}, f);
  fputc('"', f);
}

static void report_csv(FILE *f, const struct report_opts *o, const struct report_table *t,
                       double total_j) {
  struct report_col c[16];
  struct report_row none = {.v.peak_w = NAN};
  int n = report_columns(o, &none, total_j, c);
  fprintf(f, "node%s%s", o->by_node ? "" : ",", o->by_node ? "" : o->kind);
  for (int i = 0; i < n; i++)
    fprintf(f, ",%s", c[i].name);
  fprintf(f, "%s\r\n", isnan(o->cost_per_kwh) ? "" : ",currency");
  for (size_t r = 0; r < t->n; r++) {
    report_csv_text(f, t->rows[r].node);
    if (!o->by_node)
      fputc(',', f), report_csv_text(f, t->rows[r].key);
    n = report_columns(o, &t->rows[r], total_j, c);
    for (int i = 0; i < n; i++)
      fprintf(f, isnan(c[i].v) ? "," : ",%.10g", c[i].v);
    if (!isnan(o->cost_per_kwh))
      fputc(',', f), report_csv_text(f, o->currency);
    fputs("\r\n", f);
  }
}

/* jansson takes UTF-8 only: broken sequences become '?'. */
static json_t *report_json_text(const char *s) {
  size_t len = strlen(s);
  char *buf = malloc(len + 1);
  if (!buf)
    return json_null();
  for (size_t i = 0; i < len;) {
    const unsigned char *p = (const unsigned char *)s + i;
    size_t n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 && *p >= 0xc2 ? 2
               : (*p & 0xf0) == 0xe0 ? 3 : (*p & 0xf8) == 0xf0 && *p < 0xf5 ? 4 : 0;
    for (size_t k = 1; k < n; k++)
      n = i + k < len && (p[k] & 0xc0) == 0x80 ? n : 0;
    memcpy(buf + i, n ? (const char *)p : "????", n ? n : 1);
    i += n ? n : 1;
  }
  buf[len] = '\0';
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
  char from[32], to[32];
  struct report_col c[16];
  struct report_row none = {.v.peak_w = NAN};
  report_iso(o->from_s, from);
  report_iso(o->to_s, to);
  fprintf(f, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<title>erg energy report</title><style>body{font-family:sans-serif}"
             "td{text-align:right;padding:0 .6em}td.t{text-align:left}</style></head><body>\n"
             "<h1>Energy by %s, %s to %s</h1>\n<p>Total measured: %.3f kWh",
          o->kind, from, to, total_j / REPORT_J_PER_KWH);
  if (o->currency)
    fputs(". Cost in ", f), report_html_text(f, o->currency);
  fprintf(f, ".</p>\n<table>\n<tr><th>node</th>");
  if (!o->by_node)
    fprintf(f, "<th>%s</th>", o->kind);
  int n = report_columns(o, &none, total_j, c);
  for (int i = 0; i < n; i++)
    fprintf(f, "<th>%s</th>", c[i].name);
  fputs("</tr>\n", f);
  for (size_t r = 0; r < t->n; r++) {
    fputs("<tr><td class=\"t\">", f);
    report_html_text(f, t->rows[r].node);
    if (!o->by_node)
      fputs("</td><td class=\"t\">", f), report_html_text(f, t->rows[r].key);
    fputs("</td>", f);
    n = report_columns(o, &t->rows[r], total_j, c);
    for (int i = 0; i < n; i++)
      fprintf(f, isnan(c[i].v) ? "<td></td>" : "<td>%.6g</td>", c[i].v);
    fputs("</tr>\n", f);
  }
  fputs("</table>\n<p>Energy integrates the stored mean power over known intervals; "
        "mean_w is over known time (known_s); step_s is the archive resolution read.</p>\n"
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

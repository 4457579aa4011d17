/* erg report's reading side: which archives, at which resolution, and
 * energy integrated over the period (docs/report.md). Names from the store
 * reach paths only as names that erg_name_sanitize leaves unchanged. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <rrd.h>
#include <rrd_client.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report_int.h"
#include "web_int.h"

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
 * neither energy nor time: the mean is over known time only. Facility
 * energy and CO2 are integrated row by row with the factors in force in
 * each part of the row (not the total times a mean factor). */
static void report_integrate(const struct report_fetch *f, long ds, int64_t from, int64_t to,
                             const struct erg_energy_factors *k, struct report_value *v) {
  static const struct erg_energy_factors none = {.co2_g_per_kwh = NAN, .pue = 1};
  unsigned long rows = f->step ? (unsigned long)(f->end - f->start) / f->step : 0;
  k = k ? k : &none;
  v->energy_j = v->known_s = v->facility_j = v->co2_g = 0;
  for (unsigned long r = 0; ds >= 0 && r < rows; r++) {
    int64_t lo = (int64_t)f->start + (int64_t)(r * f->step), hi = lo + (int64_t)f->step;
    double w = f->data[r * f->nds + (unsigned long)ds];
    lo = lo > from ? lo : from;
    hi = hi < to ? hi : to;
    if (hi <= lo || isnan(w))
      continue;
    double fj, g;
    erg_energy_factors_apply(k, lo, hi, w, &fj, &g);
    v->energy_j += w * (double)(hi - lo);
    v->known_s += (double)(hi - lo);
    v->facility_j += fj;
    v->co2_g += g;
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
                          int64_t to, const struct erg_energy_factors *k,
                          struct report_value *out, char *why, size_t whylen) {
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
    report_integrate(&f, report_ds_index(&f, ds[i]), from, end, k, &out[i]);
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

int report_nodes_list(const char *data_dir, struct report_node **out, size_t *n, char *why,
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
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", nodes_dir, e->d_name);
    if (!erg_name_is_safe(e->d_name) || !report_is_dir(path))
      continue; /* ".", "..", and anything the store would not have made */
    if (*n == cap) {
      cap = cap ? 2 * cap : 16;
      struct report_node *m = realloc(*out, cap * sizeof *m);
      if (!m)
        break;
      *out = m;
    }
    struct report_node *nd = &(*out)[(*n)++];
    nd->data_dir = data_dir;
    erg_strlcpy(nd->dir, e->d_name, sizeof nd->dir);
    report_node_name(nodes_dir, e->d_name, nd->name, sizeof nd->name);
  }
  closedir(d);
  if (*n)
    qsort(*out, *n, sizeof **out, report_node_cmp);
  return 0;
}

int report_data_dir_add(struct report_opts *o, const char *dir) {
  if (o->ndata_dirs >= REPORT_MAX_DATA_DIRS)
    return -1;
  o->data_dirs[o->ndata_dirs++] = dir;
  o->data_dir = o->data_dirs[0];
  return 0;
}

/* The nodes of every store (one per collector, e.g. per row), sorted by
 * name. A node in two stores is an error: its energy would count twice,
 * and which of the two is right is for the operator to say. */
static int report_nodes_all(const struct report_opts *o, struct report_node **out, size_t *n,
                            char *why, size_t whylen) {
  const char *one[1] = {o->data_dir};
  const char *const *dirs = o->ndata_dirs ? o->data_dirs : one;
  size_t ndirs = o->ndata_dirs ? o->ndata_dirs : 1;
  *out = NULL;
  *n = 0;
  for (size_t d = 0; d < ndirs; d++) {
    struct report_node *more, *all;
    size_t m;
    if (report_nodes_list(dirs[d], &more, &m, why, whylen) != 0) {
      free(*out);
      return -1;
    }
    all = m ? realloc(*out, (*n + m) * sizeof *all) : *out;
    if (m && all)
      memcpy(all + *n, more, m * sizeof *more);
    free(more);
    if (m && !all) {
      free(*out);
      snprintf(why, whylen, "out of memory listing %s", dirs[d]);
      return -1;
    }
    *out = all;
    *n += m;
  }
  if (*n)
    qsort(*out, *n, sizeof **out, report_node_cmp);
  for (size_t i = 1; i < *n; i++)
    if (!strcmp((*out)[i - 1].name, (*out)[i].name)) {
      snprintf(why, whylen, "node %s is in two stores, %s and %s: give each node's store once",
               (*out)[i].name, (*out)[i - 1].data_dir, (*out)[i].data_dir);
      free(*out);
      return -1;
    }
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
  snprintf(path, sizeof path, "%s/nodes/%s/node.rrd", nd->data_dir, nd->dir);
  memset(measured, 0, sizeof *measured);
  measured->peak_w = NAN;
  if (!report_is_file(path))
    return 0;
  if (report_archive(path, ds, 3, c->o->from_s, c->o->to_s, &c->o->factors, v, c->why,
                     sizeof c->why) != 0)
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

/* Keys of one kind directory (a node's, or cluster/<kind>) from its
 * index.tsv whose archive exists; rows named node_name. */
static int report_key_rows(struct report_ctx *c, const char *dir, const char *node_name,
                           double node_energy_j) {
  static const char *const ds[] = {"watts"};
  char path[1600], line[1024];
  snprintf(path, sizeof path, "%s/index.tsv", dir);
  FILE *f = fopen(path, "r");
  int rc = 0;
  /* User keys are uids: rows show the node's name for it (names.tsv). */
  int users = !strcmp(c->o->kind, "user");
  char *names = users ? web_names_load(dir) : NULL;
  while (f && rc == 0 && fgets(line, sizeof line, f)) {
    char *tab = strchr(line, '\t');
    if (!tab)
      continue;
    *tab = '\0';
    /* The index is data too: only a name the store could have made is a path. */
    snprintf(path, sizeof path, "%s/%s.rrd", dir, line);
    if (!erg_name_is_safe(line) || !report_is_file(path))
      continue;
    struct report_row *r;
    if ((rc = report_row_add(c->t, &r)) != 0)
      break;
    erg_strlcpy(r->node, node_name, sizeof r->node);
    report_clean_name(tab + 1);
    erg_strlcpy(r->key, tab + 1, sizeof r->key);
    if (users) {
      erg_strlcpy(r->uid, tab + 1, sizeof r->uid);
      web_names_find(names, r->uid, r->key, sizeof r->key);
    }
    rc = report_archive(path, ds, 1, c->o->from_s, c->o->to_s, &c->o->factors, &r->v, c->why,
                        sizeof c->why);
    r->node_energy_j = node_energy_j;
    report_tick(c);
  }
  if (f)
    fclose(f);
  free(names);
  return rc;
}

static int report_node_keys(struct report_ctx *c, const struct report_node *nd,
                            const struct report_value *node_measured) {
  char dir[1400];
  snprintf(dir, sizeof dir, "%s/nodes/%s/%s", nd->data_dir, nd->dir, c->o->kind);
  return report_key_rows(c, dir, nd->name,
                         node_measured->known_s > 0 ? node_measured->energy_j : NAN);
}

/* --by job reads the cluster-wide job archives (the collector sums a job
 * over its nodes there, and they outlive per-node expiry) unless nodes are
 * selected or --per-node asks for the breakdown. Over several stores each
 * holds its own collector's part of a job: the node archives are read. */
static int report_use_cluster(const struct report_opts *o) {
  char dir[1400];
  snprintf(dir, sizeof dir, "%s/cluster/%s/index.tsv", o->data_dir, o->kind);
  return !o->by_node && !o->per_node && o->nselect == 0 && !strcmp(o->kind, "job") &&
         o->ndata_dirs <= 1 && report_is_file(dir);
}

static int report_node_selected(const struct report_opts *o, const struct report_node *nd) {
  for (size_t i = 0; i < o->nselect; i++)
    if (!strcmp(o->select[i], nd->name) || !strcmp(o->select[i], nd->dir))
      return 1;
  return o->nselect == 0;
}

static size_t report_count_rrd(const char *dir) {
  size_t n = 0;
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));)
    n += strlen(e->d_name) > 4 && !strcmp(e->d_name + strlen(e->d_name) - 4, ".rrd");
  if (d)
    closedir(d);
  return n;
}

/* Counts archives for the progress line, and whether any kind dir exists. */
static size_t report_count(const struct report_opts *o, const struct report_node *nodes,
                           size_t n, int *kind_dirs) {
  size_t total = 0;
  int cluster = report_use_cluster(o);
  char dir[1400];
  *kind_dirs = 0;
  for (size_t i = 0; i < n; i++) {
    total++;
    snprintf(dir, sizeof dir, "%s/nodes/%s/%s", nodes[i].data_dir, nodes[i].dir, o->kind);
    if (o->by_node || !report_is_dir(dir))
      continue;
    (*kind_dirs)++;
    total += cluster ? 0 : report_count_rrd(dir);
  }
  snprintf(dir, sizeof dir, "%s/cluster/%s", o->data_dir, o->kind);
  return total + (cluster ? report_count_rrd(dir) : 0);
}

int report_build(const struct report_opts *o, struct report_table *t, char *why, size_t whylen) {
  struct report_node *nodes;
  size_t n, sel = 0;
  if (report_nodes_all(o, &nodes, &n, why, whylen) != 0)
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
  } else if (!o->by_node && kind_dirs == 0 && !report_use_cluster(o)) {
    snprintf(why, whylen, "no %s archives under %s", o->kind, o->data_dir);
    rc = -1;
  }
  int cluster = rc == 0 && report_use_cluster(o);
  double all_j = 0;
  size_t known_nodes = 0;
  for (size_t i = 0; rc == 0 && i < sel; i++) {
    struct report_value measured;
    rc = report_node_row(&c, &nodes[i], &measured);
    if (measured.known_s > 0)
      all_j += measured.energy_j, known_nodes++;
    if (rc == 0 && !o->by_node && !cluster)
      rc = report_node_keys(&c, &nodes[i], &measured);
    if (rc != 0)
      snprintf(why, whylen, "%s", c.why);
  }
  if (rc == 0 && cluster) {
    /* One row per job; its share is of all nodes' measured energy. */
    char dir[1400];
    snprintf(dir, sizeof dir, "%s/cluster/%s", o->data_dir, o->kind);
    if ((rc = report_key_rows(&c, dir, REPORT_ALL_NODES, known_nodes ? all_j : NAN)) != 0)
      snprintf(why, whylen, "%s", c.why);
  }
  if (c.progress)
    fputc('\n', stderr);
  free(nodes);
  return rc;
}


/* ---- one key, for other commands (erg jobs) ---- */

int erg_report_key_energy(const char *data_dir, const char *node, const char *kind,
                          const char *key, int64_t from_s, int64_t to_s,
                          const struct erg_energy_factors *f, struct erg_key_energy *out,
                          char *why, size_t whylen) {
  static const char *const ds[] = {"watts"};
  char snode[ERG_NAME_MAX], skind[ERG_NAME_MAX], skey[ERG_NAME_MAX], path[1400];
  struct report_value v;
  memset(out, 0, sizeof *out);
  erg_name_sanitize(kind, strlen(kind), skind);
  erg_name_sanitize(key, strlen(key), skey);
  if (node) {
    erg_name_sanitize(node, strlen(node), snode);
    snprintf(path, sizeof path, "%s/nodes/%s/%s/%s.rrd", data_dir, snode, skind, skey);
  } else {
    snprintf(path, sizeof path, "%s/cluster/%s/%s.rrd", data_dir, skind, skey);
  }
  if (!report_is_file(path)) {
    snprintf(why, whylen, "no archive %s", path);
    return -1;
  }
  if (report_archive(path, ds, 1, from_s, to_s, f, &v, why, whylen) != 0)
    return -1;
  *out = (struct erg_key_energy){.energy_joules = v.energy_j, .facility_energy_joules = v.facility_j,
                                 .co2_grams = f && (f->carbon || !isnan(f->co2_g_per_kwh))
                                                  ? v.co2_g : NAN,
                                 .known_seconds = v.known_s,
                                 .step_seconds = v.step_s};
  return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
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

struct erg_energy_factors report_factors(const struct erg_report_options *o) {
  return (struct erg_energy_factors){.co2_g_per_kwh = o->co2_g_per_kwh,
                                     .carbon = o->carbon,
                                     .pue = isnan(o->pue) ? 1 : o->pue,
                                     .pue_series = o->pue_series};
}

/* The nodes of every store (one per collector, e.g. per row), sorted by
 * name. A node in two stores is an error: its energy would count twice,
 * and which of the two is right is for the operator to say. */
static int report_nodes_all(const struct erg_report_options *o, struct report_node **out, size_t *n,
                            char *why, size_t whylen) {
  const char *const *dirs = o->data_dirs;
  size_t ndirs = o->ndata_dirs;
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
  const struct erg_report_options *o;
  struct erg_energy_factors f; /* report_factors(o) */
  struct report_table *t;
  size_t done, total;
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
  (*row)->gpu_j = NAN;
  return 0;
}

/* The GPU part of a row (docs/gpu.md): archive `name`.rrd of the GPU kind
 * directory gpu_dir, 0 when the directory exists without it (a node or
 * cluster with GPUs, a key that used none); the row keeps NAN when gpu_dir
 * is NULL (no such directory: the caller looks once). */
static int report_gpu_part(struct report_ctx *c, const char *gpu_dir, const char *name,
                           struct report_row *r) {
  static const char *const ds[] = {"watts"};
  char path[1700];
  struct report_value v;
  if (!gpu_dir)
    return 0;
  c->t->gpu = 1;
  r->gpu_j = 0;
  snprintf(path, sizeof path, "%s/%s.rrd", gpu_dir, name);
  if (!report_is_file(path))
    return 0;
  if (report_archive(NULL, path, ds, 1, c->o->from_s, c->o->to_s, NULL, &v, c->why,
                     sizeof c->why) != 0)
    return -1;
  r->gpu_j = v.energy_j;
  return 0;
}

/* A row's interval parts (docs/model.md, "Uncertainty"): the data sources
 * sd and var of path (a job's archive, a node's dynamic_unc/node.rrd); a
 * store of an ergd before them has them as archives of their own:
 * `old_dir`_sd/`name`.rrd and _var/ beside a job kind's dir, or
 * old_dir/sd.rrd and var.rrd (name NULL); neither: no interval. */
static int report_unc_part(struct report_ctx *c, const char *path, const char *old_dir,
                           const char *name, struct report_row *r) {
  static const char *const ds[] = {"sd", "var"}, *const watts[] = {"watts"};
  struct report_value v[2];
  char old[1700];
  if (report_is_file(path) && report_archive(NULL, path, ds, 2, c->o->from_s, c->o->to_s, NULL, v,
                                             c->why, sizeof c->why) != 0)
    return -1;
  if (!report_is_file(path) || v[0].absent || v[1].absent) {
    for (int k = 0; k < 2; k++) {
      if (name)
        snprintf(old, sizeof old, "%s_%s/%s.rrd", old_dir, ds[k], name);
      else
        snprintf(old, sizeof old, "%s/%s.rrd", old_dir, ds[k]);
      if (!report_is_file(old))
        return 0;
      if (report_archive(NULL, old, watts, 1, c->o->from_s, c->o->to_s, NULL, &v[k], c->why,
                         sizeof c->why) != 0)
        return -1;
    }
  }
  /* Not known over the period (an ergd with energy_intervals = no). */
  if (!(v[0].known_s > 0) || !(v[1].known_s > 0))
    return 0;
  r->unc_sd_j = v[0].energy_j;
  r->unc_var_j = v[1].energy_j;
  r->unc_known = 1;
  c->t->unc = 1;
  return 0;
}

static void report_tick(struct report_ctx *c) {
  c->done++;
  if (c->o->progress)
    c->o->progress(c->o->progress_user, c->done, c->total, 0);
}

/* The node's measured, idle and dynamic energy (v[0..2]; all 0 without
 * node.rrd), and its row when the report is by node. */
static int report_node_row(struct report_ctx *c, const struct report_node *nd,
                           struct report_value v[3]) {
  static const char *const ds[] = {"measured", "idle", "dynamic"};
  char path[1400];
  snprintf(path, sizeof path, "%s/nodes/%s/node.rrd", nd->data_dir, nd->dir);
  memset(v, 0, 3 * sizeof *v);
  v[0].peak_w = NAN;
  if (!report_is_file(path))
    return 0;
  if (report_archive(NULL, path, ds, 3, c->o->from_s, c->o->to_s, &c->f, v, c->why,
                     sizeof c->why) != 0)
    return -1;
  report_tick(c);
  if (report_by_node(c->o)) {
    struct report_row *r;
    if (report_row_add(c->t, &r) != 0)
      return -1;
    erg_strlcpy(r->node, nd->name, sizeof r->node);
    r->v = v[0];
    r->idle_j = v[1].energy_j;
    r->dynamic_j = v[2].energy_j;
    char unc[1500];
    snprintf(path, sizeof path, "%s/nodes/%s/dynamic_unc", nd->data_dir, nd->dir);
    snprintf(unc, sizeof unc, "%s/node.rrd", path);
    if (report_unc_part(c, unc, path, NULL, r) != 0)
      return -1;
    snprintf(path, sizeof path, "%s/nodes/%s/gpu", nd->data_dir, nd->dir);
    return report_gpu_part(c, report_is_dir(path) ? path : NULL, "node", r);
  }
  return 0;
}

/* Keys of one kind directory (a node's, or cluster/<kind>) from its
 * index.tsv whose archive exists; rows named node_name; gpu_dir: where
 * their GPU parts are (NULL: not a kind with GPU archives). */
static int report_key_rows(struct report_ctx *c, const char *dir, const char *gpu_dir,
                           const char *node_name, double node_energy_j) {
  static const char *const ds[] = {"watts"};
  char path[1600], line[1024];
  snprintf(path, sizeof path, "%s/index.tsv", dir);
  FILE *f = fopen(path, "r");
  int rc = 0;
  /* User keys are uids: rows show the node's name for it (names.tsv). */
  int users = !strcmp(c->o->kind, "user");
  if (gpu_dir && !report_is_dir(gpu_dir))
    gpu_dir = NULL;
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
    rc = report_archive(NULL, path, ds, 1, c->o->from_s, c->o->to_s, &c->f, &r->v, c->why,
                        sizeof c->why);
    if (rc == 0)
      rc = report_gpu_part(c, gpu_dir, line, r);
    r->node_energy_j = node_energy_j;
    r->span = !strcmp(c->o->kind, "job");
    /* Every kind's archive has its interval's parts (docs/model.md,
     * "Uncertainty"); one written before them has "watts" only. */
    if (rc == 0)
      rc = report_unc_part(c, path, dir, line, r);
    report_tick(c);
  }
  if (f)
    fclose(f);
  free(names);
  return rc;
}

static int report_rest_row(struct report_table *t, const char *node, const char *key,
                           const struct report_value *v, double node_energy_j) {
  struct report_row *r;
  if (report_row_add(t, &r) != 0)
    return -1;
  erg_strlcpy(r->node, node, sizeof r->node);
  erg_strlcpy(r->key, key, sizeof r->key);
  erg_strlcpy(r->uid, key, sizeof r->uid);
  r->v = *v;
  r->node_energy_j = node_energy_j;
  return 0;
}

/* What no key carries, as two rows after a node's keys (rows[first..]),
 * so that every report adds up to the measured energy: "[idle]", the idle
 * energy as far as the keys do not carry it (all of it with idle_policy
 * separate, ~0 with even or proportional, whose keys carry it), and
 * "[unattributed]", the rest (cells without agent data, dynamic power no
 * process was charged with). m: measured, idle: idle, of the node (or of
 * all nodes for cluster-wide rows). */
static int report_rest_rows(struct report_table *t, size_t first, const char *node,
                            const struct report_value *m, const struct report_value *idle) {
  if (!(m->known_s > 0))
    return 0; /* no measured energy to add up to */
  struct report_value keys = {0}, vi = *m, vu = *m;
  for (size_t i = first; i < t->n; i++) {
    keys.energy_j += t->rows[i].v.energy_j;
    keys.facility_j += t->rows[i].v.facility_j;
    keys.co2_g += t->rows[i].v.co2_g;
  }
  double rest = m->energy_j - keys.energy_j;
  double idle_j = idle->energy_j < rest ? idle->energy_j : rest;
  idle_j = idle_j > 0 ? idle_j : 0;
  double part = idle->energy_j > 0 ? idle_j / idle->energy_j : 0;
  vi.energy_j = idle_j;
  vi.facility_j = part * idle->facility_j;
  vi.co2_g = part * idle->co2_g;
  vu.energy_j = rest - idle_j;
  vu.facility_j = m->facility_j - keys.facility_j - vi.facility_j;
  vu.co2_g = m->co2_g - keys.co2_g - vi.co2_g;
  vi.peak_w = vu.peak_w = NAN;
  return report_rest_row(t, node, REPORT_IDLE_KEY, &vi, m->energy_j) ||
         report_rest_row(t, node, REPORT_UNATTRIBUTED_KEY, &vu, m->energy_j);
}

static int report_node_keys(struct report_ctx *c, const struct report_node *nd,
                            const struct report_value node[3]) {
  char dir[1400], gpu[1400];
  size_t first = c->t->n;
  snprintf(dir, sizeof dir, "%s/nodes/%s/%s", nd->data_dir, nd->dir, c->o->kind);
  snprintf(gpu, sizeof gpu, "%s/nodes/%s/%s", nd->data_dir, nd->dir, REPORT_GPU_JOB_KIND);
  if (report_key_rows(c, dir, report_has_gpu(c->o) ? gpu : NULL, nd->name,
                      node[0].known_s > 0 ? node[0].energy_j : NAN) != 0)
    return -1;
  if (report_rest_rows(c->t, first, nd->name, &node[0], &node[1]) != 0) {
    snprintf(c->why, sizeof c->why, "out of memory");
    return -1;
  }
  return 0;
}

/* --by job reads the cluster-wide job archives (the collector sums a job
 * over its nodes there, and they outlive per-node expiry) unless nodes are
 * selected or --per-node asks for the breakdown. Over several stores each
 * holds its own collector's part of a job: the node archives are read. */
static int report_use_cluster(const struct erg_report_options *o) {
  char dir[1400];
  snprintf(dir, sizeof dir, "%s/cluster/%s/index.tsv", report_data_dir(o), o->kind);
  return !report_by_node(o) && !o->per_node && o->nselect == 0 && !strcmp(o->kind, "job") &&
         o->ndata_dirs <= 1 && report_is_file(dir);
}

static int report_node_selected(const struct erg_report_options *o, const struct report_node *nd) {
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
static size_t report_count(const struct erg_report_options *o, const struct report_node *nodes,
                           size_t n, int *kind_dirs) {
  size_t total = 0;
  int cluster = report_use_cluster(o);
  char dir[1400];
  *kind_dirs = 0;
  for (size_t i = 0; i < n; i++) {
    total++;
    snprintf(dir, sizeof dir, "%s/nodes/%s/%s", nodes[i].data_dir, nodes[i].dir, o->kind);
    if (report_by_node(o) || !report_is_dir(dir))
      continue;
    (*kind_dirs)++;
    total += cluster ? 0 : report_count_rrd(dir);
  }
  snprintf(dir, sizeof dir, "%s/cluster/%s", report_data_dir(o), o->kind);
  return total + (cluster ? report_count_rrd(dir) : 0);
}

int report_build(const struct erg_report_options *o, struct report_table *t, char *why,
                 size_t whylen) {
  struct report_node *nodes;
  size_t n, sel = 0;
  if (o->ndata_dirs == 0) {
    snprintf(why, whylen, "no data directory");
    return -1;
  }
  if (report_nodes_all(o, &nodes, &n, why, whylen) != 0)
    return -1;
  size_t w = 0;
  for (size_t i = 0; i < n; i++)
    if (report_node_selected(o, &nodes[i]))
      nodes[w++] = nodes[i];
  sel = w;
  struct report_ctx c = {.o = o, .f = report_factors(o), .t = t};
  int kind_dirs, rc = 0;
  c.total = report_count(o, nodes, sel, &kind_dirs);
  if (o->progress)
    o->progress(o->progress_user, 0, c.total, 0);
  if (sel == 0 && o->nselect) {
    snprintf(why, whylen, "no node %s under %s", o->select[0], report_data_dir(o));
    rc = -1;
  } else if (!report_by_node(o) && kind_dirs == 0 && !report_use_cluster(o)) {
    snprintf(why, whylen, "no %s archives under %s", o->kind, report_data_dir(o));
    rc = -1;
  }
  int cluster = rc == 0 && report_use_cluster(o);
  struct report_value all[2] = {{0}}; /* measured and idle of the nodes with data */
  for (size_t i = 0; rc == 0 && i < sel; i++) {
    struct report_value node[3];
    rc = report_node_row(&c, &nodes[i], node);
    if (node[0].known_s > 0) {
      for (int k = 0; k < 2; k++) {
        all[k].energy_j += node[k].energy_j;
        all[k].facility_j += node[k].facility_j;
        all[k].co2_g += node[k].co2_g;
        all[k].known_s = node[k].known_s > all[k].known_s ? node[k].known_s : all[k].known_s;
        all[k].step_s = node[k].step_s > all[k].step_s ? node[k].step_s : all[k].step_s;
      }
    }
    if (rc == 0 && !report_by_node(o) && !cluster)
      rc = report_node_keys(&c, &nodes[i], node);
    if (rc != 0)
      snprintf(why, whylen, "%s", c.why);
  }
  if (rc == 0 && cluster) {
    /* One row per job; its share is of all nodes' measured energy. */
    char dir[1400], gpu[1400];
    size_t first = t->n;
    snprintf(dir, sizeof dir, "%s/cluster/%s", report_data_dir(o), o->kind);
    snprintf(gpu, sizeof gpu, "%s/cluster/%s", report_data_dir(o), REPORT_GPU_JOB_KIND);
    if ((rc = report_key_rows(&c, dir, report_has_gpu(o) ? gpu : NULL, REPORT_ALL_NODES,
                              all[0].known_s > 0 ? all[0].energy_j : NAN)) != 0)
      snprintf(why, whylen, "%s", c.why);
    else if ((rc = report_rest_rows(t, first, REPORT_ALL_NODES, &all[0], &all[1])) != 0)
      snprintf(why, whylen, "out of memory");
  }
  if (o->progress)
    o->progress(o->progress_user, c.done, c.total, 1);
  free(nodes);
  return rc;
}

/* ---- one key, for other commands (erg jobs) ---- */

int erg_report_key_energy(const char *data_dir, const char *node, const char *kind, const char *key,
                          int64_t from_s, int64_t to_s, const struct erg_energy_factors *f,
                          struct erg_key_energy *out, char *why, size_t whylen) {
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
  if (report_archive(NULL, path, ds, 1, from_s, to_s, f, &v, why, whylen) != 0)
    return -1;
  *out = (struct erg_key_energy){.energy_joules = v.energy_j,
                                 .facility_energy_joules = v.facility_j,
                                 .co2_grams =
                                     f && (f->carbon || !isnan(f->co2_g_per_kwh)) ? v.co2_g : NAN,
                                 .known_seconds = v.known_s,
                                 .step_seconds = v.step_s};
  return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Internal to erg report (web/report.c: the document; web/report_data.c:
 * the rows, from the archives; web/archive.c: one archive integrated). */
#ifndef ERG_REPORT_INT_H
#define ERG_REPORT_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "erg_common.h"
#include "erg_web.h"

#define REPORT_MAX_RRAS 32
#define REPORT_J_PER_KWH 3.6e6
#define REPORT_ALL_NODES "*"     /* node column of cluster-wide rows */
#define REPORT_IDLE_KEY "[idle]" /* key rows: the node's idle energy no key carries */
#define REPORT_UNATTRIBUTED_KEY "[unattributed]" /* key rows: the rest of the node's energy */

/* A finite number >= 0 that is the whole of s: 0, else -1. */
int report_number(const char *s, double *out);

/* Rows by node (kind "node"), else by key of o->kind. */
static inline int report_by_node(const struct erg_report_options *o) {
  return !strcmp(o->kind, "node");
}
/* Job rows have GPU parts (gpu_job archives, docs/gpu.md); node rows too
 * (gpu/node.rrd). */
#define REPORT_GPU_JOB_KIND "gpu_job"
static inline int report_has_gpu(const struct erg_report_options *o) {
  return !strcmp(o->kind, "job");
}
/* The first store: cluster-wide archives are read from it. */
static inline const char *report_data_dir(const struct erg_report_options *o) {
  return o->ndata_dirs ? o->data_dirs[0] : "";
}
/* What report_archive integrates with: o's PUE and CO2, a series over
 * its constant. */
struct erg_energy_factors report_factors(const struct erg_report_options *o);

/* One data source over the period; known_s is the time with known data. */
struct report_value {
  double energy_j, known_s, peak_w;
  double facility_j, co2_g; /* x PUE; CO2 on facility energy (NAN: no source) */
  unsigned long step_s;     /* coarsest resolution read */
  int64_t first_s, last_s;  /* start of the first and end of the last interval
                             * with energy (> 0 W); 0: none */
  int absent;               /* the archive has no such data source (an older one) */
};

/* Integrates up to 3 data sources of one archive over [from, to]: each
 * part of the period from the finest AVERAGE resolution that still holds
 * it (docs/report.md), the peak of ds[0] from MAX. daemon: rrdcached to
 * flush the file first (NULL: RRDCACHED_ADDRESS). f NULL: no PUE, no CO2. */
int report_archive(const char *daemon, const char *path, const char *const *ds, int nds,
                   int64_t from, int64_t to, const struct erg_energy_factors *f,
                   struct report_value *out, char *why, size_t whylen);
/* Mean power over the time with data, or (span) from the first to the
 * last interval with energy: a job's own run, whatever the period. NAN
 * when there is none. */
double report_mean_w(const struct report_value *v, int span);

struct report_row {
  char node[256], key[256];
  char uid[32]; /* --by user: the archive's key (uid or [system], ...); key is its name */
  struct report_value v;
  int span; /* job rows: mean_w over the job's span (first to last cell with energy) */
  double idle_j, dynamic_j; /* node rows */
  double node_energy_j;     /* key rows: the node's measured energy */
  double gpu_j;             /* node and job rows: the GPU part of energy_j (NAN: none known) */
  /* Job rows: the 95 % interval's parts from the job_sd / job_var archives
   * beside the job's (docs/model.md, "Uncertainty"); node rows: of their
   * dynamic energy, from nodes/N/dynamic_unc/; unc_known when both are. */
  double unc_sd_j, unc_var_j;
  int unc_known;
};

struct report_table {
  struct report_row *rows;
  size_t n, cap;
  int gpu; /* some row's node or job has GPU archives: a gpu_energy_joules column */
  int unc; /* some row has an interval: energy_joules_low / _high columns (last;
              by node: dynamic_joules_low / _high) */
};

struct report_node {
  char dir[ERG_NAME_MAX]; /* sanitized, as on disk */
  char name[256];         /* original when known */
  const char *data_dir;   /* the store it is in */
};

/* Node directories under DIR/nodes, sorted by name, with original names. */
int report_nodes_list(const char *data_dir, struct report_node **out, size_t *n, char *why,
                      size_t whylen);
/* The rows of the report (nodes, keys of a kind, or cluster-wide jobs). */
int report_build(const struct erg_report_options *o, struct report_table *t, char *why,
                 size_t whylen);

#endif

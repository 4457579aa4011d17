/* Internal to erg report (web/report.c: command line and output;
 * web/report_data.c: reading and integrating the archives). */
#ifndef ERG_REPORT_INT_H
#define ERG_REPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "erg_common.h"
#include "erg_web.h"

#define REPORT_MAX_RRAS 32
#define REPORT_MAX_SELECT 64
#define REPORT_MAX_DATA_DIRS 64 /* --data-dir given more than once: one per collector */
#define REPORT_PROGRESS_MIN 50 /* archives before progress is worth showing */
#define REPORT_J_PER_KWH 3.6e6
#define REPORT_ALL_NODES "*" /* node column of cluster-wide rows */
#define REPORT_IDLE_KEY "[idle]"         /* key rows: the node's idle energy no key carries */
#define REPORT_UNATTRIBUTED_KEY "[unattributed]" /* key rows: the rest of the node's energy */

/* What erg report and erg graph take from ergd's config file (--config):
 * [collector] data_dir, www_dir, model_dir, page_format, rrdcached, and
 * [report]; ergd's other keys are its own (erg check-config checks them).
 * Empty strings where the file has no value. */
struct cli_ergd_conf {
  char data_dir[512], www_dir[512], model_dir[512], page_format[8], rrdcached[256];
  struct erg_report_config report;
};
/* Reads path into c; on error prints "erg WHO: reason" and returns -1. */
int cli_ergd_conf_load(const char *path, struct cli_ergd_conf *c, const char *who);

/* Which factors the command line set (a flag wins over ergd's [report]). */
#define REPORT_FLAG_CO2 1
#define REPORT_FLAG_CARBON_CSV 2
#define REPORT_FLAG_PUE 4
#define REPORT_FLAG_PUE_CSV 8

struct report_opts {
  int flags; /* REPORT_FLAG_* */
  const char *data_dir, *out, *format, *currency; /* data_dir: the first of data_dirs */
  const char *data_dirs[REPORT_MAX_DATA_DIRS];    /* every --data-dir, in order */
  size_t ndata_dirs;
  const char *kind; /* "node" or a profile key kind ("command", ...) */
  int by_node;
  int per_node; /* --per-node: --by job from the node archives, not cluster/job */
  int64_t from_s, to_s;
  const char *select[REPORT_MAX_SELECT]; /* --node */
  size_t nselect;
  double cost_per_kwh, co2_g_per_kwh; /* NAN when not asked for */
  const char *carbon_csv, *pue_csv;   /* NULL when not asked for */
  double pue;                         /* NAN when not asked for */
  struct erg_series carbon, pue_series; /* loaded from the CSVs */
  struct erg_energy_factors factors;    /* what report_build integrates with */
  /* --config FILE: ergd's settings, under the flags. */
  struct cli_ergd_conf file;
};

/* A finite number >= 0 that is the whole of s: 0, else -1. */
int report_number(const char *s, double *out);

/* The carbon and PUE factors, shared by erg report and erg jobs (WHO names
 * the command in messages): [report]'s keys from o->file into o; one of
 * the options 'g' (--co2-g-per-kwh), 'G' (--carbon-csv), 'U' (--pue),
 * 'V' (--pue-csv), -1 for another option; after parsing, the conflicts
 * checked, the CSVs loaded and o->factors filled (1: bad use, 2: bad CSV). */
void report_factors_config(struct report_opts *o);
int report_factor_opt(struct report_opts *o, int c, const char *arg, const char *who);
int report_factors(struct report_opts *o, const char *who);
void report_factors_free(struct report_opts *o);

/* One data source over the period; known_s is the time with known data. */
struct report_value {
  double energy_j, known_s, peak_w;
  double facility_j, co2_g; /* x PUE; CO2 on facility energy (NAN: no source) */
  unsigned long step_s; /* coarsest resolution read */
  int64_t first_s, last_s; /* start of the first and end of the last interval
                            * with energy (> 0 W); 0: none */
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
};

struct report_table {
  struct report_row *rows;
  size_t n, cap;
};

struct report_node {
  char dir[ERG_NAME_MAX]; /* sanitized, as on disk */
  char name[256];         /* original when known */
  const char *data_dir;   /* the store it is in */
};

/* Node directories under DIR/nodes, sorted by name, with original names. */
int report_nodes_list(const char *data_dir, struct report_node **out, size_t *n, char *why,
                      size_t whylen);
/* Adds a --data-dir (a later one adds a store, it does not replace the
 * first): 0, or -1 when there are REPORT_MAX_DATA_DIRS already. */
int report_data_dir_add(struct report_opts *o, const char *dir);
/* The rows of the report (nodes, keys of a kind, or cluster-wide jobs). */
int report_build(const struct report_opts *o, struct report_table *t, char *why, size_t whylen);

#endif

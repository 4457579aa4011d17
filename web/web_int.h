// SPDX-License-Identifier: GPL-3.0-or-later
/* Internal to web/: graphs (graph.c), keys read from the store (keys.c),
 * pages (pages.c, pages_job.c, pages_model.c; their HTML helpers in
 * html.c). File names in www_dir are "<type>-<token>-...-<safe>.<ext>":
 * fixed tokens without '-' first, the sanitized name last, so two names
 * can never produce the same file. */
#ifndef ERG_WEB_INT_H
#define ERG_WEB_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "erg_common.h"
#include "erg_store.h"
#include "erg_web.h"

#define WEB_MAX_KEYS 256 /* keys of one node and kind drawn */
#define WEB_MAX_JOBS 64  /* jobs with a page */
#define WEB_TOP_JOBS 20  /* jobs listed on the overview */
#define WEB_JOB_DAYS 7   /* a job has a page for a week after its last data */

struct web_range {
  const char *name;
  long seconds;
};
extern const struct web_range web_ranges[];
#define WEB_NRANGES 5 /* hour, day, week, month, year */

/* Profile key kinds a node page draws, in page order. */
extern const char *const web_kinds[];
#define WEB_NKINDS 5

struct web_ctx {
  const struct erg_store *st;
  const char *www;
  const char *model_dir; /* model JSON files, <safe node>.json */
  const char *ext;       /* "png" or "svg" */
  const char *fmt;       /* "PNG" or "SVG" (rrdgraph --imgformat) */
  int64_t now;
};

struct web_key {
  char path[1200]; /* archive */
  char safe[ERG_NAME_MAX];
  char orig[256];    /* original key as kept in index.tsv */
  char label[256];   /* what legends show: orig, or its names.tsv name (users) */
  double mean_watts; /* over the range being drawn, for ordering */
  double energy_j;
  int64_t last;        /* last update (jobs): ergd writes 0 W cells after a job */
  int64_t last_energy; /* jobs: end of the last cell with energy in the last day; 0 none */
};

/* Display names of keys (names.tsv beside a kind's archives: user names
 * of uid keys, docs/store.md). The file's text (malloc'd) or NULL. */
char *web_names_load(const char *kind_dir);
/* Any "<key> TAB <value>" file of a directory, read whole (at most 320 kB,
 * as names.tsv): the text (malloc'd) or NULL; web_names_find reads it. */
char *web_tsv_load(const char *dir, const char *file);
/* key's name in a loaded names.tsv (NULL: none) into out, control bytes
 * as '?'; 0 found, -1 not (out untouched). */
int web_names_find(const char *names, const char *key, char *out, size_t outlen);

/* A job with a page: its cluster archive and the nodes it ran on. */
struct web_job {
  struct web_key key;
  unsigned char *on_node; /* [nnodes]: 1 when nodes/<n>/job/<key>.rrd exists */
  size_t nodes_on;        /* how many are 1 */
};

/* graph.c */
void web_graph_text(const char *in, char *out, size_t outlen, size_t maxchars, int legend);
int web_graph_path(const char *in, char *out, size_t outlen);
int web_graph_fresh(const char *file, int64_t now, long range_seconds, int64_t data_last);
int web_graph_power(const struct web_ctx *c, const char *erd, const char *file, const char *title,
                    long seconds, int small, char *why, size_t whylen);
int web_graph_breakdown(const struct web_ctx *c, const char *erd, struct web_key *keys,
                        size_t nkeys, const char *file, const char *title, long seconds, char *why,
                        size_t whylen);
int web_graph_total(const struct web_ctx *c, const char *const *nodes, size_t n, size_t r,
                    char *why, size_t whylen);
/* has_data: the range has modelled values (else no mean is printed: rrdtool
 * would print "-nan"). */
int web_graph_model(const struct web_ctx *c, const char *erd, const char *file, const char *title,
                    long seconds, int residual, int has_data, char *why, size_t whylen);
int web_graph_job(const struct web_ctx *c, const struct web_job *j, const char *const *nodes,
                  size_t nnodes, const char *file, long seconds, int64_t end, char *why,
                  size_t whylen);

/* keys.c */
int web_file_exists(const char *path);
/* Keys of a kind directory whose archive exists and was written at or
 * after min_mtime, in index order, at most max. */
size_t web_read_keys(const char *dir, int64_t min_mtime, struct web_key *keys, size_t max);
/* Energy and mean power of data source ds over [end-seconds, end],
 * integrated as erg report does (report_archive); the mean over the time
 * with data, or (span) over the first to the last cell with energy (a
 * job's own run). 0 when unknown. */
void web_key_stats(const char *daemon, const char *path, const char *ds, int64_t end, long seconds,
                   int span, double *mean_watts, double *energy_j);
/* Jobs under cluster/job with data in the last WEB_JOB_DAYS, most recent
 * first, at most WEB_MAX_JOBS; on_node filled for nodes[]. */
size_t web_jobs_collect(const struct web_ctx *c, const char *const *nodes, size_t nnodes,
                        struct web_job **out);
void web_jobs_free(struct web_job *jobs, size_t n);

/* html.c: what every page writer uses; it calls no page file. */
extern const char *const web_html_head;
/* Closes f (a memstream over *buf) and writes its text to www/name
 * atomically; 0, or -1 with "cannot write PATH: REASON" in why. */
int web_page_write(const char *www, const char *name, FILE *f, char **buf, size_t *len, char *why,
                   size_t whylen);
void web_html_text(FILE *f, const char *s);
void web_iso_time(int64_t t, char out[32]);
/* The pages' last paragraph: when it was generated (a date), how often the
 * page reloads and the graphs are redrawn. Closes body and html. */
void web_html_footer(FILE *f, int64_t now);
/* Energy columns in one unit (issue 36): the largest unit (J, Wh, kWh, MWh)
 * that max_j reaches; its name and joules per unit. */
void web_energy_unit(double max_j, const char **unit, double *j_per_unit);

/* pages.c: every page, in this process (erg_web_render_opts with
 * isolate = 0, which render_proc.c dispatches); 0, or -1 with why. */
int web_render_all(const struct erg_store *store, const char *www_dir, const char *const *nodes,
                   size_t nnodes, int64_t now, const struct erg_web_options *opt, char *why,
                   size_t whylen);

/* pages_job.c */
int web_job_pages(const struct web_ctx *c, const struct web_job *jobs, size_t njobs,
                  const char *const *nodes, size_t nnodes, char *why, size_t whylen);
void web_jobs_table(FILE *f, const struct web_job *jobs, size_t njobs, size_t max);

/* pages_model.c */
int web_model_page(const struct web_ctx *c, const char *node, const char *safe, const char *rrd,
                   const char *group, char *why, size_t whylen);
/* The "group" of the node's model file (<model_dir>/<safe>.json): the
 * shared meter whose power the node's is a share of. 0 and the name in
 * out, or -1 and "" when there is none. */
int web_model_group(const struct web_ctx *c, const char *safe, char *out, size_t outlen);
/* "power: share of shared meter GROUP (split by model)"; nothing when "". */
void web_group_line(FILE *f, const char *group);

/* rrd_lock.c: after a librrd reader failed, whether it was only the
 * writer's lock (then it waits 5 ms and the caller tries again, for up to
 * 2 s in all; *tries starts at 0). */
bool web_rrd_retry(int *tries);

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/* erg web: static pages and graphs rendered from the store, and the HTTP
 * server (libmicrohttpd) that serves them next to /metrics. */
#ifndef ERG_WEB_H
#define ERG_WEB_H

#include <stddef.h>
#include <stdint.h>

struct erg_store;

/* Renders <www_dir>/index.html, per node pages (one per range) with PNG
 * graphs of measured/idle/dynamic power and one stacked breakdown per key
 * kind, per job and model-quality pages (see erg_web_render_opts), in a
 * process of its own (isolate = 1: for the long-running ergd, no
 * deadline). Writes every file atomically (temp + rename) so a reader
 * never sees half a page. nodes: original node names. */
int erg_web_render(const struct erg_store *store, const char *www_dir, const char *const *nodes,
                   size_t nnodes, int64_t now, char *why, size_t whylen);

/* What a render returned (erg_web_render, erg_web_render_opts). */
#define ERG_WEB_RENDER_OK 0
#define ERG_WEB_RENDER_FAILED (-1)    /* why says why */
#define ERG_WEB_RENDER_TIMEOUT (-2)   /* isolate: past timeout_seconds, killed */
#define ERG_WEB_RENDER_CANCELLED (-3) /* isolate: *cancel turned nonzero, killed */

/* The argument that makes a program a render process (argv[1]): a main()
 * that may be the render program (ergd, test programs) starts with
 *   if (argc > 1 && !strcmp(argv[1], ERG_WEB_RENDER_ARG))
 *     return erg_web_render_child_main(argc, argv);
 * The child main renders with isolate = 0 what its parent asked for
 * (web/render_proc.c) and ends the process with _exit (what librrd leaks
 * goes unchecked); it returns only on bad arguments. */
#define ERG_WEB_RENDER_ARG "--erg-render-pages"
int erg_web_render_child_main(int argc, char **argv);

struct erg_web_options {
  const char *model_dir;    /* node model files <safe node>.json; NULL: <store root>/models */
  const char *image_format; /* "png" (default) or "svg" */
  int isolate;              /* render in a process of its own, started with posix_spawn
                             * (no fork of a threaded process), that exits after:
                             * librrd 1.7's per-DEF leaks die with it (ergd) */
  /* isolate only: */
  const char *render_program; /* run as PROG ERG_WEB_RENDER_ARG ...; NULL: /proc/self/exe,
                               * the running program itself */
  double timeout_seconds;     /* the render is killed after this; <= 0: never */
  const volatile int *cancel; /* when *cancel turns nonzero (checked every 0.1 s), the
                               * render is killed; NULL: never */
};
/* erg_web_render with options (NULL: the defaults above). Also writes per
 * job pages (cluster/job), per node pages per range (hour, day, week,
 * month, year) with one breakdown per key kind, and model-quality pages;
 * see docs/web.md. Returns an ERG_WEB_RENDER_ value, why set unless OK. */
int erg_web_render_opts(const struct erg_store *store, const char *www_dir,
                        const char *const *nodes, size_t nnodes, int64_t now,
                        const struct erg_web_options *opt, char *why, size_t whylen);
/* erg graph (web/render_dir.c): erg_web_render_opts once for every node
 * with a directory under data_dir/nodes, through its own store handle
 * (rrdcached: the daemon to flush first, NULL: RRDCACHED_ADDRESS). */
int erg_web_render_dir(const char *data_dir, const char *rrdcached, const char *www_dir,
                       int64_t now, const struct erg_web_options *opt, char *why, size_t whylen);

/* Extra dynamic content (e.g. /metrics): fills a malloc'd body and content
 * type; returns HTTP status. */
typedef int (*erg_web_dynamic_fn)(void *user, const char *url, char **body, size_t *len,
                                  const char **content_type);

struct erg_web_server;
/* addr "127.0.0.1:9710". Serves files under www_dir (no traversal, only
 * regular files), and url "/metrics" through dyn when set. */
int erg_web_server_start(struct erg_web_server **out, const char *addr, const char *www_dir,
                         erg_web_dynamic_fn dyn, void *user, char *why, size_t whylen);
/* What slow or hostile clients may hold (docs/web.md "HTTP server"; ergd:
 * the http_* keys of docs/config.md). At a connection limit a newcomer
 * takes the place of the oldest connection still sending its headers. */
struct erg_web_server_limits {
  unsigned max_connections;             /* open at once, all clients (256) */
  unsigned max_connections_per_address; /* open at once from one address (32) */
  double header_timeout_seconds;        /* from accept or the last answer to the
                                         * request's end of headers (5) */
  double request_timeout_seconds;       /* from then to the end of the answer (120) */
};
void erg_web_server_limits_default(struct erg_web_server_limits *l);
/* 0, or -1 with a reason naming the config key out of range. */
int erg_web_server_limits_check(const struct erg_web_server_limits *l, char *why, size_t whylen);
/* erg_web_server_start with limits (NULL: the defaults). */
int erg_web_server_start_limits(struct erg_web_server **out, const char *addr, const char *www_dir,
                                erg_web_dynamic_fn dyn, void *user,
                                const struct erg_web_server_limits *lim, char *why, size_t whylen);
void erg_web_server_stop(struct erg_web_server *w);
/* The port actually bound: the one asked for, or the free port the system
 * picked when addr said port 0. */
unsigned erg_web_server_port(const struct erg_web_server *w);

/* A report time: ISO date or date-time in UTC ("2026-11-01",
 * "2026-11-01T12:00[:00][Z]"), unix seconds, "now", or relative to now
 * ("-7d", "-12h", "-30m", "-90s", "-2w"). Returns 0, or -1 if malformed. */
int erg_report_parse_time(const char *s, int64_t now, int64_t *out);

/* The [report] section of ergd's config file: what `erg report --config`
 * takes as defaults (docs/config.md). NAN / "" when not set. */
struct erg_report_config {
  double cost_per_kwh;
  char currency[16];
  double co2_g_per_kwh;
  char carbon_csv[512]; /* gCO2/kWh over time (not with co2_g_per_kwh) */
  double pue;           /* NAN: not set (1 = facility energy = IT energy) */
  char pue_csv[512];    /* PUE over time (not with pue) */
};
void erg_report_config_defaults(struct erg_report_config *c);
/* One key of [report]; -1 with a reason on an unknown key or bad value. */
int erg_report_config_key(struct erg_report_config *c, const char *key, const char *value,
                          char *why, size_t whylen);
/* The whole section: -1 with a reason when a factor is set both as a
 * constant and as a CSV (erg report would refuse to choose). */
int erg_report_config_check(const struct erg_report_config *c, char *why, size_t whylen);

/* Energy for people (pages, the HTML report's text): J, Wh, kWh or MWh by
 * magnitude, three significant digits ("812 J", "24.5 Wh", "2.43 kWh"),
 * "–" when not finite. CSV and JSON keep joules. */
void erg_energy_text(double joules, char *out, size_t outlen);

/* ---- energy, facility energy and CO2 over time (web/carbon.c) ----
 * A value over time from a CSV of "time,value" rows (docs/report.md):
 * piecewise constant, row i holds from t_s[i] until t_s[i+1], the last
 * one on; unknown before the first. Sorted, one row per time. */
struct erg_series {
  size_t n;
  int64_t *t_s;
  double *v;
};
/* Reads a CSV (ISO-8601 or unix-second times, values >= min_value, an
 * optional header line, '#' comments, rows in any order, a time repeated
 * with the same value once). -1 with "FILE:LINE: reason" in why. */
int erg_series_load(const char *path, double min_value, struct erg_series *s, char *why,
                    size_t whylen);
void erg_series_free(struct erg_series *s);
/* 1 when s (NULL: a constant) has a value at t. */
int erg_series_covers(const struct erg_series *s, int64_t t);

/* What turns IT energy into facility energy and CO2. A series, when not
 * NULL, wins over its constant. co2_g_per_kwh NAN and no carbon: no CO2
 * (NAN). pue 1 and no pue_series: facility energy = IT energy. CO2 is
 * counted on facility energy. */
struct erg_energy_factors {
  double co2_g_per_kwh;
  const struct erg_series *carbon;
  double pue;
  const struct erg_series *pue_series;
};
/* Facility joules and CO2 grams of `watts` held over [lo, hi), split where
 * a series changes. Parts before a series' first row give NAN. */
void erg_energy_factors_apply(const struct erg_energy_factors *f, int64_t lo, int64_t hi,
                              double watts, double *facility_j, double *co2_g);

/* One key's energy over [from_s, to_s) from the store under data_dir, as
 * erg report computes it (each part of the period from the finest
 * resolution that holds it, cell by cell; docs/report.md). */
struct erg_key_energy {
  double energy_joules;          /* IT energy */
  double facility_energy_joules; /* x PUE */
  double co2_grams;              /* on facility energy; NAN without a CO2 source */
  double known_seconds;          /* time with known values */
  unsigned long step_seconds;    /* coarsest resolution read */
};
/* node NULL: the cluster-wide archive (cluster/<kind>/<key>.rrd), e.g. a
 * job. node, kind and key are original names (sanitized here). f NULL: no
 * PUE, no CO2. 0, or -1 with a reason (no such archive, unreadable). */
int erg_report_key_energy(const char *data_dir, const char *node, const char *kind, const char *key,
                          int64_t from_s, int64_t to_s, const struct erg_energy_factors *f,
                          struct erg_key_energy *out, char *why, size_t whylen);

/* ---- erg report (web/report.c, report_data.c, archive.c) ----
 * Energy over a period from the archives, by node or by profile key kind,
 * as a CSV, JSON or HTML document (docs/report.md). Names from the store
 * reach the document only escaped for it. */
#define ERG_REPORT_MAX_DATA_DIRS 64 /* one store per collector */
#define ERG_REPORT_MAX_SELECT 64

struct erg_report_options {
  const char *data_dirs[ERG_REPORT_MAX_DATA_DIRS]; /* at least one; a node in two is an error */
  size_t ndata_dirs;
  const char *kind; /* "node", or a key kind: "command", "job", "user", "unit", "container" */
  int per_node;     /* kind "job" from the node archives, not the cluster-wide ones */
  int64_t from_s, to_s;
  const char *select[ERG_REPORT_MAX_SELECT]; /* nodes (name or directory); none: all */
  size_t nselect;
  const char *format;  /* "table" (text), "csv", "json" or "html" */
  double cost_per_kwh; /* NAN: no cost column */
  const char *currency;
  double co2_g_per_kwh, pue;                    /* NAN when not asked for */
  const struct erg_series *carbon, *pue_series; /* NULL when not asked for */
  /* Archives read so far of total: with done 0 before the first, after
   * each one, and with end 1 when the reading ends (early on an error).
   * NULL: not called. */
  void (*progress)(void *user, size_t done, size_t total, int end);
  void *progress_user;
};
/* By node over the day before now, as CSV, no cost, PUE or CO2. */
void erg_report_options_init(struct erg_report_options *o, int64_t now);
/* The report as a document in o->format: *doc (malloc'd) of *len bytes.
 * 0, or -1 with a reason (no store, no such node, an unreadable archive). */
int erg_report_render(const struct erg_report_options *o, char **doc, size_t *len, char *why,
                      size_t whylen);

/* ---- erg jobs (web/jobs.c, jobs_store.c, jobs_slurm.c) ----
 * Per-job energy (the report's, --by job) joined with Slurm's accounting
 * fields from sacct, and erg's energy pushed into the jobs' AdminComment
 * through sacctmgr (docs/hpc.md). */
#define ERG_JOBS_MAX_SELECT 256

struct erg_jobs_options {
  struct erg_report_options report; /* data_dirs[0], the period, PUE and CO2, progress */
  const char *format;               /* "table" (sacct's look), "parsable2", "csv" or "json" */
  const char *select[ERG_JOBS_MAX_SELECT]; /* job ids; none: every job with data */
  size_t nselect;
  const char *sacct, *sacctmgr; /* program paths or names (PATH lookup) */
  int force;                    /* push also where the AdminComment holds erg's energy */
  double settle_s;              /* a job without an archive is final this long after its end */
};
/* The report's defaults with kind "job", as a table, sacct and sacctmgr
 * from PATH, 600 s to settle. */
void erg_jobs_options_init(struct erg_jobs_options *o, int64_t now);
/* 1 when s is a Slurm job id (decimal) erg jobs takes. */
int erg_jobs_id_ok(const char *s);

struct erg_jobs; /* a list of jobs, with erg's numbers and Slurm's fields */
/* The jobs with data in the period, and the selected ones without, with
 * erg's own fields (nodes, user) and sacct's. 0; 1 when sacct failed (why
 * says how; the list has erg's fields only); -1 with a reason and no list
 * when the archives cannot be read. */
int erg_jobs_load(const struct erg_jobs_options *o, struct erg_jobs **out, char *why,
                  size_t whylen);
size_t erg_jobs_count(const struct erg_jobs *j);
size_t erg_jobs_unknown(const struct erg_jobs *j); /* of them, jobs sacct did not return */
void erg_jobs_free(struct erg_jobs *j);
/* The list as a document in o->format; 0, or -1 with a reason. */
int erg_jobs_render(const struct erg_jobs_options *o, const struct erg_jobs *j, char **doc,
                    size_t *len, char *why, size_t whylen);

/* What one pass of erg_jobs_push_pass did with a job; text is the reason,
 * or with ERG_JOBS_PUSHED the fields written. */
enum erg_jobs_event {
  ERG_JOBS_PUSHED,  /* AdminComment written */
  ERG_JOBS_WAITING, /* not yet: running, or its last cells not final */
  ERG_JOBS_SKIPPED, /* not pushed: unknown to sacct, pushed before, no erg data */
  ERG_JOBS_NOTE,    /* pushed next, with a field left out (no CO2 for it) */
  ERG_JOBS_FAILED,  /* sacctmgr failed */
};
typedef void (*erg_jobs_push_fn)(void *user, const char *job, enum erg_jobs_event e,
                                 const char *text);
/* Writes erg's energy of every ended job of j whose cells are final into
 * its AdminComment (the whole job's, whatever the period), keeping the
 * comment's other fields; each job's outcome through fn. Returns how many
 * jobs wait, or -1 when a push failed. */
int erg_jobs_push_pass(const struct erg_jobs_options *o, struct erg_jobs *j, int64_t now,
                       erg_jobs_push_fn fn, void *user);

#endif

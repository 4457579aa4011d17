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
 * forked child (isolate = 1: for the long-running ergd). Writes every file
 * atomically (temp + rename) so a reader never sees half a page. nodes:
 * original node names. */
int erg_web_render(const struct erg_store *store, const char *www_dir, const char *const *nodes,
                   size_t nnodes, int64_t now, char *why, size_t whylen);

struct erg_web_options {
  const char *model_dir;    /* node model files <safe node>.json; NULL: <store root>/models */
  const char *image_format; /* "png" (default) or "svg" */
  int isolate;              /* render in a forked child that exits after: librrd
                             * 1.7's per-DEF leaks die with it (long-running ergd).
                             * Ignored when the store uses rrdcached. */
};
/* erg_web_render with options (NULL: the defaults above). Also writes per
 * job pages (cluster/job), per node pages per range (hour, day, week,
 * month, year) with one breakdown per key kind, and model-quality pages;
 * see docs/web.md. */
int erg_web_render_opts(const struct erg_store *store, const char *www_dir,
                        const char *const *nodes, size_t nnodes, int64_t now,
                        const struct erg_web_options *opt, char *why, size_t whylen);

/* Extra dynamic content (e.g. /metrics): fills a malloc'd body and content
 * type; returns HTTP status. */
typedef int (*erg_web_dynamic_fn)(void *user, const char *url, char **body, size_t *len,
                                  const char **content_type);

struct erg_web_server;
/* addr "127.0.0.1:9710". Serves files under www_dir (no traversal, only
 * regular files), and url "/metrics" through dyn when set. */
int erg_web_server_start(struct erg_web_server **out, const char *addr, const char *www_dir,
                         erg_web_dynamic_fn dyn, void *user, char *why, size_t whylen);
void erg_web_server_stop(struct erg_web_server *w);
/* The port actually bound: the one asked for, or the free port the system
 * picked when addr said port 0. */
unsigned erg_web_server_port(const struct erg_web_server *w);

/* erg report (web/report.c): energy over a period from the archives, by
 * node or profile key kind, as CSV, JSON or HTML; see docs/report.md.
 * argv[0] is "report". Returns the exit code: 0 ok, 1 usage, 2 data error. */
int erg_report_cli(int argc, char **argv);
/* erg graph: erg_web_render once for the nodes under DIR/nodes (for cron
 * when ergd does not render). argv[0] is "graph". Same exit codes. */
int erg_graph_cli(int argc, char **argv);
/* erg jobs (web/jobs.c): per-job energy with Slurm's accounting fields
 * (sacct), and --push into the jobs' AdminComment; see docs/hpc.md.
 * argv[0] is "jobs". Same exit codes. */
int erg_jobs_cli(int argc, char **argv);
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
int erg_report_key_energy(const char *data_dir, const char *node, const char *kind,
                          const char *key, int64_t from_s, int64_t to_s,
                          const struct erg_energy_factors *f, struct erg_key_energy *out,
                          char *why, size_t whylen);

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/* What erg report, erg jobs and erg graph share (cli/ergd_conf.c: ergd's
 * config file as their defaults; cli/report_opts.c: the options of the
 * energy commands). Messages go to stderr as "erg WHO: ...". */
#ifndef ERG_CLI_INT_H
#define ERG_CLI_INT_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include "erg_web.h"

/* What erg report, jobs and graph take from ergd's config file (--config):
 * [collector] data_dir, www_dir, model_dir, page_format, rrdcached, and
 * [report]; ergd's other keys are its own (erg check-config checks them).
 * Empty strings where the file has no value. */
struct cli_ergd_conf {
  char data_dir[512], www_dir[512], model_dir[512], page_format[8], rrdcached[256];
  struct erg_report_config report;
};
/* Reads path into c; on error says "erg WHO: reason" and returns -1. */
int cli_ergd_conf_load(const char *path, struct cli_ergd_conf *c, const char *who);

/* getopt_long over argv twice: first only --config (val 'C', read through
 * config: 0, or non-0 to stop), wherever it is, so that the flags override
 * the file; then every option in order through opt (with c '?' or ':',
 * text is the option as given). Returns the first non-0 of a callback,
 * else 0 with *operand the index of the first operand. */
int cli_parse_config_first(int argc, char **argv, const struct option *longs,
                           int (*config)(void *ctx, const char *path),
                           int (*opt)(void *ctx, int c, char *arg, const char *text), void *ctx,
                           int *operand);

/* A finite number >= 0 that is the whole of s: 0, else -1. */
int cli_number(const char *s, double *out);

/* ---- erg pdu probe (cli/probe_args.c) ---- */
struct erg_pdu_source_config;
/* src into dst of len bytes: 0, or -1 saying "erg pdu probe: WHAT too long". */
int cli_probe_copy(char *dst, size_t len, const char *src, const char *what);
/* "host", "host:port", "[v6]:port" or a bare IPv6 address into c->host
 * (and c->port): 0, or -1. */
int cli_probe_host(const char *arg, struct erg_pdu_source_config *c);
/* A text field of the config that an option's argument is copied into:
 * the option's getopt_long code, the field's offset and size. */
struct cli_probe_text {
  int code;
  size_t off, len;
};
#define CLI_PROBE_TEXT(code, field)                                                                \
  {                                                                                                \
    (code), offsetof(struct erg_pdu_source_config, field),                                         \
        sizeof(((struct erg_pdu_source_config *)0)->field)                                         \
  }
struct option;
/* Option o's argument into its field when texts[0..n) has it: 1, with
 * *bad set for one too long (named as opts names the option); else 0. */
int cli_probe_text(int o, const char *arg, const struct cli_probe_text *texts, size_t n,
                   const struct option *opts, struct erg_pdu_source_config *c, int *bad);
/* --retries (0-10) into c->retries: 0, or -1. */
int cli_probe_retries(const char *arg, struct erg_pdu_source_config *c);

/* ---- erg report and erg jobs (cli/report_opts.c) ---- */

/* Which factors the command line set (a flag wins over ergd's [report]). */
#define CLI_FLAG_CO2 1
#define CLI_FLAG_CARBON_CSV 2
#define CLI_FLAG_PUE 4
#define CLI_FLAG_PUE_CSV 8

/* The options both take, and where they go. */
struct cli_energy {
  const char *who;              /* "report" or "jobs", for messages */
  struct erg_report_options *r; /* what the library is given */
  int (*usage)(const char *msg, const char *arg);
  const char *data_dir;                 /* --config's (or ergd's default) */
  const char *out;                      /* --out: NULL, stdout */
  int flags;                            /* CLI_FLAG_* */
  const char *carbon_csv, *pue_csv;     /* NULL when not asked for */
  struct erg_series carbon, pue_series; /* loaded from them */
  struct cli_ergd_conf file;            /* --config */
  int progress;                         /* showing "archives read" on stderr */
};

/* The getopt_long entries both take; each command adds its own. */
#define CLI_ENERGY_LONGS                                                                           \
  {"data-dir", required_argument, 0, 'd'}, {"config", required_argument, 0, 'C'},                  \
      {"from", required_argument, 0, 'f'}, {"to", required_argument, 0, 't'},                      \
      {"out", required_argument, 0, 'o'}, {"format", required_argument, 0, 'F'},                   \
      {"co2-g-per-kwh", required_argument, 0, 'g'}, {"carbon-csv", required_argument, 0, 'G'},     \
      {"pue", required_argument, 0, 'U'}, {"pue-csv", required_argument, 0, 'V'}, {                \
    "help", no_argument, 0, 'h'                                                                    \
  }

/* --config: ergd's file as the defaults (data_dir, [report]'s factors,
 * rrdcached as RRDCACHED_ADDRESS); -1 after saying why. */
int cli_energy_config(struct cli_energy *e, const char *path);
/* The options both take but 'd' and 'F' (the commands differ there),
 * and getopt's '?' and ':' (text: the option as given): 0, 1 after the
 * usage or a reason, -1 after the usage for --help. */
int cli_energy_opt(struct cli_energy *e, int c, const char *arg, const char *text, int64_t now);
/* After parsing: an operand, no data directory (else --config's is
 * e->r's store) and the period; 0, or 1 after the usage. */
int cli_energy_check(struct cli_energy *e, int argc, char **argv, int operand);
/* Then the factors: conflicts checked, the CSVs loaded and given to e->r.
 * 0, 1 (bad use) or 2 (a bad CSV), after saying why. */
int cli_energy_factors(struct cli_energy *e);
void cli_energy_free(struct cli_energy *e);
/* "erg report: N/M archives" on stderr, when it is a terminal and there
 * are enough archives for it to be worth it; e->r's progress, user e. */
void cli_energy_progress(void *user, size_t done, size_t total, int end);
/* doc to --out (atomically) or stdout; 0, or -1 with a reason ("cannot
 * write WHAT: ..."). */
int cli_energy_write(const struct cli_energy *e, const char *doc, size_t len, const char *what,
                     char *why, size_t whylen);

#endif

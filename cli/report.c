// SPDX-License-Identifier: GPL-3.0-or-later
/* erg report: energy over a period from the archives, by node or by
 * profile key kind (the report library renders the document). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_int.h"
#include "erg_cli.h"
#include "erg_web.h"

struct report_cli {
  struct erg_report_options r;
  struct cli_energy e;
  int64_t now;
  int format_set; /* --format given: else a table on a terminal, CSV otherwise */
};

static int report_usage(const char *msg, const char *arg) {
  if (msg)
    fprintf(stderr, "erg report: %s%s%s%s\n", msg, arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
  fprintf(stderr,
          "usage: erg report (--data-dir DIR... | --config ERGD_CONF) [--from T] [--to T]\n"
          "                  [--by node|command|job|user|unit|container] [--per-node]\n"
          "                  [--format table|csv|json|html] [--node N]... [--cost-per-kwh X\n"
          "                  --currency CUR] [--co2-g-per-kwh Y | --carbon-csv FILE]\n"
          "                  [--pue X | --pue-csv FILE] [--out FILE]\n"
          "T: 2026-11-01, 2026-11-01T12:00 (UTC), unix seconds, -7d, -12h, -30m, now\n");
  return 1;
}

/* ergd's settings, and its [report]'s cost and currency. */
static int report_config(void *ctx, const char *path) {
  struct report_cli *c = ctx;
  if (cli_energy_config(&c->e, path) != 0)
    return 1;
  c->r.cost_per_kwh = c->e.file.report.cost_per_kwh;
  if (c->e.file.report.currency[0])
    c->r.currency = c->e.file.report.currency;
  return 0;
}

static const char *const report_kinds[] = {"node", "command", "job", "user", "unit", "container"};

static int report_opt(void *ctx, int c, char *arg, const char *text) {
  struct report_cli *rc = ctx;
  struct erg_report_options *o = &rc->r;
  switch (c) {
    case 'd':
      /* A later --data-dir adds a store (one per collector). */
      if (o->ndata_dirs >= ERG_REPORT_MAX_DATA_DIRS)
        return report_usage("too many --data-dir", arg);
      o->data_dirs[o->ndata_dirs++] = arg;
      return 0;
    case 'P':
      o->per_node = 1;
      return 0;
    case 'c':
      o->currency = arg;
      return 0;
    case 'n':
      if (o->nselect >= ERG_REPORT_MAX_SELECT)
        return report_usage("too many --node", NULL);
      o->select[o->nselect++] = arg;
      return 0;
    case 'F':
      o->format = arg;
      rc->format_set = 1;
      return strcmp(arg, "table") && strcmp(arg, "csv") && strcmp(arg, "json") &&
                     strcmp(arg, "html")
                 ? report_usage("unknown --format", arg)
                 : 0;
    case 'k':
      return cli_number(arg, &o->cost_per_kwh) ? report_usage("bad --cost-per-kwh", arg) : 0;
    case 'b':
      for (size_t i = 0; i < sizeof report_kinds / sizeof *report_kinds; i++)
        if (!strcmp(arg, report_kinds[i])) {
          o->kind = report_kinds[i];
          return 0;
        }
      return report_usage("unknown --by", arg);
    default:
      return cli_energy_opt(&rc->e, c, arg, text, rc->now);
  }
}

static int report_parse(int argc, char **argv, struct report_cli *c) {
  static const struct option longs[] = {CLI_ENERGY_LONGS,
                                        {"by", required_argument, 0, 'b'},
                                        {"node", required_argument, 0, 'n'},
                                        {"cost-per-kwh", required_argument, 0, 'k'},
                                        {"currency", required_argument, 0, 'c'},
                                        {"per-node", no_argument, 0, 'P'},
                                        {0, 0, 0, 0}};
  int operand,
      rc = cli_parse_config_first(argc, argv, longs, report_config, report_opt, c, &operand);
  if (rc == 0)
    rc = cli_energy_check(&c->e, argc, argv, operand);
  if (rc == 0 && !isnan(c->r.cost_per_kwh) && !c->r.currency)
    rc = report_usage("--cost-per-kwh needs --currency", NULL);
  return rc ? rc : cli_energy_factors(&c->e);
}

int erg_report_cli(int argc, char **argv) {
  struct report_cli c = {.now = (int64_t)time(NULL)};
  erg_report_options_init(&c.r, c.now);
  c.e = (struct cli_energy){.who = "report", .r = &c.r, .usage = report_usage};
  int rc = report_parse(argc, argv, &c);
  /* A person at a terminal reads a table; a pipe, a file (--out) or a
   * script gets CSV, as before. */
  if (rc == 0 && !c.format_set && !c.e.out && isatty(STDOUT_FILENO))
    c.r.format = "table";
  char why[2048], *doc = NULL;
  size_t len = 0;
  if (rc == 0 && (erg_report_render(&c.r, &doc, &len, why, sizeof why) != 0 ||
                  cli_energy_write(&c.e, doc, len, "report", why, sizeof why) != 0)) {
    fprintf(stderr, "erg report: %s\n", why);
    rc = 2;
  }
  free(doc);
  cli_energy_free(&c.e);
  return rc < 0 ? 0 : rc;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* `erg pdu probe --driver ipmi`: asks one BMC for its DCMI power reading
 * (the pdu library's erg_pdu_ipmi_probe) and prints what it answered,
 * what erg takes and why, how long the login and the request took, and a
 * config section erg check-config accepts. Exit 0 answered (with or
 * without a reading), 1 usage, 2 unreachable or refused. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_int.h"
#include "erg_cli.h"
#include "erg_pdu.h"

static void ipmi_usage(FILE *f) {
  fprintf(f, "usage: erg pdu probe --driver ipmi --host H[:PORT] --user U --password-file F\n"
             "           [--cipher-suite N] [--privilege user|operator|admin] [--timeout S]\n"
             "           [--retries N] [--json]\n"
             "       erg pdu probe --driver ipmi (--host local | --device /dev/ipmiN) [--json]\n"
             "Asks the BMC for DCMI Get Power Reading (IPMI 2.0 lanplus, or in band) and\n"
             "prints the current power erg takes (never the BMC's minimum, maximum or\n"
             "average, which cover a window of its own), what it refuses and why, how long\n"
             "the login and the request took, and a [meter.NAME] section to copy.\n"
             "The password file is the password's first line, readable by you (and, in\n"
             "ergd's config, by ergd) only.\n");
}

static int ipmi_parse(int argc, char **argv, struct erg_pdu_source_config *c, bool *json) {
  static const struct option opts[] = {{"driver", required_argument, 0, 'd'},
                                       {"host", required_argument, 0, 'H'},
                                       {"device", required_argument, 0, 'D'},
                                       {"user", required_argument, 0, 'u'},
                                       {"password-file", required_argument, 0, 'P'},
                                       {"cipher-suite", required_argument, 0, 'C'},
                                       {"privilege", required_argument, 0, 'L'},
                                       {"timeout", required_argument, 0, 't'},
                                       {"retries", required_argument, 0, 'r'},
                                       {"json", no_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  static const struct cli_probe_text texts[] = {
      CLI_PROBE_TEXT('D', device),
      CLI_PROBE_TEXT('u', user),
      CLI_PROBE_TEXT('P', password_file),
      CLI_PROBE_TEXT('L', privilege),
  };
  int o, bad = 0;
  optind = 1;
  while (!bad && (o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (o) {
      case 'd':
        bad = strcmp(optarg, "ipmi") != 0;
        break;
      case 'H':
        bad = cli_probe_host(optarg, c);
        break;
      case 'C':
        c->cipher_suite = atoi(optarg);
        bad = c->cipher_suite < 1 || c->cipher_suite > 255;
        break;
      case 't':
        c->timeout_seconds = atof(optarg);
        bad = !(c->timeout_seconds >= 0.01 && c->timeout_seconds <= 60);
        break;
      case 'r':
        bad = cli_probe_retries(optarg, c);
        break;
      case 'j':
        *json = true;
        break;
      case 'h':
        ipmi_usage(stdout);
        return 2;
      default:
        if (!cli_probe_text(o, optarg, texts, sizeof texts / sizeof texts[0], opts, c, &bad))
          bad = 1;
    }
  }
  if (!bad && (optind != argc || !(c->host[0] || c->device[0])))
    bad = 1;
  return bad ? 1 : 0;
}

static json_t *ipmi_num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static const char *ipmi_verdict_name(int v) {
  static const char *const n[] = {"ok",          "inactive_taken",  "zero",     "absurd",
                                  "unsupported", "completion_code", "malformed"};
  return v >= 0 && v <= ERG_DCMI_MALFORMED ? n[v] : "?";
}

/* The BMC's clock against ours, in s (positive: the BMC is ahead). */
static double ipmi_clock_offset(const struct erg_ipmi_probe *r) {
  if (!r->answered || !r->p.bmc_time_s || !r->t_ns)
    return NAN;
  return (double)r->p.bmc_time_s - (double)r->t_ns / 1e9;
}

/* A timeout that leaves room for this BMC: 3x what the request took,
 * at least 1 s, in whole seconds. */
static double ipmi_suggest_timeout(const struct erg_ipmi_probe *r) {
  double t = isfinite(r->request_seconds) ? r->request_seconds : 0;
  if (isfinite(r->login_seconds) && r->login_seconds / 4 > t)
    t = r->login_seconds / 4; /* a login is four exchanges */
  t = ceil(3 * t);
  return t < 1 ? 1 : t > 60 ? 60 : t;
}

static void ipmi_print_json(const struct erg_pdu_source_config *c, const struct erg_ipmi_probe *r) {
  const struct erg_dcmi_power *p = &r->p;
  json_t *row =
      json_pack("{s:s,s:o,s:n,s:b,s:s,s:o,s:o,s:o,s:o,s:o,s:b}", "chassis", "ipmi", "watts",
                ipmi_num(r->used ? p->watts : NAN), "energy_joules", "used", r->used, "verdict",
                r->answered ? ipmi_verdict_name(p->verdict) : "no_answer", "current_watts",
                ipmi_num(p->current_watts), "min_watts", ipmi_num(p->min_watts), "max_watts",
                ipmi_num(p->max_watts), "average_watts", ipmi_num(p->avg_watts), "period_ms",
                r->answered && p->completion_code == 0 && isfinite(p->current_watts)
                    ? json_integer(p->period_ms)
                    : json_null(),
                "measurement_active", p->active);
  json_object_set_new(row, "why", json_string(r->verdict));
  json_object_set_new(row, "completion_code",
                      p->completion_code >= 0 ? json_integer(p->completion_code) : json_null());
  json_object_set_new(row, "bmc_time_unix_seconds",
                      p->bmc_time_s ? json_integer(p->bmc_time_s) : json_null());
  json_object_set_new(row, "bmc_clock_offset_seconds", ipmi_num(ipmi_clock_offset(r)));
  json_object_set_new(row, "request_seconds", ipmi_num(r->request_seconds));
  json_t *rows = json_array();
  json_array_append_new(rows, row);
  json_t *o = json_pack("{s:s,s:s,s:s,s:i,s:s,s:b,s:o,s:o,s:o,s:f}", "driver", "ipmi", "host",
                        c->host, "device", c->device, "port", c->port, "where", r->where,
                        "logged_in", r->logged_in, "login_seconds", ipmi_num(r->login_seconds),
                        "request_seconds", ipmi_num(r->request_seconds), "rows", rows,
                        "suggested_timeout_seconds", ipmi_suggest_timeout(r));
  char *s = json_dumps(o, JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(12));
  printf("%s\n", s ? s : "{}");
  free(s);
  json_decref(o);
}

static void ipmi_print_w(const char *label, double w) {
  if (isfinite(w))
    printf("  %-8s %6.0f W\n", label, w);
}

static void ipmi_print_text(const struct erg_pdu_source_config *c, const struct erg_ipmi_probe *r) {
  const struct erg_dcmi_power *p = &r->p;
  printf("bmc      %s\n", r->where);
  if (isfinite(r->login_seconds))
    printf("login    %.3f s\n", r->login_seconds);
  printf("request  DCMI Get Power Reading, %.3f s\n", r->request_seconds);
  if (p->completion_code > 0)
    printf("answer   completion code 0x%02X (%s)\n", p->completion_code,
           erg_ipmi_completion_text(p->completion_code));
  if (isfinite(p->current_watts)) {
    printf("current  %6.0f W   %s\n", p->current_watts, r->used ? "<- erg takes this" : "REFUSED");
    printf("over the BMC's window of %u ms (never used: the window is the BMC's, 0 s to "
           "weeks):\n",
           p->period_ms);
    ipmi_print_w("minimum", p->min_watts);
    ipmi_print_w("maximum", p->max_watts);
    ipmi_print_w("average", p->avg_watts);
    printf("state    power measurement %s\n", p->active ? "active" : "INACTIVE");
  }
  double off = ipmi_clock_offset(r);
  if (isfinite(off)) {
    time_t t = (time_t)p->bmc_time_s;
    struct tm tm;
    char buf[64];
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    printf("bmc time %s (its clock %.0f s %s ours)\n", buf, fabs(off),
           off >= 0 ? "ahead of" : "behind");
  }
  printf("%-8s %s\n", r->used ? "uses" : "REFUSED", r->verdict);
  printf("\n# config: this BMC as a meter, and the server it reads (docs/config.md, "
         "docs/bmc.md)\n[meter.NAME]\ndriver = ipmi\n");
  if (c->device[0])
    printf("device = %s\n", c->device);
  else
    printf("host = %s\n", c->host);
  if (!c->device[0] && strcmp(c->host, "local")) {
    printf("port = %d\nuser = %s\n", c->port ? c->port : 623, c->user);
    char abs[4096];
    printf("# the password's first line; chmod 600 (or root:erg 0640): ergd refuses a file "
           "others can read\npassword_file = %s\n",
           realpath(c->password_file, abs) ? abs : c->password_file);
    printf("cipher_suite = %d\n", c->cipher_suite ? c->cipher_suite : 3);
    if (c->privilege[0])
      printf("privilege = %s\n", c->privilege);
  }
  printf("# the request took %.3f s\ntimeout_seconds = %g\nretries = %d\n",
         isfinite(r->request_seconds) ? r->request_seconds : 0, ipmi_suggest_timeout(r),
         c->retries);
  printf("\n[node.NODE]\npower = NAME\n");
}

int erg_pdu_probe_ipmi_cli(int argc, char **argv) {
  struct erg_pdu_source_config c;
  memset(&c, 0, sizeof c);
  c.timeout_seconds = 2.0;
  c.retries = 1;
  bool json = false;
  int rc = ipmi_parse(argc, argv, &c, &json);
  if (rc) {
    if (rc == 1)
      ipmi_usage(stderr);
    return rc == 2 ? 0 : 1;
  }
  snprintf(c.name, sizeof c.name, "probe");
  snprintf(c.driver, sizeof c.driver, "ipmi");
  struct erg_ipmi_probe res;
  char why[512];
  rc = erg_pdu_ipmi_probe(&c, &res, why, sizeof why);
  if (rc == 0) {
    json ? ipmi_print_json(&c, &res) : ipmi_print_text(&c, &res);
    return 0;
  }
  fprintf(stderr, "erg pdu probe: %s\n", why);
  if (rc == -2 && isfinite(res.login_seconds))
    fprintf(stderr, "erg pdu probe: (gave up after %.3f s)\n", res.login_seconds);
  return 2;
}

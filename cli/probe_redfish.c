// SPDX-License-Identifier: GPL-3.0-or-later
/* `erg pdu probe --driver redfish`: every power and energy reading of a
 * BMC's chassis, the one ergd would take and why, what it refused and why,
 * the time each request took, and a config to copy (erg check-config takes
 * it). Exit 0: a reading was chosen; 1 usage; 2 the BMC failed or has no
 * node reading. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_int.h"
#include "erg_cli.h"
#include "erg_common.h"
#include "erg_redfish.h"

static void rfp_usage(FILE *f) {
  fprintf(f, "usage: erg pdu probe --driver redfish --host https://HOST[:PORT] [--chassis ID]\n"
             "           [--user U --password-file F [--auth session|basic]]\n"
             "           [--ca-file F | --pinned-public-key sha256//B64 | --insecure]\n"
             "           [--timeout S] [--name NAME] [--json]\n"
             "Walks the BMC's Redfish tree (every chassis: Power, EnvironmentMetrics,\n"
             "Sensors) and lists each power and energy reading, which one ergd takes and\n"
             "why, what it refuses and why, the time of each request, and a [meter.NAME]\n"
             "section to copy (docs/bmc.md). http:// is allowed, with a warning (simulators).\n");
}

struct rfp_opts {
  struct erg_pdu_source_config c;
  bool json;
  char name[48];
};

static int rfp_parse(int argc, char **argv, struct rfp_opts *o) {
  static const struct option opts[] = {{"driver", required_argument, 0, 'd'},
                                       {"host", required_argument, 0, 'H'},
                                       {"chassis", required_argument, 0, 'c'},
                                       {"user", required_argument, 0, 'u'},
                                       {"password-file", required_argument, 0, 'p'},
                                       {"auth", required_argument, 0, 'a'},
                                       {"ca-file", required_argument, 0, 'C'},
                                       {"pinned-public-key", required_argument, 0, 'k'},
                                       {"insecure", no_argument, 0, 'i'},
                                       {"timeout", required_argument, 0, 't'},
                                       {"name", required_argument, 0, 'n'},
                                       {"json", no_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  struct erg_pdu_source_config *c = &o->c;
  int ch, bad = 0;
  char why[128];
  optind = 1;
  while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (ch) {
      case 'd':
        bad |= cli_probe_copy(c->driver, sizeof c->driver, optarg, "--driver");
        break;
      case 'H':
        bad |= cli_probe_copy(c->host, sizeof c->host, optarg, "--host");
        break;
      case 'c':
        bad |= cli_probe_copy(c->chassis, sizeof c->chassis, optarg, "--chassis");
        break;
      case 'u':
        bad |= cli_probe_copy(c->user, sizeof c->user, optarg, "--user");
        break;
      case 'p':
        bad |= cli_probe_copy(c->password_file, sizeof c->password_file, optarg, "--password-file");
        break;
      case 'a':
        bad |= cli_probe_copy(c->auth, sizeof c->auth, optarg, "--auth");
        break;
      case 'C':
        bad |= cli_probe_copy(c->ca_file, sizeof c->ca_file, optarg, "--ca-file");
        break;
      case 'k':
        bad |= cli_probe_copy(c->pinned_public_key, sizeof c->pinned_public_key, optarg,
                              "--pinned-public-key");
        break;
      case 'i':
        c->tls_insecure = true;
        break;
      case 't':
        if (erg_config_double(optarg, 0.01, 600, &c->timeout_seconds, why, sizeof why)) {
          fprintf(stderr, "erg pdu probe: --timeout: %s\n", why);
          bad = 1;
        }
        break;
      case 'n':
        if (!erg_name_is_safe(optarg) || strlen(optarg) >= 32) {
          fprintf(stderr, "erg pdu probe: --name: [A-Za-z0-9._-], up to 31\n");
          bad = 1;
        } else {
          strcpy(o->name, optarg);
        }
        break;
      case 'j':
        o->json = true;
        break;
      case 'h':
        rfp_usage(stdout);
        return 2;
      default:
        bad = 1;
    }
  }
  if (!bad && (optind != argc || !c->host[0])) {
    fprintf(stderr, "erg pdu probe: --driver redfish needs --host https://HOST[:PORT]\n");
    bad = 1;
  }
  return bad;
}

/* "Node0" from "/redfish/v1/Chassis/Node0", made a safe name. */
static void rfp_suffix(const char *chassis, char *out, size_t len) {
  char buf[ERG_RF_URI_MAX];
  snprintf(buf, sizeof buf, "%s", chassis);
  size_t n = strlen(buf);
  while (n > 1 && buf[n - 1] == '/')
    buf[--n] = '\0';
  const char *id = strrchr(buf, '/');
  snprintf(out, len, "%s", id ? id + 1 : buf);
  for (char *p = out; *p; p++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
      *p = '_';
  if (out[0] == '.' || !out[0])
    out[0] = '_';
}

static void rfp_meter(FILE *f, const struct rfp_opts *o, const char *name, const char *chassis) {
  const struct erg_pdu_source_config *c = &o->c;
  fprintf(f, "[meter.%s]\ndriver = redfish\nhost = %s\nchassis = %s\n", name, c->host, chassis);
  if (c->user[0])
    fprintf(f, "user = %s\npassword_file = %s\n", c->user, c->password_file);
  if (c->auth[0])
    fprintf(f, "auth = %s\n", c->auth);
  if (c->ca_file[0])
    fprintf(f, "ca_file = %s\n", c->ca_file);
  if (c->pinned_public_key[0])
    fprintf(f, "pinned_public_key = %s\n", c->pinned_public_key);
  if (c->tls_insecure)
    fprintf(f, "# the certificate is not checked: prefer ca_file or pinned_public_key\n"
               "tls_verify = no\n");
  if (c->timeout_seconds > 0)
    fprintf(f, "timeout_seconds = %g\n", c->timeout_seconds);
}

/* The config to copy, into a memory stream; "" when nothing can be read. */
static char *rfp_config(const struct rfp_opts *o, const struct erg_rf_probe_result *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return NULL;
  const char *name = o->name[0] ? o->name : "bmc";
  if (r->discover_rc == 0 && !r->d.plan.enclosure) {
    rfp_meter(f, o, name, r->d.plan.chassis);
    fprintf(f, "\n[node.NODE]\npower = %s\n", name);
  } else if (r->d.plan.enclosure) {
    rfp_meter(f, o, name, r->d.plan.chassis);
    fprintf(f,
            "\n# the enclosure feeds several nodes: a shared meter, split by their models\n"
            "[group.%s]\npower = %s\nnodes = NODE1 NODE2\n",
            name, name);
  } else if (r->d.nnodes > 1) {
    for (int i = 0; i < r->d.nnodes && i < 8; i++) {
      char sfx[64], mname[128];
      rfp_suffix(r->d.nodes[i], sfx, sizeof sfx);
      snprintf(mname, sizeof mname, "%s-%s", name, sfx);
      rfp_meter(f, o, mname, r->d.nodes[i]);
      fprintf(f, "\n[node.NODE-%s]\npower = %s\n\n", sfx, mname);
    }
  }
  fclose(f);
  return buf;
}

static double rfp_total_seconds(const struct erg_rf_probe_result *r, double *slowest) {
  double t = 0;
  *slowest = 0;
  for (int i = 0; i < r->nreq; i++) {
    t += r->req[i].seconds;
    if (r->req[i].seconds > *slowest)
      *slowest = r->req[i].seconds;
  }
  return t;
}

static json_t *rfp_num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static void rfp_print_json(const struct rfp_opts *o, const struct erg_rf_probe_result *r,
                           const char *config) {
  json_t *rows = json_array(), *reqs = json_array();
  for (int i = 0; i < r->d.nfound; i++) {
    const struct erg_rf_found *f = &r->d.found[i];
    json_array_append_new(rows, json_pack("{s:s,s:s,s:s,s:o,s:o,s:b,s:s}", "chassis", f->chassis,
                                          "what", f->what, "uri", f->uri, "watts",
                                          rfp_num(f->energy ? NAN : f->value), "energy_joules",
                                          rfp_num(f->energy ? f->value : NAN), "used", f->used,
                                          f->used ? "why" : "refused", f->why));
  }
  for (int i = 0; i < r->nreq; i++)
    json_array_append_new(reqs, json_pack("{s:s,s:i,s:f}", "request", r->req[i].uri, "status",
                                          r->req[i].status, "seconds", r->req[i].seconds));
  const struct erg_rf_plan *p = &r->d.plan;
  json_t *chosen = json_null();
  if (r->discover_rc == 0)
    chosen = json_pack("{s:s,s:b,s:s,s:o,s:o,s:s,s:o,s:o}", "chassis", p->chassis, "enclosure",
                       p->enclosure, "why", p->why, "watts", rfp_num(r->watts), "energy_joules",
                       rfp_num(r->joules), "reading_problem", r->reading_why, "reading_time",
                       r->reading_time_s ? json_integer(r->reading_time_s) : json_null(),
                       "bmc_clock_offset_seconds",
                       r->reading_time_s && r->arrival_ns
                           ? json_real((double)r->reading_time_s - (double)r->arrival_ns / 1e9)
                           : json_null());
  json_t *o_ = json_pack("{s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:s}", "driver", "redfish", "host",
                         o->c.host, "auth", r->auth_used, "warning",
                         r->warning[0] ? json_string(r->warning) : json_null(), "chosen", chosen,
                         "refused", r->discover_rc ? json_string(r->discover_why) : json_null(),
                         "rows", rows, "requests", reqs, "config", config ? config : "");
  char *s = json_dumps(o_, JSON_INDENT(2));
  if (s)
    printf("%s\n", s);
  free(s);
  json_decref(o_);
}

static void rfp_print_text(const struct rfp_opts *o, const struct erg_rf_probe_result *r,
                           const char *config) {
  double slowest, total = rfp_total_seconds(r, &slowest);
  printf("host     %s (redfish, auth %s)\n", o->c.host, r->auth_used);
  if (r->warning[0])
    printf("WARNING  %s\n", r->warning);
  printf("requests %d in %.2f s (slowest %.2f s)\n", r->nreq, total, slowest);
  const char *last = "";
  for (int i = 0; i < r->d.nfound; i++) {
    const struct erg_rf_found *f = &r->d.found[i];
    if (strcmp(f->chassis, last))
      printf("\nchassis %s\n", f->chassis);
    last = f->chassis;
    char v[40];
    if (isfinite(f->value))
      snprintf(v, sizeof v, "%.6g %s", f->value, f->energy ? "J" : "W");
    else
      snprintf(v, sizeof v, "null");
    printf("  %s %-52s %14s  %s\n", f->used ? "USED" : "  - ", f->what, v, f->why);
  }
  printf("\n");
  if (r->discover_rc == 0) {
    printf("chosen   %s\n", r->d.plan.why);
    if (isfinite(r->watts))
      printf("now      %.6g W\n", r->watts);
    if (isfinite(r->joules))
      printf("now      %.10g J\n", r->joules);
    if (r->reading_time_s && r->arrival_ns) {
      time_t t = (time_t)r->reading_time_s;
      struct tm tm;
      char ts[40];
      strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&t, &tm));
      printf("bmc time %s (its ReadingTime; %+.0f s from ours at arrival)\n", ts,
             (double)r->reading_time_s - (double)r->arrival_ns / 1e9);
    }
    if (r->reading_why[0])
      printf("problem  %s\n", r->reading_why);
  } else {
    printf("refused  %s\n", r->discover_why);
  }
  if (config && config[0])
    printf("\n# config (docs/bmc.md, docs/config.md)\n%s", config);
}

int erg_pdu_probe_redfish_cli(int argc, char **argv) {
  struct rfp_opts o;
  memset(&o, 0, sizeof o);
  int rc = rfp_parse(argc, argv, &o);
  if (rc) {
    if (rc == 1)
      rfp_usage(stderr);
    return rc == 2 ? 0 : 1;
  }
  snprintf(o.c.name, sizeof o.c.name, "probe");
  struct erg_rf_probe_result *r = calloc(1, sizeof *r);
  char why[1024];
  if (!r) {
    fprintf(stderr, "erg pdu probe: out of memory\n");
    return 2;
  }
  rc = erg_redfish_probe(&o.c, r, why, sizeof why);
  if (rc) {
    fprintf(stderr, "erg pdu probe: %s\n", why);
    free(r);
    return rc == -1 ? 1 : 2;
  }
  if (r->warning[0] && !o.json)
    fprintf(stderr, "erg pdu probe: warning: %s\n", r->warning);
  char *config = rfp_config(&o, r);
  if (o.json)
    rfp_print_json(&o, r, config);
  else
    rfp_print_text(&o, r, config);
  /* Several nodes or an enclosure: refused as one meter, but configurable. */
  rc = r->discover_rc == 0 || (config && config[0]) ? 0 : 2;
  free(config);
  free(r);
  return rc;
}

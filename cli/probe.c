// SPDX-License-Identifier: GPL-3.0-or-later
/* `erg pdu probe`: what one PDU or meter is and reads now (the pdu
 * library asks it), printed as a tree or JSON with the config section to
 * copy. Exit 0 ok, 1 usage, 2 the device failed (unreachable, unknown,
 * refused). */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_int.h"
#include "erg_cli.h"
#include "erg_pdu.h"

/* Level order of the tree the probe prints (as erg_pdu_probe reads them). */
static const int probe_order[] = {ERG_PDU_DEVICE, ERG_PDU_INLET,  ERG_PDU_PHASE,
                                  ERG_PDU_BANK,   ERG_PDU_OUTLET, ERG_PDU_SENSOR};
#define PROBE_NLEVELS (sizeof probe_order / sizeof probe_order[0])

/* The quantities (enum erg_pdu_probe_qty) as the probe names them. */
static const char *const probe_qname[ERG_PROBE_NQ] = {
    "name", "power", "va", "power_factor", "current", "voltage", "energy", "voltage_borrowed"};

static void probe_usage(FILE *f) {
  fprintf(f, "usage: erg pdu probe --driver redfish --host https://H[:PORT] [...] (--help)\n"
             "       erg pdu probe --driver snmp --host H[:PORT] [--community C]\n"
             "           [--version 1|2c|3] [--user U --level noAuthNoPriv|authNoPriv|authPriv\n"
             "            --auth-proto MD5|SHA|SHA256 --auth-pass P --priv-proto DES|AES\n"
             "            --priv-pass P [--context NAME]] [--profile NAME] [--timeout S]\n"
             "           [--retries N] [--power-factor PF] [--json]\n"
             "           profile generic: --oid-power T --oid-energy T [--oid-name T]\n"
             "                            [--oid-count OID] [--oid-total-power OID]\n"
             "           [--power-scale X] [--energy-scale-joules X]   (T: OID with %%d = outlet)\n"
             "       erg pdu probe --driver modbus (--host H[:PORT] | --device TTY [--baud N]\n"
             "           [--parity N|E|O] [--data-bits N] [--stop-bits N])\n"
             "           --profile sdm630|sdm120|sdm72|erg-sim|generic [--unit N] [--timeout S]\n"
             "           [--json]\n"
             "           profile generic: --power-register FC:ADDR:TYPE[:ORDER]\n"
             "           [--energy-register FC:ADDR:TYPE[:ORDER]] [--power-scale X]\n"
             "           [--energy-scale-joules X]  (TYPE int16|uint16|int32|uint32|float32,\n"
             "           ORDER abcd|cdab|badc|dcba)\n"
             "       erg pdu probe --driver ipmi ...: see erg pdu probe --driver ipmi --help\n"
             "       both: [--step S]  the grid step energy counters are judged against (5)\n"
             "Prints vendor, model, the profile chosen and why, and every metering level\n"
             "the device offers (device, inlets, phases, banks, outlets) with names, watts\n"
             "(measured, VA x PF, or estimated as A x V x --power-factor, default 1),\n"
             "amps, volts and energy, to help write a [pdu.NAME] / [meter.NAME] section;\n"
             "says when an energy counter is too coarse for the step (ergd then uses power).\n");
}

static int probe_version(const char *v, struct erg_pdu_source_config *c) {
  if (!strcmp(v, "1"))
    c->snmp_version = 1;
  else if (!strcmp(v, "2c") || !strcmp(v, "2"))
    c->snmp_version = 2;
  else if (!strcmp(v, "3"))
    c->snmp_version = 3;
  else
    return -1;
  return 0;
}

static int probe_parse(int argc, char **argv, struct erg_pdu_source_config *c, bool *json,
                       double *step) {
  static const struct option opts[] = {{"driver", required_argument, 0, 'd'},
                                       {"host", required_argument, 0, 'H'},
                                       {"community", required_argument, 0, 'c'},
                                       {"version", required_argument, 0, 'v'},
                                       {"user", required_argument, 0, 'u'},
                                       {"auth-proto", required_argument, 0, 'a'},
                                       {"auth-pass", required_argument, 0, 'A'},
                                       {"priv-proto", required_argument, 0, 'x'},
                                       {"priv-pass", required_argument, 0, 'X'},
                                       {"level", required_argument, 0, 'l'},
                                       {"profile", required_argument, 0, 'p'},
                                       {"unit", required_argument, 0, 'U'},
                                       {"timeout", required_argument, 0, 't'},
                                       {"retries", required_argument, 0, 'r'},
                                       {"context", required_argument, 0, 'C'},
                                       {"oid-power", required_argument, 0, 'P'},
                                       {"oid-energy", required_argument, 0, 'E'},
                                       {"oid-name", required_argument, 0, 'N'},
                                       {"oid-count", required_argument, 0, 'K'},
                                       {"oid-total-power", required_argument, 0, 'T'},
                                       {"power-scale", required_argument, 0, 's'},
                                       {"energy-scale-joules", required_argument, 0, 'S'},
                                       {"device", required_argument, 0, 'D'},
                                       {"baud", required_argument, 0, 'b'},
                                       {"parity", required_argument, 0, 'y'},
                                       {"data-bits", required_argument, 0, '7'},
                                       {"stop-bits", required_argument, 0, '1'},
                                       {"power-register", required_argument, 0, 'R'},
                                       {"energy-register", required_argument, 0, 'e'},
                                       {"step", required_argument, 0, 'Z'},
                                       {"power-factor", required_argument, 0, 'F'},
                                       {"json", no_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  static const struct cli_probe_text texts[] = {
      CLI_PROBE_TEXT('d', driver),          CLI_PROBE_TEXT('c', community),
      CLI_PROBE_TEXT('u', v3_user),         CLI_PROBE_TEXT('a', v3_auth_proto),
      CLI_PROBE_TEXT('A', v3_auth_pass),    CLI_PROBE_TEXT('x', v3_priv_proto),
      CLI_PROBE_TEXT('X', v3_priv_pass),    CLI_PROBE_TEXT('l', v3_level),
      CLI_PROBE_TEXT('p', profile),         CLI_PROBE_TEXT('C', v3_context),
      CLI_PROBE_TEXT('P', oid_power),       CLI_PROBE_TEXT('E', oid_energy),
      CLI_PROBE_TEXT('N', oid_name),        CLI_PROBE_TEXT('K', oid_count),
      CLI_PROBE_TEXT('T', oid_total_power), CLI_PROBE_TEXT('D', device),
      CLI_PROBE_TEXT('R', power_register),  CLI_PROBE_TEXT('e', energy_register),
  };
  int o, bad = 0;
  optind = 1;
  while (!bad && (o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (o) {
      case 'H':
        bad = cli_probe_host(optarg, c);
        break;
      case 'v':
        bad = probe_version(optarg, c);
        break;
      case 'U':
        c->unit_id = atoi(optarg);
        bad = c->unit_id < 1 || c->unit_id > 247;
        break;
      case 't':
        c->timeout_seconds = atof(optarg);
        bad = !(c->timeout_seconds > 0);
        break;
      case 'r':
        bad = cli_probe_retries(optarg, c);
        break;
      case 's':
        c->power_scale = atof(optarg);
        bad = !(c->power_scale > 0);
        break;
      case 'S':
        c->energy_scale_joules = atof(optarg);
        bad = !(c->energy_scale_joules > 0);
        break;
      case 'b':
        c->baud = atoi(optarg);
        bad = c->baud < 50 || c->baud > 4000000;
        break;
      case 'y':
        c->parity = (char)(optarg[0] & ~0x20);
        bad = optarg[1] || !strchr("NEO", c->parity);
        break;
      case '7':
        c->data_bits = atoi(optarg);
        bad = c->data_bits < 5 || c->data_bits > 8;
        break;
      case '1':
        c->stop_bits = atoi(optarg);
        bad = c->stop_bits < 1 || c->stop_bits > 2;
        break;
      case 'Z':
        *step = atof(optarg);
        bad = !(*step >= 1 && *step <= 3600);
        break;
      case 'F':
        c->power_factor = atof(optarg);
        bad = !(c->power_factor > 0 && c->power_factor <= 1);
        break;
      case 'j':
        *json = true;
        break;
      case 'h':
        probe_usage(stdout);
        return 2;
      default:
        if (!cli_probe_text(o, optarg, texts, sizeof texts / sizeof texts[0], opts, c, &bad))
          bad = 1;
    }
  }
  if (!bad && (optind != argc || !(c->host[0] || c->device[0]) || !c->driver[0]))
    bad = 1;
  if (!bad && c->snmp_version == 0)
    c->snmp_version = c->v3_user[0] ? 3 : 2;
  return bad ? 1 : 0;
}

static json_t *probe_num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* How ergd would treat this energy counter (pdu.c counter_fine, with the
 * reading's own resolution): "counter", "power" (too coarse, watts used)
 * or "counter-coarse" (too coarse, but no watts to use); "" without one. */
static const char *probe_energy_use(const struct erg_pdu_reading *r, double step_seconds,
                                    double *cell_joules) {
  *cell_joules = r->watts * step_seconds;
  if (!isfinite(r->energy_joules))
    return "";
  if (!(r->energy_resolution_joules > 0))
    return "counter";
  if (!isfinite(r->watts))
    return "counter-coarse";
  return r->energy_resolution_joules > ERG_PDU_COUNTER_MAX_STEP * *cell_joules ? "power"
                                                                               : "counter";
}

static const char *probe_power_source(const struct erg_pdu_reading *r) {
  if (!isfinite(r->watts))
    return "";
  return r->power_source == ERG_PDU_W_VA_PF       ? "VA x PF"
         : r->power_source == ERG_PDU_W_ESTIMATED ? "ESTIMATED (A x V or VA x configured PF)"
                                                  : "measured";
}

/* The smallest step of a measured SNMP power reading: the factor of its
 * integer raw value (profile scale, decimal digits, SI prefix). PDUs
 * often read the whole unit coarser than each outlet (APC: device in 10 W
 * steps, outlets in 1 W), which explains sums that do not match. NAN
 * where unknown (Modbus floats, VA x PF, estimates). */
static double probe_power_step(const struct erg_pdu_probe_row *row) {
  if (row->have_detail && isfinite(row->r.watts) && row->r.power_source == ERG_PDU_W_MEASURED &&
      row->oid[ERG_PROBE_POWER][0] && row->scale[ERG_PROBE_POWER] > 0)
    return row->scale[ERG_PROBE_POWER];
  return NAN;
}

/* " (10 W steps)" after a reading, or "" when its step is unknown. */
static const char *probe_step_text(double step, char *buf, size_t len) {
  if (isfinite(step))
    snprintf(buf, len, " (%g W steps)", step);
  else
    buf[0] = '\0';
  return buf;
}

/* The whole PDU's power: the device level, else the sum of the inlets;
 * *step that of the reading (the inlets' coarsest), NAN when unknown. */
static double probe_total_watts(const struct erg_pdu_probe *r, double *step) {
  double inlets = 0, istep = 0;
  int ninlets = 0;
  for (int i = 0; i < r->n; i++) {
    const struct erg_pdu_probe_row *row = &r->rows[i];
    if (row->level == ERG_PDU_DEVICE && isfinite(row->r.watts)) {
      *step = probe_power_step(row);
      return row->r.watts;
    }
    if (row->level == ERG_PDU_INLET && isfinite(row->r.watts)) {
      double st = probe_power_step(row);
      istep = isnan(st) || isnan(istep) ? NAN : st > istep ? st : istep;
      inlets += row->r.watts, ninlets++;
    }
  }
  *step = ninlets ? istep : NAN;
  return ninlets ? inlets : NAN;
}

/* A row's number as the config names it: "5", or "210.5" where the
 * level's rows span several units (daisy-chain members, cords). */
static const char *probe_row_id(const struct erg_pdu_probe_row *row, char *buf, size_t len) {
  if (row->multi_unit && row->unit[0])
    snprintf(buf, len, "%s.%d", row->unit, row->index);
  else
    snprintf(buf, len, "%d", row->index);
  return buf;
}

/* One line per level and verdict: a 48-outlet PDU says it once. */
static void probe_print_counters(const struct erg_pdu_probe *r, double step_seconds) {
  for (int i = 0; i < r->n; i++) {
    const struct erg_pdu_reading *x = &r->rows[i].r;
    double cell;
    char id[32];
    const char *use = probe_energy_use(x, step_seconds, &cell);
    if (!use[0] || !(x->energy_resolution_joules > 0))
      continue;
    bool seen = false; /* said already for an earlier row of this level? */
    for (int k = 0; k < i && !seen; k++) {
      double c2;
      const struct erg_pdu_reading *y = &r->rows[k].r;
      seen = r->rows[k].level == r->rows[i].level &&
             y->energy_resolution_joules == x->energy_resolution_joules &&
             !strcmp(probe_energy_use(y, step_seconds, &c2), use);
    }
    if (seen)
      continue;
    printf("%s energy counters: one step is %.1f J", erg_pdu_level_name(r->rows[i].level),
           x->energy_resolution_joules);
    if (!strcmp(use, "counter-coarse"))
      printf("; no power reading: ergd holds a counter while it stands still and spreads "
             "each move over the time since the previous one\n");
    else if (!strcmp(use, "power"))
      printf("; more than 5 %% of a %g s cell at these loads (%s %s: %.1f W, %.1f J): TOO "
             "COARSE, ergd uses the power readings\n",
             step_seconds, erg_pdu_level_name(r->rows[i].level),
             probe_row_id(&r->rows[i], id, sizeof id), x->watts, cell);
    else
      printf(": fine for a %g s cell, ergd uses the counters\n", step_seconds);
  }
}

/* One row as JSON: what it reads, and (SNMP) the OID and factor of each
 * value, so it can be traced back to the agent (tests compare them with
 * the recordings). */
static json_t *probe_row_json(double step_seconds, const struct erg_pdu_probe_row *row) {
  const struct erg_pdu_reading *x = &row->r;
  double cell;
  const char *use = probe_energy_use(x, step_seconds, &cell);
  double eres = x->energy_resolution_joules > 0 ? x->energy_resolution_joules : NAN;
  const char *ps = probe_power_source(x);
  json_t *o = json_pack(
      "{s:s,s:i,s:s,s:o,s:o,s:o,s:b,s:o,s:o,s:o,s:o}", "level", erg_pdu_level_name(row->level),
      "index", row->index, "name", row->name, "watts", probe_num(x->watts), "power_from",
      ps[0] ? json_string(ps[0] == 'E'   ? "estimated"
                          : ps[0] == 'V' ? "va_pf"
                                         : "measured")
            : json_null(),
      "energy_kwh", probe_num(x->energy_joules / 3.6e6), "ok", x->ok, "energy_resolution_joules",
      probe_num(eres), "cell_energy_joules", probe_num(use[0] ? cell : NAN),
      "energy_counter_coarse",
      use[0] && isfinite(eres) ? json_boolean(strcmp(use, "counter") != 0) : json_null(),
      "energy_from", use[0] ? json_string(use) : json_null());
  json_object_set_new(o, "estimated",
                      json_boolean(isfinite(x->watts) && x->power_source == ERG_PDU_W_ESTIMATED));
  json_object_set_new(o, "unit", row->unit[0] ? json_string(row->unit) : json_null());
  json_object_set_new(o, "problem", row->problem[0] ? json_string(row->problem) : json_null());
  json_object_set_new(o, "power_step_watts", probe_num(probe_power_step(row)));
  if (row->have_detail) {
    json_t *oids = json_object(), *scales = json_object(), *vals = json_object();
    json_t *units = json_object(); /* columns read as text with a unit */
    for (int q = 0; q < ERG_PROBE_NQ; q++) {
      if (!row->oid[q][0])
        continue;
      json_object_set_new(oids, probe_qname[q], json_string(row->oid[q]));
      if (q == ERG_PROBE_NAME)
        continue;
      json_object_set_new(scales, probe_qname[q], probe_num(row->scale[q]));
      json_object_set_new(vals, probe_qname[q], probe_num(row->value[q]));
      if (row->text_unit[q])
        json_object_set_new(units, probe_qname[q], json_string(row->text_unit[q]));
    }
    json_object_set_new(o, "oids", oids);
    json_object_set_new(o, "scales", scales);
    json_object_set_new(o, "values", vals);
    json_object_set_new(o, "units", units);
  }
  return o;
}

static void probe_print_json(const struct erg_pdu_source_config *c, const struct erg_pdu_probe *r,
                             double step_seconds) {
  json_t *outs = json_array(), *rows = json_array(), *missing = json_array();
  double step;
  for (int i = 0; i < r->n; i++) {
    json_array_append_new(rows, probe_row_json(step_seconds, &r->rows[i]));
    if (r->rows[i].level == ERG_PDU_OUTLET)
      json_array_append_new(outs, probe_row_json(step_seconds, &r->rows[i]));
  }
  for (size_t k = 0; r->snmp && k < PROBE_NLEVELS; k++)
    if (r->absent[probe_order[k]])
      json_array_append_new(missing, json_string(erg_pdu_level_name(probe_order[k])));
  json_t *o = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o}", "driver",
                        c->driver, "host", c->host, "device", c->device, "port", c->port, "vendor",
                        r->vendor, "model", r->model, "profile", r->profile, "profile_reason",
                        r->reason, "sysobjectid", r->sysoid, "sysdescr", r->sysdescr, "total_watts",
                        probe_num(probe_total_watts(r, &step)), "outlets", outs, "rows", rows,
                        "levels_missing", missing);
  json_object_set_new(o, "total_step_watts", probe_num(step));
  char *s = json_dumps(o, JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(12));
  printf("%s\n", s ? s : "{}");
  free(s);
  json_decref(o);
}

static void probe_print_value(double v, int width, int prec) {
  if (isfinite(v))
    printf(" %*.*f", width, prec, v);
  else
    printf(" %*s", width, "-");
}

/* device -> inlets -> phases -> banks -> outlets, indented by depth. */
static void probe_print_tree(const struct erg_pdu_probe *r) {
  printf("%-16s %-20s %9s %8s %7s %5s %12s  %s\n", "level", "name", "watts", "amps", "volts", "pf",
         "energy_kWh", "power from");
  for (int i = 0; i < r->n; i++) {
    const struct erg_pdu_probe_row *row = &r->rows[i];
    int depth = 0;
    for (size_t k = 0; k < PROBE_NLEVELS; k++)
      if (probe_order[k] == row->level)
        depth = (int)k;
    char label[48], id[32];
    snprintf(label, sizeof label, "%*s%s %s", depth, "", erg_pdu_level_name(row->level),
             probe_row_id(row, id, sizeof id));
    double amps = NAN, volts = NAN, pf = NAN;
    if (row->have_detail) {
      amps = row->value[ERG_PROBE_CURRENT];
      volts = isfinite(row->value[ERG_PROBE_VOLTAGE]) ? row->value[ERG_PROBE_VOLTAGE]
                                                      : row->value[ERG_PROBE_VOLTAGE_BORROWED];
      pf = row->value[ERG_PROBE_PF];
    }
    printf("%-16s %-20.20s", label, row->name);
    probe_print_value(row->r.watts, 9, 1);
    probe_print_value(amps, 8, 2);
    probe_print_value(volts, 7, 1);
    probe_print_value(pf, 5, 2);
    probe_print_value(row->r.energy_joules / 3.6e6, 12, 3);
    char st[32];
    printf("  %s%s\n", probe_power_source(&row->r),
           probe_step_text(probe_power_step(row), st, sizeof st));
  }
  /* Values of the wrong type (negative ones are the MIBs' "not available"). */
  char id[32];
  for (int i = 0; i < r->n; i++)
    if (r->rows[i].problem[0] && !strstr(r->rows[i].problem, "negative"))
      printf("%s %s: %s%s\n", erg_pdu_level_name(r->rows[i].level),
             probe_row_id(&r->rows[i], id, sizeof id), r->rows[i].problem,
             strstr(r->rows[i].problem, "; read as ") ? "" : "; read as missing");
  bool any = false;
  for (size_t k = 0; r->snmp && k < PROBE_NLEVELS; k++)
    if (r->absent[probe_order[k]] && probe_order[k] != ERG_PDU_SENSOR) {
      printf("%s%s",
             any ? ", " : "not metered by this device: ", erg_pdu_level_name(probe_order[k]));
      any = true;
    }
  if (any)
    printf("\n");
}

/* A [node] section check-config takes, with the finest channel that
 * reads as its power: the line to copy per server. */
static void probe_print_node(const struct erg_pdu_source_config *c, const struct erg_pdu_probe *r) {
  static const int finest[] = {ERG_PDU_OUTLET, ERG_PDU_BANK,   ERG_PDU_PHASE,
                               ERG_PDU_INLET,  ERG_PDU_SENSOR, ERG_PDU_DEVICE};
  const struct erg_pdu_probe_row *pick = NULL;
  /* Measured power (W, or VA x PF) first, at the finest level that has it;
   * then an estimate or a counter alone. */
  for (int pass = 0; pass < 2 && !pick; pass++)
    for (size_t k = 0; k < sizeof finest / sizeof finest[0] && !pick; k++)
      for (int i = 0; i < r->n && !pick; i++) {
        const struct erg_pdu_reading *x = &r->rows[i].r;
        bool measured = isfinite(x->watts) && x->power_source != ERG_PDU_W_ESTIMATED;
        if (r->rows[i].level == finest[k] &&
            (pass == 0 ? measured : isfinite(x->watts) || isfinite(x->energy_joules)))
          pick = &r->rows[i];
      }
  if (!pick)
    pick = &r->rows[0];
  char chan[64], id[32];
  if (strcmp(c->driver, "snmp"))
    snprintf(chan, sizeof chan, "NAME:%d", pick->index); /* a meter's unit id */
  else if (pick->level == ERG_PDU_DEVICE && !pick->multi_unit)
    snprintf(chan, sizeof chan, "NAME:device");
  else
    snprintf(chan, sizeof chan, "NAME:%s:%s", erg_pdu_level_name(pick->level),
             probe_row_id(pick, id, sizeof id));
  printf("\n# per server, the channels that feed it: A + B for two PSUs, A*FACTOR for a\n"
         "# channel shared by several servers (docs/pdu.md \"Metering levels\")\n"
         "[node.NODE]\npower = %s\n",
         chan);
}

static void probe_print_source(const struct erg_pdu_source_config *c,
                               const struct erg_pdu_probe *r) {
  printf("driver = %s\n", c->driver);
  if (c->device[0])
    printf("device = %s\nbaud = %d\nparity = %c\ndata_bits = %d\nstop_bits = %d\n", c->device,
           c->baud ? c->baud : 9600, c->parity ? c->parity : 'N', c->data_bits ? c->data_bits : 8,
           c->stop_bits ? c->stop_bits : 1);
  else
    printf("host = %s\nport = %d\n", c->host, c->port);
  printf("profile = %s\n", r->profile);
  if (!strcmp(c->driver, "modbus"))
    printf("unit_id = %d\n", c->unit_id);
  if (c->power_register[0])
    printf("power_register = %s\npower_scale = %g\n", c->power_register,
           c->power_scale > 0 ? c->power_scale : 1.0);
  if (c->energy_register[0])
    printf("energy_register = %s\nenergy_scale_joules = %g\n", c->energy_register,
           c->energy_scale_joules > 0 ? c->energy_scale_joules : 3600.0);
  if (!strcmp(c->driver, "modbus"))
    return;
  for (int i = 0; i < r->n; i++)
    if (isfinite(r->rows[i].r.watts) && r->rows[i].r.power_source == ERG_PDU_W_ESTIMATED) {
      printf("# applied to A x V where the PDU gives no W: set yours\npower_factor = %.2f\n",
             c->power_factor > 0 ? c->power_factor : 1.0);
      break;
    }
  if (c->oid_power[0] || c->oid_energy[0])
    printf("oid_power = %s\noid_energy = %s\noid_name = %s\noid_count = %s\n"
           "oid_total_power = %s\npower_scale = %g\nenergy_scale_joules = %g\n",
           c->oid_power, c->oid_energy, c->oid_name, c->oid_count, c->oid_total_power,
           c->power_scale > 0 ? c->power_scale : 1.0,
           c->energy_scale_joules > 0 ? c->energy_scale_joules : 3600.0);
  else if (c->snmp_version == 3)
    printf("version = 3\nv3_user = %s\nv3_level = %s\nv3_auth_proto = %s\nv3_auth_pass = ...\n"
           "v3_priv_proto = %s\nv3_priv_pass = ...\nv3_context = %s\n",
           c->v3_user, c->v3_level[0] ? c->v3_level : "authPriv",
           c->v3_auth_proto[0] ? c->v3_auth_proto : "SHA",
           c->v3_priv_proto[0] ? c->v3_priv_proto : "AES", c->v3_context);
  else
    printf("version = %s\ncommunity = %s\n", c->snmp_version == 1 ? "1" : "2c",
           c->community[0] ? c->community : "public");
}

static void probe_print_text(const struct erg_pdu_source_config *c, const struct erg_pdu_probe *r,
                             double step_seconds) {
  if (c->device[0])
    printf("device   %s (%s rtu)\n", c->device, c->driver);
  else
    printf("host     %s:%d (%s)\n", c->host, c->port, c->driver);
  printf("vendor   %s\nmodel    %s\nprofile  %s (%s)\n", r->vendor, r->model, r->profile,
         r->reason);
  if (r->sysdescr[0])
    printf("sysDescr %s\n", r->sysdescr);
  double step, total = probe_total_watts(r, &step);
  char st[32];
  if (isfinite(total))
    printf("total    %.1f W%s\n", total, probe_step_text(step, st, sizeof st));
  probe_print_tree(r);
  probe_print_counters(r, step_seconds);
  bool meter = strcmp(c->driver, "snmp") != 0;
  printf("\n# config: this %s, and a [node.NODE] per server it feeds (docs/config.md)\n"
         "[%s.NAME]\n",
         meter ? "meter" : "PDU", meter ? "meter" : "pdu");
  probe_print_source(c, r);
  probe_print_node(c, r);
}

int erg_pdu_probe_cli(int argc, char **argv) {
  /* BMCs have options and output of their own (cli/probe_ipmi.c,
   * cli/probe_redfish.c: a URL for host, credentials, TLS). */
  for (int i = 1; i < argc; i++) {
    const char *d = !strcmp(argv[i], "--driver") && i + 1 < argc ? argv[i + 1]
                    : !strncmp(argv[i], "--driver=", 9)          ? argv[i] + 9
                                                                 : "";
    if (!strcmp(d, "ipmi"))
      return erg_pdu_probe_ipmi_cli(argc, argv);
    if (!strcmp(d, "redfish"))
      return erg_pdu_probe_redfish_cli(argc, argv);
  }
  struct erg_pdu_source_config c;
  memset(&c, 0, sizeof c);
  c.timeout_seconds = 2.0;
  c.retries = 1;
  bool json = false;
  double step = 5;
  int rc = probe_parse(argc, argv, &c, &json, &step);
  if (rc) {
    if (rc == 1)
      probe_usage(stderr);
    return rc == 2 ? 0 : 1;
  }
  bool modbus = !strcmp(c.driver, "modbus");
  if (modbus) {
    if (!c.profile[0]) {
      fprintf(stderr, "erg pdu probe: --driver modbus needs --profile\n");
      return 1;
    }
    c.unit_id = c.unit_id ? c.unit_id : 1;
    c.nchannels = 1;
    c.channels[0] = c.unit_id;
    c.port = c.port ? c.port : 502;
  } else {
    c.port = c.port ? c.port : 161;
  }
  snprintf(c.name, sizeof c.name, "probe");
  struct erg_pdu_probe *res = calloc(1, sizeof *res);
  char why[512];
  if (!res) {
    fprintf(stderr, "erg pdu probe: out of memory\n");
    return 2;
  }
  rc = erg_pdu_probe(&c, res, why, sizeof why);
  if (rc == 0)
    json ? probe_print_json(&c, res, step) : probe_print_text(&c, res, step);
  else
    fprintf(stderr, "erg pdu probe: %s\n", why);
  free(res);
  /* A source refused as configured: a usage error when the driver or the
   * profile named is unknown. */
  if (rc == -1 && (strstr(why, "unknown driver") || strstr(why, "profile")))
    return 1;
  return rc == 0 ? 0 : 2;
}

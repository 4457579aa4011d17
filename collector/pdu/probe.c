// SPDX-License-Identifier: GPL-3.0-or-later
/* `erg pdu probe`'s library side: asks one PDU or meter what it is and
 * what it reads now, every level it offers, as ergd would read them (the
 * command prints it, cli/probe.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "erg_pdu.h"
#ifdef ERG_HAVE_SNMP
#include "profiles.h"
#endif

#ifdef ERG_HAVE_SNMP
/* Level order of the rows. */
static const int probe_order[] = {ERG_PDU_DEVICE, ERG_PDU_INLET,  ERG_PDU_PHASE,
                                  ERG_PDU_BANK,   ERG_PDU_OUTLET, ERG_PDU_SENSOR};
#define PROBE_NLEVELS (sizeof probe_order / sizeof probe_order[0])

_Static_assert((int)ERG_PROBE_NQ == ERG_Q_N + 1 && (int)ERG_PROBE_POWER == ERG_Q_POWER &&
                   (int)ERG_PROBE_VA == ERG_Q_VA && (int)ERG_PROBE_PF == ERG_Q_PF &&
                   (int)ERG_PROBE_CURRENT == ERG_Q_CURRENT &&
                   (int)ERG_PROBE_VOLTAGE == ERG_Q_VOLTAGE &&
                   (int)ERG_PROBE_ENERGY == ERG_Q_ENERGY &&
                   ERG_PDU_PROBE_OID_MAX == ERG_SNMP_OID_MAX,
               "the probe's quantities are the SNMP driver's, then the borrowed voltage");

/* Channel i's OIDs, factors and values, into the row. */
static void probe_detail(const struct erg_pdu_source *src, int i, struct erg_pdu_probe_row *row) {
  struct erg_snmp_chan_detail d;
  erg_pdu_snmp_chan_detail(src, i, &d);
  memcpy(row->oid, d.oid, sizeof row->oid);
  memcpy(row->scale, d.scale, sizeof row->scale);
  memcpy(row->value, d.value, sizeof row->value);
  memcpy(row->text_unit, d.unit, sizeof row->text_unit);
}

/* The physics across the levels of every row read (crosscheck.c): a row
 * whose power is impossible beside the others' shows none, and why. */
static void probe_cross_check(struct erg_pdu_probe *res) {
  static struct erg_pdu_xrow x[ERG_PDU_PROBE_MAX_ROWS];
  for (int i = 0; i < res->n; i++) {
    const struct erg_pdu_probe_row *r = &res->rows[i];
    double volts = isfinite(r->value[ERG_PROBE_VOLTAGE]) ? r->value[ERG_PROBE_VOLTAGE]
                                                         : r->value[ERG_PROBE_VOLTAGE_BORROWED];
    x[i] = (struct erg_pdu_xrow){.level = r->level,
                                 .unit = r->unit,
                                 .watts = r->have_detail ? r->r.watts : NAN,
                                 .apparent = isfinite(r->value[ERG_PROBE_VA])
                                                 ? r->value[ERG_PROBE_VA]
                                                 : r->value[ERG_PROBE_CURRENT] * volts,
                                 .measured = r->r.power_source == ERG_PDU_W_MEASURED};
  }
  char why[sizeof res->rows[0].problem];
  if (erg_pdu_cross_check(x, res->n, true, why, sizeof why) == 0)
    return;
  for (int i = 0; i < res->n; i++) {
    struct erg_pdu_probe_row *r = &res->rows[i];
    if (!x[i].refused)
      continue;
    r->r.watts = NAN;
    r->r.ok = isfinite(r->r.energy_joules);
    r->r.bad_value = true;
    r->value[ERG_PROBE_POWER] = NAN;
    snprintf(r->problem, sizeof r->problem, "power: %.*s", (int)sizeof r->problem - 8, x[i].reason);
  }
}

/* Every row of every level the device answers, then their readings, in
 * polls of at most ERG_PDU_MAX_CHANNELS channels (as ergd would read them). */
static int probe_snmp(struct erg_pdu_source *src, struct erg_pdu_probe *res, char *why,
                      size_t whylen) {
  struct erg_snmp_ident id;
  if (erg_pdu_snmp_identify(src, &id, why, whylen))
    return -1;
  res->snmp = true;
  snprintf(res->vendor, sizeof res->vendor, "%s", id.prof->vendor);
  snprintf(res->model, sizeof res->model, "%s", id.model);
  snprintf(res->profile, sizeof res->profile, "%s", id.prof->name);
  snprintf(res->reason, sizeof res->reason, "%s", id.why);
  snprintf(res->sysoid, sizeof res->sysoid, "%s", id.sysoid);
  snprintf(res->sysdescr, sizeof res->sysdescr, "%s", id.sysdescr);
  for (size_t k = 0; k < PROBE_NLEVELS; k++) {
    int l = probe_order[k], nums[ERG_PDU_PROBE_MAX_ROWS];
    static char units[ERG_PDU_PROBE_MAX_ROWS][ERG_PDU_UNIT_MAX];
    int n =
        erg_pdu_snmp_level_rows(src, l, nums, units, ERG_PDU_PROBE_MAX_ROWS - res->n, why, whylen);
    if (n < 0)
      return -1;
    res->absent[l] = n == 0;
    static char names[ERG_PDU_PROBE_MAX_ROWS][ERG_PDU_PROBE_NAMELEN];
    if (n > 0 && erg_pdu_snmp_row_names(src, l, nums, (const char(*)[ERG_PDU_UNIT_MAX])units, n,
                                        &names[0][0], ERG_PDU_PROBE_NAMELEN, why, whylen))
      return -1;
    bool multi = false; /* rows of more than one unit: each says its unit */
    for (int i = 1; i < n; i++)
      multi |= strcmp(units[i], units[0]) != 0;
    for (int i = 0; i < n; i++) {
      struct erg_pdu_probe_row *r = &res->rows[res->n++];
      r->level = l;
      r->index = nums[i];
      snprintf(r->unit, sizeof r->unit, "%.*s", (int)sizeof r->unit - 1, units[i]);
      r->multi_unit = multi;
      snprintf(r->name, sizeof r->name, "%.*s", ERG_PDU_PROBE_NAMELEN - 1,
               i < ERG_PDU_MAX_CHANNELS ? names[i] : "");
    }
  }
  if (res->n == 0) {
    snprintf(why, whylen, "%s: profile %s: no metering level answered", src->cfg.host,
             id.prof->name);
    return -1;
  }
  int good = 0;
  for (int first = 0; first < res->n; first += ERG_PDU_MAX_CHANNELS) {
    int k = res->n - first < ERG_PDU_MAX_CHANNELS ? res->n - first : ERG_PDU_MAX_CHANNELS;
    struct erg_pdu_reading r[ERG_PDU_MAX_CHANNELS];
    src->cfg.nchannels = k;
    for (int i = 0; i < k; i++) {
      src->cfg.channels[i] = res->rows[first + i].index;
      snprintf(src->cfg.units[i], ERG_PDU_UNIT_MAX, "%s", res->rows[first + i].unit);
      src->cfg.levels[i] = (unsigned char)res->rows[first + i].level;
    }
    erg_pdu_snmp_want_all(src);
    why[0] = '\0';
    if (erg_pdu_source_poll(src, r, why, whylen))
      continue;
    good++;
    for (int i = 0; i < k; i++) {
      struct erg_pdu_probe_row *row = &res->rows[first + i];
      row->r = r[i];
      row->have_detail = true;
      probe_detail(src, i, row);
      if (erg_pdu_source_bad_value(src, i, row->problem, sizeof row->problem))
        row->problem[0] = '\0';
    }
  }
  if (good)
    probe_cross_check(res);
  return good ? 0 : -1;
}
#endif

static int probe_modbus(struct erg_pdu_source *src, struct erg_pdu_probe *res, char *why,
                        size_t whylen) {
  bool sim = !strcmp(src->cfg.profile, "erg-sim"), gen = !strcmp(src->cfg.profile, "generic");
  snprintf(res->vendor, sizeof res->vendor, "%s",
           sim   ? "erg-pdusim (SIMULATED)"
           : gen ? "(generic register spec)"
                 : "Eastron");
  snprintf(res->model, sizeof res->model, "%s", src->cfg.profile);
  snprintf(res->profile, sizeof res->profile, "%s", src->cfg.profile);
  snprintf(res->reason, sizeof res->reason, "given with --profile");
  res->n = 1;
  res->rows[0].level = ERG_PDU_OUTLET;
  res->rows[0].index = src->cfg.channels[0];
  snprintf(res->rows[0].name, ERG_PDU_PROBE_NAMELEN, "unit %d", src->cfg.channels[0]);
  return erg_pdu_source_poll(src, &res->rows[0].r, why, whylen);
}

int erg_pdu_probe(const struct erg_pdu_source_config *c, struct erg_pdu_probe *res, char *why,
                  size_t whylen) {
  struct erg_pdu_source src;
  memset(res, 0, sizeof *res);
  why[0] = '\0';
  if (erg_pdu_source_open(&src, c, why, whylen))
    return -1;
  int rc = -1;
  if (!strcmp(c->driver, "modbus"))
    rc = probe_modbus(&src, res, why, whylen);
#ifdef ERG_HAVE_SNMP
  else
    rc = probe_snmp(&src, res, why, whylen);
#endif
  erg_pdu_source_close(&src);
  if (rc != 0 && !why[0])
    snprintf(why, whylen, "failed");
  return rc == 0 ? 0 : -2;
}

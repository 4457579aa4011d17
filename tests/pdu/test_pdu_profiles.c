// SPDX-License-Identifier: GPL-3.0-or-later
/* Profile data: sysObjectID auto-selection, OID templates, generic config,
 * name patterns of named-variable tables. */
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "profiles.h"
#include "snmp_int.h"

static const char *pick(const char *sysoid) {
  const struct erg_snmp_profile *p = erg_snmp_profile_match(sysoid, NULL);
  return p ? p->name : "(none)";
}

/* sysObjectID is a hint that orders the candidates; whole arcs only. */
static void test_match_by_sysobjectid(void **st) {
  (void)st;
  assert_string_equal(pick("1.3.6.1.4.1.318.1.3.4.6"), "apc-rpdu2");
  assert_string_equal(pick("1.3.6.1.4.1.13742.6"), "raritan-pdu2");
  assert_string_equal(pick(".1.3.6.1.4.1.13742.6"), "raritan-pdu2"); /* leading dot */
  assert_string_equal(pick("1.3.6.1.4.1.1718.4"), "servertech-sentry4");
  assert_string_equal(pick("1.3.6.1.4.1.534.6.6.7"), "eaton-epdu");
  assert_string_equal(pick("1.3.6.1.4.1.21239.5.2"), "geist-v5");
  assert_string_equal(pick("1.3.6.1.4.1.2606.7"), "rittal-cmc3");
  assert_string_equal(pick("1.3.6.1.4.1.3808.1.1.6"), "cyberpower-epdu2");
  assert_string_equal(pick("1.3.6.1.4.1.232.165.4"), "hpe-pdr");
  assert_string_equal(pick("1.3.6.1.4.1.42610.1.4.4"), "powertek-pwt");
  assert_string_equal(pick("1.3.6.1.4.1.318.1.3.24.2"), "apc-isx-dist");
  assert_string_equal(pick("1.3.6.1.4.1.318.1.3.4.6"), "apc-rpdu2"); /* not 318.1.3.24 */
  assert_string_equal(pick("1.3.6.1.4.1.3180.1"), "(none)");
  assert_string_equal(pick(""), "(none)");
  const struct erg_snmp_profile *c[16];
  size_t n = erg_snmp_profile_candidates("1.3.6.1.4.1.476.1.42", c, 16);
  bool liebert = false;
  for (size_t i = 0; i < n; i++)
    liebert |= !strcmp(c[i]->name, "liebert-mph2");
  assert_true(liebert);
  assert_int_equal(erg_snmp_profile_candidates("1.3.6.1.4.1.3180.1", c, 16), 0);
}

static bool template_ok(const char *t) {
  int pct = 0, star = 0;
  for (const char *p = t; *p; p++) {
    if (p[0] == '%' && p[1] == 'd')
      pct++, p++;
    else if (p[0] == '*' && p > t && p[-1] == '.' && (p[1] == '.' || !p[1]) && (!pct || !p[1]))
      star++; /* an arc before "%d", or the index tail last */
    else if (!(*p == '.' || (*p >= '0' && *p <= '9')))
      return false;
  }
  return pct <= 1 && star <= 2 && t[0] && strstr(t, "..") == NULL;
}

/* Every profile of every vendor file: unique name, well-formed templates,
 * a positive scale on every value column, something to read power from,
 * and the standard ENTITY-SENSOR-MIB fallback last. */
static void test_every_profile_is_consistent(void **st) {
  (void)st;
  const struct erg_snmp_profile *p, *last = NULL;
  size_t n = 0;
  for (size_t i = 0; (p = erg_snmp_profile_at(i)); i++, n++) {
    last = p;
    assert_ptr_equal(erg_snmp_profile_find(p->name), p);
    assert_non_null(p->vendor);
    assert_non_null(p->mib);
    for (int k = 0; k < ERG_SNMP_MAX_SYSOIDS && p->sysoids[k]; k++)
      assert_true(template_ok(p->sysoids[k]) && !strstr(p->sysoids[k], "%d"));
    bool power = false;
    if (p->names) { /* columns of a named-variable table: no "%d" */
      const struct erg_snmp_names *t = p->names;
      assert_true(t->name && template_ok(t->name) && !strstr(t->name, "%d"));
      assert_true(t->value && template_ok(t->value) && !strstr(t->value, "%d"));
      const char *opt[] = {t->scale, t->unit, t->text, t->stamp};
      for (size_t k = 0; k < sizeof opt / sizeof opt[0]; k++)
        assert_true(!opt[k] || (template_ok(opt[k]) && !strstr(opt[k], "%d")));
    }
    for (int l = 0; l < ERG_PDU_NLEVELS; l++) {
      const struct erg_snmp_level *lv = &p->lv[l];
      for (int q = 0; q < ERG_Q_N; q++) {
        const struct erg_snmp_col *c = &lv->q[q];
        if (c->var) { /* a named variable: only in a profile with the table, not both */
          if (!p->names || c->oid || !c->var[0] || (q != ERG_Q_NAME && !(c->scale > 0)))
            fail_msg("%s %s variable %d: %s", p->name, erg_pdu_level_name(l), q, c->var);
          if (q == ERG_Q_NAME && !p->names->text)
            fail_msg("%s: a label variable without a text column", p->name);
          continue;
        }
        if (!c->oid)
          continue;
        if (!template_ok(c->oid))
          fail_msg("%s %s column %d: bad template %s", p->name, erg_pdu_level_name(l), q, c->oid);
        if (q != ERG_Q_NAME && !(c->scale > 0))
          fail_msg("%s %s column %d: scale %g", p->name, erg_pdu_level_name(l), q, c->scale);
        assert_true(!c->digits || template_ok(c->digits));
        assert_true(!c->si_prefix || template_ok(c->si_prefix));
      }
      static const int value_q[] = {ERG_Q_POWER, ERG_Q_VA, ERG_Q_CURRENT, ERG_Q_ENERGY};
      for (size_t k = 0; k < sizeof value_q / sizeof value_q[0]; k++)
        power |= lv->q[value_q[k]].oid || lv->q[value_q[k]].var;
      assert_true(!lv->count || (template_ok(lv->count) && !strstr(lv->count, "%d")));
      assert_true(!lv->filter || template_ok(lv->filter));
    }
    if (!power)
      fail_msg("profile %s reads no power at any level", p->name);
    /* Firmware scales: a column the profile has, a positive scale, a reason. */
    for (int k = 0; k < ERG_SNMP_MAX_FW && p->fw[k].descr; k++) {
      const struct erg_snmp_fw_scale *f = &p->fw[k];
      if (!f->descr[0] || f->level < 0 || f->level >= ERG_PDU_NLEVELS || f->q <= ERG_Q_NAME ||
          f->q >= ERG_Q_N || !p->lv[f->level].q[f->q].oid || !(f->scale > 0) || !f->why ||
          !f->why[0])
        fail_msg("%s: firmware scale %d is not a column of the profile with a scale and a reason",
                 p->name, k);
    }
  }
  assert_true(n >= 8);
  assert_string_equal(last->name, "entity-sensor");
  assert_null(erg_snmp_profile_find("nope"));
}

static void test_oid_split(void **st) {
  (void)st;
  char pre[64];
  const char *suf;
  assert_int_equal(
      erg_snmp_oid_split("1.3.6.1.4.1.13742.6.5.4.3.1.4.1.%d.5", pre, sizeof pre, &suf), 0);
  assert_string_equal(pre, "1.3.6.1.4.1.13742.6.5.4.3.1.4.1");
  assert_string_equal(suf, ".5");
  assert_int_equal(erg_snmp_oid_split(".1.2.%d", pre, sizeof pre, &suf), 0);
  assert_string_equal(pre, "1.2");
  assert_string_equal(suf, "");
  assert_int_equal(erg_snmp_oid_split("1.2.3.0", pre, sizeof pre, &suf), -1); /* scalar */
  assert_string_equal(erg_pdu_level_name(ERG_PDU_BANK), "bank");
  assert_string_equal(erg_pdu_level_name(ERG_PDU_OUTLET), "outlet");
}

static void test_oid_expand(void **st) {
  (void)st;
  char o[64];
  assert_int_equal(erg_snmp_oid_expand("1.3.6.1.4.1.13742.6.5.4.3.1.4.1.%d.5", 17, o, sizeof o), 0);
  assert_string_equal(o, "1.3.6.1.4.1.13742.6.5.4.3.1.4.1.17.5");
  assert_int_equal(erg_snmp_oid_expand("1.2.%d", 3, o, 6), 0);
  assert_string_equal(o, "1.2.3");
  assert_int_equal(erg_snmp_oid_expand("1.2.%d", 33, o, 6), -1); /* does not fit */
}

static void test_generic_profile(void **st) {
  (void)st;
  struct erg_pdu_source_config c;
  struct erg_snmp_profile p;
  char why[128];
  memset(&c, 0, sizeof c);
  assert_int_equal(erg_snmp_profile_generic(&c, &p, why, sizeof why), -1);
  snprintf(c.oid_energy, sizeof c.oid_energy, "1.3.6.1.4.1.9.9.%%d");
  assert_int_equal(erg_snmp_profile_generic(&c, &p, why, sizeof why), 0);
  assert_null(p.lv[ERG_PDU_OUTLET].q[ERG_Q_POWER].oid);
  assert_float_equal(p.lv[ERG_PDU_OUTLET].q[ERG_Q_ENERGY].scale, 3600.0, 0); /* Wh by default */
  c.energy_scale_joules = 360e3;
  erg_snmp_profile_generic(&c, &p, why, sizeof why);
  assert_float_equal(p.lv[ERG_PDU_OUTLET].q[ERG_Q_ENERGY].scale, 360e3, 0);
  snprintf(c.oid_power, sizeof c.oid_power, "1.3.%%d.%%d");
  assert_int_equal(erg_snmp_profile_generic(&c, &p, why, sizeof why), -1);
  snprintf(c.oid_power, sizeof c.oid_power, "1.3.%%n");
  assert_int_equal(erg_snmp_profile_generic(&c, &p, why, sizeof why), -1);
}

/* Name patterns of named-variable tables: literal text, one "%d" for the
 * entity number (leading zeros allowed), '|' between alternatives. */
static void test_name_match(void **st) {
  (void)st;
  int n = -1;
  assert_true(
      erg_snmp_name_match("Phase L%d.Power.Active.Value", "Phase L2.Power.Active.Value", &n));
  assert_int_equal(n, 2);
  assert_true(erg_snmp_name_match("Sockets.Socket %d.Current.Value",
                                  "Sockets.Socket 07.Current.Value", &n));
  assert_int_equal(n, 7);
  assert_true(erg_snmp_name_match("Sockets.Socket %d.Current.Value",
                                  "Sockets.Socket 124.Current.Value", &n));
  assert_int_equal(n, 124);
  assert_true(erg_snmp_name_match("Total.Power.Active.Value", "Total.Power.Active.Value", &n));
  assert_int_equal(n, 1); /* no "%d": entity 1 */
  /* The whole name, not a prefix or a suffix of it. */
  assert_false(
      erg_snmp_name_match("Total.Energy.Active.Value", "Total.Energy.Active.Value.Runtime", &n));
  assert_false(
      erg_snmp_name_match("Total.Energy.Active.Value", "Total.Energy.Active Custom.Value", &n));
  assert_false(erg_snmp_name_match("Phase L%d.Voltage.Value", "Phase L1.Voltage.THD.Value", &n));
  assert_false(erg_snmp_name_match("Phase L%d.Voltage.Value", "Phase L.Voltage.Value", &n));
  assert_false(erg_snmp_name_match("Phase L%d.Voltage.Value", "Phase Lx.Voltage.Value", &n));
  assert_false(erg_snmp_name_match("Phase L%d.Voltage.Value", "Phase L0.Voltage.Value", &n));
  assert_false(erg_snmp_name_match("Phase L%d.Voltage.Value", "Phase L99999999.Voltage.Value", &n));
  assert_false(erg_snmp_name_match("total.power.active.value", "Total.Power.Active.Value", &n));
  assert_false(erg_snmp_name_match("Total.Power", "", &n));
  assert_true(erg_snmp_name_match("%d", "42", &n));
  assert_int_equal(n, 42);
  /* Alternatives: any of them; an empty one matches nothing. */
  const char *alt = "Total.Power.Active.Value|Unit.Power.Active.Value";
  assert_true(erg_snmp_name_match(alt, "Unit.Power.Active.Value", &n));
  assert_true(erg_snmp_name_match(alt, "Total.Power.Active.Value", &n));
  assert_false(erg_snmp_name_match(alt, "Total.Power.Active.Value|Unit.Power.Active.Value", &n));
  assert_false(erg_snmp_name_match("A||B", "", &n));
  assert_true(erg_snmp_name_match("Outlet %d.W|Socket %d.W", "Socket 3.W", &n));
  assert_int_equal(n, 3);
}

/* The Rittal profile's variables, as a CMC-III PDU names them. */
static void test_rittal_names(void **st) {
  (void)st;
  const struct erg_snmp_profile *p = erg_snmp_profile_find("rittal-cmc3");
  assert_non_null(p);
  assert_non_null(p->names);
  static const struct {
    const char *name;
    int level, entity, q; /* level -1: not a reading erg uses */
  } want[] = {
      {"Total.Power.Active.Value", ERG_PDU_DEVICE, 1, ERG_Q_POWER},
      {"Unit.Power.Active.Value", ERG_PDU_DEVICE, 1, ERG_Q_POWER},
      {"Total.Energy.Active.Value", ERG_PDU_DEVICE, 1, ERG_Q_ENERGY},
      {"Total.Energy.Active Custom.Value", -1, 0, 0}, /* resettable by the user */
      {"Total.Energy.Active.Runtime.Value", -1, 0, 0},
      {"Total.Neutral Current.Value", -1, 0, 0},
      {"Phase L3.Power.Active.Value", ERG_PDU_PHASE, 3, ERG_Q_POWER},
      {"Phase L1.Power.Apparent.Value", ERG_PDU_PHASE, 1, ERG_Q_VA},
      {"Phase L2.Power.Factor.Value", ERG_PDU_PHASE, 2, ERG_Q_PF},
      {"Phase L2.Power.Reactive.Value", -1, 0, 0},
      {"Phase L1.Current.Value", ERG_PDU_PHASE, 1, ERG_Q_CURRENT},
      {"Phase L1.Current.THD.Value", -1, 0, 0},
      {"Phase L1.Voltage.Value", ERG_PDU_PHASE, 1, ERG_Q_VOLTAGE},
      {"Phase L1.Energy.Active.Value", ERG_PDU_PHASE, 1, ERG_Q_ENERGY},
      {"Phase L1.Energy.Apparent.Value", -1, 0, 0},
      {"Phase L1.Power.Active.SetPtHighAlarm", -1, 0, 0},
      {"Sockets.Socket 01.General.DescName", ERG_PDU_OUTLET, 1, ERG_Q_NAME},
      {"Sockets.Socket 12.Power.Active.Value", ERG_PDU_OUTLET, 12, ERG_Q_POWER},
      {"Sockets.Socket 12.Energy.Active.Value", ERG_PDU_OUTLET, 12, ERG_Q_ENERGY},
      {"Sockets.Socket 01.General.Relay", -1, 0, 0},
      {"System Health.Current.Status", -1, 0, 0},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    int l = -1, e = -1, q = -1;
    bool got = erg_snmp_names_classify(p, want[i].name, &l, &e, &q);
    if (got != (want[i].level >= 0) ||
        (got && (l != want[i].level || e != want[i].entity || q != want[i].q)))
      fail_msg("%s: got %d (%s %d q%d)", want[i].name, got, erg_pdu_level_name(l), e, q);
  }
  unsigned lv = erg_snmp_profile_levels("rittal-cmc3");
  assert_int_equal(lv, 1u << ERG_PDU_DEVICE | 1u << ERG_PDU_PHASE | 1u << ERG_PDU_OUTLET);
  /* A profile without a named-variable table classifies nothing. */
  int l, e, q;
  assert_false(erg_snmp_names_classify(erg_snmp_profile_find("apc-rpdu2"),
                                       "Total.Power.Active.Value", &l, &e, &q));
}

/* Text is a reading only when all of it is one number (issue 34). */
static void test_text_number(void **st) {
  (void)st;
  static const struct {
    const char *t;
    double want; /* NAN: no reading */
  } c[] = {{"230", 230}, {" 4.25 ", 4.25}, {"-1", -1},     {"1e3", 1000}, {"12<script>", NAN},
           {"n/a", NAN}, {"0x10", NAN},    {"inf", NAN},   {"nan", NAN},  {"", NAN},
           {"  ", NAN},  {"0.061kW", NAN}, {"1e", NAN},    {".5", 0.5},   {"5.", 5},
           {"+7", 7},    {"1 2", NAN},     {"1e999", NAN}, {"-", NAN},    {".", NAN}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    double got = erg_snmp_text_number((const unsigned char *)c[i].t, strlen(c[i].t));
    if (isnan(c[i].want))
      assert_true(isnan(got));
    else
      assert_true(got == c[i].want);
  }
  /* trailing NULs, as some agents pad */
  assert_true(erg_snmp_text_number((const unsigned char *)"42\0\0", 4) == 42);
  /* past the buffer: no reading, not a prefix */
  char longtext[64];
  memset(longtext, '1', sizeof longtext);
  assert_true(isnan(erg_snmp_text_number((const unsigned char *)longtext, sizeof longtext)));
}

/* Text with its unit: the whole text one number and the unit, the
 * prefix deciding the scale; anything else is no reading (issue 34). */
static void test_text_unit(void **st) {
  (void)st;
  static const struct {
    const char *t, *unit;
    double want; /* NAN: no reading */
  } c[] = {{"232.6V", "V", 232.6},  {"0.30A", "A", 0.3},     {"0.061kW", "W", 61},
           {"2.28kWh", "Wh", 2280}, {"0.856", "", 0.856},    {" 61 W ", "W", 61},
           {"300mA", "A", 0.3},     {"1.5MWh", "Wh", 1.5e6}, {"12<script>", "W", NAN},
           {"12", "W", NAN},        {"12 V", "W", NAN},      {"12kWx", "W", NAN},
           {"12kWh", "W", NAN},     {"12GW", "W", NAN},      {"kW", "W", NAN},
           {"-", "V", NAN},         {"N/A", "A", NAN},       {"0.856x", "", NAN},
           {"12  kW", "W", 12000},  {"1e3W", "W", 1000},     {"12KW", "W", NAN},
           {"12VA", "W", NAN},      {"12W", "VA", NAN},      {"5mW", "W", 0.005}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    double got = erg_snmp_text_unit((const unsigned char *)c[i].t, strlen(c[i].t), c[i].unit);
    if (isnan(c[i].want) ? !isnan(got) : fabs(got - c[i].want) > 1e-9 * fabs(c[i].want))
      fail_msg("'%s' in '%s': %g, want %g", c[i].t, c[i].unit, got, c[i].want);
  }
}

/* OID order as a GETNEXT must answer: arc by arc, numerically. */
static void test_oid_after(void **st) {
  (void)st;
  assert_true(erg_snmp_oid_after("1.3.6.1.10", "1.3.6.1.9"));
  assert_true(erg_snmp_oid_after("1.3.6.1.9.1", "1.3.6.1.9"));
  assert_true(erg_snmp_oid_after(".1.3.6.2", "1.3.6.1.99"));
  assert_false(erg_snmp_oid_after("1.3.6.1.9", "1.3.6.1.9"));  /* does not move on */
  assert_false(erg_snmp_oid_after("1.3.6.1.9", "1.3.6.1.10")); /* loops back */
  assert_false(erg_snmp_oid_after("1.3.6.1", "1.3.6.1.9"));    /* back to a parent */
  assert_false(erg_snmp_oid_after("1.3.x.1", "1.3.6"));        /* not an OID */
}

static void physics(double w, double va, double pf, double a, double v, int level, double *x,
                    double *fix, char *note, size_t len) {
  for (int q = 0; q <= ERG_Q_N; q++)
    x[q] = NAN;
  x[ERG_Q_POWER] = w, x[ERG_Q_VA] = va, x[ERG_Q_PF] = pf, x[ERG_Q_CURRENT] = a;
  x[ERG_Q_VOLTAGE] = v;
  erg_snmp_physics(x, fix, level, 0, note, len);
}

/* Impossible values are rescaled where one power of ten fits, else refused
 * with the reason; plausible ones pass untouched. */
static void test_physics(void **st) {
  (void)st;
  double x[ERG_Q_N + 1], fix[ERG_Q_N + 1];
  char note[200];
  physics(230, 240, 0.96, 1.04, 230, ERG_PDU_OUTLET, x, fix, note, sizeof note);
  assert_string_equal(note, "");
  assert_true(x[ERG_Q_POWER] == 230 && fix[ERG_Q_VOLTAGE] == 1.0);
  physics(NAN, NAN, NAN, 1.0, 0, ERG_PDU_OUTLET, x, fix, note, sizeof note); /* a dead line */
  assert_string_equal(note, "");
  /* volts 1000x low (firmware against its MIB) */
  physics(NAN, NAN, NAN, 1.0, 0.244, ERG_PDU_OUTLET, x, fix, note, sizeof note);
  assert_true(fabs(x[ERG_Q_VOLTAGE] - 244) < 1e-9 && fix[ERG_Q_VOLTAGE] == 1000);
  assert_non_null(strstr(note, "voltage: 0.244 V is impossible"));
  assert_non_null(strstr(note, "read as 244 V"));
  /* PF in percent: 95 -> 0.95, not 0.095 */
  physics(100, 110, 95, NAN, 230, ERG_PDU_OUTLET, x, fix, note, sizeof note);
  assert_true(fabs(x[ERG_Q_PF] - 0.95) < 1e-12);
  /* volts that no power of ten explains: refused */
  physics(NAN, NAN, NAN, 1, 50, ERG_PDU_OUTLET, x, fix, note, sizeof note);
  assert_true(isnan(x[ERG_Q_VOLTAGE]) && isnan(fix[ERG_Q_VOLTAGE]));
  assert_non_null(strstr(note, "no scale explains it"));
  /* a Gauge32's all-ones and 1.8e19 W: refused, never measured */
  physics(4294967295.0, NAN, NAN, NAN, NAN, ERG_PDU_OUTLET, x, fix, note, sizeof note);
  assert_true(isnan(x[ERG_Q_POWER]));
  assert_non_null(strstr(note, "power: 4294967295 W is impossible (0-20000 W)"));
  physics(1.8e19, NAN, NAN, NAN, NAN, ERG_PDU_INLET, x, fix, note, sizeof note);
  assert_true(isnan(x[ERG_Q_POWER]));
  assert_non_null(strstr(note, "0-100000 W"));
  /* W well above VA: neither is used */
  physics(2000, 200, NAN, 1, 230, ERG_PDU_OUTLET, x, fix, note, sizeof note);
  assert_true(isnan(x[ERG_Q_POWER]) && isnan(x[ERG_Q_VA]) && x[ERG_Q_CURRENT] == 1);
  assert_non_null(strstr(note, "more than the apparent power"));
  /* rounding of small readings is no conflict */
  physics(3, 0, NAN, NAN, NAN, ERG_PDU_OUTLET, x, fix, note, sizeof note);
  assert_true(x[ERG_Q_POWER] == 3);
}

/* A GETNEXT over a fixed list of rows, for erg_snmp_wild_resolve. */
static int fake_next(void *ctx, const char *oid, char *got, size_t len) {
  const char *const *rows = ctx;
  for (; *rows; rows++)
    if (erg_snmp_oid_under(*rows, oid)) {
      snprintf(got, len, "%s", *rows);
      return 0;
    }
  return -1;
}

/* "*" index arcs: the level's first row decides (Liebert's receptacles of
 * PDU 1's branch 2), every template of the level takes it, a level without
 * rows keeps 1 per "*" (Liebert's inlets here), a profile without "*" is
 * left alone. */
static void test_wild_arcs(void **st) {
  (void)st;
  const struct erg_snmp_profile *lb = erg_snmp_profile_find("liebert-mph2");
  assert_non_null(lb);
  assert_non_null(strchr(lb->lv[ERG_PDU_OUTLET].q[ERG_Q_POWER].oid, '*'));
  static struct erg_snmp_wild_store store;
  struct erg_snmp_profile out;
  char note[160];
  const char *rows[] = {"1.3.6.1.4.1.476.1.42.3.8.50.20.1.10.1.2.1", NULL};
  /* inlet, phase, bank and outlet have "*" arcs (the PDU, never assumed 1) */
  assert_int_equal(erg_snmp_wild_resolve(lb, &out, &store, fake_next, rows, note, sizeof note), 4);
  assert_string_equal(out.lv[ERG_PDU_OUTLET].q[ERG_Q_POWER].oid,
                      "1.3.6.1.4.1.476.1.42.3.8.50.20.1.65.1.2.%d");
  assert_string_equal(out.lv[ERG_PDU_OUTLET].count, "1.3.6.1.4.1.476.1.42.3.8.40.20.1.60.1.2");
  assert_string_equal(out.lv[ERG_PDU_INLET].q[ERG_Q_POWER].oid,
                      "1.3.6.1.4.1.476.1.42.3.8.30.20.1.65.1.%d");
  assert_non_null(strstr(note, "outlet index arcs 1.2"));
  const char *other[] = {"1.3.6.1.4.1.476.1.42.3.8.50.20.1.10.3.1.1",
                         "1.3.6.1.4.1.476.1.42.3.8.30.20.1.65.3.1", NULL};
  assert_int_equal(erg_snmp_wild_resolve(lb, &out, &store, fake_next, other, note, sizeof note), 4);
  assert_string_equal(out.lv[ERG_PDU_OUTLET].q[ERG_Q_ENERGY].oid,
                      "1.3.6.1.4.1.476.1.42.3.8.50.20.1.85.3.1.%d");
  assert_string_equal(out.lv[ERG_PDU_INLET].q[ERG_Q_VA].oid,
                      "1.3.6.1.4.1.476.1.42.3.8.30.20.1.90.3.%d");
  const char *none[] = {NULL};
  assert_int_equal(erg_snmp_wild_resolve(lb, &out, &store, fake_next, none, note, sizeof note), 4);
  assert_string_equal(out.lv[ERG_PDU_OUTLET].q[ERG_Q_NAME].oid,
                      "1.3.6.1.4.1.476.1.42.3.8.50.20.1.10.1.1.%d");
  const struct erg_snmp_profile *st4 = erg_snmp_profile_find("apc-rpdu2");
  assert_int_equal(erg_snmp_wild_resolve(st4, &out, &store, fake_next, rows, note, sizeof note), 0);
  /* detection GETNEXTs from the arcs before the first "*" */
  char start[ERG_SNMP_OID_MAX];
  bool scalar;
  assert_int_equal(
      erg_snmp_probe_start(lb->lv[ERG_PDU_OUTLET].q[ERG_Q_NAME].oid, start, sizeof start, &scalar),
      0);
  assert_string_equal(start, "1.3.6.1.4.1.476.1.42.3.8.50.20.1.10");
  assert_false(scalar);
}

/* Units (issue 34 item 1): a channel's unit arcs fill the "*"s, a row's
 * OID gives them back; two arcs (Sentry4 unit.cord) resolved from the
 * first row; a unit with the wrong number of arcs expands to nothing. */
static void test_units(void **st) {
  (void)st;
  char o[ERG_SNMP_OID_MAX], unit[ERG_PDU_UNIT_MAX];
  int n;
  assert_int_equal(erg_snmp_oid_expand_unit("1.2.*.%d.5", "210", 7, o, sizeof o), 0);
  assert_string_equal(o, "1.2.210.7.5");
  assert_int_equal(erg_snmp_oid_expand_unit("1.2.*.*.%d", "1.2", 3, o, sizeof o), 0);
  assert_string_equal(o, "1.2.1.2.3");
  assert_int_equal(erg_snmp_oid_expand_unit("1.2.*.*.%d", "1", 3, o, sizeof o), -1);
  assert_int_equal(erg_snmp_oid_expand_unit("1.2.*.%d", "1.2", 3, o, sizeof o), -1);
  assert_int_equal(erg_snmp_oid_expand_unit("1.2.*.%d", "", 3, o, sizeof o), -1);
  assert_int_equal(erg_snmp_oid_expand_unit("1.2.9.%d", NULL, 3, o, sizeof o), 0);
  assert_string_equal(o, "1.2.9.3");
  assert_true(erg_snmp_oid_match("1.2.*.%d.5", "1.2.210.7.5", unit, sizeof unit, &n));
  assert_string_equal(unit, "210");
  assert_int_equal(n, 7);
  assert_false(erg_snmp_oid_match("1.2.*.%d.5", "1.2.210.7.6", unit, sizeof unit, &n));
  assert_false(erg_snmp_oid_match("1.2.*.%d.5", "1.2.210.7.5.1", unit, sizeof unit, &n));
  assert_true(erg_snmp_oid_match("1.2.*.*.%d", "1.2.1.2.16", unit, sizeof unit, &n));
  assert_string_equal(unit, "1.2");
  assert_int_equal(n, 16);
  assert_true(erg_snmp_oid_match("1.2.*.5", "1.2.3.5", unit, sizeof unit, &n));
  assert_string_equal(unit, "3");
  assert_int_equal(n, 1);
  assert_true(erg_pdu_unit_ok("210"));
  assert_true(erg_pdu_unit_ok("1.2"));
  assert_true(erg_pdu_unit_ok("0"));
  assert_false(erg_pdu_unit_ok("1.2.3"));
  assert_false(erg_pdu_unit_ok("65536"));
  assert_false(erg_pdu_unit_ok("1."));
  assert_false(erg_pdu_unit_ok(""));
  assert_false(erg_pdu_unit_ok("a"));
  const struct erg_snmp_profile *s4 = erg_snmp_profile_find("servertech-sentry4");
  assert_non_null(s4);
  assert_int_equal(erg_snmp_level_wilds(&s4->lv[ERG_PDU_OUTLET]), 2);
  assert_int_equal(erg_snmp_level_wilds(&s4->lv[ERG_PDU_INLET]), 1);
  static struct erg_snmp_wild_store store;
  struct erg_snmp_profile out;
  char note[200];
  const char *rows[] = {"1.3.6.1.4.1.1718.4.1.8.2.1.3.1.2.1", NULL};
  assert_true(erg_snmp_wild_resolve(s4, &out, &store, fake_next, rows, note, sizeof note) > 0);
  assert_string_equal(store.unit[ERG_PDU_OUTLET], "1.2");
  assert_string_equal(out.lv[ERG_PDU_OUTLET].q[ERG_Q_POWER].oid,
                      "1.3.6.1.4.1.1718.4.1.8.3.1.7.1.2.%d");
  assert_non_null(strstr(note, "outlet index arcs 1.2"));
  struct erg_pdu_source_config cfg = {.nchannels = 2, .channels = {5, 5}};
  snprintf(cfg.units[1], sizeof cfg.units[1], "210");
  char id[32];
  assert_string_equal(erg_pdu_channel_text(&cfg, 0, id, sizeof id), "5");
  assert_string_equal(erg_pdu_channel_text(&cfg, 1, id, sizeof id), "210.5");
}

/* Physics across levels (issue 34 item 3): a level a power of ten off
 * the one above it is refused on the side its own V x A does not bear
 * out; per chain member; phases too small only when every row was read. */
static void test_cross_check(void **st) {
  (void)st;
  char why[200];
#define XR(l, u, w, a, m)                                                                          \
  { .level = (l), .unit = (u), .watts = (w), .apparent = (a), .measured = (m) }
  struct erg_pdu_xrow a[] = {XR(ERG_PDU_INLET, "", 500, 520, true),
                             XR(ERG_PDU_OUTLET, "", 1000, NAN, true),
                             XR(ERG_PDU_OUTLET, "", 1000, NAN, true)};
  assert_int_equal(erg_pdu_cross_check(a, 3, false, why, sizeof why), 2);
  assert_false(a[0].refused);
  assert_true(a[1].refused && a[2].refused);
  assert_non_null(strstr(why, "impossible: outlets sum to 2000 W, over 3x the inlets' 500 W"));
  assert_string_equal(a[1].reason, why);
  /* One outlet above the whole inlet: it alone (a hostile value among
   * good ones). */
  struct erg_pdu_xrow a2[] = {XR(ERG_PDU_INLET, "", 500, 520, true),
                              XR(ERG_PDU_OUTLET, "", 150, NAN, true),
                              XR(ERG_PDU_OUTLET, "", 9000, NAN, true)};
  assert_int_equal(erg_pdu_cross_check(a2, 3, false, why, sizeof why), 1);
  assert_true(a2[2].refused && !a2[1].refused);
  assert_non_null(strstr(a2[2].reason, "impossible: 9000 W, over 3x the inlets' 500 W"));
  /* An inlet 100x high is not seen from below (outlets may be few); a
   * device 100x low is, and the outlets bear themselves out. */
  struct erg_pdu_xrow b[] = {XR(ERG_PDU_INLET, "", 50000, NAN, true),
                             XR(ERG_PDU_OUTLET, "", 300, 310, true),
                             XR(ERG_PDU_OUTLET, "", 200, 230, true)};
  assert_int_equal(erg_pdu_cross_check(b, 3, false, why, sizeof why), 0);
  struct erg_pdu_xrow b2[] = {XR(ERG_PDU_INLET, "", 5, NAN, true),
                              XR(ERG_PDU_OUTLET, "", 300, 310, true)};
  assert_int_equal(erg_pdu_cross_check(b2, 2, false, why, sizeof why), 0); /* 5 W says nothing */
  struct erg_pdu_xrow b3[] = {XR(ERG_PDU_DEVICE, "", 60, NAN, true),
                              XR(ERG_PDU_OUTLET, "", 3000, 3100, true)};
  assert_int_equal(erg_pdu_cross_check(b3, 2, false, why, sizeof why), 1);
  assert_true(b3[0].refused);
  assert_non_null(strstr(why, "the devices' W not used"));
  /* Plausible: untouched; neither borne out: both refused. */
  struct erg_pdu_xrow c[] = {XR(ERG_PDU_INLET, "", 1000, 1100, true),
                             XR(ERG_PDU_OUTLET, "", 900, NAN, true)};
  assert_int_equal(erg_pdu_cross_check(c, 2, true, why, sizeof why), 0);
  assert_string_equal(why, "");
  struct erg_pdu_xrow d[] = {XR(ERG_PDU_INLET, "", 100, NAN, true),
                             XR(ERG_PDU_BANK, "", 300, NAN, false),
                             XR(ERG_PDU_BANK, "", 300, NAN, false)};
  assert_int_equal(erg_pdu_cross_check(d, 3, false, why, sizeof why), 3);
  assert_non_null(strstr(why, "neither used"));
  /* Phases 100x low: only with every row read. */
  struct erg_pdu_xrow e[] = {
      XR(ERG_PDU_INLET, "", 3000, 3100, true), XR(ERG_PDU_PHASE, "", 10, NAN, true),
      XR(ERG_PDU_PHASE, "", 10, NAN, true), XR(ERG_PDU_PHASE, "", 10, NAN, true)};
  assert_int_equal(erg_pdu_cross_check(e, 4, false, why, sizeof why), 0);
  assert_int_equal(erg_pdu_cross_check(e, 4, true, why, sizeof why), 3);
  assert_non_null(strstr(why, "under 1/3 of"));
  /* Per chain member: member 210's outlets are not behind member 1's inlet;
   * cord 2 of member 1 is. */
  struct erg_pdu_xrow f[] = {
      XR(ERG_PDU_INLET, "1", 500, 520, true), XR(ERG_PDU_OUTLET, "210", 2000, NAN, true),
      XR(ERG_PDU_OUTLET, "1.2", 400, NAN, true), XR(ERG_PDU_OUTLET, "1.1", 900, NAN, true)};
  assert_int_equal(erg_pdu_cross_check(f, 4, false, why, sizeof why), 0);
  f[2].watts = 1000;
  assert_int_equal(erg_pdu_cross_check(f, 4, false, why, sizeof why), 2);
  assert_true(f[2].refused && f[3].refused && !f[1].refused);
  assert_non_null(strstr(why, "of unit 1 "));
#undef XR
}

/* An index tail (a last "*" after "%d"): a PDU's MAC as a string index,
 * learnt per level from its first row; a level without rows is left out. */
static void test_wild_tail(void **st) {
  (void)st;
  const struct erg_snmp_profile *cu = erg_snmp_profile_find("chatsworth-unity");
  assert_non_null(cu);
  static struct erg_snmp_wild_store store;
  struct erg_snmp_profile out;
  char note[320];
#define CU "1.3.6.1.4.1.30932.1.10.1"
#define MAC1 "12.48.48.48.69.68.51.48.48.65.68.50.49"
#define MAC2 "12.48.48.48.69.68.51.48.49.51.67.52.68"
  const char *rows[] = {CU ".3.110.1.6.1." MAC2, CU ".4.10.1.4.1." MAC1, NULL};
  assert_int_equal(erg_snmp_wild_resolve(cu, &out, &store, fake_next, rows, note, sizeof note), 3);
  assert_string_equal(out.lv[ERG_PDU_OUTLET].q[ERG_Q_CURRENT].oid, CU ".4.10.1.6.%d." MAC1);
  assert_string_equal(out.lv[ERG_PDU_BANK].q[ERG_Q_VOLTAGE].oid, CU ".3.110.1.5.%d." MAC2);
  assert_null(out.lv[ERG_PDU_DEVICE].q[ERG_Q_VA].oid); /* no cpiPduTable row */
  assert_non_null(strstr(note, "outlet index tail \"000ED300AD21\""));
  assert_non_null(strstr(note, "bank index tail \"000ED3013C4D\""));
  assert_non_null(strstr(note, "device no row: left out"));
  /* a scalar's tail: the rest after the column */
  const char *dev[] = {CU ".2.10.1.16." MAC2, NULL};
  assert_true(erg_snmp_wild_resolve(cu, &out, &store, fake_next, dev, note, sizeof note) > 0);
  assert_string_equal(out.lv[ERG_PDU_DEVICE].q[ERG_Q_VA].oid, CU ".2.10.1.16." MAC2);
  assert_null(out.lv[ERG_PDU_OUTLET].q[ERG_Q_NAME].oid);
  /* detection GETNEXTs from the column, before "%d" */
  char start[ERG_SNMP_OID_MAX];
  bool scalar;
  assert_int_equal(erg_snmp_probe_start(cu->lv[ERG_PDU_OUTLET].q[ERG_Q_CURRENT].oid, start,
                                        sizeof start, &scalar),
                   0);
  assert_string_equal(start, CU ".4.10.1.6");
  assert_false(scalar);
#undef CU
#undef MAC1
#undef MAC2
}

/* The two kinds of "*" together: unit arcs before "%d" (one numeric arc
 * each) and the index tail as the last arc (every arc after the entity).
 * No profile's level holds both; a level that did is left out, saying so;
 * one profile may use one kind in one level and the other in another. */
static void test_wild_kinds(void **st) {
  (void)st;
  static struct erg_snmp_wild_store store;
  struct erg_snmp_profile out;
  const struct erg_snmp_profile *p;
  int unit_levels = 0, tail_levels = 0;
  for (size_t i = 0; (p = erg_snmp_profile_at(i)); i++)
    for (int l = 0; l < ERG_PDU_NLEVELS; l++) {
      const struct erg_snmp_level *lv = &p->lv[l];
      bool units = false, tail = false;
      for (int q = 0; q < ERG_Q_N; q++) {
        const char *ts[] = {lv->q[q].oid, lv->q[q].digits, lv->q[q].si_prefix};
        for (int k = 0; k < 3; k++) {
          size_t n = ts[k] ? strlen(ts[k]) : 0;
          tail |= n > 2 && !strcmp(ts[k] + n - 2, ".*");
          units |= ts[k] && erg_snmp_tmpl_wilds(ts[k]) > 0;
        }
      }
      if (units && tail)
        fail_msg("profile %s's %s level: unit arcs and an index tail", p->name,
                 erg_pdu_level_name(l));
      if (tail) { /* count and filter: at most the tail */
        tail_levels++;
        assert_int_equal(erg_snmp_level_wilds(lv), 0);
        const char *cf[] = {lv->count, lv->filter};
        for (int k = 0; k < 2; k++)
          assert_true(
              !cf[k] || !strchr(cf[k], '*') ||
              (strchr(cf[k], '*') == strrchr(cf[k], '*') && !strcmp(strchr(cf[k], '*') - 1, ".*")));
      } else if (units) { /* every template takes a unit of the level's arity */
        unit_levels++;
        int w = erg_snmp_level_wilds(lv);
        assert_true(w == 1 || w == 2);
        out = *p;
        if (erg_snmp_wild_fill_level(p, &out, &store, l, w == 1 ? "7" : "7.2"))
          fail_msg("profile %s's %s level does not take a unit of %d arcs", p->name,
                   erg_pdu_level_name(l), w);
        assert_null(strchr(erg_snmp_level_row_oid(&out.lv[l]), '*'));
      }
    }
  assert_true(unit_levels > 20 && tail_levels >= 3);

  /* Row columns: the tail is no unit arc. */
  char o[ERG_SNMP_OID_MAX], unit[ERG_PDU_UNIT_MAX];
  int n;
  assert_int_equal(erg_snmp_tmpl_wilds("1.2.%d.*"), 0);
  assert_int_equal(erg_snmp_tmpl_wilds("1.2.*"), 0);
  assert_int_equal(erg_snmp_tmpl_wilds("1.2.*.5"), 1);
  assert_int_equal(erg_snmp_tmpl_wilds("1.2.*.*.%d"), 2);
  assert_int_equal(erg_snmp_oid_expand_unit("1.2.%d.*", "", 3, o, sizeof o), -1);
  assert_true(erg_snmp_oid_match("1.2.%d.*", "1.2.7.2.65.66", unit, sizeof unit, &n));
  assert_int_equal(n, 7);
  assert_string_equal(unit, "");
  assert_false(erg_snmp_oid_match("1.2.%d.*", "1.2.7", unit, sizeof unit, &n));
  assert_false(erg_snmp_oid_match("1.2.%d.*", "1.2.7.", unit, sizeof unit, &n));
  assert_false(erg_snmp_oid_match("1.2.%d.*", "1.3.7.1", unit, sizeof unit, &n));
  assert_true(erg_snmp_oid_match("1.2.*", "1.2.5.6", unit, sizeof unit, &n)); /* a scalar's */
  assert_string_equal(unit, "");
  const struct erg_snmp_profile *cu = erg_snmp_profile_find("chatsworth-unity");
  assert_non_null(cu);
  assert_int_equal(erg_snmp_level_wilds(&cu->lv[ERG_PDU_OUTLET]), 0);

  /* One profile, each kind in its own level: outlets by unit (count too),
   * banks by an index tail (count too). */
  static const struct erg_snmp_profile two = {
      .name = "two",
      .lv[ERG_PDU_OUTLET] = {.q[ERG_Q_POWER] = {"1.5.*.%d", 1.0}, .count = "1.8.*"},
      .lv[ERG_PDU_BANK] = {.q[ERG_Q_POWER] = {"1.6.%d.*", 1.0}, .count = "1.7.*"},
  };
  const char *rows[] = {"1.5.3.1", "1.6.1.2.65.66", NULL};
  char note[320];
  assert_int_equal(erg_snmp_wild_resolve(&two, &out, &store, fake_next, rows, note, sizeof note),
                   2);
  assert_string_equal(out.lv[ERG_PDU_OUTLET].q[ERG_Q_POWER].oid, "1.5.3.%d");
  assert_string_equal(out.lv[ERG_PDU_OUTLET].count, "1.8.3");
  assert_string_equal(store.unit[ERG_PDU_OUTLET], "3");
  assert_string_equal(out.lv[ERG_PDU_BANK].q[ERG_Q_POWER].oid, "1.6.%d.2.65.66");
  assert_string_equal(out.lv[ERG_PDU_BANK].count, "1.7.2.65.66");
  assert_string_equal(store.unit[ERG_PDU_BANK], "");
  assert_non_null(strstr(note, "outlet index arc 3 (its first row)"));
  assert_non_null(strstr(note, "bank index tail \"AB\" (its first row)"));
  assert_int_equal(erg_snmp_level_wilds(&two.lv[ERG_PDU_OUTLET]), 1);
  assert_int_equal(erg_snmp_level_wilds(&two.lv[ERG_PDU_BANK]), 0);
  assert_int_equal(erg_snmp_wild_fill_level(&two, &out, &store, ERG_PDU_BANK, "1"), -1);

  /* Both kinds in one level (one template, or two columns): left out. */
  static const struct erg_snmp_profile both = {
      .name = "both",
      .lv[ERG_PDU_OUTLET] = {.q[ERG_Q_POWER] = {"1.5.*.%d.*", 1.0}},
      .lv[ERG_PDU_BANK] = {.q[ERG_Q_NAME] = {"1.6.*.%d"}, .q[ERG_Q_POWER] = {"1.7.%d.*", 1.0}},
      .lv[ERG_PDU_INLET] = {.q[ERG_Q_POWER] = {"1.9.%d", 1.0}},
  };
  const char *brows[] = {"1.5.3.1.2.65.66", "1.6.3.1", "1.7.1.2.65.66", "1.9.1", NULL};
  assert_int_equal(erg_snmp_wild_resolve(&both, &out, &store, fake_next, brows, note, sizeof note),
                   2);
  assert_null(out.lv[ERG_PDU_OUTLET].q[ERG_Q_POWER].oid);
  assert_null(out.lv[ERG_PDU_BANK].q[ERG_Q_NAME].oid);
  assert_string_equal(out.lv[ERG_PDU_INLET].q[ERG_Q_POWER].oid, "1.9.%d");
  assert_non_null(strstr(note, "outlet unit arcs and an index tail: not supported, left out"));
  assert_non_null(strstr(note, "bank unit arcs and an index tail: not supported, left out"));
  assert_int_equal(erg_snmp_level_wilds(&both.lv[ERG_PDU_OUTLET]), 0);
  assert_int_equal(erg_snmp_wild_fill_level(&both, &out, &store, ERG_PDU_OUTLET, "3"), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_match_by_sysobjectid),
      cmocka_unit_test(test_every_profile_is_consistent),
      cmocka_unit_test(test_oid_expand),
      cmocka_unit_test(test_oid_split),
      cmocka_unit_test(test_generic_profile),
      cmocka_unit_test(test_name_match),
      cmocka_unit_test(test_rittal_names),
      cmocka_unit_test(test_text_number),
      cmocka_unit_test(test_physics),
      cmocka_unit_test(test_wild_arcs),
      cmocka_unit_test(test_units),
      cmocka_unit_test(test_cross_check),
      cmocka_unit_test(test_text_unit),
      cmocka_unit_test(test_oid_after),
      cmocka_unit_test(test_wild_tail),
      cmocka_unit_test(test_wild_kinds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Profile data: sysObjectID auto-selection, OID templates, generic config. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "profiles.h"

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
  assert_string_equal(pick("1.3.6.1.4.1.3808.1.1.6"), "cyberpower-epdu2");
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
  int pct = 0;
  for (const char *p = t; *p; p++) {
    if (p[0] == '%' && p[1] == 'd')
      pct++, p++;
    else if (!(*p == '.' || (*p >= '0' && *p <= '9')))
      return false;
  }
  return pct <= 1 && t[0] && strstr(t, "..") == NULL;
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
    for (int l = 0; l < ERG_PDU_NLEVELS; l++) {
      const struct erg_snmp_level *lv = &p->lv[l];
      for (int q = 0; q < ERG_Q_N; q++) {
        const struct erg_snmp_col *c = &lv->q[q];
        if (!c->oid)
          continue;
        if (!template_ok(c->oid))
          fail_msg("%s %s column %d: bad template %s", p->name, erg_pdu_level_name(l), q, c->oid);
        if (q != ERG_Q_NAME && !(c->scale > 0))
          fail_msg("%s %s column %d: scale %g", p->name, erg_pdu_level_name(l), q, c->scale);
        assert_true(!c->digits || template_ok(c->digits));
        assert_true(!c->si_prefix || template_ok(c->si_prefix));
      }
      power |= lv->q[ERG_Q_POWER].oid || lv->q[ERG_Q_VA].oid || lv->q[ERG_Q_CURRENT].oid ||
               lv->q[ERG_Q_ENERGY].oid;
      assert_true(!lv->count || (template_ok(lv->count) && !strstr(lv->count, "%d")));
      assert_true(!lv->filter || template_ok(lv->filter));
    }
    if (!power)
      fail_msg("profile %s reads no power at any level", p->name);
  }
  assert_true(n >= 8);
  assert_string_equal(last->name, "entity-sensor");
  assert_null(erg_snmp_profile_find("nope"));
}

static void test_oid_split(void **st) {
  (void)st;
  char pre[64];
  const char *suf;
  assert_int_equal(erg_snmp_oid_split("1.3.6.1.4.1.13742.6.5.4.3.1.4.1.%d.5", pre, sizeof pre,
                                      &suf), 0);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_match_by_sysobjectid),
      cmocka_unit_test(test_every_profile_is_consistent),
      cmocka_unit_test(test_oid_expand),
      cmocka_unit_test(test_oid_split),
      cmocka_unit_test(test_generic_profile),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

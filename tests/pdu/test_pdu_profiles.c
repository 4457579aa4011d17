/* Profile data: sysObjectID auto-selection, OID templates, generic config. */
#include <setjmp.h>
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

static void test_match_by_sysobjectid(void **st) {
  (void)st;
  assert_string_equal(pick("1.3.6.1.4.1.318.1.3.4.6"), "apc-rpdu2");
  assert_string_equal(pick(".1.3.6.1.4.1.318.1.3.4.5"), "apc-rpdu2"); /* leading dot */
  assert_string_equal(pick("1.3.6.1.4.1.13742.6"), "raritan-pdu2");
  assert_string_equal(pick("1.3.6.1.4.1.1718.4"), "servertech-sentry4");
  assert_string_equal(pick("1.3.6.1.4.1.534.6.6.7"), "eaton-epdu");
  assert_string_equal(pick("1.3.6.1.4.1.21239.5.2"), "geist-v5");
  assert_string_equal(pick("1.3.6.1.4.1.3808.1.1.6"), "cyberpower-epdu2");
  /* Whole arcs only, and other product lines of a vendor are not guessed. */
  assert_string_equal(pick("1.3.6.1.4.1.3180.1"), "(none)");
  assert_string_equal(pick("1.3.6.1.4.1.318.1.3.2.1"), "(none)");   /* an APC UPS */
  assert_string_equal(pick("1.3.6.1.4.1.13742.4"), "(none)");       /* Raritan PX1 */
  assert_string_equal(pick("1.3.6.1.4.1.1718.3"), "(none)");        /* Sentry3 */
  assert_string_equal(pick("1.3.6.1.4.1.534.1"), "(none)");         /* Eaton UPS */
  /* Every Liebert card says 476.1.42: liebert-mph2 is only ever named. */
  assert_string_equal(pick("1.3.6.1.4.1.476.1.42"), "(none)");
  assert_string_equal(pick(""), "(none)");
}

static void test_every_profile_is_consistent(void **st) {
  (void)st;
  for (size_t i = 0; i < erg_snmp_nprofiles; i++) {
    const struct erg_snmp_profile *p = &erg_snmp_profiles[i];
    assert_ptr_equal(erg_snmp_profile_find(p->name), p);
    if (p->sysoids[0]) /* NULL: a profile that is only ever named */
      assert_ptr_equal(erg_snmp_profile_match(p->sysoids[0], NULL), p);
    else
      assert_string_equal(p->name, "liebert-mph2");
    assert_true(p->oid_power || p->oid_energy);
    if (p->oid_power)
      assert_non_null(strstr(p->oid_power, "%d"));
    if (p->oid_energy)
      assert_true(p->energy_scale > 0);
  }
  assert_null(erg_snmp_profile_find("nope"));
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
  assert_null(p.oid_power);
  assert_float_equal(p.energy_scale, 3600.0, 0); /* Wh by default */
  c.energy_scale_joules = 360e3;
  erg_snmp_profile_generic(&c, &p, why, sizeof why);
  assert_float_equal(p.energy_scale, 360e3, 0);
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
      cmocka_unit_test(test_generic_profile),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

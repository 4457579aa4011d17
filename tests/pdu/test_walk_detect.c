// SPDX-License-Identifier: GPL-3.0-or-later
/* Offline detection and OID mapping over a recorded walk
 * (collector/pdu/walk_detect.c): small hand-made walks for each rule, then,
 * when the shared recordings are there (argv[1]), every recording through
 * erg-pdusim's .snmprec loader: the profile must be the one ergd and the
 * probe pick online (tests/pdu/shared_fixtures.sh serves the same files
 * with snmpsimd), and the entities the e2e test binds must map to the OIDs
 * and factors the probe reports for them. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profiles.h"
#include "sim_walk.h"

static const char *recordings; /* argv[1], may be absent */

/* ---- a walk in memory ---- */
struct row {
  const char *oid;
  int type; /* 2 INTEGER, 4 OCTET STRING, 6 OID, 66 Gauge32 */
  const char *val;
};
struct mem_walk {
  const struct row *rows;
  size_t n;
};

static int arcs(const char *s, unsigned long *a) {
  int n = 0;
  if (*s == '.')
    s++;
  while (*s && n < 128) {
    char *e;
    a[n++] = strtoul(s, &e, 10);
    s = *e ? e + 1 : e;
  }
  return n;
}

static int oid_cmp(const char *x, const char *y) {
  unsigned long a[128], b[128];
  int na = arcs(x, a), nb = arcs(y, b);
  for (int i = 0; i < na && i < nb; i++)
    if (a[i] != b[i])
      return a[i] < b[i] ? -1 : 1;
  return na < nb ? -1 : na > nb;
}

/* Linear, unsorted: the first row equal to q, or the least greater one. */
static int mem_lookup(void *ctx, const char *q, bool next, char *name, size_t namelen, int *type,
                      double *num, char *text, size_t textlen) {
  const struct mem_walk *w = ctx;
  const struct row *best = NULL;
  for (size_t i = 0; i < w->n; i++) {
    int c = oid_cmp(w->rows[i].oid, q);
    if (next ? c > 0 && (!best || oid_cmp(w->rows[i].oid, best->oid) < 0) : c == 0)
      best = &w->rows[i];
  }
  if (!best)
    return -1;
  snprintf(name, namelen, "%s", best->oid);
  *type = best->type;
  char *end;
  *num = best->type == 6 ? NAN : strtod(best->val, &end);
  if (best->type == 4) /* text: the driver's rule, the whole text a number */
    *num = erg_snmp_text_number((const unsigned char *)best->val, strlen(best->val));
  else if (best->type != 6 && end == best->val)
    *num = NAN;
  if (text)
    snprintf(text, textlen, "%s", best->val);
  return 0;
}

#define WALK(arr)                                                                                  \
  ((struct erg_snmp_walk){.lookup = mem_lookup,                                                    \
                          .ctx = &(struct mem_walk){arr, sizeof arr / sizeof arr[0]}})

#define S4 "1.3.6.1.4.1.1718.4.1"
/* Sentry4: inlet table (unit 1, cord 1) and phase 1's voltage. */
static const struct row sentry4[] = {
    {"1.3.6.1.2.1.1.1.0", 4, "Sentry Smart PDU"},
    {"1.3.6.1.2.1.1.2.0", 6, "1.3.6.1.4.1.1718.4"},
    {S4 ".3.2.1.3.1.1", 4, "Master_Cord_A"},
    {S4 ".3.3.1.3.1.1", 2, "1701"},
    {S4 ".3.3.1.5.1.1", 2, "1790"},
    {S4 ".3.3.1.8.1.1", 2, "95"},
    {S4 ".3.3.1.10.1.1", 2, "8937"},
    {S4 ".5.2.1.4.1.1.1", 4, "AA:L1-L2"},
    {S4 ".5.3.1.3.1.1.1", 2, "2079"},
    {S4 ".7.2.1.4.1.1.1", 4, "AA:L1-L2-BR1"},
    {S4 ".7.3.1.3.1.1.1", 2, "-1"},
};

static void test_sysobjectid_candidate(void **st) {
  (void)st;
  struct erg_snmp_walk w = WALK(sentry4);
  char how[400];
  const struct erg_snmp_profile *p = erg_snmp_walk_detect(&w, how, sizeof how);
  assert_non_null(p);
  assert_string_equal(p->name, "servertech-sentry4");
  assert_non_null(strstr(how, "suggests servertech-sentry4 and its tables answer"));
  assert_non_null(strstr(how, "inlet, phase, bank")); /* bank: its name column has rows */
}

/* The inlet's columns with their factors; the bank's current, which the
 * level lacks a voltage for, borrows phase 1's (no inlet voltage here). */
static void test_entity_columns(void **st) {
  (void)st;
  struct erg_snmp_walk w = WALK(sentry4);
  char how[400], why[200];
  const struct erg_snmp_profile *p = erg_snmp_walk_detect(&w, how, sizeof how);
  struct erg_snmp_walk_entity e;
  assert_int_equal(erg_snmp_walk_entity(&w, p, ERG_PDU_INLET, 1, &e, why, sizeof why), 0);
  assert_string_equal(e.oid[ERG_Q_POWER], S4 ".3.3.1.3.1.1");
  assert_true(e.present[ERG_Q_POWER] && e.type[ERG_Q_POWER] == 2);
  assert_true(e.raw[ERG_Q_POWER] == 1701 && e.factor[ERG_Q_POWER] == 1.0);
  assert_true(e.raw[ERG_Q_PF] == 95 && fabs(e.factor[ERG_Q_PF] - 0.01) < 1e-12);
  assert_true(e.raw[ERG_Q_ENERGY] == 8937 && e.factor[ERG_Q_ENERGY] == 360e3);
  assert_string_equal(e.oid[ERG_Q_CURRENT], ""); /* Sentry4 cords have no current column */
  assert_false(e.present[ERG_Q_CURRENT]);
  assert_string_equal(e.oid[ERG_Q_N], S4 ".5.3.1.3.1.1.1");
  assert_true(e.present[ERG_Q_N] && e.raw[ERG_Q_N] == 2079 &&
              fabs(e.factor[ERG_Q_N] - 0.1) < 1e-12);
  assert_int_equal(erg_snmp_walk_entity(&w, p, ERG_PDU_BANK, 1, &e, why, sizeof why), 0);
  assert_string_equal(e.oid[ERG_Q_CURRENT], S4 ".7.3.1.3.1.1.1");
  assert_true(e.raw[ERG_Q_CURRENT] == -1); /* as recorded: "not available" */
  assert_string_equal(e.oid[ERG_Q_N], S4 ".5.3.1.3.1.1.1");
}

static void test_entity_errors(void **st) {
  (void)st;
  struct erg_snmp_walk w = WALK(sentry4);
  char how[400], why[200];
  const struct erg_snmp_profile *p = erg_snmp_walk_detect(&w, how, sizeof how);
  struct erg_snmp_walk_entity e;
  assert_int_equal(erg_snmp_walk_entity(&w, p, ERG_PDU_DEVICE, 1, &e, why, sizeof why), -1);
  assert_non_null(strstr(why, "has no device level (it has: outlet, inlet, phase, bank)"));
  assert_int_equal(erg_snmp_walk_entity(&w, p, ERG_PDU_INLET, 2, &e, why, sizeof why), -1);
  assert_non_null(strstr(why, "the walk has no inlet 2"));
  /* The profile has outlets; this walk has none. */
  assert_int_equal(erg_snmp_walk_entity(&w, p, ERG_PDU_OUTLET, 1, &e, why, sizeof why), -1);
  assert_int_equal(erg_snmp_walk_entity(&w, NULL, ERG_PDU_INLET, 1, &e, why, sizeof why), -1);
}

/* Readings as text with their unit (the Easy PDU's early firmware): read
 * as the number x the unit's prefix; a hostile or unit-less text is no
 * reading; the unit is said per column. */
#define EZ1 "1.3.6.1.4.1.1.1"
static const struct row easy[] = {
    {"1.3.6.1.2.1.1.2.0", 6, "1.3.6.1.4.1.0"},
    {EZ1 ".1.1", 4, "232.6V"},
    {EZ1 ".2.1", 4, "300mA"},
    {EZ1 ".3.1", 4, "0.061kW"},
    {EZ1 ".6.1", 4, "0.856"},
    {EZ1 ".7.1", 4, "12<script>"},
};
static const struct row easy_bad[] = {
    {"1.3.6.1.2.1.1.2.0", 6, "1.3.6.1.4.1.0"},
    {EZ1 ".1.1", 4, "232.6"},
    {EZ1 ".3.1", 4, "61 V"},
};

static void test_text_units(void **st) {
  (void)st;
  struct erg_snmp_walk w = WALK(easy);
  char how[400], why[200];
  const struct erg_snmp_profile *p = erg_snmp_walk_detect(&w, how, sizeof how);
  assert_non_null(p);
  assert_string_equal(p->name, "apc-epdu-text");
  struct erg_snmp_walk_entity e;
  assert_int_equal(erg_snmp_walk_entity(&w, p, ERG_PDU_INLET, 1, &e, why, sizeof why), 0);
  assert_true(fabs(e.raw[ERG_Q_POWER] - 61) < 1e-9 && e.factor[ERG_Q_POWER] == 1.0);
  assert_string_equal(e.unit[ERG_Q_POWER], "W");
  assert_true(fabs(e.raw[ERG_Q_VOLTAGE] - 232.6) < 1e-9);
  assert_true(fabs(e.raw[ERG_Q_CURRENT] - 0.3) < 1e-12);
  assert_true(fabs(e.raw[ERG_Q_PF] - 0.856) < 1e-12);
  assert_true(e.present[ERG_Q_ENERGY] && isnan(e.raw[ERG_Q_ENERGY])); /* no reading */
  assert_true(e.factor[ERG_Q_ENERGY] == 3600.0);
  struct erg_snmp_walk b = WALK(easy_bad);
  assert_int_equal(erg_snmp_walk_entity(&b, p, ERG_PDU_INLET, 1, &e, why, sizeof why), 0);
  assert_true(isnan(e.raw[ERG_Q_VOLTAGE]) && isnan(e.raw[ERG_Q_POWER]));
}

#define RP2 "1.3.6.1.4.1.13742.6"
/* Raritan PDU2 outlet 2 with its sensors' decimal digits, behind a
 * generic sysObjectID: found by its tables. */
static const struct row raritan[] = {
    {"1.3.6.1.2.1.1.2.0", 6, "1.3.6.1.4.1.8072.3.2.10"},
    {RP2 ".3.5.3.1.3.1.2", 4, "web"},
    {RP2 ".3.5.4.1.7.1.2.1", 66, "3"},
    {RP2 ".3.5.4.1.7.1.2.4", 66, "0"},
    {RP2 ".3.5.4.1.7.1.2.5", 66, "0"},
    {RP2 ".3.5.4.1.7.1.2.7", 66, "2"},
    {RP2 ".5.4.3.1.4.1.2.1", 66, "927"},
    {RP2 ".5.4.3.1.4.1.2.4", 66, "228"},
    {RP2 ".5.4.3.1.4.1.2.5", 66, "207"},
    {RP2 ".5.4.3.1.4.1.2.7", 66, "99"},
    {RP2 ".5.4.3.1.4.1.2.8", 66, "6564342"},
};

static void test_generic_sysobjectid_tables(void **st) {
  (void)st;
  struct erg_snmp_walk w = WALK(raritan);
  char how[400], why[200];
  const struct erg_snmp_profile *p = erg_snmp_walk_detect(&w, how, sizeof how);
  assert_non_null(p);
  assert_string_equal(p->name, "raritan-pdu2");
  assert_non_null(strstr(how, "1.3.6.1.4.1.8072.3.2.10 is generic; found by its tables"));
  struct erg_snmp_walk_entity e;
  assert_int_equal(erg_snmp_walk_entity(&w, p, ERG_PDU_OUTLET, 2, &e, why, sizeof why), 0);
  assert_string_equal(e.oid[ERG_Q_CURRENT], RP2 ".5.4.3.1.4.1.2.1");
  assert_true(fabs(e.factor[ERG_Q_CURRENT] - 0.001) < 1e-15); /* 3 digits */
  assert_true(fabs(e.factor[ERG_Q_PF] - 0.01) < 1e-15);       /* 2 digits */
  assert_true(e.factor[ERG_Q_POWER] == 1.0 && e.raw[ERG_Q_POWER] == 207);
  assert_true(e.factor[ERG_Q_ENERGY] == 3600.0); /* no digits row: 0 */
  assert_false(e.present[ERG_Q_VA]);             /* the profile has it, the walk not */
  assert_string_equal(e.oid[ERG_Q_VA], RP2 ".5.4.3.1.4.1.2.6");
  /* The outlet has its own voltage; the borrowed one (inlet 1) is what
   * erg_snmp_chan_col offers besides, where the driver uses it at all. */
  assert_true(!strcmp(e.oid[ERG_Q_N], "") || !strcmp(e.oid[ERG_Q_N], RP2 ".5.2.3.1.4.1.1.4"));
  assert_false(e.present[ERG_Q_N]);
  assert_int_equal(erg_snmp_walk_entity(&w, p, ERG_PDU_OUTLET, 3, &e, why, sizeof why), -1);
}

/* A column whose rows say -1 ("not available") does not answer, as online;
 * a walk with no known table gives no profile and says so. */
static const struct row none[] = {
    {"1.3.6.1.2.1.1.2.0", 6, "1.3.6.1.4.1.13742.6"},
    {RP2 ".5.4.3.1.4.1.1.5", 2, "-1"},
    {"1.3.6.1.4.1.99999.1.1", 2, "5"},
};

static void test_nothing_answers(void **st) {
  (void)st;
  struct erg_snmp_walk w = WALK(none);
  char how[400];
  assert_null(erg_snmp_walk_detect(&w, how, sizeof how));
  assert_non_null(strstr(how, "no known PDU table answers"));
}

/* ENTITY-SENSOR-MIB, the fallback: a watts sensor in kW with one digit. */
#define ES "1.3.6.1.2.1.99.1.1.1"
static const struct row entity[] = {
    {"1.3.6.1.2.1.1.2.0", 6, "1.3.6.1.4.1.99999"},
    {"1.3.6.1.2.1.47.1.1.1.1.7.3", 4, "PSU 1"},
    {"1.3.6.1.2.1.47.1.1.1.1.7.4", 4, "Fan"},
    {ES ".1.3", 2, "6"},
    {ES ".1.4", 2, "10"},
    {ES ".2.3", 2, "10"},
    {ES ".3.3", 2, "1"},
    {ES ".4.3", 2, "12"},
    {ES ".4.4", 2, "3000"},
};

static void test_entity_sensor_scale(void **st) {
  (void)st;
  struct erg_snmp_walk w = WALK(entity);
  char how[400], why[200];
  const struct erg_snmp_profile *p = erg_snmp_walk_detect(&w, how, sizeof how);
  assert_non_null(p);
  assert_string_equal(p->name, "entity-sensor");
  assert_non_null(strstr(how, "matches no profile"));
  struct erg_snmp_walk_entity e;
  assert_int_equal(erg_snmp_walk_entity(&w, p, ERG_PDU_SENSOR, 3, &e, why, sizeof why), 0);
  assert_true(fabs(e.factor[ERG_Q_POWER] - 100.0) < 1e-9); /* kilo x 10^-1: 12 -> 1.2 kW */
  /* Sensor 4 is a fan (type 10, rpm), not one of the level's rows. */
  assert_int_equal(erg_snmp_walk_entity(&w, p, ERG_PDU_SENSOR, 4, &e, why, sizeof why), -1);
}

/* ---- the shared recordings, through erg-pdusim's loader ---- */

/* What ergd / erg pdu probe pick online for each (snmpsimd serving the
 * file, tests/pdu/shared_fixtures.sh); NULL: refused. */
static const struct {
  const char *file, *profile;
} expected[] = {
    {"algcom-pdu-08p-ac_algcom-pdu-08p-ac", "algcom-pdu"},
    {"apc-epdu_epdu1132m", "apc-epdu-text"},
    {"apc_ap7900b", "apc-rpdu"},
    {"apc_ap8959eu3", "apc-rpdu2"},
    {"atenpdu", "aten-pe"},
    {"chatsworth-pdu", "chatsworth-unity"},
    {"eatonpdu_2", "eaton-epdu"},
    {"enlogic-pdu2", "enlogic-pdu"},
    {"gude-esb_7213-12", NULL},
    {"gude-esb_7214-12", NULL},
    {"hpe-mapdu_pdu3", "hpe-pdu3"},
    {"hpe-pdumm", "hpe-pdumm"},
    {"iboot_pdu8-2n15", "iboot-pdu"},
    {"ipoman", "ipoman-ii"},
    {"liebert_mph2rg", "liebert-mph2"},
    {"panduit-eagle", NULL},
    {"panduit", "panduit-g5"},
    {"poweralert_pdu", "tripplite-pdu"},
    {"raritan-pdu", "raritan-px1"},
    {"raritan-pdu_px2-temp", "raritan-pdu2"},
    {"raritan-pdu_px2", "raritan-pdu2"},
    {"raritan-pdu_px3", "raritan-pdu2"},
    {"rittal-cmc-iii-pu_pdu-controller", "rittal-cmc3"},
    {"schleifenbauer_dpm27e", "schleifenbauer-databus"},
    {"sentry3", "servertech-sentry3"},
    {"sentry3_switched", "servertech-sentry3"},
    {"sentry4", "servertech-sentry4"},
    {"vertiv-pdu_mn03edr1", "geist-v5"},
};

static struct sim_walk *load(const char *base) {
  char path[1024], why[300];
  snprintf(path, sizeof path, "%s/%s.snmprec", recordings, base);
  struct sim_walk *w = sim_walk_load(path, why, sizeof why);
  if (!w)
    fail_msg("%s", why);
  return w;
}

static void test_recordings_detected_as_online(void **st) {
  (void)st;
  if (!recordings)
    skip();
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
    struct sim_walk *w = load(expected[i].file);
    char how[400];
    const struct erg_snmp_profile *p = sim_walk_detect(w, how, sizeof how);
    const char *got = p ? p->name : NULL;
    if (!expected[i].profile != !got || (got && strcmp(got, expected[i].profile)))
      fail_msg("%s: offline %s (%s), online %s", expected[i].file, got ? got : "none", how,
               expected[i].profile ? expected[i].profile : "none");
    sim_walk_free(w);
  }
}

/* The entities walk_e2e.sh binds: the OIDs and factors the probe reports
 * for them in pdu.shared_fixtures (raritan: digits 0 for W, 3 for A). */
static void test_recording_entities(void **st) {
  (void)st;
  if (!recordings)
    skip();
  char how[400], why[200];
  struct erg_snmp_walk_entity e;
  struct sim_walk *w = load("raritan-pdu_px3");
  struct erg_snmp_walk v = sim_walk_view(w);
  const struct erg_snmp_profile *p = sim_walk_detect(w, how, sizeof how);
  assert_int_equal(erg_snmp_walk_entity(&v, p, ERG_PDU_OUTLET, 13, &e, why, sizeof why), 0);
  assert_string_equal(e.oid[ERG_Q_POWER], RP2 ".5.4.3.1.4.1.13.5");
  assert_true(e.raw[ERG_Q_POWER] == 390 && e.factor[ERG_Q_POWER] == 1.0);
  assert_int_equal(e.type[ERG_Q_POWER], 66);
  assert_true(e.raw[ERG_Q_CURRENT] == 1676 && fabs(e.factor[ERG_Q_CURRENT] - 0.001) < 1e-15);
  assert_true(e.raw[ERG_Q_ENERGY] == 12711248 && e.factor[ERG_Q_ENERGY] == 3600.0);
  assert_int_equal(erg_snmp_walk_entity(&v, p, ERG_PDU_OUTLET, 99, &e, why, sizeof why), -1);
  assert_int_equal(erg_snmp_walk_entity(&v, p, ERG_PDU_BANK, 1, &e, why, sizeof why), -1);
  sim_walk_free(w);
  w = load("sentry4");
  v = sim_walk_view(w);
  p = sim_walk_detect(w, how, sizeof how);
  assert_int_equal(erg_snmp_walk_entity(&v, p, ERG_PDU_INLET, 1, &e, why, sizeof why), 0);
  assert_true(e.raw[ERG_Q_POWER] == 1701 && e.raw[ERG_Q_VA] == 1790 && e.raw[ERG_Q_PF] == 95);
  assert_int_equal(erg_snmp_walk_entity(&v, p, ERG_PDU_INLET, 3, &e, why, sizeof why), -1);
  /* The chain's link unit (issue 34 item 1): its own rows, by unit. */
  assert_int_equal(erg_snmp_walk_entity_unit(&v, p, ERG_PDU_INLET, "2", 1, &e, why, sizeof why), 0);
  assert_string_equal(e.oid[ERG_Q_POWER], "1.3.6.1.4.1.1718.4.1.3.3.1.3.2.1");
  assert_true(e.raw[ERG_Q_POWER] == 1265);
  assert_int_equal(erg_snmp_walk_entity_unit(&v, p, ERG_PDU_PHASE, "2.1", 3, &e, why, sizeof why),
                   0);
  assert_string_equal(e.oid[ERG_Q_POWER], "1.3.6.1.4.1.1718.4.1.5.3.1.8.2.1.3");
  assert_true(e.raw[ERG_Q_POWER] == 403);
  assert_int_equal(erg_snmp_walk_entity_unit(&v, p, ERG_PDU_PHASE, "2", 3, &e, why, sizeof why),
                   -1);
  assert_non_null(strstr(why, "2 unit arcs"));
  assert_int_equal(erg_snmp_walk_entity_unit(&v, p, ERG_PDU_INLET, "9", 1, &e, why, sizeof why),
                   -1);
  sim_walk_free(w);
}

int main(int argc, char **argv) {
  recordings = argc > 1 ? argv[1] : NULL;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sysobjectid_candidate),
      cmocka_unit_test(test_entity_columns),
      cmocka_unit_test(test_entity_errors),
      cmocka_unit_test(test_generic_sysobjectid_tables),
      cmocka_unit_test(test_text_units),
      cmocka_unit_test(test_nothing_answers),
      cmocka_unit_test(test_entity_sensor_scale),
      cmocka_unit_test(test_recordings_detected_as_online),
      cmocka_unit_test(test_recording_entities),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

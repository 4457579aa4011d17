// SPDX-License-Identifier: GPL-3.0-or-later
/* Redfish discovery (collector/pdu/redfish_parse.c) over the recordings of
 * 13 real servers (shared/fixtures/redfish-recordings, argv[1]): each row
 * of its README is a case here, the node's reading and what must not be
 * taken. Plus the value rules (null, 0, negative, absurd, units). */
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../erg_test.h"
#include "redfish_parse.h"

static const char *root;

/* The recording as a BMC would answer it (erg_rf_recording_get). */
static json_t *file_get(void *ctx, const char *uri, char *why, size_t whylen) {
  return erg_rf_recording_get(ctx, uri, why, whylen);
}

struct disc {
  struct erg_rf_discovery d;
  int rc;
  char why[1024];
  double watts, joules;
  int watts_rc, joules_rc;
  char value_why[256];
};

static struct disc *discover(const char *rec, const char *chassis, bool full) {
  struct disc *x = calloc(1, sizeof *x);
  char base[600];
  snprintf(base, sizeof base, "%s/%s", root, rec);
  assert_non_null(x);
  x->rc = erg_rf_discover(file_get, base, chassis, full, &x->d, x->why, sizeof x->why);
  x->watts = x->joules = NAN;
  x->watts_rc = x->joules_rc = -2;
  if (x->rc == 0) {
    const struct erg_rf_plan *p = &x->d.plan;
    double sum = 0;
    for (int i = 0; i < p->npower; i++) {
      char w[256];
      json_t *doc = file_get(base, p->power[i].uri, w, sizeof w);
      erg_assert(doc, "%s: %s", rec, w);
      double v = NAN;
      x->watts_rc = erg_rf_term_value(&p->power[i], doc, p->rating_watts, &v, x->value_why,
                                      sizeof x->value_why);
      sum += v;
      json_decref(doc);
    }
    if (p->npower)
      x->watts = sum;
    if (p->have_energy) {
      char w[256];
      json_t *doc = file_get(base, p->energy.uri, w, sizeof w);
      erg_assert(doc, "%s: %s", rec, w);
      x->joules_rc = erg_rf_term_value(&p->energy, doc, p->rating_watts, &x->joules, w, sizeof w);
      json_decref(doc);
    }
  }
  return x;
}

/* The found row for what (a substring), or NULL. */
static const struct erg_rf_found *found(const struct disc *x, const char *what) {
  for (int i = 0; i < x->d.nfound; i++)
    if (strstr(x->d.found[i].what, what) || strstr(x->d.found[i].uri, what))
      return &x->d.found[i];
  return NULL;
}

static void expect_node(const char *rec, const char *chassis, double watts, double joules) {
  struct disc *x = discover(rec, NULL, false);
  erg_assert(x->rc == 0, "%s: refused: %s", rec, x->why);
  erg_assert(!strcmp(x->d.plan.chassis, chassis), "%s: chassis %s, want %s", rec, x->d.plan.chassis,
             chassis);
  erg_assert(!x->d.plan.enclosure, "%s: called an enclosure", rec);
  erg_assert(x->watts_rc == 0 && x->watts == watts, "%s: %g W (rc %d %s), want %g", rec, x->watts,
             x->watts_rc, x->value_why, watts);
  if (isnan(joules))
    erg_assert(!x->d.plan.have_energy, "%s: energy %s taken", rec, x->d.plan.energy.uri);
  else
    erg_assert(x->joules == joules, "%s: %g J, want %g", rec, x->joules, joules);
  free(x);
}

static void test_dl325(void **s) {
  (void)s;
  expect_node("cray-DL325", "/redfish/v1/Chassis/1", 97, NAN);
}

/* Each PSU's LastPowerOutputWatts repeats 894: listed, never added. */
static void test_xl675d(void **s) {
  (void)s;
  expect_node("cray-XL675d_A100", "/redfish/v1/Chassis/1/", 894, NAN);
  struct disc *x = discover("cray-XL675d_A100", NULL, true);
  const struct erg_rf_found *f = found(x, "LastPowerOutputWatts");
  erg_assert(f && !f->used && f->value == 894 && strstr(f->why, "never added"), "psu row: %s",
             f ? f->why : "none");
  free(x);
}

/* The energy sensor without units (468) is not joules; IntervalInMin 0's
 * average 46 is not the reading. */
static void test_gigabyte(void **s) {
  (void)s;
  expect_node("cray-Gigabyte", "/redfish/v1/Chassis/Self", 100, NAN);
  struct disc *x = discover("cray-Gigabyte", NULL, true);
  erg_assert(x->rc == 0 && !x->d.plan.have_energy, "energy taken: %s", x->d.plan.energy.uri);
  const struct erg_rf_found *f = found(x, "Power Energy Monitor");
  erg_assert(f && !f->used && strstr(f->why, "ReadingUnits"), "energy row: %s",
             f ? f->why : "none");
  free(x);
}

/* A chassis id with a slash. */
static void test_intel(void **s) {
  (void)s;
  expect_node("cray-Intel", "/redfish/v1/Chassis/RackMount/Baseboard", 148, NAN);
}

/* Two nodes in one blade: refused without a chassis, each its own with. */
static void test_ex425(void **s) {
  (void)s;
  struct disc *x = discover("cray-EX425", NULL, false);
  erg_assert(x->rc == -1 && strstr(x->why, "2 nodes") && strstr(x->why, "Node0") &&
                 strstr(x->why, "Node1"),
             "%s", x->why);
  free(x);
  static const struct {
    const char *c;
    double w, j;
  } n[] = {{"/redfish/v1/Chassis/Node0", 240, 204271934},
           {"/redfish/v1/Chassis/Node1", 238, 204764753}};
  for (int i = 0; i < 2; i++) {
    x = discover("cray-EX425", n[i].c, false);
    erg_assert(x->rc == 0, "%s: %s", n[i].c, x->why);
    erg_assert(x->watts == n[i].w && x->joules == n[i].j, "%s: %g W %g J", n[i].c, x->watts,
               x->joules);
    erg_assert(x->d.plan.energy.kind == ERG_RF_SENSOR_ENERGY, "energy kind %d",
               x->d.plan.energy.kind);
    free(x);
  }
  /* CPU and memory sensors are parts, never the node's figure. */
  x = discover("cray-EX425", "/redfish/v1/Chassis/Node0", true);
  const struct erg_rf_found *f = found(x, "CPU01SynthesizedPower");
  erg_assert(f && !f->used && strstr(f->why, "part"), "cpu row: %s", f ? f->why : "none");
  free(x);
}

/* An enclosure feeds many blades: only when named, as a shared meter. */
static void test_cmm(void **s) {
  (void)s;
  struct disc *x = discover("cray-CMM", NULL, false);
  erg_assert(x->rc == -1 && strstr(x->why, "enclosure") && strstr(x->why, "group"), "%s", x->why);
  free(x);
  x = discover("cray-CMM", "/redfish/v1/Chassis/Enclosure", false);
  erg_assert(x->rc == 0 && x->d.plan.enclosure && x->d.plan.npower == 4, "rc %d %s n %d", x->rc,
             x->why, x->d.plan.npower);
  erg_assert(x->watts == 3433 + 3657 + 3816 + 3819, "%g W", x->watts);
  free(x);
}

/* No PowerConsumedWatts while off: the place is known, the value is no
 * reading (never 0 W). */
static void test_openbmc(void **s) {
  (void)s;
  struct disc *x = discover("cray-OpenBMC-stock", NULL, false);
  erg_assert(x->rc == 0 && !strcmp(x->d.plan.chassis, "/redfish/v1/Chassis/chassis"), "%s", x->why);
  erg_assert(x->watts_rc == 1 && strstr(x->value_why, "no reading"), "rc %d %s", x->watts_rc,
             x->value_why);
  free(x);
}

static void test_dell(void **s) {
  (void)s;
  expect_node("nvidia-dell", "/redfish/v1/Chassis/System.Embedded.1", 614, NAN);
  struct disc *x = discover("nvidia-dell", NULL, true);
  const struct erg_rf_found *f = found(x, "PSU.Slot.1_InputPower");
  erg_assert(f && !f->used, "psu input used");
  f = found(x, "SystemBoardPwrConsumption");
  erg_assert(f && !f->used && f->value == 600, "system board sensor: %s", f ? f->why : "none");
  free(x);
}

static void test_hpe(void **s) {
  (void)s;
  expect_node("nvidia-hpe", "/redfish/v1/Chassis/1", 531, NAN);
}

/* 708, never 821 (the sum with CPU and memory) nor the discrete sensors. */
static void test_lenovo(void **s) {
  (void)s;
  expect_node("nvidia-lenovo", "/redfish/v1/Chassis/1", 708, NAN);
  struct disc *x = discover("nvidia-lenovo", NULL, true);
  const struct erg_rf_found *f = found(x, "CPU Sub-system");
  erg_assert(f && !f->used && strstr(f->why, "never added"), "cpu entry: %s", f ? f->why : "none");
  f = found(x, "Host Power");
  erg_assert(f && !f->used && strstr(f->why, "ReadingUnits"), "discrete sensor: %s",
             f ? f->why : "none");
  free(x);
}

static void test_supermicro(void **s) {
  (void)s;
  expect_node("nvidia-supermicro", "/redfish/v1/Chassis/1", 2161, NAN);
}

/* No node total: refused, naming what there is. */
static void test_no_total(void **s) {
  (void)s;
  const char *recs[] = {"nvidia-viking", "nvidia-gh200"};
  for (int i = 0; i < 2; i++) {
    struct disc *x = discover(recs[i], NULL, false);
    erg_assert(x->rc == -1 && strstr(x->why, "no node total") && strstr(x->why, "HGX"),
               "%s: rc %d %s", recs[i], x->rc, x->why);
    free(x);
  }
}

static void value_case(const char *json, int kind, double rating, int want_rc, double want) {
  json_error_t e;
  json_t *doc = json_loads(json, 0, &e);
  assert_non_null(doc);
  struct erg_rf_term t = {.uri = "/x", .kind = kind, .to_si = 1.0};
  if (kind == ERG_RF_ENV_ENERGY_KWH)
    t.to_si = 3.6e6;
  double v = NAN;
  char why[256] = "";
  int rc = erg_rf_term_value(&t, doc, rating, &v, why, sizeof why);
  erg_assert(rc == want_rc && (rc != 0 || v == want), "%s: rc %d (%s) v %g, want %d %g", json, rc,
             why, v, want_rc, want);
  json_decref(doc);
}

static void test_values(void **s) {
  (void)s;
  value_case("{\"PowerControl\":[{\"PowerConsumedWatts\":350}]}", ERG_RF_POWERCONTROL, 0, 0, 350);
  value_case("{\"PowerControl\":[{\"PowerConsumedWatts\":null}]}", ERG_RF_POWERCONTROL, 0, 1, 0);
  value_case("{\"PowerControl\":[{\"PowerConsumedWatts\":0}]}", ERG_RF_POWERCONTROL, 0, 1, 0);
  value_case("{\"PowerControl\":[{\"PowerConsumedWatts\":-5}]}", ERG_RF_POWERCONTROL, 0, -1, 0);
  value_case("{\"PowerControl\":[{\"PowerConsumedWatts\":25000}]}", ERG_RF_POWERCONTROL, 0, -1, 0);
  value_case("{\"PowerControl\":[{\"PowerConsumedWatts\":1200}]}", ERG_RF_POWERCONTROL, 1000, -1,
             0);
  value_case("{\"PowerControl\":[{\"PowerConsumedWatts\":\"n/a\"}]}", ERG_RF_POWERCONTROL, 0, -1,
             0);
  value_case("{\"PowerControl\":[]}", ERG_RF_POWERCONTROL, 0, -1, 0);
  value_case("{\"EnergykWh\":{\"Reading\":2.5}}", ERG_RF_ENV_ENERGY_KWH, 0, 0, 9e6);
  value_case("{\"Reading\":240,\"ReadingUnits\":\"W\"}", ERG_RF_SENSOR_POWER, 0, 0, 240);
  /* Units that changed since discovery are no reading. */
  value_case("{\"Reading\":240,\"ReadingUnits\":\"mW\"}", ERG_RF_SENSOR_POWER, 0, -1, 0);
  value_case("[1,2]", ERG_RF_ENV_POWER, 0, 1, 0);
}

/* The BMC's own reading time (Sensor.ReadingTime), as recorded and in the
 * other forms ISO 8601 allows; no zone, or nonsense, is none. */
static void test_reading_time(void **s) {
  (void)s;
  uint64_t ns = 0;
  erg_assert(erg_rf_time_parse("2022-04-14T16:21:30.893755811Z", &ns) == 0 &&
                 ns == 1649953290ULL * 1000000000ULL + 893755811ULL,
             "ns %llu", (unsigned long long)ns);
  erg_assert(erg_rf_time_parse("2022-03-09T19:58:03+00:00", &ns) == 0 &&
                 ns == 1646855883ULL * 1000000000ULL,
             "ns %llu", (unsigned long long)ns);
  erg_assert(erg_rf_time_parse("2022-03-09T21:58:03.5+02:00", &ns) == 0 &&
                 ns == 1646855883ULL * 1000000000ULL + 500000000ULL,
             "ns %llu", (unsigned long long)ns);
  erg_assert(erg_rf_time_parse("2022-03-09T17:28:03-02:30", &ns) == 0 &&
                 ns == 1646855883ULL * 1000000000ULL,
             "ns %llu", (unsigned long long)ns);
  erg_assert(erg_rf_time_parse("2022-03-09T19:58:03", &ns) == -1, "no zone taken");
  erg_assert(erg_rf_time_parse("yesterday", &ns) == -1, "nonsense taken");
  erg_assert(erg_rf_time_parse("2022-13-09T19:58:03Z", &ns) == -1, "month 13 taken");
  erg_assert(erg_rf_time_parse(NULL, &ns) == -1, "NULL taken");
  /* From a recorded Sensor (the EX425's node input power). */
  char why[256], base[600];
  snprintf(base, sizeof base, "%s/cray-EX425", root);
  json_t *doc = erg_rf_recording_get(
      base, "/redfish/v1/Chassis/Node0/Sensors/ChassisVoltageRegulator0InputPower", why,
      sizeof why);
  erg_assert(doc, "%s", why);
  erg_assert(erg_rf_reading_time(doc, &ns) == 0 && ns / 1000000000ULL == 1649953290ULL, "ns %llu",
             (unsigned long long)ns);
  json_decref(doc);
  /* PowerControl carries no time. */
  doc = json_loads("{\"PowerControl\":[{\"PowerConsumedWatts\":350}]}", 0, NULL);
  erg_assert(erg_rf_reading_time(doc, &ns) == -1, "a time from nothing");
  json_decref(doc);
}

/* A poll's answer skimmed (erg_rf_json_skim): the kept members equal the
 * full parse's, nothing else kept, and whatever json_loadb refuses is
 * refused, wherever in the body the fault lies. */
static const char *skim_keep[] = {"PowerControl", "Reading", "ReadingTime", NULL};
static int skim_files;

static void skim_same(const char *body, size_t n, const char *name) {
  json_error_t e;
  char why[200];
  json_t *full = json_loadb(body, n, JSON_REJECT_DUPLICATES, &e);
  json_t *sk = erg_rf_json_skim(body, n, skim_keep, why, sizeof why);
  if (!full || !json_is_object(full)) {
    erg_assert(!sk, "%s: skim took what json_loadb refused (%s)", name,
               full ? "no object" : e.text);
    json_decref(full);
    return;
  }
  erg_assert(sk, "%s: skim refused a good body: %s", name, why);
  size_t kept = 0;
  for (int i = 0; skim_keep[i]; i++) {
    json_t *a = json_object_get(full, skim_keep[i]), *b = json_object_get(sk, skim_keep[i]);
    erg_assert((!a && !b) || json_equal(a, b), "%s: %s differs", name, skim_keep[i]);
    kept += a != NULL;
  }
  erg_assert(json_object_size(sk) == kept, "%s: skim kept %zu members, want %zu", name,
             json_object_size(sk), kept);
  json_decref(full);
  json_decref(sk);
}

static int skim_file(const char *path, const struct stat *st, int type, struct FTW *f) {
  (void)st, (void)f;
  size_t n = strlen(path);
  if (type != FTW_F || n < 5 || strcmp(path + n - 5, ".json"))
    return 0;
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return 0;
  static char buf[1 << 21];
  size_t len = fread(buf, 1, sizeof buf, fp);
  fclose(fp);
  skim_same(buf, len, path);
  skim_files++;
  return 0;
}

static void test_skim_recordings(void **s) {
  (void)s;
  nftw(root, skim_file, 16, FTW_PHYS);
  erg_assert(skim_files >= 100, "only %d recorded documents", skim_files);
}

static void test_skim_cases(void **s) {
  (void)s;
  /* Accepted: the kept members as json_loadb has them. */
  const char *good[] = {
      "{}",
      " {\"Reading\": 1.5e2 , \"PowerControl\":[{\"PowerConsumedWatts\":null}]}\n",
      "{\"Oem\":{\"a\":[1,-0.5,2E-3,true,false,null,\"}]\\\"\\u00e9\\ud83d\\ude00\"]},\"Reading\":"
      "3}",
      "{\"Name\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\",\"Reading\":0}",
      "{\"Reading\":{\"x\":[[[[]]]]},\"ReadingTime\":\"2026-01-01T00:00:00Z\"}",
      "{\"Readin\":1,\"ReadingX\":2,\"Reading\":3}",
  };
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    char why[200];
    json_t *j = erg_rf_json_skim(good[i], strlen(good[i]), skim_keep, why, sizeof why);
    erg_assert(j, "good case %zu refused: %s", i, why);
    json_decref(j);
    skim_same(good[i], strlen(good[i]), good[i]);
  }
  /* Refused: each fault sits in a member that is not kept. */
  const char *bad[] = {
      "",
      "   ",
      "[1,2]",
      "\"text\"",
      "{\"Reading\":1} x",
      "{\"Reading\":1",
      "{\"Reading\":1,}",
      "{\"Oem\":[1,2,],\"Reading\":1}",
      "{\"Oem\":{\"a\":1,},\"Reading\":1}",
      "{\"Oem\":{\"a\" 1},\"Reading\":1}",
      "{\"Oem\":01,\"Reading\":1}",
      "{\"Oem\":1.,\"Reading\":1}",
      "{\"Oem\":-,\"Reading\":1}",
      "{\"Oem\":1e,\"Reading\":1}",
      "{\"Oem\":tru,\"Reading\":1}",
      "{\"Oem\":nul,\"Reading\":1}",
      "{\"Oem\":NaN,\"Reading\":1}",
      "{\"Oem\":\"a\\x\",\"Reading\":1}",
      "{\"Oem\":\"\\u12\",\"Reading\":1}",
      "{\"Oem\":\"\\udc00\",\"Reading\":1}",
      "{\"Oem\":\"\\ud800x\",\"Reading\":1}",
      "{\"Oem\":\"a\tb\",\"Reading\":1}",
      "{\"Oem\":\"\xc3\",\"Reading\":1}",
      "{\"Oem\":\"\xc0\xaf\",\"Reading\":1}",
      "{\"Oem\":\"\xed\xa0\x80\",\"Reading\":1}",
      "{\"Oem\":\"\xff\",\"Reading\":1}",
      "{\"Oem\":\"open,\"Reading\":1}",
      "{\"Oem\":[[[{]]],\"Reading\":1}",
      "{\"Reading\":1,\"Reading\":2}",
      "{\"PowerControl\":[{\"a\":1,\"a\":2}]}",
      "{Reading:1}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char why[200] = "";
    json_t *j = erg_rf_json_skim(bad[i], strlen(bad[i]), skim_keep, why, sizeof why);
    erg_assert(!j, "bad case %zu (%s) taken", i, bad[i]);
    erg_assert(why[0], "bad case %zu: no reason", i);
    json_error_t e;
    json_t *full = json_loadb(bad[i], strlen(bad[i]), JSON_REJECT_DUPLICATES, &e);
    erg_assert(!full || !json_is_object(full), "bad case %zu: json_loadb takes it", i);
    json_decref(full);
  }
  /* Deeper than any BMC nests, refused as jansson does (no stack overflow). */
  static char deep[20000];
  size_t n = 0;
  n += (size_t)snprintf(deep, sizeof deep, "{\"Oem\":");
  for (int i = 0; i < 5000; i++)
    deep[n++] = '[';
  for (int i = 0; i < 5000; i++)
    deep[n++] = ']';
  n += (size_t)snprintf(deep + n, sizeof deep - n, ",\"Reading\":1}");
  char why[200];
  json_t *j = erg_rf_json_skim(deep, n, skim_keep, why, sizeof why);
  erg_assert(!j && strstr(why, "depth"), "5,000 levels: %s", j ? "taken" : why);
}

int main(int argc, char **argv) {
  if (argc < 2)
    erg_skip_all("usage: test_redfish_parse RECORDINGS_DIR");
  root = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dl325),
      cmocka_unit_test(test_xl675d),
      cmocka_unit_test(test_gigabyte),
      cmocka_unit_test(test_intel),
      cmocka_unit_test(test_ex425),
      cmocka_unit_test(test_cmm),
      cmocka_unit_test(test_openbmc),
      cmocka_unit_test(test_dell),
      cmocka_unit_test(test_hpe),
      cmocka_unit_test(test_lenovo),
      cmocka_unit_test(test_supermicro),
      cmocka_unit_test(test_no_total),
      cmocka_unit_test(test_values),
      cmocka_unit_test(test_reading_time),
      cmocka_unit_test(test_skim_recordings),
      cmocka_unit_test(test_skim_cases),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

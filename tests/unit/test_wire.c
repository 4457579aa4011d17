// SPDX-License-Identifier: GPL-3.0-or-later
/* Decoder tests: valid messages round-trip; malformed, wrong-version and
 * insane ones are rejected with a reason, never crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "erg_common.h"

static Erg__Proc proc;
static Erg__Proc *procs[1] = {&proc};
static Erg__Interval iv;
static Erg__NodeTotals totals;
static Erg__Sample sample;
static Erg__Envelope env;

static void make_sample(void) {
  erg__proc__init(&proc);
  proc.pid = 42;
  proc.start_time_ns = 123456789;
  proc.comm = "stress-ng";
  proc.cgroup = "/system.slice/x.service";
  proc.cpu_ns = 700000000;
  erg__interval__init(&iv);
  iv.realtime_start_ns = 1700000000ULL * ERG_NS_PER_S;
  iv.realtime_end_ns = iv.realtime_start_ns + ERG_NS_PER_S;
  erg__node_totals__init(&totals);
  totals.ncpu = 2;
  totals.cpu_busy_ns = 900000000;
  erg__sample__init(&sample);
  sample.node = "n1";
  sample.seq = 7;
  sample.interval = &iv;
  sample.totals = &totals;
  sample.procs = procs;
  sample.n_procs = 1;
  erg__envelope__init(&env);
  env.version = ERG_WIRE_VERSION;
  env.body_case = ERG__ENVELOPE__BODY_SAMPLE;
  env.sample = &sample;
}

static Erg__Envelope *roundtrip(const char **why) {
  uint8_t *buf;
  size_t len = erg_wire_pack(&env, &buf);
  assert_true(len > 0);
  Erg__Envelope *out = erg_wire_unpack(buf, len, why);
  free(buf);
  return out;
}

static void test_roundtrip(void **state) {
  (void)state;
  make_sample();
  const char *why = "unset";
  Erg__Envelope *out = roundtrip(&why);
  assert_non_null(out);
  assert_null(why);
  assert_int_equal(out->body_case, ERG__ENVELOPE__BODY_SAMPLE);
  assert_string_equal(out->sample->node, "n1");
  assert_int_equal(out->sample->seq, 7);
  assert_int_equal(out->sample->n_procs, 1);
  assert_string_equal(out->sample->procs[0]->comm, "stress-ng");
  assert_int_equal(out->sample->procs[0]->cpu_ns, 700000000);
  assert_int_equal(out->sample->procs[0]->start_time_ns, 123456789);
  erg_wire_free(out);
}

/* Sample.users (field 11) is optional both ways: a sample without it (an
 * older agent) decodes with no names, one with it carries them; an older
 * collector skips the unknown field (protobuf). */
static void test_user_names(void **state) {
  (void)state;
  make_sample();
  const char *why;
  Erg__Envelope *out = roundtrip(&why);
  assert_non_null(out);
  assert_int_equal(out->sample->n_users, 0);
  erg_wire_free(out);
  Erg__UserName u;
  Erg__UserName *users[1] = {&u};
  erg__user_name__init(&u);
  u.uid = 1000;
  u.name = "alice";
  sample.users = users;
  sample.n_users = 1;
  out = roundtrip(&why);
  assert_non_null(out);
  assert_int_equal(out->sample->n_users, 1);
  assert_int_equal(out->sample->users[0]->uid, 1000);
  assert_string_equal(out->sample->users[0]->name, "alice");
  assert_int_equal(out->sample->n_procs, 1);
  erg_wire_free(out);
}

static void test_rejects_garbage(void **state) {
  (void)state;
  const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x99};
  const char *why = NULL;
  assert_null(erg_wire_unpack(junk, sizeof junk, &why));
  assert_non_null(why);
  /* Every truncation of a valid message either decodes or is rejected. */
  make_sample();
  uint8_t *buf;
  size_t len = erg_wire_pack(&env, &buf);
  for (size_t n = 0; n < len; n++) {
    Erg__Envelope *e = erg_wire_unpack(buf, n, &why);
    erg_wire_free(e);
  }
  free(buf);
}

static void test_rejects_version(void **state) {
  (void)state;
  make_sample();
  env.version = ERG_WIRE_VERSION + 1;
  const char *why = NULL;
  assert_null(roundtrip(&why));
  assert_string_equal(why, "unsupported wire version");
  env.version = 0;
  assert_null(roundtrip(&why));
}

static void test_rejects_insane(void **state) {
  (void)state;
  make_sample();
  iv.realtime_end_ns = iv.realtime_start_ns;
  const char *why = NULL;
  assert_null(roundtrip(&why));
  assert_string_equal(why, "interval end not after start");
  make_sample();
  proc.cpu_ns = 10ULL * ERG_NS_PER_S; /* 10 s of CPU in 1 s on 2 CPUs */
  assert_null(roundtrip(&why));
  assert_string_equal(why, "process CPU time exceeds interval");
  make_sample();
  sample.node = "";
  assert_null(roundtrip(&why));
  make_sample();
  env.body_case = ERG__ENVELOPE__BODY__NOT_SET;
  assert_null(roundtrip(&why));
  assert_string_equal(why, "envelope without body");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip), cmocka_unit_test(test_user_names),
      cmocka_unit_test(test_rejects_garbage), cmocka_unit_test(test_rejects_version),
      cmocka_unit_test(test_rejects_insane)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

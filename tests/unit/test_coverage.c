// SPDX-License-Identifier: GPL-3.0-or-later
/* The collector's record of reported time: in-order samples, late samples
 * that fill a gap (interleaved connections after a heartbeat loss),
 * duplicates and a second agent refused, and the bounded range list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "erg_collector.h"

#define S(t) ((uint64_t)((t)*1e9))
#define SLACK 50000000ull

static int claim(struct erg_coverage *c, double a, double b) {
  return erg_coverage_claim(c, S(a), S(b), SLACK);
}

static void test_in_order_is_one_range(void **state) {
  (void)state;
  struct erg_coverage c = {0};
  for (int i = 0; i < 100; i++)
    assert_int_equal(claim(&c, 1000 + i, 1001 + i), 0);
  assert_int_equal(c.n, 1);
  assert_true(c.start_ns[0] == S(1000) && c.end_ns[0] == S(1100));
}

/* Samples 1..15 on the old connection, then 23..27 from the new one's queue
 * interleaved with 16..22 from the old one's buffers (agent.heartbeat). */
static void test_interleaved_after_reconnect(void **state) {
  (void)state;
  struct erg_coverage c = {0};
  int order[] = {23, 16, 24, 17, 25, 18, 26, 19, 20, 21, 22, 27};
  for (int s = 1; s <= 15; s++)
    assert_int_equal(claim(&c, s * 0.2, (s + 1) * 0.2), 0);
  for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
    assert_int_equal(claim(&c, order[k] * 0.2, (order[k] + 1) * 0.2), 0);
  assert_int_equal(c.n, 1); /* the gap is filled */
  /* Every one of them again is a duplicate. */
  for (int s = 1; s <= 27; s++)
    assert_int_equal(claim(&c, s * 0.2, (s + 1) * 0.2), -1);
}

static void test_overlaps_refused(void **state) {
  (void)state;
  struct erg_coverage c = {0};
  assert_int_equal(claim(&c, 100, 101), 0);
  assert_int_equal(claim(&c, 103, 104), 0);
  assert_int_equal(c.n, 2);
  assert_int_equal(claim(&c, 100.5, 101.5), -1); /* half over the first */
  assert_int_equal(claim(&c, 101.5, 103.5), -1); /* into the second */
  assert_int_equal(claim(&c, 99, 105), -1);      /* around both */
  assert_int_equal(claim(&c, 100.2, 100.4), -1); /* inside */
  /* A second agent on the same node: its 1 s samples are offset by 0.5 s. */
  assert_int_equal(claim(&c, 102.5, 103.5), -1);
  assert_int_equal(c.n, 2); /* nothing refused was recorded */
  /* Clock jitter within the slack is not an overlap. */
  assert_int_equal(claim(&c, 100.97, 102), 0);
  assert_int_equal(claim(&c, 102, 103.03), 0);
  assert_int_equal(c.n, 1);
  assert_true(c.start_ns[0] == S(100) && c.end_ns[0] == S(104));
  assert_int_equal(claim(&c, 5, 4), -1); /* backwards */
}

static void test_bounded(void **state) {
  (void)state;
  struct erg_coverage c = {0};
  /* Every other second: a new range each time. */
  for (int i = 0; i < 3 * ERG_COVERAGE_MAX; i++)
    assert_int_equal(claim(&c, 2 * i, 2 * i + 1), 0);
  assert_int_equal(c.n, ERG_COVERAGE_MAX);
  for (size_t i = 1; i < c.n; i++)
    assert_true(c.start_ns[i] > c.end_ns[i - 1]);
  /* The newest ranges are kept and still refuse duplicates. */
  assert_int_equal(claim(&c, 2 * (3 * ERG_COVERAGE_MAX - 1), 2 * (3 * ERG_COVERAGE_MAX - 1) + 1),
                   -1);
  /* A gap among the kept ranges fills it: its two neighbours and it become
   * one (and the full list dropped its oldest to take it). */
  int g = 3 * ERG_COVERAGE_MAX - 2;
  assert_int_equal(claim(&c, 2 * g - 1, 2 * g), 0);
  assert_int_equal(c.n, ERG_COVERAGE_MAX - 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_in_order_is_one_range),
      cmocka_unit_test(test_interleaved_after_reconnect),
      cmocka_unit_test(test_overlaps_refused),
      cmocka_unit_test(test_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

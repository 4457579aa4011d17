// SPDX-License-Identifier: GPL-3.0-or-later
/* Placing a BMC's readings by its own reading time (erg_readtime_place;
 * issue 33, item 3): its clock off ours, its times in whole seconds, its
 * answers 1-3 s late; a clock that stands still or steps back. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "erg_collector.h"

#define T0 1700000000.0
#define NS(t) ((uint64_t)((t)*1e9))

/* A BMC sampling every second at phase 0.37 of ours, its clock `off` s
 * ahead, times whole seconds; read back to back, each answer 1-3 s late
 * with the latest sample at the request. Returns the spread (max - min)
 * of placed - sample time over readings 10.. and of arrival - sample. */
static void bmc_run(double off, double *placed_spread, double *arrival_spread, int *used) {
  struct erg_readtime p = {0};
  unsigned seed = 11;
  double req = T0, plo = 1e9, phi = -1e9, alo = 1e9, ahi = -1e9;
  uint64_t last = 0;
  *used = 0;
  for (int k = 0; k < 300; k++) {
    double sample = floor(req - 0.37) + 0.37; /* the latest sample before the request */
    double delay = 1 + 2.0 * rand_r(&seed) / RAND_MAX;
    double arrival = req + delay;
    uint64_t rt = (uint64_t)floor(sample + off) * 1000000000ULL;
    uint64_t t = erg_readtime_place(&p, NS(arrival), rt);
    assert_true(t <= NS(arrival)); /* never after it came */
    assert_true(t >= last);        /* never back */
    last = t;
    if (k >= 10) {
      double e = (double)t / 1e9 - sample, a = arrival - sample;
      plo = fmin(plo, e), phi = fmax(phi, e), alo = fmin(alo, a), ahi = fmax(ahi, a);
      *used += p.used;
    }
    req = arrival;
  }
  *placed_spread = phi - plo, *arrival_spread = ahi - alo;
}

/* Off by an hour and a third of a second, or behind by 40 s: placed within
 * the second the whole-second time leaves open, where arrivals spread over
 * the 2 s of answer delays and the sample's age. */
static void test_offset_clock(void **s) {
  (void)s;
  double offs[] = {3600.33, -40.8, 0};
  for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
    double ps, as;
    int used;
    bmc_run(offs[i], &ps, &as, &used);
    assert_true(as > 2.5);
    assert_true(ps <= 1.05);
    assert_int_equal(used, 290);
  }
}

/* A recording's fixed ReadingTime (a clock standing still): never used. */
static void test_clock_stands_still(void **s) {
  (void)s;
  struct erg_readtime p = {0};
  for (int k = 0; k < 100; k++) {
    uint64_t a = NS(T0 + 0.5 * k);
    assert_true(erg_readtime_place(&p, a, NS(1649953290.0)) == a);
  }
  assert_int_equal(p.placed_total, 0);
}

/* No reading time: the arrival. The BMC's clock steps back an hour (NTP):
 * the readings after stay at their arrival until enough agree again, and
 * none goes back. A clock that steps forward: placed on at once. */
static void test_clock_steps(void **s) {
  (void)s;
  struct erg_readtime p = {0};
  assert_true(erg_readtime_place(&p, NS(T0), 0) == NS(T0));
  uint64_t last = 0;
  for (int k = 0; k < 100; k++) {
    double arrival = T0 + 2 * k + (k % 3) * 0.5; /* answers 0-1 s late */
    double rt = floor(T0 + 2 * k - 0.2) + 50 - (k >= 40 ? 3600 : 0);
    uint64_t t = erg_readtime_place(&p, NS(arrival), NS(rt));
    assert_true(t >= last && t <= NS(arrival));
    last = t;
    if (k >= 40 && k < 40 + ERG_READTIME_MIN_READINGS - 1)
      assert_false(p.used);
    if (k >= 10 && k < 40)
      assert_true(p.used);
    if (k >= 50)
      assert_true(p.used);
  }
}

/* Answers far later than the rest (a BMC stalling for 20 s) spread the
 * offsets: their readings stay at arrival while that one is in the window. */
static void test_stalled_answer(void **s) {
  (void)s;
  struct erg_readtime p = {0};
  for (int k = 0; k < 200; k++) {
    double sample = T0 + k, arrival = sample + 1 + (k == 20 ? 20 : 0);
    uint64_t t = erg_readtime_place(&p, NS(arrival), NS(sample + 7));
    if (k >= 10 && k < 20)
      assert_true(p.used && t == NS(arrival));
    if (k >= 20 && k < 20 + ERG_READTIME_WINDOW)
      assert_false(p.used);
    if (k >= 20 + ERG_READTIME_WINDOW)
      assert_true(p.used);
  }
}

/* Several requests in flight (ergd reads ahead on a BMC slower than its
 * period, meters_bmc.c): one every 0.5 s, each answered 1-3 s late with
 * the latest of the BMC's 1 s samples, so answers pass each other. Those
 * older than a reading already placed are stale (meter_send drops them);
 * the rest are placed by their reading time throughout. Without the stale
 * check each passed answer looks like a clock gone back and starts the
 * window over: nearly none would be placed (it was 0 of 571 here). */
static void test_answers_pass(void **s) {
  (void)s;
  struct erg_readtime p = {0};
  unsigned seed = 5;
  enum { NREQ = 600 };
  double arr[NREQ], smp[NREQ];
  int order[NREQ];
  for (int k = 0; k < NREQ; k++) {
    double req = T0 + 0.5 * k;
    smp[k] = floor(req - 0.37) + 0.37;
    arr[k] = req + 1 + 2.0 * rand_r(&seed) / RAND_MAX;
    order[k] = k;
  }
  for (int i = 1; i < NREQ; i++) /* arrival order */
    for (int j = i; j > 0 && arr[order[j]] < arr[order[j - 1]]; j--) {
      int x = order[j];
      order[j] = order[j - 1], order[j - 1] = x;
    }
  int stale = 0, used = 0, placed = 0, passed = 0;
  uint64_t newest = 0;
  for (int i = 0; i < NREQ; i++) {
    int k = order[i];
    uint64_t rt = (uint64_t)floor(smp[k] - 3600.4) * 1000000000ULL;
    passed += rt < newest;
    newest = rt > newest ? rt : newest;
    if (erg_readtime_stale(&p, rt)) {
      stale++;
      continue;
    }
    uint64_t t = erg_readtime_place(&p, NS(arr[k]), rt);
    if (i >= 30) {
      placed++;
      used += p.used;
      assert_true((double)t / 1e9 - smp[k] <= 1.05 + 1.0); /* sample + the freshest age */
    }
  }
  assert_true(passed > 100); /* the case this is about */
  assert_int_equal(stale, (int)p.stale_total);
  assert_int_equal(stale, passed);
  assert_int_equal(used, placed);
  /* A clock stepped back by more than the spread is not stale: it starts over. */
  assert_false(erg_readtime_stale(&p, newest - 3600ULL * 1000000000ULL));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_offset_clock), cmocka_unit_test(test_clock_stands_still),
      cmocka_unit_test(test_clock_steps),  cmocka_unit_test(test_stalled_answer),
      cmocka_unit_test(test_answers_pass),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Lag estimation on synthetic series with a known delay, plus the cases
 * where no estimate must be made. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "erg_collector.h"

#define T0 1700000000LL
#define NS(t) ((uint64_t)((t) * 1e9))

/* CPU load that changes every 2..8 s; power follows it `lag` s later,
 * sampled by a meter every `period` s with noise. */
static void feed(struct erg_lag *l, int lag, double period, unsigned seed, int flat) {
  double cpu[400];
  int t = 0;
  while (t < 400) {
    double level = flat ? 0.5 : (rand_r(&seed) % 100) / 100.0;
    int len = 2 + rand_r(&seed) % 7;
    for (int k = 0; k < len && t < 400; k++)
      cpu[t++] = level;
  }
  for (int s = 0; s < 400; s++)
    erg_lag_add_cpu(l, NS(T0 + s), NS(T0 + s + 1), cpu[s]);
  for (double a = 0; a + period <= 400; a += period) {
    int src = (int)floor(a) - lag;
    double p = 60 + 120 * (src >= 0 ? cpu[src] : 0) + ((rand_r(&seed) % 200) - 100) / 100.0;
    erg_lag_add_energy(l, 0, NS(T0 + a), NS(T0 + a + period), p * period);
  }
}

static void test_known_lags(void **state) {
  (void)state;
  static struct erg_lag l;
  int lags[] = {0, 1, 3, 7, 12};
  for (size_t i = 0; i < sizeof lags / sizeof lags[0]; i++) {
    erg_lag_init(&l);
    feed(&l, lags[i], 1.0, 42 + (unsigned)i, 0);
    assert_int_equal(erg_lag_estimate(&l, 15, 120), 1);
    if (abs(l.lag_seconds - lags[i]) > 1)
      fail_msg("lag %d estimated as %d (r=%.2f)", lags[i], l.lag_seconds, l.correlation);
    assert_true(l.correlation > 0.9);
    erg_lag_free(&l);
  }
  /* A meter that averages over 0.5 s steps still gives the lag. */
  erg_lag_init(&l);
  feed(&l, 5, 0.5, 9, 0);
  assert_int_equal(erg_lag_estimate(&l, 15, 120), 1);
  assert_true(abs(l.lag_seconds - 5) <= 1);
  erg_lag_free(&l);
}

/* A dual-PSU node whose second outlet (a flat 300 W) reports only now and
 * then: a second's power is the sum of both outlets and only counts when
 * both covered it. Averaging the outlets over whatever covered the second
 * would jump by ~120 W with the second outlet's coverage and bury the
 * CPU-following signal. */
static void test_two_feeds(void **state) {
  (void)state;
  static struct erg_lag l;
  erg_lag_init(&l);
  assert_int_equal(erg_lag_set_feeds(&l, 2), 0);
  feed(&l, 4, 1.0, 5, 0);
  unsigned seed = 11;
  for (int s = 0; s < 400; s++)
    if (rand_r(&seed) % 2)
      erg_lag_add_energy(&l, 1, NS(T0 + s), NS(T0 + s + 1), 300.0);
  assert_int_equal(erg_lag_estimate(&l, 15, 120), 1);
  if (abs(l.lag_seconds - 4) > 1 || l.correlation < 0.9)
    fail_msg("lag 4 estimated as %d (r=%.2f)", l.lag_seconds, l.correlation);
  erg_lag_free(&l);
}

static void test_no_estimate_without_signal(void **state) {
  (void)state;
  static struct erg_lag l;
  erg_lag_init(&l);
  feed(&l, 3, 1.0, 1, 1); /* flat load: nothing to correlate */
  assert_int_equal(erg_lag_estimate(&l, 15, 120), 0);
  assert_false(l.have_estimate);
  erg_lag_free(&l);
  erg_lag_init(&l);
  assert_int_equal(erg_lag_estimate(&l, 15, 120), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_known_lags),
                                     cmocka_unit_test(test_two_feeds),
                                     cmocka_unit_test(test_no_estimate_without_signal)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

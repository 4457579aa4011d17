// SPDX-License-Identifier: GPL-3.0-or-later
/* Lag estimation on BMC-shaped meters (issue 33, item 6): a reading that is
 * the trailing mean of the last 5 s of power (average_seconds), and
 * readings 1-3 s apart, each as old as its answer was late. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "erg_collector.h"

#define T0 1700000000LL
#define NS(t) ((uint64_t)((t)*1e9))
#define SECONDS 900

/* CPU levels held 2..8 s. */
static void steps(double *v, int n, unsigned *seed) {
  int t = 0;
  while (t < n) {
    double level = (rand_r(seed) % 100) / 100.0;
    int len = 2 + rand_r(seed) % 7;
    for (int k = 0; k < len && t < n; k++)
      v[t++] = level;
  }
}

static double power(const double *cpu, int s) { return 60 + 150 * (s >= 0 ? cpu[s] : 0); }

/* Streams SECONDS of 1 s bins: the meter shows, at second s, the mean of
 * the power of the `avg` seconds up to s - delay, in 1 W steps; an estimate
 * every 10 s from +120 s. Returns the estimates that were not want; *lag
 * the last. */
static int stream_average(struct erg_lag *l, const double *cpu, int delay, int avg, int want,
                          int *lag) {
  int wrong = 0;
  for (int s = 0; s < SECONDS; s++) {
    erg_lag_add_activity(l, NS(T0 + s), NS(T0 + s + 1), cpu[s], 0);
    double p = 0;
    for (int k = 0; k < avg; k++)
      p += power(cpu, s - delay - k) / avg;
    erg_lag_add_energy(l, 0, NS(T0 + s), NS(T0 + s + 1), floor(p + 0.5));
    if (s < 120 || s % 10)
      continue;
    erg_lag_estimate(l, 15, 120);
    wrong += !l->have_estimate || l->lag_seconds != want;
  }
  *lag = l->lag_seconds;
  return wrong;
}

/* Declared (average_seconds = 5), the mean's 5 s plateau of correlation
 * becomes a peak at the pure delay: every estimate is that delay, never a
 * change; the grid moves the readings back by it plus 2 s, the middle of
 * the 5 s window (its bins t-4 .. t). */
static void test_declared_average(void **state) {
  (void)state;
  static struct erg_lag l;
  for (unsigned seed = 1; seed <= 4; seed++) {
    double cpu[SECONDS];
    unsigned s = seed;
    steps(cpu, SECONDS, &s);
    int lag;
    erg_lag_init(&l);
    l.average_seconds = 5;
    int wrong = stream_average(&l, cpu, 3, 5, 3, &lag);
    if (wrong || l.changes)
      fail_msg("seed %u: %d estimates not 3 s, %llu changes (last %d s)", seed, wrong,
               (unsigned long long)l.changes, lag);
    /* 3 s and its fraction (0 here, but for the meter's 1 W steps). */
    assert_true(fabs(erg_lag_shift_seconds(&l) - 5.0) < 0.1);
    erg_lag_free(&l);
  }
}

/* A delay between whole seconds (d s, the power following the CPU's 1 s
 * levels at once): the meter's energy of each second is the power over
 * it, of the mean of the last avg samples when it averages. The estimate
 * is the nearest whole second and its fraction (the correlation peak's
 * parabola) the rest: lag + fraction within 0.15 s of d. */
static double stream_fraction(double d, int avg, unsigned seed) {
  static struct erg_lag l;
  double cpu[SECONDS];
  unsigned s = seed;
  steps(cpu, SECONDS, &s);
  erg_lag_init(&l);
  l.average_seconds = avg;
  /* The meter at tenths of a second: the power d s before, or the mean
   * of avg samples of it 1 s apart (a BMC's sensor, sim_bmc.c). */
  for (int sec = 0; sec < SECONDS; sec++) {
    erg_lag_add_activity(&l, NS(T0 + sec), NS(T0 + sec + 1), cpu[sec], 0);
    double j = 0;
    for (int q = 0; q < 10; q++)
      for (int a = 0; a < avg; a++) {
        double t = sec + (q + 0.5) / 10 - a - d;
        j += power(cpu, (int)floor(t)) / (10.0 * avg);
      }
    erg_lag_add_energy(&l, 0, NS(T0 + sec), NS(T0 + sec + 1), j);
    if (sec >= 120 && sec % 10 == 0)
      erg_lag_estimate(&l, 15, 120);
  }
  assert_true(l.have_estimate);
  double got = l.lag_seconds + l.lag_fraction_seconds;
  erg_lag_free(&l);
  return got;
}

static void test_fraction(void **state) {
  (void)state;
  static const double d[] = {2.0, 2.25, 2.5, 2.75, 3.0};
  for (int avg = 1; avg <= 5; avg += 4)
    for (size_t i = 0; i < sizeof d / sizeof *d; i++)
      for (unsigned seed = 1; seed <= 2; seed++) {
        double got = stream_fraction(d[i], avg, seed);
        printf("delay %.2f s, mean of %d s, seed %u: %.3f s\n", d[i], avg, seed, got);
        if (!(fabs(got - d[i]) < 0.15))
          fail_msg("delay %.2f s (mean of %d s): estimated %.3f s", d[i], avg, got);
      }
}

/* Undeclared, the estimator sees the mean's delay too (3 + 2 s, or a
 * second either side): the shift comes out near the same 5 s, less
 * surely (the margin over lags 2 s away is smaller). */
static void test_undeclared_average(void **state) {
  (void)state;
  static struct erg_lag l, d;
  double cpu[SECONDS];
  unsigned s = 7;
  steps(cpu, SECONDS, &s);
  int lag;
  erg_lag_init(&l);
  stream_average(&l, cpu, 3, 5, 5, &lag);
  assert_true(l.have_estimate);
  assert_true(abs(lag - 5) <= 1);
  erg_lag_init(&d);
  d.average_seconds = 5;
  stream_average(&d, cpu, 3, 5, 3, &lag);
  assert_true(d.confidence > l.confidence);
  erg_lag_free(&l);
  erg_lag_free(&d);
}

/* A BMC polled back to back: each answer 1-3 s late, the reading the
 * value of its 1 s sensor when the request came in, stamped at arrival; the
 * interval between two readings fed as its two halves along the line
 * between them (erg_power_halves, as ingest.c feeds power readings). In a
 * 30 s window (the short accuracy run's) the estimator has its pairs and
 * finds the mean delay: 2 s of answer + 0.5 s of sensor age, 2 or 3 s. */
static void test_late_answers(void **state) {
  (void)state;
  uint64_t tm;
  double first;
  /* 100 W then 200 W over 2 s: the line's halves hold 125 and 175 J. */
  assert_int_equal(erg_power_halves(NS(T0), NS(T0 + 2), 100, 200, 300, &tm, &first), 0);
  assert_true(llabs((long long)(tm - NS(T0 + 1))) < 1000 && fabs(first - 125) < 1e-9);
  static struct erg_lag l;
  double cpu[SECONDS];
  unsigned seed = 11;
  steps(cpu, SECONDS, &seed);
  erg_lag_init(&l);
  double t = 0, prev_t = -1, prev_w = 0;
  int estimates = 0, have = 0, act = 0;
  while (t < SECONDS - 4) {
    double late = 1 + 2 * (rand_r(&seed) / ((double)RAND_MAX + 1));
    double w = floor(power(cpu, (int)floor(t)) + 0.5), at = t + late;
    for (; act < (int)at && act < SECONDS; act++) /* the agent's seconds so far */
      erg_lag_add_activity(&l, NS(T0 + act), NS(T0 + act + 1), cpu[act], 0);
    if (prev_t >= 0) {
      double j = (prev_w + w) / 2 * (at - prev_t), first;
      uint64_t mid;
      assert_int_equal(erg_power_halves(NS(T0 + prev_t), NS(T0 + at), prev_w, w, j, &mid, &first),
                       0);
      erg_lag_add_energy(&l, 0, NS(T0 + prev_t), mid, first);
      erg_lag_add_energy(&l, 0, mid, NS(T0 + at), j - first);
    }
    prev_t = at, prev_w = w, t = at;
    if ((int)t >= 60 && (int)t / 10 > estimates) {
      estimates = (int)t / 10;
      have += erg_lag_estimate(&l, 10, 30);
    }
  }
  assert_true(l.have_estimate);
  assert_true(have > estimates / 2);
  if (l.lag_seconds < 2 || l.lag_seconds > 3)
    fail_msg("lag %d s, want 2-3 s (r=%.2f)", l.lag_seconds, l.correlation);
  erg_lag_free(&l);
}

/* The same BMC, its readings placed by their own whole-second times on a
 * clock an hour and 0.3 s off (erg_readtime_place, as the meter thread
 * places them): the answers' 1-3 s of varying delay are gone, so the
 * correlation at the estimate is higher than with arrival stamps, and the
 * lag is the freshest answer's age, ~1 s (issue 33, item 3). */
static double late_answers_r(bool placed, int *lag) {
  static struct erg_lag l;
  struct erg_readtime rt = {0};
  double cpu[SECONDS];
  unsigned seed = 11;
  steps(cpu, SECONDS, &seed);
  erg_lag_init(&l);
  double t = 0, prev_at = -1, prev_w = 0, rsum = 0;
  int act = 0, estimates = 0, n = 0;
  while (t < SECONDS - 4) {
    double late = 1 + 2 * (rand_r(&seed) / ((double)RAND_MAX + 1));
    double w = floor(power(cpu, (int)floor(t)) + 0.5), arrival = t + late;
    uint64_t rtime = (uint64_t)(floor(t) + T0 + 3600) * 1000000000ULL; /* whole seconds */
    uint64_t stamp = erg_readtime_place(&rt, NS(T0 + arrival), rtime);
    double at = placed ? (double)(stamp - NS(T0)) / 1e9 : arrival;
    for (; act < (int)arrival && act < SECONDS; act++)
      erg_lag_add_activity(&l, NS(T0 + act), NS(T0 + act + 1), cpu[act], 0);
    if (prev_at >= 0 && at > prev_at) {
      double j = (prev_w + w) / 2 * (at - prev_at), first;
      uint64_t mid;
      if (erg_power_halves(NS(T0 + prev_at), NS(T0 + at), prev_w, w, j, &mid, &first) == 0) {
        erg_lag_add_energy(&l, 0, NS(T0 + prev_at), mid, first);
        erg_lag_add_energy(&l, 0, mid, NS(T0 + at), j - first);
      } else {
        erg_lag_add_energy(&l, 0, NS(T0 + prev_at), NS(T0 + at), j);
      }
    }
    if (at > prev_at)
      prev_at = at, prev_w = w;
    t = arrival;
    if ((int)t >= 120 && (int)t / 10 > estimates) {
      estimates = (int)t / 10;
      if (erg_lag_estimate(&l, 15, 120) && l.have_estimate)
        rsum += l.correlation, n++;
    }
  }
  *lag = l.lag_seconds;
  erg_lag_free(&l);
  return n ? rsum / n : 0;
}

static void test_reading_time(void **state) {
  (void)state;
  int lag_a, lag_p;
  double ra = late_answers_r(false, &lag_a), rp = late_answers_r(true, &lag_p);
  print_message("r at arrival %.3f (lag %d s), placed %.3f (lag %d s)\n", ra, lag_a, rp, lag_p);
  assert_true(rp > ra + 0.01);
  assert_true(lag_p >= 0 && lag_p <= 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_declared_average), cmocka_unit_test(test_fraction),
      cmocka_unit_test(test_undeclared_average), cmocka_unit_test(test_late_answers),
      cmocka_unit_test(test_reading_time)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-3.0-or-later
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
#include <unistd.h>

#include "erg_collector.h"

#define T0 1700000000LL
#define NS(t) ((uint64_t)((t)*1e9))

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
    erg_lag_add_activity(l, NS(T0 + s), NS(T0 + s + 1), cpu[s], 0);
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

/* A meter half a second between two whole-second lags (power follows CPU
 * by 4.5 s: half of each second's energy 4 s later, half 5 s later), with
 * noise, estimated every 10 s over a sliding window as ergd does. Lags 4
 * and 5 then correlate equally well but for the noise, and an estimator
 * that takes whichever won the last window flips between them, shifting
 * the cells it aligns by a second each time. Returns the estimate changes
 * after the first estimate; *first gets the second of the first estimate
 * (0 if none). */
static int stream_flips(struct erg_lag *l, unsigned seed, int64_t *first, int *lag_out) {
  enum { N = 1800, WARM = 150 };
  static double cpu[N];
  int t = 0, prev = -1, flips = 0;
  while (t < N) {
    double level = (rand_r(&seed) % 100) / 100.0;
    int len = 1 + rand_r(&seed) % 4;
    for (int k = 0; k < len && t < N; k++)
      cpu[t++] = level;
  }
  *first = 0;
  for (int s = 0; s < N; s++) {
    erg_lag_add_activity(l, NS(T0 + s), NS(T0 + s + 1), cpu[s], 0);
    double u = 0.5 * (s >= 4 ? cpu[s - 4] : 0) + 0.5 * (s >= 5 ? cpu[s - 5] : 0);
    double noise = ((rand_r(&seed) % 2001) - 1000) / 1000.0 * 25.0;
    erg_lag_add_energy(l, 0, NS(T0 + s), NS(T0 + s + 1), 80 + 200 * u + noise);
    if (s < WARM || s % 10)
      continue;
    erg_lag_estimate(l, 10, 120);
    if (!l->have_estimate)
      continue;
    if (!*first)
      *first = T0 + s;
    if (prev >= 0 && l->lag_seconds != prev)
      flips++;
    prev = l->lag_seconds;
  }
  *lag_out = prev;
  return flips;
}

/* Issue 14: the estimate must not flip between two near-equal lags, and
 * it must stay one of them. */
static void test_no_flip_between_near_lags(void **state) {
  (void)state;
  static struct erg_lag l;
  int total = 0;
  for (unsigned seed = 1; seed <= 4; seed++) {
    int64_t first;
    int lag;
    erg_lag_init(&l);
    int flips = stream_flips(&l, seed, &first, &lag);
    assert_true(first > 0);
    if (lag != 4 && lag != 5)
      fail_msg("seed %u: lag %d, want 4 or 5", seed, lag);
    total += flips;
    erg_lag_free(&l);
  }
  /* 4 runs x 165 estimates; the old estimator changed its mind dozens of
   * times. One change per run is what a lag truly between two seconds may
   * legitimately cost. */
  if (total > 4)
    fail_msg("estimate changed %d times over 4 runs", total);
}

/* Cells before the first estimate, and those around it (their meter data
 * was not shifted, or only partly), are unsure; later ones are not. */
static void test_cells_unsure_until_estimate(void **state) {
  (void)state;
  static struct erg_lag l;
  erg_lag_init(&l);
  assert_true(erg_lag_cell_unsure(&l, T0, 5));
  feed(&l, 3, 1.0, 42, 0);
  assert_true(erg_lag_cell_unsure(&l, T0 + 100, 5));
  assert_int_equal(erg_lag_estimate(&l, 15, 120), 1);
  int64_t t = l.newest;
  assert_true(erg_lag_cell_unsure(&l, T0, 5));
  assert_true(erg_lag_cell_unsure(&l, t - 5, 5));
  assert_true(erg_lag_cell_unsure(&l, t, 5));
  assert_false(erg_lag_cell_unsure(&l, t + 1, 5));
  assert_false(erg_lag_cell_unsure(&l, t + 60, 5));
  erg_lag_free(&l);
}

/* Random step series: levels in [0, 1) held 2..1+spread s. */
static void steps_spread(double *v, int n, unsigned *seed, int spread) {
  int t = 0;
  while (t < n) {
    double level = (rand_r(seed) % 100) / 100.0;
    int len = 2 + rand_r(seed) % spread;
    for (int k = 0; k < len && t < n; k++)
      v[t++] = level;
  }
}

/* Levels held 2..8 s. */
static void steps(double *v, int n, unsigned *seed) { steps_spread(v, n, seed, 7); }

/* 1200 s of cpu, power following it 3 s later, then to_lag s later from
 * +600 s; an estimate every 10 s from +120 s. Returns how many of those
 * before +600 s were not 3 s; *first is the newest second at the first
 * estimate, *switched the second at which the estimate became to_lag. */
#define CHANGE_SECONDS 1200
static int stream_change(struct erg_lag *l, const double *cpu, int to_lag, int64_t *first,
                         int64_t *switched) {
  int wrong = 0;
  *first = *switched = 0;
  for (int s = 0; s < CHANGE_SECONDS; s++) {
    erg_lag_add_activity(l, NS(T0 + s), NS(T0 + s + 1), cpu[s], 0);
    int lag = s < 600 ? 3 : to_lag;
    double p = 60 + 150 * (s >= lag ? cpu[s - lag] : 0);
    erg_lag_add_energy(l, 0, NS(T0 + s), NS(T0 + s + 1), p);
    if (s < 120 || s % 10)
      continue;
    erg_lag_estimate(l, 15, 120);
    wrong += s < 600 && l->lag_seconds != 3;
    if (!*first && l->have_estimate)
      *first = l->newest;
    if (!*switched && l->lag_seconds == to_lag)
      *switched = T0 + s;
  }
  return wrong;
}

/* A real change of the meter's delay (3 s, then 8 s) is followed, and the
 * cells between the challenger's first win and the switch are unsure. */
static void test_real_change_followed(void **state) {
  (void)state;
  static struct erg_lag l;
  erg_lag_init(&l);
  unsigned seed = 3;
  double cpu[CHANGE_SECONDS];
  steps_spread(cpu, CHANGE_SECONDS, &seed, 6);
  int64_t first, switched;
  assert_int_equal(stream_change(&l, cpu, 8, &first, &switched), 0);
  assert_int_equal(l.lag_seconds, 8);
  assert_int_equal(l.changes, 1);
  assert_true(switched > T0 + 600 && switched <= T0 + 700);
  assert_true(erg_lag_cell_unsure(&l, switched - 10, 5));
  assert_false(erg_lag_cell_unsure(&l, switched + 30, 5));
  assert_false(erg_lag_cell_unsure(&l, T0 + 400, 5));
  erg_lag_free(&l);
}

/* A meter whose delay moves by one second (3 s, then 4 s: a lag between
 * two seconds drifting, or a meter update period of a second) is followed
 * too, but no cell is flagged: neighbouring lags align about as well. */
static void test_neighbour_change_unflagged(void **state) {
  (void)state;
  static struct erg_lag l;
  erg_lag_init(&l);
  unsigned seed = 5;
  double cpu[CHANGE_SECONDS];
  steps(cpu, CHANGE_SECONDS, &seed);
  int64_t first, switched;
  stream_change(&l, cpu, 4, &first, &switched);
  assert_int_equal(l.lag_seconds, 4);
  assert_int_equal(l.changes, 1);
  for (int64_t t = first + 1; t < T0 + 1190; t += 5)
    if (erg_lag_cell_unsure(&l, t, 5))
      fail_msg("cell at +%lld s flagged after a change to a neighbouring lag", (long long)(t - T0));
  erg_lag_free(&l);
}

/* Power lag s after activity: base + cpu_w × cpu + disk_w per MB/s of
 * disk (0..100 MB/s), ±5 W noise; the activity fed with or without its
 * disk bytes. */
static void feed_disk(struct erg_lag *l, int lag, unsigned seed, double cpu_w, double disk_w,
                      int with_disk) {
  enum { N = 300 };
  double cpu[N], disk[N];
  steps(cpu, N, &seed);
  steps(disk, N, &seed);
  for (int s = 0; s < N; s++) {
    double bytes = disk[s] * 100e6;
    erg_lag_add_activity(l, NS(T0 + s), NS(T0 + s + 1), cpu[s], with_disk ? bytes : 0);
    int src = s - lag;
    double p = 80 + (src >= 0 ? cpu_w * cpu[src] + disk_w * disk[src] * 100 : 0) +
               ((rand_r(&seed) % 1001) - 500) / 100.0;
    erg_lag_add_energy(l, 0, NS(T0 + s), NS(T0 + s + 1), p);
  }
}

/* Issue 14's n2: a node whose power follows its disk writes more than its
 * CPU (the accuracy run's lag wandered 2..10 s, truth 2.5 s). CPU time
 * alone explains too little of the power at any lag to give an estimate;
 * with the disk bytes the lag is found, exactly. */
static void test_disk_driven_power(void **state) {
  (void)state;
  static struct erg_lag l;
  for (unsigned seed = 1; seed <= 4; seed++) {
    int lag = 1 + (int)seed;
    erg_lag_init(&l);
    feed_disk(&l, lag, seed, 20, 2.0, 0);
    erg_lag_estimate(&l, 15, 120);
    if (l.have_estimate && l.correlation > 0.5 && l.lag_seconds == lag)
      fail_msg("seed %u: CPU time alone found lag %d (r=%.2f): the case is not disk-driven", seed,
               lag, l.correlation);
    erg_lag_free(&l);
    erg_lag_init(&l);
    feed_disk(&l, lag, seed, 20, 2.0, 1);
    assert_int_equal(erg_lag_estimate(&l, 15, 120), 1);
    if (l.lag_seconds != lag || l.correlation < 0.95)
      fail_msg("seed %u: lag %d estimated as %d (R=%.3f)", seed, lag, l.lag_seconds, l.correlation);
    erg_lag_free(&l);
  }
}

/* Disk bytes that draw no power (writeback, a quiet disk) change
 * nothing: the CPU-driven lag and its r are the CPU-only ones. */
static void test_disk_noise_ignored(void **state) {
  (void)state;
  static struct erg_lag a, b;
  for (unsigned seed = 1; seed <= 6; seed++) {
    erg_lag_init(&a);
    erg_lag_init(&b);
    feed_disk(&a, 3, seed, 150, 0, 0);
    feed_disk(&b, 3, seed, 150, 0, 1);
    assert_int_equal(erg_lag_estimate(&a, 15, 120), 1);
    assert_int_equal(erg_lag_estimate(&b, 15, 120), 1);
    assert_int_equal(a.lag_seconds, 3);
    assert_int_equal(b.lag_seconds, 3);
    if (fabs(a.correlation - b.correlation) > 1e-9 || fabs(a.confidence - b.confidence) > 1e-9)
      fail_msg("seed %u: r %.4f/%.4f, margin %.4f/%.4f with disk noise", seed, a.correlation,
               b.correlation, a.confidence, b.confidence);
    erg_lag_free(&a);
    erg_lag_free(&b);
  }
}

/* GPU boards of a node: none fed, fed as they ran (GPU_FED), or fed
 * while they sat at 60 W throughout (GPU_FLAT). */
enum { GPU_NONE, GPU_FED, GPU_FLAT };

/* Power lag s after activity: base + cpu_w × cpu + gpu_ac × board power
 * (0..300 W in steps), ±5 W noise; the boards fed as gpu_mode says. */
static void feed_gpu(struct erg_lag *l, int lag, unsigned seed, double cpu_w, double gpu_ac,
                     int gpu_mode) {
  enum { N = 300 };
  double cpu[N], gpu[N];
  steps(cpu, N, &seed);
  steps(gpu, N, &seed);
  for (int s = 0; s < N; s++) {
    erg_lag_add_activity(l, NS(T0 + s), NS(T0 + s + 1), cpu[s], 0);
    if (gpu_mode != GPU_NONE)
      erg_lag_add_gpu(l, NS(T0 + s), NS(T0 + s + 1), gpu_mode == GPU_FLAT ? 60 : 300 * gpu[s]);
    int src = s - lag;
    double p = 80 + (src >= 0 ? cpu_w * cpu[src] + gpu_ac * 300 * gpu[src] : 0) +
               ((rand_r(&seed) % 1001) - 500) / 100.0;
    erg_lag_add_energy(l, 0, NS(T0 + s), NS(T0 + s + 1), p);
  }
}

/* A GPU node whose meter follows only its boards' power, 3 s late, while
 * its CPU time moves on its own: the CPU time gives no estimate (or not
 * this one); with the GPU board energy the lag is found, exactly. */
static void test_gpu_driven_power(void **state) {
  (void)state;
  static struct erg_lag l;
  for (unsigned seed = 1; seed <= 4; seed++) {
    erg_lag_init(&l);
    feed_gpu(&l, 3, seed, 0, 1.1, GPU_NONE);
    erg_lag_estimate(&l, 15, 120);
    if (l.have_estimate && l.correlation > 0.5 && l.lag_seconds == 3)
      fail_msg("seed %u: CPU time alone found the lag (r=%.2f): the case is not GPU-driven", seed,
               l.correlation);
    erg_lag_free(&l);
    erg_lag_init(&l);
    feed_gpu(&l, 3, seed, 0, 1.1, GPU_FED);
    assert_int_equal(erg_lag_estimate(&l, 15, 120), 1);
    if (l.lag_seconds != 3 || l.correlation < 0.95)
      fail_msg("seed %u: lag 3 estimated as %d (R=%.3f)", seed, l.lag_seconds, l.correlation);
    erg_lag_free(&l);
  }
  /* Power from both: the CPU and the boards together explain it. */
  erg_lag_init(&l);
  feed_gpu(&l, 5, 11, 150, 1.1, GPU_FED);
  assert_int_equal(erg_lag_estimate(&l, 15, 120), 1);
  assert_int_equal(l.lag_seconds, 5);
  assert_true(l.correlation > 0.99);
  erg_lag_free(&l);
}

/* A CPU-driven node: the estimate, its r and margin are the CPU-only ones
 * without GPUs, with boards that sat at one power, and with boards whose
 * power the meter does not show (another node's GPUs, say). */
static void test_cpu_node_unchanged_by_gpu(void **state) {
  (void)state;
  static struct erg_lag a, b;
  for (unsigned seed = 1; seed <= 6; seed++) {
    erg_lag_init(&a);
    feed_gpu(&a, 3, seed, 150, 0, GPU_NONE);
    assert_int_equal(erg_lag_estimate(&a, 15, 120), 1);
    assert_int_equal(a.lag_seconds, 3);
    for (int mode = GPU_FED; mode <= GPU_FLAT; mode++) {
      erg_lag_init(&b);
      feed_gpu(&b, 3, seed, 150, 0, mode);
      assert_int_equal(erg_lag_estimate(&b, 15, 120), 1);
      assert_int_equal(b.lag_seconds, 3);
      if (fabs(a.correlation - b.correlation) > 1e-9 || fabs(a.confidence - b.confidence) > 1e-9)
        fail_msg("seed %u GPU mode %d: r %.4f/%.4f, margin %.4f/%.4f", seed, mode, a.correlation,
                 b.correlation, a.confidence, b.confidence);
      erg_lag_free(&b);
    }
    erg_lag_free(&a);
  }
}

/* A coarse energy counter with no power reading, as ergd feeds it: held
 * while it stands still, each move's energy spread over the time since the
 * previous move (6-15 s here). Power lags the CPU by `lag` s. */
static void feed_coarse(struct erg_lag *l, int lag, unsigned seed, double quantum_joules,
                        double poll_seconds) {
  enum { N = 400 };
  double cpu[N];
  steps(cpu, N, &seed);
  for (int s = 0; s < N; s++)
    erg_lag_add_activity(l, NS(T0 + s), NS(T0 + s + 1), cpu[s], 0);
  double energy = 0, shown = 0, moved_at = 0;
  for (double t = poll_seconds; t <= N; t += poll_seconds) {
    for (double u = t - poll_seconds; u < t - 1e-9; u += 0.25) {
      int src = (int)floor(u) - lag;
      energy += 0.25 * (120 + 180 * (src >= 0 ? cpu[src] : 0));
    }
    double counter = quantum_joules * floor(energy / quantum_joules);
    if (counter > shown) {
      if (shown > 0)
        erg_lag_add_energy(l, 0, NS(T0 + moved_at), NS(T0 + t), counter - shown);
      shown = counter;
      moved_at = t;
    }
  }
}

/* A meter whose energy comes in intervals of several seconds cannot time a
 * lag: no estimate (the old estimator, fed the flat spread, took a chance
 * peak: 7 s for a meter with none), the node marked smeared, its cells not
 * flagged. A 5-s poll of a fine meter is the same case; polled every
 * 0.5 s, the same fine meter gives its lag. */
static void test_smeared_meter(void **state) {
  (void)state;
  static struct erg_lag l;
  for (unsigned seed = 1; seed <= 4; seed++) {
    for (int lag = 0; lag <= 3; lag += 3) {
      erg_lag_init(&l);
      feed_coarse(&l, lag, seed, 1757.8, 0.5);
      erg_lag_estimate(&l, 15, 120);
      if (l.have_estimate)
        fail_msg("seed %u lag %d: a lag of %d s (r=%.2f, margin %.2f) from a coarse counter", seed,
                 lag, l.lag_seconds, l.correlation, l.confidence);
      assert_true(l.smeared);
      assert_true(erg_lag_unresolved(&l));
      assert_false(erg_lag_cell_unsure(&l, l.newest - 30, 5));
      erg_lag_free(&l);
    }
  }
  /* Polled every 5 s: each 5-s delta smeared alike. */
  erg_lag_init(&l);
  feed_coarse(&l, 3, 7, 1.0, 5.0);
  assert_int_equal(erg_lag_estimate(&l, 15, 120), 0);
  assert_true(erg_lag_unresolved(&l));
  erg_lag_free(&l);
  /* Polled every 0.5 s with a fine counter: the lag, not smeared. */
  erg_lag_init(&l);
  feed_coarse(&l, 3, 7, 1.0, 0.5);
  assert_int_equal(erg_lag_estimate(&l, 15, 120), 1);
  assert_true(abs(l.lag_seconds - 3) <= 1);
  assert_false(l.smeared);
  assert_false(erg_lag_unresolved(&l));
  erg_lag_free(&l);
}

/* The last run's lag, restored: cells are not unsure before any estimate
 * of this run; a first estimate that agrees confirms it (nothing flagged),
 * one that beats it replaces it at once and flags every cell so far. */
static void test_restored_lag(void **state) {
  (void)state;
  static struct erg_lag l;
  erg_lag_init(&l);
  erg_lag_restore(&l, 3, 0.25, 0.9, 0.3);
  assert_true(l.have_estimate && l.restored);
  assert_false(erg_lag_cell_unsure(&l, T0, 5));
  /* The fraction kept: the first cells are moved back as far as before. */
  assert_float_equal(erg_lag_shift_seconds(&l), 3.25, 1e-12);
  feed(&l, 3, 1.0, 42, 0);
  assert_int_equal(erg_lag_estimate(&l, 15, 120), 1);
  assert_int_equal(l.lag_seconds, 3);
  assert_false(l.restored);
  assert_int_equal(l.changes, 0);
  assert_false(erg_lag_cell_unsure(&l, T0, 5));
  assert_false(erg_lag_cell_unsure(&l, l.newest - 5, 5));
  assert_true(l.correlation > 0.9);
  erg_lag_free(&l);

  /* Stored 9 s, the meter now lags 3 s: replaced by the first estimate. */
  erg_lag_init(&l);
  erg_lag_restore(&l, 9, 0, 0.9, 0.3);
  feed(&l, 3, 1.0, 42, 0);
  assert_false(erg_lag_cell_unsure(&l, T0 + 100, 5)); /* not yet known */
  assert_int_equal(erg_lag_estimate(&l, 15, 120), 1);
  assert_int_equal(l.lag_seconds, 3);
  assert_false(l.restored);
  assert_int_equal(l.changes, 1);
  assert_true(erg_lag_cell_unsure(&l, T0, 5));
  assert_true(erg_lag_cell_unsure(&l, l.newest - 5, 5));
  assert_false(erg_lag_cell_unsure(&l, l.newest + 1, 5));
  erg_lag_free(&l);

  /* Stored 4 s, the meter now lags 3 s: replaced, and as a neighbour it
   * flags nothing. */
  erg_lag_init(&l);
  erg_lag_restore(&l, 4, 0, 0.9, 0.3);
  feed(&l, 3, 1.0, 42, 0);
  assert_int_equal(erg_lag_estimate(&l, 15, 120), 1);
  assert_int_equal(l.lag_seconds, 3);
  assert_false(l.restored);
  assert_int_equal(l.changes, 1);
  assert_false(erg_lag_cell_unsure(&l, T0, 5));
  assert_false(erg_lag_cell_unsure(&l, l.newest - 5, 5));
  erg_lag_free(&l);

  /* A flat load gives no estimate: the restored lag stays in use. */
  erg_lag_init(&l);
  erg_lag_restore(&l, 4, 0, 0.9, 0.3);
  feed(&l, 3, 1.0, 1, 1);
  assert_int_equal(erg_lag_estimate(&l, 15, 120), 0);
  assert_true(l.restored && l.lag_seconds == 4);
  assert_false(erg_lag_cell_unsure(&l, T0 + 200, 5));
  erg_lag_free(&l);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* JOURNAL_DIR/NODE.lag: written and read back; no file, a damaged one and
 * out-of-range values are told apart and never half-used. */
static void test_lag_file(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-test-lag.XXXXXX", path[1100], why[1300];
  assert_non_null(mkdtemp(dir));
  assert_int_equal(erg_lag_file_path(dir, "../n1<x>", path, sizeof path), 0);
  assert_non_null(strstr(path, dir));
  assert_null(strstr(path + strlen(dir), "/.."));
  assert_string_equal(path + strlen(path) - 4, ".lag");
  struct erg_lag_saved in = {.lag_seconds = 7,
                             .fraction_seconds = -0.375,
                             .correlation = 0.8765,
                             .confidence = 0.125,
                             .estimated_s = T0},
                       out;
  assert_int_equal(erg_lag_file_read(path, &out, why, sizeof why), 0);
  assert_int_equal(erg_lag_file_write(path, &in, why, sizeof why), 0);
  assert_int_equal(erg_lag_file_read(path, &out, why, sizeof why), 1);
  assert_int_equal(out.lag_seconds, 7);
  assert_float_equal(out.fraction_seconds, -0.375, 1e-9);
  assert_true(fabs(out.correlation - 0.8765) < 1e-9 && fabs(out.confidence - 0.125) < 1e-9);
  assert_true(out.estimated_s == T0);
  /* A file written before the fraction was kept: read, with none. */
  write_text(
      path,
      "erg-meter-lag 1 lag_seconds=3 correlation=0.9 confidence=0.1 estimated_unix_seconds=1\n");
  assert_int_equal(erg_lag_file_read(path, &out, why, sizeof why), 1);
  assert_int_equal(out.lag_seconds, 3);
  assert_float_equal(out.fraction_seconds, 0, 0);
  const char *bad[] = {
      "",
      "garbage\n",
      "erg-meter-lag 1 lag_seconds=3\n",
      "erg-meter-lag 2 lag_seconds=3 correlation=0.9 confidence=0.1 estimated_unix_seconds=1\n",
      "erg-meter-lag 1 lag_seconds=-1 correlation=0.9 confidence=0.1 estimated_unix_seconds=1\n",
      "erg-meter-lag 1 lag_seconds=9999 correlation=0.9 confidence=0.1 estimated_unix_seconds=1\n",
      "erg-meter-lag 1 lag_seconds=3 correlation=nan confidence=0.1 estimated_unix_seconds=1\n",
      "erg-meter-lag 1 lag_seconds=3 correlation=0.9 confidence=0.1 estimated_unix_seconds=1x\n",
      "erg-meter-lag 1 lag_seconds=3 correlation=0.9 confidence=0.1 estimated_unix_seconds=1 "
      "fraction_seconds=0.7\n",
      "erg-meter-lag 1 lag_seconds=3 correlation=0.9 confidence=0.1 estimated_unix_seconds=1 "
      "fraction_seconds=nan\n",
      "erg-meter-lag 1 lag_seconds=3 correlation=0.9 confidence=0.1 estimated_unix_seconds=1 "
      "fraction_seconds=0.1 x\n"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    write_text(path, bad[i]);
    why[0] = 0;
    if (erg_lag_file_read(path, &out, why, sizeof why) != -1)
      fail_msg("accepted: '%s'", bad[i]);
    assert_non_null(strstr(why, "not an erg meter lag file"));
  }
  unlink(path);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_known_lags),
                                     cmocka_unit_test(test_two_feeds),
                                     cmocka_unit_test(test_no_estimate_without_signal),
                                     cmocka_unit_test(test_no_flip_between_near_lags),
                                     cmocka_unit_test(test_cells_unsure_until_estimate),
                                     cmocka_unit_test(test_real_change_followed),
                                     cmocka_unit_test(test_restored_lag),
                                     cmocka_unit_test(test_neighbour_change_unflagged),
                                     cmocka_unit_test(test_smeared_meter),
                                     cmocka_unit_test(test_lag_file),
                                     cmocka_unit_test(test_disk_driven_power),
                                     cmocka_unit_test(test_disk_noise_ignored),
                                     cmocka_unit_test(test_gpu_driven_power),
                                     cmocka_unit_test(test_cpu_node_unchanged_by_gpu)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

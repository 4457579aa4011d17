// SPDX-License-Identifier: GPL-3.0-or-later
/* erg_pdu_counter_update: wraps, resets, gaps and the power fallback. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "erg_pdu.h"

#define S 1000000000ULL
#define GAP (60 * S)
#define WRAP_WH32 (4294967296.0 * 3600.0) /* Counter32 of Wh */

static struct erg_pdu_reading rd(uint64_t t_s, double w, double j) {
  return (struct erg_pdu_reading){.t_ns = t_s * S, .watts = w, .energy_joules = j, .ok = true};
}

static enum erg_pdu_delta_kind upd(struct erg_pdu_counter *c, struct erg_pdu_reading r, double *j) {
  uint64_t t0 = 0, t1 = 0;
  *j = -1;
  enum erg_pdu_delta_kind k = erg_pdu_counter_update(c, &r, GAP, &t0, &t1, j);
  if (k == ERG_PDU_DELTA_ENERGY || k == ERG_PDU_DELTA_POWER)
    assert_true(t1 == r.t_ns && t0 < t1);
  return k;
}

static void test_first_then_energy(void **st) {
  (void)st;
  struct erg_pdu_counter c = {0};
  double j;
  assert_int_equal(upd(&c, rd(100, 200, 1e6), &j), ERG_PDU_DELTA_NONE);
  assert_int_equal(upd(&c, rd(105, 200, 1e6 + 1000), &j), ERG_PDU_DELTA_ENERGY);
  assert_float_equal(j, 1000, 1e-9);
}

static void test_wrap_at_2_32_times_scale(void **st) {
  (void)st;
  struct erg_pdu_counter c = {.wrap_joules = WRAP_WH32};
  double j;
  double before = WRAP_WH32 - 3600.0 * 2; /* 2 Wh below the top */
  upd(&c, rd(0, NAN, before), &j);
  /* 5 Wh later the 32-bit Wh counter reads 3. */
  assert_int_equal(upd(&c, rd(10, NAN, 3 * 3600.0), &j), ERG_PDU_DELTA_ENERGY);
  assert_float_equal(j, 5 * 3600.0, 1e-3);
}

static void test_reset_after_reboot_is_not_energy(void **st) {
  (void)st;
  struct erg_pdu_counter c = {.wrap_joules = WRAP_WH32};
  double j;
  upd(&c, rd(0, 300, 1e9), &j); /* well below half the modulus */
  assert_int_equal(upd(&c, rd(5, 300, 7200), &j), ERG_PDU_DELTA_RESET);
  assert_float_equal(j, -1, 0); /* nothing written */
  /* Counting resumes from the new base. */
  assert_int_equal(upd(&c, rd(10, 300, 7200 + 1500), &j), ERG_PDU_DELTA_ENERGY);
  assert_float_equal(j, 1500, 1e-9);
}

static void test_reset_without_wrap_info(void **st) {
  (void)st;
  struct erg_pdu_counter c = {0};
  double j;
  upd(&c, rd(0, NAN, 5e6), &j);
  assert_int_equal(upd(&c, rd(5, NAN, 0), &j), ERG_PDU_DELTA_RESET);
}

static void test_implausible_jump_is_reset(void **st) {
  (void)st;
  struct erg_pdu_counter c = {0};
  double j;
  upd(&c, rd(0, NAN, 1000), &j);
  /* 10 s later +2 MJ = 200 kW on one outlet: a counter glitch. */
  assert_int_equal(upd(&c, rd(10, NAN, 1000 + 2e6), &j), ERG_PDU_DELTA_RESET);
}

static void test_gap_starts_over(void **st) {
  (void)st;
  struct erg_pdu_counter c = {0};
  double j;
  upd(&c, rd(0, 100, 0), &j);
  assert_int_equal(upd(&c, rd(61, 100, 6100), &j), ERG_PDU_DELTA_NONE);
  assert_int_equal(upd(&c, rd(66, 100, 6600), &j), ERG_PDU_DELTA_ENERGY);
  assert_float_equal(j, 500, 1e-9);
}

static void test_power_trapezoid_when_no_counter(void **st) {
  (void)st;
  struct erg_pdu_counter c = {0};
  double j;
  upd(&c, rd(0, 100, NAN), &j);
  assert_int_equal(upd(&c, rd(4, 300, NAN), &j), ERG_PDU_DELTA_POWER);
  assert_float_equal(j, 0.5 * (100 + 300) * 4, 1e-9);
}

/* A counter whose step exceeds 5 % of the interval's energy is left to the
 * watts: APC's 0.1 kWh (360 kJ) over 5 s at 200 W reads 0 J or a lump.
 * A fine one (1 J) is used; without watts even a coarse one is used. */
static void test_coarse_counter_uses_power(void **st) {
  (void)st;
  struct erg_pdu_counter c = {0};
  double j;
  struct erg_pdu_reading a = rd(100, 200, 360e3), b = rd(105, 220, 720e3);
  a.energy_resolution_joules = b.energy_resolution_joules = 360e3;
  assert_int_equal(upd(&c, a, &j), ERG_PDU_DELTA_NONE);
  assert_int_equal(upd(&c, b, &j), ERG_PDU_DELTA_POWER);
  assert_float_equal(j, 0.5 * (200 + 220) * 5, 1e-9);
  /* A 1 J counter (erg-pdusim's) at 210 W over 5 s is fine. */
  struct erg_pdu_counter d = {0};
  struct erg_pdu_reading e = rd(200, 210, 1e6), f = rd(205, 210, 1e6 + 1000);
  e.energy_resolution_joules = f.energy_resolution_joules = 1.0;
  upd(&d, e, &j);
  assert_int_equal(upd(&d, f, &j), ERG_PDU_DELTA_ENERGY);
  assert_float_equal(j, 1000, 1e-9);
  /* 1 Wh (3600 J) over a 1 s poll at 300 W: coarse; with a 300 s grid
   * step as the horizon (90 kJ per cell), fine. */
  struct erg_pdu_counter k = {0}, m = {.horizon_seconds = 300};
  struct erg_pdu_reading p = rd(400, 300, 36e5), q = rd(401, 300, 36e5 + 3600);
  p.energy_resolution_joules = q.energy_resolution_joules = 3600;
  upd(&k, p, &j);
  assert_int_equal(upd(&k, q, &j), ERG_PDU_DELTA_POWER);
  upd(&m, p, &j);
  assert_int_equal(upd(&m, q, &j), ERG_PDU_DELTA_ENERGY);
  /* No watts: the coarse counter is all there is. */
  struct erg_pdu_counter g = {0};
  struct erg_pdu_reading h = rd(300, NAN, 360e3), i = rd(305, NAN, 720e3);
  h.energy_resolution_joules = i.energy_resolution_joules = 360e3;
  upd(&g, h, &j);
  assert_int_equal(upd(&g, i, &j), ERG_PDU_DELTA_ENERGY);
  assert_float_equal(j, 360e3, 1e-9);
}

/* Issue 14: a generic float32 kWh register at 48,213 kWh, polled every
 * second at ~300 W. The register moves by 2^-8 kWh (14,062.5 J) every ~47 s,
 * so trusted it gives 0 W cells and single cells of thousands of W. Its
 * spacing at the value, carried by the reading, makes the watts count. */
static void test_float32_kwh_counter_uses_power(void **st) {
  (void)st;
  struct erg_pdu_counter c = {.horizon_seconds = 5};
  double kwh = 48213.0, sum = 0, truth = 0, j;
  for (int s = 0; s < 120; s++) {
    float shown = (float)(kwh + 300.0 * s / 3.6e6);
    struct erg_pdu_reading r = rd(1000 + (uint64_t)s, 300, (double)shown * 3.6e6);
    r.energy_resolution_joules = (nextafterf(shown, INFINITY) - shown) * 3.6e6;
    enum erg_pdu_delta_kind k = upd(&c, r, &j);
    if (s == 0)
      continue;
    assert_int_equal(k, ERG_PDU_DELTA_POWER);
    sum += j;
    truth += 300;
  }
  assert_float_equal(sum, truth, 1e-6);
  assert_true(c.coarse);
  assert_int_equal(c.coarse_intervals, 119);
  assert_float_equal(c.resolution_joules, 14062.5, 1e-6);
}

/* A counter of unknown step (an SNMP or generic integer register whose
 * meter counts in 0.01 kWh inside) gives itself away: it stands still
 * under load, then moves by whole 36 kJ steps. From the third on the watts
 * count. */
static void test_observed_step_marks_coarse(void **st) {
  (void)st;
  struct erg_pdu_counter c = {.horizon_seconds = 5};
  double j, e = 36e3 * 1000;
  for (int s = 0; s < 600; s++) {
    if (s > 0 && s % 120 == 0)
      e += 36e3; /* 300 W for 120 s */
    enum erg_pdu_delta_kind k = upd(&c, rd(2000 + (uint64_t)s, 300, e), &j);
    if (s > 0)
      assert_int_equal(k, s < 360 ? ERG_PDU_DELTA_ENERGY : ERG_PDU_DELTA_POWER);
  }
  assert_true(c.coarse);
  assert_float_equal(c.min_step_joules, 36e3, 1e-9);
  assert_float_equal(c.resolution_joules, 36e3, 1e-9);
  /* A fine counter refreshed every second but polled every half second
   * also stands still, then moves by what the load drew: never whole
   * multiples of one step, so never taken for coarse. */
  struct erg_pdu_counter v = {.horizon_seconds = 5};
  double shown = 5e6, w = 200;
  for (int h = 0; h < 400; h++) {
    w = 200 + 100 * sin(h * 0.37);
    if (h % 2 == 0)
      shown += w; /* one second of load, whole joules */
    struct erg_pdu_reading r = rd(0, w, floor(shown));
    r.t_ns = 5000 * S + (uint64_t)h * (S / 2);
    r.energy_resolution_joules = 1.0;
    if (upd(&v, r, &j) != ERG_PDU_DELTA_NONE)
      assert_false(v.coarse);
  }
  assert_true(v.stood_still);
  assert_true(v.uneven_move);
  /* A fine counter (1 J) that moves every poll is never taken for coarse. */
  struct erg_pdu_counter f = {.horizon_seconds = 5};
  for (int s = 0; s < 50; s++)
    if (upd(&f, rd(3000 + (uint64_t)s, 300, 1e6 + 300.0 * s), &j) != ERG_PDU_DELTA_NONE)
      assert_float_equal(j, 300, 1e-9);
  assert_false(f.coarse);
  assert_false(f.stood_still);
}

static void test_failed_reading_keeps_state(void **st) {
  (void)st;
  struct erg_pdu_counter c = {0};
  double j;
  upd(&c, rd(0, NAN, 100), &j);
  struct erg_pdu_reading bad = rd(5, NAN, 999999);
  bad.ok = false;
  assert_int_equal(upd(&c, bad, &j), ERG_PDU_DELTA_NONE);
  assert_int_equal(upd(&c, rd(10, NAN, 600), &j), ERG_PDU_DELTA_ENERGY);
  assert_float_equal(j, 500, 1e-9);
}

static void test_clock_backwards(void **st) {
  (void)st;
  struct erg_pdu_counter c = {0};
  double j;
  upd(&c, rd(100, NAN, 100), &j);
  assert_int_equal(upd(&c, rd(90, NAN, 200), &j), ERG_PDU_DELTA_NONE);
}

/* No watts, a counter that steps by 14,062.5 J (a float32 kWh register
 * at 48,213 kWh) under a steady 300 W, polled every second: held while it
 * stands still, each move spread over the time since the previous move,
 * so the energy per interval is the step and the mean power ~300 W, never
 * 0 W then 14 kW. Without holding (hold_max_ns 0) the old lumps come back. */
static void test_hold_without_watts(void **st) {
  (void)st;
  const double step = 14062.5, watts = 300;
  struct erg_pdu_counter c = {.hold_max_ns = 300 * S}, old = {0};
  double j, total = 0, total_old = 0, truth_end = 0;
  uint64_t prev_t1 = 0;
  int moves = 0, held = 0, zero_old = 0;
  for (uint64_t t = 0; t <= 600; t++) {
    double shown = floor(watts * t / step) * step; /* what the register shows */
    uint64_t t0 = 0, t1 = 0;
    struct erg_pdu_reading r = rd(t, NAN, 1e9 + shown);
    enum erg_pdu_delta_kind k = erg_pdu_counter_update(&c, &r, GAP, &t0, &t1, &j);
    if (k == ERG_PDU_DELTA_HELD) {
      held++;
    } else if (k == ERG_PDU_DELTA_ENERGY) {
      assert_float_equal(j, step, 1e-6);
      if (moves > 0) { /* the first move's span starts at the first reading */
        assert_true(t0 == prev_t1);
        double w = j / ((double)(t1 - t0) / S);
        if (fabs(w - watts) > 0.03 * watts)
          fail_msg("t=%llu: %.1f W over %.0f s", (unsigned long long)t, w, (double)(t1 - t0) / S);
      }
      prev_t1 = t1;
      total += j;
      moves++;
      truth_end = shown;
    }
    if (upd(&old, r, &j) == ERG_PDU_DELTA_ENERGY) {
      total_old += j;
      zero_old += j == 0;
    }
  }
  assert_int_equal(moves, (int)floor(watts * 600 / step));
  assert_true(held > 500);
  assert_true(c.held_polls == (uint64_t)held);
  assert_float_equal(total, truth_end, 1e-6); /* nothing lost or doubled */
  assert_float_equal(total_old, truth_end, 1e-6);
  assert_true(zero_old > 500); /* the old way: 0 J seconds, then a lump */
  assert_true(c.last_held_seconds > 40 && c.last_held_seconds < 50);
}

/* Holding ends after hold_max_ns: a counter that stays put (an outlet that
 * is off) then gives 0 J, as before; a counter with watts never holds; a
 * gap between two readings longer than the bridge still starts over. */
static void test_hold_bounds(void **st) {
  (void)st;
  struct erg_pdu_counter c = {.hold_max_ns = 10 * S};
  double j;
  assert_int_equal(upd(&c, rd(0, NAN, 500), &j), ERG_PDU_DELTA_NONE);
  for (uint64_t t = 1; t < 10; t++)
    assert_int_equal(upd(&c, rd(t, NAN, 500), &j), ERG_PDU_DELTA_HELD);
  assert_int_equal(upd(&c, rd(10, NAN, 500), &j), ERG_PDU_DELTA_ENERGY);
  assert_float_equal(j, 0, 1e-9);
  assert_false(c.held);
  struct erg_pdu_counter w = {.hold_max_ns = 10 * S};
  upd(&w, rd(0, 300, 500), &j);
  assert_int_equal(upd(&w, rd(1, 300, 500), &j), ERG_PDU_DELTA_ENERGY);
  struct erg_pdu_counter g = {.hold_max_ns = 300 * S};
  upd(&g, rd(0, NAN, 500), &j);
  assert_int_equal(upd(&g, rd(1, NAN, 500), &j), ERG_PDU_DELTA_HELD);
  assert_int_equal(upd(&g, rd(1 + 61, NAN, 9000), &j), ERG_PDU_DELTA_NONE); /* GAP 60 s */
  assert_int_equal(upd(&g, rd(63, NAN, 9300), &j), ERG_PDU_DELTA_ENERGY);
  assert_float_equal(j, 300, 1e-9);
}

/* A power reading that is a bad value (text, an impossible number) beside a
 * counter that stands still: no hold, no 0 J; the interval is unknown
 * (issue 34: such nodes had no cells until the hold ran out, then 0 W). A
 * move still counts. */
static void test_bad_power_is_no_hold(void **st) {
  (void)st;
  struct erg_pdu_counter c = {.hold_max_ns = 300 * S};
  double j;
  struct erg_pdu_reading r = rd(0, NAN, 500);
  r.bad_value = true;
  assert_int_equal(upd(&c, r, &j), ERG_PDU_DELTA_NONE);
  for (uint64_t t = 1; t < 5; t++) {
    r = rd(t, NAN, 500);
    r.bad_value = true;
    assert_int_equal(upd(&c, r, &j), ERG_PDU_DELTA_NONE);
    assert_false(c.held);
  }
  r = rd(5, NAN, 800);
  r.bad_value = true;
  assert_int_equal(upd(&c, r, &j), ERG_PDU_DELTA_ENERGY);
  assert_float_equal(j, 300, 1e-9);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_first_then_energy),
      cmocka_unit_test(test_wrap_at_2_32_times_scale),
      cmocka_unit_test(test_reset_after_reboot_is_not_energy),
      cmocka_unit_test(test_reset_without_wrap_info),
      cmocka_unit_test(test_implausible_jump_is_reset),
      cmocka_unit_test(test_gap_starts_over),
      cmocka_unit_test(test_power_trapezoid_when_no_counter),
      cmocka_unit_test(test_coarse_counter_uses_power),
      cmocka_unit_test(test_failed_reading_keeps_state),
      cmocka_unit_test(test_float32_kwh_counter_uses_power),
      cmocka_unit_test(test_observed_step_marks_coarse),
      cmocka_unit_test(test_clock_backwards),
      cmocka_unit_test(test_hold_without_watts),
      cmocka_unit_test(test_hold_bounds),
      cmocka_unit_test(test_bad_power_is_no_hold),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

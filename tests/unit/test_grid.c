/* The alignment grid: overlap apportioning, settle delay, order, late and
 * missing data, and conservation in attribution. */
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

#define S(x) ((uint64_t)((x) * 1e9))
#define T0 1700000000LL /* multiple of 5 */

struct seen {
  int n;
  int64_t t0[64];
  double watts[64];
  int flags[64];
  double key_cpu[64];
  double busy[64];
};

static void on_cell(void *user, const struct erg_grid_result *r) {
  struct seen *s = user;
  s->t0[s->n] = r->t0;
  s->watts[s->n] = r->measured_watts;
  s->flags[s->n] = r->flags;
  s->busy[s->n] = r->cell->busy_cpu_seconds;
  s->key_cpu[s->n] = r->cell->nkeys ? r->cell->keys[0].cpu_seconds : 0;
  s->n++;
}

static void test_energy_overlap(void **state) {
  (void)state;
  struct erg_grid g;
  erg_grid_init(&g, 5);
  /* Meter readings every 2 s at a constant 100 W, starting at T0-1:
   * intervals straddle cell borders. */
  for (int i = 0; i < 10; i++)
    erg_grid_add_energy(&g, S(T0 - 1 + 2 * i), S(T0 + 1 + 2 * i), 200.0);
  struct seen s = {0};
  /* Nothing is final before end + settle. */
  assert_int_equal(erg_grid_finalize(&g, T0 + 9, 10, on_cell, &s), 0);
  erg_grid_finalize(&g, T0 + 20 + 10, 10, on_cell, &s);
  /* Cells: [T0-5,T0) has 1 s of coverage -> missing; then full cells. */
  assert_int_equal(s.n, 5);
  assert_int_equal(s.t0[0], T0 - 5);
  assert_true(s.flags[0] & ERG_CELL_NO_METER);
  assert_true(isnan(s.watts[0]));
  assert_int_equal(s.t0[1], T0);
  assert_false(s.flags[1] & ERG_CELL_NO_METER);
  assert_float_equal(s.watts[1], 100.0, 1e-9);
  assert_float_equal(s.watts[2], 100.0, 1e-9);
  assert_float_equal(s.watts[3], 100.0, 1e-9);
  /* [T0+15, T0+20) saw only [T0+15, T0+19): 4 s of 5 is enough. */
  assert_false(s.flags[4] & ERG_CELL_NO_METER);
  assert_float_equal(s.watts[4], 100.0, 1e-9);
  erg_grid_free(&g);
}

static void test_sample_apportion(void **state) {
  (void)state;
  struct erg_grid g;
  erg_grid_init(&g, 5);
  const char *keys[] = {"burn"};
  /* One 2 s sample from T0+4 to T0+6: 1 s in each of two cells. */
  double cpu[] = {1.0};
  erg_grid_add_sample(&g, S(T0 + 4), S(T0 + 6), 1.5, 0.5, keys, cpu, 1);
  struct seen s = {0};
  erg_grid_finalize(&g, T0 + 100, 0, on_cell, &s);
  assert_true(s.n >= 2);
  assert_int_equal(s.t0[0], T0);
  assert_float_equal(s.key_cpu[0], 0.5, 1e-9);
  assert_float_equal(s.key_cpu[1], 0.5, 1e-9);
  assert_float_equal(s.busy[0], 0.75, 1e-9);
  /* 1 s of agent coverage in a 5 s cell: marked missing, not faked. */
  assert_true(s.flags[0] & ERG_CELL_NO_AGENT);
  erg_grid_free(&g);
}

static void test_late_and_future(void **state) {
  (void)state;
  struct erg_grid g;
  erg_grid_init(&g, 5);
  erg_grid_add_energy(&g, S(T0), S(T0 + 5), 500);
  struct seen s = {0};
  erg_grid_finalize(&g, T0 + 10, 0, on_cell, &s);
  assert_int_equal(s.n, 2);
  /* Data for a finalised cell is dropped and counted, never re-emitted. */
  erg_grid_add_energy(&g, S(T0), S(T0 + 5), 500);
  assert_int_equal(g.late_seconds_dropped, 5);
  erg_grid_add_energy(&g, S(T0 + 5LL * 10000), S(T0 + 5LL * 10000 + 5), 500);
  assert_int_equal(g.future_seconds_dropped, 5);
  int before = s.n;
  erg_grid_finalize(&g, T0 + 10, 0, on_cell, &s);
  assert_int_equal(s.n, before);
  erg_grid_free(&g);
}

static void test_order_and_gaps(void **state) {
  (void)state;
  struct erg_grid g;
  erg_grid_init(&g, 5);
  erg_grid_add_energy(&g, S(T0), S(T0 + 5), 500);
  erg_grid_add_energy(&g, S(T0 + 20), S(T0 + 25), 1000);
  struct seen s = {0};
  erg_grid_finalize(&g, T0 + 40, 5, on_cell, &s);
  /* Every cell exactly once, in order, the gap marked missing. */
  for (int i = 0; i < s.n; i++)
    assert_int_equal(s.t0[i], T0 + 5 * i);
  assert_float_equal(s.watts[0], 100, 1e-9);
  assert_true(s.flags[1] & ERG_CELL_NO_METER);
  assert_float_equal(s.watts[4], 200, 1e-9);
  erg_grid_free(&g);
}

static void test_attribution_conserves(void **state) {
  (void)state;
  unsigned seed = 7;
  for (int iter = 0; iter < 5000; iter++) {
    struct erg_grid_cell c = {0};
    struct erg_grid_key keys[8];
    c.keys = keys;
    c.nkeys = (size_t)(rand_r(&seed) % 8);
    for (size_t i = 0; i < c.nkeys; i++) {
      snprintf(keys[i].key, sizeof keys[i].key, "k%zu", i);
      keys[i].cpu_seconds = (rand_r(&seed) % 3 == 0) ? 0 : rand_r(&seed) / (double)RAND_MAX;
    }
    c.system_cpu_seconds = (rand_r(&seed) % 2) ? rand_r(&seed) / (double)RAND_MAX : 0;
    double measured = 300.0 * rand_r(&seed) / RAND_MAX;
    double idle = 100.0;
    struct erg_attr_share sh[9];
    double got_idle = erg_attribute_cpu_share(&c, measured, idle, sh);
    double sum = got_idle;
    for (size_t i = 0; i <= c.nkeys; i++) {
      assert_true(sh[i].watts >= 0);
      sum += sh[i].watts;
    }
    assert_float_equal(sum, measured, 1e-9 * (1 + measured));
    assert_true(got_idle <= idle + 1e-12);
  }
}

static void test_identical_processes_equal(void **state) {
  (void)state;
  struct erg_grid_key keys[2] = {{"a", 1.0}, {"b", 1.0}};
  struct erg_grid_cell c = {.keys = keys, .nkeys = 2, .system_cpu_seconds = 0.5};
  struct erg_attr_share sh[3];
  double idle = erg_attribute_cpu_share(&c, 150, 50, sh);
  assert_float_equal(idle, 50, 1e-12);
  assert_float_equal(sh[0].watts, 40, 1e-9);
  assert_float_equal(sh[1].watts, 40, 1e-9);
  assert_float_equal(sh[2].watts, 20, 1e-9);
  assert_string_equal(sh[2].key, "[system]");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_energy_overlap),       cmocka_unit_test(test_sample_apportion),
      cmocka_unit_test(test_late_and_future),      cmocka_unit_test(test_order_and_gaps),
      cmocka_unit_test(test_attribution_conserves), cmocka_unit_test(test_identical_processes_equal)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

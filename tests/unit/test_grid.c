// SPDX-License-Identifier: GPL-3.0-or-later
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
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "collector_int.h"
#include "erg_collector.h"

#define S(x) ((uint64_t)((x)*1e9))
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
    erg_grid_add_energy(&g, 0, S(T0 - 1 + 2 * i), S(T0 + 1 + 2 * i), 200.0);
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

/* A dual-PSU node: its power is the sum of its outlets' mean powers, each
 * outlet accounted over the seconds it covered (readings of different
 * lengths and phases), not their mean. */
static void test_feeds_sum(void **state) {
  (void)state;
  struct erg_grid g;
  erg_grid_init(&g, 5);
  assert_int_equal(erg_grid_set_feeds(&g, 2), 0);
  for (int i = 0; i < 10; i++) /* feed 0: 100 W, 1 s readings */
    erg_grid_add_energy(&g, 0, S(T0 + i), S(T0 + i + 1), 100.0);
  for (int i = 0; i < 4; i++) /* feed 1: 150 W, 2.5 s readings from T0 + 0.5 */
    erg_grid_add_energy(&g, 1, S(T0 + 0.5 + 2.5 * i), S(T0 + 3 + 2.5 * i), 375.0);
  struct seen s = {0};
  erg_grid_finalize(&g, T0 + 10, 0, on_cell, &s);
  assert_int_equal(s.n, 2);
  /* Cell 0: feed 1 covered 4.5 s of 5, cell 1: 5 s; both are 250 W. */
  for (int i = 0; i < 2; i++) {
    assert_false(s.flags[i] & ERG_CELL_NO_METER);
    assert_float_equal(s.watts[i], 250.0, 1e-9);
  }
  erg_grid_free(&g);
}

/* One dead feed (under half the cell) makes the cell unmeasured: the
 * other outlet alone would silently halve the node's power. 0 feeds: never
 * measured. */
static void test_feed_missing(void **state) {
  (void)state;
  struct erg_grid g;
  erg_grid_init(&g, 5);
  assert_int_equal(erg_grid_set_feeds(&g, ERG_MAX_FEEDS + 1), -1);
  assert_int_equal(erg_grid_set_feeds(&g, 2), 0);
  erg_grid_add_energy(&g, 0, S(T0), S(T0 + 10), 2000.0);   /* 200 W over both cells */
  erg_grid_add_energy(&g, 1, S(T0), S(T0 + 2), 200.0);     /* 2 s of cell 0 */
  erg_grid_add_energy(&g, 1, S(T0 + 5), S(T0 + 8), 300.0); /* 3 s of cell 1 */
  erg_grid_add_energy(&g, 2, S(T0), S(T0 + 10), 1e6);      /* no such feed: ignored */
  struct seen s = {0};
  erg_grid_finalize(&g, T0 + 10, 0, on_cell, &s);
  assert_int_equal(s.n, 2);
  assert_true(s.flags[0] & ERG_CELL_NO_METER);
  assert_true(isnan(s.watts[0]));
  assert_false(s.flags[1] & ERG_CELL_NO_METER);
  assert_float_equal(s.watts[1], 300.0, 1e-9);
  erg_grid_free(&g);

  erg_grid_init(&g, 5);
  assert_int_equal(erg_grid_set_feeds(&g, 0), 0);
  erg_grid_add_energy(&g, 0, S(T0), S(T0 + 5), 500.0);
  erg_grid_add_sample(&g, S(T0), S(T0 + 5), 1, 0, NULL, NULL, 0);
  s.n = 0;
  erg_grid_finalize(&g, T0 + 5, 0, on_cell, &s);
  assert_int_equal(s.n, 1);
  assert_true(s.flags[0] & ERG_CELL_NO_METER);
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

static void on_cell_tails(void *user, const struct erg_grid_result *r) {
  struct erg_grid_cell *out = user;
  if (r->t0 == T0)
    *out = *r->cell;
}

/* Issue 38: a cell half idle and half at full load (2 of 2 CPUs) keeps the
 * mean of its samples' curve tails, (T_i(0) + T_i(1)) / 2 = 0.5 each, not
 * the tails of its mean utilisation 0.5 (T_8(0.5) = 0.0039): what the
 * meter shows of a convex curve is the former. */
static void test_sample_tails(void **state) {
  (void)state;
  struct erg_grid g;
  erg_grid_init(&g, 5);
  g.ncpu = 2;
  for (int s = 0; s < 5; s++) /* 1 s samples: 0, 0, 2.5 s half-way, 2, 2 CPU-s */
    erg_grid_add_sample(&g, S(T0 + s), S(T0 + s + 1), s < 2 ? 0 : s == 2 ? 1 : 2, 0, NULL, NULL, 0);
  struct erg_grid_cell c;
  memset(&c, 0, sizeof c);
  erg_grid_finalize(&g, T0 + 100, 0, on_cell_tails, &c);
  assert_float_equal(c.tail_covered_seconds, 5, 1e-9);
  assert_float_equal(c.busy_cpu_seconds, 5, 1e-9);
  for (int d = 0; d < ERG_NDERIVED; d++) {
    double want = (2 * 0 + erg_derived_value(d, 1, 2) + 2 * 1) / 5;
    assert_float_equal(c.tail_seconds[d] / c.tail_covered_seconds, want, 1e-9);
  }
  assert_true(c.tail_seconds[ERG_NDERIVED - 1] / 5 > 0.4);
  erg_grid_free(&g);
  /* Without the node's CPU count no tails are kept (the fit derives them). */
  erg_grid_init(&g, 5);
  erg_grid_add_sample(&g, S(T0), S(T0 + 5), 5, 0, NULL, NULL, 0);
  memset(&c, 0, sizeof c);
  erg_grid_finalize(&g, T0 + 100, 0, on_cell_tails, &c);
  assert_float_equal(c.tail_covered_seconds, 0, 0);
  erg_grid_free(&g);
}

/* Issue 38: an agent sample with its busy time in slices (sub-samples)
 * gives its cells the tails of each slice's utilisation, over the part of
 * each slice in the cell: a 2 s sample over a cell border at T0 + 5, idle
 * for 1.5 s then both CPUs busy for 0.5 s (1 CPU-s in all), and a 3 s
 * steady sample before it. Without the slices the same cell has the tails
 * of u = 0.25 for those 2 s. */
static void test_slice_tails(void **state) {
  (void)state;
  for (int sliced = 0; sliced < 2; sliced++) {
    struct erg_grid g;
    erg_grid_init(&g, 5);
    g.ncpu = 2;
    erg_grid_add_sample(&g, S(T0), S(T0 + 3), 1.5, 0, NULL, NULL, 0); /* u = 0.25 */
    struct erg_grid_slice sl[] = {{S(T0 + 3), S(T0 + 3) + 1500000000ULL, 0},
                                  {S(T0 + 3) + 1500000000ULL, S(T0 + 5), 1}};
    erg_grid_add_procs_sliced(&g, S(T0 + 3), S(T0 + 5), 1, 0, NULL, 0, sl, sliced ? 2 : 0);
    /* Slices past the cell's end are placed in the next cell. */
    struct erg_grid_slice next[] = {{S(T0 + 5), S(T0 + 5) + 500000000ULL, 1},
                                    {S(T0 + 5) + 500000000ULL, S(T0 + 10), 0}};
    erg_grid_add_procs_sliced(&g, S(T0 + 5), S(T0 + 10), 1, 0, NULL, 0, next, sliced ? 2 : 0);
    struct erg_grid_cell c;
    memset(&c, 0, sizeof c);
    erg_grid_finalize(&g, T0 + 100, 0, on_cell_tails, &c);
    assert_float_equal(c.tail_covered_seconds, 5, 1e-9);
    assert_float_equal(c.busy_cpu_seconds, 2.5, 1e-9);
    for (int d = 0; d < ERG_NDERIVED; d++) {
      double quarter = erg_derived_value(d, 0.5, 2);
      double want = sliced ? (3 * quarter + 1.5 * 0 + 0.5 * 1) / 5 : quarter;
      assert_float_equal(c.tail_seconds[d] / c.tail_covered_seconds, want, 1e-9);
    }
    erg_grid_free(&g);
  }
}

static void on_cell_count(void *user, const struct erg_grid_result *r) {
  (void)user;
  (void)r;
}

static void test_late_and_future(void **state) {
  (void)state;
  struct erg_grid g;
  erg_grid_init(&g, 5);
  erg_grid_add_energy(&g, 0, S(T0), S(T0 + 5), 500);
  struct seen s = {0};
  erg_grid_finalize(&g, T0 + 10, 0, on_cell, &s);
  assert_int_equal(s.n, 2);
  /* Data for a finalised cell is dropped and counted, never re-emitted. */
  erg_grid_add_energy(&g, 0, S(T0), S(T0 + 5), 500);
  assert_int_equal(g.late_seconds_dropped, 5);
  erg_grid_add_energy(&g, 0, S(T0 + 5LL * 10000), S(T0 + 5LL * 10000 + 5), 500);
  assert_int_equal(g.future_seconds_dropped, 5);
  int before = s.n;
  erg_grid_finalize(&g, T0 + 10, 0, on_cell, &s);
  assert_int_equal(s.n, before);
  erg_grid_free(&g);
}

/* A node resumed with its last cell years back (ergd's resume point) and
 * nothing in the ring: only a ring's worth of empty cells is closed, not
 * every cell since; with data in the ring every cell is (a backlog). */
static void test_resume_far_back(void **state) {
  (void)state;
  struct erg_grid g;
  erg_grid_init(&g, 1);
  g.next_final = T0 - 100000000LL;
  struct seen s = {0};
  size_t n = erg_grid_finalize(&g, T0, 2, on_cell_count, &s);
  assert_true(n <= ERG_GRID_SLOTS + 1 && n >= ERG_GRID_SLOTS);
  assert_int_equal(g.next_final, T0 - 2);
  assert_int_equal(g.skipped_cells + n, 100000000LL - 2);
  erg_grid_free(&g);
  erg_grid_init(&g, 1);
  g.next_final = T0 - 1000;
  erg_grid_add_energy(&g, 0, S(T0 - 1000), S(T0 - 999), 100);
  n = erg_grid_finalize(&g, T0, 2, on_cell_count, &s);
  assert_int_equal(n, 1000 - 2);
  assert_int_equal(g.skipped_cells, 0);
  erg_grid_free(&g);
}

static void test_order_and_gaps(void **state) {
  (void)state;
  struct erg_grid g;
  erg_grid_init(&g, 5);
  erg_grid_add_energy(&g, 0, S(T0), S(T0 + 5), 500);
  erg_grid_add_energy(&g, 0, S(T0 + 20), S(T0 + 25), 1000);
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
    static const char *const names[8] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"};
    c.keys = keys;
    c.nkeys = (size_t)(rand_r(&seed) % 8);
    for (size_t i = 0; i < c.nkeys; i++) {
      keys[i].key = names[i];
      keys[i].cpu_seconds = (rand_r(&seed) % 3 == 0) ? 0 : rand_r(&seed) / (double)RAND_MAX;
    }
    c.system_cpu_seconds = (rand_r(&seed) % 2) ? rand_r(&seed) / (double)RAND_MAX : 0;
    double measured = 300.0 * rand_r(&seed) / RAND_MAX;
    double idle = 100.0;
    struct erg_attr_share sh[9];
    struct erg_cell_power pw;
    assert_int_equal(erg_attribute_cpu_share(&c, measured, idle, iter % 3, sh, &pw), 0);
    double sum = pw.idle_separate_watts;
    for (size_t i = 0; i <= c.nkeys; i++) {
      assert_true(sh[i].watts >= 0);
      sum += sh[i].watts;
    }
    assert_float_equal(sum, measured, 1e-9 * (1 + measured));
    assert_true(pw.idle_watts <= idle + 1e-12);
  }
}

static void test_identical_processes_equal(void **state) {
  (void)state;
  struct erg_grid_key keys[2] = {{"a", 1.0}, {"b", 1.0}};
  struct erg_grid_cell c = {.keys = keys, .nkeys = 2, .system_cpu_seconds = 0.5};
  struct erg_attr_share sh[3];
  struct erg_cell_power pw;
  assert_int_equal(erg_attribute_cpu_share(&c, 150, 50, 0, sh, &pw), 0);
  assert_float_equal(pw.idle_watts, 50, 1e-12);
  assert_float_equal(pw.idle_separate_watts, 50, 1e-12);
  assert_float_equal(sh[0].watts, 40, 1e-9);
  assert_float_equal(sh[1].watts, 40, 1e-9);
  assert_float_equal(sh[2].watts, 20, 1e-9);
  assert_string_equal(sh[2].key, "[system]");
}

/* Tuple keys: every field comes back, control bytes (the separator
 * included) cannot forge another field, empty fields read as none. */
static void test_profile_key_fields(void **state) {
  (void)state;
  char key[PROFILE_KEY_MAX];
  const char *f;
  profile_key_build(key, sizeof key,
                    "evil\x1f"
                    "42",
                    "", "x.service", NULL, 1000);
  size_t n = profile_key_field(key, PROFILE_COMMAND, &f);
  assert_int_equal(n, 7);
  assert_memory_equal(f, "evil?42", 7);
  assert_int_equal(profile_key_field(key, PROFILE_JOB, &f), 0);
  n = profile_key_field(key, PROFILE_UNIT, &f);
  assert_memory_equal(f, "x.service", n);
  assert_int_equal(profile_key_field(key, PROFILE_CONTAINER, &f), 0);
  n = profile_key_field(key, PROFILE_USER, &f);
  assert_int_equal(n, 4);
  assert_memory_equal(f, "1000", 4);
  /* A process named like the collector's own keys stays apart from them. */
  profile_key_build(key, sizeof key, "[other]", "[none]", "", "", 0);
  n = profile_key_field(key, PROFILE_COMMAND, &f);
  assert_memory_equal(f, "?other]", n);
  n = profile_key_field(key, PROFILE_JOB, &f);
  assert_memory_equal(f, "?none]", n);
  /* Overlong fields are cut, the tuple always fits. */
  char big[1000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  profile_key_build(key, sizeof key, big, big, big, big, 4294967295u);
  assert_true(strlen(key) < PROFILE_KEY_MAX);
  n = profile_key_field(key, PROFILE_USER, &f);
  assert_memory_equal(f, "4294967295", n);
}

/* Over thousands of random cells: for every kind the written keys add up
 * to the attributed power, at most top keys are named, absent fields go
 * to [none], the rest to [other]. */
static void test_profile_rollup_conserves(void **state) {
  (void)state;
  static const char *const comms[] = {"a", "b", "c", "d", "e", "f"};
  static const char *const jobs[] = {"", "1", "2", "3"};
  static const char *const units[] = {"", "x.service", "y.scope"};
  unsigned seed = 11;
  char keys[40][PROFILE_KEY_MAX];
  for (int iter = 0; iter < 3000; iter++) {
    size_t nkeys = (size_t)(rand_r(&seed) % 40);
    unsigned top = (unsigned)(rand_r(&seed) % 5);
    struct erg_attr_share sh[41];
    double sum = 0;
    for (size_t i = 0; i < nkeys; i++) {
      profile_key_build(keys[i], sizeof keys[i], comms[rand_r(&seed) % 6], jobs[rand_r(&seed) % 4],
                        units[rand_r(&seed) % 3], rand_r(&seed) % 2 ? "" : "c0ffee",
                        (uint32_t)(rand_r(&seed) % 3));
      sh[i] = (struct erg_attr_share){.key = keys[i], .watts = 50.0 * rand_r(&seed) / RAND_MAX};
      sum += sh[i].watts;
    }
    sh[nkeys] = (struct erg_attr_share){.key = "[system]", .watts = 3.0 * rand_r(&seed) / RAND_MAX};
    sum += sh[nkeys].watts;
    struct profile_rollup r;
    assert_int_equal(profile_rollup(&r, sh, nkeys, NULL, top, 0), 0);
    for (int k = 0; k < PROFILE_NKINDS; k++) {
      double got = 0, all = 0;
      size_t named = 0;
      for (size_t i = 0; i < r.nout[k]; i++) {
        got += r.out[k][i].watts;
        named += r.out[k][i].key[0] != '[';
        for (size_t j = 0; j < i; j++)
          assert_string_not_equal(r.out[k][i].key, r.out[k][j].key);
      }
      for (size_t i = 0; i < r.nall[k]; i++)
        all += r.all[k][i].watts;
      assert_float_equal(got, sum, 1e-9 * (1 + sum));
      assert_true(named <= top);
      assert_string_equal(r.out[k][r.nout[k] - 1].key, "[system]");
      /* all[] is every named value: with [none] and [system] it is the sum. */
      double none = 0;
      for (size_t i = 0; i < r.nout[k]; i++)
        if (!strcmp(r.out[k][i].key, "[none]"))
          none = r.out[k][i].watts;
      assert_float_equal(all + none + sh[nkeys].watts, sum, 1e-9 * (1 + sum));
    }
    /* The user kind is never [none]: every process has a uid. */
    for (size_t i = 0; i < r.nout[PROFILE_USER]; i++)
      assert_string_not_equal(r.out[PROFILE_USER][i].key, "[none]");
    profile_rollup_free(&r);
  }
}

/* Admission: a top-N value the node has no archive for needs min_share of
 * the cell; below it goes to [other] (still conserved). A known value is
 * written however small; min_share 0 names every top-N value. */
static void test_profile_rollup_admission(void **state) {
  (void)state;
  char big[PROFILE_KEY_MAX], tiny[PROFILE_KEY_MAX], known_tiny[PROFILE_KEY_MAX];
  profile_key_build(big, sizeof big, "big", "", "", "", 0);
  profile_key_build(tiny, sizeof tiny, "tiny", "", "", "", 0);
  profile_key_build(known_tiny, sizeof known_tiny, "kept", "", "", "", 0);
  struct erg_attr_share sh[] = {{.key = big, .watts = 97},
                                {.key = tiny, .watts = 0.5},
                                {.key = known_tiny, .watts = 0.5},
                                {.key = "[system]", .watts = 2}};
  struct profile_known known[PROFILE_NKINDS] = {{0}};
  assert_non_null(profile_known_touch(&known[PROFILE_COMMAND], "kept", 1, 64, NULL));
  struct profile_rollup r;
  assert_int_equal(profile_rollup(&r, sh, 3, known, 10, 0.01), 0);
  double other = -1, sum = 0;
  int have_big = 0, have_tiny = 0, have_kept = 0;
  for (size_t i = 0; i < r.nout[PROFILE_COMMAND]; i++) {
    const struct profile_entry *e = &r.out[PROFILE_COMMAND][i];
    sum += e->watts;
    have_big |= !strcmp(e->key, "big");
    have_tiny |= !strcmp(e->key, "tiny");
    have_kept |= !strcmp(e->key, "kept");
    if (!strcmp(e->key, "[other]"))
      other = e->watts;
  }
  assert_true(have_big && have_kept && !have_tiny);
  assert_float_equal(other, 0.5, 1e-12);
  assert_float_equal(sum, 100, 1e-9);
  /* all[] (cluster job sums) still holds every value. */
  assert_int_equal(r.nall[PROFILE_COMMAND], 3);
  profile_rollup_free(&r);
  assert_int_equal(profile_rollup(&r, sh, 3, known, 10, 0), 0);
  have_tiny = 0;
  for (size_t i = 0; i < r.nout[PROFILE_COMMAND]; i++)
    have_tiny |= !strcmp(r.out[PROFILE_COMMAND][i].key, "tiny");
  assert_true(have_tiny);
  profile_rollup_free(&r);
  for (int k = 0; k < PROFILE_NKINDS; k++)
    profile_known_free(&known[k]);
}

/* Known keys: touched keys stay, idle ones expire, the set is bounded. */
static void test_profile_known(void **state) {
  (void)state;
  struct profile_known k = {0};
  char name[32];
  for (int i = 0; i < 300; i++) {
    snprintf(name, sizeof name, "key%d", i);
    char *evicted = NULL;
    assert_non_null(profile_known_touch(&k, name, 1000 + i, 256, &evicted));
    /* The caller learns which key made room (its archive goes too). */
    if (i < 256) {
      assert_null(evicted);
    } else {
      char want[32];
      snprintf(want, sizeof want, "key%d", i - 256);
      assert_non_null(evicted);
      assert_string_equal(evicted, want);
      free(evicted);
    }
  }
  assert_int_equal(k.n, 256);
  assert_null(profile_known_find(&k, "key0")); /* idle longest: made room */
  assert_non_null(profile_known_find(&k, "key299"));
  profile_known_touch(&k, "key100", 5000, 256, NULL)->joules = 7;
  /* [other], [system], [none] are never the ones evicted; a value that
   * only looks like them ("[x]", a process may name itself so) is. */
  struct profile_known sp = {0};
  assert_non_null(profile_known_touch(&sp, "[other]", 1, 3, NULL));
  assert_non_null(profile_known_touch(&sp, "[x]", 2, 3, NULL));
  assert_non_null(profile_known_touch(&sp, "named", 5, 3, NULL));
  char *ev = NULL;
  assert_non_null(profile_known_touch(&sp, "newer", 9, 3, &ev));
  assert_non_null(ev);
  assert_string_equal(ev, "[x]");
  free(ev);
  assert_non_null(profile_known_find(&sp, "[other]"));
  profile_known_free(&sp);
  assert_int_equal(profile_known_expire(&k, 5000, 3000), 255);
  assert_int_equal(k.n, 1);
  assert_float_equal(profile_known_find(&k, "key100")->joules, 7, 0);
  profile_known_free(&k);
}

static void on_cell_keys(void *user, const struct erg_grid_result *r) {
  double *out = user; /* out[0] keys, out[1] Σ cpu, out[2] cpu of "p6" */
  out[0] = (double)r->cell->nkeys;
  out[1] = out[2] = 0;
  for (size_t i = 0; i < r->cell->nkeys; i++) {
    out[1] += r->cell->keys[i].cpu_seconds;
    if (!strcmp(r->cell->keys[i].key, "p6"))
      out[2] = r->cell->keys[i].cpu_seconds;
  }
}

/* Many distinct keys in one cell (hashed index, grown while filled): each
 * key once, with all of its time; the interned names are freed once their
 * cells are final (ASan's leak check sees the rest). */
static void test_many_keys(void **state) {
  (void)state;
  struct erg_grid g;
  erg_grid_init(&g, 5);
  enum { N = 3000 };
  static char names[N][16];
  static struct erg_grid_proc p[N];
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "p%d", i);
    p[i] = (struct erg_grid_proc){.key = names[i], .cpu_seconds = 0.001 * (i % 7)};
  }
  for (int s = 0; s < 10; s++)
    erg_grid_add_procs(&g, S(T0 + s), S(T0 + s + 1), 10, 0, p, N);
  double out[3];
  double total = 0;
  for (int i = 0; i < N; i++)
    total += 5 * p[i].cpu_seconds;
  assert_int_equal(erg_grid_finalize(&g, T0 + 5, 0, on_cell_keys, out), 1);
  assert_float_equal(out[0], N, 0);
  assert_float_equal(out[1], total, 1e-9);
  assert_float_equal(out[2], 5 * 0.006, 1e-12);
  assert_int_equal(erg_grid_finalize(&g, T0 + 10, 0, on_cell_keys, out), 1);
  assert_float_equal(out[0], N, 0);
  assert_float_equal(out[1], total, 1e-9);
  erg_grid_free(&g);
}

/* Known keys come back from the store's index.tsv after a restart: only
 * archives updated within the idle limit, never a half-written line. */
static void test_profile_known_load(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-known-XXXXXX", path[256];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/index.tsv", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("fresh\tfresh key\nold\told key\nmissing\tno archive\npartial\tpart", f);
  fclose(f);
  const char *files[] = {"fresh", "old", "partial"};
  const time_t mtimes[] = {T0 - 100, T0 - 100000, T0 - 10};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s.rrd", dir, files[i]);
    fclose(fopen(path, "w"));
    struct timeval tv[2] = {{mtimes[i], 0}, {mtimes[i], 0}};
    assert_int_equal(utimes(path, tv), 0);
  }
  struct profile_known k = {0};
  assert_int_equal(profile_known_load(&k, dir, T0, 3600), 1);
  assert_non_null(profile_known_find(&k, "fresh key"));
  assert_int_equal(profile_known_find(&k, "fresh key")->last_t, T0 - 100);
  profile_known_free(&k);
  assert_int_equal(profile_known_load(&k, dir, T0, 0), 2); /* 0: any age */
  assert_non_null(profile_known_find(&k, "old key"));
  assert_null(profile_known_find(&k, "part"));
  profile_known_free(&k);
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s.rrd", dir, files[i]);
    unlink(path);
  }
  snprintf(path, sizeof path, "%s/index.tsv", dir);
  unlink(path);
  rmdir(dir);
}

struct flushed {
  int n;
  int64_t t[8];
  double w4242[8];
  size_t njobs[8];
};

static void on_cluster_cell(void *user, int64_t t_end, const struct profile_entry *jobs,
                            size_t njobs) {
  struct flushed *f = user;
  f->t[f->n] = t_end;
  f->njobs[f->n] = njobs;
  f->w4242[f->n] = 0;
  for (size_t i = 0; i < njobs; i++)
    if (!strcmp(jobs[i].key, "4242"))
      f->w4242[f->n] += jobs[i].watts;
  f->n++;
}

/* Cluster sums: contributions of several nodes per cell end, in any order;
 * cells handed out oldest first, once; a contribution after that is late;
 * a cell without jobs still exists (known jobs get 0 W). */
static void test_cluster_sums(void **state) {
  (void)state;
  struct cluster *cl = cluster_new();
  assert_non_null(cl);
  struct flushed f = {0};
  assert_int_equal(cluster_add(cl, T0 + 10, "4242", 5), 0);
  assert_int_equal(cluster_add(cl, T0 + 5, "4242", 1), 0);
  assert_int_equal(cluster_add(cl, T0 + 5, "77", 2), 0);
  assert_int_equal(cluster_add(cl, T0 + 5, "4242", 3), 0); /* second node */
  assert_int_equal(cluster_add(cl, T0 + 15, NULL, 0), 0);
  cluster_flush(cl, T0 + 4, on_cluster_cell, &f);
  assert_int_equal(f.n, 0);
  cluster_flush(cl, T0 + 10, on_cluster_cell, &f);
  assert_int_equal(f.n, 2);
  assert_int_equal(f.t[0], T0 + 5);
  assert_float_equal(f.w4242[0], 4, 1e-12);
  assert_int_equal(f.njobs[0], 2);
  assert_int_equal(f.t[1], T0 + 10);
  assert_float_equal(f.w4242[1], 5, 1e-12);
  assert_int_equal(cluster_add(cl, T0 + 10, "4242", 1), 1);
  assert_int_equal(cluster_add(cl, T0 + 10, NULL, 0), 1);
  assert_int_equal(cluster_late(cl), 1);
  cluster_flush(cl, INT64_MAX, on_cluster_cell, &f);
  assert_int_equal(f.n, 3);
  assert_int_equal(f.t[2], T0 + 15);
  assert_int_equal(f.njobs[2], 0);
  cluster_free(cl);
}

/* Thousands of jobs in one cell (looked up by hash): each job's watts
 * summed over its nodes, none merged with another, none lost. */
static void sum_many(void *user, int64_t t_end, const struct profile_entry *jobs, size_t n) {
  (void)t_end;
  double *seen = user;
  for (size_t i = 0; i < n; i++)
    seen[atoi(jobs[i].key)] += jobs[i].watts;
  seen[5000] += (double)n;
}

static void test_cluster_many_jobs(void **state) {
  (void)state;
  static double seen[5001];
  struct cluster *cl = cluster_new();
  char job[16];
  for (int node = 0; node < 3; node++)
    for (int j = 0; j < 5000; j++) {
      snprintf(job, sizeof job, "%d", j);
      assert_int_equal(cluster_add(cl, T0 + 5, job, j + node), 0);
    }
  cluster_flush(cl, INT64_MAX, sum_many, seen);
  assert_float_equal(seen[5000], 5000, 0);
  for (int j = 0; j < 5000; j++)
    assert_float_equal(seen[j], 3.0 * j + 3, 0);
  cluster_free(cl);
}

/* top_keys is accepted as the name of top_processes. */
static void test_config_top_keys(void **state) {
  (void)state;
  char path[] = "/tmp/erg-topkeys-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  const char ini[] = "[collector]\ntop_keys = 3\n";
  assert_int_equal(write(fd, ini, sizeof ini - 1), (ssize_t)(sizeof ini - 1));
  close(fd);
  struct erg_collector_config c;
  struct erg_config_error err;
  erg_collector_config_defaults(&c);
  assert_int_equal(erg_collector_config_load(path, &c, &err), 0);
  assert_int_equal(c.top_processes, 3);
  erg_collector_config_free(&c);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_energy_overlap),
                                     cmocka_unit_test(test_sample_apportion),
                                     cmocka_unit_test(test_sample_tails),
                                     cmocka_unit_test(test_slice_tails),
                                     cmocka_unit_test(test_feeds_sum),
                                     cmocka_unit_test(test_feed_missing),
                                     cmocka_unit_test(test_late_and_future),
                                     cmocka_unit_test(test_order_and_gaps),
                                     cmocka_unit_test(test_resume_far_back),
                                     cmocka_unit_test(test_attribution_conserves),
                                     cmocka_unit_test(test_identical_processes_equal),
                                     cmocka_unit_test(test_profile_key_fields),
                                     cmocka_unit_test(test_profile_rollup_conserves),
                                     cmocka_unit_test(test_profile_known),
                                     cmocka_unit_test(test_profile_rollup_admission),
                                     cmocka_unit_test(test_many_keys),
                                     cmocka_unit_test(test_profile_known_load),
                                     cmocka_unit_test(test_cluster_sums),
                                     cmocka_unit_test(test_cluster_many_jobs),
                                     cmocka_unit_test(test_config_top_keys)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

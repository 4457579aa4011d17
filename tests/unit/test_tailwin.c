// SPDX-License-Identifier: GPL-3.0-or-later
/* The curve's tails over windows of the meter's updates (issue 38,
 * collector/tailwin.c): synthetic nodes whose power follows a bursty load
 * over a known window, seen by a meter polled every ~0.25 s; ergd must
 * find the meter's update period and choose the window the power follows
 * (its own update, in phase; or the agent's 0.1 s slices when the power
 * follows those), and give the cells that candidate's tails. The choice's
 * fits run in a thread, off the loop that finalises the cells; it is kept
 * across restarts (the .tailwin file). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "collector_int.h"
#include "erg_collector.h"
#include "erg_fit.h"

#define T0 0.0                       /* the simulation's times: seconds after T0_NS */
#define T0_NS 1700000000000000000ULL /* a multiple of 5 s */
#define SLICE 0.1
#define NCPU 2.0

static uint64_t rng_state;
static double urand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}
static double nrand(void) {
  double u1 = urand(), u2 = urand();
  return sqrt(-2 * log(u1 > 1e-300 ? u1 : 1e-300)) * cos(2 * M_PI * u2);
}

static uint64_t ns(double s) { return T0_NS + (uint64_t)llround(s * 1e9); }

static double curve_watts(double u) { return 100 + 150 * pow(u, 1.4); }

/* How the synthetic meter's power follows the load. */
enum follows { FOLLOWS_UPDATE, FOLLOWS_SLICES, FOLLOWS_TWO_UPDATES };

struct run {
  double update_s, phase_s; /* the meter's updates: phase + k × update */
  enum follows follows;
  bool slices;   /* the agent sends them */
  double poll_s; /* ergd's poll interval; 0: 0.25 s */
  int cells;     /* how many to run */
  /* The test waits for each choice's fits at the cell after they start
   * (as if they took no time), until cell async_from (> 0): from there it
   * holds ergd's fit lock and the loop goes on. */
  int async_from;
  int restore; /* > 0: the last run's choice, restored at the start */
  bool member; /* a shared meter's member (erg_grid.tailwin_group) */
  /* Non-NULL: each finalised cell's candidates become member m's part of
   * row (t0 - T0) / 5 of rows, its measured power added to meter[row]. */
  struct group_tail_rows *rows;
  int m;
  double *meter;
  /* results */
  struct erg_tailwin_status st;
  int checked_cells;    /* late cells whose tails were compared */
  double max_tail_diff; /* |cell tails - the chosen candidate's| */
  int cand_cells;       /* cells that had candidate windows */
  int cells_seen;
  int checked_before_choice; /* of checked_cells, before this run's first choice */
  bool busy_at_end;          /* a choice's fits still under way after the last cell */
  unsigned choices_at_lock, choices_at_end; /* async_from: before the lock, after the last cell */
};

struct cell_seen {
  struct run *run;
  const struct erg_grid *g;
  int64_t first_t0;
};

static void on_cell(void *user, const struct erg_grid_result *r) {
  struct cell_seen *cs = user;
  const struct erg_grid_cell *c = r->cell;
  if (c->cand)
    cs->run->cand_cells++;
  struct erg_tailwin_status st;
  erg_tailwin_status(cs->g, &st);
  cs->run->cells_seen++;
  if (cs->run->rows) {
    size_t i = (size_t)((r->t0 - (int64_t)(T0_NS / 1000000000ULL)) / 5);
    double t[ERG_TAILWIN_CANDS][ERG_NDERIVED];
    for (int k = 0; k < ERG_TAILWIN_CANDS; k++)
      erg_tailwin_cell_tails(c, k, t[k]);
    if (group_tail_rows_set(cs->run->rows, i, NAN, cs->run->m, c->busy_cpu_seconds / 5, 0, NCPU,
                            t) == 0)
      cs->run->meter[i] += r->measured_watts;
  }
  /* Once chosen, a cell's tails are the candidate's. */
  if (st.chosen > 0 && c->cand && c->tail_covered_seconds > 0 &&
      c->cand->covered_seconds[st.chosen - 1] >= 0.9 * c->tail_covered_seconds) {
    for (int d = 0; d < ERG_NDERIVED; d++) {
      double a = c->tail_seconds[d] / c->tail_covered_seconds;
      double b = c->cand->tail_seconds[st.chosen - 1][d] / c->cand->covered_seconds[st.chosen - 1];
      double diff = fabs(a - b);
      if (diff > cs->run->max_tail_diff)
        cs->run->max_tail_diff = diff;
    }
    cs->run->checked_cells++;
    cs->run->checked_before_choice += st.choices == 0;
  }
}

/* The load: two processes, each busy in a 0.1 s slice at its level's odds,
 * the level (0 … 0.8) changing every 1–1.5 s; the node's busy CPU per
 * slice. */
static void make_load(double *busy, size_t n) {
  static const double levels[] = {0, 0, 0.05, 0.1, 0.2, 0.4, 0.8};
  for (int p = 0; p < 2; p++) {
    size_t i = 0;
    while (i < n) {
      double lvl = levels[(int)(urand() * 7) % 7];
      size_t len = 10 + (size_t)(urand() * 6);
      for (size_t k = 0; k < len && i < n; k++, i++)
        busy[i] += urand() < lvl ? SLICE : 0;
    }
  }
}

/* Mean of the curve over [a, b) as the meter's power follows the load. */
static double window_watts(const struct run *r, const double *busy, size_t nsl, double a,
                           double b) {
  size_t i0 = (size_t)floor((a - T0) / SLICE + 1e-9), i1 = (size_t)ceil((b - T0) / SLICE - 1e-9);
  double sum_busy = 0, sum_w = 0, cov = 0;
  for (size_t i = i0; i < i1 && i < nsl; i++) {
    double lo = T0 + i * SLICE, hi = lo + SLICE;
    double part = ((b < hi ? b : hi) - (a > lo ? a : lo)) / SLICE;
    if (part <= 0)
      continue;
    sum_busy += busy[i] * part;
    sum_w += curve_watts(busy[i] / SLICE / NCPU) * part * SLICE;
    cov += part * SLICE;
  }
  if (!(cov > 0))
    return 100;
  return r->follows == FOLLOWS_SLICES ? sum_w / cov : curve_watts(sum_busy / cov / NCPU);
}

static void run_node(struct run *r) {
  struct erg_grid g;
  erg_grid_init(&g, 5);
  g.ncpu = NCPU;
  g.tailwin_group = r->member;
  double poll_s = r->poll_s > 0 ? r->poll_s : 0.25;
  double span = r->cells * 5.0 + 20;
  size_t nsl = (size_t)(span / SLICE);
  double *busy = calloc(nsl, sizeof *busy);
  assert_non_null(busy);
  make_load(busy, nsl);
  /* The power's windows: the meter's updates (two of them when it follows
   * two), the first from T0. */
  double win = r->follows == FOLLOWS_TWO_UPDATES ? 2 * r->update_s : r->update_s;
  double next_upd = T0 + r->phase_s, prev_upd = T0, shown = 100, prev_poll = T0;
  double next_poll = T0 + 0.07, last_energy_t = T0, power_from = T0 + r->phase_s;
  double win_watts = 100, last_read = -1;
  struct cell_seen cs = {r, &g, 0};
  if (r->restore > 0)
    erg_tailwin_restore(
        &g, &(struct erg_tailwin_saved){.chosen = r->restore, .update_seconds = 0.5}, ns(T0));
  for (int sec = 0; sec < (int)span - 10; sec++) {
    double t = T0 + sec, t1 = t + 1;
    /* Meter updates and polls up to t1, in time order. */
    for (;;) {
      double tu = next_upd, tp = next_poll;
      if (tu > t1 && tp > t1)
        break;
      if (tu <= tp) {
        /* An update: the energy since the last one at the power shown,
         * then the new power over the next window, from its load. */
        erg_grid_add_energy(&g, 0, ns(last_energy_t), ns(tu), shown * (tu - last_energy_t));
        last_energy_t = tu;
        if (tu >= power_from + win - 1e-9) {
          /* A new window: the meter shows the curve of the load over it,
           * known once it is over (ergd sees that only in the energy). */
          power_from = tu;
        }
        win_watts = window_watts(r, busy, nsl, power_from, power_from + win);
        shown = win_watts + 0.5 * nrand();
        prev_upd = tu;
        next_upd = tu + r->update_s;
      } else {
        /* A poll: ergd sees the reading change from the last poll's. */
        if (last_read >= 0 && shown != last_read)
          erg_grid_meter_update(&g, ns(prev_poll), ns(tp));
        last_read = shown;
        prev_poll = tp;
        next_poll = tp + poll_s + 0.02 * (urand() - 0.5);
      }
    }
    (void)prev_upd;
    /* The agent's 1 s sample with its ten 0.1 s slices. */
    struct erg_grid_slice sl[10];
    double total = 0;
    for (int k = 0; k < 10; k++) {
      size_t i = (size_t)sec * 10 + (size_t)k;
      sl[k] = (struct erg_grid_slice){ns(t + k * SLICE), ns(t + (k + 1) * SLICE), busy[i]};
      total += busy[i];
    }
    erg_grid_add_procs_sliced(&g, ns(t), ns(t1), total, 0, NULL, 0, sl, r->slices ? 10 : 0);
    erg_grid_finalize(&g, (int64_t)(T0_NS / 1000000000ULL) + (int64_t)t1, 5, on_cell, &cs);
    if (r->async_from > 0 && sec == r->async_from * 5) {
      erg_tailwin_status(&g, &r->st);
      r->choices_at_lock = r->st.choices;
      erg_fit_lock();
    }
    if (!(r->async_from > 0 && sec >= r->async_from * 5))
      erg_tailwin_wait(&g);
  }
  r->busy_at_end = erg_tailwin_busy(&g);
  erg_tailwin_status(&g, &r->st);
  r->choices_at_end = r->st.choices;
  if (r->async_from > 0) {
    /* The fits wait for the lock the test holds; then they finish. */
    erg_fit_unlock();
    erg_tailwin_wait(&g);
  }
  erg_tailwin_status(&g, &r->st);
  if (getenv("TAILWIN_VERBOSE"))
    fprintf(stderr,
            "update %.4f s chosen %d (%u choices) rmse %.3f %.3f %.3f %.3f %.3f W, %d checked\n",
            r->st.update_seconds, r->st.chosen, r->st.choices, r->st.rmse_watts[0],
            r->st.rmse_watts[1], r->st.rmse_watts[2], r->st.rmse_watts[3], r->st.rmse_watts[4],
            r->checked_cells);
  erg_grid_free(&g);
  free(busy);
}

/* The power follows each 0.5 s update's load (a simulator's meter): the
 * candidate of one update is chosen, and the cells carry its tails. */
static void test_follows_update(void **state) {
  (void)state;
  for (int seed = 1; seed <= 3; seed++) {
    rng_state = 0x9e3779b97f4a7c15ULL * (uint64_t)seed;
    struct run r = {.update_s = 0.5,
                    .phase_s = 0.17 + 0.1 * seed,
                    .follows = FOLLOWS_UPDATE,
                    .slices = true,
                    .cells = 160};
    run_node(&r);
    assert_true(fabs(r.st.update_seconds - 0.5) < 0.005);
    assert_int_equal(r.st.chosen, 2);
    assert_true(fabs(r.st.window_seconds - 0.5) < 0.005);
    /* The slices (as they came, or per update) bias the fit clearly. */
    assert_true(r.st.rmse_watts[2] < 0.8 * r.st.rmse_watts[0]);
    assert_true(r.st.rmse_watts[2] < 0.8 * r.st.rmse_watts[1]);
    assert_true(r.checked_cells > 50);
    assert_true(r.max_tail_diff < 1e-9);
  }
}

/* A shared meter's member, in test_follows_update's load: its measured
 * power is the group's, so it chooses no window of its own and leaves its
 * cells to the group (grouptail.c gives them the group's window before the
 * split): its candidates are gathered, its cells keep the slices' tails
 * even with a window in use. */
static void test_member(void **state) {
  (void)state;
  rng_state = 0x9e3779b97f4a7c15ULL;
  struct run r = {.update_s = 0.5,
                  .phase_s = 0.27,
                  .follows = FOLLOWS_UPDATE,
                  .slices = true,
                  .cells = 160,
                  .restore = 2,
                  .member = true};
  run_node(&r);
  assert_int_equal(r.st.choices, 0);
  assert_true(r.cand_cells > 140);
  assert_true(r.checked_cells > 100);
  assert_true(r.max_tail_diff > 0.01); /* not candidate 2's */
  assert_true(r.cells_seen > 150);
}

/* Two members behind one meter (the sum of their powers, updated at the
 * same times): the group's joint fit per candidate (group_tail_choose)
 * picks the window the power follows, as a lone node's fit does. */
static void group_choice(enum follows follows, double *rmse) {
  enum { NM = 2, CELLS = 240 };
  struct group_tail_rows rows;
  double meter[CELLS + 8] = {0};
  assert_int_equal(group_tail_rows_alloc(&rows, NM, CELLS + 8, 5), 0);
  for (size_t i = 0; i < rows.cap; i++)
    for (int m = 0; m < NM; m++) {
      double nan_tails[ERG_TAILWIN_CANDS][ERG_NDERIVED];
      for (int k = 0; k < ERG_TAILWIN_CANDS; k++)
        for (int d = 0; d < ERG_NDERIVED; d++)
          nan_tails[k][d] = NAN;
      group_tail_rows_set(&rows, i, NAN, m, 0, 0, NCPU, nan_tails);
    }
  for (int m = 0; m < NM; m++) {
    rng_state = 0x2545f4914f6cdd1dULL * (uint64_t)(m + 1);
    struct run r = {.update_s = 0.5,
                    .phase_s = 0.31,
                    .follows = follows,
                    .slices = true,
                    .cells = CELLS,
                    .member = true,
                    .rows = &rows,
                    .m = m,
                    .meter = meter};
    run_node(&r);
  }
  for (size_t i = 0; i < rows.cap; i++)
    rows.watts[i] = meter[i];
  rows.nrows = rows.cap;
  bool use[ERG_TAILWIN_CANDS] = {true, true, true, true, true};
  group_tail_choose(&rows, use, NULL, rmse);
  if (getenv("TAILWIN_VERBOSE"))
    fprintf(stderr, "group: rmse %.3f %.3f %.3f %.3f %.3f W\n", rmse[0], rmse[1], rmse[2], rmse[3],
            rmse[4]);
  group_tail_rows_free(&rows);
}

static void test_group(void **state) {
  (void)state;
  double rmse[ERG_TAILWIN_CANDS];
  group_choice(FOLLOWS_UPDATE, rmse);
  assert_int_equal(erg_tailwin_pick(rmse, 0), 2);
  assert_true(rmse[2] < 0.8 * rmse[0]);
  group_choice(FOLLOWS_SLICES, rmse);
  int pick = erg_tailwin_pick(rmse, 0);
  assert_true(pick == 0 || pick == 1);
  assert_true(rmse[pick] < 0.9 * rmse[2]);
}

/* The power follows the load within each 0.1 s slice (a real node, its
 * meter averaging): the slices stay, though the meter updates per 0.5 s. */
static void test_follows_slices(void **state) {
  (void)state;
  for (int seed = 1; seed <= 3; seed++) {
    rng_state = 0x51ed2705a3c1b9ULL * (uint64_t)seed;
    struct run r = {
        .update_s = 0.5, .phase_s = 0.31, .follows = FOLLOWS_SLICES, .slices = true, .cells = 160};
    run_node(&r);
    assert_true(fabs(r.st.update_seconds - 0.5) < 0.005);
    assert_true(r.st.choices > 0);
    assert_int_equal(r.st.chosen, 1);
    assert_true(r.st.rmse_watts[1] < 0.8 * r.st.rmse_watts[0]);
  }
}

/* The power follows windows of two updates (1 s, from the first update): the
 * candidate of two updates. */
static void test_follows_two_updates(void **state) {
  (void)state;
  rng_state = 77;
  struct run r = {.update_s = 0.5,
                  .phase_s = 0.23,
                  .follows = FOLLOWS_TWO_UPDATES,
                  .slices = true,
                  .cells = 160};
  run_node(&r);
  assert_true(r.st.chosen == 3 || r.st.chosen == 4);
  assert_true(fabs(r.st.window_seconds - 1.0) < 0.01);
  /* The other pair is out of phase: clearly worse. */
  int other = r.st.chosen == 3 ? 4 : 3;
  assert_true(r.st.rmse_watts[r.st.chosen] < 0.9 * r.st.rmse_watts[other]);
}

/* A meter that updates every 0.1 s, faster than it is polled (0.25 s),
 * the power following each update (erg-pdusim in light_load.sh): its
 * reading changes at every poll, so its updates are not seen and windows
 * of the polls are no window the power follows (their tails of the mean
 * fit the noisy slices' timing better, but bias the curve at light load
 * high): only the slices, as they came or per poll, are candidates. */
static void test_updates_unseen(void **state) {
  (void)state;
  rng_state = 11;
  struct run r = {
      .update_s = 0.1, .phase_s = 0.04, .follows = FOLLOWS_UPDATE, .slices = true, .cells = 100};
  run_node(&r);
  assert_true(fabs(r.st.update_seconds - 0.25) < 0.01);
  assert_true(r.st.choices > 0);
  assert_true(r.st.chosen <= 1);
  for (int c = 2; c < ERG_TAILWIN_CANDS; c++)
    assert_true(isnan(r.st.rmse_watts[c]));
}

/* The fits run off the loop: with ergd's fit lock held (as a refit would),
 * the cells go on being finalised with the candidate in use while the
 * choice waits, and it is made once the lock is free. */
static void test_off_the_loop(void **state) {
  (void)state;
  rng_state = 0x9e3779b97f4a7c15ULL;
  struct run r = {.update_s = 0.5,
                  .phase_s = 0.27,
                  .follows = FOLLOWS_UPDATE,
                  .slices = true,
                  .cells = 200,
                  .async_from = 100};
  run_node(&r); /* holds the fit lock from cell 100 to after the last */
  assert_true(r.choices_at_lock > 0);
  assert_true(r.busy_at_end);
  assert_true(r.cells_seen >= 195);                      /* 100 cells with a choice due went on */
  assert_int_equal(r.choices_at_end, r.choices_at_lock); /* none made meanwhile */
  assert_int_equal(r.st.choices, r.choices_at_lock + 1); /* the one waiting, made after */
  assert_int_equal(r.st.chosen, 2);
}

/* The last run's choice is in use from the start: the cells carry its
 * tails before this run's first choice (which confirms it). */
static void test_restored(void **state) {
  (void)state;
  rng_state = 0x9e3779b97f4a7c15ULL * 2;
  struct run r = {.update_s = 0.5,
                  .phase_s = 0.37,
                  .follows = FOLLOWS_UPDATE,
                  .slices = true,
                  .cells = 80,
                  .restore = 2};
  run_node(&r);
  assert_true(r.checked_before_choice > 20);
  assert_true(r.max_tail_diff < 1e-9);
  assert_true(r.st.choices > 0);
  assert_int_equal(r.st.chosen, 2);
}

/* The .tailwin file: written and read back; none; damaged ones refused. */
static void test_file(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-test-tailwin-XXXXXX", path[1100], why[1300];
  assert_non_null(mkdtemp(dir));
  assert_int_equal(erg_tailwin_file_path(dir, "node/a", path, sizeof path), 0);
  assert_non_null(strstr(path, ".tailwin"));
  struct erg_tailwin_saved s = {.chosen = 3, .update_seconds = 0.5004, .chosen_s = 1700000000};
  struct erg_tailwin_saved back = {0};
  assert_int_equal(erg_tailwin_file_read(path, &back, why, sizeof why), 0);
  assert_int_equal(erg_tailwin_file_write(path, &s, why, sizeof why), 0);
  assert_int_equal(erg_tailwin_file_read(path, &back, why, sizeof why), 1);
  assert_int_equal(back.chosen, 3);
  assert_float_equal(back.update_seconds, 0.5004, 1e-9);
  assert_int_equal(back.chosen_s, 1700000000);
  static const char *const bad[] = {
      "erg-tailwin 1 chosen=5 update_seconds=0.5 chosen_unix_seconds=1\n",
      "erg-tailwin 1 chosen=-1 update_seconds=0.5 chosen_unix_seconds=1\n",
      "erg-tailwin 1 chosen=2 update_seconds=nan chosen_unix_seconds=1\n",
      "erg-tailwin 1 chosen=2 update_seconds=0.5 chosen_unix_seconds=1 more\n",
      "erg-lag 1 lag_seconds=2\n",
      ""};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(bad[i], f);
    fclose(f);
    why[0] = 0;
    assert_int_equal(erg_tailwin_file_read(path, &back, why, sizeof why), -1);
    assert_non_null(strstr(why, "not an erg tails' window file"));
  }
  unlink(path);
  rmdir(dir);
}

/* No slices: no windows, the tails stay those of each sample. */
/* The choice from the RMSEs: the finest window within the margin of the
 * best; the one in use kept on a tie unless a finer one ties too. */
static void test_pick(void **state) {
  (void)state;
  const double n = NAN;
  /* Clearly best: taken, from anything. */
  assert_int_equal(erg_tailwin_pick((double[]){1.2, 1.1, 0.5, 0.9, 0.9}, 0), 2);
  assert_int_equal(erg_tailwin_pick((double[]){0.5, 1.1, 0.9, 0.9, 0.9}, 3), 0);
  /* A tie (within 2 %): the finer one, also when a coarser one is in use
   * and marginally better (light load: the pairs by 1 % over the slices). */
  assert_int_equal(erg_tailwin_pick((double[]){1.00, 1.02, 1.00, 0.99, 1.1}, 3), 0);
  assert_int_equal(erg_tailwin_pick((double[]){1.05, 1.00, 1.005, 0.995, 1.1}, 0), 1);
  /* In use and tied with nothing finer: kept, though another is lower. */
  assert_int_equal(erg_tailwin_pick((double[]){1.2, 1.2, 1.00, 0.99, 0.985}, 2), 2);
  /* The pairs are alike: the one in use stays. */
  assert_int_equal(erg_tailwin_pick((double[]){1.2, 1.2, 1.2, 1.00, 0.99}, 3), 3);
  assert_int_equal(erg_tailwin_pick((double[]){1.2, 1.2, 1.2, 1.00, 0.99}, 4), 4);
  assert_int_equal(erg_tailwin_pick((double[]){1.2, 1.2, 1.2, 1.00, 0.99}, 0), 3);
  /* Unscored candidates are never taken; none scored: no choice. */
  assert_int_equal(erg_tailwin_pick((double[]){n, 1.0, n, n, n}, 0), 1);
  assert_int_equal(erg_tailwin_pick((double[]){n, n, n, n, n}, 2), -1);
}

static void test_no_slices(void **state) {
  (void)state;
  rng_state = 5;
  struct run r = {
      .update_s = 0.5, .phase_s = 0.2, .follows = FOLLOWS_UPDATE, .slices = false, .cells = 60};
  run_node(&r);
  assert_int_equal(r.cand_cells, 0);
  assert_int_equal(r.st.chosen, 0);
  assert_int_equal(r.st.choices, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_follows_update),
      cmocka_unit_test(test_member),
      cmocka_unit_test(test_group),
      cmocka_unit_test(test_follows_slices),
      cmocka_unit_test(test_follows_two_updates),
      cmocka_unit_test(test_updates_unseen),
      cmocka_unit_test(test_pick),
      cmocka_unit_test(test_no_slices),
      cmocka_unit_test(test_off_the_loop),
      cmocka_unit_test(test_restored),
      cmocka_unit_test(test_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

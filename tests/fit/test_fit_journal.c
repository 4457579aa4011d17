// SPDX-License-Identifier: GPL-3.0-or-later
/* Training-journal reader: good rows, malformed lines, repeated headers,
 * rotated files with different columns. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "erg_fit.h"
#include "fit_test.h"

#define HDR "# erg-journal v1 node=n1 step_seconds=5\n"
#define COLS                                                                                       \
  "time_unix_seconds,step_seconds,measured_watts,flags,cpu_seconds_per_second,disk_bytes_per_"     \
  "second\n"

static int read_text(struct erg_dataset *ds, const char *text, char *why, size_t whylen) {
  char *path = fit_test_file(text);
  int rc = erg_journal_read(ds, path, why, whylen);
  fit_test_unlink(path);
  return rc;
}

static void test_good_rows(void **state) {
  (void)state;
  struct erg_dataset ds;
  char why[256];
  erg_dataset_init(&ds);
  assert_int_equal(read_text(&ds,
                             HDR COLS "1763700000,5,153.2,0,0.412,1000\n"
                                      "1763700005,5,nan,1,0.5,0\r\n"
                                      "\n"
                                      "1763700010,5,160,8,0,2e3\n",
                             why, sizeof why),
                   0);
  assert_string_equal(ds.node, "n1");
  assert_true(ds.step_seconds == 5);
  assert_int_equal(ds.nrows, 3);
  assert_int_equal(ds.nfeatures, 2);
  assert_string_equal(ds.feature[0], "cpu_seconds_per_second");
  assert_string_equal(ds.feature[1], "disk_bytes_per_second");
  assert_true(ds.time_unix_seconds[0] == 1763700000);
  assert_true(ds.measured_watts[0] == 153.2);
  assert_true(isnan(ds.measured_watts[1]));
  assert_int_equal(ds.flags[1], ERG_ROW_METER_MISSING);
  assert_int_equal(ds.flags[2], ERG_ROW_IDLE);
  assert_true(ds.x[1][2] == 2000);
  assert_int_equal(ds.malformed_lines, 0);
  assert_int_equal(ds.files, 1);
  erg_dataset_free(&ds);
}

static void test_malformed_lines(void **state) {
  (void)state;
  struct erg_dataset ds;
  char why[256];
  erg_dataset_init(&ds);
  assert_int_equal(read_text(&ds,
                             "1,5,100,0,1,1\n" /* before any header */
                             HDR COLS "1763700000,5,153.2,0,0.4,1\n"
                             "1763700005,5,153.2,0,0.4\n"     /* too few */
                             "1763700010,5,153.2,0,0.4,1,7\n" /* too many */
                             "1763700015,5,abc,0,0.4,1\n"
                             "1763700020,5,150,0,0.4,1x\n"
                             "1763700025,0,150,0,0.4,1\n"   /* step 0 */
                             "1763700030,5,150,1.5,0.4,1\n" /* fractional flags */
                             "1763700035,5,150,-1,0.4,1\n"
                             "1763700040,5,150,0,,1\n"
                             "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,"
                             "25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40\n"
                             "garbage\n"
                             "1763700045,5,151,0,0.5,2\n"
                             "17637000", /* torn last line */
                             why, sizeof why),
                   0);
  assert_int_equal(ds.nrows, 2);
  assert_int_equal(ds.malformed_lines, 12);
  erg_dataset_free(&ds);
}

static void test_repeated_headers(void **state) {
  (void)state;
  struct erg_dataset ds;
  char why[256];
  erg_dataset_init(&ds);
  /* A restart repeats both header lines: fine when identical. */
  assert_int_equal(
      read_text(&ds, HDR COLS "1763700000,5,153.2,0,0.4,1\n" HDR COLS "1763700005,5,150,0,0.3,1\n",
                why, sizeof why),
      0);
  assert_int_equal(ds.nrows, 2);
  assert_int_equal(ds.malformed_lines, 0);
  erg_dataset_free(&ds);

  erg_dataset_init(&ds);
  assert_int_equal(read_text(&ds,
                             HDR COLS "1763700000,5,153.2,0,0.4,1\n"
                                      "time_unix_seconds,step_seconds,measured_watts,flags,"
                                      "cpu_seconds_per_second\n",
                             why, sizeof why),
                   -1);
  assert_non_null(strstr(why, "column header differs"));
  erg_dataset_free(&ds);
}

static void test_header_errors(void **state) {
  (void)state;
  struct erg_dataset ds;
  char why[256];
  static const char *bad[] = {
      "# erg-journal v2 node=n1 step_seconds=5\n" COLS,
      HDR "time_unix_seconds,measured_watts,step_seconds,flags,x\n",
      HDR "time_unix_seconds,step_seconds,measured_watts,flags,Bad-Name\n",
      HDR "time_unix_seconds,step_seconds,measured_watts,flags,x,x\n",
      HDR COLS "# erg-journal v1 node=other step_seconds=5\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    erg_dataset_init(&ds);
    why[0] = '\0';
    assert_int_equal(read_text(&ds, bad[i], why, sizeof why), -1);
    assert_true(strlen(why) > 0);
    erg_dataset_free(&ds);
  }
  /* More feature columns than a dataset holds. */
  char wide[2048] = HDR "time_unix_seconds,step_seconds,measured_watts,flags";
  for (int k = 0; k <= ERG_JOURNAL_MAX_FEATURES; k++)
    snprintf(wide + strlen(wide), sizeof wide - strlen(wide), ",f%d_per_second", k);
  strcat(wide, "\n");
  erg_dataset_init(&ds);
  assert_int_equal(read_text(&ds, wide, why, sizeof why), -1);
  assert_non_null(strstr(why, "feature columns"));
  erg_dataset_free(&ds);
  erg_dataset_init(&ds);
  assert_int_equal(erg_journal_read(&ds, "/nonexistent/journal.csv", why, sizeof why), -1);
  assert_non_null(strstr(why, "No such file"));
  erg_dataset_free(&ds);
}

/* Rotated pieces: an older file without a newer column reads as NaN there;
 * another node's journal is refused. */
static void test_rotated_files(void **state) {
  (void)state;
  struct erg_dataset ds;
  char why[256];
  erg_dataset_init(&ds);
  assert_int_equal(read_text(&ds, HDR COLS "1763700100,5,150,0,0.4,1\n", why, sizeof why), 0);
  assert_int_equal(read_text(&ds,
                             HDR "time_unix_seconds,step_seconds,measured_watts,flags,"
                                 "cpu_seconds_per_second,instructions_per_second\n"
                                 "1763700000,5,140,0,0.2,5e8\n",
                             why, sizeof why),
                   0);
  assert_int_equal(ds.files, 2);
  assert_int_equal(ds.nrows, 2);
  assert_int_equal(ds.nfeatures, 3);
  assert_true(isnan(ds.x[2][0]));
  assert_true(ds.x[2][1] == 5e8);
  assert_true(isnan(ds.x[1][1]));
  assert_true(ds.x[0][1] == 0.2);
  assert_int_equal(
      read_text(&ds, "# erg-journal v1 node=n2 step_seconds=5\n" COLS, why, sizeof why), -1);
  assert_non_null(strstr(why, "n2"));
  erg_dataset_free(&ds);
}

/* A journal of an older ergd (no ncpu column) and a current one load
 * together; the utilisation curve is derived where ncpu is known, and
 * erg fit --ncpu (ncpu_default) fills it in for the old rows. */
static void test_ncpu_column(void **state) {
  (void)state;
  char *old = fit_test_file("# erg-journal v1 node=n1 step_seconds=5\n"
                            "time_unix_seconds,step_seconds,measured_watts,flags,"
                            "cpu_seconds_per_second\n"
                            "100,5,110,0,1.0\n");
  char *cur = fit_test_file("# erg-journal v1 node=n1 step_seconds=5\n"
                            "time_unix_seconds,step_seconds,measured_watts,flags,"
                            "cpu_seconds_per_second,disk_bytes_per_second,ncpu\n"
                            "105,5,130,0,2.0,0,4\n"
                            "110,5,150,0,6.0,0,4\n");
  struct erg_dataset ds;
  char why[256];
  for (int pass = 0; pass < 2; pass++) {
    erg_dataset_init(&ds);
    assert_int_equal(erg_journal_read(&ds, old, why, sizeof why), 0);
    assert_int_equal(erg_journal_read(&ds, cur, why, sizeof why), 0);
    assert_int_equal(ds.nrows, 3);
    assert_int_equal(erg_dataset_derive(&ds, pass ? 2 : 0, why, sizeof why), ERG_NDERIVED);
    int top = -1; /* the top basis function, u^8 (the eighth tail) */
    for (size_t k = 0; k < ds.nfeatures; k++)
      if (!strcmp(ds.feature[k], "node_cpu_utilization_tail8_8"))
        top = (int)k;
    assert_true(top >= 0);
    /* Row 0: old file, ncpu unknown (pass 0) or 2 (pass 1): u = 0.5. */
    if (pass)
      assert_float_equal(ds.x[top][0], 0.00390625, 1e-12);
    else
      assert_true(isnan(ds.x[top][0]));
    assert_float_equal(ds.x[top][1], 0.00390625, 1e-12); /* 2 of 4 CPUs */
    assert_float_equal(ds.x[top][2], 1.0, 1e-12);        /* clamped: 6 of 4 */
    erg_dataset_free(&ds);
  }
  fit_test_unlink(old);
  fit_test_unlink(cur);
}

struct progress_log {
  size_t calls, last_bytes, stop_after;
};

static int progress_record(void *user, size_t bytes_read) {
  struct progress_log *l = user;
  assert_true(bytes_read > l->last_bytes); /* grows, within the file */
  l->last_bytes = bytes_read;
  return ++l->calls == l->stop_after;
}

/* Progress every 256 KiB of a ~1.2 MB file; a non-zero return cancels. */
static void test_read_progress(void **state) {
  (void)state;
  size_t cap = 128 + 40000 * 40, len = 0;
  char *text = malloc(cap), why[256];
  len += (size_t)snprintf(text, cap,
                          "time_unix_seconds,step_seconds,measured_watts,flags,"
                          "cpu_seconds_per_second\n");
  for (int i = 0; i < 40000; i++)
    len += (size_t)snprintf(text + len, cap - len, "%d,5,%.3f,0,%.6f\n", 1700000000 + 5 * i,
                            100.0 + i % 7, 0.5);
  char *path = fit_test_file(text);
  struct erg_dataset ds;
  struct progress_log log = {0};
  erg_dataset_init(&ds);
  assert_int_equal(erg_journal_read_progress(&ds, path, progress_record, &log, why, sizeof why), 0);
  assert_int_equal(log.calls, len / (256 << 10));
  assert_int_equal(ds.nrows, 40000);
  erg_dataset_free(&ds);
  struct progress_log stop = {.stop_after = 2};
  assert_int_equal(erg_journal_read_progress(&ds, path, progress_record, &stop, why, sizeof why),
                   -1);
  assert_string_equal(why, "cancelled");
  assert_true(ds.nrows > 0 && ds.nrows < 40000);
  erg_dataset_free(&ds);
  fit_test_unlink(path);
  free(text);
}

/* A cell journalled twice (ergd killed before its store caught up, then
 * resumed from the store) counts once, the first copy; so does a cell a
 * file read before already has. Both are counted, not malformed. */
static void test_duplicate_rows(void **state) {
  (void)state;
  struct erg_dataset ds;
  char why[256];
  erg_dataset_init(&ds);
  assert_int_equal(read_text(&ds,
                             HDR COLS "100,5,150,0,1,0\n"
                                      "105,5,160,0,1,0\n"
                                      "110,5,170,0,1,0\n" HDR COLS "105,5,999,1,1,0\n"
                                      "110,5,999,1,1,0\n"
                                      "115,5,180,0,1,0\n"
                                      "112,5,999,0,1,0\n",
                             why, sizeof why),
                   0);
  assert_int_equal(ds.nrows, 4);
  assert_int_equal(ds.duplicate_rows, 3);
  assert_int_equal(ds.malformed_lines, 0);
  const double want_t[] = {100, 105, 110, 115}, want_w[] = {150, 160, 170, 180};
  for (int i = 0; i < 4; i++) {
    assert_true(ds.time_unix_seconds[i] == want_t[i]);
    assert_true(ds.measured_watts[i] == want_w[i]);
  }
  /* An older rotated file overlapping the one read before it. */
  assert_int_equal(read_text(&ds,
                             HDR COLS "90,5,130,0,1,0\n"
                                      "95,5,140,0,1,0\n"
                                      "100,5,999,0,1,0\n",
                             why, sizeof why),
                   0);
  assert_int_equal(ds.nrows, 6);
  assert_int_equal(ds.duplicate_rows, 4);
  assert_true(ds.measured_watts[5] == 140);
  erg_dataset_free(&ds);
}

/* Issue 23: values no node measures are skipped and counted, not read:
 * measured power outside 0..1 MW (1e308, -1e6, inf), a negative or
 * infinite feature, CPU time per second far above the CPU count (2e9 from
 * a forged sample), an absurd CPU count. NaN is "not measured" and stays. */
static void test_implausible_rows(void **state) {
  (void)state;
  struct erg_dataset ds;
  char why[256];
  erg_dataset_init(&ds);
  assert_int_equal(read_text(&ds,
                             HDR "time_unix_seconds,step_seconds,measured_watts,flags,"
                                 "cpu_seconds_per_second,disk_bytes_per_second,ncpu\n"
                                 "1763700000,5,1e308,0,0.4,1,4\n"
                                 "1763700005,5,-1000000,0,0.4,1,4\n"
                                 "1763700010,5,inf,0,0.4,1,4\n"
                                 "1763700015,5,1000001,0,0.4,1,4\n"
                                 "1763700020,5,150,0,-0.5,1,4\n"
                                 "1763700025,5,150,0,0.4,inf,4\n"
                                 "1763700030,5,150,0,0.4,1e16,4\n"
                                 "1763700035,5,150,0,2000000000,1,4\n"
                                 "1763700040,5,150,0,0.4,1,4294967295\n"
                                 "1763700045,5,150,0,200000,1,0\n"
                                 "1763700050,5,-0.001,0,0.4,1,4\n"
                                 "1763700055,5,150,0,4.2,1,4\n"   /* edges of a sample */
                                 "1763700060,5,nan,1,0.4,nan,4\n" /* not measured */
                                 "1763700065,5,999999,0,9,1e15,0\n"
                                 "1763700070,5,0,0,0,0,0\n",
                             why, sizeof why),
                   0);
  assert_int_equal(ds.implausible_rows, 11);
  assert_int_equal(ds.malformed_lines, 0);
  assert_int_equal(ds.nrows, 4);
  assert_true(ds.time_unix_seconds[0] == 1763700055);
  assert_true(isnan(ds.measured_watts[1]) && isnan(ds.x[1][1]));
  assert_true(ds.measured_watts[2] == 999999);
  /* Rows after a skipped one are not taken for repeats of it. */
  assert_int_equal(ds.duplicate_rows, 0);
  erg_dataset_free(&ds);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_good_rows),        cmocka_unit_test(test_malformed_lines),
      cmocka_unit_test(test_repeated_headers), cmocka_unit_test(test_header_errors),
      cmocka_unit_test(test_rotated_files),    cmocka_unit_test(test_ncpu_column),
      cmocka_unit_test(test_read_progress),    cmocka_unit_test(test_duplicate_rows),
      cmocka_unit_test(test_implausible_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

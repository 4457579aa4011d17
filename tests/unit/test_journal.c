// SPDX-License-Identifier: GPL-3.0-or-later
/* Training journal: header once per file, one row per cell, rotation by
 * size keeps every row exactly once; the ncpu column is last, and a file
 * of an older ergd (no ncpu column) is rotated, not appended to. */
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

#include "erg_collector.h"

static int count_lines(const char *path, const char *prefix) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  char line[512];
  int n = 0;
  while (fgets(line, sizeof line, f))
    n += !strncmp(line, prefix, strlen(prefix));
  fclose(f);
  return n;
}

static void test_journal_rows_and_rotation(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-journal-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char why[256], path[1024];
  for (int i = 0; i < 400; i++) {
    struct erg_journal_row r = {.t0 = 1700000000 + 5 * i,
                                .step_seconds = 5,
                                .measured_watts = i % 7 ? 100.0 + i : NAN,
                                .flags = i % 7 ? 0 : ERG_CELL_NO_METER,
                                .cpu_seconds_per_second = 0.5,
                                .ncpu = 2};
    assert_int_equal(erg_journal_append(dir, "node/1", &r, 4096, 0, why, sizeof why), 0);
  }
  assert_int_equal(erg_journal_path(dir, "node/1", path, sizeof path), 0);
  int rows = 0, headers = 0, files = 0;
  for (int k = 0; k <= 5; k++) {
    char p[1100];
    snprintf(p, sizeof p, k ? "%s.%d" : "%s", path, k);
    int n = count_lines(p, "17");
    if (n < 0)
      continue;
    files++;
    rows += n;
    headers += count_lines(p, "# erg-journal v1 node=node_1-");
    assert_int_equal(count_lines(p, "time_unix_seconds,step_seconds,measured_watts,flags,"
                                    "cpu_seconds_per_second,ncpu\n"),
                     1);
  }
  assert_true(files >= 3);
  assert_int_equal(headers, files);
  /* Rotation keeps 5 old files: with 4 KiB files all 400 rows (~27 B) fit. */
  assert_int_equal(rows, 400);
  assert_int_equal(count_lines(path, "1700000000,"), 0);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "grep -q '^1700000000,5,nan,1,0.500000,2$' %s/*", dir);
  assert_int_equal(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

/* A journal an older ergd wrote (no ncpu column) is rotated away, so no
 * file mixes rows of two column sets; the reader takes both. */
static void test_journal_old_file(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-journal-XXXXXX", path[1024], why[256], cmd[4096];
  assert_non_null(mkdtemp(dir));
  assert_int_equal(erg_journal_path(dir, "n1", path, sizeof path), 0);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("# erg-journal v1 node=n1 step_seconds=5\n"
        "time_unix_seconds,step_seconds,measured_watts,flags,cpu_seconds_per_second\n"
        "1700000000,5,100.000,0,0.100000\n",
        f);
  fclose(f);
  assert_int_equal(erg_journal_columns(dir, "n1"), 0);
  struct erg_journal_row r = {.t0 = 1700000005,
                              .step_seconds = 5,
                              .measured_watts = 120,
                              .cpu_seconds_per_second = 1.5,
                              .ncpu = 4};
  assert_int_equal(erg_journal_append(dir, "n1", &r, 0, 0, why, sizeof why), 0);
  snprintf(cmd, sizeof cmd,
           "grep -q '^1700000000,5,100.000,0,0.100000$' %s.1 && "
           "grep -q '^1700000005,5,120.000,0,1.500000,4$' %s && "
           "grep -q '^time_unix_seconds,.*,ncpu$' %s",
           path, path, path);
  assert_int_equal(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

/* Issue 26: the gpu_watts column once a node has GPU readings, "nan" in a
 * cell without them (GPUs lost), found again by erg_journal_columns. */
static void test_journal_gpu_column(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-journal-XXXXXX", path[1024], why[256], cmd[4096];
  assert_non_null(mkdtemp(dir));
  assert_int_equal(erg_journal_path(dir, "n1", path, sizeof path), 0);
  unsigned cols = 1u << ERG_FEAT_DISK | 1u << ERG_FEAT_GPU;
  for (int i = 0; i < 2; i++) {
    struct erg_journal_row r = {.t0 = 1700000000 + 5 * i,
                                .step_seconds = 5,
                                .measured_watts = 500,
                                .cpu_seconds_per_second = 1,
                                .disk_bytes_per_second = 10,
                                .gpu_watts = i ? NAN : 312.5,
                                .columns = cols,
                                .ncpu = 4};
    assert_int_equal(erg_journal_append(dir, "n1", &r, 0, 0, why, sizeof why), 0);
  }
  assert_int_equal(erg_journal_columns(dir, "n1"), cols);
  snprintf(cmd, sizeof cmd,
           "grep -q '^time_unix_seconds,step_seconds,measured_watts,flags,"
           "cpu_seconds_per_second,disk_bytes_per_second,gpu_watts,ncpu$' %s && "
           "grep -q '^1700000000,5,500.000,0,1.000000,10,312.5,4$' %s && "
           "grep -q '^1700000005,5,500.000,0,1.000000,10,nan,4$' %s",
           path, path, path);
  assert_int_equal(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

/* A meter that averages (average_seconds): its N in the file's header,
 * for the fit's kernel; a changed N starts a new file, with the cached
 * header (ergd's appends) as without. */
static void test_journal_average(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-journal-XXXXXX", path[1024], old[1100], why[256];
  assert_non_null(mkdtemp(dir));
  assert_int_equal(erg_journal_path(dir, "n1", path, sizeof path), 0);
  snprintf(old, sizeof old, "%s.1", path);
  struct erg_journal_file known = {0};
  static const unsigned avg[] = {5, 5, 0, 0, 1};
  for (int i = 0; i < 5; i++) {
    struct erg_journal_row r = {.t0 = 1700000000 + 5 * i,
                                .step_seconds = 5,
                                .measured_watts = 500,
                                .cpu_seconds_per_second = 1,
                                .ncpu = 4,
                                .average_seconds = avg[i]};
    assert_int_equal(
        erg_journal_append_cached(dir, "n1", &r, 0, 0, i < 3 ? &known : NULL, why, sizeof why), 0);
    if (i == 1) {
      assert_int_equal(
          count_lines(path, "# erg-journal v1 node=n1 step_seconds=5 average_seconds=5\n"), 1);
      assert_int_equal(count_lines(path, "17"), 2);
    }
  }
  /* Rows 3-5 (no average; 1 is none) in one new file, rows 1-2 rotated. */
  assert_int_equal(count_lines(old, "# erg-journal v1 node=n1 step_seconds=5 average_seconds=5\n"),
                   1);
  assert_int_equal(count_lines(old, "17"), 2);
  assert_int_equal(count_lines(path, "# erg-journal v1 node=n1 step_seconds=5\n"), 1);
  assert_int_equal(count_lines(path, "17"), 3);
  unlink(old);
  unlink(path);
  rmdir(dir);
}

/* Issue 38: the curve's tails as cell means, before ncpu; found again by
 * erg_journal_columns; read back by the fit, which keeps them. */
static void test_journal_tail_columns(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-journal-XXXXXX", path[1024], why[256], cmd[4096];
  assert_non_null(mkdtemp(dir));
  assert_int_equal(erg_journal_path(dir, "n1", path, sizeof path), 0);
  unsigned cols = 1u << ERG_FEAT_DISK | ERG_JOURNAL_TAILS;
  for (int i = 0; i < 2; i++) {
    struct erg_journal_row r = {.t0 = 1700000000 + 5 * i,
                                .step_seconds = 5,
                                .measured_watts = 150,
                                .cpu_seconds_per_second = 1,
                                .columns = cols,
                                .ncpu = 2};
    for (int d = 0; d < ERG_NDERIVED; d++)
      r.tails[d] = i ? NAN : 0.5;
    assert_int_equal(erg_journal_append(dir, "n1", &r, 0, 0, why, sizeof why), 0);
  }
  assert_int_equal(erg_journal_columns(dir, "n1"), cols);
  snprintf(cmd, sizeof cmd,
           "grep -q '^time_unix_seconds,step_seconds,measured_watts,flags,"
           "cpu_seconds_per_second,disk_bytes_per_second,node_cpu_utilization_tail8_1,"
           "node_cpu_utilization_tail8_2,node_cpu_utilization_tail8_3,"
           "node_cpu_utilization_tail8_4,node_cpu_utilization_tail8_5,"
           "node_cpu_utilization_tail8_6,node_cpu_utilization_tail8_7,"
           "node_cpu_utilization_tail8_8,ncpu$' %s && "
           "grep -q '^1700000000,5,150.000,0,1.000000,0,0.500000,0.500000,0.500000,0.500000,"
           "0.500000,0.500000,0.500000,0.500000,2$' %s",
           path, path);
  assert_int_equal(system(cmd), 0);
  struct erg_dataset ds;
  erg_dataset_init(&ds);
  assert_int_equal(erg_journal_read(&ds, path, why, sizeof why), 0);
  assert_int_equal(erg_dataset_derive(&ds, 0, why, sizeof why), ERG_NDERIVED);
  int t8 = -1;
  for (size_t k = 0; k < ds.nfeatures; k++)
    t8 = strcmp(ds.feature[k], erg_derived_names[ERG_NDERIVED - 1]) ? t8 : (int)k;
  assert_true(t8 >= 0);
  /* Row 0 keeps the cell mean; row 1 (nan) gets the tail of its mean u = 0.5. */
  assert_float_equal(ds.x[t8][0], 0.5, 1e-9);
  assert_float_equal(ds.x[t8][1], pow(0.5, 8), 1e-9);
  erg_dataset_free(&ds);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

/* Rotation by age: no file spans more than max_age of rows, and every row
 * is in exactly one of the files kept. */
static void journal_age_rotation(struct erg_journal_file *known) {
  char dir[] = "/tmp/erg-journal-XXXXXX", path[1024], why[256], cmd[1200];
  assert_non_null(mkdtemp(dir));
  for (int i = 0; i < 100; i++) {
    struct erg_journal_row r = {.t0 = 1700000000 + 5 * i,
                                .step_seconds = 5,
                                .measured_watts = 100,
                                .cpu_seconds_per_second = 1,
                                .ncpu = 2};
    assert_int_equal(erg_journal_append_cached(dir, "n1", &r, 0, 100, known, why, sizeof why), 0);
  }
  assert_int_equal(erg_journal_path(dir, "n1", path, sizeof path), 0);
  int rows = 0, files = 0;
  for (int k = 0; k <= 5; k++) {
    char p[1100], line[256];
    snprintf(p, sizeof p, k ? "%s.%d" : "%s", path, k);
    FILE *f = fopen(p, "r");
    if (!f)
      continue;
    files++;
    long long lo = -1, hi = -1, t;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "%lld,", &t) == 1 && t > 1000) {
        lo = lo < 0 ? t : lo;
        hi = t;
        rows++;
      }
    fclose(f);
    assert_true(lo > 0 && hi - lo < 100);
  }
  /* 20 rows of 5 s per file: the current one and 4 full old ones. */
  assert_int_equal(files, 5);
  assert_int_equal(rows, 100);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_journal_age_rotation(void **state) {
  (void)state;
  journal_age_rotation(NULL);
}

/* ergd's appends remember the file (journal_file): rotation by age still
 * happens at the same rows. */
static void test_journal_age_rotation_cached(void **state) {
  (void)state;
  struct erg_journal_file known = {0};
  journal_age_rotation(&known);
}

/* A file put in place behind the remembered one (another inode, other
 * columns) is read again and rotated, not appended to with wrong columns. */
static void test_journal_cached_replaced(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-journal-XXXXXX", path[1024], why[256], cmd[4000];
  assert_non_null(mkdtemp(dir));
  assert_int_equal(erg_journal_path(dir, "n1", path, sizeof path), 0);
  struct erg_journal_file known = {0};
  struct erg_journal_row r = {.t0 = 1700000000,
                              .step_seconds = 5,
                              .measured_watts = 100,
                              .cpu_seconds_per_second = 1,
                              .ncpu = 2};
  assert_int_equal(erg_journal_append_cached(dir, "n1", &r, 0, 0, &known, why, sizeof why), 0);
  assert_true(known.valid);
  snprintf(cmd, sizeof cmd,
           "printf 'time_unix_seconds,step_seconds,measured_watts,flags,"
           "cpu_seconds_per_second\n1700000005,5,1.000,0,0.100000\n' >%s.new && mv %s.new %s",
           path, path, path);
  assert_int_equal(system(cmd), 0);
  r.t0 += 10;
  assert_int_equal(erg_journal_append_cached(dir, "n1", &r, 0, 0, &known, why, sizeof why), 0);
  snprintf(cmd, sizeof cmd,
           "grep -q '^1700000005,5,1.000,0,0.100000$' %s.1 && "
           "grep -q '^time_unix_seconds,.*,ncpu$' %s && grep -q '^1700000010,' %s",
           path, path, path);
  assert_int_equal(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

/* ergd resumes after the journal's last row: its end from the file's tail
 * (past 4 KiB of rows, a torn last line ignored), from NODE.csv.1 when the
 * current file has no row yet, 0 without a journal. */
static void test_journal_last_end(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-journal-XXXXXX", path[1024], rotated[1100], why[256], cmd[1200];
  assert_non_null(mkdtemp(dir));
  assert_int_equal(erg_journal_last_end(dir, "n1"), 0);
  for (int i = 0; i < 300; i++) {
    struct erg_journal_row r = {.t0 = 1700000000 + 5 * i,
                                .step_seconds = 5,
                                .measured_watts = 100,
                                .cpu_seconds_per_second = 1,
                                .ncpu = 2};
    assert_int_equal(erg_journal_append(dir, "n1", &r, 0, 0, why, sizeof why), 0);
  }
  assert_int_equal(erg_journal_last_end(dir, "n1"), 1700000000 + 5 * 300);
  assert_int_equal(erg_journal_path(dir, "n1", path, sizeof path), 0);
  FILE *f = fopen(path, "a");
  assert_non_null(f);
  fputs("1700001500,5,10", f); /* torn by a crash */
  fclose(f);
  assert_int_equal(erg_journal_last_end(dir, "n1"), 1700000000 + 5 * 300);
  snprintf(rotated, sizeof rotated, "%s.1", path);
  assert_int_equal(rename(path, rotated), 0);
  f = fopen(path, "w");
  assert_non_null(f);
  fputs("# erg-journal v1 node=n1 step_seconds=5\ntime_unix_seconds,step_seconds\n", f);
  fclose(f);
  assert_int_equal(erg_journal_last_end(dir, "n1"), 1700000000 + 5 * 300);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

/* Issue 23: a row dated a day ahead (a clock set wrong, a forged file)
 * made ergd resume after it and write nothing for a day. Rows beyond the
 * bound are passed over, and said: the resume point is the last row
 * before them, in the rotated file if the current one has none. */
static void test_journal_last_end_future(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-journal-XXXXXX", path[1024], rotated[1100], why[256], cmd[1200];
  assert_non_null(mkdtemp(dir));
  int64_t now = 1800000000, ignored = -1;
  assert_int_equal(erg_journal_last_end_by(dir, "n1", now, &ignored), 0);
  assert_int_equal(ignored, 0);
  for (int i = 0; i < 3; i++) {
    struct erg_journal_row r = {.t0 = now - 100 + 5 * i,
                                .step_seconds = 5,
                                .measured_watts = 100,
                                .cpu_seconds_per_second = 1};
    assert_int_equal(erg_journal_append(dir, "n1", &r, 0, 0, why, sizeof why), 0);
  }
  struct erg_journal_row r = {.t0 = now + 86400, .step_seconds = 5, .measured_watts = 100};
  assert_int_equal(erg_journal_append(dir, "n1", &r, 0, 0, why, sizeof why), 0);
  assert_int_equal(erg_journal_last_end(dir, "n1"), now + 86405); /* unbounded */
  int64_t bound = now + ERG_JOURNAL_FUTURE_SECONDS;
  assert_int_equal(erg_journal_last_end_by(dir, "n1", bound, &ignored), now - 100 + 15);
  assert_int_equal(ignored, now + 86405);
  /* Rotated (ergd starts a new file after such rows): the new file has no
   * row yet, the rotated one is read, with the same bound. */
  assert_int_equal(erg_journal_rotate(dir, "n1"), 0);
  assert_int_equal(erg_journal_path(dir, "n1", path, sizeof path), 0);
  snprintf(rotated, sizeof rotated, "%s.1", path);
  assert_int_equal(access(rotated, F_OK), 0);
  assert_int_equal(erg_journal_last_end_by(dir, "n1", bound, &ignored), now - 100 + 15);
  assert_int_equal(ignored, now + 86405);
  /* Only future rows: no resume point from the journal. */
  snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir %s", dir, dir);
  assert_int_equal(system(cmd), 0);
  assert_int_equal(erg_journal_append(dir, "n1", &r, 0, 0, why, sizeof why), 0);
  assert_int_equal(erg_journal_last_end_by(dir, "n1", bound, &ignored), 0);
  assert_int_equal(ignored, now + 86405);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_journal_rows_and_rotation),
                                     cmocka_unit_test(test_journal_last_end_future),
                                     cmocka_unit_test(test_journal_age_rotation),
                                     cmocka_unit_test(test_journal_age_rotation_cached),
                                     cmocka_unit_test(test_journal_cached_replaced),
                                     cmocka_unit_test(test_journal_old_file),
                                     cmocka_unit_test(test_journal_gpu_column),
                                     cmocka_unit_test(test_journal_tail_columns),
                                     cmocka_unit_test(test_journal_average),
                                     cmocka_unit_test(test_journal_last_end)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

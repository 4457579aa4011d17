// SPDX-License-Identifier: GPL-3.0-or-later
/* ergd's write-ahead log (collector/wal.c): records come back whole and in
 * order across reopen, a torn last record (kill -9 during a write) and a
 * corrupt one (CRC) end their segment's replay and are counted, replay is
 * idempotent (files unchanged, same records twice), another layout is never
 * replayed, segments go only once their data is final, and the size bound
 * holds; one ergd per log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "collector_int.h"

#define LAYOUT 7u

struct seen {
  int n;
  int type[64];
  char data[64][32];
};

static void on_record(void *user, int type, int64_t data_s, const uint8_t *data, size_t len) {
  struct seen *s = user;
  (void)data_s;
  if (s->n < 64 && len < 32) {
    s->type[s->n] = type;
    memcpy(s->data[s->n], data, len);
    s->data[s->n][len] = '\0';
  }
  s->n++;
}

static char dir[64];

static int setup(void **state) {
  (void)state;
  strcpy(dir, "/tmp/erg-test-wal.XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd);
}

static struct wal *wal_new(uint32_t layout, uint64_t max_bytes) {
  char why[256];
  struct wal *w = wal_open(dir, layout, max_bytes, 0, why, sizeof why);
  assert_non_null(w);
  return w;
}

/* Writes records "r0".."r<n-1>" (data_s 100 + i) into a new segment. */
static void write_records(int n) {
  struct wal *w = wal_new(LAYOUT, 1u << 20);
  assert_int_equal(wal_start(w, 1000), 0);
  for (int i = 0; i < n; i++) {
    char rec[16];
    snprintf(rec, sizeof rec, "r%d", i);
    assert_int_equal(wal_append(w, WAL_AGENT + i % 2, rec, strlen(rec), 100 + i), 0);
  }
  wal_close(w);
}

static struct seen replay(struct wal_stats *st) {
  struct seen s = {0};
  struct wal *w = wal_new(LAYOUT, 1u << 20);
  wal_replay(w, on_record, &s);
  wal_stats(w, st);
  wal_close(w);
  return s;
}

static void segment_path(int seq, char *out, size_t len) {
  snprintf(out, len, "%s/wal-%016x.log", dir, seq);
}

static void test_roundtrip(void **state) {
  (void)state;
  write_records(10);
  struct wal_stats st;
  struct seen s = replay(&st);
  assert_int_equal(s.n, 10);
  assert_int_equal(st.replayed, 10);
  assert_int_equal(st.torn, 0);
  for (int i = 0; i < 10; i++) {
    char want[16];
    snprintf(want, sizeof want, "r%d", i);
    assert_string_equal(s.data[i], want);
    assert_int_equal(s.type[i], WAL_AGENT + i % 2);
  }
}

static void test_torn_last_record(void **state) {
  (void)state;
  write_records(5);
  char path[128];
  struct stat sb;
  segment_path(1, path, sizeof path);
  assert_int_equal(stat(path, &sb), 0);
  /* Cut the last record (24-byte header + "r4") in its payload. */
  assert_int_equal(truncate(path, sb.st_size - 1), 0);
  struct wal_stats st;
  struct seen s = replay(&st);
  assert_int_equal(s.n, 4);
  assert_int_equal(st.torn, 1);
  /* Cut in its header too. */
  assert_int_equal(truncate(path, sb.st_size - 2 - 10), 0);
  s = replay(&st);
  assert_int_equal(s.n, 4);
  assert_int_equal(st.torn, 1);
}

static void test_crc_mismatch(void **state) {
  (void)state;
  write_records(5);
  char path[128];
  segment_path(1, path, sizeof path);
  /* Flip the payload byte of the third record: 16 + 2 × 26 + 24. */
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  fseek(f, 16 + 2 * 26 + 24 + 1, SEEK_SET);
  fputc('X', f);
  fclose(f);
  struct wal_stats st;
  struct seen s = replay(&st);
  assert_int_equal(s.n, 2);
  assert_int_equal(st.torn, 1);
}

static void test_replay_idempotent(void **state) {
  (void)state;
  write_records(6);
  char path[128];
  struct stat a, b;
  segment_path(1, path, sizeof path);
  assert_int_equal(stat(path, &a), 0);
  struct wal_stats st;
  struct seen s1 = replay(&st), s2 = replay(&st);
  assert_int_equal(stat(path, &b), 0);
  assert_int_equal(a.st_size, b.st_size);
  assert_int_equal(s1.n, 6);
  assert_memory_equal(&s1, &s2, sizeof s1);
}

static void test_other_layout_skipped(void **state) {
  (void)state;
  write_records(3);
  struct seen s = {0};
  struct wal_stats st;
  struct wal *w = wal_new(LAYOUT + 1, 1u << 20);
  wal_replay(w, on_record, &s);
  wal_stats(w, &st);
  wal_close(w);
  assert_int_equal(s.n, 0);
  assert_int_equal(st.torn, 1);
}

/* A closed segment goes once done_s is past all its data; the current one
 * stays, and a replayed segment is deleted by the same rule. */
static void test_trim(void **state) {
  (void)state;
  write_records(4); /* segment 1, data up to 103 */
  struct seen s = {0};
  struct wal *w = wal_new(LAYOUT, 1u << 20);
  wal_replay(w, on_record, &s);
  assert_int_equal(wal_start(w, 2000), 0); /* segment 2 */
  assert_int_equal(wal_append(w, WAL_METER, "m", 1, 500), 0);
  char p1[128], p2[128];
  segment_path(1, p1, sizeof p1);
  segment_path(2, p2, sizeof p2);
  assert_int_equal(wal_tick(w, 2001, 102, 5), 0);
  assert_int_equal(access(p1, F_OK), 0); /* 103 > 102: still needed */
  assert_int_equal(wal_tick(w, 2002, 103, 5), 0);
  assert_int_not_equal(access(p1, F_OK), 0);
  assert_int_equal(wal_tick(w, 2003, 10000, 5), 0);
  assert_int_equal(access(p2, F_OK), 0);          /* current */
  assert_int_equal(wal_tick(w, 2005, 499, 5), 1); /* rotated: 3 is current */
  assert_int_equal(access(p2, F_OK), 0);          /* 500 > 499 */
  assert_int_equal(wal_tick(w, 2006, 10000, 5), 0);
  assert_int_not_equal(access(p2, F_OK), 0);
  wal_close(w);
}

static void test_size_bound(void **state) {
  (void)state;
  struct wal *w = wal_new(LAYOUT, 16 + 3 * (24 + 10));
  char rec[10] = "123456789";
  assert_int_equal(wal_start(w, 1), 0);
  for (int i = 0; i < 3; i++)
    assert_int_equal(wal_append(w, WAL_AGENT, rec, 10, i), 0);
  assert_int_equal(wal_append(w, WAL_AGENT, rec, 10, 4), -1);
  struct wal_stats st;
  wal_stats(w, &st);
  assert_int_equal(st.appended, 3);
  assert_int_equal(st.dropped, 1);
  assert_int_equal(st.bytes, 16 + 3 * 34);
  wal_close(w);
}

/* With fsync on, syncs and rotations go through the sync thread; every
 * record of every segment is there after close. */
static void test_fsync_thread(void **state) {
  (void)state;
  char why[256];
  struct wal *w = wal_open(dir, LAYOUT, 1u << 20, 1, why, sizeof why);
  assert_non_null(w);
  assert_int_equal(wal_start(w, 100), 0);
  for (int i = 0; i < 30; i++) {
    assert_int_equal(wal_append(w, WAL_AGENT, "abc", 3, 1000 + i), 0);
    wal_tick(w, 100 + i, 0, 3); /* a new segment every 3 s, none deleted */
  }
  wal_close(w);
  struct wal_stats st;
  struct seen s = replay(&st);
  assert_int_equal(s.n, 30);
  assert_int_equal(st.torn, 0);
}

/* One ergd per log: another process opening the same directory is
 * refused while this one holds it, and gets it once it is closed. */
static int other_process_opens(void) {
  pid_t pid = fork();
  if (pid == 0) {
    char why[256];
    struct wal *w = wal_open(dir, LAYOUT, 1u << 20, 0, why, sizeof why);
    _exit(w ? 1 : strstr(why, "in use by another ergd") ? 0 : 2);
  }
  int st = -1;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_locked(void **state) {
  (void)state;
  struct wal *w = wal_new(LAYOUT, 1u << 20);
  assert_int_equal(other_process_opens(), 0);
  wal_close(w);
  assert_int_equal(other_process_opens(), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_torn_last_record, setup, teardown),
      cmocka_unit_test_setup_teardown(test_crc_mismatch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_replay_idempotent, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_layout_skipped, setup, teardown),
      cmocka_unit_test_setup_teardown(test_trim, setup, teardown),
      cmocka_unit_test_setup_teardown(test_size_bound, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fsync_thread, setup, teardown),
      cmocka_unit_test_setup_teardown(test_locked, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

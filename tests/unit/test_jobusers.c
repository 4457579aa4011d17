// SPDX-License-Identifier: GPL-3.0-or-later
/* Whose each job is (collector/jobusers.c): the first uid other than root,
 * bounded, and read back after a restart; its first command (commands.tsv),
 * hostile names cleaned. */
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

static void test_root_then_user(void **state) {
  (void)state;
  struct job_users *ju = NULL;
  /* slurmstepd (root) first, then the job's user; later root processes and
   * other uids do not change it. */
  assert_int_equal(job_users_note(&ju, "4242xx", 4, 0, 1), 1);
  assert_int_equal(job_users_note(&ju, "4242", 4, 0, 2), 0);
  assert_int_equal(job_users_note(&ju, "4242", 4, 1000, 3), 1);
  assert_int_equal(job_users_note(&ju, "4242", 4, 0, 4), 0);
  assert_int_equal(job_users_note(&ju, "4242", 4, 1001, 5), 0);
  assert_int_equal(job_users_note(&ju, "17", 2, 65534, 6), 1);
  assert_int_equal(job_users_note(&ju, "", 0, 5, 7), 0); /* no job */
  char *tsv = job_users_tsv(ju);
  assert_string_equal(tsv, "4242\t1000\n17\t65534\n");
  free(tsv);
  job_users_free(ju);
}

static void test_bounded_and_reloaded(void **state) {
  (void)state;
  struct job_users *ju = NULL;
  char job[32];
  for (int i = 0; i < JOB_USERS_MAX + 10; i++) {
    int n = snprintf(job, sizeof job, "j%d", i);
    assert_int_equal(job_users_note(&ju, job, (size_t)n, 1000 + (uint32_t)i, i), 1);
  }
  char *tsv = job_users_tsv(ju);
  /* the oldest ten made room for the newest */
  assert_null(strstr(tsv, "j9\t"));
  assert_non_null(strstr(tsv, "j10\t1010\n"));
  assert_non_null(strstr(tsv, "j265\t1265\n"));
  char path[] = "/tmp/erg-test-jobusers-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, tsv, strlen(tsv)), (ssize_t)strlen(tsv));
  /* junk lines are skipped, not read as jobs */
  const char *junk = "nojobtab\n\t5\nbad\tuid\nbig\t99999999999\n";
  assert_int_equal(write(fd, junk, strlen(junk)), (ssize_t)strlen(junk));
  close(fd);
  struct job_users *back = NULL;
  assert_int_equal(job_users_load(&back, path), 0);
  char *tsv2 = job_users_tsv(back);
  assert_string_equal(tsv2, tsv);
  unlink(path);
  free(tsv);
  free(tsv2);
  job_users_free(ju);
  job_users_free(back);
}

static void test_first_command(void **state) {
  (void)state;
  struct job_users *ju = NULL;
  /* Not noted before job_users_note: nothing to name. */
  assert_int_equal(job_users_command(ju, "4242", 4, 0, "x", 1), 0);
  assert_null(job_commands_tsv(ju));
  assert_int_equal(job_users_note(&ju, "4242", 4, 0, 1), 1);
  assert_int_equal(job_users_command(ju, "4242", 4, 0, "slurmstepd", 10), 1);
  assert_int_equal(job_users_command(ju, "4242", 4, 0, "sleep", 5), 0);
  /* The user's first process replaces root's slurmstepd, and stays. */
  assert_int_equal(job_users_note(&ju, "4242", 4, 1000, 2), 1);
  assert_int_equal(job_users_command(ju, "4242", 4, 1000, "job.sh", 6), 1);
  assert_int_equal(job_users_command(ju, "4242", 4, 1000, "python3", 7), 0);
  assert_int_equal(job_users_command(ju, "4242", 4, 0, "slurmstepd", 10), 0);
  /* Hostile names: control bytes (a tab or newline would forge a line),
   * invalid UTF-8, a cut inside a character, all cleaned; "../x" and
   * "<script>" are only text (never a path, escaped by each output). */
  assert_int_equal(job_users_note(&ju, "17", 2, 5, 3), 1);
  assert_int_equal(job_users_command(ju, "17", 2, 5, "../x\t<script>\n\xff\x01", 16), 1);
  assert_int_equal(job_users_note(&ju, "18", 2, 5, 3), 1);
  char longname[64];
  memset(longname, 'a', sizeof longname);
  memcpy(longname + JOB_COMMAND_MAX - 2, "\xc3\xa9", 2); /* é across the cut */
  assert_int_equal(job_users_command(ju, "18", 2, 5, longname, sizeof longname), 1);
  assert_int_equal(job_users_note(&ju, "19", 2, 5, 3), 1); /* no command */
  assert_int_equal(job_users_command(ju, "19", 2, 5, "", 0), 0);
  char *tsv = job_commands_tsv(ju);
  char want[256];
  snprintf(want, sizeof want, "4242\tjob.sh\n17\t../x?<script>???\n18\t%.*s?\n",
           JOB_COMMAND_MAX - 2, longname);
  assert_string_equal(tsv, want);
  /* Read back beside users.tsv; a hostile commands.tsv (control bytes,
   * invalid UTF-8, jobs users.tsv lacks, a line too long) is cleaned or
   * skipped; users.tsv itself keeps its two columns. */
  char dir[] = "/tmp/erg-test-jobcmd-XXXXXX", path[128];
  assert_non_null(mkdtemp(dir));
  char *users = job_users_tsv(ju);
  assert_string_equal(users, "4242\t1000\n17\t5\n18\t5\n19\t5\n");
  snprintf(path, sizeof path, "%s/users.tsv", dir);
  assert_int_equal(erg_write_file_atomic(path, users, strlen(users)), 0);
  char cmds[512];
  snprintf(cmds, sizeof cmds, "%s19\tb\x7f\xc0\xaf\r\nnojob\tx\n\tx\n18\t%s\n", tsv,
           "a-name-longer-than-the-thirty-two-bytes-kept");
  snprintf(path, sizeof path, "%s/commands.tsv", dir);
  assert_int_equal(erg_write_file_atomic(path, cmds, strlen(cmds)), 0);
  struct job_users *back = NULL;
  snprintf(path, sizeof path, "%s/users.tsv", dir);
  assert_int_equal(job_users_load(&back, path), 0);
  char *tsv2 = job_commands_tsv(back);
  snprintf(want + strlen(want), sizeof want - strlen(want), "19\tb???\n");
  assert_string_equal(tsv2, want);
  unlink(path);
  snprintf(path, sizeof path, "%s/commands.tsv", dir);
  unlink(path);
  rmdir(dir);
  free(users);
  free(tsv);
  free(tsv2);
  job_users_free(ju);
  job_users_free(back);
}

/* The same notes into a plain list, as jobusers.c kept them before its
 * index: the model the indexed table must match, evictions included. */
struct model {
  char job[JOB_USERS_MAX][65];
  uint32_t uid[JOB_USERS_MAX];
  int64_t seen[JOB_USERS_MAX];
  size_t n;
};

static int model_note(struct model *m, const char *job, uint32_t uid, int64_t now) {
  size_t i = 0, oldest = 0;
  for (; i < m->n && strcmp(m->job[i], job); i++)
    if (m->seen[i] < m->seen[oldest])
      oldest = i;
  if (i < m->n) {
    m->seen[i] = now;
    if (m->uid[i] != 0 || uid == 0)
      return 0;
    m->uid[i] = uid;
    return 1;
  }
  i = m->n < JOB_USERS_MAX ? m->n++ : oldest;
  strcpy(m->job[i], job);
  m->uid[i] = uid;
  m->seen[i] = now;
  return 1;
}

static char *model_tsv(const struct model *m) {
  char *s = calloc(m->n + 1, 80), *o = s;
  for (size_t i = 0; i < m->n; i++)
    o += sprintf(o, "%s\t%u\n", m->job[i], m->uid[i]);
  return s;
}

/* Many more jobs than fit, seen in random order at times that repeat and
 * go back (the first of equals goes): every note's result and the file's
 * text as the model's, so evictions leave the index whole. */
static void test_eviction_matches_model(void **state) {
  (void)state;
  struct job_users *ju = NULL;
  struct model *m = calloc(1, sizeof *m);
  unsigned seed = 12345;
  char job[32];
  for (int step = 0; step < 200000; step++) {
    seed = seed * 1103515245u + 12345u;
    unsigned r = seed >> 8;
    int n = snprintf(job, sizeof job, "%u", r % 700); /* 700 jobs for 256 places */
    uint32_t uid = (r >> 12) % 4 == 0 ? 0 : 1000 + (r >> 14) % 3;
    int64_t now = step / 4 - (int64_t)((r >> 16) % 3); /* equal and earlier times too */
    int want = model_note(m, job, uid, now);
    assert_int_equal(job_users_note(&ju, job, (size_t)n, uid, now), want);
    if (step % 997 == 0 || step == 199999) {
      char *a = job_users_tsv(ju), *b = model_tsv(m);
      assert_string_equal(a, b);
      free(a);
      free(b);
    }
  }
  free(m);
  job_users_free(ju);
}

static void test_launcher_child(void **state) {
  (void)state;
  struct job_users *ju = NULL;
  /* The launcher's child, as the user before its exec, is not the job's
   * command; seen before the launcher itself (one cell, keys in any
   * order), it is taken back when the launcher shows up. */
  assert_int_equal(job_users_note(&ju, "4243", 4, 0, 1), 1);
  assert_int_equal(job_users_command(ju, "4243", 4, 0, "slurmstepd", 10), 1);
  assert_int_equal(job_users_note(&ju, "4243", 4, 1000, 2), 1);
  assert_int_equal(job_users_command(ju, "4243", 4, 1000, "slurmstepd", 10), 0);
  assert_int_equal(job_users_command(ju, "4243", 4, 1000, "job.sh", 6), 1);
  assert_int_equal(job_users_note(&ju, "4244", 4, 1000, 2), 1);
  assert_int_equal(job_users_command(ju, "4244", 4, 1000, "slurmstepd", 10), 1);
  assert_int_equal(job_users_note(&ju, "4244", 4, 0, 2), 0);
  assert_int_equal(job_users_command(ju, "4244", 4, 0, "slurmstepd", 10), 1);
  assert_int_equal(job_users_command(ju, "4244", 4, 1000, "slurmstepd", 10), 0);
  assert_int_equal(job_users_command(ju, "4244", 4, 1000, "python3", 7), 1);
  char *tsv = job_commands_tsv(ju);
  assert_string_equal(tsv, "4243\tjob.sh\n4244\tpython3\n");
  free(tsv);
  job_users_free(ju);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_root_then_user), cmocka_unit_test(test_bounded_and_reloaded),
      cmocka_unit_test(test_first_command), cmocka_unit_test(test_launcher_child),
      cmocka_unit_test(test_eviction_matches_model)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* erg jobs' Slurm side without a cluster: AdminComment merging, and the
 * parsing of sacct's output for cases the live test (slurm.jobs, a real
 * Slurm) does not produce: a '|' in a job name, "CANCELLED by UID", a
 * running job (End "Unknown"), a job sacct does not return, sacct failing
 * or missing. sacct here is a shell script printing recorded lines in
 * sacct's format (the field list erg asks for); the real sacct is in
 * slurm.jobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "jobs_int.h"

static void test_comment_merge(void **state) {
  (void)state;
  char out[256];
  jobs_comment_merge("", "erg_energy_joules=1.0", out, sizeof out);
  assert_string_equal(out, "erg_energy_joules=1.0");
  jobs_comment_merge("site=a;erg_energy_joules=9;erg_mean_watts=3;b", "erg_energy_joules=2.0", out,
                     sizeof out);
  assert_string_equal(out, "site=a;b;erg_energy_joules=2.0");
  jobs_comment_merge(";;x;", "erg_energy_joules=2.0", out, sizeof out);
  assert_string_equal(out, "x;erg_energy_joules=2.0");
  assert_true(jobs_comment_has_erg("erg_energy_joules=1"));
  assert_true(jobs_comment_has_erg("a=b;erg_energy_joules=1"));
  assert_false(jobs_comment_has_erg("a=b;xerg_energy_joules=1"));
  assert_false(jobs_comment_has_erg(""));
}

static char fake_dir[] = "/tmp/erg-test-sacct.XXXXXX";

/* A sacct that prints body (printf format: \037 is the separator). */
static const char *fake_sacct(const char *name, const char *body, int rc) {
  static char path[128];
  snprintf(path, sizeof path, "%s/%s", fake_dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "#!/bin/sh\nprintf '%s'\n%sexit %d\n", body,
          rc ? "echo 'sacct: error: slurmdbd down' >&2\n" : "", rc);
  fclose(f);
  chmod(path, 0755);
  return path;
}

static void test_sacct_parse(void **state) {
  (void)state;
  /* 101 and 102 with erg's first command as their name (jobs_store.c). */
  struct jobs_job jobs[4] = {
      {.id = "101", .name = "sh"}, {.id = "102", .name = "erg-cmd"}, {.id = "103"}, {.id = "104"}};
  struct jobs_slurm s = {.sacctmgr = "false"};
  s.sacct = fake_sacct("sacct",
                       "101\\037alice\\037phys\\037batch\\037a|b job\\037COMPLETED\\037n[1-2]"
                       "\\0372026-11-25T10:00:00\\0372026-11-25T10:10:00\\037site=1\\n"
                       "102\\037bob\\037chem\\037gpu\\037\\037CANCELLED by 1001\\037n3"
                       "\\0372026-11-25T10:00:00\\037Unknown\\037\\n"
                       "103\\037short line\\n",
                       0);
  char why[256];
  assert_int_equal(jobs_slurm_fill(&s, jobs, 4, why, sizeof why), 0);
  assert_true(jobs[0].slurm);
  assert_string_equal(jobs[0].user, "alice");
  assert_string_equal(jobs[0].name, "a|b job"); /* Slurm's, not erg's "sh" */
  assert_string_equal(jobs[0].nodes, "n[1-2]");
  assert_string_equal(jobs[0].admin_comment, "site=1");
  assert_int_equal(jobs[0].end_s - jobs[0].start_s, 600);
  assert_string_equal(jobs[1].state, "CANCELLED");
  assert_string_equal(jobs[1].name, "erg-cmd"); /* Slurm's name wins only when it has one */
  assert_true(jobs[1].start_s > 0);
  assert_int_equal(jobs[1].end_s, 0); /* running: no end yet */
  assert_false(jobs[2].slurm);        /* malformed line: ignored */
  assert_false(jobs[3].slurm);        /* not returned by sacct */
  assert_null(jobs_find(jobs, 4, "105"));
  assert_ptr_equal(jobs_find(jobs, 4, "103"), &jobs[2]);

  s.sacct = fake_sacct("sacct-fail", "", 1);
  assert_int_equal(jobs_slurm_fill(&s, jobs, 4, why, sizeof why), -1);
  assert_non_null(strstr(why, "slurmdbd down"));
  s.sacct = "/nonexistent/sacct";
  assert_int_equal(jobs_slurm_fill(&s, jobs, 4, why, sizeof why), -1);
  assert_non_null(strstr(why, "cannot run"));
}

static int setup(void **state) {
  (void)state;
  setenv("TZ", "UTC", 1);
  return mkdtemp(fake_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", fake_dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_comment_merge),
      cmocka_unit_test(test_sacct_parse),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}

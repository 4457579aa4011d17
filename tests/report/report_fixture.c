// SPDX-License-Identifier: GPL-3.0-or-later
/* Builds a store for the report tests: two 2-hour windows at step 5 s, one
 * ending 3 days before NOW (only the 1-min RRA still holds it) and one
 * ending 2 min before NOW. Node "n1": constant 100 W (idle 40, dynamic 60)
 * with command keys of 10, 20 and 30 W, two of them with hostile names.
 * Node "node two": 150 + 50 sin(2 pi t / 600) W, unknown for the first
 * minute of the recent window, one key "burn" = measured - 100. Jobs:
 * "1234" runs on n1 (50 W) and node two (30 W), a hostile-named one on
 * node two (20 W); cluster/job holds their sums as ergd writes them.
 * Users: n1 "alice" 60 W (a key from before user names), uid keys "1000"
 * 4 W, "1001" 3 W, "1002" 2 W with names.tsv naming 1000 "bob" and 1001 a
 * hostile name (1002 has none: uid fallback); node two "[system]" =
 * measured - 100.
 * Job "4242" (issue 25) on n1 as root, in the recent window only: it
 * starts mid-minute (its first cell ends at B_END - 2960, 40 s into a
 * minute), draws 20.5 + 2.5 sin(2 pi t / 300) W for 1500 s, then 0 W
 * until the window's end as ergd writes an ended job; the same in
 * cluster/job. n1's job/users.tsv says uid 0 ran it, names.tsv that 0 is
 * "root".
 * GPU archives (docs/gpu.md) on node two only: job 1234's GPU part, 12 W of
 * its 30 W there, the node's GPU part (gpu/node) 15 W, and the cluster-wide
 * GPU part of 1234 (cluster/gpu_job) 12 W of its 80 W; none on n1.
 * Job 1234's uncertainty (docs/model.md, "Uncertainty"): the data sources sd
 * 2 W (linear sd) and var 20,000 J²/s (as much as the sd²) of cluster/job's
 * archive; none for the other jobs (their archives have "watts" only, as
 * an older ergd's). Node two's dynamic power's (nodes/node two/dynamic_unc/
 * node.rrd, sd and var): 3 W, 10,000 J²/s; none on n1. Node two's job
 * "[other]" (5 W) has the sources sd and var, never a value, as ergd writes
 * a key that is no job; its job 1234 sd 1 W, var 5,000 J²/s there. n1's
 * 1234 has them as an ergd of git 7c05ca9 wrote them, separate archives
 * nodes/n1/job_sd/1234.rrd (2 W) and job_var/ (20,000 J²/s).
 * Node two's command "burn" has them too (every kind's keys, issue 39): sd
 * 4 W, var 8,000 J²/s; n1's commands none (an older ergd's "watts" only).
 * usage: report_fixture DIR NOW; prints "A_END B_END". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"
#include "erg_store.h"

#define STEP 5
#define SPAN 7200
#define HOSTILE_JOB "<b>j,\"x\"</b> ../1"

static const struct {
  const char *key;
  double watts;
} n1_keys[] = {{"sleep", 10}, {"a,b \"q\"", 20}, {"<script>alert(1)</script>", 30}};

static double two_watts(int64_t t) { return 150 + 50 * sin(2 * M_PI * (double)(t % 600) / 600); }

#define JOB_FIRST_BEFORE_END 2960 /* B_END - this: the end of job 4242's first cell */
#define JOB_SECONDS 1500

/* Job 4242's watts in the cell ending at t (NAN: no archive yet). */
static double job_watts(int64_t t, int64_t end) {
  int64_t first = end - JOB_FIRST_BEFORE_END;
  if (t < first)
    return NAN;
  return t < first + JOB_SECONDS ? 20.5 + 2.5 * sin(2 * M_PI * (double)(t % 300) / 300) : 0;
}

static const char *const unc_ds[3] = {"watts", "sd", "var"};

static int fixture_window(struct erg_store *s, int64_t end, int gap) {
  char why[512];
  for (int64_t t = end - SPAN + STEP; t <= end; t += STEP) {
    double jw = gap ? job_watts(t, end) : NAN;
    if (!isnan(jw) && (erg_store_key_update(s, "n1", "job", "4242", t, jw, why, sizeof why) ||
                       erg_store_key_update(s, NULL, "job", "4242", t, jw, why, sizeof why))) {
      fprintf(stderr, "fixture: %s\n", why);
      return -1;
    }
    struct erg_store_node_cell a = {t, 100, 100, 40, 60, 0, false};
    double w = gap && t <= end - SPAN + 60 ? NAN : two_watts(t);
    struct erg_store_node_cell b = {t, w, w, 100, w - 100, 0, false};
    int rc = erg_store_node_update(s, "n1", &a, why, sizeof why) ||
             erg_store_node_update(s, "node two", &b, why, sizeof why) ||
             erg_store_key_update_ds(s, "node two", "command", "burn", t, unc_ds,
                                     (double[]){w - 100, 4, 8000}, 3, why, sizeof why) ||
             erg_store_key_update(s, "n1", "job", "1234", t, 50, why, sizeof why) ||
             erg_store_key_update(s, "n1", "job_sd", "1234", t, 2, why, sizeof why) ||
             erg_store_key_update(s, "n1", "job_var", "1234", t, 20000, why, sizeof why) ||
             erg_store_key_update_ds(s, "node two", "job", "1234", t, unc_ds,
                                     (double[]){30, 1, 5000}, 3, why, sizeof why) ||
             erg_store_key_update(s, "node two", "gpu_job", "1234", t, 12, why, sizeof why) ||
             erg_store_key_update(s, "node two", "gpu", "node", t, 15, why, sizeof why) ||
             erg_store_key_update(s, NULL, "gpu_job", "1234", t, 12, why, sizeof why) ||
             erg_store_key_update_ds(s, "node two", "dynamic_unc", "node", t, unc_ds + 1,
                                     (double[]){3, 10000}, 2, why, sizeof why) ||
             erg_store_key_update(s, "node two", "job", HOSTILE_JOB, t, 20, why, sizeof why) ||
             erg_store_key_update_ds(s, "node two", "job", "[other]", t, unc_ds,
                                     (double[]){5, NAN, NAN}, 3, why, sizeof why) ||
             erg_store_key_update_ds(s, NULL, "job", "1234", t, unc_ds, (double[]){80, 2, 20000}, 3,
                                     why, sizeof why) ||
             erg_store_key_update(s, NULL, "job", HOSTILE_JOB, t, 20, why, sizeof why) ||
             erg_store_key_update(s, "n1", "user", "alice", t, 60, why, sizeof why) ||
             erg_store_key_update(s, "n1", "user", "1000", t, 4, why, sizeof why) ||
             erg_store_key_update(s, "n1", "user", "1001", t, 3, why, sizeof why) ||
             erg_store_key_update(s, "n1", "user", "1002", t, 2, why, sizeof why) ||
             erg_store_key_update(s, "node two", "user", "[system]", t, w - 100, why, sizeof why);
    for (size_t k = 0; rc == 0 && k < sizeof n1_keys / sizeof *n1_keys; k++)
      rc = erg_store_key_update(s, "n1", "command", n1_keys[k].key, t, n1_keys[k].watts, why,
                                sizeof why);
    if (rc) {
      fprintf(stderr, "fixture: %s\n", why);
      return -1;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 1;
  int64_t now = strtoll(argv[2], NULL, 10);
  int64_t a_end = now - 3 * 86400 - now % 3600, b_end = now - now % 60 - 120;
  struct erg_store *s;
  struct erg_store_options o = {.root = argv[1], .step_seconds = STEP};
  char why[512], path[1200], safe[ERG_NAME_MAX];
  if (erg_store_open(&s, &o, why, sizeof why)) {
    fprintf(stderr, "fixture: %s\n", why);
    return 1;
  }
  int rc = fixture_window(s, a_end, 0) || fixture_window(s, b_end, 1) ||
           erg_store_names_write(s, "n1", "user", "0\troot\n1000\tbob\n1001\t<b>ev\"il</b>,x\n",
                                 why, sizeof why) ||
           erg_store_job_users_write(s, "n1", "4242\t0\n", why, sizeof why) ||
           /* Its first command, hostile: markup, a path, a control byte
            * and invalid UTF-8 (erg jobs' JobName). */
           erg_store_job_commands_write(s, "n1", "4242\t<i>../x\x01\xff\n", why, sizeof why);
  erg_store_close(s);
  /* The original name of "node two", as the collector would keep it. */
  erg_name_sanitize("node two", 8, safe);
  snprintf(path, sizeof path, "%s/nodes/%s/name", argv[1], safe);
  rc = rc || erg_write_file_atomic(path, "node two\n", 9);
  printf("%lld %lld\n", (long long)a_end, (long long)b_end);
  return rc;
}

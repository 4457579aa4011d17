// SPDX-License-Identifier: GPL-3.0-or-later
/* erg jobs: per-job energy with Slurm's accounting fields, and --push of
 * erg's energy into the jobs' AdminComment, again every few seconds while
 * --wait lasts (the jobs library does each pass); --detach for Slurm's
 * hooks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_int.h"
#include "erg_cli.h"
#include "erg_web.h"

#define JOBS_WAIT_POLL_S 5

struct jobs_cli {
  struct erg_jobs_options o;
  struct cli_energy e;
  int push, detach;
  double wait_s;
  int64_t now;
  int last; /* the last pass of --push: waiting jobs are said */
};

static int jobs_usage(const char *msg, const char *arg) {
  if (msg)
    fprintf(stderr, "erg jobs: %s%s%s%s\n", msg, arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
  fprintf(stderr,
          "usage: erg jobs (--data-dir DIR | --config ERGD_CONF) [--from T] [--to T]\n"
          "                [--job ID[,ID...]]... [--format table|parsable2|csv|json]\n"
          "                [--parsable2] [--co2-g-per-kwh Y | --carbon-csv FILE]\n"
          "                [--pue X | --pue-csv FILE] [--out FILE]\n"
          "                [--sacct PATH] [--sacctmgr PATH]\n"
          "       erg jobs ... --push [--force] [--settle-seconds S] [--wait S] [--detach]\n"
          "T: 2026-11-01, 2026-11-01T12:00 (UTC), unix seconds, -7d, -12h, -30m, now\n");
  return 1;
}

/* --job 12,13 --job 14: ids, decimal only. */
static int jobs_add_ids(struct erg_jobs_options *o, char *arg) {
  for (char *save = NULL, *id = strtok_r(arg, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
    if (!erg_jobs_id_ok(id))
      return jobs_usage("bad job id", id);
    if (o->nselect >= ERG_JOBS_MAX_SELECT)
      return jobs_usage("too many --job", NULL);
    o->select[o->nselect++] = id;
  }
  return 0;
}

static int jobs_config(void *ctx, const char *path) {
  struct jobs_cli *c = ctx;
  return cli_energy_config(&c->e, path) != 0;
}

static int jobs_opt(void *ctx, int c, char *arg, const char *text) {
  struct jobs_cli *jc = ctx;
  struct erg_jobs_options *o = &jc->o;
  switch (c) {
    case 'd':
      jc->e.data_dir = arg;
      return 0; /* one store: a later one replaces it */
    case 'j':
      return jobs_add_ids(o, arg);
    case 'p':
      o->format = "parsable2";
      return 0;
    case 'S':
      o->sacct = arg;
      return 0;
    case 'M':
      o->sacctmgr = arg;
      return 0;
    case 'P':
      jc->push = 1;
      return 0;
    case 'x':
      o->force = 1;
      return 0;
    case 'D':
      jc->detach = 1;
      return 0;
    case 'F':
      o->format = arg;
      return strcmp(arg, "table") && strcmp(arg, "parsable2") && strcmp(arg, "csv") &&
                     strcmp(arg, "json")
                 ? jobs_usage("unknown --format", arg)
                 : 0;
    case 's':
      return cli_number(arg, &o->settle_s) ? jobs_usage("bad --settle-seconds", arg) : 0;
    case 'w':
      return cli_number(arg, &jc->wait_s) ? jobs_usage("bad --wait", arg) : 0;
    default:
      return cli_energy_opt(&jc->e, c, arg, text, jc->now);
  }
}

static int jobs_parse(int argc, char **argv, struct jobs_cli *c) {
  static const struct option longs[] = {CLI_ENERGY_LONGS,
                                        {"job", required_argument, 0, 'j'},
                                        {"parsable2", no_argument, 0, 'p'},
                                        {"sacct", required_argument, 0, 'S'},
                                        {"sacctmgr", required_argument, 0, 'M'},
                                        {"push", no_argument, 0, 'P'},
                                        {"force", no_argument, 0, 'x'},
                                        {"detach", no_argument, 0, 'D'},
                                        {"settle-seconds", required_argument, 0, 's'},
                                        {"wait", required_argument, 0, 'w'},
                                        {0, 0, 0, 0}};
  int operand, rc = cli_parse_config_first(argc, argv, longs, jobs_config, jobs_opt, c, &operand);
  if (rc == 0)
    rc = cli_energy_check(&c->e, argc, argv, operand);
  return rc ? rc : cli_energy_factors(&c->e);
}

/* The list with Slurm's fields; a sacct failure is a note, not an error:
 * erg's numbers are still worth showing. Returns 1 then (--push cannot do
 * without sacct), -1 when the archives cannot be read. */
static int jobs_load(const struct jobs_cli *c, struct erg_jobs **jobs, int quiet) {
  char why[2048];
  int rc = erg_jobs_load(&c->o, jobs, why, sizeof why);
  if (rc < 0) {
    fprintf(stderr, "erg jobs: %s\n", why);
    return -1;
  }
  if (rc > 0) {
    if (!quiet)
      fprintf(stderr, "erg jobs: note: no Slurm fields (%s); erg's own fields only\n", why);
    return 1;
  }
  size_t n = erg_jobs_count(*jobs), unknown = erg_jobs_unknown(*jobs);
  if (unknown && !quiet)
    fprintf(stderr,
            "erg jobs: note: %zu of %zu jobs unknown to sacct (another cluster, or "
            "purged); erg's own fields for them\n",
            unknown, n);
  return 0;
}

/* Each job's outcome is said once: waiting ones on the last pass, jobs
 * pushed before only when asked for by id. */
static void jobs_said(void *user, const char *job, enum erg_jobs_event e, const char *text) {
  const struct jobs_cli *c = user;
  switch (e) {
    case ERG_JOBS_PUSHED:
      printf("job %s: AdminComment %s\n", job, text);
      break;
    case ERG_JOBS_WAITING:
      if (c->last)
        fprintf(stderr, "erg jobs: job %s: not pushed: %s\n", job, text);
      break;
    case ERG_JOBS_SKIPPED:
      if (c->o.nselect || strncmp(text, "already", 7))
        fprintf(stderr, "erg jobs: job %s: not pushed: %s\n", job, text);
      break;
    case ERG_JOBS_NOTE:
    case ERG_JOBS_FAILED:
      fprintf(stderr, "erg jobs: job %s: %s\n", job, text);
      break;
  }
}

/* --push, with --wait: again every few seconds while a job waits. */
static int jobs_push(struct jobs_cli *c) {
  int64_t deadline = (int64_t)time(NULL) + (int64_t)c->wait_s;
  for (int pass = 0;; pass++) {
    struct erg_jobs *jobs;
    int64_t now = (int64_t)time(NULL);
    c->last = now + JOBS_WAIT_POLL_S > deadline;
    /* The period follows the clock: data written since the last pass. */
    c->o.report.to_s = c->o.report.to_s > now ? c->o.report.to_s : now;
    int loaded = jobs_load(c, &jobs, pass > 0);
    if (loaded < 0)
      return 2;
    if (loaded > 0 && !c->last) {
      erg_jobs_free(jobs); /* sacct away: try again while --wait lasts */
      sleep(JOBS_WAIT_POLL_S);
      continue;
    }
    if (loaded > 0) {
      fprintf(stderr, "erg jobs: nothing pushed: sacct is needed for the jobs' ends\n");
      erg_jobs_free(jobs);
      return 2;
    }
    int rc = erg_jobs_push_pass(&c->o, jobs, (int64_t)time(NULL), jobs_said, c);
    fflush(stdout);
    erg_jobs_free(jobs);
    if (rc <= 0 || c->last)
      return rc < 0 ? 2 : 0;
    sleep(JOBS_WAIT_POLL_S);
  }
}

/* --detach: the work goes on in a child of its own session; the parent
 * returns once the child is in it. A hook (EpilogSlurmctld) may have its
 * process group killed as soon as it returns: a child still in that group,
 * or a `setsid CMD &` that has not run setsid() yet, would die with it. */
static int jobs_detach(void) {
  int fds[2];
  char c = 0;
  if (pipe(fds) != 0)
    return -1;
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid > 0) {
    close(fds[1]);
    ssize_t r = read(fds[0], &c, 1);
    _exit(r == 1 ? 0 : 2);
  }
  close(fds[0]);
  if (setsid() < 0 || write(fds[1], &c, 1) != 1)
    _exit(2);
  close(fds[1]);
  return 0;
}

int erg_jobs_cli(int argc, char **argv) {
  struct jobs_cli c = {.now = (int64_t)time(NULL)};
  erg_jobs_options_init(&c.o, c.now);
  c.e = (struct cli_energy){.who = "jobs", .r = &c.o.report, .usage = jobs_usage};
  int rc = jobs_parse(argc, argv, &c);
  if (rc != 0)
    return rc < 0 ? 0 : rc;
  if (c.detach && jobs_detach() != 0) {
    fprintf(stderr, "erg jobs: --detach: %s\n", strerror(errno));
    return 2;
  }
  if (c.push) {
    rc = jobs_push(&c);
    cli_energy_free(&c.e);
    return rc;
  }
  struct erg_jobs *jobs;
  char why[512], *doc = NULL;
  size_t len = 0;
  if (jobs_load(&c, &jobs, 0) < 0)
    return 2;
  rc = erg_jobs_render(&c.o, jobs, &doc, &len, why, sizeof why) != 0 ||
       cli_energy_write(&c.e, doc, len, "list", why, sizeof why) != 0;
  if (rc != 0)
    fprintf(stderr, "erg jobs: %s\n", why);
  free(doc);
  erg_jobs_free(jobs);
  cli_energy_free(&c.e);
  return rc ? 2 : 0;
}

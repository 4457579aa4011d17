// SPDX-License-Identifier: GPL-3.0-or-later
/* erg jobs' side of Slurm: job metadata from sacct, erg's energy into the
 * job's AdminComment through sacctmgr (which, unlike scontrol, can change
 * a job that has ended: AdminComment is one of the fields Slurm's
 * database lets an administrator modify after completion). Both run as
 * child processes without a shell; nothing from a job name reaches a
 * command line. */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "erg_common.h"
#include "jobs_int.h"

extern char **environ;

/* sacct's field separator: the ASCII unit separator, which no job name,
 * account or comment typed at a shell contains (a '|' may). */
#define JOBS_SEP "\x1f"
#define JOBS_OUT_MAX (16u << 20)

/* Runs argv (PATH lookup), collects its stdout into a malloc'd string and
 * the first line of its stderr into why. 0 only if it exited with 0. */
static int jobs_run(char *const argv[], char **out, char *why, size_t whylen) {
  int fds[2];
  FILE *err = tmpfile();
  *out = NULL;
  if (!err || pipe(fds) != 0) {
    snprintf(why, whylen, "%s: %s", argv[0], strerror(errno));
    if (err)
      fclose(err);
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, fileno(err), STDERR_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    snprintf(why, whylen, "cannot run %s: %s", argv[0], strerror(rc));
    close(fds[0]);
    fclose(err);
    return -1;
  }
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 4096 > cap && cap < JOBS_OUT_MAX) {
      char *m = realloc(*out, cap = cap ? 2 * cap : 8192);
      if (!m)
        break;
      *out = m;
    }
    ssize_t r = len + 4096 <= cap ? read(fds[0], *out + len, 4096) : 0;
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    len += (size_t)r;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (*out)
    (*out)[len] = '\0';
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && *out) {
    fclose(err);
    return 0;
  }
  char line[512] = "";
  rewind(err);
  if (!fgets(line, sizeof line, err))
    line[0] = '\0';
  line[strcspn(line, "\r\n")] = '\0';
  fclose(err);
  snprintf(why, whylen, "%s failed (%s%d)%s%s", argv[0], WIFEXITED(status) ? "exit " : "signal ",
           WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), line[0] ? ": " : "", line);
  free(*out);
  *out = NULL;
  return -1;
}

/* sacct prints times in the local time zone, "Unknown" or "None" when
 * there is none yet. */
static int64_t jobs_sacct_time(const char *s) {
  struct tm tm = {0};
  if (strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) == NULL)
    return 0;
  tm.tm_isdst = -1;
  time_t t = mktime(&tm);
  return t == (time_t)-1 ? 0 : (int64_t)t;
}

struct jobs_job *jobs_find(struct jobs_job *jobs, size_t n, const char *id) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(jobs[i].id, id))
      return &jobs[i];
  return NULL;
}

/* One line of JOBS_SACCT_FORMAT. Fields are split on the separator only,
 * so empty fields stay in place. */
#define JOBS_SACCT_FORMAT                                                                          \
  "JobIDRaw,User,Account,Partition,JobName,State,NodeList,Start,End,AdminComment"
enum { F_ID, F_USER, F_ACCOUNT, F_PART, F_NAME, F_STATE, F_NODES, F_START, F_END, F_ADMIN, F_N };

static void jobs_sacct_line(char *line, struct jobs_job *jobs, size_t n) {
  char *f[F_N];
  int k = 0;
  for (char *p = line; k < F_N; k++) {
    f[k] = p;
    char *sep = strstr(p, JOBS_SEP);
    if (!sep) {
      k++;
      break;
    }
    *sep = '\0';
    p = sep + 1;
  }
  struct jobs_job *j = k == F_N ? jobs_find(jobs, n, f[F_ID]) : NULL;
  if (!j)
    return;
  j->slurm = 1;
  /* erg's own user and nodes (jobs_erg_fields) stay; sacct adds what erg
   * cannot know, a user name where erg has only the uid, and its JobName. */
  if (!j->user[0] || strspn(j->user, "0123456789") == strlen(j->user))
    erg_strlcpy(j->user, f[F_USER], sizeof j->user);
  erg_strlcpy(j->account, f[F_ACCOUNT], sizeof j->account);
  erg_strlcpy(j->partition, f[F_PART], sizeof j->partition);
  if (f[F_NAME][0]) /* Slurm's name wins over erg's first command */
    erg_strlcpy(j->name, f[F_NAME], sizeof j->name);
  /* "CANCELLED by 0" -> "CANCELLED", as sacct's State column shows it. */
  f[F_STATE][strcspn(f[F_STATE], " ")] = '\0';
  erg_strlcpy(j->state, f[F_STATE], sizeof j->state);
  if (!j->nodes[0])
    erg_strlcpy(j->nodes, f[F_NODES], sizeof j->nodes);
  erg_strlcpy(j->admin_comment, f[F_ADMIN], sizeof j->admin_comment);
  j->start_s = jobs_sacct_time(f[F_START]);
  j->end_s = jobs_sacct_time(f[F_END]);
}

/* One sacct call for jobs[from..to). -X: the allocation line only. */
static int jobs_sacct_batch(const struct jobs_slurm *s, struct jobs_job *jobs, size_t n,
                            size_t from, size_t to, char *why, size_t whylen) {
  size_t idlen = (to - from) * (sizeof jobs->id + 1) + 1;
  char *ids = malloc(idlen), *out = NULL;
  if (!ids) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  ids[0] = '\0';
  for (size_t i = from; i < to; i++)
    strcat(strcat(ids, i > from ? "," : ""), jobs[i].id);
  char *argv[] = {(char *)s->sacct,  "-X", "-n", "-P", "--delimiter=" JOBS_SEP, "-j", ids, "-o",
                  JOBS_SACCT_FORMAT, NULL};
  int rc = jobs_run(argv, &out, why, whylen);
  for (char *l = out, *nl; rc == 0 && l && *l; l = nl ? nl + 1 : NULL) {
    nl = strchr(l, '\n');
    if (nl)
      *nl = '\0';
    jobs_sacct_line(l, jobs, n);
    if (!nl)
      break;
  }
  free(out);
  free(ids);
  return rc;
}

int jobs_slurm_fill(const struct jobs_slurm *s, struct jobs_job *jobs, size_t n, char *why,
                    size_t whylen) {
  for (size_t i = 0; i < n; i += JOBS_SACCT_BATCH) {
    size_t to = i + JOBS_SACCT_BATCH < n ? i + JOBS_SACCT_BATCH : n;
    if (jobs_sacct_batch(s, jobs, n, i, to, why, whylen) != 0)
      return -1;
  }
  return 0;
}

int jobs_comment_has_erg(const char *c) {
  return !strncmp(c, "erg_energy_joules=", 18) || strstr(c, ";erg_energy_joules=") != NULL;
}

/* Keeps the ';'-separated fields of old that are not erg's, then ours. */
void jobs_comment_merge(const char *old, const char *fields, char *out, size_t outlen) {
  size_t len = 0;
  out[0] = '\0';
  for (const char *p = old; *p;) {
    size_t n = strcspn(p, ";");
    if (n && strncmp(p, "erg_", 4) && len + n + 1 < outlen) {
      memcpy(out + len, p, n);
      len += n;
      out[len++] = ';';
      out[len] = '\0';
    }
    p += n + (p[n] == ';');
  }
  erg_strlcpy(out + len, fields, outlen - len);
}

int jobs_slurm_push(const struct jobs_slurm *s, const struct jobs_job *job, const char *fields,
                    char *why, size_t whylen) {
  char comment[1400], where[64], set[1420], *out = NULL;
  jobs_comment_merge(job->admin_comment, fields, comment, sizeof comment);
  snprintf(where, sizeof where, "jobid=%s", job->id);
  snprintf(set, sizeof set, "AdminComment=%s", comment);
  char *argv[] = {(char *)s->sacctmgr, "-i", "modify", "job", "where", where, "set", set, NULL};
  int rc = jobs_run(argv, &out, why, whylen);
  free(out);
  return rc;
}

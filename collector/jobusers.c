// SPDX-License-Identifier: GPL-3.0-or-later
/* Whose each job on a node is (nodes/<node>/job/users.tsv), so erg jobs
 * and erg report name a job's user without Slurm's accounting, and the
 * command its first process ran (job/commands.tsv: erg jobs' JobName). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector_int.h"

struct job_user {
  char job[65];  /* profile_key_build keeps a job id to 64 bytes */
  uint16_t home; /* its index slot by hash (fits the padding after job) */
  uint32_t uid;
  int64_t seen;
  char comm[JOB_COMMAND_MAX];     /* "" until a command is noted */
  char launcher[JOB_COMMAND_MAX]; /* root's first command in it (slurmstepd) */
};

/* Open addressing, as collector/cluster.c: job hash -> i + 1 (0 = free);
 * twice the entries, so a probe always ends at a free slot. */
#define JOB_USERS_INDEX (2 * JOB_USERS_MAX)

struct job_users {
  struct job_user v[JOB_USERS_MAX]; /* in the order first noted (the file's) */
  size_t n;
  uint16_t index[JOB_USERS_INDEX];
};

static bool job_is(const struct job_user *u, const char *job, size_t len) {
  return !memcmp(u->job, job, len) && !u->job[len];
}

static uint16_t job_home(const char *job, size_t len) {
  return (uint16_t)(erg_hash_fnv1a(job, len) & (JOB_USERS_INDEX - 1));
}

/* The index slot of job, or the free slot where it goes. */
static uint16_t *job_slot(struct job_users *j, const char *job, size_t len, uint16_t home) {
  size_t mask = JOB_USERS_INDEX - 1, k = home;
  while (j->index[k] && !job_is(&j->v[j->index[k] - 1], job, len))
    k = (k + 1) & mask;
  return &j->index[k];
}

/* Frees index slot k: each entry after it in the probe run whose home slot
 * is not between the hole and itself moves back into the hole (linear
 * probing's deletion without tombstones). */
static void job_unindex(struct job_users *j, size_t k) {
  size_t mask = JOB_USERS_INDEX - 1, hole = k;
  for (k = (k + 1) & mask; j->index[k]; k = (k + 1) & mask) {
    size_t home = j->v[j->index[k] - 1].home;
    if (((k - home) & mask) >= ((k - hole) & mask)) {
      j->index[hole] = j->index[k];
      hole = k;
    }
  }
  j->index[hole] = 0;
}

/* Entry i becomes job (not indexed yet). */
static void job_set(struct job_users *j, size_t i, const char *job, size_t len, uint16_t home,
                    uint32_t uid, int64_t seen) {
  memcpy(j->v[i].job, job, len);
  j->v[i].job[len] = '\0';
  j->v[i].home = home;
  j->v[i].uid = uid;
  j->v[i].seen = seen;
  j->v[i].comm[0] = '\0';
}

/* The entry of job (len bytes), NULL when none. */
static struct job_user *job_find(struct job_users *j, const char *job, size_t len) {
  uint16_t *slot = job_slot(j, job, len, job_home(job, len));
  return *slot ? &j->v[*slot - 1] : NULL;
}

/* Each "<job> TAB <command>" line of an earlier run's commands.tsv, for
 * the jobs users.tsv named. */
static void job_commands_load(struct job_users *j, const char *path) {
  FILE *f = fopen(path, "r");
  char line[160];
  while (f && fgets(line, sizeof line, f)) {
    char *tab = strchr(line, '\t');
    struct job_user *u = tab && tab > line && (size_t)(tab - line) < sizeof j->v[0].job
                             ? job_find(j, line, (size_t)(tab - line))
                             : NULL;
    tab = tab ? tab + 1 : line;
    tab[strcspn(tab, "\r\n")] = '\0';
    if (u && !u->comm[0] && *tab && strlen(tab) < sizeof u->comm) {
      memcpy(u->comm, tab, strlen(tab) + 1);
      erg_utf8_fix(u->comm, 1); /* the file is data too */
    }
  }
  if (f)
    fclose(f);
}

int job_users_load(struct job_users **ju, const char *path) {
  if (!*ju && !(*ju = calloc(1, sizeof **ju)))
    return -1;
  FILE *f = fopen(path, "r");
  if (!f)
    return 0; /* none yet */
  char line[160];
  struct job_users *j = *ju;
  while (j->n < JOB_USERS_MAX && fgets(line, sizeof line, f)) {
    char *tab = strchr(line, '\t'), *end;
    if (!tab || tab == line || (size_t)(tab - line) >= sizeof j->v[0].job)
      continue;
    unsigned long uid = strtoul(tab + 1, &end, 10);
    if (end == tab + 1 || (*end && *end != '\n') || uid > UINT32_MAX)
      continue;
    size_t len = (size_t)(tab - line);
    uint16_t h = job_home(line, len);
    uint16_t *slot = job_slot(j, line, len, h);
    if (*slot)
      continue; /* a job twice (never written so): the first one counts */
    job_set(j, j->n, line, len, h, (uint32_t)uid, 0);
    *slot = (uint16_t)++j->n;
  }
  fclose(f);
  char cpath[1200];
  size_t dl = strlen(path);
  while (dl && path[dl - 1] != '/')
    dl--;
  if (snprintf(cpath, sizeof cpath, "%.*scommands.tsv", (int)dl, path) < (int)sizeof cpath)
    job_commands_load(j, cpath);
  return 0;
}

int job_users_note(struct job_users **ju, const char *job, size_t len, uint32_t uid, int64_t now) {
  if (len == 0 || len >= sizeof(*ju)->v[0].job)
    return 0;
  if (!*ju && !(*ju = calloc(1, sizeof **ju)))
    return -1;
  struct job_users *j = *ju;
  uint16_t h = job_home(job, len);
  uint16_t *slot = job_slot(j, job, len, h);
  if (*slot) {
    struct job_user *u = &j->v[*slot - 1];
    u->seen = now;
    if (u->uid != 0 || uid == 0)
      return 0;
    u->uid = uid;      /* the job's own user, after slurmstepd's root */
    u->comm[0] = '\0'; /* and its command, not slurmstepd's */
    return 1;
  }
  size_t i = j->n;
  if (j->n < JOB_USERS_MAX) {
    j->n++;
  } else {
    /* Full: the job seen longest ago (the first of equals) makes room. */
    i = 0;
    for (size_t k = 1; k < j->n; k++)
      if (j->v[k].seen < j->v[i].seen)
        i = k;
    job_unindex(j,
                (size_t)(job_slot(j, j->v[i].job, strlen(j->v[i].job), j->v[i].home) - j->index));
    slot = job_slot(j, job, len, h); /* the hole may have moved */
  }
  job_set(j, i, job, len, h, uid, now);
  *slot = (uint16_t)(i + 1);
  return 1;
}

char *job_users_tsv(const struct job_users *ju) {
  if (!ju || !ju->n)
    return NULL;
  size_t cap = ju->n * (sizeof ju->v[0].job + 14) + 1, o = 0;
  char *s = malloc(cap);
  if (!s)
    return NULL;
  s[0] = '\0';
  for (size_t i = 0; i < ju->n; i++)
    o += (size_t)snprintf(s + o, cap - o, "%s\t%u\n", ju->v[i].job, ju->v[i].uid);
  return s;
}

int job_users_command(struct job_users *ju, const char *job, size_t len, uint32_t uid,
                      const char *comm, size_t clen) {
  struct job_user *u = ju && len && len < sizeof ju->v[0].job ? job_find(ju, job, len) : NULL;
  char name[JOB_COMMAND_MAX];
  if (!u || !clen)
    return 0;
  if (clen >= sizeof name)
    clen = sizeof name - 1;
  memcpy(name, comm, clen);
  name[clen] = '\0';
  /* No control byte (a tab or newline would forge a line), valid UTF-8
   * (the cut above may split a character). */
  erg_utf8_fix(name, 1);
  if (uid == 0 && !u->launcher[0])
    memcpy(u->launcher, name, sizeof name);
  if (uid == 0 && u->uid != 0) {
    /* The launcher's child keeps its name from setuid to exec: seen there
     * as the user's, it was taken before the launcher itself was seen. */
    if (u->comm[0] && !strcmp(u->comm, u->launcher)) {
      u->comm[0] = '\0';
      return 1;
    }
    return 0;
  }
  if (uid != u->uid || u->comm[0] || (uid != 0 && !strcmp(name, u->launcher)))
    return 0;
  memcpy(u->comm, name, sizeof name);
  return 1;
}

char *job_commands_tsv(const struct job_users *ju) {
  if (!ju || !ju->n)
    return NULL;
  size_t cap = ju->n * (sizeof ju->v[0].job + sizeof ju->v[0].comm + 2) + 1, o = 0;
  char *s = malloc(cap);
  if (!s)
    return NULL;
  s[0] = '\0';
  for (size_t i = 0; i < ju->n; i++)
    if (ju->v[i].comm[0])
      o += (size_t)snprintf(s + o, cap - o, "%s\t%s\n", ju->v[i].job, ju->v[i].comm);
  return s;
}

void job_users_free(struct job_users *ju) { free(ju); }

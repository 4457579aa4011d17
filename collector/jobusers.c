/* Whose each job on a node is (nodes/<node>/job/users.tsv), so erg jobs
 * and erg report name a job's user without Slurm's accounting. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector_int.h"

struct job_user {
  char job[65]; /* profile_key_build keeps a job id to 64 bytes */
  uint32_t uid;
  int64_t seen;
};

struct job_users {
  struct job_user v[JOB_USERS_MAX];
  size_t n;
};

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
    memcpy(j->v[j->n].job, line, (size_t)(tab - line));
    j->v[j->n].job[tab - line] = '\0';
    j->v[j->n].uid = (uint32_t)uid;
    j->n++;
  }
  fclose(f);
  return 0;
}

int job_users_note(struct job_users **ju, const char *job, size_t len, uint32_t uid, int64_t now) {
  if (len == 0 || len >= sizeof(*ju)->v[0].job)
    return 0;
  if (!*ju && !(*ju = calloc(1, sizeof **ju)))
    return -1;
  struct job_users *j = *ju;
  size_t i = 0, oldest = 0;
  for (; i < j->n; i++) {
    if (!strncmp(j->v[i].job, job, len) && !j->v[i].job[len])
      break;
    if (j->v[i].seen < j->v[oldest].seen)
      oldest = i;
  }
  if (i < j->n) {
    j->v[i].seen = now;
    if (j->v[i].uid != 0 || uid == 0)
      return 0;
    j->v[i].uid = uid; /* the job's own user, after slurmstepd's root */
    return 1;
  }
  if (j->n < JOB_USERS_MAX)
    i = j->n++;
  else
    i = oldest;
  memcpy(j->v[i].job, job, len);
  j->v[i].job[len] = '\0';
  j->v[i].uid = uid;
  j->v[i].seen = now;
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

void job_users_free(struct job_users *ju) { free(ju); }

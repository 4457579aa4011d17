// SPDX-License-Identifier: GPL-3.0-or-later
/* User names of the processes' uids, resolved on the node (its passwd,
 * LDAP or SSSD: the mapping is the node's, not the collector's) with
 * getpwuid_r, cached so a sweep does not ask NSS again for every uid, and
 * bounded: a fixed table, entries expire so renames are picked up, and a
 * uid without a name is remembered too (NSS can be slow to say "no"). */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_int.h"

#define USERS_SLOTS 1024 /* power of two */
#define USERS_PROBE 8    /* slots looked at per uid */
#define USERS_TTL_NS (600 * ERG_NS_PER_S)
#define USERS_MISS_TTL_NS (60 * ERG_NS_PER_S)
#define USERS_PW_BUF_MAX (1 << 20) /* getpwuid_r buffer limit (huge LDAP entries) */

struct user_slot {
  uint32_t uid;
  int used, has_name;
  uint64_t expires_ns;
  char name[AGENT_USER_NAME_MAX];
};

struct agent_users {
  struct user_slot slot[USERS_SLOTS];
  char *pwbuf;
  size_t pwbuf_len;
  /* This sample's names: Sample.users points here. */
  Erg__UserName msg[AGENT_USERS_PER_SAMPLE];
  Erg__UserName *ptr[AGENT_USERS_PER_SAMPLE];
  uint32_t *uids;
  size_t uids_cap;
};

struct agent_users *agent_users_new(void) {
  return calloc(1, sizeof(struct agent_users));
}

void agent_users_free(struct agent_users *u) {
  if (!u)
    return;
  free(u->pwbuf);
  free(u->uids);
  free(u);
}

/* getpwuid_r into s; the buffer grows on ERANGE up to a limit. */
static void users_resolve(struct agent_users *u, uint32_t uid, struct user_slot *s) {
  struct passwd pw, *res = NULL;
  s->has_name = 0;
  if (!u->pwbuf) {
    long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
    u->pwbuf_len = hint > 0 && hint < USERS_PW_BUF_MAX ? (size_t)hint : 16384;
    if (!(u->pwbuf = malloc(u->pwbuf_len)))
      return;
  }
  for (;;) {
    int rc = getpwuid_r((uid_t)uid, &pw, u->pwbuf, u->pwbuf_len, &res);
    if (rc != ERANGE || u->pwbuf_len * 2 > USERS_PW_BUF_MAX)
      break;
    char *b = realloc(u->pwbuf, u->pwbuf_len * 2);
    if (!b)
      return;
    u->pwbuf = b;
    u->pwbuf_len *= 2;
  }
  if (res && res->pw_name && res->pw_name[0]) {
    erg_strlcpy(s->name, res->pw_name, sizeof s->name);
    s->has_name = 1;
  }
}

const char *agent_users_name(struct agent_users *u, uint32_t uid, uint64_t now_ns) {
  size_t h = (size_t)(uid * 2654435761u) & (USERS_SLOTS - 1);
  struct user_slot *victim = NULL;
  for (size_t i = 0; i < USERS_PROBE; i++) {
    struct user_slot *s = &u->slot[(h + i) & (USERS_SLOTS - 1)];
    if (s->used && s->uid == uid) {
      victim = s;
      break;
    }
    /* A free slot, else the one expiring first, takes a new uid. */
    if (!victim || (victim->used && (!s->used || s->expires_ns < victim->expires_ns)))
      victim = s;
  }
  if (!(victim->used && victim->uid == uid && victim->expires_ns > now_ns)) {
    victim->used = 1;
    victim->uid = uid;
    users_resolve(u, uid, victim);
    victim->expires_ns = now_ns + (victim->has_name ? USERS_TTL_NS : USERS_MISS_TTL_NS);
  }
  return victim->has_name ? victim->name : NULL;
}

static int users_uid_cmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

void agent_users_fill(struct agent_users *u, Erg__Sample *s, uint64_t now_ns) {
  s->n_users = 0;
  s->users = u->ptr;
  if (!s->n_procs)
    return;
  if (s->n_procs > u->uids_cap) {
    uint32_t *m = realloc(u->uids, s->n_procs * sizeof *m);
    if (!m)
      return;
    u->uids = m;
    u->uids_cap = s->n_procs;
  }
  for (size_t i = 0; i < s->n_procs; i++)
    u->uids[i] = s->procs[i]->uid;
  qsort(u->uids, s->n_procs, sizeof *u->uids, users_uid_cmp);
  for (size_t i = 0; i < s->n_procs && s->n_users < AGENT_USERS_PER_SAMPLE; i++) {
    if (i && u->uids[i] == u->uids[i - 1])
      continue;
    const char *name = agent_users_name(u, u->uids[i], now_ns);
    if (!name)
      continue;
    Erg__UserName *m = &u->msg[s->n_users];
    erg__user_name__init(m);
    m->uid = u->uids[i];
    m->name = (char *)name;
    u->ptr[s->n_users++] = m;
  }
}

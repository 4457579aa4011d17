// SPDX-License-Identifier: GPL-3.0-or-later
/* Profile keys: a process's grid key is the tuple of all its grouping keys
 * (command, job, unit, container, user), so attribution runs once per cell
 * and every kind is a roll-up of the same shares: Σ keys of any kind is the
 * same attributed power (conservation per kind). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collector_int.h"

_Static_assert(ERG_ATTR_KINDS == PROFILE_NKINDS, "a share's intervals per profile kind");

const char *const profile_kind_names[PROFILE_NKINDS] = {"command", "job", "unit", "container",
                                                        "user"};

/* Separates the tuple's fields; never inside one (control bytes are
 * replaced), so a hostile command name cannot forge another field. */
#define PROFILE_SEP '\x1f'

/* A leading '[' is the collector's ([other], [none], [system]): a process
 * named "[other]" must not merge into the real one, so it becomes '?'. */
static size_t profile_put(char *out, size_t o, size_t outlen, const char *v, size_t max) {
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)(v ? v : ""); *p && n < max; p++, n++)
    if (o + 1 < outlen)
      out[o++] = (*p < 0x20 || *p == 0x7f || (n == 0 && *p == '[')) ? '?' : (char)*p;
  return o;
}

void profile_key_build(char *out, size_t outlen, const char *comm, const char *job,
                       const char *unit, const char *container, uint32_t uid) {
  /* Field limits keep a tuple under PROFILE_KEY_MAX whatever an agent sends. */
  const char *f[PROFILE_NKINDS - 1] = {comm, job, unit, container};
  static const size_t max[PROFILE_NKINDS - 1] = {64, 64, 128, 72};
  size_t o = 0;
  for (int k = 0; k < PROFILE_NKINDS - 1; k++) {
    o = profile_put(out, o, outlen, f[k], max[k]);
    if (o + 1 < outlen)
      out[o++] = PROFILE_SEP;
  }
  snprintf(out + o, outlen - o, "%u", uid);
}

size_t profile_key_field(const char *tuple, int kind, const char **start) {
  const char *p = tuple;
  for (int k = 0; k < kind && p; k++) {
    p = strchr(p, PROFILE_SEP);
    if (p)
      p++;
  }
  if (!p) {
    *start = "";
    return 0;
  }
  *start = p;
  const char *e = strchr(p, PROFILE_SEP);
  return e ? (size_t)(e - p) : strlen(p);
}

/* ---- roll-up of one cell ---- */

struct field_item {
  const char *s;
  size_t len;
  double watts, sd, var;
};

static int item_cmp_name(const void *a, const void *b) {
  const struct field_item *x = a, *y = b;
  if (x->len != y->len)
    return x->len < y->len ? -1 : 1;
  return memcmp(x->s, y->s, x->len);
}

static int entry_cmp_watts(const void *a, const void *b) {
  double x = ((const struct profile_entry *)a)->watts, y = ((const struct profile_entry *)b)->watts;
  if (x != y)
    return x < y ? 1 : -1;
  return strcmp(((const struct profile_entry *)a)->key, ((const struct profile_entry *)b)->key);
}

static char *arena_dup(struct profile_rollup *r, const char *s, size_t len) {
  if (r->used + len + 1 > r->arena_cap)
    return NULL;
  char *d = r->arena + r->used;
  memcpy(d, s, len);
  d[len] = '\0';
  r->used += len + 1;
  return d;
}

/* A key new to the node needs min_share of the cell's power for an
 * archive of its own: a burst of short-lived names that are top-N only
 * because the node is otherwise quiet goes to [other] instead of
 * creating (and soon evicting) an archive each. Known keys stay. */
static int rollup_admitted(const struct profile_admit *ad, int kind,
                           const struct profile_entry *e) {
  if (!ad->known || ad->min_share <= 0 || e->watts >= ad->min_share * ad->total_watts)
    return 1;
  return profile_known_find(&ad->known[kind], e->key) != NULL;
}

/* One kind: group shares by field value; all[] holds every value (for
 * cluster sums), out[] the written keys: top N, [none], [other], [system]. */
static int rollup_kind(struct profile_rollup *r, int kind, const struct erg_attr_share *sh,
                       size_t nkeys, const struct erg_attr_share *sys,
                       const struct profile_admit *ad, struct field_item *items) {
  for (size_t i = 0; i < nkeys; i++) {
    items[i].len = profile_key_field(sh[i].key, kind, &items[i].s);
    items[i].watts = sh[i].watts;
    items[i].sd = sh[i].key_sd_watts[kind];
    items[i].var = sh[i].key_var_watts2[kind];
  }
  qsort(items, nkeys, sizeof *items, item_cmp_name);
  struct profile_entry *all = r->all[kind], *out = r->out[kind];
  size_t nall = 0;
  /* The interval's parts: a key's are on one of its rows (attribute.c),
   * so their sum is the key's; [none]'s too (one group). */
  struct profile_entry none = {.key = "[none]"};
  int have_none = 0;
  for (size_t i = 0; i < nkeys;) {
    size_t j = i;
    double w = 0, sd = 0, var = 0;
    for (; j < nkeys && !item_cmp_name(&items[i], &items[j]); j++) {
      w += items[j].watts;
      sd += items[j].sd;
      var += items[j].var;
    }
    if (items[i].len == 0) {
      none.watts += w;
      none.sd_watts += sd;
      none.var_watts2 += var;
      have_none = 1;
    } else {
      char *k = arena_dup(r, items[i].s, items[i].len);
      if (!k)
        return -1;
      all[nall++] = (struct profile_entry){.key = k, .watts = w, .sd_watts = sd, .var_watts2 = var};
    }
    i = j;
  }
  r->nall[kind] = nall;
  qsort(all, nall, sizeof *all, entry_cmp_watts);
  size_t ntop = nall < ad->top ? nall : ad->top, n = 0;
  /* [other]'s sd is the sum of its keys' (linear: an upper bound of the
   * sd of their sum, docs/model.md), its variance theirs. */
  struct profile_entry other = {.key = "[other]"};
  int have_other = nall > ntop;
  for (size_t i = 0; i < nall; i++) {
    if (i < ntop && rollup_admitted(ad, kind, &all[i]))
      out[n++] = all[i];
    else {
      other.watts += all[i].watts;
      other.sd_watts += all[i].sd_watts;
      other.var_watts2 += all[i].var_watts2;
      have_other = 1;
    }
  }
  if (have_none)
    out[n++] = none;
  if (have_other)
    out[n++] = other;
  out[n++] = (struct profile_entry){.key = "[system]",
                                    .watts = sys->watts,
                                    .sd_watts = sys->key_sd_watts[kind],
                                    .var_watts2 = sys->key_var_watts2[kind]};
  r->nout[kind] = n;
  return 0;
}

int profile_rollup(struct profile_rollup *r, const struct erg_attr_share *sh, size_t nkeys,
                   const struct profile_known *known, unsigned top, double min_share) {
  memset(r, 0, sizeof *r);
  struct profile_admit ad = {.known = known, .top = top, .min_share = min_share};
  for (size_t i = 0; i <= nkeys; i++)
    ad.total_watts += sh[i].watts;
  /* Field values are at most PROFILE_KEY_MAX bytes each, all copied once. */
  r->arena_cap = nkeys * PROFILE_KEY_MAX + 1;
  r->arena = malloc(r->arena_cap);
  struct field_item *items = malloc((nkeys ? nkeys : 1) * sizeof *items);
  int rc = r->arena && items ? 0 : -1;
  for (int k = 0; k < PROFILE_NKINDS && rc == 0; k++) {
    r->all[k] = malloc((nkeys ? nkeys : 1) * sizeof *r->all[k]);
    r->out[k] = malloc((nkeys + 3) * sizeof *r->out[k]);
    rc = r->all[k] && r->out[k] ? 0 : -1;
    if (rc == 0)
      rc = rollup_kind(r, k, sh, nkeys, &sh[nkeys], &ad, items);
  }
  free(items);
  if (rc != 0)
    profile_rollup_free(r);
  return rc;
}

void profile_rollup_free(struct profile_rollup *r) {
  for (int k = 0; k < PROFILE_NKINDS; k++) {
    free(r->all[k]);
    free(r->out[k]);
  }
  free(r->arena);
  memset(r, 0, sizeof *r);
}

/* ---- known keys ---- */

static uint64_t known_hash(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    h = (h ^ *p) * 1099511628211ULL;
  return h;
}

/* Open addressing over the entries, rebuilt whenever the set changes
 * shape (add beyond capacity, removal): lookups are the frequent part. */
static void known_reindex(struct profile_known *k) {
  size_t n = 16;
  while (n < 2 * k->n + 2)
    n *= 2;
  if (n != k->index_len) {
    uint32_t *ix = realloc(k->index, n * sizeof *ix);
    if (!ix)
      return;
    k->index = ix;
    k->index_len = n;
  }
  memset(k->index, 0, k->index_len * sizeof *k->index);
  for (size_t i = 0; i < k->n; i++) {
    size_t j = known_hash(k->keys[i].key) & (k->index_len - 1);
    while (k->index[j])
      j = (j + 1) & (k->index_len - 1);
    k->index[j] = (uint32_t)i + 1;
  }
}

struct profile_known_key *profile_known_find(const struct profile_known *k, const char *key) {
  if (!k->index_len)
    return NULL;
  for (size_t j = known_hash(key) & (k->index_len - 1); k->index[j];
       j = (j + 1) & (k->index_len - 1))
    if (!strcmp(k->keys[k->index[j] - 1].key, key))
      return &k->keys[k->index[j] - 1];
  return NULL;
}

static void known_remove(struct profile_known *k, size_t i) {
  free(k->keys[i].key);
  k->keys[i] = k->keys[--k->n];
}

/* The collector's own keys, not a value from a process (a command may
 * well be named "[x]"). */
static int known_is_special(const char *key) {
  return !strcmp(key, "[other]") || !strcmp(key, "[none]") || !strcmp(key, "[system]");
}

char *profile_known_pop_oldest(struct profile_known *k) {
  /* [other], [none], [system] hold what no named key does: evicting one
   * would delete that history, and they are at most three. */
  size_t oldest = k->n;
  for (size_t i = 0; i < k->n; i++)
    if (!known_is_special(k->keys[i].key) &&
        (oldest == k->n || k->keys[i].last_t < k->keys[oldest].last_t))
      oldest = i;
  if (oldest == k->n)
    return NULL;
  char *key = k->keys[oldest].key;
  k->keys[oldest] = k->keys[--k->n];
  known_reindex(k);
  return key;
}

struct profile_known_key *profile_known_touch(struct profile_known *k, const char *key, int64_t t,
                                              size_t max_keys, char **evicted) {
  struct profile_known_key *e = profile_known_find(k, key);
  if (e) {
    e->last_t = t;
    return e;
  }
  /* Full: the key idle longest makes room (its counter restarts if it
   * comes back; /metrics consumers see a counter reset). */
  if (k->n >= max_keys && k->n) {
    char *old = profile_known_pop_oldest(k);
    if (evicted)
      *evicted = old;
    else
      free(old);
  }
  if (k->n == k->cap) {
    size_t cap = k->cap ? 2 * k->cap : 16;
    struct profile_known_key *a = realloc(k->keys, cap * sizeof *a);
    if (!a)
      return NULL;
    k->keys = a;
    k->cap = cap;
  }
  char *dup = strdup(key);
  if (!dup)
    return NULL;
  k->keys[k->n++] = (struct profile_known_key){.key = dup, .last_t = t};
  known_reindex(k);
  return &k->keys[k->n - 1];
}

size_t profile_known_expire(struct profile_known *k, int64_t now, int64_t max_idle_seconds) {
  size_t dropped = 0;
  for (size_t i = 0; i < k->n;) {
    if (now - k->keys[i].last_t > max_idle_seconds) {
      known_remove(k, i);
      dropped++;
    } else {
      i++;
    }
  }
  if (dropped)
    known_reindex(k);
  return dropped;
}

void profile_known_free(struct profile_known *k) {
  for (size_t i = 0; i < k->n; i++)
    free(k->keys[i].key);
  free(k->keys);
  free(k->index);
  memset(k, 0, sizeof *k);
}

/* The keys whose archives in dir were updated within max_idle_seconds
 * (0: any), from the store's index.tsv and the archives' mtimes, so that
 * after a restart absent keys keep getting their 0 W. A line still being
 * appended (no newline yet) is skipped. */
size_t profile_known_load(struct profile_known *k, const char *dir, int64_t now,
                          int64_t max_idle_seconds) {
  char path[1400], line[1024];
  snprintf(path, sizeof path, "%s/index.tsv", dir);
  FILE *f = fopen(path, "r");
  size_t n = 0;
  if (!f)
    return 0;
  while (fgets(line, sizeof line, f)) {
    char *tab = strchr(line, '\t'), *nl = strchr(line, '\n');
    if (!tab || !nl || nl < tab)
      continue;
    *tab = *nl = '\0';
    struct stat st;
    snprintf(path, sizeof path, "%s/%s.rrd", dir, line);
    if (stat(path, &st) != 0 || (max_idle_seconds > 0 && now - st.st_mtime > max_idle_seconds))
      continue;
    struct profile_known_key *e =
        profile_known_touch(k, tab + 1, (int64_t)st.st_mtime, SIZE_MAX, NULL);
    n += e != NULL;
  }
  fclose(f);
  return n;
}

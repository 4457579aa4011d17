// SPDX-License-Identifier: GPL-3.0-or-later
/* User names of uid keys: what agents resolved on their node, kept per
 * node (the same uid may be another person on another node with local
 * accounts), sanitised like other agent text, bounded, and written beside
 * the user archives as names.tsv for pages and reports. The archives stay
 * keyed by uid: renames keep their history, and a name never has to
 * become a path. docs/store.md "User names". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector_int.h"

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if none. */
static size_t utf8_len(const unsigned char *p, size_t n) {
  size_t len = *p < 0x80                           ? 1
               : (*p & 0xe0) == 0xc0 && *p >= 0xc2 ? 2
               : (*p & 0xf0) == 0xe0               ? 3
               : (*p & 0xf8) == 0xf0 && *p < 0xf5  ? 4
                                                   : 0;
  if (len > n)
    return 0;
  for (size_t k = 1; k < len; k++)
    if ((p[k] & 0xc0) != 0x80)
      return 0;
  return len;
}

int user_name_clean(const char *in, char out[USER_NAME_MAX]) {
  const unsigned char *p = (const unsigned char *)(in ? in : "");
  size_t n = strlen((const char *)p), o = 0;
  int changed = 0;
  for (size_t i = 0; i < n;) {
    size_t len = utf8_len(p + i, n - i);
    if (o + (len ? len : 1) > USER_NAME_MAX - 1) {
      changed = 1; /* too long: cut before the sequence that does not fit */
      break;
    }
    if (!len || p[i] < 0x20 || p[i] == 0x7f || (o == 0 && p[i] == '[')) {
      out[o++] = '?';
      changed = 1;
      i += len ? len : 1;
      continue;
    }
    memcpy(out + o, p + i, len);
    o += len;
    i += len;
  }
  out[o] = '\0';
  return changed;
}

static long names_find(const struct user_names *m, uint32_t uid, size_t *at) {
  size_t lo = 0, hi = m->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->e[mid].uid < uid)
      lo = mid + 1;
    else
      hi = mid;
  }
  *at = lo;
  return lo < m->n && m->e[lo].uid == uid ? (long)lo : -1;
}

int user_names_set(struct user_names *m, uint32_t uid, const char *name) {
  size_t at;
  long i = names_find(m, uid, &at);
  if (i >= 0) {
    if (!strcmp(m->e[i].name, name))
      return 0;
    erg_strlcpy(m->e[i].name, name, sizeof m->e[i].name); /* renamed on the node */
    m->dirty = 1;
    return 1;
  }
  if (m->n >= USER_NAMES_MAX)
    return -1;
  if (m->n == m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 16;
    struct user_name_entry *e = realloc(m->e, cap * sizeof *e);
    if (!e)
      return -1;
    m->e = e;
    m->cap = cap;
  }
  memmove(m->e + at + 1, m->e + at, (m->n - at) * sizeof *m->e);
  m->e[at].uid = uid;
  erg_strlcpy(m->e[at].name, name, sizeof m->e[at].name);
  m->n++;
  m->dirty = 1;
  return 1;
}

/* A user key is the uid in decimal; anything else ([system], ...) has no name. */
static int names_key_uid(const char *key, uint32_t *uid) {
  char *end;
  if (!key[0] || key[0] < '0' || key[0] > '9' || strlen(key) > 10)
    return -1;
  unsigned long v = strtoul(key, &end, 10);
  if (*end || v > UINT32_MAX)
    return -1;
  *uid = (uint32_t)v;
  return 0;
}

const char *user_names_get(const struct user_names *m, const char *key) {
  uint32_t uid;
  size_t at;
  if (names_key_uid(key, &uid) != 0)
    return NULL;
  long i = names_find(m, uid, &at);
  return i >= 0 ? m->e[i].name : NULL;
}

size_t user_names_load(struct user_names *m, const char *path) {
  char line[256], clean[USER_NAME_MAX];
  FILE *f = fopen(path, "r");
  size_t n = 0;
  while (f && fgets(line, sizeof line, f)) {
    char *tab = strchr(line, '\t');
    uint32_t uid;
    if (!tab)
      continue;
    *tab = '\0';
    tab[1 + strcspn(tab + 1, "\r\n")] = '\0';
    /* The file is data too: cleaned again on the way in. */
    if (names_key_uid(line, &uid) == 0 && tab[1]) {
      user_name_clean(tab + 1, clean);
      n += user_names_set(m, uid, clean) > 0;
    }
  }
  if (f)
    fclose(f);
  m->dirty = 0; /* what is on disk */
  return n;
}

char *user_names_tsv(struct user_names *m) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return NULL;
  for (size_t i = 0; i < m->n; i++)
    fprintf(f, "%u\t%s\n", m->e[i].uid, m->e[i].name);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  m->dirty = 0;
  return buf;
}

void user_names_free(struct user_names *m) {
  free(m->e);
  memset(m, 0, sizeof *m);
}

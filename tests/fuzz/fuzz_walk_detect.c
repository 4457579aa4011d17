// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer target: SNMP profile detection and entity mapping over a
 * recorded walk (collector/pdu/walk_detect.c, erg_snmp_walk_detect and
 * erg_snmp_walk_entity) with a hostile agent: the input scripts each
 * lookup's answer, read cyclically, so the walk never ends (a huge table)
 * unless the script says "no row". An answer may be no row, the asked OID
 * itself (a GETNEXT that does not advance), an earlier answer (one that
 * loops back), a row under the asked OID, a parent of it, a profile's
 * column or sysObjectID, or junk bytes as the name; the type, number and
 * text come from the input too. Detection must end (libFuzzer's -timeout),
 * say why, and name only profiles of the registry. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiles.h"

struct script {
  const uint8_t *d;
  size_t n, at;
  unsigned long lookups;
  char ring[4][ERG_SNMP_OID_MAX]; /* earlier answers, to loop back to */
  unsigned nring;
};

static uint8_t take(struct script *s) {
  if (!s->n)
    return 0;
  uint8_t b = s->d[s->at];
  s->at = (s->at + 1) % s->n;
  return b;
}

/* An OID the profiles name: a sysObjectID, a column start or a row. */
static void profile_oid(struct script *s, char *out, size_t len) {
  size_t np = 0;
  while (erg_snmp_profile_at(np))
    np++;
  const struct erg_snmp_profile *p = erg_snmp_profile_at(take(s) % (np ? np : 1));
  uint8_t how = take(s);
  out[0] = '\0';
  if (!p)
    return;
  if (how % 3 == 0 && p->sysoids[0]) {
    const char *o = p->sysoids[take(s) % ERG_SNMP_MAX_SYSOIDS];
    snprintf(out, len, "%s", o ? o : p->sysoids[0]);
    return;
  }
  const struct erg_snmp_level *lv = &p->lv[take(s) % ERG_PDU_NLEVELS];
  const char *t = erg_snmp_level_row_col(lv, take(s) % 3);
  if (p->names && how % 3 == 1)
    t = p->names->name;
  if (t && erg_snmp_oid_expand(t, take(s) % 70, out, len) != 0)
    out[0] = '\0';
}

static int hostile_lookup(void *ctx, const char *oid, bool next, char *name, size_t namelen,
                          int *type, double *num, char *text, size_t textlen) {
  struct script *s = ctx;
  s->lookups++;
  uint8_t c = take(s);
  char buf[ERG_SNMP_OID_MAX + 32];
  switch (c % 9) {
    case 0:
      return -1;
    case 1: /* does not advance */
      snprintf(buf, sizeof buf, "%s", oid);
      break;
    case 2: /* loops back */
      snprintf(buf, sizeof buf, "%s", s->nring ? s->ring[take(s) % s->nring] : oid);
      break;
    case 3: /* a row under it, or exactly it when not a GETNEXT */
      snprintf(buf, sizeof buf, next ? "%s.%u" : "%s", oid, (unsigned)take(s) * 7u);
      break;
    case 4: { /* a parent (earlier in OID order) */
      snprintf(buf, sizeof buf, "%s", oid);
      char *dot = strrchr(buf, '.');
      if (dot)
        *dot = '\0';
      break;
    }
    case 5:
    case 6:
      profile_oid(s, buf, sizeof buf);
      break;
    case 7: { /* junk bytes as the name */
      size_t k = take(s) % 24, i;
      for (i = 0; i < k && i + 1 < sizeof buf; i++)
        buf[i] = (char)(take(s) | 1); /* no NUL inside */
      buf[i] = '\0';
      break;
    }
    default: /* far beyond: the end of a huge table */
      snprintf(buf, sizeof buf, "%s.%u.%u", oid, 4294967295u, (unsigned)take(s));
      break;
  }
  snprintf(name, namelen, "%s", buf);
  snprintf(s->ring[s->nring % 4], sizeof s->ring[0], "%.*s", ERG_SNMP_OID_MAX - 1, buf);
  if (s->nring < 4)
    s->nring++;
  static const int types[] = {2, 4, 6, 65, 66, 67, 70, 5, 64};
  *type = types[take(s) % (sizeof types / sizeof types[0])];
  static const double nums[] = {NAN, -1, 0, 1, 6, 9, 1e300, -1e300, INFINITY, 4294967295.0};
  *num = nums[take(s) % (sizeof nums / sizeof nums[0])];
  if (text && textlen) {
    uint8_t t = take(s);
    if (t % 3 == 0) {
      profile_oid(s, text, textlen); /* a sysObjectID, say */
    } else if (t % 3 == 1) {
      /* a variable name a named table might hold */
      static const char *const names[] = {"Power",  "L1 Power", "Outlet 3 Power",
                                          "Energy", "Voltage",  "Inlet 1 Current"};
      snprintf(text, textlen, "%s", names[take(s) % 6]);
    } else {
      size_t k = take(s) % 40, i;
      for (i = 0; i < k && i + 1 < textlen; i++)
        text[i] = (char)take(s);
      text[i] = '\0';
    }
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static struct script s;
  memset(&s, 0, sizeof s);
  s.d = data;
  s.n = size;
  struct erg_snmp_walk w = {hostile_lookup, &s};
  char how[512] = "";
  const struct erg_snmp_profile *p = erg_snmp_walk_detect(&w, how, sizeof how);
  if (!how[0])
    abort(); /* says why, either way */
  if (p) {
    bool known = false;
    for (size_t i = 0; erg_snmp_profile_at(i); i++)
      known |= erg_snmp_profile_at(i) == p;
    if (!known)
      abort();
  }
  /* The entity mapping, for the detected profile and one the input names. */
  size_t np = 0;
  while (erg_snmp_profile_at(np))
    np++;
  const struct erg_snmp_profile *other = np ? erg_snmp_profile_at(take(&s) % np) : NULL;
  const struct erg_snmp_profile *profs[2] = {p, other};
  for (int k = 0; k < 2; k++) {
    if (!profs[k])
      continue;
    static struct erg_snmp_walk_entity e;
    char why[256] = "";
    int level = take(&s) % (ERG_PDU_NLEVELS + 1), n = (int)(take(&s) % 70) - 2;
    if (erg_snmp_walk_entity(&w, profs[k], level, n, &e, why, sizeof why) != 0 && !why[0])
      abort();
  }
  return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Which profile a PDU speaks, decided by what it answers, and which column
 * each configured channel reads (with its scale and counter wrap).
 * sysObjectID only orders the candidates: vendors reuse one for several
 * MIBs (every Liebert card says 476.1.42), OEMs ship a generic one
 * (net-snmp's 8072.3.2.10) or none at all. A profile is taken when one of
 * its levels' tables answers a GETNEXT, or, for a named-variable table,
 * when the name column has one of its variables (snmp_names.c). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snmp_int.h"

#define DETECT_CHUNK 16 /* varbinds per GETNEXT (small agents say tooBig) */
#define DETECT_MAX 1024 /* tables tried at once (every profile's) */

struct table_try {
  const struct erg_snmp_profile *prof;
  int level;
  char start[ERG_SNMP_OID_MAX];
  const char *oid; /* the column's template */
  bool scalar, answered;
  bool named; /* a level of a named-variable table: no GETNEXT, see detect_names */
};

/* GETNEXT on every try's start OID; marks those whose table answered.
 * -1 when the agent does not answer at all. */
static int detect_run(struct erg_pdu_source *src, struct table_try *t, size_t n, char *why,
                      size_t whylen) {
  int lim = src->cfg.snmp_version == 1 ? 1 : DETECT_CHUNK;
  for (size_t i = 0; i < n;) {
    const char *oids[DETECT_CHUNK];
    size_t at[DETECT_CHUNK], k = 0, next = i;
    for (; next < n && k < (size_t)lim; next++)
      if (!t[next].named)
        at[k] = next, oids[k++] = t[next].start;
    if (!k)
      break;
    netsnmp_pdu *resp;
    int rc = erg_snmp_sync(src, SNMP_MSG_GETNEXT, oids, (int)k, &resp, why, whylen);
    if (rc == -2 && lim > 1) {
      lim /= 2;
      continue;
    }
    if (rc)
      return -1;
    if (resp->errstat == SNMP_ERR_NOSUCHNAME && k > 1) { /* SNMPv1: end of the MIB */
      snmp_free_pdu(resp);
      lim = 1;
      continue;
    }
    const netsnmp_variable_list *v = resp->errstat ? NULL : resp->variables;
    for (size_t j = 0; j < k && v; j++, v = v->next_variable) {
      double num = erg_snmp_vb_number(v);
      if (!erg_snmp_vb_present(v) || num < 0) /* -1: the column exists, no data */
        continue;
      char got[ERG_SNMP_OID_MAX], want[ERG_SNMP_OID_MAX];
      erg_snmp_oid_format(v->name, v->name_length, got, sizeof got);
      struct table_try *x = &t[at[j]];
      if (x->scalar)
        x->answered = !erg_snmp_oid_expand(x->oid, 1, want, sizeof want) && !strcmp(got, want);
      else
        x->answered = erg_snmp_oid_under(got, x->start);
    }
    snmp_free_pdu(resp);
    i = next;
  }
  return 0;
}

/* Named-variable tables found during one detection, by profile. */
#define DETECT_NAMED 4
struct named_found {
  const struct erg_snmp_profile *prof;
  struct snmp_names_map map;
};

/* The named tries of t answer where name resolution of their profile finds
 * a reading of their level (the walk that detection needs anyway is the
 * resolution: its map is kept in found for the profile that wins). -1
 * when the agent stopped answering. */
static int detect_names(struct erg_pdu_source *src, struct table_try *t, size_t n,
                        struct named_found *found, size_t *nfound, char *why, size_t whylen) {
  for (size_t i = 0; i < n; i++) {
    if (!t[i].named)
      continue;
    size_t f = 0;
    while (f < *nfound && found[f].prof != t[i].prof)
      f++;
    if (f == *nfound) {
      if (f == DETECT_NAMED)
        continue;
      found[f].prof = t[i].prof;
      if (erg_snmp_names_resolve(src, t[i].prof, &found[f].map, why, whylen))
        return -1;
      (*nfound)++;
    }
    t[i].answered = erg_snmp_names_levels(&found[f].map) >> t[i].level & 1u;
  }
  return 0;
}

/* Adds the tables of prof to t: per level its first two row columns (a
 * name column may be missing where the values are not). */
static size_t detect_add(struct table_try *t, size_t n, const struct erg_snmp_profile *prof) {
  for (int l = 0; prof->names && l < ERG_PDU_NLEVELS && n < DETECT_MAX; l++)
    if (erg_snmp_level_offered(&prof->lv[l]))
      t[n++] = (struct table_try){.prof = prof, .level = l, .named = true};
  for (int l = 0; l < ERG_PDU_NLEVELS; l++)
    for (int k = 0; k < 2; k++) {
      if (n >= DETECT_MAX)
        return n; /* the test of the registry keeps every profile under it */
      const char *oid = erg_snmp_level_row_col(&prof->lv[l], k);
      if (!oid)
        break;
      struct table_try *x = &t[n];
      *x = (struct table_try){.prof = prof, .level = l, .oid = oid};
      if (erg_snmp_probe_start(oid, x->start, sizeof x->start, &x->scalar) == 0)
        n++;
    }
  return n;
}

/* The best of t: most levels answering; ties go to the earlier profile. */
static const struct erg_snmp_profile *detect_best(const struct table_try *t, size_t n, char *levels,
                                                  size_t llen) {
  const struct erg_snmp_profile *best = NULL;
  int bestn = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    bool lv[ERG_PDU_NLEVELS] = {false};
    int k = 0;
    for (; j < n && t[j].prof == t[i].prof; j++)
      if (t[j].answered && !lv[t[j].level])
        lv[t[j].level] = true, k++;
    if (k > bestn) {
      bestn = k;
      best = t[i].prof;
      size_t o = 0;
      levels[0] = '\0';
      for (int l = 0; l < ERG_PDU_NLEVELS; l++)
        if (lv[l] && o < llen)
          o += (size_t)snprintf(levels + o, llen - o, "%s%s", o ? ", " : "", erg_pdu_level_name(l));
    }
    i = j;
  }
  return best;
}

/* GETNEXT on t's tables and name resolution of its named ones. */
static int detect_tables(struct erg_pdu_source *src, struct table_try *t, size_t n,
                         struct named_found *found, size_t *nfound, char *why, size_t whylen) {
  return detect_run(src, t, n, why, whylen) || detect_names(src, t, n, found, nfound, why, whylen)
             ? -1
             : 0;
}

int erg_snmp_detect(struct erg_pdu_source *src, struct snmp_priv *p, char *why, size_t whylen) {
  static struct table_try t[DETECT_MAX]; /* one SNMP thread; probe is single-threaded */
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  const struct erg_snmp_profile *cand[16], *best = NULL;
  struct named_found found[DETECT_NAMED];
  size_t nfound = 0;
  char levels[128] = "";
  const char *sysoid = p->ident.sysoid;
  int rc = 0;
  pthread_mutex_lock(&lock);
  size_t nc = erg_snmp_sysoid_generic(sysoid) ? 0 : erg_snmp_profile_candidates(sysoid, cand, 16);
  size_t n = 0;
  for (size_t i = 0; i < nc; i++)
    n = detect_add(t, n, cand[i]);
  if (n && detect_tables(src, t, n, found, &nfound, why, whylen) == 0)
    best = detect_best(t, n, levels, sizeof levels);
  if (best) {
    snprintf(p->ident.why, sizeof p->ident.why,
             "sysObjectID %.64s suggests %.40s and its tables answer (%.48s: %.100s)", sysoid,
             best->name, best->mib, levels);
  } else {
    /* Every vendor profile, then the standard fallback if none answers. */
    const struct erg_snmp_profile *q, *std = NULL;
    n = 0;
    for (size_t i = 0; (q = erg_snmp_profile_at(i)); i++) {
      if (!strcmp(q->vendor, "standard"))
        std = q;
      else
        n = detect_add(t, n, q);
    }
    if (detect_tables(src, t, n, found, &nfound, why, whylen)) {
      rc = -1;
      goto out;
    }
    best = detect_best(t, n, levels, sizeof levels);
    if (!best && std) {
      n = detect_add(t, 0, std);
      if (detect_tables(src, t, n, found, &nfound, why, whylen)) {
        rc = -1;
        goto out;
      }
      best = detect_best(t, n, levels, sizeof levels);
    }
    if (best)
      snprintf(p->ident.why, sizeof p->ident.why,
               "sysObjectID %.64s %s; found by its tables (%.48s: %.100s)",
               sysoid[0] ? sysoid : "(none)",
               nc                                ? "suggests profiles whose tables do not answer"
               : erg_snmp_sysoid_generic(sysoid) ? "is generic"
                                                 : "matches no profile",
               best->mib, levels);
  }
  if (!best) {
    snprintf(why, whylen,
             "%s: sysObjectID %s; no known PDU table answers (neither a vendor MIB "
             "nor ENTITY-SENSOR-MIB watts); set profile=generic with oid_power= (see docs/pdu.md)",
             src->cfg.host, sysoid[0] ? sysoid : "(none)");
    rc = -2;
    goto out;
  }
  p->prof = p->ident.prof = best;
  for (size_t f = 0; f < nfound; f++) /* the winner's rows are its names, resolved */
    if (found[f].prof == best)
      erg_snmp_names_install(p, &found[f].map);
  erg_snmp_borrow_voltage(p);
out:
  for (size_t f = 0; f < nfound; f++)
    erg_snmp_names_free(&found[f].map);
  pthread_mutex_unlock(&lock);
  return rc;
}

/* erg_snmp_walk_rows' rows so far. */
struct walk_rows {
  const char *suffix;
  size_t plen; /* strlen(prefix) */
  int *nums, n, max;
};

static int walk_rows_each(const char *got, void *arg) {
  struct walk_rows *w = arg;
  /* prefix.N<suffix>, N one arc */
  char *end;
  long num = strtol(got + w->plen + 1, &end, 10);
  if (end == got + w->plen + 1 || strcmp(end, w->suffix) != 0 || num < 0 || num > 1000000)
    return 0;
  bool dup = false;
  for (int i = 0; i < w->n; i++)
    dup |= w->nums[i] == num;
  if (!dup)
    w->nums[w->n++] = (int)num;
  return w->n >= w->max;
}

int erg_snmp_walk_rows(struct erg_pdu_source *src, const char *prefix, const char *suffix,
                       int *nums, int max, char *why, size_t whylen) {
  struct walk_rows w = {.suffix = suffix, .plen = strlen(prefix), .nums = nums, .max = max};
  if (max <= 0)
    return 0;
  if (erg_snmp_walk(src, prefix, 4096, walk_rows_each, &w, why, whylen) && !w.n)
    return -1;
  return w.n;
}

double erg_snmp_col_scale(const struct erg_snmp_col *col, const struct snmp_chan *ch, int q) {
  double f = col->scale;
  if (col->digits && ch->digits[q] > 0 && ch->digits[q] < 10)
    f *= pow(10.0, -ch->digits[q]);
  if (col->si_prefix && ch->si_prefix[q] >= 1 && ch->si_prefix[q] <= 17)
    f *= pow(10.0, 3.0 * (ch->si_prefix[q] - 9));
  return f;
}

const struct erg_snmp_col *erg_snmp_chan_col(const struct snmp_priv *p,
                                             const struct erg_pdu_source_config *cfg, int c,
                                             int q) {
  if (!p->prof || c < 0 || c >= cfg->nchannels)
    return NULL;
  int l = cfg->levels[c] % ERG_PDU_NLEVELS;
  if (q == ERG_Q_N) /* used where the level's own voltage reads nothing */
    return p->vborrow;
  const struct erg_snmp_col *col = &p->prof->lv[l].q[q];
  if (col->var) /* a named variable: the row found for this entity, if any */
    return erg_snmp_names_col(p, l, cfg->channels[c], q);
  return col->oid ? col : NULL;
}

int erg_snmp_chan_oid(const struct snmp_priv *p, const struct erg_pdu_source_config *cfg, int c,
                      int q, int kind, int n, char *out, size_t len) {
  const struct erg_snmp_col *col = erg_snmp_chan_col(p, cfg, c, q);
  if (!col)
    return -1;
  const char *t = kind == 0 ? col->oid : kind == 1 ? col->digits : col->si_prefix;
  if (!t)
    return -1;
  const char *unit = cfg->units[c];
  int l = q == ERG_Q_N ? p->vborrow_level : cfg->levels[c] % ERG_PDU_NLEVELS;
  const struct erg_snmp_col *b =
      p->base && !col->var ? &p->base->lv[l].q[q == ERG_Q_N ? ERG_Q_VOLTAGE : q] : NULL;
  const char *bt = !b ? NULL : kind == 0 ? b->oid : kind == 1 ? b->digits : b->si_prefix;
  if (unit[0] && bt && strchr(bt, '*')) {
    /* The borrowed voltage of a unit: its own inlet's, by the unit's
     * first arcs (a Sentry4 outlet's unit.cord holds the inlet's unit). */
    char u[ERG_PDU_UNIT_MAX];
    snprintf(u, sizeof u, "%s", unit);
    int want = erg_snmp_tmpl_wilds(bt), have = 1;
    for (char *d = u; (d = strchr(d, '.')); d++)
      if (++have > want)
        *d = '\0';
    if (q != ERG_Q_N || have >= want)
      return erg_snmp_oid_expand_unit(bt, u, n, out, len);
  }
  return erg_snmp_oid_expand(t, n, out, len);
}

void erg_snmp_borrow_voltage(struct snmp_priv *p) {
  static const int from[] = {ERG_PDU_INLET, ERG_PDU_PHASE, ERG_PDU_DEVICE};
  p->vborrow = NULL;
  p->vborrow_oid[0] = '\0';
  for (size_t i = 0; p->prof && i < sizeof from / sizeof from[0]; i++) {
    const struct erg_snmp_col *v = &p->prof->lv[from[i]].q[ERG_Q_VOLTAGE];
    if (v->var) /* named: the row found, once resolved */
      v = erg_snmp_names_col(p, from[i], 1, ERG_Q_VOLTAGE);
    if (v && v->oid && !erg_snmp_oid_expand(v->oid, 1, p->vborrow_oid, sizeof p->vborrow_oid)) {
      p->vborrow = v;
      p->vborrow_level = from[i];
      return;
    }
  }
}

int erg_snmp_level_missing(const struct snmp_priv *p, const struct erg_pdu_source_config *cfg,
                           int c, char *why, size_t whylen) {
  int l = cfg->levels[c];
  if (p->prof && l < ERG_PDU_NLEVELS && erg_snmp_level_offered(&p->prof->lv[l]) &&
      cfg->units[c][0]) {
    int want = p->base && !p->prof->names ? erg_snmp_level_wilds(&p->base->lv[l]) : 0, have = 1;
    for (const char *d = cfg->units[c]; (d = strchr(d, '.')); d++)
      have++;
    if (want == have)
      return 0;
    if (want == 0)
      snprintf(why, whylen,
               "profile %s numbers its %ss without a unit: name it as %s:%d, not %s:%s.%d",
               p->prof->name, erg_pdu_level_name(l), erg_pdu_level_name(l), cfg->channels[c],
               erg_pdu_level_name(l), cfg->units[c], cfg->channels[c]);
    else
      snprintf(why, whylen, "profile %s's %s rows have %d unit arc%s before the %s number, not %d",
               p->prof->name, erg_pdu_level_name(l), want, want > 1 ? "s" : "",
               erg_pdu_level_name(l), have);
    return -1;
  }
  if (!p->prof || (l < ERG_PDU_NLEVELS && erg_snmp_level_offered(&p->prof->lv[l])))
    return 0;
  char have[96] = "";
  size_t o = 0;
  for (int k = 0; k < ERG_PDU_NLEVELS; k++)
    if (erg_snmp_level_offered(&p->prof->lv[k]) && o < sizeof have)
      o +=
          (size_t)snprintf(have + o, sizeof have - o, "%s%s", o ? ", " : "", erg_pdu_level_name(k));
  snprintf(why, whylen, "profile %s has no %s level (it has: %s)", p->prof->name,
           erg_pdu_level_name(l), have);
  return -1;
}

/* Counter modulus: what the agent's type can hold, times the scale. A
 * Counter64 never wraps in practice; INTEGER counters are signed. */
double erg_snmp_wrap_joules(const struct erg_pdu_source *src, int channel) {
  const struct snmp_priv *p = src->priv;
  const struct erg_snmp_col *col =
      p ? erg_snmp_chan_col(p, &src->cfg, channel, ERG_Q_ENERGY) : NULL;
  if (!col)
    return 0;
  double scale = erg_snmp_col_scale(col, &p->ch[channel], ERG_Q_ENERGY);
  switch (p->ch[channel].energy_type) {
    case ASN_COUNTER64:
      return 0;
    case ASN_INTEGER:
      return 2147483648.0 * scale;
    default:
      return 4294967296.0 * scale;
  }
}

int erg_snmp_bad_value(const struct erg_pdu_source *src, int channel, char *why, size_t whylen) {
  const struct snmp_priv *p = src->priv;
  if (!p || !p->ch[channel].bad_why[0])
    return -1;
  snprintf(why, whylen, "%s", p->ch[channel].bad_why);
  return 0;
}

static int wild_next(void *ctx, const char *oid, char *got, size_t gotlen) {
  struct erg_pdu_source *src = ctx;
  netsnmp_pdu *resp;
  char why[160];
  if (erg_snmp_sync(src, SNMP_MSG_GETNEXT, &oid, 1, &resp, why, sizeof why))
    return -2; /* no answer: tried again next time */
  const netsnmp_variable_list *v = resp->errstat ? NULL : resp->variables;
  int rc = -1;
  if (v && erg_snmp_vb_present(v)) {
    erg_snmp_oid_format(v->name, v->name_length, got, gotlen);
    rc = 0;
  }
  snmp_free_pdu(resp);
  return rc;
}

void erg_snmp_wild_apply(struct erg_pdu_source *src, struct snmp_priv *p) {
  if (p->wild_done || !p->prof || p->prof == &p->generic)
    return;
  p->base = p->prof;
  struct erg_snmp_profile in = *p->prof;
  char note[256]; /* index tails are long: a MAC per level */
  int rc = erg_snmp_wild_resolve(&in, &p->generic, &p->wild, wild_next, src, note, sizeof note);
  if (rc < 0)
    return;
  p->wild_done = true;
  if (rc == 0)
    return;
  p->prof = p->ident.prof = &p->generic;
  size_t o = strlen(p->ident.why);
  if (o < sizeof p->ident.why)
    snprintf(p->ident.why + o, sizeof p->ident.why - o, "; %s", note);
  erg_snmp_borrow_voltage(p);
}

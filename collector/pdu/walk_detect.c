// SPDX-License-Identifier: GPL-3.0-or-later
/* A recorded walk (snmpsim .snmprec) instead of an agent: which profile
 * ergd would pick for a device that answers as the walk does, and which
 * OIDs and factors it would read for one entity. erg-pdusim uses this to
 * serve a recording with live values exactly where erg looks.
 *
 * Detection follows snmp_detect.c rule for rule (sysObjectID candidates
 * first, then every vendor profile, ENTITY-SENSOR-MIB last; a level counts
 * when a GETNEXT from one of its first two row columns lands in it), with a
 * lookup in the walk where that sends a GETNEXT. The column choice and the
 * factors go through the driver's own erg_snmp_chan_col, erg_snmp_col_scale
 * and erg_snmp_borrow_voltage, so they cannot drift from what a poll
 * reads. No network, no printing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snmp_int.h"

/* Does column t answer a GETNEXT from its start as detection wants: a
 * value that is not negative (-1: the column exists, no data), under the
 * column (a template) or at the scalar itself. */
static bool walk_col_answers(const struct erg_snmp_walk *w, const char *t) {
  char start[ERG_SNMP_OID_MAX], got[ERG_SNMP_OID_MAX], want[ERG_SNMP_OID_MAX];
  bool scalar;
  int type;
  double num;
  if (erg_snmp_probe_start(t, start, sizeof start, &scalar) ||
      w->lookup(w->ctx, start, true, got, sizeof got, &type, &num, NULL, 0))
    return false;
  if (num < 0)
    return false;
  if (scalar)
    return !erg_snmp_oid_expand(t, 1, want, sizeof want) && !strcmp(got, want);
  return erg_snmp_oid_under(got, start);
}

/* A named-variable table (snmp_names.c): the levels whose value a row's
 * name says it holds, the name column walked as the driver walks it. */
static unsigned walk_named_levels(const struct erg_snmp_walk *w,
                                  const struct erg_snmp_profile *prof) {
  const struct erg_snmp_names *nm = prof->names;
  char cur[ERG_SNMP_OID_MAX], got[ERG_SNMP_OID_MAX], text[96];
  unsigned m = 0;
  snprintf(cur, sizeof cur, "%s", nm->name);
  for (int rows = 0; nm->value && rows < 100000; rows++) {
    int type, level, entity, q;
    double num;
    if (w->lookup(w->ctx, cur, true, got, sizeof got, &type, &num, text, sizeof text) ||
        !erg_snmp_oid_under(got, nm->name) || !erg_snmp_oid_after(got, cur))
      break;
    if (erg_snmp_names_classify(prof, text, &level, &entity, &q) && q != ERG_Q_NAME)
      m |= 1u << level;
    snprintf(cur, sizeof cur, "%s", got);
  }
  return m;
}

/* The levels of prof whose tables answer (bit 1 << level): per level its
 * first two row columns, as snmp_detect.c's detect_add tries them. */
static unsigned walk_levels(const struct erg_snmp_walk *w, const struct erg_snmp_profile *prof) {
  if (prof->names)
    return walk_named_levels(w, prof);
  unsigned m = 0;
  for (int l = 0; l < ERG_PDU_NLEVELS; l++)
    for (int k = 0; k < 2; k++) {
      const char *oid = erg_snmp_level_row_col(&prof->lv[l], k);
      if (!oid)
        break;
      if (walk_col_answers(w, oid))
        m |= 1u << l;
    }
  return m;
}

static int walk_popcount(unsigned m) {
  int k = 0;
  for (; m; m &= m - 1)
    k++;
  return k;
}

/* The best of profs: most levels answering; ties go to the earlier one. */
static const struct erg_snmp_profile *walk_best(const struct erg_snmp_walk *w,
                                                const struct erg_snmp_profile *const *profs,
                                                size_t n, unsigned *levels) {
  const struct erg_snmp_profile *best = NULL;
  int bestn = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned m = walk_levels(w, profs[i]);
    if (walk_popcount(m) > bestn) {
      bestn = walk_popcount(m);
      best = profs[i];
      *levels = m;
    }
  }
  return best;
}

static void walk_level_list(unsigned m, char *out, size_t len) {
  size_t o = 0;
  out[0] = '\0';
  for (int l = 0; l < ERG_PDU_NLEVELS; l++)
    if (m & 1u << l && o < len)
      o += (size_t)snprintf(out + o, len - o, "%s%s", o ? ", " : "", erg_pdu_level_name(l));
}

const struct erg_snmp_profile *erg_snmp_walk_detect(const struct erg_snmp_walk *w, char *how,
                                                    size_t howlen) {
  char sysoid[ERG_SNMP_OID_MAX] = "", name[ERG_SNMP_OID_MAX], levels[128];
  int type;
  double num;
  /* Only an OBJECT IDENTIFIER counts, as snmp.c reads sysObjectID. */
  if (w->lookup(w->ctx, "1.3.6.1.2.1.1.2.0", false, name, sizeof name, &type, &num, sysoid,
                sizeof sysoid) ||
      type != 6)
    sysoid[0] = '\0';
  const struct erg_snmp_profile *cand[16], *best = NULL;
  unsigned lv = 0;
  size_t nc = erg_snmp_sysoid_generic(sysoid) ? 0 : erg_snmp_profile_candidates(sysoid, cand, 16);
  best = walk_best(w, cand, nc, &lv);
  if (best) {
    walk_level_list(lv, levels, sizeof levels);
    snprintf(how, howlen, "sysObjectID %s suggests %s and its tables answer (%s: %s)", sysoid,
             best->name, best->mib, levels);
    return best;
  }
  /* Every vendor profile, then the standard fallback if none answers. */
  size_t n = 0, cap = 64;
  const struct erg_snmp_profile **all = malloc(cap * sizeof *all), *p, *std = NULL;
  for (size_t i = 0; all && (p = erg_snmp_profile_at(i)); i++) {
    if (!strcmp(p->vendor, "standard")) {
      std = p;
      continue;
    }
    if (n == cap) {
      const struct erg_snmp_profile **g = realloc(all, 2 * cap * sizeof *all);
      if (!g)
        break;
      all = g;
      cap *= 2;
    }
    all[n++] = p;
  }
  if (!all) {
    snprintf(how, howlen, "out of memory");
    return NULL;
  }
  best = walk_best(w, all, n, &lv);
  free(all);
  if (!best && std)
    best = walk_best(w, &std, 1, &lv);
  if (!best) {
    snprintf(how, howlen,
             "sysObjectID %s; no known PDU table answers (neither a vendor MIB "
             "nor ENTITY-SENSOR-MIB watts)",
             sysoid[0] ? sysoid : "(none)");
    return NULL;
  }
  walk_level_list(lv, levels, sizeof levels);
  snprintf(how, howlen, "sysObjectID %s %s; found by its tables (%s: %s)",
           sysoid[0] ? sysoid : "(none)",
           nc                                ? "suggests profiles whose tables do not answer"
           : erg_snmp_sysoid_generic(sysoid) ? "is generic"
                                             : "matches no profile",
           best->mib, levels);
  return best;
}

/* The walk's number at template t for entity n; NAN when absent. */
static double walk_number(const struct erg_snmp_walk *w, const char *t, int n) {
  char oid[ERG_SNMP_OID_MAX], name[ERG_SNMP_OID_MAX];
  int type;
  double num;
  if (!t || erg_snmp_oid_expand(t, n, oid, sizeof oid) ||
      w->lookup(w->ctx, oid, false, name, sizeof name, &type, &num, NULL, 0))
    return NAN;
  return num;
}

/* Does the walk have row n of level lv (a scalar level: n = 1 and the
 * scalar; a filtered level: the filter column holds its value)? */
static bool walk_has_row(const struct erg_snmp_walk *w, const struct erg_snmp_level *lv, int n) {
  char prefix[ERG_SNMP_OID_MAX];
  const char *suffix, *t;
  for (int k = 0; (t = erg_snmp_level_row_col(lv, k)); k++) {
    if (erg_snmp_oid_split(t, prefix, sizeof prefix, &suffix) && n != 1)
      continue;
    char oid[ERG_SNMP_OID_MAX], name[ERG_SNMP_OID_MAX];
    int type;
    double num;
    if (erg_snmp_oid_expand(t, n, oid, sizeof oid) ||
        w->lookup(w->ctx, oid, false, name, sizeof name, &type, &num, NULL, 0))
      continue;
    return !lv->filter || walk_number(w, lv->filter, n) == (double)lv->filter_value;
  }
  return false;
}

/* A GETNEXT in the walk, for erg_snmp_wild_resolve. */
static int walk_next(void *ctx, const char *oid, char *got, size_t gotlen) {
  const struct erg_snmp_walk *w = ctx;
  int type;
  double num;
  return w->lookup(w->ctx, oid, true, got, gotlen, &type, &num, NULL, 0) ? -1 : 0;
}

static int walk_entity(const struct erg_snmp_walk *w, const struct erg_snmp_profile *prof,
                       int level, int n, struct erg_snmp_walk_entity *out, char *why,
                       size_t whylen);

/* The index arcs the walk decides ("*" in a template) resolved as the
 * driver resolves them online, then the entity mapped. */
int erg_snmp_walk_entity(const struct erg_snmp_walk *w, const struct erg_snmp_profile *prof,
                         int level, int n, struct erg_snmp_walk_entity *out, char *why,
                         size_t whylen) {
  return erg_snmp_walk_entity_unit(w, prof, level, NULL, n, out, why, whylen);
}

int erg_snmp_walk_entity_unit(const struct erg_snmp_walk *w, const struct erg_snmp_profile *prof,
                              int level, const char *unit, int n, struct erg_snmp_walk_entity *out,
                              char *why, size_t whylen) {
  if (unit && unit[0] &&
      (!prof || prof->names || level < 0 || level >= ERG_PDU_NLEVELS ||
       erg_snmp_level_wilds(&prof->lv[level]) == 0)) {
    memset(out, 0, sizeof *out);
    snprintf(why, whylen, "profile %s numbers its %ss without a unit (unit %s given)",
             prof ? prof->name : "(none)", erg_pdu_level_name(level), unit);
    return -1;
  }
  struct erg_snmp_profile *rp = prof ? malloc(sizeof *rp) : NULL;
  struct erg_snmp_wild_store *ws = prof ? malloc(sizeof *ws) : NULL;
  const struct erg_snmp_profile *orig = prof;
  if (rp && ws && !prof->names &&
      erg_snmp_wild_resolve(prof, rp, ws, walk_next, (void *)w, NULL, 0) > 0)
    prof = rp;
  if (unit && unit[0] && prof == rp && erg_snmp_wild_fill_level(orig, rp, ws, level, unit) != 0) {
    memset(out, 0, sizeof *out);
    snprintf(why, whylen, "profile %s's %s rows have %d unit arc%s, not '%s'", orig->name,
             erg_pdu_level_name(level), erg_snmp_level_wilds(&orig->lv[level]),
             erg_snmp_level_wilds(&orig->lv[level]) > 1 ? "s" : "", unit);
    free(rp);
    free(ws);
    return -1;
  }
  int rc = walk_entity(w, prof, level, n, out, why, whylen);
  free(rp);
  free(ws);
  return rc;
}

static int walk_entity(const struct erg_snmp_walk *w, const struct erg_snmp_profile *prof,
                       int level, int n, struct erg_snmp_walk_entity *out, char *why,
                       size_t whylen) {
  memset(out, 0, sizeof *out);
  for (int q = 0; q <= ERG_Q_N; q++)
    out->raw[q] = out->factor[q] = NAN;
  if (prof && prof->names) { /* rows known by name only: not mapped offline yet */
    snprintf(why, whylen,
             "profile %s names its variables (%s): serving it from a walk with "
             "live values is not supported",
             prof->name, prof->mib);
    return -1;
  }
  if (!prof || level < 0 || level >= ERG_PDU_NLEVELS || !erg_snmp_level_row_oid(&prof->lv[level])) {
    char have[96] = "";
    size_t o = 0;
    for (int k = 0; prof && k < ERG_PDU_NLEVELS; k++)
      if (erg_snmp_level_row_oid(&prof->lv[k]) && o < sizeof have)
        o += (size_t)snprintf(have + o, sizeof have - o, "%s%s", o ? ", " : "",
                              erg_pdu_level_name(k));
    snprintf(why, whylen, "profile %s has no %s level (it has: %s)", prof ? prof->name : "(none)",
             erg_pdu_level_name(level), have[0] ? have : "none");
    return -1;
  }
  if (n < 0 || !walk_has_row(w, &prof->lv[level], n)) {
    snprintf(why, whylen, "the walk has no %s %d (profile %s)", erg_pdu_level_name(level), n,
             prof->name);
    return -1;
  }
  /* The driver's own view of a one-channel source on this entity. */
  struct snmp_priv *p = calloc(1, sizeof *p);
  struct erg_pdu_source_config *cfg = calloc(1, sizeof *cfg);
  if (!p || !cfg) {
    free(p);
    free(cfg);
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  p->prof = prof;
  erg_snmp_borrow_voltage(p);
  cfg->nchannels = 1;
  cfg->channels[0] = n;
  cfg->levels[0] = (unsigned char)level;
  struct snmp_chan *ch = &p->ch[0];
  for (int q = 0; q <= ERG_Q_N; q++) {
    ch->raw[q] = NAN;
    ch->si_prefix[q] = 9;
  }
  for (int q = 0; q <= ERG_Q_N; q++) {
    const struct erg_snmp_col *col = erg_snmp_chan_col(p, cfg, 0, q);
    /* The borrowed voltage is inlet, phase or device 1, whatever the entity. */
    int e = q == ERG_Q_N ? 1 : n;
    if (!col || erg_snmp_oid_expand(col->oid, e, out->oid[q], sizeof out->oid[q])) {
      out->oid[q][0] = '\0';
      continue;
    }
    /* Read as snmp.c's snmp_apply_values reads them. */
    double d = walk_number(w, col->digits, e), s = walk_number(w, col->si_prefix, e);
    ch->digits[q] = isfinite(d) && d >= 0 && d < 10 ? (signed char)d : 0;
    ch->si_prefix[q] = isfinite(s) && s >= 1 && s <= 17 ? (signed char)s : 9;
    out->factor[q] = erg_snmp_col_scale(col, ch, q);
    char name[ERG_SNMP_OID_MAX], text[64];
    double num;
    out->present[q] = w->lookup(w->ctx, out->oid[q], false, name, sizeof name, &out->type[q], &num,
                                text, sizeof text) == 0;
    if (out->present[q] && col->unit && out->type[q] == 4) /* text with its unit */
      num = erg_snmp_text_unit((const unsigned char *)text, strlen(text), col->unit);
    out->raw[q] = out->present[q] ? num : NAN;
    out->unit[q] = col->unit;
  }
  free(p);
  free(cfg);
  return 0;
}

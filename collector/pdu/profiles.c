// SPDX-License-Identifier: GPL-3.0-or-later
/* The profile registry's lookups and OID template helpers. The profiles
 * themselves are data under vendors/. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiles.h"

#define WH 3600.0 /* J per Wh */

const struct erg_snmp_profile *erg_snmp_profile_at(size_t i) {
  for (size_t v = 0; erg_snmp_vendors[v]; v++)
    for (size_t k = 0; erg_snmp_vendors[v][k]; k++)
      if (i-- == 0)
        return erg_snmp_vendors[v][k];
  return NULL;
}

const struct erg_snmp_profile *erg_snmp_profile_find(const char *name) {
  const struct erg_snmp_profile *p;
  for (size_t i = 0; (p = erg_snmp_profile_at(i)); i++)
    if (strcmp(p->name, name) == 0)
      return p;
  return NULL;
}

/* "1.3.6.1.4.1.318" is a prefix of "1.3.6.1.4.1.318.1" but not of
 * "1.3.6.1.4.1.3180": only whole arcs count. */
static size_t oid_prefix_len(const char *oid, const char *prefix) {
  if (*oid == '.')
    oid++;
  size_t n = strlen(prefix);
  if (strncmp(oid, prefix, n) != 0 || (oid[n] != '\0' && oid[n] != '.'))
    return 0;
  return n;
}

/* The length of p's longest sysObjectID prefix matching sysoid, 0 none. */
static size_t profile_sysoid_len(const struct erg_snmp_profile *p, const char *sysoid,
                                 const char **prefix) {
  size_t best = 0;
  for (int k = 0; k < ERG_SNMP_MAX_SYSOIDS && p->sysoids[k]; k++) {
    size_t n = oid_prefix_len(sysoid, p->sysoids[k]);
    if (n > best) {
      best = n;
      if (prefix)
        *prefix = p->sysoids[k];
    }
  }
  return best;
}

const struct erg_snmp_profile *erg_snmp_profile_match(const char *sysoid, const char **prefix) {
  const struct erg_snmp_profile *best = NULL, *p;
  size_t bestlen = 0;
  for (size_t i = 0; (p = erg_snmp_profile_at(i)); i++) {
    const char *pre = NULL;
    size_t n = profile_sysoid_len(p, sysoid, &pre);
    if (n > bestlen) {
      bestlen = n;
      best = p;
      if (prefix)
        *prefix = pre;
    }
  }
  return best;
}

size_t erg_snmp_profile_candidates(const char *sysoid, const struct erg_snmp_profile **out,
                                   size_t max) {
  size_t n = 0, len[64];
  const struct erg_snmp_profile *p;
  for (size_t i = 0; (p = erg_snmp_profile_at(i)) && n < max && n < 64; i++) {
    size_t l = profile_sysoid_len(p, sysoid, NULL);
    if (!l)
      continue;
    size_t k = n++; /* insertion sort, longest prefix first, stable */
    while (k > 0 && len[k - 1] < l) {
      out[k] = out[k - 1];
      len[k] = len[k - 1];
      k--;
    }
    out[k] = p;
    len[k] = l;
  }
  return n;
}

int erg_snmp_oid_expand(const char *tmpl, int n, char *out, size_t outlen) {
  size_t o = 0;
  if (*tmpl == '.')
    tmpl++;
  for (const char *p = tmpl; *p; p++) {
    char num[16];
    const char *piece = p;
    size_t plen = 1;
    if (p[0] == '%' && p[1] == 'd') {
      plen = (size_t)snprintf(num, sizeof num, "%d", n);
      piece = num;
      p++;
    }
    if (o + plen >= outlen)
      return -1;
    memcpy(out + o, piece, plen);
    o += plen;
  }
  out[o] = '\0';
  return 0;
}

int erg_snmp_oid_split(const char *tmpl, char *prefix, size_t plen, const char **suffix) {
  if (*tmpl == '.')
    tmpl++;
  const char *d = strstr(tmpl, "%d");
  if (!d || d == tmpl || d[-1] != '.' || (size_t)(d - tmpl) >= plen)
    return -1;
  memcpy(prefix, tmpl, (size_t)(d - tmpl - 1));
  prefix[d - tmpl - 1] = '\0';
  *suffix = d + 2;
  return 0;
}

/* The arcs before a template's "*" (without the dot), or before its "%d"
 * where the "*" is the index tail after it; -1 when it has no "*". */
static int wild_prefix(const char *t, char *out, size_t len) {
  if (*t == '.')
    t++;
  const char *w = strstr(t, ".*"), *d = strstr(t, ".%d");
  if (w && d && d < w)
    w = d;
  if (!w || (size_t)(w - t) >= len)
    return -1;
  memcpy(out, t, (size_t)(w - t));
  out[w - t] = '\0';
  return 0;
}

int erg_snmp_probe_start(const char *t, char *start, size_t len, bool *scalar) {
  if (wild_prefix(t, start, len) == 0) { /* rows are somewhere under the arcs before '*' */
    *scalar = false;
    return 0;
  }
  const char *suffix;
  *scalar = erg_snmp_oid_split(t, start, len, &suffix) != 0;
  if (!*scalar)
    return 0;
  /* A scalar: GETNEXT from its parent must land on it. */
  if (*t == '.')
    t++;
  const char *dot = strrchr(t, '.');
  if (!dot || (size_t)(dot - t) >= len)
    return -1;
  memcpy(start, t, (size_t)(dot - t));
  start[dot - t] = '\0';
  return 0;
}

bool erg_snmp_oid_under(const char *got, const char *prefix) {
  size_t n = strlen(prefix);
  return !strncmp(got, prefix, n) && got[n] == '.';
}

bool erg_snmp_sysoid_generic(const char *s) {
  if (*s == '.')
    s++;
  return !s[0] || !strncmp(s, "1.3.6.1.4.1.8072.", 17) || !strcmp(s, "1.3.6.1.4.1.0") ||
         !strcmp(s, "0.0") || strncmp(s, "1.3.6.1.4.1.", 12) != 0;
}

const char *erg_snmp_level_row_col(const struct erg_snmp_level *lv, int i) {
  static const int order[] = {ERG_Q_NAME,    ERG_Q_POWER,  ERG_Q_VA,
                              ERG_Q_CURRENT, ERG_Q_ENERGY, ERG_Q_VOLTAGE};
  for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
    if (lv->q[order[k]].oid && i-- == 0)
      return lv->q[order[k]].oid;
  return NULL;
}

bool erg_snmp_level_offered(const struct erg_snmp_level *lv) {
  if (erg_snmp_level_row_oid(lv))
    return true;
  for (int q = ERG_Q_POWER; q < ERG_Q_N; q++)
    if (lv->q[q].var)
      return true;
  return false;
}

unsigned erg_snmp_profile_levels(const char *name) {
  const struct erg_snmp_profile *p = name && name[0] ? erg_snmp_profile_find(name) : NULL;
  unsigned m = 0;
  for (int l = 0; p && l < ERG_PDU_NLEVELS; l++)
    if (erg_snmp_level_offered(&p->lv[l]))
      m |= 1u << l;
  return m;
}

/* One alternative, alt[0..len), against the whole of name. */
static bool name_match_one(const char *alt, size_t len, const char *name, int *n) {
  const char *pct = NULL;
  for (size_t i = 0; i + 1 < len && !pct; i++)
    if (alt[i] == '%' && alt[i + 1] == 'd')
      pct = alt + i;
  if (!pct) {
    *n = 1;
    return strlen(name) == len && !strncmp(alt, name, len);
  }
  size_t pre = (size_t)(pct - alt), post = len - pre - 2;
  if (strncmp(name, alt, pre) != 0)
    return false;
  const char *d = name + pre;
  long v = 0;
  size_t k = 0;
  for (; d[k] >= '0' && d[k] <= '9'; k++)
    if ((v = v * 10 + (d[k] - '0')) > 1000000)
      return false;
  if (k == 0 || v == 0 || strlen(d + k) != post || strncmp(d + k, pct + 2, post) != 0)
    return false;
  *n = (int)v;
  return true;
}

bool erg_snmp_name_match(const char *pattern, const char *name, int *n) {
  for (const char *a = pattern; a;) {
    const char *bar = strchr(a, '|');
    size_t len = bar ? (size_t)(bar - a) : strlen(a);
    if (len && name_match_one(a, len, name, n))
      return true;
    a = bar ? bar + 1 : NULL;
  }
  return false;
}

bool erg_snmp_names_classify(const struct erg_snmp_profile *prof, const char *name, int *level,
                             int *entity, int *q) {
  for (int l = 0; prof->names && l < ERG_PDU_NLEVELS; l++)
    for (int k = 0; k < ERG_Q_N; k++) {
      const char *pat = prof->lv[l].q[k].var;
      if (pat && erg_snmp_name_match(pat, name, entity)) {
        *level = l;
        *q = k;
        return true;
      }
    }
  return false;
}

/* Only digits and dots, with at most one "%d": anything else in a user's
 * template is a typo we would rather reject at startup. */
static int oid_template_ok(const char *t) {
  int pct = 0;
  for (const char *p = t; *p; p++) {
    if (p[0] == '%' && p[1] == 'd') {
      pct++;
      p++;
    } else if (!(*p == '.' || (*p >= '0' && *p <= '9'))) {
      return 0;
    }
  }
  return pct <= 1 && *t;
}

int erg_snmp_profile_generic(const struct erg_pdu_source_config *cfg, struct erg_snmp_profile *out,
                             char *why, size_t whylen) {
  memset(out, 0, sizeof *out);
  out->name = "generic";
  out->vendor = "generic";
  out->mib = "configured OIDs";
  const char *t[3] = {cfg->oid_power, cfg->oid_energy, cfg->oid_name};
  for (int i = 0; i < 3; i++)
    if (t[i][0] && !oid_template_ok(t[i])) {
      snprintf(why, whylen, "bad OID template '%s' (digits, dots and one %%d)", t[i]);
      return -1;
    }
  /* Scalars: the same characters, no outlet number. */
  const char *sc[2] = {cfg->oid_count, cfg->oid_total_power};
  for (int i = 0; i < 2; i++)
    if (sc[i][0] && (!oid_template_ok(sc[i]) || strstr(sc[i], "%d"))) {
      snprintf(why, whylen, "bad scalar OID '%s' (digits and dots)", sc[i]);
      return -1;
    }
  if (!cfg->oid_power[0] && !cfg->oid_energy[0]) {
    snprintf(why, whylen, "profile generic needs oid_power= and/or oid_energy=");
    return -1;
  }
  double ps = cfg->power_scale > 0 ? cfg->power_scale : 1.0;
  struct erg_snmp_level *o = &out->lv[ERG_PDU_OUTLET];
  if (cfg->oid_power[0])
    o->q[ERG_Q_POWER] = (struct erg_snmp_col){.oid = cfg->oid_power, .scale = ps};
  if (cfg->oid_energy[0])
    o->q[ERG_Q_ENERGY] = (struct erg_snmp_col){
        .oid = cfg->oid_energy,
        .scale = cfg->energy_scale_joules > 0 ? cfg->energy_scale_joules : WH};
  if (cfg->oid_name[0])
    o->q[ERG_Q_NAME] = (struct erg_snmp_col){.oid = cfg->oid_name, .scale = 1.0};
  o->count = cfg->oid_count[0] ? cfg->oid_count : NULL;
  if (cfg->oid_total_power[0])
    out->lv[ERG_PDU_DEVICE].q[ERG_Q_POWER] =
        (struct erg_snmp_col){.oid = cfg->oid_total_power, .scale = ps};
  return 0;
}

/* The end of the decimal number that starts text[i] (sign, digits, one
 * point, an exponent), *digits how many digits it has. */
static size_t text_number_end(const unsigned char *text, size_t i, size_t b, size_t *digits) {
  *digits = 0;
  if (i < b && (text[i] == '+' || text[i] == '-'))
    i++;
  for (; i < b && isdigit(text[i]); i++)
    (*digits)++;
  if (i < b && text[i] == '.')
    for (i++; i < b && isdigit(text[i]); i++)
      (*digits)++;
  if (*digits && i < b && (text[i] == 'e' || text[i] == 'E')) {
    size_t e = i + 1, ed = 0;
    if (e < b && (text[e] == '+' || text[e] == '-'))
      e++;
    for (; e < b && isdigit(text[e]); e++)
      ed++;
    if (ed)
      i = e;
  }
  return i;
}

/* text[a..n) as a number (n - a < 40), NAN when not finite. */
static double text_strtod(const unsigned char *text, size_t a, size_t n) {
  char buf[40];
  if (n <= a || n - a >= sizeof buf)
    return NAN;
  memcpy(buf, text + a, n - a);
  buf[n - a] = '\0';
  double d = strtod(buf, NULL);
  return isfinite(d) ? d : NAN;
}

/* text without the blanks and NULs around it: [*a, *b). */
static void text_trim(const unsigned char *text, size_t len, size_t *a, size_t *b) {
  *a = 0, *b = len;
  while (*a < *b && (isspace(text[*a]) || !text[*a]))
    (*a)++;
  while (*b > *a && (isspace(text[*b - 1]) || !text[*b - 1]))
    (*b)--;
}

double erg_snmp_text_number(const unsigned char *text, size_t len) {
  size_t a, b, digits;
  text_trim(text, len, &a, &b);
  size_t i = text_number_end(text, a, b, &digits);
  if (!digits || i != b || b - a >= 40)
    return NAN;
  return text_strtod(text, a, b);
}

double erg_snmp_text_unit(const unsigned char *text, size_t len, const char *unit) {
  if (!unit[0])
    return erg_snmp_text_number(text, len);
  size_t a, b, digits;
  text_trim(text, len, &a, &b);
  size_t i = text_number_end(text, a, b, &digits), n = i;
  if (!digits || n - a >= 40)
    return NAN;
  while (i < b && text[i] == ' ')
    i++;
  size_t ul = strlen(unit), rest = b - i;
  char prefix = 0; /* 1: none */
  if (rest == ul && !memcmp(text + i, unit, ul))
    prefix = 1;
  else if (rest == ul + 1 && !memcmp(text + i + 1, unit, ul) && strchr("mkM", text[i]))
    prefix = (char)text[i];
  double d = prefix ? text_strtod(text, a, n) : NAN;
  /* milli by division: 300 / 1000 is 0.3, 300 x 0.001 is not */
  return prefix == 'm' ? d / 1e3 : prefix == 'k' ? d * 1e3 : prefix == 'M' ? d * 1e6 : d;
}

bool erg_snmp_oid_after(const char *a, const char *b) {
  if (*a == '.')
    a++;
  if (*b == '.')
    b++;
  for (;;) {
    char *ea, *eb;
    unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
    bool enda = !*a, endb = !*b;
    if (enda || endb)
      return !enda && endb; /* a longer: under b, after it */
    if (ea == a || eb == b || (*ea && *ea != '.') || (*eb && *eb != '.'))
      return false;
    if (x != y)
      return x > y;
    a = *ea ? ea + 1 : ea;
    b = *eb ? eb + 1 : eb;
  }
}

/* A row column t's "*" as its last arc (after "%d", or a scalar's last) is
 * the index tail; every other "*" is a unit arc. */
static bool wild_is_tail(const char *t) {
  size_t n = strlen(t);
  return n >= 2 && t[n - 1] == '*' && t[n - 2] == '.';
}

static int tmpl_stars(const char *t) {
  int n = 0;
  for (; t && *t; t++)
    n += *t == '*';
  return n;
}

/* t with its "*" arcs filled, into out: with tail (not NULL) its last-arc
 * "*" is tail's arcs; every other "*" takes the next numeric arc of unit,
 * in order. t itself when it has no "*"; NULL when unit has another number
 * of arcs, or it does not fit. */
static const char *wild_fill(const char *t, const char *unit, const char *tail, char *out,
                             size_t len) {
  if (!t || !strchr(t, '*'))
    return t;
  size_t o = 0;
  const char *u = unit ? unit : "";
  for (const char *p = t; *p; p++) {
    if (*p != '*') {
      if (o + 1 >= len)
        return NULL;
      out[o++] = *p;
      continue;
    }
    if (tail && !p[1] && p > t && p[-1] == '.') { /* the index tail */
      size_t k = strlen(tail);
      if (!k || o + k >= len)
        return NULL;
      memcpy(out + o, tail, k);
      o += k;
      continue;
    }
    size_t k = strspn(u, "0123456789");
    if (!k || o + k >= len)
      return NULL;
    memcpy(out + o, u, k);
    o += k;
    u += k;
    if (*u == '.')
      u++;
  }
  if (*u)
    return NULL;
  out[o] = '\0';
  return out;
}

int erg_snmp_tmpl_wilds(const char *t) { return t ? tmpl_stars(t) - (wild_is_tail(t) ? 1 : 0) : 0; }

enum { WILD_NONE, WILD_UNITS, WILD_TAIL, WILD_BOTH };

/* What a level's "*"s are, from its row columns and their digits and SI
 * prefix templates (count and filter follow them): unit arcs, an index
 * tail, or both (not supported: the level is left out). */
static int level_wild_kind(const struct erg_snmp_level *lv) {
  bool units = false, tail = false;
  for (int q = 0; q < ERG_Q_N; q++) {
    const char *ts[] = {lv->q[q].oid, lv->q[q].digits, lv->q[q].si_prefix};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
      if (!ts[i])
        continue;
      tail |= wild_is_tail(ts[i]);
      units |= erg_snmp_tmpl_wilds(ts[i]) > 0;
    }
  }
  return units && tail ? WILD_BOTH : tail ? WILD_TAIL : units ? WILD_UNITS : WILD_NONE;
}

int erg_snmp_level_wilds(const struct erg_snmp_level *lv) {
  if (level_wild_kind(lv) != WILD_UNITS)
    return 0;
  const char *t;
  for (int k = 0; (t = erg_snmp_level_row_col(lv, k)); k++)
    if (erg_snmp_tmpl_wilds(t) > 0)
      return erg_snmp_tmpl_wilds(t);
  return 0;
}

int erg_snmp_oid_expand_unit(const char *tmpl, const char *unit, int n, char *out, size_t outlen) {
  char buf[ERG_SNMP_OID_MAX];
  const char *t = wild_fill(tmpl, unit, NULL, buf, sizeof buf);
  return t ? erg_snmp_oid_expand(t, n, out, outlen) : -1;
}

bool erg_snmp_oid_match(const char *tmpl, const char *oid, char *unit, size_t ulen, int *n) {
  size_t u = 0;
  bool have_n = false;
  if (*tmpl == '.')
    tmpl++;
  if (*oid == '.')
    oid++;
  if (ulen)
    unit[0] = '\0';
  *n = 1;
  const char *t0 = tmpl;
  while (*tmpl) {
    bool wild = tmpl[0] == '*', num = tmpl[0] == '%' && tmpl[1] == 'd';
    if (!wild && !num) {
      if (*tmpl++ != *oid++)
        return false;
      continue;
    }
    if (wild && !tmpl[1] && tmpl > t0 && tmpl[-1] == '.') {
      /* the index tail: one or more arcs, not part of the unit */
      if (!isdigit((unsigned char)*oid))
        return false;
      for (const char *p = oid; *p; p++)
        if (!(isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))))
          return false;
      return true;
    }
    char *end;
    long v = strtol(oid, &end, 10);
    if (end == oid || !isdigit((unsigned char)*oid) || v > 1000000)
      return false;
    if (wild) {
      int w = snprintf(unit + u, ulen > u ? ulen - u : 0, "%s%ld", u ? "." : "", v);
      if (w < 0 || u + (size_t)w >= ulen)
        return false;
      u += (size_t)w;
      tmpl++;
    } else {
      *n = (int)v;
      have_n = true;
      tmpl += 2;
    }
    oid = end;
  }
  return !*oid && (have_n || u);
}

/* Level l of in filled (unit arcs, index tail) into *ol; -1 when a
 * template does not take them. */
static int fill_level(const struct erg_snmp_level *lv, struct erg_snmp_level *ol,
                      struct erg_snmp_wild_store *store, int l, const char *unit,
                      const char *tail) {
  int slot = 0, bad = 0;
#define FILL(dst, src)                                                                             \
  do {                                                                                             \
    (dst) = wild_fill((src), unit, tail, store->t[l][slot++], ERG_SNMP_OID_MAX);                   \
    bad |= (src) && !(dst);                                                                        \
  } while (0)
  for (int q = 0; q < ERG_Q_N; q++) {
    FILL(ol->q[q].oid, lv->q[q].oid);
    FILL(ol->q[q].digits, lv->q[q].digits);
    FILL(ol->q[q].si_prefix, lv->q[q].si_prefix);
  }
  FILL(ol->count, lv->count);
  FILL(ol->filter, lv->filter);
#undef FILL
  return bad ? -1 : 0;
}

int erg_snmp_wild_fill_level(const struct erg_snmp_profile *in, struct erg_snmp_profile *out,
                             struct erg_snmp_wild_store *store, int l, const char *unit) {
  struct erg_snmp_level ol = out->lv[l];
  int kind = level_wild_kind(&in->lv[l]);
  if (kind == WILD_TAIL || kind == WILD_BOTH || fill_level(&in->lv[l], &ol, store, l, unit, NULL))
    return -1;
  out->lv[l] = ol;
  if (unit != store->unit[l])
    snprintf(store->unit[l], ERG_PDU_UNIT_MAX, "%s", unit ? unit : "");
  return 0;
}

/* The index tail's arcs for the probe: a string index (a length, then that
 * many printable characters) as the string. */
static void wild_tail_note(const char *arcs, char *out, size_t len) {
  char str[64];
  size_t k = 0;
  char *end;
  unsigned long want = strtoul(arcs, &end, 10);
  for (const char *p = end; *p == '.' && k + 1 < sizeof str;) {
    unsigned long c = strtoul(p + 1, &end, 10);
    if (end == p + 1 || c < 0x20 || c > 0x7e)
      break;
    str[k++] = (char)c;
    p = end;
    if (!*p && k == want) {
      str[k] = '\0';
      snprintf(out, len, "\"%s\"", str);
      return;
    }
  }
  snprintf(out, len, "%s", arcs);
}

/* got, a row of the column whose arcs before its first "*" (or before the
 * "%d" ahead of an index tail) are pre, as template t sees it: its index
 * tail (every arc after the entity number, after the column for a scalar)
 * into tail, or its unit arcs, one per "*", dotted, into unit. */
static bool wild_row_arcs(const char *t, const char *pre, const char *got, bool is_tail, char *tail,
                          size_t tlen, char *unit, size_t ulen) {
  if (!erg_snmp_oid_under(got, pre))
    return false;
  const char *r = got + strlen(pre) + 1;
  if (is_tail) {
    if (strstr(t, "%d")) { /* past the entity number */
      r = strchr(r, '.');
      if (!r)
        return false;
      r++;
    }
    if (!*r || strlen(r) >= tlen)
      return false;
    snprintf(tail, tlen, "%s", r);
    return true;
  }
  size_t u = 0;
  unit[0] = '\0';
  for (int w = 0, wilds = erg_snmp_tmpl_wilds(t); w < wilds; w++) {
    size_t d = strspn(r, "0123456789");
    if (!d || u + d + 1 >= ulen || (r[d] != '.' && r[d] != '\0'))
      return false;
    if (u)
      unit[u++] = '.';
    memcpy(unit + u, r, d);
    u += d;
    unit[u] = '\0';
    r += d + (r[d] == '.');
  }
  return true;
}

int erg_snmp_wild_resolve(const struct erg_snmp_profile *in, struct erg_snmp_profile *out,
                          struct erg_snmp_wild_store *store, erg_snmp_next_fn next, void *ctx,
                          char *note, size_t notelen) {
  int resolved = 0;
  size_t o = 0;
  if (notelen)
    note[0] = '\0';
  memset(store->unit, 0, sizeof store->unit);
  bool any = false;
  for (int l = 0; l < ERG_PDU_NLEVELS && !any; l++)
    any = level_wild_kind(&in->lv[l]) != WILD_NONE;
  if (!any)
    return 0;
  *out = *in;
  for (int l = 0; l < ERG_PDU_NLEVELS; l++) {
    const struct erg_snmp_level *lv = &in->lv[l];
    struct erg_snmp_level *ol = &out->lv[l];
    int kind = level_wild_kind(lv);
    if (kind == WILD_NONE)
      continue;
    resolved++;
    char shown[128] = "";
    if (kind == WILD_BOTH) {
      memset(ol, 0, sizeof *ol);
      snprintf(shown, sizeof shown, "unit arcs and an index tail: not supported, left out");
    } else {
      /* The first row of the first row column with "*" that has one (a
       * firmware may leave out names): its unit arcs, one per "*", or its
       * index tail. */
      bool tail = kind == WILD_TAIL, found = false;
      char *unit = store->unit[l], arcs[ERG_SNMP_OID_MAX] = "";
      const char *t;
      for (int k = 0; !found && (t = erg_snmp_level_row_col(lv, k)); k++) {
        char pre[ERG_SNMP_OID_MAX], got[ERG_SNMP_OID_MAX];
        if (!strchr(t, '*') || wild_prefix(t, pre, sizeof pre))
          continue;
        int rc = next(ctx, pre, got, sizeof got);
        if (rc < -1)
          return -1;
        found =
            rc == 0 && wild_row_arcs(t, pre, got, tail, arcs, sizeof arcs, unit, ERG_PDU_UNIT_MAX);
      }
      if (tail && !found) { /* no row, no tail: nothing to read there */
        memset(ol, 0, sizeof *ol);
        snprintf(shown, sizeof shown, "no row: left out");
      } else if (tail) {
        unit[0] = '\0';
        if (fill_level(lv, ol, store, l, "", arcs)) {
          memset(ol, 0, sizeof *ol);
          snprintf(shown, sizeof shown, "index tail too long: left out");
        } else {
          char shown_tail[72];
          wild_tail_note(arcs, shown_tail, sizeof shown_tail);
          snprintf(shown, sizeof shown, "index tail %s (its first row)", shown_tail);
        }
      } else {
        int wilds = erg_snmp_level_wilds(lv);
        if (!found) { /* no row: the MIB's first unit, not said */
          unit[0] = '\0';
          for (int w = 0; w < wilds; w++)
            snprintf(unit + strlen(unit), ERG_PDU_UNIT_MAX - strlen(unit), "%s1", w ? "." : "");
        }
        erg_snmp_wild_fill_level(in, out, store, l, unit);
        if (found)
          snprintf(shown, sizeof shown, "index arc%s %s (its first row)", wilds > 1 ? "s" : "",
                   unit);
      }
    }
    if (o < notelen && shown[0])
      o += (size_t)snprintf(note + o, notelen - o, "%s%s %s", o ? "; " : "", erg_pdu_level_name(l),
                            shown);
  }
  return resolved;
}

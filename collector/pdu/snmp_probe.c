// SPDX-License-Identifier: GPL-3.0-or-later
/* What `erg pdu probe` asks an SNMP PDU beyond a poll: which rows each
 * level has, their names, and where each value came from. Blocking, one
 * source, through the session's synchronous requests. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "snmp_int.h"

void erg_pdu_snmp_want_all(struct erg_pdu_source *src) {
  struct snmp_priv *p = src->priv;
  if (!p)
    return;
  p->want_all = true;
  for (int c = 0; c < ERG_PDU_MAX_CHANNELS; c++) {
    struct snmp_chan *ch = &p->ch[c];
    *ch = (struct snmp_chan){0};
    for (int q = 0; q <= ERG_Q_N; q++)
      ch->raw[q] = NAN, ch->si_prefix[q] = 9;
  }
}

/* GETs of tmpl expanded for each of nums (and units, NULL: none), in
 * chunks of ERG_SNMP_GET_MAX. */
static int probe_get_rows(struct erg_pdu_source *src, const char *tmpl, const int *nums,
                          const char (*units)[ERG_PDU_UNIT_MAX], int n, bool *present, double *vals,
                          char *strs, size_t slen, char *why, size_t whylen) {
  for (int first = 0; first < n; first += ERG_SNMP_GET_MAX) {
    int k = n - first < ERG_SNMP_GET_MAX ? n - first : ERG_SNMP_GET_MAX;
    char oids[ERG_SNMP_GET_MAX][ERG_SNMP_OID_MAX];
    const char *ptrs[ERG_SNMP_GET_MAX];
    for (int i = 0; i < k; i++) {
      const char *u = units ? units[first + i] : NULL;
      if (u && u[0] ? erg_snmp_oid_expand_unit(tmpl, u, nums[first + i], oids[i], sizeof oids[i])
                    : erg_snmp_oid_expand(tmpl, nums[first + i], oids[i], sizeof oids[i]))
        return -1;
      ptrs[i] = oids[i];
    }
    if (erg_snmp_get(src, ptrs, k, present + first, vals + first,
                     strs ? strs + (size_t)first * slen : NULL, slen, why, whylen))
      return -1;
  }
  return 0;
}

/* probe_walk_units' rows so far. */
struct walk_units {
  const char *t;
  int *nums, n, max;
  char (*units)[ERG_PDU_UNIT_MAX];
};

static int walk_units_each(const char *got, void *arg) {
  struct walk_units *w = arg;
  char unit[ERG_PDU_UNIT_MAX];
  int num;
  if (!erg_snmp_oid_match(w->t, got, unit, sizeof unit, &num) || !erg_pdu_unit_ok(unit))
    return 0;
  bool dup = false;
  for (int i = 0; i < w->n && !dup; i++)
    dup = w->nums[i] == num && !strcmp(w->units[i], unit);
  if (!dup) {
    w->nums[w->n] = num;
    snprintf(w->units[w->n++], ERG_PDU_UNIT_MAX, "%s", unit);
  }
  return w->n >= w->max;
}

/* Every row of template t (with "*" arcs): a walk from the arcs before its
 * first "*", each row matched against t (unit arcs and entity number),
 * duplicates left out, in the agent's order. Returns how many, -1 with a
 * reason when the agent does not answer. */
static int probe_walk_units(struct erg_pdu_source *src, const char *t, int *nums,
                            char (*units)[ERG_PDU_UNIT_MAX], int max, char *why, size_t whylen) {
  char pre[ERG_SNMP_OID_MAX];
  bool scalar;
  if (erg_snmp_probe_start(t, pre, sizeof pre, &scalar) || max <= 0)
    return 0;
  struct walk_units w = {.t = t, .nums = nums, .max = max, .units = units};
  if (erg_snmp_walk(src, pre, 8192, walk_units_each, &w, why, whylen) && !w.n)
    return -1;
  return w.n;
}

/* Rows of several units, limited per unit as a single unit's are: the
 * level's max (the highest entity number taken) and each unit's own count
 * (the count template with that unit's arcs; it keeps the unit's first
 * rows in the agent's order when it is smaller, leaving out stray rows
 * such as a single-phase unit's zero rows of phases 2 and 3). Returns how
 * many rows are kept, -1 with a reason when the agent does not answer. */
static int probe_unit_limits(struct erg_pdu_source *src, const struct erg_snmp_level *lv, int *nums,
                             char (*units)[ERG_PDU_UNIT_MAX], int n, char *why, size_t whylen) {
  static char seen[ERG_PDU_PROBE_MAX_ROWS][ERG_PDU_UNIT_MAX];
  int cap[ERG_PDU_PROBE_MAX_ROWS], used[ERG_PDU_PROBE_MAX_ROWS], nseen = 0, k = 0;
  for (int i = 0; i < n && i < ERG_PDU_PROBE_MAX_ROWS; i++) {
    if (lv->max > 0 && nums[i] > lv->max)
      continue;
    int u = 0;
    while (u < nseen && strcmp(seen[u], units[i]) != 0)
      u++;
    if (u == nseen) {
      snprintf(seen[u], ERG_PDU_UNIT_MAX, "%s", units[i]);
      cap[u] = ERG_PDU_PROBE_MAX_ROWS;
      used[u] = 0;
      nseen++;
      char oid[ERG_SNMP_OID_MAX];
      if (lv->count && erg_snmp_oid_expand_unit(lv->count, units[i], 0, oid, sizeof oid) == 0) {
        const char *o = oid;
        bool present;
        double v;
        if (erg_snmp_get(src, &o, 1, &present, &v, NULL, 0, why, whylen))
          return -1;
        if (present && v >= 1 && v < cap[u])
          cap[u] = (int)v;
      }
    }
    if (used[u] >= cap[u])
      continue;
    used[u]++;
    nums[k] = nums[i];
    if (k != i)
      memmove(units[k], units[i], ERG_PDU_UNIT_MAX);
    k++;
  }
  return k;
}

int erg_pdu_snmp_level_rows(struct erg_pdu_source *src, int level, int *nums,
                            char (*units)[ERG_PDU_UNIT_MAX], int max, char *why, size_t whylen) {
  const struct snmp_priv *p = src->priv;
  for (int i = 0; units && i < max; i++)
    units[i][0] = '\0';
  if (!p || !p->prof || level < 0 || level >= ERG_PDU_NLEVELS)
    return 0;
  const struct erg_snmp_level *lv = &p->prof->lv[level];
  if (p->prof->names) { /* the entities whose variables were found */
    if (erg_snmp_names_ensure(src, why, whylen))
      return -1;
    erg_snmp_borrow_voltage((struct snmp_priv *)p);
    return erg_snmp_names_entities(p, level, nums, lv->max > 0 && lv->max < max ? lv->max : max);
  }
  if (!erg_snmp_level_row_oid(lv) || max < 1)
    return 0;
  const struct erg_snmp_level *blv = p->base ? &p->base->lv[level] : NULL;
  if (units && blv && erg_snmp_level_wilds(blv) > 0) {
    /* Rows of every unit the device has (daisy-chain members, cords):
     * the first column that has rows, each row filtered as below. */
    int n = 0;
    const char *t;
    for (int k = 0; n == 0 && (t = erg_snmp_level_row_col(blv, k)); k++)
      if (strchr(t, '*') && (n = probe_walk_units(src, t, nums, units, max, why, whylen)) < 0)
        return -1;
    if (n > 0 && (n = probe_unit_limits(src, blv, nums, units, n, why, whylen)) < 0)
      return -1;
    if (n <= 0 || !blv->filter)
      return n;
    bool present[ERG_PDU_PROBE_MAX_ROWS];
    double vals[ERG_PDU_PROBE_MAX_ROWS];
    if (n > ERG_PDU_PROBE_MAX_ROWS)
      n = ERG_PDU_PROBE_MAX_ROWS;
    if (probe_get_rows(src, blv->filter, nums, (const char(*)[ERG_PDU_UNIT_MAX])units, n, present,
                       vals, NULL, 0, why, whylen))
      return -1;
    int k = 0;
    for (int i = 0; i < n; i++)
      if (present[i] && vals[i] == (double)blv->filter_value) {
        nums[k] = nums[i];
        memmove(units[k++], units[i], ERG_PDU_UNIT_MAX);
      }
    return k;
  }
  /* The first column that has rows: firmware leaves out some (names). */
  int n = 0;
  const char *t;
  for (int k = 0; n == 0 && (t = erg_snmp_level_row_col(lv, k)); k++) {
    char prefix[ERG_SNMP_OID_MAX];
    const char *suffix;
    if (erg_snmp_oid_split(t, prefix, sizeof prefix, &suffix)) { /* a scalar */
      bool present;
      double v;
      char str[8];
      nums[0] = 1;
      if (erg_snmp_get(src, &t, 1, &present, &v, str, sizeof str, why, whylen))
        return -1;
      n = present ? 1 : 0;
      continue;
    }
    if (lv->filter && erg_snmp_oid_split(lv->filter, prefix, sizeof prefix, &suffix))
      return 0;
    n = erg_snmp_walk_rows(src, prefix, suffix, nums, max, why, whylen);
    if (n < 0)
      return -1;
    if (lv->filter)
      break;
  }
  if (n > 0 && lv->count) { /* the device's own count wins over stray rows */
    bool present;
    double v;
    if (erg_snmp_get(src, &lv->count, 1, &present, &v, NULL, 0, why, whylen) == 0 && present &&
        v >= 1 && v < n)
      n = (int)v;
  }
  if (n <= 0 || !lv->filter)
    return n;
  bool present[ERG_PDU_MAX_CHANNELS * 4];
  double vals[ERG_PDU_MAX_CHANNELS * 4];
  if (n > (int)(sizeof vals / sizeof vals[0]))
    n = (int)(sizeof vals / sizeof vals[0]);
  if (probe_get_rows(src, lv->filter, nums, NULL, n, present, vals, NULL, 0, why, whylen))
    return -1;
  int k = 0;
  for (int i = 0; i < n; i++)
    if (present[i] && vals[i] == (double)lv->filter_value)
      nums[k++] = nums[i];
  return k;
}

/* Labels of named-variable rows: the text of each entity's label row. */
static int probe_named_labels(struct erg_pdu_source *src, int level, const int *nums, int n,
                              char *names, size_t namelen, char *why, size_t whylen) {
  const struct snmp_priv *p = src->priv;
  for (int first = 0; first < n;) {
    const char *oids[ERG_SNMP_GET_MAX];
    int at[ERG_SNMP_GET_MAX], k = 0;
    for (; first < n && k < ERG_SNMP_GET_MAX; first++) {
      const struct erg_snmp_col *c = erg_snmp_names_col(p, level, nums[first], ERG_Q_NAME);
      if (c)
        at[k] = first, oids[k++] = c->oid;
    }
    bool present[ERG_SNMP_GET_MAX];
    double vals[ERG_SNMP_GET_MAX];
    char text[ERG_SNMP_GET_MAX][64];
    if (k && erg_snmp_get(src, oids, k, present, vals, &text[0][0], sizeof text[0], why, whylen))
      return -1;
    for (int i = 0; i < k; i++)
      snprintf(names + (size_t)at[i] * namelen, namelen, "%s", text[i]);
  }
  return 0;
}

int erg_pdu_snmp_row_names(struct erg_pdu_source *src, int level, const int *nums,
                           const char (*units)[ERG_PDU_UNIT_MAX], int n, char *names,
                           size_t namelen, char *why, size_t whylen) {
  const struct snmp_priv *p = src->priv;
  memset(names, 0, (size_t)n * namelen);
  const char *t = p && p->prof ? p->prof->lv[level].q[ERG_Q_NAME].oid : NULL;
  bool any_unit = false;
  for (int i = 0; units && i < n; i++)
    any_unit |= units[i][0] != '\0';
  if (any_unit && p->base) /* rows of several units: the templates with their "*" */
    t = p->base->lv[level].q[ERG_Q_NAME].oid;
  if (n > ERG_PDU_MAX_CHANNELS)
    n = ERG_PDU_MAX_CHANNELS;
  if (p && p->prof && p->prof->names && n > 0)
    return probe_named_labels(src, level, nums, n, names, namelen, why, whylen);
  if (!t || n <= 0)
    return 0;
  bool present[ERG_PDU_MAX_CHANNELS];
  double vals[ERG_PDU_MAX_CHANNELS];
  return probe_get_rows(src, t, nums, any_unit ? units : NULL, n, present, vals, names, namelen,
                        why, whylen);
}

void erg_pdu_snmp_chan_detail(const struct erg_pdu_source *src, int c,
                              struct erg_snmp_chan_detail *d) {
  const struct snmp_priv *p = src->priv;
  for (int q = 0; q <= ERG_Q_N; q++) {
    const struct erg_snmp_col *col = p ? erg_snmp_chan_col(p, &src->cfg, c, q) : NULL;
    d->value[q] = d->scale[q] = NAN;
    d->oid[q][0] = '\0';
    d->unit[q] = col && !col->var ? col->unit : NULL;
    if (!col)
      continue;
    /* The factor the physics checks settled on (snmp_values.c): a
     * rescale shows in the factor, a refused value as absent. */
    double fix = p->ch[c].fix[q] != 0 ? p->ch[c].fix[q] : 1.0;
    d->scale[q] = erg_snmp_col_scale(col, &p->ch[c], q) * (isnan(fix) ? 1.0 : fix);
    d->value[q] = q == ERG_Q_NAME || isnan(fix) ? NAN : p->ch[c].raw[q] * d->scale[q];
    int n = q == ERG_Q_N ? 1 : src->cfg.channels[c];
    if (erg_snmp_chan_oid(p, &src->cfg, c, q, 0, n, d->oid[q], sizeof d->oid[q]))
      d->oid[q][0] = '\0';
  }
}

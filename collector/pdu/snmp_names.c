// SPDX-License-Identifier: GPL-3.0-or-later
/* Named-variable tables: agents that list every reading as one row of a
 * generic table (RITTAL-CMC-III-MIB's cmcIIIVarTable), the row telling what
 * it is by its name only, at an index that depends on what is plugged in.
 * Once per source, blocking on the SNMP thread as detection is, the name
 * column is walked (every device's rows), the rows whose name is one of the
 * profile's variables kept, and their scale and unit read; from then on a
 * variable is one more column whose OID is fixed for that source, and the
 * poll engine reads it like any other. The profile's optional stamp scalar
 * (a "rows last changed" time) is read every round: when it moves, the
 * rows may have moved too, and the names are resolved again. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snmp_int.h"

#define NAMES_BULK 32        /* rows per GETBULK */
#define NAMES_MAX_ROWS 20000 /* a walk stops there, whatever the agent says */
#define NAMES_MAX 4096       /* variables kept (a 48-socket PDU has ~300) */

void erg_snmp_names_free(struct snmp_names_map *m) {
  free(m->v);
  *m = (struct snmp_names_map){.stamp = NAN};
}

/* The next rows after from: a GETBULK of up to reps (SNMPv2c/v3), a
 * GETNEXT (SNMPv1, or reps 1). 0 with *resp, -1 with a reason, -2 tooBig. */
static int names_next(struct erg_pdu_source *src, const char *from, int reps, netsnmp_pdu **resp,
                      char *why, size_t whylen) {
  struct snmp_priv *p = src->priv;
  if (src->cfg.snmp_version == 1 || reps <= 1)
    return erg_snmp_sync(src, SNMP_MSG_GETNEXT, &from, 1, resp, why, whylen);
  *resp = NULL;
  if (!p->sess && erg_snmp_session_open(src, p, why, whylen))
    return -1;
  oid o[MAX_OID_LEN];
  size_t len;
  netsnmp_pdu *req = snmp_pdu_create(SNMP_MSG_GETBULK);
  if (!req || erg_snmp_oid_parse(from, o, &len)) {
    if (req)
      snmp_free_pdu(req);
    snprintf(why, whylen, "cannot build a GETBULK from %s", from);
    return -1;
  }
  req->non_repeaters = 0;
  req->max_repetitions = reps;
  snmp_add_null_var(req, o, len);
  netsnmp_pdu *r = NULL;
  int st = snmp_sess_synch_response(p->sess, req, &r); /* frees req */
  if (st == STAT_SUCCESS && r && r->command != SNMP_MSG_REPORT && r->errstat == SNMP_ERR_TOOBIG) {
    snmp_free_pdu(r);
    return -2;
  }
  if (st == STAT_SUCCESS && r && r->command != SNMP_MSG_REPORT && r->errstat == SNMP_ERR_NOERROR) {
    *resp = r;
    return 0;
  }
  if (st == STAT_TIMEOUT)
    snprintf(why, whylen, "%s (%s): no answer within %.3g s", src->cfg.host, p->peer, p->budget_s);
  else if (st == STAT_SUCCESS && r && r->command != SNMP_MSG_REPORT)
    snprintf(why, whylen, "%s (%s): agent said %s to a GETBULK", src->cfg.host, p->peer,
             snmp_errstring(r->errstat));
  else
    snprintf(why, whylen, "%s (%s): GETBULK failed", src->cfg.host, p->peer);
  if (r)
    snmp_free_pdu(r);
  return -1;
}

/* Adds the row (row: its index, ".device.var") named name, if it is one
 * of prof's variables and none of its kind was seen before. */
static int names_add(const struct erg_snmp_profile *prof, struct snmp_names_map *m, size_t *cap,
                     const char *name, const char *row) {
  int level, entity, q;
  if (!erg_snmp_names_classify(prof, name, &level, &entity, &q))
    return 0;
  const char *col = q == ERG_Q_NAME ? prof->names->text : prof->names->value;
  if (!col)
    return 0;
  for (size_t i = 0; i < m->n; i++) /* a second device with the same names: the first wins */
    if (m->v[i].level == level && m->v[i].entity == entity && m->v[i].q == q)
      return 0;
  if (m->n == *cap) {
    if (*cap >= NAMES_MAX)
      return 0;
    size_t nc = *cap ? 2 * *cap : 64;
    struct snmp_named *v = realloc(m->v, nc * sizeof *v);
    if (!v)
      return -1;
    m->v = v;
    *cap = nc;
  }
  struct snmp_named *e = &m->v[m->n];
  *e = (struct snmp_named){.level = (unsigned char)level,
                           .q = (unsigned char)q,
                           .entity = entity,
                           .col = prof->lv[level].q[q]};
  if ((size_t)snprintf(e->oid, sizeof e->oid, "%s%s", col, row) >= sizeof e->oid)
    return 0;
  m->n++;
  return 0;
}

/* Walks the name column: every row whose name is one of prof's variables
 * goes into m. */
static int names_walk(struct erg_pdu_source *src, const struct erg_snmp_profile *prof,
                      struct snmp_names_map *m, char *why, size_t whylen) {
  const char *prefix = prof->names->name;
  size_t plen = strlen(prefix), cap = 0;
  char cur[ERG_SNMP_OID_MAX];
  snprintf(cur, sizeof cur, "%s", prefix);
  /* The first row by GETNEXT: most agents detection asks have no such
   * column, and they never see a GETBULK. */
  int reps = 1, rows = 0;
  for (bool done = false; !done && rows < NAMES_MAX_ROWS;) {
    netsnmp_pdu *resp;
    int rc = names_next(src, cur, reps, &resp, why, whylen);
    /* tooBig: fewer rows; an error or no answer to a GETBULK (an agent
     * that does not do them; it answered GETNEXTs): GETNEXT from then on. */
    if (rc && rc != -2 && reps > 1) {
      reps = 1;
      continue;
    }
    if (rc == -2 && reps > 1) {
      reps /= 2;
      continue;
    }
    if (rc == -2)
      snprintf(why, whylen, "%s: agent said tooBig to a GETNEXT", src->cfg.host);
    if (rc)
      return -1;
    const netsnmp_variable_list *v = resp->errstat ? NULL : resp->variables;
    done = v == NULL; /* SNMPv1 noSuchName: past the end of the MIB */
    for (; v && !done; v = v->next_variable, rows++) {
      char got[ERG_SNMP_OID_MAX], name[96];
      erg_snmp_oid_format(v->name, v->name_length, got, sizeof got);
      /* Leaving the column, or an agent that does not move on (or loops
       * back): done. */
      done = !erg_snmp_vb_present(v) || strncmp(got, prefix, plen) != 0 || got[plen] != '.' ||
             !erg_snmp_oid_after(got, cur);
      if (done)
        break;
      snprintf(cur, sizeof cur, "%s", got);
      if (reps == 1 && rows == 0 && src->cfg.snmp_version != 1)
        reps = NAMES_BULK; /* the column exists: the rest in bulk */
      erg_snmp_vb_string(v, name, sizeof name);
      if (names_add(prof, m, &cap, name, got + plen)) {
        snmp_free_pdu(resp);
        snprintf(why, whylen, "out of memory");
        return -1;
      }
    }
    snmp_free_pdu(resp);
  }
  return 0;
}

/* scale with a row's scale column applied: > 0 multiply, < 0 divide (by
 * division: 3.6e6 / 10 is exact, 3.6e6 x 0.1 is not), 0 as is. */
static double names_scaled(double scale, double s) {
  return s > 0 ? scale * s : s < 0 ? scale / -s : scale;
}

/* Reads the scale and unit of m's value rows (GETs of up to 16 OIDs) and
 * applies them; a row whose scale is missing, or in another unit than the
 * profile's, leaves m (counted, the first said in m->skip_why). */
static int names_scales(struct erg_pdu_source *src, const struct erg_snmp_profile *prof,
                        struct snmp_names_map *m, char *why, size_t whylen) {
  enum { PER = ERG_SNMP_GET_MAX / 2 };
  const struct erg_snmp_names *t = prof->names;
  size_t keep = 0;
  for (size_t first = 0; first < m->n; first += PER) {
    char oids[ERG_SNMP_GET_MAX][ERG_SNMP_OID_MAX], units[ERG_SNMP_GET_MAX][16];
    const char *ptr[ERG_SNMP_GET_MAX];
    bool present[ERG_SNMP_GET_MAX];
    double vals[ERG_SNMP_GET_MAX];
    size_t k = m->n - first < PER ? m->n - first : PER;
    int n = 0, at[PER][2]; /* where each row's scale and unit are in oids, -1 not asked */
    for (size_t i = 0; i < k; i++) {
      const struct snmp_named *e = &m->v[first + i];
      at[i][0] = at[i][1] = -1;
      if (e->q == ERG_Q_NAME) /* a label: its text is all there is */
        continue;
      const char *row = e->oid + strlen(t->value);
      if (t->scale) {
        snprintf(oids[n], sizeof oids[n], "%s%s", t->scale, row);
        ptr[n] = oids[n];
        at[i][0] = n++;
      }
      if (t->unit && e->col.unit) {
        snprintf(oids[n], sizeof oids[n], "%s%s", t->unit, row);
        ptr[n] = oids[n];
        at[i][1] = n++;
      }
    }
    if (n && erg_snmp_get(src, ptr, n, present, vals, &units[0][0], sizeof units[0], why, whylen))
      return -1;
    for (size_t i = 0; i < k; i++) { /* keep <= first + i: only rows already seen move */
      struct snmp_named e = m->v[first + i];
      int s = at[i][0], u = at[i][1];
      if (s >= 0 && !(present[s] && isfinite(vals[s]))) {
        if (!m->skipped++)
          snprintf(m->skip_why, sizeof m->skip_why, "%s %d: no scale at %.100s",
                   erg_pdu_level_name(e.level), e.entity, oids[s]);
        continue;
      }
      if (u >= 0 && strcmp(units[u], e.col.unit) != 0) {
        if (!m->skipped++)
          snprintf(m->skip_why, sizeof m->skip_why, "%s %d: unit '%.16s' at %.100s, not '%.8s'",
                   erg_pdu_level_name(e.level), e.entity, units[u], oids[u], e.col.unit);
        continue;
      }
      if (s >= 0)
        e.col.scale = names_scaled(e.col.scale, vals[s]);
      m->v[keep++] = e;
    }
  }
  m->n = keep;
  return 0;
}

static int named_cmp(const void *a, const void *b) {
  const struct snmp_named *x = a, *y = b;
  if (x->level != y->level)
    return x->level < y->level ? -1 : 1;
  if (x->entity != y->entity)
    return x->entity < y->entity ? -1 : 1;
  return (x->q > y->q) - (x->q < y->q);
}

int erg_snmp_names_resolve(struct erg_pdu_source *src, const struct erg_snmp_profile *prof,
                           struct snmp_names_map *out, char *why, size_t whylen) {
  *out = (struct snmp_names_map){.stamp = NAN};
  if (!prof->names)
    return 0;
  if (prof->names->stamp) { /* first: rows that change meanwhile then count as changed */
    bool present;
    double v;
    if (erg_snmp_get(src, &prof->names->stamp, 1, &present, &v, NULL, 0, why, whylen))
      return -1;
    out->stamp = present ? v : NAN;
  }
  if (names_walk(src, prof, out, why, whylen) || names_scales(src, prof, out, why, whylen)) {
    erg_snmp_names_free(out);
    return -1;
  }
  if (out->n)
    qsort(out->v, out->n, sizeof *out->v, named_cmp);
  for (size_t i = 0; i < out->n; i++) { /* a concrete OID: "%d" expands to itself */
    struct snmp_named *e = &out->v[i];
    e->col.oid = e->oid;
    e->col.digits = e->col.si_prefix = e->col.var = e->col.unit = NULL;
  }
  return 0;
}

unsigned erg_snmp_names_levels(const struct snmp_names_map *m) {
  unsigned l = 0;
  for (size_t i = 0; i < m->n; i++)
    if (m->v[i].q != ERG_Q_NAME)
      l |= 1u << m->v[i].level;
  return l;
}

int erg_snmp_names_ensure(struct erg_pdu_source *src, char *why, size_t whylen) {
  struct snmp_priv *p = src->priv;
  if (!p->prof || !p->prof->names || p->names_ready)
    return 0;
  struct snmp_names_map m;
  char err[256];
  if (erg_snmp_names_resolve(src, p->prof, &m, err, sizeof err)) {
    snprintf(why, whylen, "%s: profile %s: variable names not read: %s", src->cfg.host,
             p->prof->name, err);
    return -1;
  }
  erg_snmp_names_install(p, &m);
  return 0;
}

void erg_snmp_names_install(struct snmp_priv *p, struct snmp_names_map *m) {
  erg_snmp_names_free(&p->names);
  p->names = *m;
  *m = (struct snmp_names_map){.stamp = NAN};
  p->names_ready = true;
  size_t o = strlen(p->ident.why);
  if (p->names.skipped && o < sizeof p->ident.why)
    snprintf(p->ident.why + o, sizeof p->ident.why - o, "; %d variable%s left out (%s)",
             p->names.skipped, p->names.skipped == 1 ? "" : "s", p->names.skip_why);
}

const struct erg_snmp_col *erg_snmp_names_col(const struct snmp_priv *p, int level, int entity,
                                              int q) {
  if (!p->names.n)
    return NULL;
  struct snmp_named key = {.level = (unsigned char)level, .q = (unsigned char)q, .entity = entity};
  const struct snmp_named *e = bsearch(&key, p->names.v, p->names.n, sizeof key, named_cmp);
  return e ? &e->col : NULL;
}

int erg_snmp_names_entities(const struct snmp_priv *p, int level, int *nums, int max) {
  int n = 0;
  for (size_t i = 0; i < p->names.n && n < max; i++) {
    const struct snmp_named *e = &p->names.v[i];
    if (e->level == level && e->q != ERG_Q_NAME && (!n || nums[n - 1] != e->entity))
      nums[n++] = e->entity;
  }
  return n;
}

const char *erg_snmp_names_stamp_oid(const struct snmp_priv *p) {
  /* Only where the agent had it: an OID it lacks fails a whole SNMPv1 GET. */
  return p->prof && p->prof->names && p->names_ready && isfinite(p->names.stamp)
             ? p->prof->names->stamp
             : NULL;
}

bool erg_snmp_names_stale(struct snmp_priv *p, double v) {
  bool was = isfinite(p->names.stamp), is = isfinite(v);
  if (was == is && (!was || v == p->names.stamp))
    return false;
  p->names_ready = false;
  return true;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* The simulator's SNMP agent serving a recorded walk of a real PDU (snmpsim
 * .snmprec, as in ../shared/fixtures/pdu-recordings): GET, GETNEXT and
 * GETBULK (v1/v2c, any community) answer every OID with its recorded type
 * and value, except the columns erg reads for the entities bound to
 * simulated nodes: those follow the node's power. Which columns those are
 * comes from erg's own profile registry (collector/pdu/walk_detect.c), so
 * ergd polls exactly the OIDs that move, with the scales it will apply.
 * The values a bound entity shows, from the node's power W:
 *   active power  W / factor
 *   apparent      W / PF / factor (the recorded PF, 1 where none or bad)
 *   current       W / PF / V / factor (the recorded or borrowed voltage)
 *   energy        recorded + (J since the start) / factor, floored, kept
 *                 within its type (Counter32 2^32, INTEGER 2^31)
 * where factor is what erg multiplies the raw value by (the profile's
 * scale with the walk's decimal digits or SI prefix). */
#include <arpa/inet.h>
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>

#include "erg_common.h"
#include "sim_snmp.h"
#include "sim_walk.h"

#define WALK_BULK_BYTES 16000 /* a GETBULK answer stays well under a datagram */
#define WALK_BULK_VARS 1000

struct walk_row {
  oid *name;
  size_t len;
  u_char type; /* the ASN.1 tag, as snmprec writes it */
  long ival;   /* INTEGER; Counter32, Gauge32, TimeTicks as unsigned */
  struct counter64 c64;
  u_char *bytes; /* OCTET STRING, IpAddress, Opaque */
  size_t blen;
  oid *oval; /* OBJECT IDENTIFIER */
  size_t olen;
  size_t line; /* in the file: of a repeated OID the first wins */
};

/* A row that follows a node or a --sum. */
struct walk_live {
  size_t row;
  int q; /* ERG_Q_POWER, ERG_Q_VA, ERG_Q_CURRENT or ERG_Q_ENERGY */
  int node;
  double factor;       /* raw x factor = W, VA, A or J */
  double pf, volts;    /* VA = W / pf; A = VA / volts */
  double start_raw;    /* energy: the recorded counter ... */
  double start_joules; /* ... and the node's energy when it was bound */
  int decimals;        /* a number recorded as text: its digits after the point */
  const char *unit;    /* ... and the unit erg reads it with (NULL none) */
};

struct sim_walk {
  struct walk_row *rows;
  size_t n;
  struct walk_live *live;
  size_t nlive, caplive;
  const struct erg_snmp_profile *prof;
  struct sim *s;
  void *ss;
};

static int walk_oid_parse(const char *s, size_t slen, oid *out, size_t *len) {
  size_t n = 0, i = 0;
  if (i < slen && s[i] == '.')
    i++;
  while (i < slen) {
    if (!isdigit((unsigned char)s[i]) || n >= MAX_OID_LEN)
      return -1;
    unsigned long v = 0;
    while (i < slen && isdigit((unsigned char)s[i]))
      v = v * 10 + (unsigned long)(s[i++] - '0');
    out[n++] = (oid)v;
    if (i < slen && s[i++] != '.')
      return -1;
  }
  *len = n;
  return n ? 0 : -1;
}

static int walk_hex(const char *s, size_t len, u_char *out, size_t *olen) {
  if (len % 2)
    return -1;
  for (size_t i = 0; i < len; i += 2) {
    unsigned v;
    char two[3] = {s[i], s[i + 1], 0};
    if (!isxdigit((unsigned char)s[i]) || !isxdigit((unsigned char)s[i + 1]) ||
        sscanf(two, "%x", &v) != 1)
      return -1;
    out[i / 2] = (u_char)v;
  }
  *olen = len / 2;
  return 0;
}

/* One "OID|TYPE|VALUE" line into r; -1 when it is not one. */
static int walk_parse_line(char *line, struct walk_row *r) {
  memset(r, 0, sizeof *r); /* on failure the caller frees what was allocated */
  char *b1 = strchr(line, '|'), *b2 = b1 ? strchr(b1 + 1, '|') : NULL;
  if (!b2)
    return -1;
  oid tmp[MAX_OID_LEN];
  size_t len;
  if (walk_oid_parse(line, (size_t)(b1 - line), tmp, &len) || len < 2)
    return -1;
  char *end;
  long tag = strtol(b1 + 1, &end, 10);
  bool hex = *end == 'x';
  if (end == b1 + 1 || (end != b2 && !(hex && end + 1 == b2)) || tag < 0 || tag > 255)
    return -1;
  const char *val = b2 + 1;
  size_t vlen = strlen(val);
  r->type = (u_char)tag;
  if (!(r->name = malloc(len * sizeof(oid))))
    return -1;
  memcpy(r->name, tmp, len * sizeof(oid));
  r->len = len;
  u_char *raw = malloc(vlen + 1);
  size_t rlen = vlen;
  if (!raw)
    return -1;
  if (hex ? walk_hex(val, vlen, raw, &rlen) : (memcpy(raw, val, vlen), 0)) {
    free(raw);
    return -1;
  }
  raw[rlen] = '\0';
  int rc = 0;
  switch (r->type) {
    case ASN_OCTET_STR:
    case ASN_OPAQUE:
      r->bytes = raw, r->blen = rlen, raw = NULL;
      break;
    case ASN_IPADDRESS: {
      struct in_addr a;
      if (rlen == 4 && hex) {
        r->bytes = raw, r->blen = 4, raw = NULL;
      } else if (inet_pton(AF_INET, (char *)raw, &a) == 1 && (r->bytes = malloc(4))) {
        memcpy(r->bytes, &a, 4);
        r->blen = 4;
      } else {
        rc = -1;
      }
      break;
    }
    case ASN_OBJECT_ID:
      if (walk_oid_parse((char *)raw, rlen, tmp, &len) || !(r->oval = malloc(len * sizeof(oid)))) {
        rc = -1;
        break;
      }
      memcpy(r->oval, tmp, len * sizeof(oid));
      r->olen = len;
      break;
    case ASN_NULL:
      break;
    case ASN_INTEGER:
    case ASN_COUNTER:
    case ASN_GAUGE:
    case ASN_TIMETICKS:
    case ASN_COUNTER64: {
      char *e;
      if (r->type == ASN_INTEGER) {
        long long v = strtoll((char *)raw, &e, 10);
        r->ival = (long)(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v);
      } else {
        unsigned long long v = strtoull((char *)raw, &e, 10);
        if (r->type == ASN_COUNTER64) {
          r->c64.high = (u_long)(v >> 32);
          r->c64.low = (u_long)(v & 0xffffffffULL);
        } else {
          r->ival = (long)(v > 0xffffffffULL ? 0xffffffffULL : v);
        }
      }
      rc = e == (char *)raw || *e ? -1 : 0;
      break;
    }
    default:
      rc = -1; /* snmpsim's variation modules and the like: not a recorded value */
  }
  free(raw);
  return rc;
}

static void walk_row_free(struct walk_row *r) {
  free(r->name);
  free(r->bytes);
  free(r->oval);
}

static int walk_row_cmp(const void *a, const void *b) {
  const struct walk_row *x = a, *y = b;
  return snmp_oid_compare(x->name, x->len, y->name, y->len);
}

static int walk_row_sort(const void *a, const void *b) {
  const struct walk_row *x = a, *y = b;
  int c = walk_row_cmp(a, b);
  return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

void sim_walk_free(struct sim_walk *w) {
  if (!w)
    return;
  for (size_t i = 0; i < w->n; i++)
    walk_row_free(&w->rows[i]);
  free(w->rows);
  free(w->live);
  free(w);
}

struct sim_walk *sim_walk_load(const char *path, char *why, size_t whylen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(why, whylen, "cannot read %s", path);
    return NULL;
  }
  struct sim_walk *w = calloc(1, sizeof *w);
  size_t cap = 0, lineno = 0;
  char *line = NULL;
  size_t linecap = 0;
  ssize_t got;
  while (w && (got = getline(&line, &linecap, f)) >= 0) {
    lineno++;
    while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
      line[--got] = '\0';
    size_t k = 0;
    while (line[k] == ' ' || line[k] == '\t')
      k++;
    if (!line[k] || line[k] == '#')
      continue;
    if (w->n == cap) {
      struct walk_row *g = realloc(w->rows, (cap = cap ? 2 * cap : 1024) * sizeof *g);
      if (!g) {
        snprintf(why, whylen, "out of memory");
        goto fail;
      }
      w->rows = g;
    }
    if (walk_parse_line(line + k, &w->rows[w->n])) {
      walk_row_free(&w->rows[w->n]);
      snprintf(why, whylen, "%s:%zu: not an OID|TYPE|VALUE line of a recorded type", path, lineno);
      goto fail;
    }
    w->rows[w->n++].line = lineno;
  }
  free(line);
  fclose(f);
  if (!w) {
    snprintf(why, whylen, "out of memory");
    return NULL;
  }
  if (!w->n) {
    snprintf(why, whylen, "%s: no OIDs", path);
    sim_walk_free(w);
    return NULL;
  }
  /* Recordings are usually in order, but GETNEXT must not depend on it;
   * of an OID recorded twice the first line wins (ties sort by line). */
  qsort(w->rows, w->n, sizeof *w->rows, walk_row_sort);
  size_t o = 0;
  for (size_t i = 0; i < w->n; i++) {
    if (o && !walk_row_cmp(&w->rows[o - 1], &w->rows[i])) {
      walk_row_free(&w->rows[i]);
      continue;
    }
    w->rows[o++] = w->rows[i];
  }
  w->n = o;
  return w;
fail:
  free(line);
  fclose(f);
  sim_walk_free(w);
  return NULL;
}

size_t sim_walk_rows(const struct sim_walk *w) { return w->n; }

/* The row at name (next false) or the first after it; NULL none. v1 has
 * no Counter64 (RFC 3584): a v1 manager never sees one. */
static const struct walk_row *walk_find(const struct sim_walk *w, const oid *name, size_t len,
                                        bool next, bool v1) {
  size_t lo = 0, hi = w->n; /* first row >= name */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (snmp_oid_compare(w->rows[mid].name, w->rows[mid].len, name, len) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (!next) {
    const struct walk_row *r = lo < w->n ? &w->rows[lo] : NULL;
    return r && !snmp_oid_compare(r->name, r->len, name, len) && !(v1 && r->type == ASN_COUNTER64)
               ? r
               : NULL;
  }
  if (lo < w->n && !snmp_oid_compare(w->rows[lo].name, w->rows[lo].len, name, len))
    lo++;
  while (lo < w->n && v1 && w->rows[lo].type == ASN_COUNTER64)
    lo++;
  return lo < w->n ? &w->rows[lo] : NULL;
}

/* A row's value as erg's driver reads a varbind (erg_snmp_vb_number). */
static double walk_row_number(const struct walk_row *r) {
  switch (r->type) {
    case ASN_INTEGER:
      return (double)r->ival;
    case ASN_COUNTER:
    case ASN_GAUGE:
    case ASN_TIMETICKS:
      return (double)((unsigned long)r->ival & 0xffffffffUL);
    case ASN_COUNTER64:
      return (double)r->c64.high * 4294967296.0 + (double)r->c64.low;
    case ASN_OCTET_STR:
      return erg_snmp_text_number(r->bytes, r->blen);
    default:
      return NAN;
  }
}

static void walk_oid_text(const oid *o, size_t n, char *out, size_t outlen) {
  size_t k = 0;
  out[0] = '\0';
  for (size_t i = 0; i < n && k < outlen; i++)
    k += (size_t)snprintf(out + k, outlen - k, i ? ".%lu" : "%lu", (unsigned long)o[i]);
}

static int walk_lookup(void *ctx, const char *q, bool next, char *name, size_t namelen, int *type,
                       double *num, char *text, size_t textlen) {
  const struct sim_walk *w = ctx;
  oid o[MAX_OID_LEN];
  size_t len;
  const struct walk_row *r =
      walk_oid_parse(q, strlen(q), o, &len) ? NULL : walk_find(w, o, len, next, false);
  if (!r)
    return -1;
  walk_oid_text(r->name, r->len, name, namelen);
  *type = r->type;
  *num = walk_row_number(r);
  if (text && textlen) {
    text[0] = '\0';
    if (r->type == ASN_OBJECT_ID)
      walk_oid_text(r->oval, r->olen, text, textlen);
    else if (r->type == ASN_OCTET_STR)
      snprintf(text, textlen, "%.*s", (int)(r->blen < textlen ? r->blen : textlen - 1),
               (const char *)r->bytes);
  }
  return 0;
}

struct erg_snmp_walk sim_walk_view(struct sim_walk *w) {
  return (struct erg_snmp_walk){.lookup = walk_lookup, .ctx = w};
}

const struct erg_snmp_profile *sim_walk_detect(struct sim_walk *w, char *how, size_t howlen) {
  struct erg_snmp_walk v = sim_walk_view(w);
  return w->prof = erg_snmp_walk_detect(&v, how, howlen);
}

static bool walk_numeric(u_char t) {
  return t == ASN_INTEGER || t == ASN_COUNTER || t == ASN_GAUGE || t == ASN_TIMETICKS ||
         t == ASN_COUNTER64 || t == ASN_OCTET_STR;
}

static const char *walk_type_name(u_char t) {
  switch (t) {
    case ASN_INTEGER:
      return "INTEGER";
    case ASN_COUNTER:
      return "Counter32";
    case ASN_GAUGE:
      return "Gauge32";
    case ASN_TIMETICKS:
      return "TimeTicks";
    case ASN_COUNTER64:
      return "Counter64";
    case ASN_OCTET_STR:
      return "OCTET STRING";
    default:
      return "?";
  }
}

/* "LEVEL[:N]" or "LEVEL:UNIT.N" -> level, entity and unit (as ergd's
 * config reads "pdu:LEVEL:N", "pdu:outlet:210.5"). */
static int walk_parse_entity(const char *spec, size_t len, int *level, int *num, char *unit) {
  const char *colon = memchr(spec, ':', len);
  size_t ll = colon ? (size_t)(colon - spec) : len;
  *level = -1;
  for (int l = 0; l < ERG_PDU_NLEVELS; l++)
    if (strlen(erg_pdu_level_name(l)) == ll && !strncmp(spec, erg_pdu_level_name(l), ll))
      *level = l;
  if (*level < 0)
    return -1;
  if (!colon) {
    *num = 1;
    return *level == ERG_PDU_DEVICE ? 0 : -1;
  }
  const char *n = colon + 1, *end = spec + len;
  if (*level == ERG_PDU_PHASE && n < end && (*n == 'L' || *n == 'l'))
    n++;
  long v; /* UNIT.N: the arcs before N are the unit */
  if (erg_pdu_unit_num(n, (size_t)(end - n), unit, &v))
    return -1;
  *num = (int)v;
  return 0; /* 0 too: some PDUs number their outlets from 0 */
}

/* Digits after the point of a number recorded as text ("4.25" -> 2). */
static int walk_text_decimals(const struct walk_row *r) {
  const u_char *dot = r->blen ? memchr(r->bytes, '.', r->blen) : NULL;
  int d = 0;
  for (const u_char *p = dot ? dot + 1 : NULL; p && p < r->bytes + r->blen && isdigit(*p); p++)
    d++;
  return d > 9 ? 9 : d;
}

static const struct walk_row *walk_row_at(const struct sim_walk *w, const char *oidstr,
                                          size_t *idx) {
  oid o[MAX_OID_LEN];
  size_t len;
  const struct walk_row *r =
      walk_oid_parse(oidstr, strlen(oidstr), o, &len) ? NULL : walk_find(w, o, len, false, false);
  if (r && idx)
    *idx = (size_t)(r - w->rows);
  return r;
}

int sim_walk_bind(struct sim_walk *w, struct sim *s, const char *spec, char *desc, size_t desclen,
                  char *why, size_t whylen) {
  static const int qs[] = {ERG_Q_POWER, ERG_Q_VA, ERG_Q_CURRENT, ERG_Q_ENERGY};
  static const char *const qname[ERG_Q_N] = {"name",    "power",   "VA",    "PF",
                                             "current", "voltage", "energy"};
  static const char *const unit[ERG_Q_N] = {"", "W", "VA", "", "A", "V", "J"};
  desc[0] = '\0';
  const char *eq = strchr(spec, '=');
  int level, num, node;
  char wunit[ERG_PDU_UNIT_MAX] = "";
  if (!eq || walk_parse_entity(spec, (size_t)(eq - spec), &level, &num, wunit)) {
    snprintf(why, whylen,
             "--walk-channel '%s': want LEVEL:N=NODE or LEVEL:UNIT.N=NODE (LEVEL device, "
             "inlet, phase, bank, outlet or sensor; device=NODE for the device; UNIT a "
             "daisy-chain member or cord, one or two arcs)",
             spec);
    return -1;
  }
  if ((node = sim_find(s, eq + 1)) < 0) {
    snprintf(why, whylen, "--walk-channel '%s': no --node %s (nor --sum)", spec, eq + 1);
    return -1;
  }
  if (!w->prof) {
    snprintf(why, whylen, "--walk-channel '%s': erg knows no profile for this walk", spec);
    return -1;
  }
  struct erg_snmp_walk v = sim_walk_view(w);
  struct erg_snmp_walk_entity e;
  char r[200];
  if (erg_snmp_walk_entity_unit(&v, w->prof, level, wunit, num, &e, r, sizeof r)) {
    snprintf(why, whylen, "--walk-channel '%s': %s", spec, r);
    return -1;
  }
  /* The recorded power factor and voltage shape VA and current. */
  double pf = e.raw[ERG_Q_PF] * e.factor[ERG_Q_PF];
  if (!(pf > 0 && pf <= 1))
    pf = 1;
  double volts = e.raw[ERG_Q_VOLTAGE] * e.factor[ERG_Q_VOLTAGE];
  if (!(volts > 0))
    volts = e.raw[ERG_Q_N] * e.factor[ERG_Q_N];
  size_t o = 0;
  int made = 0;
  for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
    int q = qs[k];
    size_t idx;
    const struct walk_row *row = e.oid[q][0] ? walk_row_at(w, e.oid[q], &idx) : NULL;
    if (!row || !walk_numeric(row->type) || !(e.factor[q] > 0) ||
        (q == ERG_Q_CURRENT && !(volts > 0)))
      continue; /* not in the walk, or nothing to compute it from: as recorded */
    for (size_t i = 0; i < w->nlive; i++)
      if (w->live[i].row == idx) {
        snprintf(why, whylen, "--walk-channel '%s': %s is live already", spec, e.oid[q]);
        return -1;
      }
    if (w->nlive == w->caplive) {
      size_t cap = w->caplive ? 2 * w->caplive : 16;
      struct walk_live *g = realloc(w->live, cap * sizeof *g);
      if (!g) {
        snprintf(why, whylen, "out of memory");
        return -1;
      }
      w->live = g;
      w->caplive = cap;
    }
    struct walk_live *l = &w->live[w->nlive++];
    *l = (struct walk_live){.row = idx,
                            .q = q,
                            .node = node,
                            .factor = e.factor[q],
                            .pf = pf,
                            .volts = volts,
                            .start_raw = e.raw[q]};
    if (!isfinite(l->start_raw) || l->start_raw < 0)
      l->start_raw = 0; /* "not available" (-1): counts from 0 */
    if (row->type == ASN_OCTET_STR)
      l->decimals = walk_text_decimals(row), l->unit = e.unit[q];
    pthread_mutex_lock(&s->lock);
    l->start_joules = sim_energy_now(&s->nodes[node], erg_time_realtime_ns() / 1e9);
    pthread_mutex_unlock(&s->lock);
    made++;
    char how[64] = "";
    if (q == ERG_Q_VA || q == ERG_Q_CURRENT)
      snprintf(how, sizeof how, " = W / %g (PF%s)%s", pf,
               pf == 1 && !(e.raw[ERG_Q_PF] > 0) ? ": none recorded" : " as recorded",
               q == ERG_Q_CURRENT ? " / V" : "");
    if (q == ERG_Q_CURRENT)
      snprintf(how + strlen(how), sizeof how - strlen(how), " (%g V as recorded)", volts);
    if (q == ERG_Q_ENERGY)
      snprintf(how, sizeof how, " + J since the start");
    if (o < desclen)
      o += (size_t)snprintf(desc + o, desclen - o,
                            "%s%s %s%s%d = node %s: %s %s (%s, raw x %g = %s, recorded %.15g)%s",
                            o ? "\n" : "", erg_pdu_level_name(level), wunit, wunit[0] ? "." : "",
                            num, s->nodes[node].name, qname[q], e.oid[q], walk_type_name(row->type),
                            e.factor[q], unit[q], e.raw[q], how);
  }
  if (!made) {
    snprintf(why, whylen,
             "--walk-channel '%s': the walk has none of the columns erg reads "
             "there (profile %s)",
             spec, w->prof->name);
    return -1;
  }
  return 0;
}

/* The live rows' values now, from the nodes' power and energy. */
static void walk_update(struct sim_walk *w) {
  struct sim *s = w->s;
  if (!w->nlive)
    return;
  double now = erg_time_realtime_ns() / 1e9;
  pthread_mutex_lock(&s->lock);
  for (size_t i = 0; i < w->nlive; i++) {
    const struct walk_live *l = &w->live[i];
    const struct sim_node *n = &s->nodes[l->node];
    struct walk_row *r = &w->rows[l->row];
    double x;
    bool counter = l->q == ERG_Q_ENERGY;
    if (counter)
      x = l->start_raw + (sim_energy_now(n, now) - l->start_joules) / l->factor;
    else if (l->q == ERG_Q_POWER)
      x = n->watts / l->factor;
    else if (l->q == ERG_Q_VA)
      x = n->watts / l->pf / l->factor;
    else
      x = n->watts / l->pf / l->volts / l->factor;
    /* A counter shows the whole units it has counted; a reading rounds. */
    switch (r->type) {
      case ASN_INTEGER:
        x = counter ? fmod(floor(x), 2147483648.0) : floor(x + 0.5);
        r->ival = (long)(x > INT32_MAX ? INT32_MAX : x);
        break;
      case ASN_COUNTER:
      case ASN_GAUGE:
      case ASN_TIMETICKS:
        x = counter ? fmod(floor(x), 4294967296.0) : floor(x + 0.5);
        r->ival = (long)(x > 4294967295.0 ? 4294967295.0 : x < 0 ? 0 : x);
        break;
      case ASN_COUNTER64: {
        uint64_t u = x > 0 ? (uint64_t)(counter ? floor(x) : floor(x + 0.5)) : 0;
        r->c64.high = (u_long)(u >> 32);
        r->c64.low = (u_long)(u & 0xffffffffULL);
        break;
      }
      case ASN_OCTET_STR: {
        char buf[48];
        double p = pow(10.0, l->decimals);
        x = counter ? floor(x * p) / p : x;
        /* in the unit itself, no prefix: 61 W as "61.000W", not "0.061kW" */
        int len = snprintf(buf, sizeof buf, "%.*f%s", l->decimals, x, l->unit ? l->unit : "");
        u_char *b = realloc(r->bytes, (size_t)len + 1);
        if (b) {
          memcpy(b, buf, (size_t)len + 1);
          r->bytes = b;
          r->blen = (size_t)len;
        }
        break;
      }
      default:
        break;
    }
  }
  pthread_mutex_unlock(&s->lock);
}

static void walk_var_set(netsnmp_variable_list *v, const struct walk_row *r) {
  switch (r->type) {
    case ASN_OCTET_STR:
    case ASN_OPAQUE:
    case ASN_IPADDRESS:
      snmp_set_var_typed_value(v, r->type, r->bytes, r->blen);
      break;
    case ASN_OBJECT_ID:
      snmp_set_var_typed_value(v, r->type, r->oval, r->olen * sizeof(oid));
      break;
    case ASN_COUNTER64:
      snmp_set_var_typed_value(v, r->type, &r->c64, sizeof r->c64);
      break;
    case ASN_NULL:
      snmp_set_var_typed_value(v, ASN_NULL, NULL, 0);
      break;
    default:
      snmp_set_var_typed_value(v, r->type, &r->ival, sizeof r->ival);
  }
}

/* About what a varbind costs in the answer (BER: <= 5 bytes an arc). */
static size_t walk_row_bytes(const struct walk_row *r) {
  return r->len * 5 + r->blen + r->olen * 5 + 16;
}

/* GETBULK (v2c): the non-repeaters once, then max-repetitions rounds of
 * GETNEXT on the rest, until every repeater ran off the end or the answer
 * would get too big (an agent may return fewer, RFC 3416). */
static int walk_bulk(struct sim_walk *w, const netsnmp_pdu *pdu, netsnmp_pdu *resp) {
  long nonrep = pdu->non_repeaters < 0 ? 0 : pdu->non_repeaters;
  long reps = pdu->max_repetitions < 0 ? 0 : pdu->max_repetitions;
  size_t bytes = 0, vars = 0, nrep = 0;
  const netsnmp_variable_list *v = pdu->variables, *first_rep;
  for (long i = 0; v && i < nonrep; i++, v = v->next_variable) {
    const struct walk_row *r = walk_find(w, v->name, v->name_length, true, false);
    netsnmp_variable_list *o =
        snmp_add_null_var(resp, r ? r->name : v->name, r ? r->len : v->name_length);
    if (!o)
      return -1;
    if (r)
      walk_var_set(o, r);
    else
      snmp_set_var_typed_value(o, SNMP_ENDOFMIBVIEW, NULL, 0);
    vars++;
  }
  first_rep = v;
  for (; v; v = v->next_variable)
    nrep++;
  if (!nrep)
    return 0;
  const struct walk_row **cur = calloc(nrep, sizeof *cur);
  bool *ended = calloc(nrep, sizeof *ended);
  if (!cur || !ended) {
    free(cur);
    free(ended);
    return -1;
  }
  for (long k = 0; k < reps; k++) {
    bool all_ended = true;
    size_t j = 0;
    for (v = first_rep; v; v = v->next_variable, j++) {
      const struct walk_row *r = NULL;
      if (!ended[j])
        r = cur[j] ? walk_find(w, cur[j]->name, cur[j]->len, true, false)
                   : walk_find(w, v->name, v->name_length, true, false);
      size_t cost = r ? walk_row_bytes(r) : v->name_length * 5 + 8;
      if (vars && (bytes + cost > WALK_BULK_BYTES || vars >= WALK_BULK_VARS))
        goto done;
      const oid *name = r ? r->name : cur[j] ? cur[j]->name : v->name;
      size_t len = r ? r->len : cur[j] ? cur[j]->len : v->name_length;
      netsnmp_variable_list *o = snmp_add_null_var(resp, name, len);
      if (!o)
        goto done;
      if (r)
        walk_var_set(o, r);
      else
        snmp_set_var_typed_value(o, SNMP_ENDOFMIBVIEW, NULL, 0);
      bytes += cost;
      vars++;
      ended[j] = !r;
      cur[j] = r ? r : cur[j];
      all_ended &= ended[j];
    }
    if (all_ended)
      break;
  }
done:
  free(cur);
  free(ended);
  return 0;
}

/* A GET / GETNEXT varbind (sim_snmp_reply's lookup). */
static int walk_lookup_var(void *ctx, netsnmp_variable_list *v, bool next, bool v1) {
  const struct walk_row *r = walk_find(ctx, v->name, v->name_length, next, v1);
  if (!r)
    return -1;
  if (next)
    snmp_set_var_objid(v, r->name, r->len);
  walk_var_set(v, r);
  return 0;
}

static int walk_cb(int op, netsnmp_session *sess, int reqid, netsnmp_pdu *pdu, void *magic) {
  (void)sess;
  (void)reqid;
  struct sim_walk *w = magic;
  if (op != NETSNMP_CALLBACK_OP_RECEIVED_MESSAGE || pdu->version == SNMP_VERSION_3)
    return 1;
  bool v1 = pdu->version == SNMP_VERSION_1;
  bool bulk = pdu->command == SNMP_MSG_GETBULK && !v1;
  bool next = pdu->command == SNMP_MSG_GETNEXT;
  if (!bulk && !next && pdu->command != SNMP_MSG_GET)
    return 1;
  walk_update(w);
  if (!bulk) {
    sim_snmp_reply(w->ss, pdu, next, walk_lookup_var, w);
    return 1;
  }
  netsnmp_pdu *resp = sim_snmp_response(pdu);
  if (!resp)
    return 1;
  snmp_free_varbind(resp->variables);
  resp->variables = NULL;
  if (walk_bulk(w, pdu, resp)) {
    snmp_free_pdu(resp);
    return 1;
  }
  sim_snmp_send(w->ss, resp);
  return 1;
}

int sim_walk_serve(struct sim *s, struct sim_walk *w, const char *host, int port,
                   double duration_s) {
  w->s = s;
  uint64_t start = erg_time_monotonic_ns();
  if (!(w->ss = sim_snmp_listen(host, port, walk_cb, w)))
    return -1;
  sim_snmp_loop(s, w->ss, start, duration_s);
  w->ss = NULL;
  return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Power expressions of [node.NAME] and [group.NAME] (docs/config.md):
 * "SOURCE[:N|:LEVEL:N|:device][*FACTOR]" terms joined by "+", or by " - "
 * for a residual meter (an inlet minus the outlets metered on their own).
 * A source name may hold '-', so a minus that subtracts has a space before
 * it. Groups give their members their feeds; the checks refuse a channel
 * split into more than itself, a node counted twice and a term that
 * subtracts what nobody draws. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector_int.h"

/* A channel's number with its unit: "N", "UNIT.N" or "UNIT.CORD.N" (the
 * arcs before N are the unit: a daisy-chain member, a cord); -1 when it is
 * none of those. */
static int cfg_parse_num(const char *n, long *num, char *unit) {
  return erg_pdu_unit_num(n, strlen(n), unit, num);
}

/* "LEVEL:N", "LEVEL" (device), "N" (an outlet, as before levels) or
 * "phase:L2" -> level and entity number; N may carry its unit ("LEVEL:
 * UNIT.N", unit into unit, "" none); -1 when it is none of those. N is
 * 0..65535: some PDUs number their outlets from 0 (the caller refuses 0
 * where it is no entity, a Modbus unit id). */
static int cfg_parse_channel(const char *spec, int *level, long *num, char *unit) {
  static const struct {
    const char *name;
    int level;
  } lv[] = {{"outlet", ERG_PDU_OUTLET}, {"device", ERG_PDU_DEVICE}, {"inlet", ERG_PDU_INLET},
            {"phase", ERG_PDU_PHASE},   {"bank", ERG_PDU_BANK},     {"sensor", ERG_PDU_SENSOR}};
  *level = ERG_PDU_OUTLET;
  unit[0] = '\0';
  if (cfg_parse_num(spec, num, unit) == 0)
    return 0;
  const char *colon = strchr(spec, ':');
  size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
  for (size_t i = 0; i < sizeof lv / sizeof lv[0]; i++) {
    if (strlen(lv[i].name) != len || strncmp(spec, lv[i].name, len))
      continue;
    *level = lv[i].level;
    if (!colon) { /* only the device is one of a kind */
      *num = 1;
      return *level == ERG_PDU_DEVICE ? 0 : -1;
    }
    const char *n = colon + 1;
    if (*level == ERG_PDU_PHASE && (n[0] == 'L' || n[0] == 'l')) { /* L1.. */
      char *e;
      *num = strtol(n + 1, &e, 10);
      return e != n + 1 && !*e && *num >= 1 && *num <= 65535 ? 0 : -1;
    }
    return cfg_parse_num(n, num, unit);
  }
  return -1;
}

/* One term: source index, channel (added to the source's poll list) and
 * factor; sign -1 subtracts it. */
static int cfg_term(struct erg_collector_config *c, const char *who, char *t, int sign,
                    struct erg_node_feed *out, char *why, size_t whylen) {
  double factor = 1.0;
  long outlet = -1; /* -1: no number given */
  int level = ERG_PDU_OUTLET;
  char unit[ERG_PDU_UNIT_MAX] = "";
  int bad = 0;
  char *star = strchr(t, '*'), *e;
  if (star) {
    *star = '\0';
    factor = strtod(star + 1, &e);
    bad |= e == star + 1 || *e || sign < 0; /* a share of a subtracted outlet means nothing */
  }
  char *colon = strchr(t, ':');
  if (colon) {
    *colon = '\0';
    bad |= cfg_parse_channel(colon + 1, &level, &outlet, unit) != 0;
  }
  int src = -1;
  for (int i = 0; i < c->nsources; i++)
    if (!strcmp(c->sources[i].name, t))
      src = i;
  if (bad || src < 0 || !(factor > 0 && factor <= 1)) {
    snprintf(why, whylen,
             "%s key 'power': bad term '%s%s%s%s%s' (want "
             "SOURCE[:N|:LEVEL:N|:device][*FACTOR] with a defined source, LEVEL outlet, "
             "inlet, phase, bank or sensor, N 0..65535 (phase: L1..) or UNIT.N "
             "(UNIT one or two arcs 0..65535: a chain member, a cord), 0 < FACTOR <= 1, "
             "terms joined by + or, for a residual, ' - ' without factors)",
             who, t, colon ? ":" : "", colon ? colon + 1 : "", star ? "*" : "",
             star ? star + 1 : "");
    return -1;
  }
  struct erg_pdu_source_config *s = &c->sources[src];
  if (strcmp(s->driver, "snmp") && unit[0]) {
    snprintf(why, whylen,
             "%s key 'power': '%s:%s.%ld': units of a daisy chain are for SNMP PDUs; a %s "
             "meter is named as %s:N",
             who, t, unit, outlet, s->driver, t);
    return -1;
  }
  if (strcmp(s->driver, "snmp") && level != ERG_PDU_OUTLET) {
    snprintf(why, whylen,
             "%s key 'power': '%s' is a %s meter: name its unit as "
             "%s:N (levels are for SNMP PDUs)",
             who, t, s->driver, t);
    return -1;
  }
  if (erg_pdu_profile_levels(s->driver, s->profile) > 0 &&
      !(erg_pdu_profile_levels(s->driver, s->profile) & 1u << level)) {
    snprintf(why, whylen, "%s key 'power': profile %s of source %s has no %s level", who,
             s->profile, t, erg_pdu_level_name(level));
    return -1;
  }
  int arcs = erg_pdu_profile_unit_arcs(s->driver, s->profile, level), have = 0;
  for (const char *d = unit; *d; d++)
    have += *d == '.';
  have += unit[0] != '\0';
  if (arcs >= 0 && unit[0] && arcs != have) {
    snprintf(why, whylen,
             "%s key 'power': profile %s of source %s numbers its %ss by %d unit arc%s before "
             "the number, not %d ('%s:%s:%s.%ld')",
             who, s->profile, t, erg_pdu_level_name(level), arcs, arcs == 1 ? "" : "s", have, t,
             erg_pdu_level_name(level), unit, outlet);
    return -1;
  }
  if (outlet == 0 && !strcmp(s->driver, "modbus")) {
    snprintf(why, whylen,
             "%s key 'power': '%s:0': Modbus unit id 0 is the broadcast address (1..247)", who, t);
    return -1;
  }
  if (outlet < 0)
    outlet = !strcmp(s->driver, "modbus") ? s->unit_id : 1;
  int ch = -1;
  for (int i = 0; i < s->nchannels; i++)
    if (s->channels[i] == outlet && s->levels[i] == level && !strcmp(s->units[i], unit))
      ch = i;
  if (ch < 0) {
    if (s->nchannels >= ERG_PDU_MAX_CHANNELS) {
      snprintf(why, whylen, "source %s: too many channels", s->name);
      return -1;
    }
    ch = s->nchannels;
    s->levels[ch] = (unsigned char)level;
    erg_strlcpy(s->units[ch], unit, sizeof s->units[ch]);
    s->channels[s->nchannels++] = outlet;
  }
  *out = (struct erg_node_feed){src, ch, sign * factor};
  return 0;
}

int cfg_power_parse(struct erg_collector_config *c, const char *who, const char *spec,
                    struct erg_node_feed *feeds, int *nfeeds, char *why, size_t whylen) {
  char buf[512];
  erg_strlcpy(buf, spec, sizeof buf);
  *nfeeds = 0;
  char *p = buf;
  int sign = 1, positive = 0;
  while (*p) {
    /* The term runs to the next '+' or to a '-' with a space before it. */
    while (*p == ' ')
      p++;
    char *end = p;
    while (*end && *end != '+' && !(*end == '-' && end > p && end[-1] == ' '))
      end++;
    char op = *end;
    char *stop = end;
    if (*end)
      *end = '\0';
    while (stop > p && stop[-1] == ' ')
      *--stop = '\0';
    if (*nfeeds >= ERG_MAX_FEEDS) {
      snprintf(why, whylen, "%s key 'power': more than %d terms", who, ERG_MAX_FEEDS);
      return -1;
    }
    if (cfg_term(c, who, p, sign, &feeds[*nfeeds], why, whylen) != 0)
      return -1;
    positive += sign > 0;
    (*nfeeds)++;
    sign = op == '-' ? -1 : 1;
    p = op ? end + 1 : end;
    if (op && !*p) {
      snprintf(why, whylen, "%s key 'power': '%s' ends with '%c'", who, spec, op);
      return -1;
    }
  }
  if (!positive) {
    snprintf(why, whylen, "%s key 'power': '%s' has no term that adds", who, spec);
    return -1;
  }
  /* The same channel twice in one expression is a typo, never a meter. */
  for (int a = 0; a < *nfeeds; a++)
    for (int b = a + 1; b < *nfeeds; b++)
      if (feeds[a].source == feeds[b].source && feeds[a].channel == feeds[b].channel) {
        const struct erg_pdu_source_config *s = &c->sources[feeds[a].source];
        char id[40];
        snprintf(why, whylen, "%s key 'power': %s %s of source %s named twice", who,
                 erg_pdu_level_name(s->levels[feeds[a].channel]),
                 erg_pdu_channel_text(s, feeds[a].channel, id, sizeof id), s->name);
        return -1;
      }
  return 0;
}

/* Who draws from meters: a node with its own power, or a group. */
struct consumer {
  const char *kind, *name;
  const struct erg_node_feed *feeds;
  int nfeeds;
};

static int consumers(const struct erg_collector_config *c, struct consumer **out) {
  struct consumer *v = calloc((size_t)c->nnodes + (size_t)c->ngroups + 1, sizeof *v);
  int n = 0;
  if (!v)
    return -1;
  for (int i = 0; i < c->nnodes; i++)
    if (c->nodes[i].group < 0 && c->nodes[i].nfeeds)
      v[n++] = (struct consumer){"node", c->nodes[i].name, c->nodes[i].feeds, c->nodes[i].nfeeds};
  for (int g = 0; g < c->ngroups; g++)
    v[n++] = (struct consumer){"group", c->groups[g].name, c->groups[g].feeds, c->groups[g].nfeeds};
  *out = v;
  return n;
}

static const char *chan_text(const struct erg_collector_config *c, const struct erg_node_feed *f,
                             char *buf, size_t len) {
  const struct erg_pdu_source_config *s = &c->sources[f->source];
  char id[40];
  snprintf(buf, len, "%s %s of source %s", erg_pdu_level_name(s->levels[f->channel]),
           erg_pdu_channel_text(s, f->channel, id, sizeof id), s->name);
  return buf;
}

static bool has_feed(const struct consumer *k, int source, int channel, int sign) {
  for (int f = 0; f < k->nfeeds; f++)
    if (k->feeds[f].source == source && k->feeds[f].channel == channel &&
        (k->feeds[f].factor > 0) == (sign > 0))
      return true;
  return false;
}

/* What all consumers draw from one channel, gathered in one pass so that
 * the checks below cost O(terms), not O(consumers^2) (thousands of nodes). */
struct chan_use {
  double sum;  /* the adding terms' factors, summed in consumer order */
  int kept;    /* terms not subtracting it (factor >= 0) */
  int drawer;  /* consumer of the first adding term, -1: none */
  int drawer2; /* another consumer with one, -1: none */
};

struct power_use {
  struct chan_use *u; /* by flat channel: base[source] + channel */
  int *base;          /* per source; base[nsources]: all channels */
  int *kept;          /* per source: terms not subtracting its channels */
};

static void power_use_free(struct power_use *p) {
  if (!p)
    return;
  free(p->u);
  free(p->base);
  free(p->kept);
}

static int power_use_build(const struct erg_collector_config *c, const struct consumer *v, int n,
                           struct power_use *p) {
  p->base = calloc((size_t)c->nsources + 1, sizeof *p->base);
  p->kept = calloc((size_t)c->nsources + 1, sizeof *p->kept);
  if (!p->base || !p->kept)
    return -1;
  for (int s = 0; s < c->nsources; s++)
    p->base[s + 1] = p->base[s] + c->sources[s].nchannels;
  p->u = calloc((size_t)p->base[c->nsources] + 1, sizeof *p->u);
  if (!p->u)
    return -1;
  for (int k = 0; k < p->base[c->nsources]; k++)
    p->u[k].drawer = p->u[k].drawer2 = -1;
  for (int b = 0; b < n; b++)
    for (int g = 0; g < v[b].nfeeds; g++) {
      const struct erg_node_feed *fb = &v[b].feeds[g];
      struct chan_use *u = &p->u[p->base[fb->source] + fb->channel];
      if (fb->factor < 0)
        continue;
      u->kept++;
      p->kept[fb->source]++;
      if (!(fb->factor > 0))
        continue;
      u->sum += fb->factor;
      if (u->drawer < 0)
        u->drawer = b;
      else if (u->drawer2 < 0 && u->drawer != b)
        u->drawer2 = b;
    }
  return 0;
}

/* Whether consumer a's whole PDU (fa) holds a channel another consumer draws
 * and a does not subtract: counted, from the tallies and a's own terms. */
static bool device_overlap(const struct power_use *p, const struct consumer *a,
                           const struct erg_node_feed *fa) {
  int s = fa->source;
  long n = p->kept[s] - p->u[p->base[s] + fa->channel].kept;
  for (int f = 0; f < a->nfeeds; f++) {
    const struct erg_node_feed *x = &a->feeds[f];
    if (x->source != s || x->channel == fa->channel)
      continue;
    if (!(x->factor < 0))
      n--;             /* a's own */
    bool first = true; /* each subtracted channel once */
    for (int e = 0; e < f; e++)
      first &= !(a->feeds[e].source == s && a->feeds[e].channel == x->channel &&
                 !(a->feeds[e].factor > 0));
    if (x->factor > 0 || !first)
      continue;
    /* Subtracted by a: others' terms on it are fine (a's own counted above). */
    n -= p->u[p->base[s] + x->channel].kept;
    for (int e = 0; e < a->nfeeds; e++)
      n +=
          a->feeds[e].source == s && a->feeds[e].channel == x->channel && !(a->feeds[e].factor < 0);
  }
  return n > 0;
}

/* "X holds Y": a consumer adds X and subtracts Y (a residual), and a whole
 * PDU holds each of its channels, a PDU's only named inlet its outlets.
 * A loop in it (a = inlet - outlet, b = outlet - inlet) counts each side
 * in the other: physically impossible, so a typo or a double count. */
struct holds {
  int *head, *next, *to, *who; /* edge lists by flat channel; who: consumer, -1 implied */
  int n;
};

static int holds_add(struct holds *h, int from, int to, int who, int cap) {
  if (h->n >= cap)
    return -1;
  h->to[h->n] = to;
  h->who[h->n] = who;
  h->next[h->n] = h->head[from];
  h->head[from] = h->n++;
  return 0;
}

/* Outlet channel o may be behind inlet channel i of s: the same unit (a
 * daisy-chain member's outlets behind its inlets), or the outlet's unit is
 * the inlet's unit and number (Sentry4's outlet 1.2.N behind inlet 1.2,
 * cord B); either without a unit: may be. */
static bool unit_behind(const struct erg_pdu_source_config *s, int o, int i) {
  if (!s->units[o][0] || !s->units[i][0] || !strcmp(s->units[o], s->units[i]))
    return true;
  char path[ERG_PDU_UNIT_MAX + 8];
  snprintf(path, sizeof path, "%s.%d", s->units[i], s->channels[i]);
  return !strcmp(s->units[o], path);
}

/* The single inlet of source s among its configured channels, -1: none
 * or several (which outlets a multi-inlet PDU's inlet feeds is not known). */
static int only_inlet(const struct erg_pdu_source_config *s) {
  int in = -1;
  for (int ch = 0; ch < s->nchannels; ch++)
    if (s->levels[ch] == ERG_PDU_INLET) {
      if (in >= 0)
        return -1;
      in = ch;
    }
  return in;
}

static void flat_text(const struct erg_collector_config *c, const struct power_use *p, int k,
                      char *buf, size_t len) {
  int s = 0;
  while (p->base[s + 1] <= k)
    s++;
  struct erg_node_feed f = {s, k - p->base[s], 1};
  chan_text(c, &f, buf, len);
}

static int power_loops(const struct erg_collector_config *c, const struct consumer *v, int n,
                       const struct power_use *p, char *why, size_t whylen) {
  int nch = p->base[c->nsources], cap = 0;
  for (int a = 0; a < n; a++)
    cap += v[a].nfeeds * v[a].nfeeds;
  cap += nch; /* implied: at most one per channel and source */
  struct holds h = {calloc((size_t)nch + 1, sizeof(int)), calloc((size_t)cap + 1, sizeof(int)),
                    calloc((size_t)cap + 1, sizeof(int)), calloc((size_t)cap + 1, sizeof(int)), 0};
  int *state = calloc((size_t)nch + 1, sizeof(int)); /* 0 new, 1 on the path, 2 done */
  int *via = calloc((size_t)nch + 1, sizeof(int));   /* the edge the path came in by */
  int *stack = calloc((size_t)nch + 1, sizeof(int)), *edge = calloc((size_t)nch + 1, sizeof(int));
  int rc = 0;
  if (!h.head || !h.next || !h.to || !h.who || !state || !via || !stack || !edge) {
    snprintf(why, whylen, "out of memory");
    rc = -1;
    goto out;
  }
  for (int k = 0; k < nch; k++)
    h.head[k] = -1;
  for (int s = 0; s < c->nsources; s++) {
    const struct erg_pdu_source_config *src = &c->sources[s];
    int in = only_inlet(src);
    for (int ch = 0; ch < src->nchannels; ch++) {
      int lv = src->levels[ch];
      for (int d = 0; d < src->nchannels; d++)
        if (d != ch && src->levels[d] == ERG_PDU_DEVICE && unit_behind(src, ch, d))
          holds_add(&h, p->base[s] + d, p->base[s] + ch, -1, cap);
      if (in >= 0 && in != ch && lv == ERG_PDU_OUTLET && unit_behind(src, ch, in))
        holds_add(&h, p->base[s] + in, p->base[s] + ch, -1, cap);
    }
  }
  for (int a = 0; a < n; a++)
    for (int x = 0; x < v[a].nfeeds; x++)
      for (int y = 0; y < v[a].nfeeds; y++) {
        const struct erg_node_feed *fx = &v[a].feeds[x], *fy = &v[a].feeds[y];
        if (fx->factor > 0 && fy->factor < 0)
          holds_add(&h, p->base[fx->source] + fx->channel, p->base[fy->source] + fy->channel, a,
                    cap);
      }
  /* Depth first, without recursion (thousands of channels). */
  for (int root = 0; root < nch && rc == 0; root++) {
    if (state[root])
      continue;
    int depth = 0;
    stack[0] = root;
    edge[0] = h.head[root];
    state[root] = 1;
    while (depth >= 0 && rc == 0) {
      int u = stack[depth], e = edge[depth];
      if (e < 0) {
        state[u] = 2;
        depth--;
        continue;
      }
      edge[depth] = h.next[e];
      int w = h.to[e];
      if (state[w] == 1) {
        /* The loop: w ... u -> w, told as its residual terms. */
        char t1[160], t2[160];
        size_t len = 0;
        int from = depth;
        while (stack[from] != w)
          from--;
        len += (size_t)snprintf(why, whylen,
                                "power terms hold each other in a loop (each would "
                                "count the other's power): ");
        for (int i = from; i <= depth && len < whylen; i++) {
          int ed = i < depth ? via[i + 1] : e;
          int nx = i < depth ? stack[i + 1] : w;
          flat_text(c, p, stack[i], t1, sizeof t1);
          flat_text(c, p, nx, t2, sizeof t2);
          if (h.who[ed] >= 0)
            len += (size_t)snprintf(why + len, whylen - len, "%s%s %s subtracts %s from %s",
                                    i > from ? "; " : "", v[h.who[ed]].kind, v[h.who[ed]].name, t2,
                                    t1);
          else
            len += (size_t)snprintf(why + len, whylen - len, "%s%s holds %s", i > from ? "; " : "",
                                    t1, t2);
        }
        rc = -1;
      } else if (state[w] == 0) {
        state[w] = 1;
        stack[++depth] = w;
        edge[depth] = h.head[w];
        via[depth] = e;
      }
    }
  }
out:
  free(h.head);
  free(h.next);
  free(h.to);
  free(h.who);
  free(state);
  free(via);
  free(stack);
  free(edge);
  return rc;
}

/* A PDU's only named inlet holds its outlets: an outlet another consumer
 * draws must be subtracted where the inlet is drawn (unless a bank or
 * phase of it is subtracted there, which may hold that outlet). */
static int inlet_overlap(const struct erg_collector_config *c, const struct consumer *v, int n,
                         const struct power_use *p, char *why, size_t whylen) {
  char t[160], t2[160], id[40];
  for (int a = 0; a < n; a++)
    for (int f = 0; f < v[a].nfeeds; f++) {
      const struct erg_node_feed *fa = &v[a].feeds[f];
      const struct erg_pdu_source_config *s = &c->sources[fa->source];
      if (!(fa->factor > 0) || s->levels[fa->channel] != ERG_PDU_INLET ||
          only_inlet(s) != fa->channel)
        continue;
      bool partial = false;
      for (int g = 0; g < v[a].nfeeds; g++) {
        int lv = s->levels[v[a].feeds[g].channel];
        partial |= v[a].feeds[g].source == fa->source && v[a].feeds[g].factor < 0 &&
                   (lv == ERG_PDU_BANK || lv == ERG_PDU_PHASE);
      }
      for (int ch = 0; ch < s->nchannels && !partial; ch++) {
        const struct chan_use *u = &p->u[p->base[fa->source] + ch];
        if (s->levels[ch] != ERG_PDU_OUTLET || u->drawer < 0 ||
            (u->drawer == a && u->drawer2 < 0) || has_feed(&v[a], fa->source, ch, -1) ||
            !unit_behind(s, ch, fa->channel))
          continue;
        int b = u->drawer != a ? u->drawer : u->drawer2;
        struct erg_node_feed fo = {fa->source, ch, 1};
        snprintf(why, whylen,
                 "%s %s is counted twice: its %s is behind %s, which %s %s draws (the PDU's "
                 "only inlet named; subtract it there: '- %s:outlet:%s')",
                 v[b].kind, v[b].name, chan_text(c, &fo, t, sizeof t),
                 chan_text(c, fa, t2, sizeof t2), v[a].kind, v[a].name, s->name,
                 erg_pdu_channel_text(s, ch, id, sizeof id));
        return -1;
      }
    }
  return 0;
}

int cfg_power_check(const struct erg_collector_config *c, char *why, size_t whylen) {
  struct consumer *v;
  struct power_use pu = {0};
  int n = consumers(c, &v), rc = 0;
  char t[160], id[40];
  if (n < 0 || power_use_build(c, v, n, &pu) != 0) {
    if (n >= 0)
      free(v);
    power_use_free(&pu);
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  for (int a = 0; a < n && rc == 0; a++)
    for (int f = 0; f < v[a].nfeeds && rc == 0; f++) {
      const struct erg_node_feed *fa = &v[a].feeds[f];
      const struct chan_use *u = &pu.u[pu.base[fa->source] + fa->channel];
      if (fa->factor < 0) {
        /* A residual subtracts what another node or group draws. */
        bool drawn = u->drawer >= 0 && (u->drawer != a || u->drawer2 >= 0);
        if (!drawn) {
          snprintf(why, whylen,
                   "%s %s subtracts %s, which feeds no node or group (a level "
                   "feeding nobody)",
                   v[a].kind, v[a].name, chan_text(c, fa, t, sizeof t));
          rc = -1;
        }
        continue;
      }
      /* Shares of one channel add up to at most all of it. */
      if (u->sum > 1 + 1e-9) {
        snprintf(why, whylen,
                 "%s is split into %.3g of itself across nodes and groups "
                 "(factors must add up to at most 1; nodes that share a meter without "
                 "factors form a [group.NAME])",
                 chan_text(c, fa, t, sizeof t), u->sum);
        rc = -1;
        continue;
      }
      /* The whole PDU holds every outlet, bank, phase and inlet of it: a
       * channel of it drawn by another must be subtracted here. Counted
       * first; only a config that fails is searched for its first culprit. */
      if (c->sources[fa->source].levels[fa->channel] != ERG_PDU_DEVICE ||
          !device_overlap(&pu, &v[a], fa))
        continue;
      for (int b = 0; b < n && rc == 0; b++)
        for (int g = 0; b != a && g < v[b].nfeeds && rc == 0; g++) {
          const struct erg_node_feed *fb = &v[b].feeds[g];
          if (fb->source != fa->source || fb->factor < 0 || fb->channel == fa->channel ||
              has_feed(&v[a], fb->source, fb->channel, -1))
            continue;
          snprintf(why, whylen,
                   "%s %s is counted twice: its %s is inside %s %s's whole "
                   "PDU (subtract it there: '- %s:%s:%s')",
                   v[b].kind, v[b].name, chan_text(c, fb, t, sizeof t), v[a].kind, v[a].name,
                   c->sources[fb->source].name,
                   erg_pdu_level_name(c->sources[fb->source].levels[fb->channel]),
                   erg_pdu_channel_text(&c->sources[fb->source], fb->channel, id, sizeof id));
          rc = -1;
        }
    }
  if (rc == 0)
    rc = inlet_overlap(c, v, n, &pu, why, whylen);
  if (rc == 0)
    rc = power_loops(c, v, n, &pu, why, whylen);
  power_use_free(&pu);
  free(v);
  return rc;
}

/* Splits "a b,c" into names. */
static int next_name(const char **p, char *out, size_t len) {
  while (**p == ' ' || **p == ',' || **p == '\t')
    (*p)++;
  size_t n = 0;
  while (**p && **p != ' ' && **p != ',' && **p != '\t') {
    if (n + 1 < len)
      out[n++] = **p;
    (*p)++;
  }
  out[n] = '\0';
  return n > 0;
}

int cfg_group_members(struct erg_collector_config *c, int g, const char *list,
                      int (*node_index)(void *user, const char *name), void *user, char *why,
                      size_t whylen) {
  struct erg_group_config *gr = &c->groups[g];
  char name[ERG_NAME_MAX + 8];
  const char *p = list;
  while (next_name(&p, name, sizeof name)) {
    if (!erg_name_is_safe(name)) {
      snprintf(why, whylen, "[group.%s] key 'nodes': '%.64s' is not a node name", gr->name, name);
      return -1;
    }
    int i = node_index(user, name);
    if (i < 0) {
      snprintf(why, whylen, "[group.%s]: too many nodes", gr->name);
      return -1;
    }
    struct erg_node_config *nd = &c->nodes[i];
    if (nd->group >= 0) {
      snprintf(why, whylen, "node %s is counted twice: in [group.%s] and in [group.%s]", nd->name,
               c->groups[nd->group].name, gr->name);
      return -1;
    }
    if (nd->nfeeds) {
      snprintf(why, whylen,
               "node %s is counted twice: its [node.%s] power and [group.%s] "
               "(a group member takes its power from the group)",
               nd->name, nd->name, gr->name);
      return -1;
    }
    if (gr->nmembers >= ERG_MAX_GROUP_NODES) {
      snprintf(why, whylen, "[group.%s]: more than %d nodes", gr->name, ERG_MAX_GROUP_NODES);
      return -1;
    }
    gr->members[gr->nmembers++] = i;
    nd->group = g;
    memcpy(nd->feeds, gr->feeds, sizeof nd->feeds);
    nd->nfeeds = gr->nfeeds;
  }
  if (gr->nmembers == 0) {
    snprintf(why, whylen,
             "[group.%s] has no nodes (a level feeding nobody): give 'nodes = A B "
             "...'",
             gr->name);
    return -1;
  }
  return 0;
}

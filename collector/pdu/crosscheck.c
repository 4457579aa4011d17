// SPDX-License-Identifier: GPL-3.0-or-later
/* Physics across one device's levels (issue 34 item 3): what the levels
 * below meter adds up to no more than what the level above them does (the
 * outlets, banks and phases of a unit within its inlets or device, the
 * inlets within the device) and, where every phase was read, the phases to
 * about their inlets. A firmware whose scale is not its MIB's is off by a
 * power of ten, so only a disagreement of more than sqrt(10) counts: a
 * partial or unbalanced load never comes near it. The side whose active
 * power its own apparent power (VA, or V x A) does not bear out is
 * refused; when neither or both are borne out, both or neither. Pure
 * computation: the probe and the SNMP driver give it their rows. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "erg_pdu.h"

#define XC_FACTOR 3.1622776601683795 /* sqrt(10): halfway to a wrong power of ten */
#define XC_SLACK_WATTS 50.0          /* rounding, idle supplies, meters' offsets */
#define XC_MIN_WATTS 50.0            /* an upper level below this says nothing */
#define XC_PF_MIN 0.2                /* W / VA of a believable row */
#define XC_PF_MAX 1.9                /* sqrt(3) x 1.1: delta rows */

/* The unit a row belongs to for the sums: a chain member, its first arc
 * ("1.2" is cord 2 of member 1). */
static bool same_member(const char *a, const char *b) {
  size_t la = strcspn(a, "."), lb = strcspn(b, ".");
  return la == lb && !strncmp(a, b, la);
}

static const char *plural(int level) {
  static const char *const p[ERG_PDU_NLEVELS] = {
      [ERG_PDU_OUTLET] = "outlets", [ERG_PDU_DEVICE] = "devices", [ERG_PDU_INLET] = "inlets",
      [ERG_PDU_PHASE] = "phases",   [ERG_PDU_BANK] = "banks",     [ERG_PDU_SENSOR] = "sensors"};
  return level >= 0 && level < ERG_PDU_NLEVELS ? p[level] : "rows";
}

/* Sum of the watts of level's rows of member m (n rows counted), and
 * whether one of them is borne out by its own apparent power. */
static double level_sum(const struct erg_pdu_xrow *r, int n, int level, const char *m, int *count,
                        bool *borne) {
  double s = 0;
  *count = 0;
  *borne = false;
  for (int i = 0; i < n; i++) {
    if (r[i].level != level || !same_member(r[i].unit, m) || !isfinite(r[i].watts) || r[i].refused)
      continue;
    s += r[i].watts;
    (*count)++;
    double ratio = r[i].apparent > 0 ? r[i].watts / r[i].apparent : NAN;
    *borne |= r[i].measured && r[i].watts > 20 && r[i].apparent > 20 && ratio >= XC_PF_MIN &&
              ratio <= XC_PF_MAX;
  }
  return s;
}

static void refuse(struct erg_pdu_xrow *r, int n, int level, const char *m, int *refused,
                   const char *reason) {
  for (int i = 0; i < n; i++)
    if (r[i].level == level && same_member(r[i].unit, m) && isfinite(r[i].watts) && !r[i].refused) {
      r[i].refused = true;
      snprintf(r[i].reason, sizeof r[i].reason, "%s", reason);
      (*refused)++;
    }
}

/* One pair of levels of member m: lower's sum against upper's. */
static void check_pair(struct erg_pdu_xrow *r, int n, int upper, int lower, const char *m,
                       bool complete, int *refused, char *why, size_t whylen) {
  int nu, nl;
  bool bu, bl;
  double su = level_sum(r, n, upper, m, &nu, &bu), sl = level_sum(r, n, lower, m, &nl, &bl);
  if (!nu || !nl || su < XC_MIN_WATTS)
    return;
  double lim = XC_FACTOR * su + XC_SLACK_WATTS;
  /* A row above the whole level over it is impossible by itself (a
   * hostile or misscaled outlet among good ones): it alone is refused,
   * unless its own V x A bears it out and the level above has none. */
  for (int i = 0; i < n; i++) {
    const struct erg_pdu_xrow *x = &r[i];
    double ratio = x->apparent > 0 ? x->watts / x->apparent : NAN;
    bool xb = x->measured && x->apparent > 20 && ratio >= XC_PF_MIN && ratio <= XC_PF_MAX;
    if (x->level != lower || !same_member(x->unit, m) || !(x->watts > lim) || x->refused ||
        (xb && !bu))
      continue;
    r[i].refused = true;
    snprintf(r[i].reason, sizeof r[i].reason,
             "impossible: %.0f W, over 3x the %s' %.0f W above it; not used", x->watts,
             plural(upper), su);
    (*refused)++;
    sl -= x->watts;
    nl--;
    if (whylen && !why[0])
      snprintf(why, whylen, "%s", r[i].reason);
  }
  bool over = nl > 0 && sl > lim;
  bool under = complete && lower == ERG_PDU_PHASE && sl * XC_FACTOR + XC_SLACK_WATTS < su;
  if (!over && !under)
    return;
  char verdict[64], text[sizeof r->reason];
  bool low = false, up = false;
  if (bu && !bl) {
    low = true;
    snprintf(verdict, sizeof verdict, "the %s' W not used", plural(lower));
  } else if (bl && !bu) {
    up = true;
    snprintf(verdict, sizeof verdict, "the %s' W not used", plural(upper));
  } else if (!bu && !bl) {
    low = up = true;
    snprintf(verdict, sizeof verdict, "no V x A bears either out: neither used");
  } else {
    snprintf(verdict, sizeof verdict, "each bears out its V x A: both kept");
  }
  char unit[24] = "";
  if (m[0])
    snprintf(unit, sizeof unit, " of unit %.*s", (int)strcspn(m, "."), m);
  int w = snprintf(text, sizeof text, "impossible: %s%s sum to %.0f W, %s the %s' %.0f W; %s",
                   plural(lower), unit, sl, over ? "over 3x" : "under 1/3 of", plural(upper), su,
                   verdict);
  if (w < 0)
    text[0] = '\0';
  if (low)
    refuse(r, n, lower, m, refused, text);
  if (up)
    refuse(r, n, upper, m, refused, text);
  if (whylen && !why[0])
    snprintf(why, whylen, "%s", text);
}

int erg_pdu_cross_check(struct erg_pdu_xrow *r, int n, bool complete, char *why, size_t whylen) {
  int refused = 0;
  if (whylen)
    why[0] = '\0';
  for (int i = 0; i < n; i++) {
    r[i].refused = false;
    r[i].reason[0] = '\0';
  }
  for (int i = 0; i < n; i++) {
    bool first = true; /* each member once */
    for (int k = 0; k < i && first; k++)
      first = !same_member(r[k].unit, r[i].unit);
    if (!first)
      continue;
    const char *m = r[i].unit;
    int cnt;
    bool borne;
    /* The level the others hang from: the inlets where they read, else the
     * device. */
    level_sum(r, n, ERG_PDU_INLET, m, &cnt, &borne);
    int top = cnt ? ERG_PDU_INLET : ERG_PDU_DEVICE;
    check_pair(r, n, ERG_PDU_DEVICE, ERG_PDU_INLET, m, false, &refused, why, whylen);
    static const int below[] = {ERG_PDU_PHASE, ERG_PDU_BANK, ERG_PDU_OUTLET};
    for (size_t b = 0; b < sizeof below / sizeof below[0]; b++)
      check_pair(r, n, top, below[b], m, complete, &refused, why, whylen);
  }
  return refused;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* The values of a poll: raw varbinds into the channels, the physics checks
 * that keep an impossible value from being taken for a reading (a hostile
 * agent's 4294967295 W, a firmware whose scale is not its MIB's), and each
 * channel's power from what is left (measured, VA x PF, estimated). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "snmp_int.h"

/* Line voltages of the mains a PDU is built for: 100 V (Japan) - 10 %
 * to 415 V line-to-line + 15 %; 0 is a dead line. */
#define PHYS_VOLTS_MIN 80.0
#define PHYS_VOLTS_MAX 480.0
/* A rescaled power factor must be a plausible one, not just <= 1: 95 read
 * as 0.95 (x0.01), not 0.095 (x0.001). */
#define PHYS_PF_RESCALED_MIN 0.2
/* The channel limits when the config sets no max_watts (as ergd's
 * meter_check.c): a 16 A three-phase outlet gives 11 kW, a 125 A
 * three-phase supply 87 kW. */
#define PHYS_MAX_WATTS_OUTLET 20e3
#define PHYS_MAX_WATTS_OTHER 100e3
/* W above VA by more than this (and rounding) is no reading pair. */
#define PHYS_W_OVER_VA 1.1
#define PHYS_W_OVER_VA_SLACK 10.0

static const char *const phys_qn[] = {"name",    "power",   "VA",     "power factor",
                                      "current", "voltage", "energy", "voltage"};
static const char *const phys_unit[] = {"", "W", "VA", "", "A", "V", "J", "V"};

static bool phys_ok(int q, double v, double max_watts, bool rescaled) {
  switch (q) {
    case ERG_Q_POWER:
    case ERG_Q_VA:
      return v >= 0 && v <= max_watts;
    case ERG_Q_PF:
      return rescaled ? v >= PHYS_PF_RESCALED_MIN && v <= 1 : v >= 0 && v <= 1;
    case ERG_Q_CURRENT:
      return v >= 0 && v <= max_watts / PHYS_VOLTS_MIN;
    case ERG_Q_VOLTAGE:
    case ERG_Q_N:
      return rescaled ? v >= PHYS_VOLTS_MIN && v <= PHYS_VOLTS_MAX
                      : v == 0 || (v >= PHYS_VOLTS_MIN && v <= PHYS_VOLTS_MAX);
    case ERG_Q_ENERGY:
      return v >= 0;
    default:
      return true;
  }
}

static void phys_range(int q, double max_watts, char *out, size_t len) {
  if (q == ERG_Q_VOLTAGE || q == ERG_Q_N)
    snprintf(out, len, "0 or %.0f-%.0f V", PHYS_VOLTS_MIN, PHYS_VOLTS_MAX);
  else if (q == ERG_Q_PF)
    snprintf(out, len, "0-1");
  else if (q == ERG_Q_CURRENT)
    snprintf(out, len, "0-%.0f A", max_watts / PHYS_VOLTS_MIN);
  else
    snprintf(out, len, "0-%.0f %s", max_watts, phys_unit[q]);
}

/* The one power of ten (10^-3 .. 10^3, not 1) that brings v into q's
 * range, 0 when none or several do. Voltage and power factor only: their
 * ranges are narrow enough for the answer to be unique; a power or current
 * that is too large says nothing about its true scale. */
static double phys_rescale(int q, double v, double max_watts) {
  if (q != ERG_Q_VOLTAGE && q != ERG_Q_N && q != ERG_Q_PF)
    return 0;
  double found = 0;
  int n = 0;
  for (int k = -3; k <= 3; k++) {
    double f = pow(10.0, k);
    if (k != 0 && phys_ok(q, v * f, max_watts, true))
      found = f, n++;
  }
  return n == 1 ? found : 0;
}

void erg_snmp_physics(double *x, double *fix, int level, double max_watts, char *note,
                      size_t notelen) {
  if (notelen)
    note[0] = '\0';
  if (!(max_watts > 0))
    max_watts = level == ERG_PDU_OUTLET ? PHYS_MAX_WATTS_OUTLET : PHYS_MAX_WATTS_OTHER;
  char range[48];
  for (int q = ERG_Q_POWER; q <= ERG_Q_N; q++) {
    fix[q] = 1.0;
    if (!isfinite(x[q]) || phys_ok(q, x[q], max_watts, false))
      continue;
    phys_range(q, max_watts, range, sizeof range);
    double f = phys_rescale(q, x[q], max_watts);
    if (f > 0) {
      if (notelen)
        snprintf(note, notelen,
                 "%s: %.6g%s%s is impossible (%s); read as %.6g%s%s: the firmware's scale is "
                 "x%g the MIB's",
                 phys_qn[q], x[q], phys_unit[q][0] ? " " : "", phys_unit[q], range, x[q] * f,
                 phys_unit[q][0] ? " " : "", phys_unit[q], f);
      x[q] *= f;
      fix[q] = f;
    } else {
      if (notelen && !note[0])
        snprintf(note, notelen, "%s: %.10g%s%s is impossible (%s) and no scale explains it",
                 phys_qn[q], x[q], phys_unit[q][0] ? " " : "", phys_unit[q], range);
      x[q] = NAN;
      fix[q] = NAN;
    }
  }
  /* Active power above apparent power: one of the two has a wrong scale,
   * and which one is not known; A x V remains. */
  double w = x[ERG_Q_POWER], va = x[ERG_Q_VA];
  if (isfinite(w) && isfinite(va) && w > PHYS_W_OVER_VA * va + PHYS_W_OVER_VA_SLACK) {
    if (notelen && !note[0])
      snprintf(note, notelen,
               "power: %.6g W is more than the apparent power %.6g VA; one of them has a "
               "wrong scale, neither is used",
               w, va);
    x[ERG_Q_POWER] = x[ERG_Q_VA] = NAN;
    fix[ERG_Q_POWER] = fix[ERG_Q_VA] = NAN;
  }
}
/* A varbind as the reading of col: text with the column's unit where it
 * has one (erg_snmp_text_unit), else erg_snmp_vb_value's number. */
static int vb_reading(const netsnmp_variable_list *v, const struct erg_snmp_col *col, double *out,
                      char *why, size_t whylen) {
  if (!col || !col->unit || col->var || v->type != ASN_OCTET_STR)
    return erg_snmp_vb_value(v, out, why, whylen);
  *out = erg_snmp_text_unit(v->val.string, v->val_len, col->unit);
  if (isfinite(*out))
    return 0;
  char text[24];
  erg_snmp_vb_string(v, text, sizeof text);
  snprintf(why, whylen, "text '%s' instead of a number in %s", text,
           col->unit[0] ? col->unit : "no unit");
  return -1;
}

/* Raw values and scale factors of one answer into the channels. */
void erg_snmp_apply_values(struct erg_pdu_source *src, const netsnmp_variable_list *v,
                           const unsigned char *what, const unsigned char *chan, int n,
                           uint64_t t_ns) {
  struct snmp_priv *p = src->priv;
  for (int i = 0; i < n && v; i++, v = v->next_variable) {
    if (what[i] == VB_OTHER)
      continue;
    if (what[i] == VB_STAMP) { /* rows moved: what was read may be other variables */
      if (erg_snmp_names_stale(p, erg_snmp_vb_number(v)))
        erg_snmp_forget(src);
      continue;
    }
    struct snmp_chan *ch = &p->ch[chan[i]];
    int q = what[i] & 15, kind = what[i] & ~15;
    double raw;
    char bad[80];
    int st = kind == VB_VALUE
                 ? vb_reading(v, erg_snmp_chan_col(p, &src->cfg, chan[i], q), &raw, bad, sizeof bad)
                 : erg_snmp_vb_value(v, &raw, bad, sizeof bad);
    if (kind == VB_DIGITS) {
      ch->digits[q] = st == 0 && raw >= 0 && raw < 10 ? (signed char)raw : 0;
      ch->have_scale = true;
    } else if (kind == VB_SI) {
      ch->si_prefix[q] = st == 0 && raw >= 1 && raw <= 17 ? (signed char)raw : 9;
      ch->have_scale = true;
    } else {
      static const char *const qn[] = {"name",    "power",   "VA",     "power factor",
                                       "current", "voltage", "energy", "voltage"};
      if (st == 0 && raw < 0) { /* -1 (or another negative): "not available" */
        snprintf(bad, sizeof bad, "%.0f, negative (the MIB's 'not available')", raw);
        st = -1;
        raw = NAN;
      }
      if (st < 0 && !ch->bad_why[0])
        snprintf(ch->bad_why, sizeof ch->bad_why, "%s: the device sent %s", qn[q], bad);
      ch->raw[q] = raw;
      ch->seen_ns = t_ns;
      if (q == ERG_Q_ENERGY && isfinite(raw))
        ch->energy_type = v->type;
    }
  }
}

/* A channel's reading from its raw values: watts measured, else VA x PF,
 * else A x V (or VA) x the configured power factor, marked estimated. A
 * channel on a level the profile lacks reads nothing, and says so. */
void erg_snmp_chan_reading(const struct erg_pdu_source *src, int c, struct erg_pdu_reading *r) {
  struct snmp_priv *p = src->priv;
  struct snmp_chan *ch = &p->ch[c];
  if (!erg_snmp_ready(p)) /* its named rows moved this round: nothing read is theirs */
    return;
  if (erg_snmp_level_missing(src->priv, &src->cfg, c, ch->bad_why, sizeof ch->bad_why)) {
    r->bad_value = true;
    return;
  }
  double x[ERG_Q_N + 1];
  for (int q = 0; q <= ERG_Q_N; q++) {
    const struct erg_snmp_col *col = erg_snmp_chan_col(p, &src->cfg, c, q);
    x[q] = col ? ch->raw[q] * erg_snmp_col_scale(col, ch, q) : NAN;
  }
  char note[sizeof ch->bad_why];
  int level = src->cfg.levels[c];
  erg_snmp_physics(x, ch->fix, level, src->cfg.max_watts, note, sizeof note);
  bool refused = false;
  for (int q = ERG_Q_POWER; q <= ERG_Q_N; q++)
    refused |= isnan(ch->fix[q]);
  if (note[0] && !ch->bad_why[0])
    snprintf(ch->bad_why, sizeof ch->bad_why, "%s", note);
  double pf = src->cfg.power_factor > 0 ? src->cfg.power_factor : 1.0;
  double volts = isfinite(x[ERG_Q_VOLTAGE]) ? x[ERG_Q_VOLTAGE] : x[ERG_Q_N];
  ch->apparent = isfinite(x[ERG_Q_VA]) ? x[ERG_Q_VA] : x[ERG_Q_CURRENT] * volts;
  r->t_ns = ch->seen_ns;
  r->power_source = ERG_PDU_W_MEASURED;
  r->watts = x[ERG_Q_POWER];
  if (!isfinite(r->watts)) {
    if (!ch->fallback && erg_snmp_chan_col(p, &src->cfg, c, ERG_Q_POWER))
      ch->fallback = true; /* the column did not answer: ask for the others too */
    if (isfinite(x[ERG_Q_VA]) && x[ERG_Q_PF] > 0 && x[ERG_Q_PF] <= 1) {
      r->watts = x[ERG_Q_VA] * x[ERG_Q_PF];
      r->power_source = ERG_PDU_W_VA_PF;
    } else if (isfinite(x[ERG_Q_VA])) {
      r->watts = x[ERG_Q_VA] * pf;
      r->power_source = ERG_PDU_W_ESTIMATED;
    } else if (isfinite(x[ERG_Q_CURRENT]) && isfinite(volts)) {
      r->watts = x[ERG_Q_CURRENT] * volts * pf;
      r->power_source = ERG_PDU_W_ESTIMATED;
    }
  }
  if (isfinite(x[ERG_Q_ENERGY])) {
    const struct erg_snmp_col *col = erg_snmp_chan_col(p, &src->cfg, c, ERG_Q_ENERGY);
    r->energy_joules = x[ERG_Q_ENERGY];
    r->energy_resolution_joules = erg_snmp_col_scale(col, ch, ERG_Q_ENERGY);
  }
  r->ok = isfinite(r->watts) || isfinite(r->energy_joules);
  /* A value rescaled by the physics checks is said (the probe shows it)
   * but read; one refused or not a number is a bad value. */
  r->bad_value = ch->bad_why[0] != '\0' && (refused || !note[0] || strcmp(note, ch->bad_why));
}

int erg_snmp_note(struct erg_pdu_source *src, char *why, size_t whylen) {
  struct snmp_priv *p = src->priv;
  if (!p || !erg_snmp_ready(p))
    return -1;
  if (!p->ident_noted) {
    p->ident_noted = true;
    snprintf(why, whylen, "profile %s: %s", p->prof->name, p->ident.why);
    return 0;
  }
  for (int c = 0; c < src->cfg.nchannels && c < ERG_PDU_MAX_CHANNELS; c++) {
    const struct snmp_chan *ch = &p->ch[c];
    bool rescaled = false;
    for (int q = ERG_Q_POWER; q <= ERG_Q_N; q++)
      rescaled |= isfinite(ch->fix[q]) && ch->fix[q] != 1.0 && ch->fix[q] != 0;
    if (p->rescale_noted[c] || !rescaled || !strstr(ch->bad_why, "; read as "))
      continue;
    p->rescale_noted[c] = true;
    char id[40];
    snprintf(why, whylen, "%s %s: %s", erg_pdu_level_name(src->cfg.levels[c]),
             erg_pdu_channel_text(&src->cfg, c, id, sizeof id), ch->bad_why);
    return 0;
  }
  return -1;
}

void erg_snmp_cross_check(struct erg_pdu_source *src, struct erg_pdu_reading *out) {
  struct snmp_priv *p = src->priv;
  struct erg_pdu_xrow x[ERG_PDU_MAX_CHANNELS];
  int n = src->cfg.nchannels;
  for (int c = 0; c < n; c++)
    x[c] = (struct erg_pdu_xrow){.level = src->cfg.levels[c],
                                 .unit = src->cfg.units[c],
                                 .watts = out[c].watts,
                                 .apparent = p->ch[c].apparent,
                                 .measured = out[c].power_source == ERG_PDU_W_MEASURED};
  char why[sizeof p->ch[0].bad_why];
  if (erg_pdu_cross_check(x, n, false, why, sizeof why) == 0)
    return;
  for (int c = 0; c < n; c++) {
    if (!x[c].refused)
      continue;
    out[c].watts = NAN;
    out[c].ok = isfinite(out[c].energy_joules);
    out[c].bad_value = true;
    snprintf(p->ch[c].bad_why, sizeof p->ch[c].bad_why, "power: %.*s",
             (int)sizeof p->ch[c].bad_why - 8, x[c].reason);
  }
}

/* Before a round: the channels' raw values are forgotten, so a channel
 * that does not answer this round reads nothing. */
void erg_snmp_forget(struct erg_pdu_source *src) {
  struct snmp_priv *p = src->priv;
  for (int c = 0; c < src->cfg.nchannels; c++) {
    for (int q = 0; q <= ERG_Q_N; q++)
      p->ch[c].raw[q] = NAN, p->ch[c].fix[q] = 1.0;
    p->ch[c].apparent = NAN;
    p->ch[c].seen_ns = 0;
    p->ch[c].bad_why[0] = '\0';
  }
}

/* Why no channel of src read anything: a level the profile lacks, or
 * nothing answered. */
void erg_snmp_no_value_why(const struct erg_pdu_source *src, char *why, size_t whylen) {
  char lv[192];
  for (int c = 0; c < src->cfg.nchannels; c++)
    if (erg_snmp_level_missing(src->priv, &src->cfg, c, lv, sizeof lv)) {
      snprintf(why, whylen, "%s: %s", src->cfg.host, lv);
      return;
    }
  const struct snmp_priv *p = src->priv;
  if (!erg_snmp_ready(p)) /* erg_snmp_names_stale this round */
    snprintf(why, whylen,
             "%s: rows of the variable table were added or removed: their names "
             "are read again",
             src->cfg.host);
  else
    snprintf(why, whylen, "%s: no configured channel had a value", src->cfg.host);
}

void erg_snmp_fw_apply(struct snmp_priv *p) {
  if (p->fw_done || !p->prof || !p->ident.sysdescr[0])
    return;
  p->fw_done = true;
  const struct erg_snmp_profile *prof = p->prof;
  bool copied = false;
  for (int i = 0; i < ERG_SNMP_MAX_FW && prof->fw[i].descr; i++) {
    const struct erg_snmp_fw_scale *f = &prof->fw[i];
    if (!strstr(p->ident.sysdescr, f->descr) || f->level < 0 || f->level >= ERG_PDU_NLEVELS ||
        f->q <= ERG_Q_NAME || f->q >= ERG_Q_N || !(f->scale > 0))
      continue;
    if (!copied) {
      if (prof != &p->generic)
        p->generic = *prof;
      p->prof = p->ident.prof = &p->generic;
      copied = true;
    }
    p->generic.lv[f->level].q[f->q].scale = f->scale;
    size_t o = strlen(p->ident.why);
    if (o < sizeof p->ident.why)
      snprintf(p->ident.why + o, sizeof p->ident.why - o, "; %s", f->why);
  }
  if (copied)
    erg_snmp_borrow_voltage(p);
}

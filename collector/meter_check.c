// SPDX-License-Identifier: GPL-3.0-or-later
/* A meter reading is believed only inside the channel's physical range
 * (issue 23): a Modbus register read as -500 W or 4,294,967,295 W (a
 * Gauge32's all-ones, a register of another type) went into the journal as
 * measured power. Power below 0 or above max_watts, and an energy counter
 * below 0, are no reading: the value is dropped (the cell gets no power
 * from it, nothing is invented in its place), counted per channel
 * (erg_meter_out_of_range_total) and logged once per channel. So is an
 * interval whose counter difference means more than max_watts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "state.h"

/* A PDU outlet: a 16 A three-phase outlet at 400 V gives at most 11 kW.
 * Anything else (an inlet, a phase, a bank, the device, a Modbus meter on
 * a whole supply): a 125 A three-phase supply gives 87 kW; the energy
 * counter already calls more than 100 kW on one channel a reset (pdu.c). */
#define METER_MAX_WATTS_OUTLET 20e3
#define METER_MAX_WATTS_OTHER 100e3

/* The entity number (outlet, inlet, ...; Modbus: unit id) of a source's
 * channel index, and its level, as logs and /metrics name a channel. Here,
 * not in collector.c, so that no file calls back into the loop's. */
int collector_outlet(const struct collector *c, int source, int ch) {
  const struct erg_pdu_source_config *sc = &c->cfg->sources[source];
  return ch < sc->nchannels ? sc->channels[ch] : sc->unit_id ? sc->unit_id : ch + 1;
}

const char *collector_channel(const struct collector *c, int source, int ch, char *buf,
                              size_t len) {
  const struct erg_pdu_source_config *sc = &c->cfg->sources[source];
  if (ch < sc->nchannels)
    return erg_pdu_channel_text(sc, ch, buf, len);
  snprintf(buf, len, "%d", collector_outlet(c, source, ch));
  return buf;
}

const char *collector_level(const struct collector *c, int source, int ch) {
  const struct erg_pdu_source_config *sc = &c->cfg->sources[source];
  return erg_pdu_level_name(ch < sc->nchannels ? sc->levels[ch] : ERG_PDU_OUTLET);
}

double meter_max_watts(const struct erg_pdu_source_config *s, int ch) {
  if (s->max_watts > 0)
    return s->max_watts;
  /* A BMC reads one server: above 20 kW is no server's reading. Redfish
   * may read one blade enclosure too (a shared meter), as an outlet. */
  if (!strcmp(s->driver, "ipmi"))
    return ERG_DCMI_MAX_WATTS;
  bool outlet =
      (!strcmp(s->driver, "snmp") && ch < s->nchannels && s->levels[ch] == ERG_PDU_OUTLET) ||
      !strcmp(s->driver, "redfish");
  return outlet ? METER_MAX_WATTS_OUTLET : METER_MAX_WATTS_OTHER;
}

static void meter_out_of_range(struct collector *c, int source, int ch, const char *what) {
  struct source_state *ss = &c->sources[source];
  ss->out_of_range[ch]++;
  if (ss->range_logged[ch])
    return;
  ss->range_logged[ch] = true;
  char id[40];
  erg_warn("source %s %s %s: %s: no reading, the cells get no power from it (logged once per "
           "channel; erg_meter_out_of_range_total)",
           c->cfg->sources[source].name, collector_level(c, source, ch),
           collector_channel(c, source, ch, id, sizeof id), what);
}

const struct meter_msg *meter_check(struct collector *c, const struct meter_msg *m,
                                    struct meter_msg *checked) {
  const struct erg_pdu_source_config *s = &c->cfg->sources[m->source];
  int n = m->nchannels < ERG_PDU_MAX_CHANNELS ? m->nchannels : ERG_PDU_MAX_CHANNELS;
  const struct meter_msg *out = m;
  for (int ch = 0; ch < n; ch++) {
    const struct erg_pdu_reading *r = &m->readings[ch];
    double max = meter_max_watts(s, ch);
    bool bad_w = isfinite(r->watts) && (r->watts < 0 || r->watts > max);
    bool bad_e = isfinite(r->energy_joules) && r->energy_joules < 0;
    bool inf_e = isinf(r->energy_joules);
    if (!bad_w && !bad_e && !inf_e)
      continue;
    if (out == m) {
      memcpy(checked, m, sizeof *checked);
      out = checked;
    }
    struct erg_pdu_reading *w = &checked->readings[ch];
    char what[160];
    if (bad_w) {
      snprintf(what, sizeof what, "power %.10g W is outside 0..%.10g W (max_watts)", r->watts, max);
      meter_out_of_range(c, m->source, ch, what);
      w->watts = NAN;
    }
    if (bad_e || inf_e) {
      snprintf(what, sizeof what, "energy counter %.6g J is below 0 or infinite", r->energy_joules);
      meter_out_of_range(c, m->source, ch, what);
      w->energy_joules = NAN;
    }
    w->ok = w->ok && (isfinite(w->watts) || isfinite(w->energy_joules));
  }
  return out;
}

bool meter_check_interval(struct collector *c, int source, int ch, uint64_t t0_ns, uint64_t t1_ns,
                          double joules) {
  double dt = (double)(t1_ns - t0_ns) / 1e9;
  double watts = dt > 0 ? joules / dt : NAN;
  if (dt > 0 && watts >= 0 && watts <= meter_max_watts(&c->cfg->sources[source], ch))
    return true;
  char what[160];
  snprintf(what, sizeof what,
           "the energy counter moved by %.6g J in %.3g s, %.6g W, outside "
           "0..%.6g W (max_watts)",
           joules, dt, watts, meter_max_watts(&c->cfg->sources[source], ch));
  meter_out_of_range(c, source, ch, what);
  return false;
}

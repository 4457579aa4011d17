// SPDX-License-Identifier: GPL-3.0-or-later
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "erg_pdu.h"
#include "erg_redfish.h"
#include "pdu_check.h"
#ifdef ERG_HAVE_SNMP
#include "profiles.h"
#endif

/* Redfish's check (collector/pdu/redfish.c) concerns the section. */
static int pdu_redfish_check(const struct erg_pdu_source_config *cfg, const char **key, char *why,
                             size_t whylen) {
  *key = "";
  return erg_redfish_config_check(cfg, why, whylen);
}

/* The drivers this build knows, each with the check of its config
 * (pdu_check.h; a driver's own check hook runs after it): a new driver is
 * one row here. */
static const struct {
  const struct erg_pdu_driver *driver;
  erg_pdu_check_fn check;
} pdu_drivers[] = {
    {&erg_pdu_driver_modbus, erg_pdu_modbus_check},
    {&erg_pdu_driver_redfish, pdu_redfish_check},
#ifdef ERG_HAVE_SNMP
    {&erg_pdu_driver_snmp, erg_pdu_snmp_check},
#endif
#ifdef ERG_HAVE_FREEIPMI
    {&erg_pdu_driver_ipmi, NULL},
#endif
};
#define PDU_NDRIVERS (sizeof pdu_drivers / sizeof pdu_drivers[0])

const char *erg_pdu_driver_names(void) {
  static char names[128];
  if (!names[0])
    for (size_t i = 0; i < PDU_NDRIVERS; i++)
      snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
               pdu_drivers[i].driver->name);
  return names;
}

int erg_pdu_source_check(const struct erg_pdu_source_config *cfg, const char **key, char *why,
                         size_t whylen) {
  *key = "";
  for (size_t i = 0; i < PDU_NDRIVERS; i++)
    if (strcmp(pdu_drivers[i].driver->name, cfg->driver) == 0) {
      const struct erg_pdu_driver *d = pdu_drivers[i].driver;
      if (pdu_drivers[i].check && pdu_drivers[i].check(cfg, key, why, whylen) != 0)
        return -1;
      *key = "";
      return d->check ? d->check(cfg, why, whylen) : 0;
    }
  *key = "driver";
  if (!strcmp(cfg->driver, "ipmi"))
    snprintf(why, whylen, "driver ipmi is not in this build (erg was built without libfreeipmi)");
  else
    snprintf(why, whylen, "unknown driver '%.32s' (this build has: %s)", cfg->driver,
             erg_pdu_driver_names());
  return -1;
}

int erg_pdu_source_note(struct erg_pdu_source *src, char *why, size_t whylen) {
  if (!src->driver || !src->driver->note)
    return -1;
  return src->driver->note(src, why, whylen);
}

int erg_pdu_source_open(struct erg_pdu_source *src, const struct erg_pdu_source_config *cfg,
                        char *why, size_t whylen) {
  memset(src, 0, sizeof *src);
  src->cfg = *cfg;
  for (size_t i = 0; i < PDU_NDRIVERS; i++) {
    if (strcmp(pdu_drivers[i].driver->name, cfg->driver) == 0) {
      src->driver = pdu_drivers[i].driver;
      return src->driver->open(src, why, whylen);
    }
  }
  snprintf(why, whylen, "unknown driver '%s'", cfg->driver);
  return -1;
}

int erg_pdu_source_poll(struct erg_pdu_source *src, struct erg_pdu_reading *out, char *why,
                        size_t whylen) {
  return src->driver->poll(src, out, why, whylen);
}

double erg_pdu_source_wrap_joules(const struct erg_pdu_source *src, int channel) {
  if (!src->driver || !src->driver->wrap_joules || channel < 0 || channel >= src->cfg.nchannels)
    return 0;
  return src->driver->wrap_joules(src, channel);
}

int erg_pdu_source_bad_value(const struct erg_pdu_source *src, int channel, char *why,
                             size_t whylen) {
  if (!src->driver || !src->driver->bad_value || channel < 0 || channel >= src->cfg.nchannels)
    return -1;
  return src->driver->bad_value(src, channel, why, whylen);
}

void erg_pdu_source_close(struct erg_pdu_source *src) {
  if (src->driver && src->driver->close)
    src->driver->close(src);
  src->driver = NULL;
}

static void counter_remember(struct erg_pdu_counter *c, const struct erg_pdu_reading *r) {
  c->have_prev = true;
  c->held = false;
  c->last_t_ns = r->t_ns;
  c->prev_joules = r->energy_joules;
  c->prev_t_ns = r->t_ns;
  c->prev_watts = r->watts;
}

/* Moves seen in whole multiples of the smallest before it counts as the
 * counter's step. */
#define COUNTER_WHOLE_MOVES 3

/* The counter's step: the reading's (profile, integer unit, float32
 * spacing at its value) or, once it stood still under load and moved in
 * whole multiples of its smallest move, that move; whichever is larger. */
static double counter_resolution(const struct erg_pdu_counter *c, const struct erg_pdu_reading *r) {
  double res = r->energy_resolution_joules > 0 ? r->energy_resolution_joules : 0;
  bool quantised = c->stood_still && !c->uneven_move && c->whole_moves >= COUNTER_WHOLE_MOVES;
  if (quantised && c->min_step_joules > res)
    res = c->min_step_joules;
  return res;
}

/* Whether the counter resolves this interval's energy. A 0.1 kWh counter
 * (APC) steps once in 20 min at 300 W: over a 1 s poll it reads 0 J, then a
 * 360 kJ lump; so does a float32 kWh register at 48,213 kWh every 14 kJ.
 * Without watts to compare with, the counter is all there is. */
static bool counter_fine(struct erg_pdu_counter *c, const struct erg_pdu_reading *r, double dt) {
  c->resolution_joules = counter_resolution(c, r);
  if (c->resolution_joules <= 0 || isnan(r->watts) || isnan(c->prev_watts))
    return true;
  double e = 0.5 * (r->watts + c->prev_watts) * (c->horizon_seconds > dt ? c->horizon_seconds : dt);
  return c->resolution_joules <= ERG_PDU_COUNTER_MAX_STEP * e;
}

/* Learns the step from the counter's moves: d J over dt s at these watts.
 * Whole multiples within 5 % of the step: a 0.01 kWh count shown as a
 * float is off by the float's spacing. */
static void counter_observe(struct erg_pdu_counter *c, const struct erg_pdu_reading *r, double d,
                            double dt) {
  double drawn = 0.5 * (r->watts + c->prev_watts) * dt;
  if (d == 0 && drawn >= 1.0)
    c->stood_still = true;
  if (!(d > 0))
    return;
  if (c->min_step_joules == 0 || d < 0.95 * c->min_step_joules) {
    c->min_step_joules = d;
    c->whole_moves = 1;
    c->uneven_move = false;
    return;
  }
  double k = d / c->min_step_joules;
  if (fabs(k - floor(k + 0.5)) > 0.05)
    c->uneven_move = true;
  else
    c->whole_moves++;
}

enum erg_pdu_delta_kind erg_pdu_counter_update(struct erg_pdu_counter *c,
                                               const struct erg_pdu_reading *r, uint64_t max_gap_ns,
                                               uint64_t *t0_ns, uint64_t *t1_ns, double *joules) {
  if (!r->ok)
    return ERG_PDU_DELTA_NONE;
  /* While held, the gap that matters is since the last reading. */
  uint64_t last = c->held ? c->last_t_ns : c->prev_t_ns;
  if (!c->have_prev || r->t_ns <= last || r->t_ns - last > max_gap_ns) {
    /* First reading, clock went back, or a gap too long to bridge. */
    counter_remember(c, r);
    return ERG_PDU_DELTA_NONE;
  }
  *t0_ns = c->prev_t_ns;
  *t1_ns = r->t_ns;
  double dt = (double)(r->t_ns - c->prev_t_ns) / 1e9;
  enum erg_pdu_delta_kind kind = ERG_PDU_DELTA_NONE;
  bool counter = !isnan(r->energy_joules) && !isnan(c->prev_joules);
  double d = counter ? r->energy_joules - c->prev_joules : NAN;
  if (counter && d < 0 && c->wrap_joules > 0 && c->prev_joules > c->wrap_joules * 0.5 &&
      r->energy_joules < c->wrap_joules * 0.5)
    d += c->wrap_joules; /* the counter wrapped once */
  /* Backwards, or more than 100 kW on one outlet: a reset, never energy. */
  bool reset = counter && (d < 0 || d > 100e3 * dt);
  /* Standing still with no watts to say what the interval drew: a coarse
   * counter (0.01 kWh, a float32 kWh register at a high reading) or one
   * refreshed more slowly than it is polled. 0 J now and the whole step at
   * the move would put 0 W and then thousands of W into cells; held, the
   * move's energy spreads over the time since the previous move. */
  /* A power reading that is a bad value (no reading: text, an impossible
   * number) beside a counter that stands still: what the interval drew is
   * unknown, neither the counter's 0 J nor a move to wait for. Nothing, and
   * no hold: the node's cells come, their power missing (the collector). */
  if (counter && d == 0 && isnan(r->watts) && r->bad_value) {
    counter_remember(c, r);
    return ERG_PDU_DELTA_NONE;
  }
  if (counter && d == 0 && (isnan(r->watts) || isnan(c->prev_watts)) &&
      r->t_ns - c->prev_t_ns < c->hold_max_ns) {
    c->held = true;
    c->last_t_ns = r->t_ns;
    c->held_polls++;
    return ERG_PDU_DELTA_HELD;
  }
  if (c->held && counter && !reset && d > 0)
    c->last_held_seconds = dt;
  if (counter && !reset && !isnan(r->watts) && !isnan(c->prev_watts))
    counter_observe(c, r, d, dt);
  bool fine = counter_fine(c, r, dt);
  c->coarse = counter && !fine;
  if (counter && fine && reset) {
    kind = ERG_PDU_DELTA_RESET;
  } else if (counter && fine) {
    *joules = d;
    kind = ERG_PDU_DELTA_ENERGY;
  } else if (!isnan(r->watts) && !isnan(c->prev_watts)) {
    *joules = 0.5 * (r->watts + c->prev_watts) * dt;
    kind = ERG_PDU_DELTA_POWER;
    c->coarse_intervals += c->coarse;
  }
  counter_remember(c, r);
  return kind;
}

void erg_pdu_float_to_regs(float f, uint16_t regs[2]) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  regs[0] = (uint16_t)(u >> 16);
  regs[1] = (uint16_t)(u & 0xffff);
}

unsigned erg_pdu_profile_levels(const char *driver, const char *profile) {
#ifdef ERG_HAVE_SNMP
  if (driver && !strcmp(driver, "snmp"))
    return erg_snmp_profile_levels(profile);
#endif
  (void)driver;
  (void)profile;
  return 0;
}

int erg_pdu_profile_unit_arcs(const char *driver, const char *profile, int level) {
#ifdef ERG_HAVE_SNMP
  const struct erg_snmp_profile *p = driver && !strcmp(driver, "snmp") && profile && profile[0]
                                         ? erg_snmp_profile_find(profile)
                                         : NULL;
  if (p && !p->names && level >= 0 && level < ERG_PDU_NLEVELS)
    return erg_snmp_level_wilds(&p->lv[level]);
#endif
  (void)driver;
  (void)profile;
  (void)level;
  return -1;
}

#ifndef ERG_HAVE_FREEIPMI
int erg_pdu_ipmi_probe(const struct erg_pdu_source_config *c, struct erg_ipmi_probe *res, char *why,
                       size_t whylen) {
  memset(res, 0, sizeof *res);
  res->login_seconds = res->request_seconds = NAN;
  if (erg_pdu_source_check(c, why, whylen) == 0) /* says "not in this build" */
    snprintf(why, whylen, "driver ipmi is not in this build");
  return -1;
}
#endif

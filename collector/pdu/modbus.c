// SPDX-License-Identifier: GPL-3.0-or-later
/* Modbus meters (libmodbus), over TCP or RTU (a serial device). Profiles
 * say which registers hold power and energy; "generic" takes them from the
 * config. One channel = one meter = one Modbus unit id on the same
 * connection or bus. */
#include <errno.h>
#include <math.h>
#include <modbus/modbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"
#include "erg_pdu.h"
#include "pdu_check.h"

struct modbus_profile {
  const char *name;
  struct erg_modbus_reg power, energy; /* energy.function 0: none */
  double power_scale;                  /* raw -> W */
  double energy_to_joules;             /* raw -> J */
  /* One counter step in J beyond the register's own (0: none known).
   * Eastron meters count in 0.01 kWh (36 kJ) although the register is a
   * float: too coarse for a 5 s grid, so the counter is shown (probe) and
   * the grid uses power. */
  double energy_resolution_joules;
};

#define REG_F32(fc, a)                                                                             \
  { fc, a, ERG_MODBUS_FLOAT32, "abcd" }
#define REG_U32(fc, a)                                                                             \
  { fc, a, ERG_MODBUS_UINT32, "abcd" }

static const struct modbus_profile modbus_profiles[] = {
    {"sdm630", REG_F32(4, 0x0034), REG_F32(4, 0x0048), 1.0, 3.6e6, 36e3},
    {"sdm120", REG_F32(4, 0x000C), REG_F32(4, 0x0048), 1.0, 3.6e6, 36e3},
    {"sdm72", REG_F32(4, 0x0034), REG_F32(4, 0x0048), 1.0, 3.6e6, 36e3},
    /* erg-pdusim: SDM630 layout plus a 32-bit joule counter at 0x1000. */
    {"erg-sim", REG_F32(4, 0x0034), REG_U32(4, 0x1000), 1.0, 1.0, 1.0},
};

struct modbus_priv {
  modbus_t *ctx;
  struct modbus_profile prof; /* a copy: "generic" is built from the config */
  bool connected;
  char where[160]; /* "host:port" or the device, for reasons */
  /* Channel i's last value that was no number (a float32 register holding
   * NaN or inf), "" none: read as missing and said once (bad_value). */
  char bad_why[ERG_PDU_MAX_CHANNELS][96];
};

static const struct modbus_profile *modbus_profile_find(const char *name) {
  for (size_t i = 0; i < sizeof modbus_profiles / sizeof modbus_profiles[0]; i++)
    if (strcmp(modbus_profiles[i].name, name) == 0)
      return &modbus_profiles[i];
  return NULL;
}

/* profile = generic: power_register, energy_register, at least one. An
 * energy-only meter is read through its counter alone (held while it
 * stands still, pdu.c). */
static int modbus_profile_generic(const struct erg_pdu_source_config *c, struct modbus_profile *p,
                                  char *why, size_t whylen) {
  char inner[200];
  memset(p, 0, sizeof *p);
  p->name = "generic";
  if (!c->power_register[0] && !c->energy_register[0]) {
    snprintf(why, whylen,
             "profile generic needs power_register and/or energy_register = "
             "FC:ADDRESS:TYPE[:ORDER]");
    return -1;
  }
  if (c->power_register[0] &&
      erg_modbus_reg_parse(c->power_register, &p->power, inner, sizeof inner)) {
    snprintf(why, whylen, "power_register %s", inner);
    return -1;
  }
  if (c->energy_register[0] &&
      erg_modbus_reg_parse(c->energy_register, &p->energy, inner, sizeof inner)) {
    snprintf(why, whylen, "energy_register %s", inner);
    return -1;
  }
  p->power_scale = c->power_scale > 0 ? c->power_scale : 1.0;
  p->energy_to_joules = c->energy_scale_joules > 0 ? c->energy_scale_joules : 3600.0;
  /* The register's own step comes with each reading (modbus_read_channel). */
  p->energy_resolution_joules = 0;
  return 0;
}

static int modbus_profile_resolve(const struct erg_pdu_source_config *c, struct modbus_profile *p,
                                  char *why, size_t whylen) {
  const char *pname = c->profile[0] ? c->profile : "sdm630";
  if (!strcmp(pname, "generic"))
    return modbus_profile_generic(c, p, why, whylen);
  const struct modbus_profile *found = modbus_profile_find(pname);
  if (!found) {
    snprintf(why, whylen, "unknown modbus profile '%s' (sdm630, sdm120, sdm72, erg-sim, generic)",
             pname);
    return -1;
  }
  *p = *found;
  return 0;
}

int erg_pdu_modbus_check(const struct erg_pdu_source_config *c, const char **key, char *why,
                         size_t whylen) {
  struct modbus_profile p;
  if (!c->host[0] && !c->device[0]) {
    *key = "";
    snprintf(why, whylen, "a Modbus meter needs host = (TCP) or device = (RTU)");
    return -1;
  }
  if (modbus_profile_resolve(c, &p, why, whylen) != 0) {
    /* The generic profile's reasons start with the register key. */
    *key = !strncmp(why, "power_register", 14)    ? "power_register"
           : !strncmp(why, "energy_register", 15) ? "energy_register"
                                                  : "profile";
    return -1;
  }
  return 0;
}

/* RTU when a device is given, TCP otherwise. */
static modbus_t *modbus_new_ctx(const struct erg_pdu_source_config *c, char *where, size_t wlen,
                                char *why, size_t whylen) {
  modbus_t *ctx;
  if (c->device[0]) {
    int baud = c->baud ? c->baud : 9600;
    char parity = c->parity ? c->parity : 'N';
    int data = c->data_bits ? c->data_bits : 8, stop = c->stop_bits ? c->stop_bits : 1;
    snprintf(where, wlen, "%s (%d %d%c%d)", c->device, baud, data, parity, stop);
    ctx = modbus_new_rtu(c->device, baud, parity, data, stop);
  } else {
    int port = c->port ? c->port : 502;
    snprintf(where, wlen, "%s:%d", c->host, port);
    ctx = modbus_new_tcp(c->host, port);
  }
  if (!ctx)
    snprintf(why, whylen, "modbus %s: %s", where, modbus_strerror(errno));
  return ctx;
}

static int modbus_open_src(struct erg_pdu_source *src, char *why, size_t whylen) {
  struct modbus_priv *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  if (modbus_profile_resolve(&src->cfg, &m->prof, why, whylen) ||
      !(m->ctx = modbus_new_ctx(&src->cfg, m->where, sizeof m->where, why, whylen))) {
    free(m);
    return -1;
  }
  double to = src->cfg.timeout_seconds > 0 ? src->cfg.timeout_seconds : 1.0;
  modbus_set_response_timeout(m->ctx, (uint32_t)to, (uint32_t)((to - (uint32_t)to) * 1e6));
  src->priv = m;
  if (src->cfg.nchannels == 0) {
    src->cfg.nchannels = 1;
    src->cfg.channels[0] = src->cfg.unit_id ? src->cfg.unit_id : 1;
  }
  return 0;
}

/* Reads one register spec; NAN and -1 on failure. */
static int modbus_read_reg(modbus_t *ctx, const struct erg_modbus_reg *r, double *out) {
  uint16_t regs[2];
  int n = erg_modbus_reg_count(r);
  int got = r->function == 3 ? modbus_read_registers(ctx, r->address, n, regs)
                             : modbus_read_input_registers(ctx, r->address, n, regs);
  *out = got == n ? erg_modbus_reg_decode(r, regs) : NAN;
  return got == n ? 0 : -1;
}

/* A decoded value that is no number: NAN, and the reason kept for the
 * channel (the collector logs it once and counts it). */
static double modbus_number(struct modbus_priv *m, int c, const struct erg_modbus_reg *r,
                            const char *what, double raw, struct erg_pdu_reading *out) {
  if (isfinite(raw))
    return raw;
  snprintf(m->bad_why[c], sizeof m->bad_why[c], "%s register %d:0x%04x read %s", what, r->function,
           r->address, isnan(raw) ? "NaN" : "an infinity");
  out->bad_value = true;
  return NAN;
}

static int modbus_read_channel(struct modbus_priv *m, int c, int unit, struct erg_pdu_reading *out,
                               char *why, size_t whylen) {
  double raw;
  modbus_set_slave(m->ctx, unit);
  out->energy_joules = out->watts = NAN;
  out->bad_value = false;
  m->bad_why[c][0] = '\0';
  if (m->prof.power.function && modbus_read_reg(m->ctx, &m->prof.power, &raw)) {
    snprintf(why, whylen, "%s unit %d: read power: %s", m->where, unit, modbus_strerror(errno));
    return -1;
  }
  if (m->prof.power.function)
    out->watts = modbus_number(m, c, &m->prof.power, "power", raw, out) * m->prof.power_scale;
  out->energy_resolution_joules = m->prof.energy_resolution_joules;
  if (m->prof.energy.function) {
    if (modbus_read_reg(m->ctx, &m->prof.energy, &raw)) {
      snprintf(why, whylen, "%s unit %d: read energy: %s", m->where, unit, modbus_strerror(errno));
      return -1;
    }
    raw = modbus_number(m, c, &m->prof.energy, "energy", raw, out);
    out->energy_joules = raw * m->prof.energy_to_joules;
    /* A float32 kWh register at a real meter's reading steps by whole Wh:
     * its spacing at the value, not the profile, says how coarse it is. */
    double step = erg_modbus_reg_resolution(&m->prof.energy, raw) * m->prof.energy_to_joules;
    if (step > out->energy_resolution_joules)
      out->energy_resolution_joules = step;
  }
  out->t_ns = erg_time_realtime_ns();
  out->ok = isfinite(out->watts) || (!m->prof.power.function && isfinite(out->energy_joules));
  return out->ok ? 0 : -1;
}

static int modbus_poll_src(struct erg_pdu_source *src, struct erg_pdu_reading *out, char *why,
                           size_t whylen) {
  struct modbus_priv *m = src->priv;
  for (int i = 0; i < src->cfg.nchannels; i++)
    out[i].ok = false;
  if (!m->connected) {
    if (modbus_connect(m->ctx) != 0) {
      snprintf(why, whylen, "connect %s: %s", m->where, modbus_strerror(errno));
      return -1;
    }
    m->connected = true;
  }
  int good = 0;
  for (int i = 0; i < src->cfg.nchannels; i++)
    if (modbus_read_channel(m, i, src->cfg.channels[i], &out[i], why, whylen) == 0)
      good++;
  if (!good) {
    /* Drop the connection so the next round starts clean. */
    modbus_close(m->ctx);
    m->connected = false;
    return -1;
  }
  return 0;
}

static void modbus_close_src(struct erg_pdu_source *src) {
  struct modbus_priv *m = src->priv;
  if (!m)
    return;
  if (m->connected)
    modbus_close(m->ctx);
  modbus_free(m->ctx);
  free(m);
  src->priv = NULL;
}

/* Integer counters wrap at their width in raw units; float32 ones do not
 * (they lose resolution instead). */
static double modbus_wrap_joules(const struct erg_pdu_source *src, int channel) {
  (void)channel;
  const struct modbus_priv *m = src->priv;
  if (!m || !m->prof.energy.function)
    return 0;
  switch (m->prof.energy.type) {
    case ERG_MODBUS_UINT32:
      return 4294967296.0 * m->prof.energy_to_joules;
    case ERG_MODBUS_UINT16:
      return 65536.0 * m->prof.energy_to_joules;
    case ERG_MODBUS_INT32:
      return 2147483648.0 * m->prof.energy_to_joules;
    case ERG_MODBUS_INT16:
      return 32768.0 * m->prof.energy_to_joules;
    default:
      return 0;
  }
}

static int modbus_bad_value(const struct erg_pdu_source *src, int channel, char *why,
                            size_t whylen) {
  const struct modbus_priv *m = src->priv;
  if (!m || !m->bad_why[channel][0])
    return -1;
  snprintf(why, whylen, "%s", m->bad_why[channel]);
  return 0;
}

const struct erg_pdu_driver erg_pdu_driver_modbus = {.name = "modbus",
                                                     .open = modbus_open_src,
                                                     .poll = modbus_poll_src,
                                                     .close = modbus_close_src,
                                                     .wrap_joules = modbus_wrap_joules,
                                                     .bad_value = modbus_bad_value};

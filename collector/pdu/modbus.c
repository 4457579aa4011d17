/* Modbus TCP meters (libmodbus). Profiles say where power and energy live;
 * one channel = one meter = one Modbus unit id on the same connection. */
#include <errno.h>
#include <math.h>
#include <modbus/modbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"
#include "erg_pdu.h"

enum reg_type { REG_NONE, REG_FLOAT32, REG_UINT32 };

struct modbus_profile {
  const char *name;
  int power_addr;           /* input register, float32 W */
  enum reg_type energy_type;
  int energy_addr;
  double energy_to_joules;  /* scale of the raw energy value */
  /* Eastron meters count in 0.01 kWh (36 kJ): too coarse for a 5 s grid,
   * so their counter is shown by probe but power is what the grid uses. */
  bool energy_for_grid;
};

static const struct modbus_profile modbus_profiles[] = {
    {"sdm630", 0x0034, REG_FLOAT32, 0x0048, 3.6e6, false},
    {"sdm120", 0x000C, REG_FLOAT32, 0x0048, 3.6e6, false},
    {"sdm72", 0x0034, REG_FLOAT32, 0x0048, 3.6e6, false},
    /* erg-pdusim: SDM630 layout plus a 32-bit joule counter at 0x1000. */
    {"erg-sim", 0x0034, REG_UINT32, 0x1000, 1.0, true},
};

struct modbus_priv {
  modbus_t *ctx;
  const struct modbus_profile *prof;
  bool connected;
};

static const struct modbus_profile *modbus_profile_find(const char *name) {
  for (size_t i = 0; i < sizeof modbus_profiles / sizeof modbus_profiles[0]; i++)
    if (strcmp(modbus_profiles[i].name, name) == 0)
      return &modbus_profiles[i];
  return NULL;
}

static int modbus_open_src(struct erg_pdu_source *src, char *why, size_t whylen) {
  const char *pname = src->cfg.profile[0] ? src->cfg.profile : "sdm630";
  const struct modbus_profile *prof = modbus_profile_find(pname);
  if (!prof) {
    snprintf(why, whylen, "unknown modbus profile '%s' (sdm630, sdm120, sdm72, erg-sim)", pname);
    return -1;
  }
  struct modbus_priv *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  m->prof = prof;
  m->ctx = modbus_new_tcp(src->cfg.host, src->cfg.port ? src->cfg.port : 502);
  if (!m->ctx) {
    snprintf(why, whylen, "modbus_new_tcp(%s): %s", src->cfg.host, modbus_strerror(errno));
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

static uint32_t modbus_u32(const uint16_t *r) { return ((uint32_t)r[0] << 16) | r[1]; }

static int modbus_read_channel(struct modbus_priv *m, int unit, struct erg_pdu_reading *out,
                               char *why, size_t whylen) {
  uint16_t reg[2];
  modbus_set_slave(m->ctx, unit);
  if (modbus_read_input_registers(m->ctx, m->prof->power_addr, 2, reg) != 2) {
    snprintf(why, whylen, "unit %d: read power: %s", unit, modbus_strerror(errno));
    return -1;
  }
  out->watts = erg_pdu_regs_to_float(reg);
  out->energy_joules = NAN;
  if (m->prof->energy_type != REG_NONE && m->prof->energy_for_grid) {
    if (modbus_read_input_registers(m->ctx, m->prof->energy_addr, 2, reg) != 2) {
      snprintf(why, whylen, "unit %d: read energy: %s", unit, modbus_strerror(errno));
      return -1;
    }
    double raw = m->prof->energy_type == REG_FLOAT32 ? erg_pdu_regs_to_float(reg)
                                                     : (double)modbus_u32(reg);
    out->energy_joules = raw * m->prof->energy_to_joules;
  }
  out->t_ns = erg_time_realtime_ns();
  out->ok = isfinite(out->watts);
  return out->ok ? 0 : -1;
}

static int modbus_poll_src(struct erg_pdu_source *src, struct erg_pdu_reading *out, char *why,
                           size_t whylen) {
  struct modbus_priv *m = src->priv;
  for (int i = 0; i < src->cfg.nchannels; i++)
    out[i].ok = false;
  if (!m->connected) {
    if (modbus_connect(m->ctx) != 0) {
      snprintf(why, whylen, "connect %s:%d: %s", src->cfg.host, src->cfg.port,
               modbus_strerror(errno));
      return -1;
    }
    m->connected = true;
  }
  int good = 0;
  for (int i = 0; i < src->cfg.nchannels; i++)
    if (modbus_read_channel(m, src->cfg.channels[i], &out[i], why, whylen) == 0)
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

/* A uint32 counter wraps at 2^32 raw units; float32 kWh counters do not. */
static double modbus_wrap_joules(const struct erg_pdu_source *src, int channel) {
  (void)channel;
  const struct modbus_priv *m = src->priv;
  return m && m->prof->energy_type == REG_UINT32 ? 4294967296.0 * m->prof->energy_to_joules : 0;
}

const struct erg_pdu_driver erg_pdu_driver_modbus = {.name = "modbus",
                                                     .open = modbus_open_src,
                                                     .poll = modbus_poll_src,
                                                     .close = modbus_close_src,
                                                     .wrap_joules = modbus_wrap_joules};

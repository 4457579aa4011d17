// SPDX-License-Identifier: GPL-3.0-or-later
/* The simulator's Modbus server, over TCP or RTU (a tty): unit id N is
 * virtual node N, then unit nnodes + K the Kth --sum channel. Input registers follow the Eastron
 * SDM630 layout (float32 W at 0x0034, float32 kWh at 0x0048) plus a uint32 joule counter at 0x1000
 * (profile "erg-sim"); holding registers repeat them and add, at 0x0100, the
 * same values in other encodings for the generic register spec (see
 * docs/pdu.md, "erg-pdusim registers"). */
#include <errno.h>
#include <math.h>
#include <modbus/modbus.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "erg_common.h"
#include "erg_pdu.h"
#include "sim.h"

#define REG_BASE 0x0000
#define REG_COUNT 0x1010

/* 32 bits of u into two registers with the value's bytes A..D placed as
 * order says (wire position i gets byte order[i]). */
static void sim_put32(uint16_t *r, uint32_t u, const char *order) {
  uint8_t v[4] = {u >> 24, (u >> 16) & 0xff, (u >> 8) & 0xff, u & 0xff}, w[4];
  for (int i = 0; i < 4; i++)
    w[i] = v[order[i] - 'a'];
  r[0] = (uint16_t)(w[0] << 8 | w[1]);
  r[1] = (uint16_t)(w[2] << 8 | w[3]);
}

static uint32_t sim_f32_bits(double x) {
  float f = (float)x;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* The generic-spec test layout (holding registers from 0x0100). */
static void sim_fill_generic(uint16_t *r, double w, double e, double offset_kwh) {
  sim_put32(r + 0x0100, sim_f32_bits(w), "cdab"); /* float32 W, words swapped */
  double dw = floor(w * 10 + 0.5);
  r[0x0102] = (uint16_t)(dw > 65535 ? 65535 : dw);                              /* uint16 0.1 W */
  sim_put32(r + 0x0103, (uint32_t)(int32_t)floor(w * 100 + 0.5), "badc");       /* int32 0.01 W */
  sim_put32(r + 0x0105, (uint32_t)fmod(floor(e / 3600), 4294967296.0), "cdab"); /* uint32 Wh */
  sim_put32(r + 0x0107, sim_f32_bits(e / 3.6e6 + offset_kwh), "dcba");          /* float32 kWh */
}

static void sim_fill_registers(modbus_mapping_t *map, const struct sim_node *n, double offset_kwh) {
  uint16_t *r = map->tab_input_registers;
  double e = sim_energy_now(n, erg_time_realtime_ns() / 1e9);
  erg_pdu_float_to_regs((float)n->watts, r + 0x0034);
  erg_pdu_float_to_regs((float)(e / 3.6e6 + offset_kwh), r + 0x0048);
  erg_pdu_float_to_regs((float)(e / 3.6e6 + offset_kwh), r + 0x0156);
  /* The counter wraps at 2^32 J like a real 32-bit register would. */
  uint32_t j = (uint32_t)fmod(e, 4294967296.0);
  r[0x1000] = (uint16_t)(j >> 16);
  r[0x1001] = (uint16_t)(j & 0xffff);
  memcpy(map->tab_registers, r, REG_COUNT * sizeof *r);
  sim_fill_generic(map->tab_registers, n->watts, e, offset_kwh);
}

static int sim_reply(struct sim *s, modbus_t *ctx, modbus_mapping_t *map, const uint8_t *req,
                     int len) {
  int hlen = modbus_get_header_length(ctx);
  int unit = req[hlen - 1];
  if (unit < 1 || unit > s->nnodes + s->nsums)
    return modbus_reply_exception(ctx, req, MODBUS_EXCEPTION_GATEWAY_TARGET);
  pthread_mutex_lock(&s->lock);
  sim_fill_registers(map, &s->nodes[unit - 1], s->energy_offset_kwh);
  pthread_mutex_unlock(&s->lock);
  return modbus_reply(ctx, req, len, map);
}

int sim_modbus_serve(struct sim *s, const char *host, int port, double duration_s) {
  modbus_t *ctx = modbus_new_tcp(host, port);
  modbus_mapping_t *map =
      modbus_mapping_new_start_address(0, 0, 0, 0, REG_BASE, REG_COUNT, REG_BASE, REG_COUNT);
  if (!ctx || !map) {
    erg_err("modbus setup: %s", modbus_strerror(errno));
    return -1;
  }
  int server = modbus_tcp_listen(ctx, 16);
  if (server < 0) {
    erg_err("cannot listen on %s:%d: %s", host, port, modbus_strerror(errno));
    modbus_free(ctx);
    modbus_mapping_free(map);
    return -1;
  }
  fd_set all;
  FD_ZERO(&all);
  FD_SET(server, &all);
  int maxfd = server;
  uint64_t end = duration_s > 0 ? erg_time_monotonic_ns() + (uint64_t)(duration_s * 1e9) : 0;
  while (!s->stop && (!end || erg_time_monotonic_ns() < end)) {
    fd_set rd = all;
    struct timeval tv = {0, 200000};
    if (select(maxfd + 1, &rd, NULL, NULL, &tv) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (int fd = 0; fd <= maxfd; fd++) {
      if (!FD_ISSET(fd, &rd))
        continue;
      if (fd == server) {
        int c = accept(server, NULL, NULL);
        if (c >= 0 && c < FD_SETSIZE) {
          FD_SET(c, &all);
          if (c > maxfd)
            maxfd = c;
        } else if (c >= 0) {
          close(c);
        }
        continue;
      }
      uint8_t req[MODBUS_TCP_MAX_ADU_LENGTH];
      modbus_set_socket(ctx, fd);
      int len = modbus_receive(ctx, req);
      if (len > 0)
        sim_reply(s, ctx, map, req, len);
      else if (len < 0) {
        close(fd);
        FD_CLR(fd, &all);
      }
    }
  }
  for (int fd = 0; fd <= maxfd; fd++)
    if (FD_ISSET(fd, &all))
      close(fd);
  modbus_mapping_free(map);
  modbus_free(ctx);
  return 0;
}

/* Modbus CRC-16 (poly 0xA001, init 0xFFFF), low byte first on the wire. */
static uint16_t sim_crc16(const uint8_t *p, int n) {
  uint16_t crc = 0xffff;
  for (int i = 0; i < n; i++) {
    crc ^= p[i];
    for (int b = 0; b < 8; b++)
      crc = crc & 1 ? (uint16_t)((crc >> 1) ^ 0xa001) : (uint16_t)(crc >> 1);
  }
  return crc;
}

/* libmodbus's RTU server answers one slave id: it drops frames for others
 * and then also drops the next frame as that slave's answer. The simulator
 * has one unit per node on the same line, so it frames requests itself:
 * every request it serves (FC 1-6) is 8 bytes; a frame is 8 bytes with a
 * good CRC, and a pause drops a partial one. Returns 8, or 0 if none. */
static int sim_rtu_read_frame(int fd, uint8_t *req) {
  int n = 0;
  while (n < 8) {
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(fd, &rd);
    struct timeval tv = {0, n ? 50000 : 200000};
    if (select(fd + 1, &rd, NULL, NULL, &tv) <= 0)
      return 0;
    ssize_t k = read(fd, req + n, (size_t)(8 - n));
    if (k <= 0)
      return 0;
    n += (int)k;
  }
  uint16_t crc = sim_crc16(req, 6);
  if (req[6] != (crc & 0xff) || req[7] != (crc >> 8) || req[1] < 1 || req[1] > 6) {
    tcflush(fd, TCIFLUSH); /* out of step: start again at the next frame */
    return 0;
  }
  return 8;
}

int sim_modbus_serve_rtu(struct sim *s, const char *device, int baud, char parity,
                         double duration_s) {
  modbus_t *ctx = modbus_new_rtu(device, baud, parity, 8, 1);
  modbus_mapping_t *map =
      modbus_mapping_new_start_address(0, 0, 0, 0, REG_BASE, REG_COUNT, REG_BASE, REG_COUNT);
  if (!ctx || !map || modbus_set_slave(ctx, 1) || modbus_connect(ctx)) {
    erg_err("modbus rtu %s: %s", device, modbus_strerror(errno));
    if (ctx)
      modbus_free(ctx);
    if (map)
      modbus_mapping_free(map);
    return -1;
  }
  uint64_t end = duration_s > 0 ? erg_time_monotonic_ns() + (uint64_t)(duration_s * 1e9) : 0;
  int fd = modbus_get_socket(ctx);
  while (!s->stop && (!end || erg_time_monotonic_ns() < end)) {
    uint8_t req[MODBUS_RTU_MAX_ADU_LENGTH] = {0};
    if (sim_rtu_read_frame(fd, req) != 8 || req[0] == 0)
      continue; /* nothing, a broken frame, or a broadcast (never answered) */
    if (req[0] > s->nnodes + s->nsums)
      continue; /* another device on the line: stay silent, as RTU wants */
    modbus_set_slave(ctx, req[0]);
    sim_reply(s, ctx, map, req, 8);
  }
  modbus_close(ctx);
  modbus_mapping_free(map);
  modbus_free(ctx);
  return 0;
}

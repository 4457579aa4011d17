/* The simulator's Modbus TCP server: unit id N is virtual node N. Registers
 * follow the Eastron SDM630 layout (float32 W at 0x0034, float32 kWh at
 * 0x0048) plus a uint32 joule counter at 0x1000 (profile "erg-sim"). */
#include <errno.h>
#include <math.h>
#include <modbus/modbus.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#include "erg_common.h"
#include "erg_pdu.h"
#include "sim.h"

#define REG_BASE 0x0000
#define REG_COUNT 0x1010

static void sim_fill_registers(modbus_mapping_t *map, const struct sim_node *n) {
  uint16_t *r = map->tab_input_registers;
  double e = sim_energy_now(n, erg_time_realtime_ns() / 1e9);
  erg_pdu_float_to_regs((float)n->watts, r + 0x0034);
  erg_pdu_float_to_regs((float)(e / 3.6e6), r + 0x0048);
  erg_pdu_float_to_regs((float)(e / 3.6e6), r + 0x0156);
  /* The counter wraps at 2^32 J like a real 32-bit register would. */
  uint32_t j = (uint32_t)fmod(e, 4294967296.0);
  r[0x1000] = (uint16_t)(j >> 16);
  r[0x1001] = (uint16_t)(j & 0xffff);
}

static int sim_reply(struct sim *s, modbus_t *ctx, modbus_mapping_t *map, const uint8_t *req,
                     int len) {
  int hlen = modbus_get_header_length(ctx);
  int unit = req[hlen - 1];
  if (unit < 1 || unit > s->nnodes)
    return modbus_reply_exception(ctx, req, MODBUS_EXCEPTION_GATEWAY_TARGET);
  pthread_mutex_lock(&s->lock);
  sim_fill_registers(map, &s->nodes[unit - 1]);
  pthread_mutex_unlock(&s->lock);
  return modbus_reply(ctx, req, len, map);
}

int sim_modbus_serve(struct sim *s, const char *host, int port, double duration_s) {
  modbus_t *ctx = modbus_new_tcp(host, port);
  modbus_mapping_t *map =
      modbus_mapping_new_start_address(0, 0, 0, 0, 0, 0, REG_BASE, REG_COUNT);
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

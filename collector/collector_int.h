/* Internal to the collector library. */
#ifndef ERG_COLLECTOR_INT_H
#define ERG_COLLECTOR_INT_H

#include "erg_collector.h"

#define METER_ENDPOINT "inproc://erg-meters"

struct meter_msg {
  int source;
  int nchannels;
  char error[200];       /* "" when the poll succeeded */
  struct erg_pdu_reading readings[ERG_PDU_MAX_CHANNELS];
  double wrap_joules[ERG_PDU_MAX_CHANNELS]; /* counter modulus per channel, 0 = none */
};

struct meter_thread;
struct meter_thread *meters_start(void *zctx, const struct erg_collector_config *cfg,
                                  volatile int *stop);
void meters_join(struct meter_thread *ts, int n);

struct auth;
struct auth *auth_open(const char *authorized_keys_file, char *why, size_t whylen);
void auth_close(struct auth *a);
void auth_handle(struct auth *a, void *zap_socket);
uint64_t auth_refused_total(const struct auth *a);
uint64_t auth_accepted_total(const struct auth *a);

#endif

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
};

struct meter_thread;
struct meter_thread *meters_start(void *zctx, const struct erg_collector_config *cfg,
                                  volatile int *stop);
void meters_join(struct meter_thread *ts, int n);

#endif

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

/* A node's power model (model.c): loaded from MODEL_DIR/NODE.json, picked
 * up again when the file changes, refitted on a schedule in a thread. */
struct node_model;
struct node_model *node_model_open(const struct erg_collector_config *cfg, const char *node,
                                   const char *journal_dir);
void node_model_close(struct node_model *nm);
/* Once a second from the loop: file check every ~10 s, refit start and
 * hand-over. Never blocks on a fit. */
void node_model_tick(struct node_model *nm, int64_t now);
/* The attribution parameters for a cell; .model is NULL without a model. */
struct erg_cell_model node_model_cell(const struct node_model *nm);

#endif

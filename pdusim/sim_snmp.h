// SPDX-License-Identifier: GPL-3.0-or-later
/* The simulator's SNMP agent: the simulated nodes as outlets of an
 * rPDU2-shaped (APC PowerNet-MIB) PDU, SNMP v1/v2c, any community. */
#ifndef ERG_PDUSIM_SIM_SNMP_H
#define ERG_PDUSIM_SIM_SNMP_H

#include <stdbool.h>
#include <stdint.h>

#include "sim.h"

struct snmp_session;
struct snmp_pdu;
struct variable_list;
/* A config-less net-snmp agent session on UDP host:port (IPv6 if host has
 * a ':'): each request goes to cb(op, session, reqid, pdu, magic), which
 * answers with snmp_sess_send. NULL with a logged reason. Also the load
 * source of tests/bench/snmp_bench_agent.c. */
void *sim_snmp_listen(const char *host, int port,
                      int (*cb)(int, struct snmp_session *, int, struct snmp_pdu *, void *),
                      void *magic);

/* Reads requests of session ss until s->stop or duration_s after
 * start_ns (0: forever), then closes it. */
void sim_snmp_loop(struct sim *s, void *ss, uint64_t start_ns, double duration_s);

/* Sets v's value (and with next its name: the first row after v's) from
 * the agent's rows at ctx; v1: the manager speaks v1 (no Counter64). 0,
 * or -1 when there is no such row. */
typedef int (*sim_snmp_lookup_fn)(void *ctx, struct variable_list *v, bool next, bool v1);
/* Answers a GET (next false) or GETNEXT pdu received on ss, each varbind
 * through lookup: v2c gets noSuchInstance / endOfMibView where it fails,
 * v1 noSuchName with the request's varbinds. */
void sim_snmp_reply(void *ss, struct snmp_pdu *pdu, bool next, sim_snmp_lookup_fn lookup,
                    void *ctx);
/* A copy of pdu as a response without error, and its sending (freed if
 * it cannot be sent; NULL is ignored). */
struct snmp_pdu *sim_snmp_response(struct snmp_pdu *pdu);
void sim_snmp_send(void *ss, struct snmp_pdu *resp);

/* Serves until s->stop or duration_s (0 = forever); 0 on a clean stop, -1
 * with a logged reason if the UDP endpoint cannot be opened. Meant to run
 * in its own thread next to sim_modbus_serve. */
int sim_snmp_serve(struct sim *s, const char *host, int port, double duration_s);

#endif

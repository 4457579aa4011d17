/* The simulator's SNMP agent: the simulated nodes as outlets of an
 * rPDU2-shaped (APC PowerNet-MIB) PDU, SNMP v1/v2c, any community. */
#ifndef ERG_PDUSIM_SIM_SNMP_H
#define ERG_PDUSIM_SIM_SNMP_H

#include "sim.h"

struct snmp_session;
struct snmp_pdu;
/* A config-less net-snmp agent session on UDP host:port (IPv6 if host has
 * a ':'): each request goes to cb(op, session, reqid, pdu, magic), which
 * answers with snmp_sess_send. NULL with a logged reason. Also the load
 * source of tests/bench/snmp_bench_agent.c. */
void *sim_snmp_listen(const char *host, int port,
                      int (*cb)(int, struct snmp_session *, int, struct snmp_pdu *, void *),
                      void *magic);

/* Serves until s->stop or duration_s (0 = forever); 0 on a clean stop, -1
 * with a logged reason if the UDP endpoint cannot be opened. Meant to run
 * in its own thread next to sim_modbus_serve. */
int sim_snmp_serve(struct sim *s, const char *host, int port, double duration_s);

#endif

/* The simulator's SNMP agent: the simulated nodes as outlets of an
 * rPDU2-shaped (APC PowerNet-MIB) PDU, SNMP v1/v2c, any community. */
#ifndef ERG_PDUSIM_SIM_SNMP_H
#define ERG_PDUSIM_SIM_SNMP_H

#include "sim.h"

/* Serves until s->stop or duration_s (0 = forever); 0 on a clean stop, -1
 * with a logged reason if the UDP endpoint cannot be opened. Meant to run
 * in its own thread next to sim_modbus_serve. */
int sim_snmp_serve(struct sim *s, const char *host, int port, double duration_s);

#endif

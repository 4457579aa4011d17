// SPDX-License-Identifier: GPL-3.0-or-later
/* The simulator's SNMP agent serving a recorded walk (snmpsim .snmprec):
 * every OID as recorded, except the columns erg reads for the entities
 * bound to simulated nodes (--walk-channel), which carry live values. */
#ifndef ERG_PDUSIM_SIM_WALK_H
#define ERG_PDUSIM_SIM_WALK_H

#include <stdbool.h>
#include <stddef.h>

#include "profiles.h"
#include "sim.h"

struct sim_walk;

/* Reads FILE (OID|TYPE|VALUE lines; TYPE the numeric ASN.1 tag, "x"
 * appended for a hex-encoded value). NULL with a reason on an unreadable
 * file or a line that is none of that. Rows end up in OID order; a
 * repeated OID keeps its first value. */
struct sim_walk *sim_walk_load(const char *path, char *why, size_t whylen);
void sim_walk_free(struct sim_walk *w);
size_t sim_walk_rows(const struct sim_walk *w);

/* The walk as erg's offline detection reads it (profiles.h). */
struct erg_snmp_walk sim_walk_view(struct sim_walk *w);

/* The profile erg would pick for the walk (NULL: none) and why, as
 * erg_snmp_walk_detect says; remembered for sim_walk_bind. */
const struct erg_snmp_profile *sim_walk_detect(struct sim_walk *w, char *how, size_t howlen);

/* Binds "LEVEL:N=NODE" (LEVEL device, inlet, phase, bank, outlet or
 * sensor; "device=NODE" for device 1) to the node or --sum of s named
 * NODE (a bank or inlet that meters several nodes): active
 * power, energy, VA and current of that entity follow the node's power
 * (the columns the walk has; power factor and voltage stay as recorded).
 * Writes what it made live, one line per OID, into desc. -1 with a reason
 * (bad spec, unknown node, no profile, a level or entity the walk lacks,
 * nothing erg reads there). */
int sim_walk_bind(struct sim_walk *w, struct sim *s, const char *spec, char *desc, size_t desclen,
                  char *why, size_t whylen);

/* Serves w on UDP host:port (SNMP v1/v2c, any community: GET, GETNEXT,
 * GETBULK) until s->stop or duration_s (0: forever); -1 with a logged
 * reason when the endpoint cannot be opened. */
int sim_walk_serve(struct sim *s, struct sim_walk *w, const char *host, int port,
                   double duration_s);

#endif

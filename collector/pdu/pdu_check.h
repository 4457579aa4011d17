// SPDX-License-Identifier: GPL-3.0-or-later
/* Each driver's check of a source config before use (pdu.c's table),
 * no I/O: 0, or -1 with a reason and *key the key it concerns ("" the
 * section as a whole). Not a public header. */
#ifndef ERG_PDU_CHECK_H
#define ERG_PDU_CHECK_H

#include "erg_pdu.h"

typedef int (*erg_pdu_check_fn)(const struct erg_pdu_source_config *cfg, const char **key,
                                char *why, size_t whylen);

int erg_pdu_modbus_check(const struct erg_pdu_source_config *cfg, const char **key, char *why,
                         size_t whylen);
#ifdef ERG_HAVE_SNMP
int erg_pdu_snmp_check(const struct erg_pdu_source_config *cfg, const char **key, char *why,
                       size_t whylen);
#endif

#endif

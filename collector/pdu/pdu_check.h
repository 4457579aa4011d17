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
/* The SNMPv3 protocol names a config may give (any case; "" the default),
 * one table for the check and the session (snmp_check.c): auth 0 SHA-1,
 * 1 MD5, 2 SHA-256; priv 0 AES-128, 1 DES; -1 an unknown name. */
enum { ERG_SNMP_AUTH_SHA1, ERG_SNMP_AUTH_MD5, ERG_SNMP_AUTH_SHA256 };
enum { ERG_SNMP_PRIV_AES, ERG_SNMP_PRIV_DES };
int erg_snmp_v3_auth_id(const char *name);
int erg_snmp_v3_priv_id(const char *name);
#define ERG_SNMP_V3_AUTH_NAMES "MD5, SHA, SHA256"
#define ERG_SNMP_V3_PRIV_NAMES "DES, AES"
#endif

#endif

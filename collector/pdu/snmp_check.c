// SPDX-License-Identifier: GPL-3.0-or-later
/* The SNMP driver's config check (pdu_check.h): what snmp.c and
 * snmp_session.c would refuse or could not use when the source opens,
 * told at load instead. The SNMPv3 protocol names are the session's
 * (one table, here). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "pdu_check.h"
#include "profiles.h"

static bool one_of(const char *v, const char *const *names) {
  for (; *names; names++)
    if (!strcasecmp(v, *names))
      return true;
  return false;
}

struct v3_name {
  const char *name;
  int id;
};
static const struct v3_name v3_auths[] = {{"", ERG_SNMP_AUTH_SHA1},
                                          {"SHA", ERG_SNMP_AUTH_SHA1},
                                          {"SHA1", ERG_SNMP_AUTH_SHA1},
                                          {"MD5", ERG_SNMP_AUTH_MD5},
                                          {"SHA256", ERG_SNMP_AUTH_SHA256},
                                          {"SHA-256", ERG_SNMP_AUTH_SHA256},
                                          {NULL, -1}};
static const struct v3_name v3_privs[] = {{"", ERG_SNMP_PRIV_AES},
                                          {"AES", ERG_SNMP_PRIV_AES},
                                          {"AES128", ERG_SNMP_PRIV_AES},
                                          {"DES", ERG_SNMP_PRIV_DES},
                                          {NULL, -1}};

static int v3_id(const struct v3_name *t, const char *name) {
  for (; t->name; t++)
    if (!strcasecmp(name, t->name))
      return t->id;
  return -1;
}

int erg_snmp_v3_auth_id(const char *name) { return v3_id(v3_auths, name); }

int erg_snmp_v3_priv_id(const char *name) { return v3_id(v3_privs, name); }

int erg_pdu_snmp_check(const struct erg_pdu_source_config *c, const char **key, char *why,
                       size_t whylen) {
  static const char *const levels[] = {"noAuthNoPriv", "authNoPriv", "authPriv", NULL};
  struct erg_snmp_profile generic;
  *key = "";
  if (!c->host[0]) {
    snprintf(why, whylen, "an SNMP PDU needs host =");
    return -1;
  }
  if (!strcmp(c->profile, "generic")) {
    if (erg_snmp_profile_generic(c, &generic, why, whylen) != 0) {
      *key = "profile";
      return -1;
    }
  } else if (c->profile[0] && strcmp(c->profile, "auto") && !erg_snmp_profile_find(c->profile)) {
    *key = "profile";
    snprintf(why, whylen, "unknown snmp profile '%.32s' (auto, generic, or one of docs/pdu.md)",
             c->profile);
    return -1;
  }
  /* Refused whatever the version: a value that means nothing is a typo. */
  if (c->v3_level[0] && !one_of(c->v3_level, levels)) {
    *key = "v3_level";
    snprintf(why, whylen, "'%.16s' is not one of noAuthNoPriv, authNoPriv, authPriv", c->v3_level);
    return -1;
  }
  if (erg_snmp_v3_auth_id(c->v3_auth_proto) < 0) {
    *key = "v3_auth_proto";
    snprintf(why, whylen, "'%.8s' is not one of " ERG_SNMP_V3_AUTH_NAMES, c->v3_auth_proto);
    return -1;
  }
  if (erg_snmp_v3_priv_id(c->v3_priv_proto) < 0) {
    *key = "v3_priv_proto";
    snprintf(why, whylen, "'%.8s' is not one of " ERG_SNMP_V3_PRIV_NAMES, c->v3_priv_proto);
    return -1;
  }
  if (c->snmp_version != 3) {
    if (!c->community[0]) {
      *key = "community";
      snprintf(why, whylen, "empty (SNMP v1/v2c needs a community)");
      return -1;
    }
    return 0;
  }
  if (!c->v3_user[0]) {
    snprintf(why, whylen, "SNMPv3 (version = 3) needs v3_user =");
    return -1;
  }
  /* The level as snmp_session.c derives it when unset. */
  bool auth = c->v3_level[0] ? strcasecmp(c->v3_level, "noAuthNoPriv") != 0
                             : c->v3_auth_pass[0] || c->v3_priv_pass[0];
  bool priv = c->v3_level[0] ? !strcasecmp(c->v3_level, "authPriv") : c->v3_priv_pass[0] != 0;
  if (auth && strlen(c->v3_auth_pass) < 8) {
    *key = c->v3_auth_pass[0] ? "v3_auth_pass" : c->v3_level[0] ? "v3_level" : "";
    snprintf(why, whylen, "SNMPv3 with authentication needs v3_auth_pass of at least 8 characters");
    return -1;
  }
  if (priv && strlen(c->v3_priv_pass) < 8) {
    *key = c->v3_priv_pass[0] ? "v3_priv_pass" : c->v3_level[0] ? "v3_level" : "";
    snprintf(why, whylen, "SNMPv3 authPriv needs v3_priv_pass of at least 8 characters");
    return -1;
  }
  return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* SNMP driver, session side: net-snmp library setup, SNMPv1/v2c/v3
 * sessions (v3 keys derived once, at open), numeric OIDs and varbind
 * values. The GET engine is in snmp.c. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pdu_check.h"
#include "snmp_int.h"

static pthread_once_t snmp_once = PTHREAD_ONCE_INIT;

/* No config files, no persistent state, no MIB directory: erg only speaks
 * numeric OIDs, and must not depend on what the host has in /etc/snmp. */
static void snmp_lib_setup(void) {
  netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
  netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_PERSIST_STATE, 1);
  netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
  netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
  netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_LOAD_HOST_FILES, 1);
  /* An empty module list is the only switch net-snmp has that stops
   * init_snmp() from parsing (and complaining about) the MIB directory. */
  setenv("MIBS", "", 1);
  /* Errors reach the caller as reasons; the library itself stays quiet
   * (with no handler at all it would fall back to stderr). */
  snmp_disable_log();
  netsnmp_register_loghandler(NETSNMP_LOGHANDLER_NONE, LOG_DEBUG);
  init_snmp("erg");
}

void erg_snmp_lib_init(void) { pthread_once(&snmp_once, snmp_lib_setup); }

int erg_snmp_oid_parse(const char *s, oid *out, size_t *len) {
  size_t n = 0;
  if (*s == '.')
    s++;
  while (*s) {
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (end == s || n >= MAX_OID_LEN || (*end && *end != '.'))
      return -1;
    out[n++] = (oid)v;
    s = *end ? end + 1 : end;
  }
  *len = n;
  return n >= 2 ? 0 : -1;
}

void erg_snmp_oid_format(const oid *o, size_t n, char *out, size_t outlen) {
  size_t k = 0;
  out[0] = '\0';
  for (size_t i = 0; i < n && k < outlen; i++)
    k += (size_t)snprintf(out + k, outlen - k, i ? ".%lu" : "%lu", (unsigned long)o[i]);
}

/* ---- session setup ---- */

/* The names are snmp_check.c's table; here what each one is in net-snmp. */
static const oid *snmp_auth_proto(const char *name) {
  switch (erg_snmp_v3_auth_id(name)) {
    case ERG_SNMP_AUTH_SHA1:
      return usmHMACSHA1AuthProtocol;
    case ERG_SNMP_AUTH_MD5:
      return usmHMACMD5AuthProtocol;
    case ERG_SNMP_AUTH_SHA256:
      return usmHMAC192SHA256AuthProtocol;
    default:
      return NULL;
  }
}

static const oid *snmp_priv_proto(const char *name) {
  switch (erg_snmp_v3_priv_id(name)) {
    case ERG_SNMP_PRIV_AES:
      return usmAESPrivProtocol;
    case ERG_SNMP_PRIV_DES:
      return usmDESPrivProtocol;
    default:
      return NULL;
  }
}

static int snmp_v3_level(const struct erg_pdu_source_config *c) {
  if (!strcasecmp(c->v3_level, "noAuthNoPriv"))
    return SNMP_SEC_LEVEL_NOAUTH;
  if (!strcasecmp(c->v3_level, "authNoPriv"))
    return SNMP_SEC_LEVEL_AUTHNOPRIV;
  if (!strcasecmp(c->v3_level, "authPriv"))
    return SNMP_SEC_LEVEL_AUTHPRIV;
  if (c->v3_level[0])
    return -1;
  return c->v3_priv_pass[0]   ? SNMP_SEC_LEVEL_AUTHPRIV
         : c->v3_auth_pass[0] ? SNMP_SEC_LEVEL_AUTHNOPRIV
                              : SNMP_SEC_LEVEL_NOAUTH;
}

/* Localised keys are derived here once, so no packet ever waits on it. */
static int snmp_v3_setup(netsnmp_session *s, const struct erg_pdu_source_config *c, char *why,
                         size_t whylen) {
  int level = snmp_v3_level(c);
  const oid *ap = snmp_auth_proto(c->v3_auth_proto), *pp = snmp_priv_proto(c->v3_priv_proto);
  if (!c->v3_user[0] || level < 0 || !ap || !pp) {
    snprintf(why, whylen,
             "SNMPv3 needs v3_user, and v3_level noAuthNoPriv|authNoPriv|authPriv, "
             "v3_auth_proto " ERG_SNMP_V3_AUTH_NAMES ", v3_priv_proto " ERG_SNMP_V3_PRIV_NAMES);
    return -1;
  }
  s->securityName = (char *)c->v3_user;
  s->securityNameLen = strlen(c->v3_user);
  s->securityLevel = level;
  s->contextName = (char *)c->v3_context;
  s->contextNameLen = strlen(c->v3_context);
  if (level == SNMP_SEC_LEVEL_NOAUTH)
    return 0;
  if (strlen(c->v3_auth_pass) < 8 ||
      (level == SNMP_SEC_LEVEL_AUTHPRIV && strlen(c->v3_priv_pass) < 8)) {
    snprintf(why, whylen, "SNMPv3 passphrases must be at least 8 characters");
    return -1;
  }
  s->securityAuthProto = (oid *)ap;
  s->securityAuthProtoLen = USM_AUTH_PROTO_SHA_LEN;
  s->securityAuthKeyLen = USM_AUTH_KU_LEN;
  if (generate_Ku(ap, USM_AUTH_PROTO_SHA_LEN, (const u_char *)c->v3_auth_pass,
                  strlen(c->v3_auth_pass), s->securityAuthKey,
                  &s->securityAuthKeyLen) != SNMPERR_SUCCESS) {
    snprintf(why, whylen, "SNMPv3: cannot derive the auth key");
    return -1;
  }
  if (level != SNMP_SEC_LEVEL_AUTHPRIV)
    return 0;
  s->securityPrivProto = (oid *)pp;
  s->securityPrivProtoLen = USM_PRIV_PROTO_AES_LEN;
  s->securityPrivKeyLen = USM_PRIV_KU_LEN;
  if (generate_Ku(ap, USM_AUTH_PROTO_SHA_LEN, (const u_char *)c->v3_priv_pass,
                  strlen(c->v3_priv_pass), s->securityPrivKey,
                  &s->securityPrivKeyLen) != SNMPERR_SUCCESS) {
    snprintf(why, whylen, "SNMPv3: cannot derive the privacy key");
    return -1;
  }
  return 0;
}

int erg_snmp_session_open(const struct erg_pdu_source *src, struct snmp_priv *p, char *why,
                          size_t whylen) {
  const struct erg_pdu_source_config *c = &src->cfg;
  netsnmp_session s;
  snmp_sess_init(&s);
  int port = c->port ? c->port : 161;
  bool v6 = strchr(c->host, ':') != NULL;
  snprintf(p->peer, sizeof p->peer, v6 ? "udp6:[%s]:%d" : "udp:%s:%d", c->host, port);
  s.peername = p->peer;
  double to = c->timeout_seconds > 0 ? c->timeout_seconds : 1.0;
  int retries = c->retries > 0 ? c->retries : 0;
  s.timeout = (long)(to * 1e6);
  s.retries = retries;
  p->budget_s = to * (retries + 1);
  const char *community = c->community[0] ? c->community : "public";
  s.community = (u_char *)community;
  s.community_len = strlen(community);
  switch (c->snmp_version) {
    case 1:
      s.version = SNMP_VERSION_1;
      break;
    case 0:
    case 2:
      s.version = SNMP_VERSION_2c;
      break;
    case 3:
      s.version = SNMP_VERSION_3;
      if (snmp_v3_setup(&s, c, why, whylen))
        return -1;
      /* Engine ID discovery happens on the first request, asynchronously,
       * instead of a blocking probe here. */
      s.flags |= SNMP_FLAGS_DONT_PROBE;
      break;
    default:
      snprintf(why, whylen, "version must be 1, 2c or 3 (got %d)", c->snmp_version);
      return -1;
  }
  p->sess = snmp_sess_open(&s);
  if (!p->sess) {
    char *err = NULL;
    int liberr, syserr;
    snmp_error(&s, &liberr, &syserr, &err);
    snprintf(why, whylen, "snmp session to %s: %s", p->peer, err ? err : "failed");
    free(err);
    return -1;
  }
  return 0;
}

/* ---- values ---- */

double erg_snmp_vb_number(const netsnmp_variable_list *v) {
  switch (v->type) {
    case ASN_INTEGER:
      return (double)*v->val.integer;
    case ASN_GAUGE:
    case ASN_COUNTER:
    case ASN_TIMETICKS:
    case ASN_UINTEGER:
      return (double)(*(const unsigned long *)v->val.integer & 0xffffffffUL);
    case ASN_COUNTER64:
      return (double)v->val.counter64->high * 4294967296.0 + (double)v->val.counter64->low;
    case ASN_OCTET_STR: /* some agents send numbers as text: the whole text */
      return erg_snmp_text_number(v->val.string, v->val_len);
    default: /* noSuchObject, noSuchInstance, endOfMibView, NULL */
      return NAN;
  }
}

void erg_snmp_vb_string(const netsnmp_variable_list *v, char *out, size_t outlen) {
  out[0] = '\0';
  if (v->type != ASN_OCTET_STR || !outlen)
    return;
  size_t len = v->val_len < outlen - 1 ? v->val_len : outlen - 1;
  for (size_t i = 0; i < len; i++) /* labels are user text: no control bytes */
    out[i] = v->val.string[i] >= 0x20 && v->val.string[i] != 0x7f ? (char)v->val.string[i] : ' ';
  out[len] = '\0';
  while (len && (out[len - 1] == ' ' || out[len - 1] == '\0'))
    out[--len] = '\0';
}

int erg_snmp_vb_value(const netsnmp_variable_list *v, double *out, char *why, size_t whylen) {
  *out = NAN;
  if (v->type == SNMP_NOSUCHOBJECT || v->type == SNMP_NOSUCHINSTANCE ||
      v->type == SNMP_ENDOFMIBVIEW)
    return 1;
  if (v->type == ASN_NULL) {
    snprintf(why, whylen, "NULL instead of a number");
    return -1;
  }
  double d = erg_snmp_vb_number(v);
  if (isfinite(d)) {
    *out = d;
    return 0;
  }
  if (v->type == ASN_OCTET_STR) {
    char text[24];
    erg_snmp_vb_string(v, text, sizeof text);
    snprintf(why, whylen, "text '%s' instead of a number", text);
  } else {
    snprintf(why, whylen, "ASN type 0x%02x instead of a number", (unsigned)v->type);
  }
  return -1;
}

bool erg_snmp_vb_present(const netsnmp_variable_list *v) {
  return v->type != SNMP_NOSUCHOBJECT && v->type != SNMP_NOSUCHINSTANCE &&
         v->type != SNMP_ENDOFMIBVIEW && v->type != ASN_NULL;
}

/* ---- blocking requests (identification, probe) ---- */

int erg_snmp_sync(struct erg_pdu_source *src, int cmd, const char *const *oids, int n,
                  netsnmp_pdu **resp, char *why, size_t whylen) {
  struct snmp_priv *p = src->priv;
  *resp = NULL;
  if (!p->sess && erg_snmp_session_open(src, p, why, whylen))
    return -1;
  netsnmp_pdu *req = snmp_pdu_create(cmd);
  if (!req) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  for (int i = 0; i < n; i++) {
    oid o[MAX_OID_LEN];
    size_t len;
    if (erg_snmp_oid_parse(oids[i], o, &len)) {
      snprintf(why, whylen, "bad OID '%s'", oids[i]);
      snmp_free_pdu(req);
      return -1;
    }
    snmp_add_null_var(req, o, len);
  }
  netsnmp_pdu *r = NULL;
  int st = snmp_sess_synch_response(p->sess, req, &r); /* frees req */
  if (st == STAT_TIMEOUT) {
    snprintf(why, whylen, "%s (%s): no answer within %.3g s", src->cfg.host, p->peer, p->budget_s);
  } else if (st != STAT_SUCCESS || !r) {
    char *err = NULL;
    int liberr, syserr;
    snmp_sess_error(p->sess, &liberr, &syserr, &err);
    snprintf(why, whylen, "%s (%s): %s", src->cfg.host, p->peer, err ? err : "request failed");
    free(err);
  } else if (r->command == SNMP_MSG_REPORT) {
    snprintf(why, whylen, "%s (%s): SNMPv3 report (user, passphrases or protocols do not match)",
             src->cfg.host, p->peer);
  } else if (r->errstat == SNMP_ERR_TOOBIG) {
    snmp_free_pdu(r);
    return -2;
  } else if (r->errstat != SNMP_ERR_NOERROR && r->errstat != SNMP_ERR_NOSUCHNAME) {
    snprintf(why, whylen, "%s (%s): agent said %s (varbind %ld)", src->cfg.host, p->peer,
             snmp_errstring(r->errstat), r->errindex);
  } else {
    *resp = r;
    return 0;
  }
  if (r)
    snmp_free_pdu(r);
  return -1;
}

int erg_snmp_walk(struct erg_pdu_source *src, const char *prefix, int max_steps,
                  erg_snmp_walk_fn each, void *arg, char *why, size_t whylen) {
  char cur[ERG_SNMP_OID_MAX];
  snprintf(cur, sizeof cur, "%s", prefix);
  for (int steps = 0; steps < max_steps; steps++) {
    const char *o = cur;
    netsnmp_pdu *resp;
    if (erg_snmp_sync(src, SNMP_MSG_GETNEXT, &o, 1, &resp, why, whylen))
      return -1;
    const netsnmp_variable_list *v = resp->errstat ? NULL : resp->variables;
    char got[ERG_SNMP_OID_MAX] = "";
    if (v && erg_snmp_vb_present(v))
      erg_snmp_oid_format(v->name, v->name_length, got, sizeof got);
    snmp_free_pdu(resp);
    if (!erg_snmp_oid_under(got, prefix) || !erg_snmp_oid_after(got, cur))
      break;
    snprintf(cur, sizeof cur, "%s", got);
    if (each(got, arg))
      break;
  }
  return 0;
}

/* In GETs of at most 16 OIDs; a tooBig halves that and asks again. An
 * SNMPv1 agent answers noSuchName for the whole GET when one OID is
 * missing: then each OID is asked alone. */
int erg_snmp_get(struct erg_pdu_source *src, const char *const *oids, int n, bool *present,
                 double *vals, char *strs, size_t slen, char *why, size_t whylen) {
  if (n > ERG_SNMP_GET_MAX)
    return -1;
  int lim = ERG_SNMP_GET_MAX;
  for (int i = 0; i < n;) {
    int k = n - i < lim ? n - i : lim;
    netsnmp_pdu *resp;
    int rc = erg_snmp_sync(src, SNMP_MSG_GET, oids + i, k, &resp, why, whylen);
    if (rc == -2 && k > 1) {
      lim = (k + 1) / 2;
      continue;
    }
    if (rc)
      return -1;
    bool v1miss = resp->errstat == SNMP_ERR_NOSUCHNAME;
    if (v1miss && k > 1) {
      snmp_free_pdu(resp);
      lim = 1;
      continue;
    }
    const netsnmp_variable_list *v = v1miss ? NULL : resp->variables;
    for (int e = i + k; i < e; i++, v = v ? v->next_variable : NULL) {
      present[i] = v && erg_snmp_vb_present(v);
      vals[i] = present[i] ? erg_snmp_vb_number(v) : NAN;
      if (strs && v)
        erg_snmp_vb_string(v, strs + (size_t)i * slen, slen);
      else if (strs)
        strs[(size_t)i * slen] = '\0';
    }
    snmp_free_pdu(resp);
  }
  return 0;
}

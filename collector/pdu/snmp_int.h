/* Internal to the SNMP driver: the per-source state and the session and
 * varbind helpers snmp_session.c gives snmp.c. Not a public header. */
#ifndef ERG_PDU_SNMP_INT_H
#define ERG_PDU_SNMP_INT_H

#include <math.h>

#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>

#include "profiles.h"

struct snmp_priv {
  void *sess;                          /* NULL after a failed reopen */
  const struct erg_snmp_profile *prof; /* NULL until identified */
  struct erg_snmp_profile generic;     /* storage for profile=generic */
  struct erg_snmp_ident ident;
  bool have_digits;
  int power_digits, energy_digits;
  unsigned char energy_type[ERG_PDU_MAX_CHANNELS]; /* ASN type last seen */
  char peer[160];
  double budget_s;                     /* timeout x tries */
  unsigned mark;                       /* snmp_collect_fds dedup */
  bool failed_last;                    /* last round failed: send it last */
  bool tried;                          /* a request went out this round */
  int max_vars;                        /* varbinds per GET after a tooBig; 0: the default */
};

/* Raritan's decimal digits as a factor on the raw value. */
static inline double erg_snmp_digits_scale(int digits) {
  return digits > 0 && digits < 10 ? pow(10.0, -digits) : 1.0;
}

/* Raw outlet value -> W and -> J of an identified source (p->prof set):
 * the profile's scale times Raritan's digits. Polls, counter wraps and the
 * probe's "raw" all use these. */
static inline double erg_snmp_power_scale(const struct snmp_priv *p) {
  return p->prof->power_scale * erg_snmp_digits_scale(p->power_digits);
}
static inline double erg_snmp_energy_scale(const struct snmp_priv *p) {
  return p->prof->energy_scale * erg_snmp_digits_scale(p->energy_digits);
}

/* Once per process: net-snmp without config files, state or MIBs. */
void erg_snmp_lib_init(void);
/* Opens p->sess for src->cfg (v1/v2c/v3; v3 keys derived here). */
int erg_snmp_session_open(const struct erg_pdu_source *src, struct snmp_priv *p, char *why,
                          size_t whylen);
int erg_snmp_oid_parse(const char *s, oid *out, size_t *len);
void erg_snmp_oid_format(const oid *o, size_t n, char *out, size_t outlen);
/* A varbind as a number (NAN when absent or not numeric) / as text. */
double erg_snmp_vb_number(const netsnmp_variable_list *v);
void erg_snmp_vb_string(const netsnmp_variable_list *v, char *out, size_t outlen);

#endif

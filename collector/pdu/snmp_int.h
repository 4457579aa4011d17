/* Internal to the SNMP driver: the per-source state and the session and
 * varbind helpers snmp_session.c gives snmp.c. Not a public header. */
#ifndef ERG_PDU_SNMP_INT_H
#define ERG_PDU_SNMP_INT_H

#include <math.h>

#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>

#include "profiles.h"

/* Per channel: the scale factors read once from the agent (Raritan's
 * decimal digits, ENTITY-SENSOR's scale), and whether the level's other
 * quantities are asked for because its active power did not answer. */
struct snmp_chan {
  bool have_scale;
  signed char digits[ERG_Q_N + 1];    /* + 1: the borrowed voltage */
  signed char si_prefix[ERG_Q_N + 1]; /* 9 = units */
  bool fallback;
  double raw[ERG_Q_N + 1];            /* this round's raw values, NAN absent */
  uint64_t seen_ns;                   /* when they were read, 0 not this round */
  unsigned char energy_type;          /* ASN type last seen */
  /* This round: a value the agent sent that is no reading (wrong type,
   * negative), and what it was; "" none. */
  char bad_why[112];
};

struct snmp_priv {
  void *sess;                          /* NULL after a failed reopen */
  const struct erg_snmp_profile *prof; /* NULL until identified */
  struct erg_snmp_profile generic;     /* storage for profile=generic */
  struct erg_snmp_ident ident;
  bool named;                          /* the profile was set in the config */
  char detect_why[320];                /* why detection found no profile */
  uint64_t detect_next_ns;             /* monotonic: no detection before (0: now) */
  bool want_all;                       /* probe: every quantity, every round */
  /* The voltage a level without its own borrows (inlet 1, phase 1 or the
   * device), and its column; NULL: none. */
  const struct erg_snmp_col *vborrow;
  char vborrow_oid[ERG_SNMP_OID_MAX];
  struct snmp_chan ch[ERG_PDU_MAX_CHANNELS];
  char peer[160];
  double budget_s;                     /* timeout x tries */
  unsigned mark;                       /* snmp_collect_fds dedup */
  bool failed_last;                    /* last round failed: send it last */
  bool tried;                          /* a request went out this round */
  int max_vars;                        /* varbinds per GET after a tooBig; 0: the default */
};

/* A column's factor for one channel: its scale x 10^-digits x the SI
 * prefix read from the agent. */
double erg_snmp_col_scale(const struct erg_snmp_col *col, const struct snmp_chan *ch, int q);

/* The column of quantity q for src's channel c (q == ERG_Q_N: the
 * borrowed voltage), NULL when the profile has none. */
const struct erg_snmp_col *erg_snmp_chan_col(const struct snmp_priv *p,
                                             const struct erg_pdu_source_config *cfg, int c,
                                             int q);

/* Once per process: net-snmp without config files, state or MIBs. */
void erg_snmp_lib_init(void);
/* Opens p->sess for src->cfg (v1/v2c/v3; v3 keys derived here). */
int erg_snmp_session_open(const struct erg_pdu_source *src, struct snmp_priv *p, char *why,
                          size_t whylen);
int erg_snmp_oid_parse(const char *s, oid *out, size_t *len);
void erg_snmp_oid_format(const oid *o, size_t n, char *out, size_t outlen);
/* Blocking request (cmd SNMP_MSG_GET or SNMP_MSG_GETNEXT) of n OIDs on
 * src's session, with its timeout and retries. 0: *resp is the answer
 * (free with snmp_free_pdu; errstat noSuchName, SNMPv1's "missing", is
 * left to the caller); -1: no answer or an error, with a reason;
 * -2: the agent said tooBig (ask for fewer). */
int erg_snmp_sync(struct erg_pdu_source *src, int cmd, const char *const *oids, int n,
                  netsnmp_pdu **resp, char *why, size_t whylen);
/* A varbind as a reading: 0 with *out, 1 when the agent has no such
 * object (noSuch*, endOfMibView), -1 with a reason when it sent something
 * that is not a number (NULL, an OID, non-numeric text). */
int erg_snmp_vb_value(const netsnmp_variable_list *v, double *out, char *why, size_t whylen);
/* A varbind holds a value (not noSuch*, endOfMibView or NULL). */
bool erg_snmp_vb_present(const netsnmp_variable_list *v);
/* Picks src's profile after its sysObjectID is known (p->ident.sysoid):
 * blocking GETNEXTs on the candidates' tables (snmp_detect.c). 0 with
 * p->prof and p->ident.why set; -1 with a reason when the agent stopped
 * answering, -2 when it answers but no known table does. */
int erg_snmp_detect(struct erg_pdu_source *src, struct snmp_priv *p, char *why, size_t whylen);
/* Sets the borrowed voltage of p->prof (p->vborrow). */
void erg_snmp_borrow_voltage(struct snmp_priv *p);

/* A varbind as a number (NAN when absent or not numeric) / as text. */
double erg_snmp_vb_number(const netsnmp_variable_list *v);
void erg_snmp_vb_string(const netsnmp_variable_list *v, char *out, size_t outlen);

#endif

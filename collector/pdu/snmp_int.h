// SPDX-License-Identifier: GPL-3.0-or-later
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
  double raw[ERG_Q_N + 1]; /* this round's raw values, NAN absent */
  /* The physics checks' verdict on them (snmp_values.c): the factor on top
   * of the column's scale, 1 as declared, 10^k rescaled, NAN refused. */
  double fix[ERG_Q_N + 1];
  double apparent;           /* this round's VA, or V x A, NAN none (crosscheck.c) */
  uint64_t seen_ns;          /* when they were read, 0 not this round */
  unsigned char energy_type; /* ASN type last seen */
  /* This round: a value the agent sent that is no reading (wrong type,
   * negative), and what it was; "" none. */
  char bad_why[112];
};

/* One variable of a named-variable table found for src (snmp_names.c):
 * the (level, entity, quantity) it is, and the column that reads it (oid:
 * the concrete value OID, or the text OID for a label; scale: the
 * profile's times the row's). */
struct snmp_named {
  unsigned char level, q;
  int entity;
  struct erg_snmp_col col;
  char oid[ERG_SNMP_OID_MAX];
};

/* What name resolution found, sorted by (level, entity, q). */
struct snmp_names_map {
  struct snmp_named *v;
  size_t n;
  double stamp;       /* the profile's stamp scalar then, NAN: none */
  int skipped;        /* rows left out: no scale, or not in the profile's unit */
  char skip_why[160]; /* the first of them */
};

struct snmp_priv {
  void *sess;                          /* NULL after a failed reopen */
  const struct erg_snmp_profile *prof; /* NULL until identified */
  struct erg_snmp_profile generic;     /* storage for profile=generic */
  struct erg_snmp_ident ident;
  bool named;              /* the profile was set in the config */
  char detect_why[320];    /* why detection found no profile */
  uint64_t detect_next_ns; /* monotonic: no detection before (0: now) */
  bool want_all;           /* probe: every quantity, every round */
  /* The voltage a level without its own borrows (inlet 1, phase 1 or the
   * device), and its column; NULL: none. */
  const struct erg_snmp_col *vborrow;
  char vborrow_oid[ERG_SNMP_OID_MAX];
  int vborrow_level;
  /* The profile before its "*" arcs were resolved (erg_snmp_wild_apply):
   * the templates of a channel that names its unit; NULL: none (generic). */
  const struct erg_snmp_profile *base;
  struct snmp_chan ch[ERG_PDU_MAX_CHANNELS];
  char peer[160];
  double budget_s;  /* timeout x tries */
  unsigned mark;    /* snmp_collect_fds dedup */
  bool failed_last; /* last round failed: send it last */
  bool tried;       /* a request went out this round */
  int max_vars;     /* varbinds per GET after a tooBig; 0: the default */
  /* A profile with a named-variable table: the rows found, once (again
   * when the stamp moves: names_ready false until then). */
  struct snmp_names_map names;
  bool names_ready;
  /* What the driver's note hook said once (erg_snmp_note): the profile
   * taken and its scales, each channel's rescaled value. */
  bool ident_noted;
  bool rescale_noted[ERG_PDU_MAX_CHANNELS];
  bool fw_done;                    /* erg_snmp_fw_apply ran */
  bool wild_done;                  /* erg_snmp_wild_apply ran */
  struct erg_snmp_wild_store wild; /* the templates it resolved */
};

/* A column's factor for one channel: its scale x 10^-digits x the SI
 * prefix read from the agent. */
double erg_snmp_col_scale(const struct erg_snmp_col *col, const struct snmp_chan *ch, int q);

/* The column of quantity q for src's channel c (q == ERG_Q_N: the
 * borrowed voltage), NULL when the profile has none. */
const struct erg_snmp_col *erg_snmp_chan_col(const struct snmp_priv *p,
                                             const struct erg_pdu_source_config *cfg, int c, int q);

/* The OID of quantity q (ERG_Q_N: the borrowed voltage) of src's channel
 * c for entity n, kind 0 the value, 1 its decimal digits, 2 its SI
 * prefix: the column's template with the channel's unit in its "*" arcs
 * where the channel names one. -1 when there is none. */
int erg_snmp_chan_oid(const struct snmp_priv *p, const struct erg_pdu_source_config *cfg, int c,
                      int q, int kind, int n, char *out, size_t len);

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
/* Walks the subtree under prefix with GETNEXTs, in the agent's order:
 * each(oid, arg) for every OID the agent names under prefix, until one is
 * not under it or not after the one before (an agent looping), after
 * max_steps answers, or when each returns nonzero. 0 when the walk ended
 * so; -1 with a reason when the agent stopped answering (the OIDs before
 * were handed to each). */
typedef int (*erg_snmp_walk_fn)(const char *oid, void *arg);
int erg_snmp_walk(struct erg_pdu_source *src, const char *prefix, int max_steps,
                  erg_snmp_walk_fn each, void *arg, char *why, size_t whylen);
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
/* "profile P has no LEVEL level (it has: ...)" when p's profile lacks the
 * level of channel c of cfg; 0 when it has it. */
int erg_snmp_level_missing(const struct snmp_priv *p, const struct erg_pdu_source_config *cfg,
                           int c, char *why, size_t whylen);
/* The driver's wrap_joules and bad_value (erg_pdu.h). */
double erg_snmp_wrap_joules(const struct erg_pdu_source *src, int channel);
int erg_snmp_bad_value(const struct erg_pdu_source *src, int channel, char *why, size_t whylen);

/* ---- named-variable tables (snmp_names.c) ---- */
/* Walks prof's name column (every device's rows) and reads each matching
 * row's scale and unit: out gets the rows of prof's variables, the first
 * row of each (level, entity, quantity) winning. Blocking. 0 (out may be
 * empty), -1 with a reason when the agent does not answer. */
int erg_snmp_names_resolve(struct erg_pdu_source *src, const struct erg_snmp_profile *prof,
                           struct snmp_names_map *out, char *why, size_t whylen);
void erg_snmp_names_free(struct snmp_names_map *m);
/* The levels (bit 1 << level) m has a reading of. */
unsigned erg_snmp_names_levels(const struct snmp_names_map *m);
/* Resolves src's names unless done: 0 ready or nothing to resolve, -1
 * with a reason. The caller sets the borrowed voltage again after it
 * (erg_snmp_borrow_voltage: a named voltage is known only now). */
int erg_snmp_names_ensure(struct erg_pdu_source *src, char *why, size_t whylen);
/* Makes m (taken over) p's rows: ready, and rows left out said in
 * p->ident.why (the probe prints it); the borrowed voltage is the
 * caller's to set again. */
void erg_snmp_names_install(struct snmp_priv *p, struct snmp_names_map *m);
/* The column of (level, entity, q) found for p, NULL none. */
const struct erg_snmp_col *erg_snmp_names_col(const struct snmp_priv *p, int level, int entity,
                                              int q);
/* Entities of level found for p (a reading of any quantity), ascending,
 * at most max; returns how many. */
int erg_snmp_names_entities(const struct snmp_priv *p, int level, int *nums, int max);
/* The stamp OID a poll reads for p (the profile's, where the agent had it
 * at resolution), NULL none. */
const char *erg_snmp_names_stamp_oid(const struct snmp_priv *p);
/* A poll read the stamp as v (NAN absent): true when the rows may have
 * moved since resolution (then resolved again next round). */
bool erg_snmp_names_stale(struct snmp_priv *p, double v);

/* p can be polled: its profile known, and its named variables (if any) found. */
static inline bool erg_snmp_ready(const struct snmp_priv *p) {
  return p->prof && (!p->prof->names || p->names_ready);
}

/* ---- values of a poll (snmp_values.c) ---- */
/* A varbind's role: VB_VALUE, VB_DIGITS or VB_SI x 16 + the quantity
 * (ERG_Q_N: the borrowed voltage); VB_STAMP a named-variable table's stamp;
 * VB_OTHER for identification. */
enum vb_what { VB_VALUE = 0, VB_DIGITS = 16, VB_SI = 32, VB_STAMP = 254, VB_OTHER = 255 };
/* Raw values and scale factors of one answer (n varbinds, roles what[],
 * channels chan[], arrived at t_ns) into src's channels. */
void erg_snmp_apply_values(struct erg_pdu_source *src, const netsnmp_variable_list *v,
                           const unsigned char *what, const unsigned char *chan, int n,
                           uint64_t t_ns);
/* Channel c's reading from its raw values, after the physics checks. */
void erg_snmp_chan_reading(const struct erg_pdu_source *src, int c, struct erg_pdu_reading *r);
/* The physics across src's channels' levels (erg_pdu_cross_check) on a
 * round's readings out: a refused channel's watts read as missing, a bad
 * value with the reason. */
void erg_snmp_cross_check(struct erg_pdu_source *src, struct erg_pdu_reading *out);
/* The driver's note hook (erg_pdu.h): once, the profile taken and why
 * (its firmware family's scales, its units); once per channel, a value
 * the physics checks read at another scale than the MIB's. */
int erg_snmp_note(struct erg_pdu_source *src, char *why, size_t whylen);
/* Before a round: every channel's raw values forgotten. */
void erg_snmp_forget(struct erg_pdu_source *src);
/* Why no channel of src read anything. */
void erg_snmp_no_value_why(const struct erg_pdu_source *src, char *why, size_t whylen);
/* The physics checks of one channel's values x[q] (SI units, NAN absent;
 * q = ERG_Q_N the borrowed voltage) on a level: each impossible value is
 * rescaled by a power of ten where exactly one lands in its range (a
 * firmware disagreeing with its MIB), else refused (NAN); fix[q] gets the
 * factor applied on top of the column's scale (1, 10^k, NAN refused) and
 * note the first finding ("" none). max_watts: the channel's limit. */
void erg_snmp_physics(double *x, double *fix, int level, double max_watts, char *note,
                      size_t notelen);

/* Applies p->prof's firmware scales that match p->ident.sysdescr: the
 * profile becomes p's own copy (p->generic) with those columns' scales,
 * p->ident.why says which and why, and the borrowed voltage is set again.
 * Once per source; nothing when none matches. */
void erg_snmp_fw_apply(struct snmp_priv *p);

/* Resolves the "*" index arcs of p->prof on src's agent (blocking
 * GETNEXTs; profiles.h erg_snmp_wild_resolve): the profile becomes p's own
 * copy (p->generic), p->ident.why says which arcs. Once per source (again
 * while the agent does not answer); call before erg_snmp_fw_apply. */
void erg_snmp_wild_apply(struct erg_pdu_source *src, struct snmp_priv *p);

/* A varbind as a number (NAN when absent or not numeric) / as text. */
double erg_snmp_vb_number(const netsnmp_variable_list *v);
void erg_snmp_vb_string(const netsnmp_variable_list *v, char *out, size_t outlen);

#endif

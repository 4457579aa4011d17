/* SNMP vendor profiles (data) and the SNMP driver internals that probe.c
 * shares. Not a public header: the collector uses erg_pdu.h only. */
#ifndef ERG_PDU_PROFILES_H
#define ERG_PDU_PROFILES_H

#include <stdbool.h>
#include <stddef.h>

#include "erg_pdu.h"

#define ERG_SNMP_MAX_SYSOIDS 4
#define ERG_SNMP_OID_MAX 160

/* One vendor's OIDs. Per-outlet OIDs are templates: "%d" is replaced by the
 * outlet number (1-based). A NULL OID means the vendor has no such object.
 * Raw values are multiplied by the scale to get W or J; negative raw values
 * mean "not available" on every MIB here and read as NAN. */
struct erg_snmp_profile {
  const char *name;         /* config value of profile= */
  const char *vendor;
  const char *mib;          /* where the OIDs come from */
  const char *sysoids[ERG_SNMP_MAX_SYSOIDS]; /* sysObjectID prefixes */
  const char *oid_power;    /* per outlet */
  double power_scale;       /* raw -> W */
  const char *oid_energy;   /* per outlet, cumulative */
  double energy_scale;      /* raw -> J */
  const char *oid_name;     /* per outlet, OCTET STRING */
  const char *oid_count;    /* scalar: number of outlets */
  const char *oid_total_power; /* scalar: whole PDU / inlet power */
  double total_power_scale;
  const char *oid_model;    /* scalar OCTET STRING, NULL: use sysDescr */
  /* Raritan: the raw value is scaled by 10^-digits read from these. */
  const char *oid_power_digits, *oid_energy_digits;
};

extern const struct erg_snmp_profile erg_snmp_profiles[];
extern const size_t erg_snmp_nprofiles;

const struct erg_snmp_profile *erg_snmp_profile_find(const char *name);
/* Longest sysObjectID prefix match (on whole arcs); NULL if none. The
 * matched prefix is returned in *prefix when not NULL. */
const struct erg_snmp_profile *erg_snmp_profile_match(const char *sysoid, const char **prefix);
/* Replaces each "%d" in tmpl with outlet; -1 if it does not fit. */
int erg_snmp_oid_expand(const char *tmpl, int outlet, char *out, size_t outlen);
/* Builds the "generic" profile from a source config's oid_* keys. */
int erg_snmp_profile_generic(const struct erg_pdu_source_config *cfg,
                             struct erg_snmp_profile *out, char *why, size_t whylen);

/* ---- driver internals used by probe.c ---- */
struct erg_snmp_ident {
  char sysoid[ERG_SNMP_OID_MAX];
  char sysdescr[256];
  char model[128];
  char why[256];            /* how the profile was chosen */
  const struct erg_snmp_profile *prof;
};
/* Resolves the profile (sysObjectID when cfg.profile is empty or "auto")
 * and fills ident; blocking, bounded by the source's timeout and retries. */
int erg_pdu_snmp_identify(struct erg_pdu_source *src, struct erg_snmp_ident *id, char *why,
                          size_t whylen);
/* Outlet count (profile's count OID, else probing names 1..max). */
int erg_pdu_snmp_outlet_count(struct erg_pdu_source *src, int max, char *why, size_t whylen);
/* Names of outlets 1..n into names[i] (size namelen each); "" if none. */
int erg_pdu_snmp_outlet_names(struct erg_pdu_source *src, int n, char *names, size_t namelen,
                              char *why, size_t whylen);
/* Blocking GET of up to ERG_SNMP_GET_MAX OIDs on an open SNMP source: for
 * each, present[i], vals[i] (NAN unless numeric) and, when strs is not
 * NULL, its text in strs + i * slen ("" unless a string). -1 with a reason
 * when the agent does not answer. */
#define ERG_SNMP_GET_MAX 16
int erg_snmp_get(struct erg_pdu_source *src, const char *const *oids, int n, bool *present,
                 double *vals, char *strs, size_t slen, char *why, size_t whylen);
/* The profile in use, NULL before identification. */
const struct erg_snmp_profile *erg_snmp_source_profile(const struct erg_pdu_source *src);
/* Raw value -> W and -> J of src's outlets as its last poll scaled them
 * (Raritan's digits included); NAN before identification. */
void erg_pdu_snmp_scales(const struct erg_pdu_source *src, double *power_w, double *energy_j);
/* Whole-PDU power in W, NAN when the profile has none. */
double erg_pdu_snmp_total_power(struct erg_pdu_source *src);

#endif

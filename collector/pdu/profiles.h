// SPDX-License-Identifier: GPL-3.0-or-later
/* SNMP vendor profiles (data) and the SNMP driver internals that probe.c
 * shares. Not a public header: the collector uses erg_pdu.h only.
 *
 * A profile describes, from one vendor MIB, every metering level the PDU
 * may offer (device, inlet/cord, phase/line, bank/branch, outlet, and
 * ENTITY-SENSOR-MIB sensors) and per level the columns of the quantities
 * erg can use (or, where the MIB lists readings as rows of one generic
 * table, the names of its variables: struct erg_snmp_names). Vendor
 * knowledge is data: one file per vendor under vendors/ (the build lists
 * them all in vendors_list.c); no driver code knows a vendor. */
#ifndef ERG_PDU_PROFILES_H
#define ERG_PDU_PROFILES_H

#include <stdbool.h>
#include <stddef.h>

#include "erg_pdu.h"

#define ERG_SNMP_MAX_SYSOIDS 6
#define ERG_SNMP_OID_MAX 160

/* Quantities a level's row may give. Power is taken from ERG_Q_POWER where
 * present; else VA x PF; else A x V x the source's configured power factor
 * (the reading is then marked estimated). */
enum erg_snmp_qty {
  ERG_Q_NAME = 0, /* OCTET STRING label */
  ERG_Q_POWER,    /* active power, raw x scale = W */
  ERG_Q_VA,       /* apparent power, raw x scale = VA */
  ERG_Q_PF,       /* power factor, raw x scale = 0..1 */
  ERG_Q_CURRENT,  /* raw x scale = A */
  ERG_Q_VOLTAGE,  /* raw x scale = V */
  ERG_Q_ENERGY,   /* cumulative active energy, raw x scale = J */
  ERG_Q_N
};

/* One column. oid is a template: "%d" stands for the entity number (the
 * outlet, inlet, phase, bank number, 1-based as the vendor numbers it)
 * and appears at most once; a template without "%d" is a scalar (one row,
 * used for the device level or a single-inlet table). NULL: not offered. */
struct erg_snmp_col {
  const char *oid;
  double scale; /* raw -> SI unit (see erg_snmp_qty) */
  /* Optional, per row, read once: the value is also scaled by 10^-d where
   * d is read from this template (Raritan's *DecimalDigits, ENTITY-SENSOR's
   * entPhySensorPrecision) ... */
  const char *digits;
  /* ... and by 10^(3 (s - 9)) where s is read from this one
   * (ENTITY-SENSOR's entPhySensorScale: 8 milli, 9 units, 10 kilo). */
  const char *si_prefix;
  /* Instead of oid, in a profile with a named-variable table (names
   * below): the variable's name, a pattern (erg_snmp_name_match: "%d" the
   * entity number, '|' between alternatives). The driver finds the row
   * per source; scale then applies on top of the row's own scale. For
   * ERG_Q_NAME the row's text is the entity's label. */
  const char *var;
  /* With var: the unit the row must report (NULL: not checked); a row in
   * another unit is left out rather than read with the wrong scale.
   * With oid: the reading is text, a number and this unit ("232.6V",
   * "0.061kW": erg_snmp_text_unit; "" a bare number): the unit's SI prefix
   * decides the factor, the raw value is in the unit itself, and text in
   * any other form is no reading. */
  const char *unit;
};

/* A named-variable table: one row per reading of whatever the agent has,
 * indexed by arcs the profile cannot know (RITTAL-CMC-III-MIB's
 * cmcIIIVarTable: {device, variable}, both depending on what is plugged in
 * and configured). Which row is which is known from its name only. Each
 * is a column OID without "%d"; a row is the same index under each. */
struct erg_snmp_names {
  const char *name;  /* OCTET STRING: the variable's name (walked) */
  const char *value; /* integer: the reading */
  const char *scale; /* optional integer: > 0 multiply by it, < 0 divide by -it */
  const char *unit;  /* optional OCTET STRING: the unit, checked against col.unit */
  const char *text;  /* optional OCTET STRING: the value as text (labels) */
  /* Optional scalar that changes when rows are added or removed: read each
   * round (where the agent has it), a change sends the source through name
   * resolution again. */
  const char *stamp;
};

struct erg_snmp_level {
  struct erg_snmp_col q[ERG_Q_N];
  const char *count; /* scalar: number of rows, optional */
  /* Optional row filter: a row is one of this level's only where the
   * integer at this template equals filter_value (ENTITY-SENSOR-MIB:
   * entPhySensorType = watts(6)). */
  const char *filter;
  long filter_value;
  /* Largest entity number the probe looks for (0: ERG_PDU_MAX_CHANNELS). */
  int max;
};

/* A firmware family whose scale for one column is not its MIB's: where the
 * agent's sysDescr contains descr, the column (level, q) is read at scale
 * instead, and why says so (the probe prints it). Vendor knowledge from its
 * documentation or MIB comments, not a guess from one reading. */
struct erg_snmp_fw_scale {
  const char *descr;
  int level, q;
  double scale;
  const char *why;
};
#define ERG_SNMP_MAX_FW 4

struct erg_snmp_profile {
  const char *name; /* config value of profile= */
  const char *vendor;
  const char *mib; /* the MIB module(s) the OIDs come from */
  /* sysObjectID prefixes (whole arcs) that suggest this profile. A hint:
   * the profile is used only if one of its tables answers. */
  const char *sysoids[ERG_SNMP_MAX_SYSOIDS];
  const char *oid_model; /* scalar OCTET STRING, NULL: use sysDescr */
  /* Non-NULL: the levels name variables of this table (col.var) instead
   * of giving column templates. */
  const struct erg_snmp_names *names;
  struct erg_snmp_level lv[ERG_PDU_NLEVELS];
  /* Optional: firmware families' scales (first match per column wins). */
  struct erg_snmp_fw_scale fw[ERG_SNMP_MAX_FW];
};

/* The registry: each vendor file's NULL-terminated list, the lists in
 * file-name order with the standard ENTITY-SENSOR-MIB fallback last,
 * NULL-terminated (generated by the build from vendors/ *.c). */
extern const struct erg_snmp_profile *const *const erg_snmp_vendors[];
/* The i-th profile of the registry in that order, NULL past the last. */
const struct erg_snmp_profile *erg_snmp_profile_at(size_t i);

const struct erg_snmp_profile *erg_snmp_profile_find(const char *name);
/* Longest sysObjectID prefix match (on whole arcs); NULL if none. The
 * matched prefix is returned in *prefix when not NULL. */
const struct erg_snmp_profile *erg_snmp_profile_match(const char *sysoid, const char **prefix);
/* Every profile whose sysObjectID prefixes match (longest first); returns
 * how many were stored in out (at most max). */
size_t erg_snmp_profile_candidates(const char *sysoid, const struct erg_snmp_profile **out,
                                   size_t max);
/* The OID a GETNEXT starts from to learn whether column t has a row
 * (detection, online and over a walk): a template's column, whose rows are
 * under it; a scalar's parent, from which the GETNEXT must land on it
 * (*scalar). -1 when t is neither. */
int erg_snmp_probe_start(const char *t, char *start, size_t len, bool *scalar);
/* got is a row under prefix (whole arcs). */
bool erg_snmp_oid_under(const char *got, const char *prefix);
/* A sysObjectID that says nothing about the vendor: empty, net-snmp's own
 * (8072), 1.3.6.1.4.1.0, or not under enterprises. */
bool erg_snmp_sysoid_generic(const char *sysoid);
/* A reading sent as text (len bytes, not NUL-terminated): its number when
 * the whole text is one decimal number ("230", " 4.25", "-1", "1e3";
 * blanks and NULs around it allowed), else NAN: "12<script>", "n/a",
 * "0x10", "inf", "nan" and empty text are no reading. */
double erg_snmp_text_number(const unsigned char *text, size_t len);
/* A reading sent as text with its unit (len bytes): the number times the
 * unit's SI prefix (m 10^-3, k 10^3, M 10^6) when the whole text is one
 * decimal number (as erg_snmp_text_number), optional blanks, and unit with
 * or without one of those prefixes ("0.061kW" with "W": 61; "2.28kWh" with
 * "Wh": 2280); unit "" asks for a bare number. Else NAN: "12<script>",
 * "12", "12 V" with "W", "12kWx". */
double erg_snmp_text_unit(const unsigned char *text, size_t len, const char *unit);
/* a comes after b in OID order (dotted, arc by arc, numerically; a longer
 * OID under b comes after it): what a GETNEXT must answer. A walk ends at
 * an answer that does not move on or loops back. Not an OID: false. */
bool erg_snmp_oid_after(const char *a, const char *b);
/* Index arcs the device decides, as "*" arcs in a template; two kinds:
 * - Unit arcs (a branch number, a unit or cord id: the "unit" of a row):
 *   up to two "*" arcs before the "%d" ("...50.20.1.10.1.*.%d": the
 *   receptacles of whichever branch the PDU has; Sentry4's outlets
 *   "...8.3.1.7.*.*.%d": {unit}.{cord}.{outlet}), or in a scalar followed
 *   by a fixed arc ("...5.1.3.1.4.*.5"). Each stands for one numeric arc.
 *   A channel may name its unit (cfg.units: "210", "1.2"); one that does
 *   not reads the default: per source, after detection, the level's first
 *   row column with a "*" that has a row is asked for its first row (a
 *   GETNEXT from the arcs before the first "*") and that row's arcs stand
 *   for the "*"s in every template of the level (count and filter too); a
 *   level whose columns have no row keeps arc 1 per "*".
 * - The index tail: a "*" as the last arc of a row column, after its "%d"
 *   ("...4.10.1.6.%d.*") or the last of a scalar ("...2.10.1.16.*"). It
 *   stands for every arc after the entity number (after the column, for
 *   a scalar) in the level's first row, such as a PDU's MAC written as a
 *   string index (".12.48.48.48.69..."), the same for every template of
 *   the level (a count's or filter's last "*" too). A level whose columns
 *   have no row is left out. A level with a tail has no unit.
 * A level's row columns (and their digits and SI-prefix templates) hold one
 * kind or the other; a level with both is not supported and is left out.
 * Detection GETNEXTs from the arcs before the first "*" (before the "%d"
 * ahead of a tail). */
struct erg_snmp_wild_store {
  char t[ERG_PDU_NLEVELS][3 * ERG_Q_N + 2][ERG_SNMP_OID_MAX];
  char unit[ERG_PDU_NLEVELS][ERG_PDU_UNIT_MAX]; /* the arcs taken, dotted; "" none */
};
/* The first OID after oid (a GETNEXT) into got: 0, or -1 when the agent
 * (or walk) has none or does not answer. */
typedef int (*erg_snmp_next_fn)(void *ctx, const char *oid, char *got, size_t gotlen);
/* out = in with each level's "*" resolved through next (templates in
 * store, the unit arcs taken in store->unit). Returns the number of levels
 * resolved or left out (0: in has no "*", out untouched), -1 when next
 * failed for want of an answer. note gets 'outlet index arc 2 (its first
 * row)', 'outlet index tail "000ED300AD21" (its first row)', 'device no
 * row: left out' for the probe. */
int erg_snmp_wild_resolve(const struct erg_snmp_profile *in, struct erg_snmp_profile *out,
                          struct erg_snmp_wild_store *store, erg_snmp_next_fn next, void *ctx,
                          char *note, size_t notelen);
/* Level l of out = level l of in with its unit "*" arcs unit's (templates
 * in store); -1 (out untouched) when unit has another number of arcs or
 * the level has an index tail. */
int erg_snmp_wild_fill_level(const struct erg_snmp_profile *in, struct erg_snmp_profile *out,
                             struct erg_snmp_wild_store *store, int l, const char *unit);
/* The number of unit "*" arcs in row column t (an index tail not
 * counted) / in the level's row columns (0: the level's rows are numbered
 * by "%d" alone, or it has an index tail, or both kinds). */
int erg_snmp_tmpl_wilds(const char *t);
int erg_snmp_level_wilds(const struct erg_snmp_level *lv);
/* tmpl with its "*" arcs replaced by unit's arcs ("210", "1.2") and "%d"
 * by n; -1 when unit has another number of arcs than tmpl has "*"s (an
 * index tail is no unit arc: such a template expands to nothing), or it
 * does not fit. */
int erg_snmp_oid_expand_unit(const char *tmpl, const char *unit, int n, char *out, size_t outlen);
/* oid is a row of tmpl: unit gets the arcs at its unit "*"s (dotted, ""
 * none), *n the arc at its "%d" (1 when it has none); an index tail (a
 * last-arc "*") matches one or more arcs, not part of the unit. */
bool erg_snmp_oid_match(const char *tmpl, const char *oid, char *unit, size_t ulen, int *n);
/* The levels (bit 1 << level) the named profile offers, 0 if unknown. */
unsigned erg_snmp_profile_levels(const char *name);
/* Replaces each "%d" in tmpl with n; -1 if it does not fit. */
int erg_snmp_oid_expand(const char *tmpl, int n, char *out, size_t outlen);
/* The part of a template before "%d" without its trailing dot (the column
 * to walk), and what follows "%d" (with its leading dot). -1 for a scalar. */
int erg_snmp_oid_split(const char *tmpl, char *prefix, size_t plen, const char **suffix);
/* Builds the "generic" profile from a source config's oid_* keys (outlet
 * level, plus the device level from oid_total_power). */
int erg_snmp_profile_generic(const struct erg_pdu_source_config *cfg, struct erg_snmp_profile *out,
                             char *why, size_t whylen);
/* The columns a level's rows are looked for in, in order (name, power, VA,
 * current, energy, voltage): the i-th one the level offers, NULL past the
 * last. i = 0 is NULL when the profile lacks the level. */
const char *erg_snmp_level_row_col(const struct erg_snmp_level *lv, int i);
#define erg_snmp_level_row_oid(lv) erg_snmp_level_row_col((lv), 0)
/* Whether the profile offers the level at all: a row column, or a named
 * variable of a value quantity. */
bool erg_snmp_level_offered(const struct erg_snmp_level *lv);
/* Whether name is one of pattern's alternatives (separated by '|'). In an
 * alternative "%d" matches one or more decimal digits, leading zeros
 * included ("Socket 01" is 1), at most once; everything else matches
 * itself. *n gets the number (1 where the alternative has no "%d"); a
 * number of 0 or above 1000000 does not match. */
bool erg_snmp_name_match(const char *pattern, const char *name, int *n);
/* The level, entity and quantity of prof whose variable name matches name
 * (the first in level, then quantity order); false when none does or prof
 * has no named-variable table. */
bool erg_snmp_names_classify(const struct erg_snmp_profile *prof, const char *name, int *level,
                             int *entity, int *q);

/* ---- driver internals used by probe.c ---- */
struct erg_snmp_ident {
  char sysoid[ERG_SNMP_OID_MAX];
  char sysdescr[256];
  char model[128];
  char why[320]; /* how the profile was chosen */
  const struct erg_snmp_profile *prof;
};
/* Resolves the profile and fills ident; blocking, bounded by the source's
 * timeout and retries. With cfg.profile empty or "auto", the sysObjectID's
 * candidates are tried first and the one whose tables answer wins; when
 * none answers (or the sysObjectID is missing, generic or unknown) every
 * profile's tables are tried, ENTITY-SENSOR-MIB last. */
int erg_pdu_snmp_identify(struct erg_pdu_source *src, struct erg_snmp_ident *id, char *why,
                          size_t whylen);
/* Blocking GET of up to ERG_SNMP_GET_MAX OIDs on an open SNMP source: for
 * each, present[i], vals[i] (NAN unless numeric) and, when strs is not
 * NULL, its text in strs + i * slen ("" unless a string). -1 with a reason
 * when the agent does not answer. */
#define ERG_SNMP_GET_MAX 16
int erg_snmp_get(struct erg_pdu_source *src, const char *const *oids, int n, bool *present,
                 double *vals, char *strs, size_t slen, char *why, size_t whylen);
/* Blocking walk (GETNEXT) of the column under prefix: stores the entity
 * numbers of rows whose OID is prefix.N<suffix> (N one arc) in nums, up to
 * max; returns how many, -1 with a reason when the agent does not answer. */
int erg_snmp_walk_rows(struct erg_pdu_source *src, const char *prefix, const char *suffix,
                       int *nums, int max, char *why, size_t whylen);
/* ---- what the probe reads beyond a poll (snmp_probe.c) ---- */
/* Every quantity, every round, from now on (the probe shows them all);
 * also forgets the channels' scales: call it after changing cfg.channels. */
void erg_pdu_snmp_want_all(struct erg_pdu_source *src);
/* Entity numbers of src's rows at level (a scalar level: {1}; a filtered
 * level: the rows whose filter column holds the value), up to max.
 * Returns how many, 0 when the level is absent or empty, -1 with a reason
 * when the agent does not answer. */
/* units (NULL: the default unit's rows only): each row's unit arcs where
 * the level's templates have "*" arcs (every unit the device has: each
 * member of a daisy chain, each cord), else "". */
int erg_pdu_snmp_level_rows(struct erg_pdu_source *src, int level, int *nums,
                            char (*units)[ERG_PDU_UNIT_MAX], int max, char *why, size_t whylen);
/* Names of the given rows (units: as level_rows gave them, may be NULL)
 * of level into names + i * namelen ("" none). */
int erg_pdu_snmp_row_names(struct erg_pdu_source *src, int level, const int *nums,
                           const char (*units)[ERG_PDU_UNIT_MAX], int n, char *names,
                           size_t namelen, char *why, size_t whylen);
/* Channel c of the last poll: each quantity scaled to its SI unit (NAN
 * absent), the factor applied to the raw value (NAN: no column) and the
 * OID read ("" none); index ERG_Q_N is the borrowed voltage. */
struct erg_snmp_chan_detail {
  double value[ERG_Q_N + 1];
  double scale[ERG_Q_N + 1];
  char oid[ERG_Q_N + 1][ERG_SNMP_OID_MAX];
  const char *unit[ERG_Q_N + 1]; /* the column's unit (text with it), NULL none */
};
void erg_pdu_snmp_chan_detail(const struct erg_pdu_source *src, int c,
                              struct erg_snmp_chan_detail *d);

/* The profile in use, NULL before identification. */
const struct erg_snmp_profile *erg_snmp_source_profile(const struct erg_pdu_source *src);

/* ---- a recorded walk instead of an agent (walk_detect.c) ---- */
/* The walk, read through one lookup: the row at oid (next false) or the
 * first one after it in OID order (next true, as a GETNEXT). It fills name
 * (the row's OID, dotted, no leading dot), *type (the ASN.1 tag as snmprec
 * writes it: 2 INTEGER, 4 OCTET STRING, 6 OBJECT IDENTIFIER, 65 Counter32,
 * 66 Gauge32, 67 TimeTicks, 70 Counter64...), *num (the value as the
 * driver reads a varbind: NAN unless numeric; numbers sent as text count)
 * and, when text is not NULL, text (a string as it is, an OID dotted).
 * Returns 0, or -1 when there is no such row. */
struct erg_snmp_walk {
  int (*lookup)(void *ctx, const char *oid, bool next, char *name, size_t namelen, int *type,
                double *num, char *text, size_t textlen);
  void *ctx;
};
/* The profile ergd (and erg pdu probe) would pick, with no profile in the
 * config, for an agent that answers as w does: the rules of
 * erg_pdu_snmp_identify, the walk looked up where they send a GETNEXT.
 * how says why (or, NULL returned, why none). */
const struct erg_snmp_profile *erg_snmp_walk_detect(const struct erg_snmp_walk *w, char *how,
                                                    size_t howlen);
/* What a poll of entity n of level reads from an agent serving w with
 * profile prof, per quantity (index ERG_Q_N: the voltage the driver
 * borrows from inlet, phase or device 1, as erg_snmp_chan_col offers it
 * for this level; "" none): the OID ("" where the
 * profile has no column), whether the walk has it, its ASN.1 tag and
 * number there (NAN absent or not numeric), and the factor raw -> SI unit
 * (the column's scale with the walk's decimal digits or SI prefix). */
struct erg_snmp_walk_entity {
  char oid[ERG_Q_N + 1][ERG_SNMP_OID_MAX];
  bool present[ERG_Q_N + 1];
  int type[ERG_Q_N + 1];
  double raw[ERG_Q_N + 1];
  double factor[ERG_Q_N + 1];
  /* The column's unit where it is text with one (raw is in that unit,
   * its prefix applied), NULL else. */
  const char *unit[ERG_Q_N + 1];
};
/* -1 with a reason when prof lacks the level or the walk has no row n of
 * it (no row column of the level has that entity). */
int erg_snmp_walk_entity(const struct erg_snmp_walk *w, const struct erg_snmp_profile *prof,
                         int level, int n, struct erg_snmp_walk_entity *out, char *why,
                         size_t whylen);
/* The same for the entity of one unit ("210", "1.2"; NULL or "": the
 * level's first row's, as above). */
int erg_snmp_walk_entity_unit(const struct erg_snmp_walk *w, const struct erg_snmp_profile *prof,
                              int level, const char *unit, int n, struct erg_snmp_walk_entity *out,
                              char *why, size_t whylen);

#endif

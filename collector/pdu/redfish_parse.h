// SPDX-License-Identifier: GPL-3.0-or-later
/* Redfish discovery and reading, over JSON documents only (no HTTP): which
 * resource and which property of a BMC's tree is a node's power or energy,
 * what was refused and why (collector/pdu/redfish_parse.c). The driver
 * (redfish.c) and the simulator fetch the documents; the unit tests and
 * the fuzzer hand them recorded ones. docs/bmc.md says why each rule. */
#ifndef ERG_REDFISH_PARSE_H
#define ERG_REDFISH_PARSE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ERG_RF_URI_MAX 256
#define ERG_RF_MAX_TERMS 8   /* resources a reading adds up (an enclosure's rectifier inputs) */
#define ERG_RF_MAX_FOUND 256 /* readings listed by a discovery */
/* Above this a reading is absurd (a server or a blade enclosure draws less). */
#define ERG_RF_MAX_WATTS 20e3

/* Fetches uri (an @odata.id, possibly with a query); a new reference, or
 * NULL with a reason. */
typedef json_t *(*erg_rf_get_fn)(void *ctx, const char *uri, char *why, size_t whylen);

/* Where a value sits in its resource. */
enum erg_rf_kind {
  ERG_RF_NONE = 0,
  ERG_RF_POWERCONTROL,   /* Power: PowerControl[member].PowerConsumedWatts */
  ERG_RF_ENV_POWER,      /* EnvironmentMetrics: PowerWatts.Reading */
  ERG_RF_ENV_ENERGY_J,   /* EnvironmentMetrics: EnergyJoules.Reading */
  ERG_RF_ENV_ENERGY_KWH, /* EnvironmentMetrics: EnergykWh.Reading */
  ERG_RF_SENSOR_POWER,   /* Sensor: Reading in W (or kW) */
  ERG_RF_SENSOR_ENERGY,  /* Sensor: Reading in J, kW.h or W.h */
};

struct erg_rf_term {
  char uri[ERG_RF_URI_MAX];
  int kind;        /* enum erg_rf_kind */
  char member[64]; /* POWERCONTROL: its MemberId ("" the first entry) */
  double to_si;    /* raw -> W or J */
};

/* What a meter polls: the node's (or the enclosure's) power, energy or both. */
struct erg_rf_plan {
  char chassis[ERG_RF_URI_MAX]; /* the chassis' @odata.id */
  bool enclosure;               /* feeds several nodes: a shared meter ([group]) */
  double rating_watts;          /* the chassis' PowerCapacityWatts, 0 unknown */
  int npower;                   /* power terms, added up (more than one: enclosure inputs) */
  struct erg_rf_term power[ERG_RF_MAX_TERMS];
  bool have_energy;
  struct erg_rf_term energy;
  char why[384]; /* what was chosen and why */
};

/* One power or energy reading seen during discovery (the probe lists them). */
struct erg_rf_found {
  char chassis[ERG_RF_URI_MAX];
  char uri[ERG_RF_URI_MAX];
  char what[96]; /* "PowerControl[0] 'Server Power Control'", "Sensor ..." */
  bool energy;   /* value is J, else W */
  double value;  /* NAN: null, absent or unusable */
  bool used;
  char why[200]; /* used: why this one; else why not */
};

struct erg_rf_discovery {
  struct erg_rf_plan plan;
  int nfound;
  struct erg_rf_found found[ERG_RF_MAX_FOUND];
  int nnodes; /* node chassis with a reading (several: name one with chassis =) */
  char nodes[8][ERG_RF_URI_MAX];
  int requests; /* GETs made */
};

/* Walks the tree from the service root (or only the chassis given, "" for
 * all) and chooses the reading. full: also every sensor of chassis that
 * already have a node reading (the probe); else those are skipped.
 * 0 with d->plan set; -1 with a reason: no node reading (naming what was
 * found instead), several nodes and no chassis named, an enclosure not
 * named, or a fetch that failed. d is filled in either case. */
int erg_rf_discover(erg_rf_get_fn get, void *ctx, const char *chassis, bool full,
                    struct erg_rf_discovery *d, char *why, size_t whylen);

/* The value of term t in doc (the resource at t->uri), in W or J.
 * 0: *value set; 1: no reading now (null, 0 W, absent), why says which;
 * -1: a bad value (not a number, negative, absurd, units changed), why. */
int erg_rf_term_value(const struct erg_rf_term *t, json_t *doc, double rating_watts, double *value,
                      char *why, size_t whylen);

/* The BMC's own time of a reading: a Sensor's ReadingTime (ISO 8601 with
 * a zone, "2022-04-14T16:19:56.0017Z", "...+02:00"), in ns since 1970 by
 * the BMC's clock. 0, or -1 when doc has none or it does not parse (no
 * zone, out of range). PowerControl and EnvironmentMetrics excerpts carry
 * no time. */
int erg_rf_time_parse(const char *s, uint64_t *ns);
int erg_rf_reading_time(json_t *doc, uint64_t *ns);

/* An erg_rf_get_fn over a recording (DMTF Mockup-Creator layout: the
 * resource at URI is DIR/URI/index.json, a query part of the directory's
 * name, "#..." and a trailing "/" dropped): ctx is DIR. A URI outside
 * /redfish/v1, with "..", or a file holding a Redfish error is NULL. */
json_t *erg_rf_recording_get(void *ctx, const char *uri, char *why, size_t whylen);

/* A sensor's ReadingUnits as a factor to W (energy false: W, kW) or J
 * (J, kW.h, kWh, W.h, Wh); 0 when the units do not say it. */
double erg_rf_units_to_si(const char *units, bool energy);

/* The top-level members of body (n bytes) named in keep (a NULL-ended
 * list) as a new object; the rest is checked against JSON's grammar but
 * not built (redfish_skim.c). NULL with why (jansson's words and the
 * line; "another JSON value" when it is JSON but no object) when body is
 * not one JSON object, or a kept member comes twice. */
json_t *erg_rf_json_skim(const char *body, size_t n, const char *const *keep, char *why,
                         size_t whylen);

/* The top-level members a reading is taken from (erg_rf_term_value,
 * erg_rf_reading_time): a poll's answer is skimmed down to them. */
extern const char *const erg_rf_reading_keys[];

/* The name of a kind ("PowerControl", ...). */
const char *erg_rf_kind_name(int kind);

/* o's string member key, "" when absent or not a string. */
static inline const char *erg_rf_str(json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

#endif

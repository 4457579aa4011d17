// SPDX-License-Identifier: GPL-3.0-or-later
/* Redfish discovery over JSON documents (redfish_parse.h). The rules, each
 * from a real server (tests/pdu/test_redfish_parse.c walks every recording):
 * - the node is a chassis of a server type (RackMount, Blade, Sled, ...),
 *   or a Card/Other one that links a ComputerSystem (Intel's Baseboard,
 *   an id with a slash); Enclosure chassis feed several nodes (a shared
 *   meter, read only when named); Component, Module, Zone chassis are parts;
 * - watts: Power.PowerControl, the server's entry (never the sum: Lenovo's
 *   CPU and memory entries), its PowerConsumedWatts, never PowerMetrics'
 *   average over IntervalInMin; else EnvironmentMetrics.PowerWatts; else a
 *   node-level Sensor in W. PSU outputs (they repeat the total on HPE) and
 *   PSU inputs are listed, never added;
 * - energy: EnvironmentMetrics EnergyJoules / EnergykWh, or a node-level
 *   Sensor with units (J, kW.h, W.h); a sensor without units is refused
 *   (Gigabyte's "468" energy, Lenovo's discrete "Power" states);
 * - null, absent or 0 is no reading; negative, above the chassis' rating or
 *   ERG_RF_MAX_WATTS is a bad value. */
#include "redfish_parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RF_MAX_SENSORS 600 /* sensors fetched per discovery */
#define RF_MAX_PAGES 20    /* Members@odata.nextLink pages followed */
#define RF_MAX_CHASSIS 128
#define RF_MAX_REQUESTS 2000 /* GETs per discovery (a DGX's whole tree: ~300) */
#define RF_MAX_MEMBERS 1024  /* members of one collection */

static const char *rf_link(json_t *o, const char *key) {
  return erg_rf_str(json_object_get(o, key), "@odata.id");
}

/* A JSON number, else NAN (null, absent, text). */
static double rf_num(json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }

static bool rf_contains(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++)
    if (!strncasecmp(hay, needle, n))
      return true;
  return false;
}

static bool rf_in(const char *s, const char *const *list) {
  for (; *list; list++)
    if (!strcasecmp(s, *list))
      return true;
  return false;
}

/* Physical contexts of parts, not of the node. */
static const char *const rf_part_contexts[] = {"CPU",
                                               "CPUSubsystem",
                                               "Memory",
                                               "MemorySubsystem",
                                               "GPU",
                                               "GPUSubsystem",
                                               "StorageDevice",
                                               "NetworkingDevice",
                                               "Accelerator",
                                               "ASIC",
                                               "FPGA",
                                               "Fan",
                                               "Backplane",
                                               "StorageController",
                                               "Transceiver",
                                               "VoltageRegulator",
                                               "PowerSupply",
                                               "Rectifier",
                                               "Battery",
                                               "Exhaust",
                                               "Board",
                                               "Processor",
                                               NULL};

static const char *const rf_node_types[] = {"RackMount",          "Blade", "Sled",    "StandAlone",
                                            "Stand-alone",        "Tower", "Desktop", "Server",
                                            "MultiSystemChassis", NULL};

enum rf_role { RF_PART, RF_NODE, RF_ENCLOSURE };

static int rf_chassis_role(json_t *c) {
  const char *type = erg_rf_str(c, "ChassisType");
  json_t *sys = json_object_get(json_object_get(c, "Links"), "ComputerSystems");
  bool computer = json_is_array(sys) && json_array_size(sys) > 0;
  if (rf_in(type, rf_node_types))
    return RF_NODE;
  if (!strcasecmp(type, "Enclosure"))
    return RF_ENCLOSURE;
  if ((!strcasecmp(type, "Card") || !strcasecmp(type, "Other") || !type[0]) && computer)
    return RF_NODE;
  return RF_PART;
}

struct rf_walk {
  erg_rf_get_fn get;
  void *ctx;
  struct erg_rf_discovery *d;
  bool full;
  int sensors;
};

static json_t *rf_get(struct rf_walk *w, const char *uri, char *why, size_t whylen) {
  if (w->d->requests >= RF_MAX_REQUESTS) {
    snprintf(why, whylen, "more than %d requests: the rest of the tree is not read",
             RF_MAX_REQUESTS);
    return NULL;
  }
  w->d->requests++;
  return w->get(w->ctx, uri, why, whylen);
}

static struct erg_rf_found *rf_found(struct rf_walk *w, const char *chassis, const char *uri,
                                     bool energy, double value) {
  struct erg_rf_discovery *d = w->d;
  if (d->nfound >= ERG_RF_MAX_FOUND)
    return NULL;
  struct erg_rf_found *f = &d->found[d->nfound++];
  memset(f, 0, sizeof *f);
  snprintf(f->chassis, sizeof f->chassis, "%s", chassis);
  snprintf(f->uri, sizeof f->uri, "%s", uri);
  f->energy = energy;
  f->value = value;
  return f;
}

/* The best candidate of one chassis so far, per quantity. */
struct rf_best {
  int power_rank; /* 0 none; lower is better: 1 PowerControl, 2 EnvMetrics, 3 sensor */
  struct erg_rf_term power;
  int power_found; /* index into d->found */
  int energy_rank; /* 1 EnvMetrics J, 2 EnvMetrics kWh, 3 sensor */
  struct erg_rf_term energy;
  int energy_found;
  double rating;
  /* An enclosure: its power-supply input sensors, added up. */
  int ninputs;
  struct erg_rf_term inputs[ERG_RF_MAX_TERMS];
  int input_found[ERG_RF_MAX_TERMS];
  char pending_why[160]; /* a PowerControl entry that reads nothing while the chassis is off */
};

static void rf_term(struct erg_rf_term *t, const char *uri, int kind, const char *member,
                    double to_si) {
  memset(t, 0, sizeof *t);
  snprintf(t->uri, sizeof t->uri, "%s", uri);
  t->kind = kind;
  snprintf(t->member, sizeof t->member, "%s", member ? member : "");
  t->to_si = to_si;
}

static void rf_offer_power(struct rf_walk *w, struct rf_best *b, int rank,
                           const struct erg_rf_term *t, struct erg_rf_found *f, const char *why) {
  if (!f)
    return;
  if (b->power_rank && b->power_rank <= rank) {
    snprintf(f->why, sizeof f->why, "not needed: %s is preferred", erg_rf_kind_name(b->power.kind));
    return;
  }
  if (b->power_rank)
    snprintf(w->d->found[b->power_found].why, sizeof f->why, "not needed: %s is preferred",
             erg_rf_kind_name(t->kind));
  b->power_rank = rank;
  b->power = *t;
  b->power_found = (int)(f - w->d->found);
  snprintf(f->why, sizeof f->why, "%s", why);
}

static void rf_offer_energy(struct rf_walk *w, struct rf_best *b, int rank,
                            const struct erg_rf_term *t, struct erg_rf_found *f, const char *why) {
  if (!f)
    return;
  if (b->energy_rank && b->energy_rank <= rank) {
    snprintf(f->why, sizeof f->why, "not needed: %s is preferred",
             erg_rf_kind_name(b->energy.kind));
    return;
  }
  if (b->energy_rank)
    snprintf(w->d->found[b->energy_found].why, sizeof f->why, "not needed: %s is preferred",
             erg_rf_kind_name(t->kind));
  b->energy_rank = rank;
  b->energy = *t;
  b->energy_found = (int)(f - w->d->found);
  snprintf(f->why, sizeof f->why, "%s", why);
}

/* A PowerControl entry of a part (CPU, memory), not the server's. */
static bool rf_pc_is_part(json_t *pc) {
  const char *ctx = erg_rf_str(pc, "PhysicalContext"), *name = erg_rf_str(pc, "Name");
  if (ctx[0] && rf_in(ctx, rf_part_contexts))
    return true;
  return rf_contains(name, "CPU") || rf_contains(name, "Memory") || rf_contains(name, "GPU") ||
         rf_contains(name, "Fan") || rf_contains(name, "Storage");
}

static void rf_power_resource(struct rf_walk *w, const char *chassis, int role, json_t *c,
                              const char *uri, struct rf_best *b) {
  char why[200];
  json_t *doc = rf_get(w, uri, why, sizeof why);
  if (!doc)
    return;
  json_t *pcs = json_object_get(doc, "PowerControl");
  bool server_taken = false;
  size_t i;
  json_t *pc;
  json_array_foreach(pcs, i, pc) {
    const char *member = erg_rf_str(pc, "MemberId"), *name = erg_rf_str(pc, "Name");
    json_t *v = json_object_get(pc, "PowerConsumedWatts");
    double watts = rf_num(v);
    struct erg_rf_found *f = rf_found(w, chassis, uri, false, watts);
    if (!f)
      break;
    snprintf(f->what, sizeof f->what, "PowerControl[%zu] '%.40s'", i, name[0] ? name : "(no name)");
    double cap = rf_num(json_object_get(pc, "PowerCapacityWatts"));
    if (rf_pc_is_part(pc)) {
      snprintf(f->why, sizeof f->why, "a part's entry (%s), not the server's: never added",
               erg_rf_str(pc, "PhysicalContext")[0] ? erg_rf_str(pc, "PhysicalContext") : name);
      continue;
    }
    if (server_taken) {
      snprintf(f->why, sizeof f->why, "a further entry: the first is the server's, never summed");
      continue;
    }
    server_taken = true;
    if (role == RF_PART) {
      snprintf(f->why, sizeof f->why, "the chassis is a part (%s), not a node",
               erg_rf_str(c, "ChassisType"));
      continue;
    }
    if (!(watts > 0)) {
      /* Off, a BMC reads nothing: the reading comes when it is on. */
      if (strcmp(erg_rf_str(c, "PowerState"), "On") && !json_is_number(v)) {
        snprintf(b->pending_why, sizeof b->pending_why,
                 "PowerControl[%zu] of %s has no PowerConsumedWatts while the chassis is %s", i,
                 chassis, erg_rf_str(c, "PowerState")[0] ? erg_rf_str(c, "PowerState") : "not On");
        struct erg_rf_term t;
        rf_term(&t, uri, ERG_RF_POWERCONTROL, member, 1.0);
        rf_offer_power(w, b, 1, &t, f,
                       "the server's entry; reads nothing while the chassis is off (no reading, "
                       "not 0 W)");
        b->rating = cap > 0 ? cap : 0;
      } else {
        snprintf(f->why, sizeof f->why, "PowerConsumedWatts %s: no reading (never read as 0 W)",
                 json_is_number(v) ? "is 0"
                 : v               ? "is null"
                                   : "absent");
      }
      continue;
    }
    struct erg_rf_term t;
    rf_term(&t, uri, ERG_RF_POWERCONTROL, member, 1.0);
    rf_offer_power(w, b, 1, &t, f,
                   "the server's PowerControl entry, PowerConsumedWatts (its PowerMetrics "
                   "average over IntervalInMin is not a reading)");
    b->rating = cap > 0 ? cap : 0;
  }
  json_t *psus = json_object_get(doc, "PowerSupplies");
  json_t *ps;
  json_array_foreach(psus, i, ps) {
    static const char *const keys[] = {"PowerInputWatts", "LastPowerOutputWatts",
                                       "PowerOutputWatts"};
    for (size_t k = 0; k < 3; k++) {
      double x = rf_num(json_object_get(ps, keys[k]));
      if (!isfinite(x))
        continue;
      struct erg_rf_found *f = rf_found(w, chassis, uri, false, x);
      if (!f)
        break;
      snprintf(f->what, sizeof f->what, "PowerSupplies[%zu] '%.30s' %s", i, erg_rf_str(ps, "Name"),
               keys[k]);
      snprintf(f->why, sizeof f->why,
               "a power supply's figure: never added (HPE's outputs each repeat the total)");
    }
  }
  json_decref(doc);
}

static void rf_env_metrics(struct rf_walk *w, const char *chassis, int role, const char *uri,
                           struct rf_best *b) {
  char why[200];
  json_t *doc = rf_get(w, uri, why, sizeof why);
  if (!doc)
    return;
  static const struct {
    const char *key;
    int kind;
    double to_si;
  } props[] = {{"PowerWatts", ERG_RF_ENV_POWER, 1.0},
               {"EnergyJoules", ERG_RF_ENV_ENERGY_J, 1.0},
               {"EnergykWh", ERG_RF_ENV_ENERGY_KWH, 3.6e6}};
  for (size_t k = 0; k < 3; k++) {
    json_t *p = json_object_get(doc, props[k].key);
    if (!p)
      continue;
    bool energy = props[k].kind != ERG_RF_ENV_POWER;
    double x = rf_num(json_object_get(p, "Reading"));
    struct erg_rf_found *f = rf_found(w, chassis, uri, energy, x * props[k].to_si);
    if (!f)
      return;
    snprintf(f->what, sizeof f->what, "EnvironmentMetrics %s", props[k].key);
    if (role != RF_NODE) {
      snprintf(f->why, sizeof f->why, "the chassis is %s, not a node",
               role == RF_ENCLOSURE ? "an enclosure" : "a part");
      continue;
    }
    if (!(x > 0)) {
      snprintf(f->why, sizeof f->why, "Reading is %s: no reading",
               isnan(x) ? "null or absent" : "0 or below");
      continue;
    }
    struct erg_rf_term t;
    rf_term(&t, uri, props[k].kind, NULL, props[k].to_si);
    if (energy)
      rf_offer_energy(w, b, props[k].kind == ERG_RF_ENV_ENERGY_J ? 1 : 2, &t, f,
                      "the chassis' energy counter (EnvironmentMetrics)");
    else
      rf_offer_power(w, b, 2, &t, f, "the chassis' power (EnvironmentMetrics PowerWatts)");
  }
  json_decref(doc);
}

/* A sensor of the whole node: no part's context, or named for the node. */
static bool rf_sensor_is_node(json_t *s) {
  const char *ctx = erg_rf_str(s, "PhysicalContext"), *name = erg_rf_str(s, "Name"),
             *id = erg_rf_str(s, "Id");
  if (!strcasecmp(name, "Node") || rf_contains(name, "Node Power") ||
      rf_contains(name, "System Power") || rf_contains(name, "Server Power") ||
      rf_contains(name, "Total Power") || rf_contains(id, "PwrConsumption"))
    return !strcasecmp(erg_rf_str(s, "PhysicalSubContext"), "Output") ? false : true;
  static const char *const parts[] = {"CPU",       "Memory", "GPU", "DIMM",   "Fan",
                                      "Processor", "SXM",    "PSU", "Supply", "NVSwitch",
                                      "PCIe",      "Drive",  "NIC", NULL};
  for (const char *const *p = parts; *p; p++)
    if (rf_contains(name, *p) || rf_contains(id, *p))
      return false;
  return !ctx[0] || !strcasecmp(ctx, "Chassis") || !strcasecmp(ctx, "SystemBoard") ||
         !strcasecmp(ctx, "Intake");
}

/* Sensor ids that are surely neither power nor energy (fewer GETs): a
 * temperature, a voltage, ... unless the id also says power or energy
 * (EX425's ChassisVoltageRegulator0InputPower is the node's). */
static bool rf_sensor_skip(const char *uri) {
  static const char *const skip[] = {"Temp",  "Volt", "Fan",  "Current", "Pressure", "Humid",
                                     "Speed", "RPM",  "Leak", "Flow",    NULL};
  const char *id = strrchr(uri, '/');
  id = id ? id + 1 : uri;
  if (rf_contains(id, "Power") || rf_contains(id, "Pwr") || rf_contains(id, "Energy") ||
      rf_contains(id, "Watt"))
    return false;
  for (const char *const *s = skip; *s; s++)
    if (rf_contains(id, *s))
      return true;
  return false;
}

static void rf_sensor(struct rf_walk *w, const char *chassis, int role, const char *uri,
                      struct rf_best *b) {
  char why[200];
  json_t *s = rf_get(w, uri, why, sizeof why);
  if (!s)
    return;
  const char *type = erg_rf_str(s, "ReadingType"), *units = erg_rf_str(s, "ReadingUnits");
  bool energy = strstr(type, "Energy") == type, power = !strcmp(type, "Power");
  if (!energy && !power) {
    energy = erg_rf_units_to_si(units, true) > 0;
    power = erg_rf_units_to_si(units, false) > 0;
  }
  if (!energy && !power) {
    json_decref(s);
    return;
  }
  double x = rf_num(json_object_get(s, "Reading")), k = erg_rf_units_to_si(units, energy);
  struct erg_rf_found *f = rf_found(w, chassis, uri, energy, k > 0 ? x * k : x);
  if (!f) {
    json_decref(s);
    return;
  }
  snprintf(f->what, sizeof f->what, "Sensor %.40s '%.30s'", erg_rf_str(s, "Id"),
           erg_rf_str(s, "Name"));
  const char *ctx = erg_rf_str(s, "PhysicalContext"), *sub = erg_rf_str(s, "PhysicalSubContext");
  if (k == 0) {
    snprintf(f->why, sizeof f->why, "ReadingUnits %s%s%s: not taken as %s", units[0] ? "'" : "",
             units[0] ? units : "missing or empty", units[0] ? "'" : "",
             energy ? "joules" : "watts");
  } else if (role == RF_ENCLOSURE && power &&
             (!strcasecmp(ctx, "Rectifier") || !strcasecmp(ctx, "PowerSupply")) &&
             !strcasecmp(sub, "Input")) {
    if (!(x > 0)) {
      snprintf(f->why, sizeof f->why, "Reading is %s: no reading",
               isnan(x) ? "null or absent" : "0 or below");
    } else if (b->ninputs < ERG_RF_MAX_TERMS) {
      rf_term(&b->inputs[b->ninputs], uri, ERG_RF_SENSOR_POWER, NULL, k);
      b->input_found[b->ninputs++] = (int)(f - w->d->found);
      snprintf(f->why, sizeof f->why,
               "an input of the enclosure: the enclosure's power is the sum of its inputs");
    }
  } else if (role != RF_NODE) {
    snprintf(f->why, sizeof f->why, "the chassis is %s, not a node",
             role == RF_ENCLOSURE ? "an enclosure" : "a part");
  } else if (!rf_sensor_is_node(s)) {
    snprintf(f->why, sizeof f->why, "a part's sensor (%s%s%s), not the node's", ctx[0] ? ctx : "?",
             sub[0] ? " " : "", sub);
  } else if (!(x > 0)) {
    snprintf(f->why, sizeof f->why, "Reading is %s: no reading",
             isnan(x) ? "null or absent" : "0 or below");
  } else {
    struct erg_rf_term t;
    rf_term(&t, uri, energy ? ERG_RF_SENSOR_ENERGY : ERG_RF_SENSOR_POWER, NULL, k);
    if (energy)
      rf_offer_energy(w, b, 3, &t, f, "the node's energy sensor");
    else
      rf_offer_power(w, b, 3, &t, f, "the node's power sensor");
  }
  json_decref(s);
}

static bool rf_seen(char (*seen)[ERG_RF_URI_MAX], int n, const char *uri) {
  for (int i = 0; i < n; i++)
    if (!strcmp(seen[i], uri))
      return true;
  return false;
}

/* Every member of a collection, following Members@odata.nextLink; a new
 * array (NULL with a reason). */
static json_t *rf_members(struct rf_walk *w, const char *uri, char *why, size_t whylen) {
  json_t *all = json_array();
  char next[ERG_RF_URI_MAX];
  snprintf(next, sizeof next, "%s", uri);
  for (int page = 0; next[0] && page < RF_MAX_PAGES; page++) {
    json_t *doc = rf_get(w, next, why, whylen);
    if (!doc) {
      if (page == 0) {
        json_decref(all);
        return NULL;
      }
      break;
    }
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(doc, "Members"), i, m) {
      const char *id = erg_rf_str(m, "@odata.id");
      bool dup = false;
      size_t j;
      json_t *o;
      json_array_foreach(all, j, o) if (!strcmp(json_string_value(o), id)) dup = true;
      if (id[0] && !dup && strlen(id) < ERG_RF_URI_MAX && json_array_size(all) < RF_MAX_MEMBERS)
        json_array_append_new(all, json_string(id));
    }
    const char *nl = erg_rf_str(doc, "Members@odata.nextLink");
    snprintf(next, sizeof next, "%s", strcmp(nl, next) ? nl : "");
    json_decref(doc);
  }
  return all;
}

static void rf_sensors(struct rf_walk *w, const char *chassis, int role, const char *uri,
                       struct rf_best *b) {
  char why[200];
  json_t *ms = rf_members(w, uri, why, sizeof why);
  size_t i;
  json_t *m;
  json_array_foreach(ms, i, m) {
    const char *s = json_string_value(m);
    if (w->sensors >= RF_MAX_SENSORS)
      break;
    if (rf_sensor_skip(s))
      continue;
    w->sensors++;
    rf_sensor(w, chassis, role, s, b);
  }
  json_decref(ms);
}

/* Reads one chassis into b. */
static void rf_chassis(struct rf_walk *w, const char *uri, json_t *c, int role, struct rf_best *b) {
  memset(b, 0, sizeof *b);
  if (rf_link(c, "Power")[0])
    rf_power_resource(w, uri, role, c, rf_link(c, "Power"), b);
  if (rf_link(c, "EnvironmentMetrics")[0])
    rf_env_metrics(w, uri, role, rf_link(c, "EnvironmentMetrics"), b);
  /* Sensors are the last resort: skipped where the node has its reading,
   * unless everything is wanted (the probe). */
  bool have = (b->power_rank && b->power_rank < 3) || (b->energy_rank && b->energy_rank < 3);
  if (rf_link(c, "Sensors")[0] && (w->full || !have || role == RF_ENCLOSURE))
    rf_sensors(w, uri, role, rf_link(c, "Sensors"), b);
}

/* The plan for chassis uri from its best candidates; false if none. */
static bool rf_plan(struct rf_walk *w, const char *uri, int role, const struct rf_best *b,
                    struct erg_rf_plan *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->chassis, sizeof p->chassis, "%s", uri);
  p->rating_watts = b->rating;
  if (role == RF_ENCLOSURE) {
    if (!b->power_rank && !b->ninputs)
      return false;
    p->enclosure = true;
    if (b->ninputs) {
      p->npower = b->ninputs;
      memcpy(p->power, b->inputs, sizeof b->inputs);
      for (int i = 0; i < b->ninputs; i++)
        w->d->found[b->input_found[i]].used = true;
      snprintf(p->why, sizeof p->why,
               "enclosure %s: the sum of its %d input sensors; it feeds several nodes: a shared "
               "meter ([group.NAME] power)",
               uri, b->ninputs);
      return true;
    }
  }
  if (!b->power_rank && !b->energy_rank)
    return false;
  if (b->power_rank) {
    p->npower = 1;
    p->power[0] = b->power;
    w->d->found[b->power_found].used = true;
  }
  if (b->energy_rank) {
    p->have_energy = true;
    p->energy = b->energy;
    w->d->found[b->energy_found].used = true;
  }
  snprintf(p->why, sizeof p->why, "%s %s: %s%s%s%s", p->enclosure ? "enclosure" : "node", uri,
           b->energy_rank ? erg_rf_kind_name(b->energy.kind) : "",
           b->energy_rank ? " (energy counter, preferred where fine enough)" : "",
           b->energy_rank && b->power_rank ? " and " : "",
           b->power_rank ? erg_rf_kind_name(b->power.kind) : "");
  return true;
}

/* "X; Y; and N more" of the parts' readings that read, for a refusal:
 * the chassis' own figures first, then sensors; "ID what value". */
static void rf_list_found(const struct erg_rf_discovery *d, char *buf, size_t len) {
  size_t at = 0;
  int listed = 0, more = 0;
  buf[0] = '\0';
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < d->nfound; i++) {
      const struct erg_rf_found *f = &d->found[i];
      bool sensor = strncmp(f->what, "Sensor", 6) == 0;
      if (sensor != (pass == 1) || !(f->value > 0))
        continue;
      if (listed >= 6 || at >= len) {
        more++;
        continue;
      }
      char c[ERG_RF_URI_MAX];
      snprintf(c, sizeof c, "%s", f->chassis);
      size_t cl = strlen(c);
      while (cl > 1 && c[cl - 1] == '/')
        c[--cl] = '\0';
      const char *id = strrchr(c, '/'), *what = f->what;
      if (!strncmp(what, "EnvironmentMetrics ", 19))
        what += 19;
      else if (sensor)
        what = strrchr(f->uri, '/') ? strrchr(f->uri, '/') + 1 : f->uri;
      int n = snprintf(buf + at, len - at, "%s%s %s %.6g %s", listed ? "; " : "", id ? id + 1 : c,
                       what, f->value, f->energy ? "J" : "W");
      if (n < 0 || (size_t)n >= len - at) {
        buf[at] = '\0';
        at = len;
        more++;
        continue;
      }
      at += (size_t)n;
      listed++;
    }
  }
  size_t used = strlen(buf);
  if (more && used < len)
    snprintf(buf + used, len - used, "; and %d more (erg pdu probe lists them)", more);
  if (!listed)
    snprintf(buf, len, "none that reads");
}

int erg_rf_discover(erg_rf_get_fn get, void *ctx, const char *chassis, bool full,
                    struct erg_rf_discovery *d, char *why, size_t whylen) {
  struct rf_walk w = {.get = get, .ctx = ctx, .d = d, .full = full};
  memset(d, 0, sizeof *d);
  char inner[200];
  char(*names)[ERG_RF_URI_MAX] = calloc(RF_MAX_CHASSIS, ERG_RF_URI_MAX);
  int nnames = 0;
  if (!names) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  json_t *members = NULL;
  if (chassis && chassis[0]) {
    members = json_array();
    json_array_append_new(members, json_string(chassis));
  } else {
    json_t *root = rf_get(&w, "/redfish/v1", inner, sizeof inner);
    if (!root) {
      snprintf(why, whylen, "service root /redfish/v1: %s", inner);
      free(names);
      return -1;
    }
    char curi[ERG_RF_URI_MAX];
    snprintf(curi, sizeof curi, "%s", rf_link(root, "Chassis"));
    json_decref(root);
    if (!curi[0]) {
      snprintf(why, whylen, "the service root links no Chassis collection");
      free(names);
      return -1;
    }
    if (!(members = rf_members(&w, curi, inner, sizeof inner))) {
      snprintf(why, whylen, "%s: %s", curi, inner);
      free(names);
      return -1;
    }
  }
  int nnode = 0, nencl = 0, pending = 0;
  struct erg_rf_plan plan, encl_plan;
  char pending_why[160] = "";
  size_t i;
  json_t *m;
  json_array_foreach(members, i, m) {
    const char *uri = json_string_value(m);
    if (nnames >= RF_MAX_CHASSIS || rf_seen(names, nnames, uri))
      continue;
    snprintf(names[nnames++], ERG_RF_URI_MAX, "%s", uri);
    json_t *c = rf_get(&w, uri, inner, sizeof inner);
    if (!c) {
      if (chassis && chassis[0]) {
        snprintf(why, whylen, "chassis %s: %s", uri, inner);
        json_decref(members);
        free(names);
        return -1;
      }
      continue;
    }
    int role = rf_chassis_role(c);
    /* A chassis named in the config is read whatever its type says. */
    if (chassis && chassis[0] && role == RF_PART)
      role = RF_NODE;
    struct rf_best b;
    rf_chassis(&w, uri, c, role, &b);
    json_decref(c);
    struct erg_rf_plan p;
    if (!rf_plan(&w, uri, role, &b, &p))
      continue;
    if (b.pending_why[0] && b.power_rank == 1 && !b.energy_rank) {
      pending++;
      snprintf(pending_why, sizeof pending_why, "%s", b.pending_why);
    }
    if (p.enclosure) {
      if (!nencl++)
        encl_plan = p;
      continue;
    }
    if (nnode < 8)
      snprintf(d->nodes[nnode], ERG_RF_URI_MAX, "%s", uri);
    if (!nnode++)
      plan = p;
  }
  json_decref(members);
  free(names);
  d->nnodes = nnode;
  char list[600];
  if (nnode == 1 || (chassis && chassis[0] && nnode)) {
    d->plan = plan;
    if (pending)
      snprintf(d->plan.why + strlen(d->plan.why), sizeof d->plan.why - strlen(d->plan.why),
               "; %s: no reading until it reports one", pending_why);
    return 0;
  }
  if (nnode > 1) {
    size_t at = 0;
    list[0] = '\0';
    for (int k = 0; k < nnode && k < 8; k++)
      at += (size_t)snprintf(list + at, sizeof list - at > 1 ? sizeof list - at : 0, "%s%s",
                             k ? ", " : "", d->nodes[k]);
    snprintf(why, whylen,
             "%d nodes in this BMC (%s): each is its own meter: name one with chassis = ...", nnode,
             list);
    return -1;
  }
  if (nencl && chassis && chassis[0]) {
    d->plan = encl_plan;
    return 0;
  }
  if (nencl) {
    d->plan = encl_plan;
    snprintf(why, whylen,
             "only an enclosure's reading (%s): it feeds several nodes, a shared meter: name it "
             "with chassis = %s and use the meter in a [group.NAME] power",
             encl_plan.chassis, encl_plan.chassis);
    return -1;
  }
  rf_list_found(d, list, sizeof list);
  snprintf(why, whylen, "no node total; parts only, not added up: %s", list);
  return -1;
}

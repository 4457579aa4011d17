// SPDX-License-Identifier: GPL-3.0-or-later
/* ergd.conf: [collector], [meter.NAME] / [pdu.NAME], [node.NAME].
 * Every error names the file, the line and the key. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector_int.h"
#include "erg_store.h"
#include "erg_fit.h"
#include "erg_web.h"

void erg_collector_config_defaults(struct erg_collector_config *c) {
  memset(c, 0, sizeof *c);
  strcpy(c->listen, "tcp://127.0.0.1:9711");
  strcpy(c->http, "127.0.0.1:9710");
  struct erg_web_server_limits lim;
  erg_web_server_limits_default(&lim);
  c->http_max_connections = lim.max_connections;
  c->http_max_connections_per_address = lim.max_connections_per_address;
  c->http_header_timeout_seconds = lim.header_timeout_seconds;
  c->http_request_timeout_seconds = lim.request_timeout_seconds;
  strcpy(c->data_dir, "/var/lib/erg");
  c->step_seconds = 5;
  c->settle_steps = 2;
  c->poll_seconds = 1.0;
  c->idle_watts = 0;
  c->top_processes = 10;
  c->page_interval_seconds = 60;
  c->page_timeout_seconds = 300;
  c->journal_max_bytes = 64L << 20;
  c->journal_max_age_seconds = 7 * 86400;
  c->key_expire_seconds = 30L * 86400;
  c->cluster_key_expire_seconds = 0;
  c->key_archives_max = 0; /* derived: erg_collector_key_archives_max */
  c->key_min_share = 0.01;
  strcpy(c->page_format, "png");
  c->lag_max_seconds = 15;
  c->lag_window_seconds = 120;
  c->log_level = ERG_LOG_INFO;
  c->idle_policy = ERG_IDLE_SEPARATE;
  c->wal = true;
  c->wal_fsync = true;
  c->energy_intervals = true;
  c->wal_max_bytes = 1L << 30;
  c->max_unconfigured_nodes = 64;
  static const double keep[ERG_STORE_RESOLUTIONS] = ERG_STORE_KEEP_DAYS_DEFAULT;
  memcpy(c->archive_days, keep, sizeof c->archive_days);
}

/* "STEP MINUTE HOUR DAY": days kept at each resolution, at least one > 0. */
static int cfg_archive_days(const char *value, double *days, char *why, size_t whylen) {
  double d[ERG_STORE_RESOLUTIONS];
  char extra;
  int n = sscanf(value, "%lf %lf %lf %lf %c", &d[0], &d[1], &d[2], &d[3], &extra);
  if (n != ERG_STORE_RESOLUTIONS) {
    snprintf(why, whylen, "'%s' is not 4 numbers of days (step, 1 min, 1 h, 1 day)", value);
    return -1;
  }
  double sum = 0;
  for (int i = 0; i < ERG_STORE_RESOLUTIONS; i++) {
    if (!(d[i] >= 0 && d[i] <= 36525)) {
      snprintf(why, whylen, "'%s': each value must be 0..36525 days", value);
      return -1;
    }
    sum += d[i];
  }
  if (sum <= 0) {
    snprintf(why, whylen, "'%s': at least one resolution must be kept", value);
    return -1;
  }
  memcpy(days, d, sizeof d);
  return 0;
}

void erg_collector_config_free(struct erg_collector_config *c) {
  free(c->sources);
  free(c->nodes);
  free(c->groups);
  c->sources = NULL;
  c->nodes = NULL;
  c->groups = NULL;
}

/* Sections are parsed in file order, but a node may name a meter defined
 * later: feeds are stored by name first and resolved at the end. */
struct group_spec {
  char power[512], nodes[2048];
};
/* Where a source's keys are, for checks that run after the file is read
 * (erg_pdu_source_check) and still name FILE:LINE. */
#define SOURCE_KEY_LINES 48
struct source_lines {
  int first; /* the section's first key */
  int n;
  struct {
    char key[24];
    int line;
  } k[SOURCE_KEY_LINES];
};
struct config_state {
  struct erg_collector_config *c;
  struct source_lines *source_lines; /* parallel to c->sources */
  char (*feed_specs)[512];
  struct group_spec *group_specs;    /* parallel to c->groups */
  char source_kind[ERG_MAX_SOURCES]; /* 'm' [meter.NAME], 'p' [pdu.NAME] */
  struct erg_report_config report;   /* checked here, used by erg report */
  int node_cap;                      /* c->nodes and feed_specs have room for */
  struct erg_name_index node_index;  /* over c->nodes, 2 * node_cap slots */
};

/* A string value that fits: cut, a path would name another file. */
static int cfg_str(char *dst, size_t len, const char *value, char *why, size_t whylen) {
  if (strlen(value) >= len) {
    snprintf(why, whylen, "longer than %zu bytes", len - 1);
    return -1;
  }
  erg_strlcpy(dst, value, len);
  return 0;
}

/* "HOST:PORT" as web/http.c binds it: an IPv4 literal or localhost, port
 * 0..65535 (0: any free one); "" turns the pages off. */
static int cfg_http(char *dst, size_t len, const char *value, char *why, size_t whylen) {
  const char *colon = strrchr(value, ':');
  char host[64] = "";
  struct in_addr a;
  long port = -1;
  char *end = NULL;
  if (colon && (size_t)(colon - value) < sizeof host) {
    snprintf(host, sizeof host, "%.*s", (int)(colon - value), value);
    errno = 0;
    port = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end)
      port = -1;
  }
  if (value[0] && (port < 0 || port > 65535 ||
                   (strcmp(host, "localhost") && inet_pton(AF_INET, host, &a) != 1))) {
    snprintf(why, whylen, "'%.64s' is not an IPv4 HOST:PORT (PORT 0..65535), or empty", value);
    return -1;
  }
  return cfg_str(dst, len, value, why, whylen);
}

void erg_collector_http_limits(const struct erg_collector_config *c,
                               struct erg_web_server_limits *l) {
  l->max_connections = c->http_max_connections;
  l->max_connections_per_address = c->http_max_connections_per_address;
  l->header_timeout_seconds = c->http_header_timeout_seconds;
  l->request_timeout_seconds = c->http_request_timeout_seconds;
}

static int cfg_collector_key(struct erg_collector_config *c, const char *key, const char *value,
                             char *why, size_t whylen) {
  long l;
  double d;
  int rc = 0;
  if (!strcmp(key, "listen")) {
    if (!(rc = erg_config_endpoint(value, why, whylen)))
      rc = cfg_str(c->listen, sizeof c->listen, value, why, whylen);
  } else if (!strcmp(key, "http")) {
    rc = cfg_http(c->http, sizeof c->http, value, why, whylen);
  } else if (!strcmp(key, "http_max_connections")) {
    rc = erg_config_long(value, 1, 100000, &l, why, whylen);
    c->http_max_connections = (unsigned)l;
  } else if (!strcmp(key, "http_max_connections_per_address")) {
    rc = erg_config_long(value, 1, 100000, &l, why, whylen);
    c->http_max_connections_per_address = (unsigned)l;
  } else if (!strcmp(key, "http_header_timeout_seconds")) {
    rc = erg_config_double(value, 1, 3600, &c->http_header_timeout_seconds, why, whylen);
  } else if (!strcmp(key, "http_request_timeout_seconds")) {
    rc = erg_config_double(value, 1, 86400, &c->http_request_timeout_seconds, why, whylen);
  } else if (!strcmp(key, "data_dir")) {
    if (!value[0]) {
      snprintf(why, whylen, "empty (archives, journals and the WAL go there)");
      rc = -1;
    } else {
      rc = cfg_str(c->data_dir, sizeof c->data_dir, value, why, whylen);
    }
  } else if (!strcmp(key, "curve_secret_key_file")) {
    rc = cfg_str(c->curve_secret_key_file, sizeof c->curve_secret_key_file, value, why, whylen);
  } else if (!strcmp(key, "authorized_keys_file")) {
    rc = cfg_str(c->authorized_keys_file, sizeof c->authorized_keys_file, value, why, whylen);
  } else if (!strcmp(key, "www_dir")) {
    rc = cfg_str(c->www_dir, sizeof c->www_dir, value, why, whylen);
  } else if (!strcmp(key, "rrdcached")) {
    rc = cfg_str(c->rrdcached, sizeof c->rrdcached, value, why, whylen);
  } else if (!strcmp(key, "step_seconds")) {
    if (!(rc = erg_config_long(value, 1, 3600, &l, why, whylen)))
      c->step_seconds = (unsigned)l;
  } else if (!strcmp(key, "settle_steps")) {
    if (!(rc = erg_config_long(value, 0, 60, &l, why, whylen)))
      c->settle_steps = (unsigned)l;
  } else if (!strcmp(key, "top_processes") || !strcmp(key, "top_keys")) {
    /* top_keys: the same, named for what it counts (keys of every kind). */
    if (!(rc = erg_config_long(value, 1, 1000, &l, why, whylen)))
      c->top_processes = (unsigned)l;
  } else if (!strcmp(key, "poll_seconds")) {
    rc = erg_config_double(value, 0.1, 3600, &c->poll_seconds, why, whylen);
  } else if (!strcmp(key, "ipmi_poll_threads")) {
    if (!(rc = erg_config_long(value, 1, 4096, &l, why, whylen)))
      c->ipmi_poll_threads = (unsigned)l;
  } else if (!strcmp(key, "idle_watts")) {
    rc = erg_config_double(value, 0, 1e6, &c->idle_watts, why, whylen);
  } else if (!strcmp(key, "lag_max_seconds")) {
    if (!(rc = erg_config_long(value, 0, 120, &l, why, whylen)))
      c->lag_max_seconds = (unsigned)l;
  } else if (!strcmp(key, "lag_window_seconds")) {
    if (!(rc = erg_config_long(value, 30, 360, &l, why, whylen)))
      c->lag_window_seconds = (unsigned)l;
  } else if (!strcmp(key, "journal_max_bytes")) {
    rc = erg_config_long(value, 4096, 1L << 40, &c->journal_max_bytes, why, whylen);
  } else if (!strcmp(key, "journal_max_age_seconds")) {
    rc = erg_config_long(value, 0, 10L * 365 * 86400, &c->journal_max_age_seconds, why, whylen);
  } else if (!strcmp(key, "key_expire_seconds")) {
    rc = erg_config_long(value, 0, 100L * 366 * 86400, &c->key_expire_seconds, why, whylen);
  } else if (!strcmp(key, "key_archives_max")) {
    if (!(rc = erg_config_long(value, 4, 100000, &l, why, whylen)))
      c->key_archives_max = (unsigned)l;
  } else if (!strcmp(key, "key_min_share")) {
    rc = erg_config_double(value, 0, 1, &c->key_min_share, why, whylen);
  } else if (!strcmp(key, "cluster_key_expire_seconds")) {
    rc = erg_config_long(value, 0, 100L * 366 * 86400, &c->cluster_key_expire_seconds, why, whylen);
  } else if (!strcmp(key, "page_interval_seconds")) {
    rc = erg_config_double(value, 1, 86400, &d, why, whylen);
    c->page_interval_seconds = d;
  } else if (!strcmp(key, "page_timeout_seconds")) {
    rc = erg_config_double(value, 1, 86400, &d, why, whylen);
    c->page_timeout_seconds = d;
  } else if (!strcmp(key, "page_format")) {
    if (strcmp(value, "png") && strcmp(value, "svg")) {
      snprintf(why, whylen, "'%s' is not one of png, svg", value);
      rc = -1;
    } else {
      erg_strlcpy(c->page_format, value, sizeof c->page_format);
    }
  } else if (!strcmp(key, "model_dir")) {
    rc = cfg_str(c->model_dir, sizeof c->model_dir, value, why, whylen);
  } else if (!strcmp(key, "wal")) {
    rc = erg_config_bool(value, &c->wal, why, whylen);
  } else if (!strcmp(key, "wal_fsync")) {
    rc = erg_config_bool(value, &c->wal_fsync, why, whylen);
  } else if (!strcmp(key, "energy_intervals")) {
    rc = erg_config_bool(value, &c->energy_intervals, why, whylen);
  } else if (!strcmp(key, "wal_dir")) {
    rc = cfg_str(c->wal_dir, sizeof c->wal_dir, value, why, whylen);
  } else if (!strcmp(key, "wal_max_bytes")) {
    rc = erg_config_long(value, 1L << 20, 1L << 40, &c->wal_max_bytes, why, whylen);
  } else if (!strcmp(key, "max_unconfigured_nodes")) {
    if (!(rc = erg_config_long(value, 0, ERG_MAX_NODES, &l, why, whylen)))
      c->max_unconfigured_nodes = (unsigned)l;
  } else if (!strcmp(key, "idle_policy")) {
    if ((c->idle_policy = erg_idle_policy_parse(value)) < 0) {
      snprintf(why, whylen, "'%s' is not one of separate, even, proportional", value);
      rc = -1;
    }
  } else if (!strcmp(key, "archive_days")) {
    rc = cfg_archive_days(value, c->archive_days, why, whylen);
  } else if (!strcmp(key, "refit_interval_seconds")) {
    if (!(rc = erg_config_long(value, 0, 365L * 86400, &l, why, whylen)))
      c->refit_interval_seconds = (unsigned)l;
  } else if (!strcmp(key, "log_level")) {
    if ((c->log_level = erg_log_level_parse(value)) < 0) {
      snprintf(why, whylen, "'%s' is not one of error, warning, info, debug", value);
      rc = -1;
    }
  } else {
    snprintf(why, whylen, "unknown key '%s' in [collector]", key);
    return -1;
  }
  return rc;
}

static struct erg_pdu_source_config *cfg_source(struct erg_collector_config *c, const char *name,
                                                const char *driver) {
  for (int i = 0; i < c->nsources; i++)
    if (!strcmp(c->sources[i].name, name))
      return &c->sources[i];
  if (c->nsources >= ERG_MAX_SOURCES)
    return NULL;
  struct erg_pdu_source_config *s = realloc(c->sources, (c->nsources + 1) * sizeof *s);
  if (!s)
    return NULL;
  c->sources = s;
  s = &c->sources[c->nsources++];
  memset(s, 0, sizeof *s);
  erg_strlcpy(s->name, name, sizeof s->name);
  erg_strlcpy(s->driver, driver, sizeof s->driver);
  s->timeout_seconds = 1.0;
  s->retries = 1;
  s->unit_id = 1;
  s->snmp_version = 2;
  strcpy(s->community, "public");
  return s;
}

static int cfg_source_key(struct erg_pdu_source_config *s, const char *key, const char *value,
                          char *why, size_t whylen) {
  long l;
  struct {
    const char *k;
    char *dst;
    size_t len;
  } strs[] = {{"driver", s->driver, sizeof s->driver},
              {"host", s->host, sizeof s->host},
              {"profile", s->profile, sizeof s->profile},
              {"community", s->community, sizeof s->community},
              {"v3_user", s->v3_user, sizeof s->v3_user},
              {"v3_level", s->v3_level, sizeof s->v3_level},
              {"v3_auth_proto", s->v3_auth_proto, sizeof s->v3_auth_proto},
              {"v3_auth_pass", s->v3_auth_pass, sizeof s->v3_auth_pass},
              {"v3_priv_proto", s->v3_priv_proto, sizeof s->v3_priv_proto},
              {"v3_priv_pass", s->v3_priv_pass, sizeof s->v3_priv_pass},
              {"v3_context", s->v3_context, sizeof s->v3_context},
              {"oid_power", s->oid_power, sizeof s->oid_power},
              {"oid_energy", s->oid_energy, sizeof s->oid_energy},
              {"oid_name", s->oid_name, sizeof s->oid_name},
              {"oid_count", s->oid_count, sizeof s->oid_count},
              {"oid_total_power", s->oid_total_power, sizeof s->oid_total_power},
              {"device", s->device, sizeof s->device},
              {"power_register", s->power_register, sizeof s->power_register},
              {"energy_register", s->energy_register, sizeof s->energy_register},
              {"user", s->user, sizeof s->user},
              {"password_file", s->password_file, sizeof s->password_file},
              {"privilege", s->privilege, sizeof s->privilege},
              /* Redfish (issue 33, docs/bmc.md) */
              {"chassis", s->chassis, sizeof s->chassis},
              {"ca_file", s->ca_file, sizeof s->ca_file},
              {"pinned_public_key", s->pinned_public_key, sizeof s->pinned_public_key}};
  /* A BMC answers in seconds: its default timeout is 10 s, not 1 s. */
  if (!strcmp(key, "driver") && !strcmp(value, "redfish") && s->timeout_seconds == 1.0)
    s->timeout_seconds = 10.0;
  /* Keys whose default stands for something: empty is no value. */
  static const char *const not_empty[] = {"driver", "host", "profile", "device"};
  for (size_t i = 0; i < sizeof not_empty / sizeof not_empty[0]; i++)
    if (!strcmp(key, not_empty[i]) && !value[0]) {
      snprintf(why, whylen, "empty (leave the key out for its default)");
      return -1;
    }
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
    if (!strcmp(key, strs[i].k))
      return cfg_str(strs[i].dst, strs[i].len, value, why, whylen);
  if (!strcmp(key, "port")) {
    if (erg_config_long(value, 1, 65535, &l, why, whylen))
      return -1;
    s->port = (int)l;
  } else if (!strcmp(key, "power_factor")) {
    char *e;
    double pf = strtod(value, &e);
    if (e == value || *e || !(pf > 0 && pf <= 1)) {
      snprintf(why, whylen, "'%s' is not a power factor (0 < PF <= 1)", value);
      return -1;
    }
    s->power_factor = pf;
  } else if (!strcmp(key, "cipher_suite")) {
    /* IPMI lanplus; which ones the driver takes is its check's. */
    if (erg_config_long(value, 0, 255, &l, why, whylen))
      return -1;
    s->cipher_suite = (int)l;
  } else if (!strcmp(key, "unit_id")) {
    if (erg_config_long(value, 0, 255, &l, why, whylen))
      return -1;
    s->unit_id = (int)l;
  } else if (!strcmp(key, "retries")) {
    if (erg_config_long(value, 0, 10, &l, why, whylen))
      return -1;
    s->retries = (int)l;
  } else if (!strcmp(key, "version")) {
    if (!strcmp(value, "1") || !strcmp(value, "2c") || !strcmp(value, "3"))
      s->snmp_version = value[0] - '0';
    else {
      snprintf(why, whylen, "'%s' is not an SNMP version (1, 2c, 3)", value);
      return -1;
    }
  } else if (!strcmp(key, "baud")) {
    if (erg_config_long(value, 50, 4000000, &l, why, whylen))
      return -1;
    s->baud = (int)l;
  } else if (!strcmp(key, "data_bits") || !strcmp(key, "stop_bits")) {
    int five = key[0] == 'd';
    if (erg_config_long(value, five ? 5 : 1, five ? 8 : 2, &l, why, whylen))
      return -1;
    *(five ? &s->data_bits : &s->stop_bits) = (int)l;
  } else if (!strcmp(key, "parity")) {
    static const char *const names[] = {"N", "none", "E", "even", "O", "odd"};
    s->parity = 0;
    for (size_t i = 0; i < 6; i++)
      if (!strcasecmp(value, names[i]))
        s->parity = "NNEEOO"[i];
    if (!s->parity) {
      snprintf(why, whylen, "parity '%s': want none, even or odd", value);
      return -1;
    }
  } else if (!strcmp(key, "timeout_seconds")) {
    return erg_config_double(value, 0.01, 60, &s->timeout_seconds, why, whylen);
  } else if (!strcmp(key, "power_scale")) {
    return erg_config_double(value, 1e-9, 1e9, &s->power_scale, why, whylen);
  } else if (!strcmp(key, "energy_scale_joules")) {
    return erg_config_double(value, 1e-9, 1e12, &s->energy_scale_joules, why, whylen);
  } else if (!strcmp(key, "tls_verify")) {
    bool v;
    if (erg_config_bool(value, &v, why, whylen))
      return -1;
    s->tls_insecure = !v;
  } else if (!strcmp(key, "auth")) {
    if (strcmp(value, "session") && strcmp(value, "basic") && strcmp(value, "none")) {
      snprintf(why, whylen, "'%s' is not one of session, basic, none", value);
      return -1;
    }
    erg_strlcpy(s->auth, value, sizeof s->auth);
  } else if (!strcmp(key, "average_seconds")) {
    /* The meter shows the trailing mean of this long (whole seconds):
     * collector/lag.c models it. */
    if (erg_config_double(value, 0, 60, &s->average_seconds, why, whylen))
      return -1;
    if (s->average_seconds != floor(s->average_seconds)) {
      snprintf(why, whylen, "'%s' is not a whole number of seconds", value);
      return -1;
    }
  } else if (!strcmp(key, "max_watts")) {
    /* The channel's physical range (collector/meter_check.c). */
    return erg_config_double(value, 1, 1e7, &s->max_watts, why, whylen);
  } else {
    snprintf(why, whylen, "unknown key '%s'", key);
    return -1;
  }
  return 0;
}

/* Nodes are found by name through an index: each [node.NAME] key and
 * each group member is a lookup, 10,000 nodes as many. */
static const char *cfg_node_name(const void *nodes, size_t i) {
  return ((const struct erg_node_config *)nodes)[i].name;
}

/* Doubles the room for nodes (c->nodes, feed_specs) and rebuilds the
 * index at twice its size. */
static int cfg_node_grow(struct config_state *st) {
  struct erg_collector_config *c = st->c;
  int cap = st->node_cap ? 2 * st->node_cap : 16; /* a power of two */
  struct erg_node_config *n = realloc(c->nodes, (size_t)cap * sizeof *n);
  if (n)
    c->nodes = n;
  char(*f)[512] = realloc(st->feed_specs, (size_t)cap * sizeof *f);
  if (f)
    st->feed_specs = f;
  if (!n || !f ||
      erg_name_index_rebuild(&st->node_index, 2 * (size_t)cap, cfg_node_name, c->nodes,
                             (size_t)c->nnodes) != 0)
    return -1;
  st->node_cap = cap;
  return 0;
}

static struct erg_node_config *cfg_node(struct config_state *st, const char *name) {
  struct erg_collector_config *c = st->c;
  uint32_t *slot = erg_name_index_slot(&st->node_index, name, cfg_node_name, c->nodes);
  if (slot && *slot)
    return &c->nodes[*slot - 1];
  if (c->nnodes >= ERG_MAX_NODES || strlen(name) >= sizeof c->nodes[0].name)
    return NULL;
  if (c->nnodes == st->node_cap && cfg_node_grow(st) != 0)
    return NULL;
  struct erg_node_config *n = &c->nodes[c->nnodes];
  st->feed_specs[c->nnodes][0] = '\0';
  c->nnodes++;
  memset(n, 0, sizeof *n);
  erg_strlcpy(n->name, name, sizeof n->name);
  n->idle_watts = NAN;
  n->group = -1;
  *erg_name_index_slot(&st->node_index, name, cfg_node_name, c->nodes) = (uint32_t)c->nnodes;
  return n;
}

static int cfg_node_index(void *user, const char *name) {
  struct config_state *st = user;
  struct erg_node_config *n = cfg_node(st, name);
  return n ? (int)(n - st->c->nodes) : -1;
}

static int cfg_group_key(struct config_state *st, const char *name, const char *key,
                         const char *value, char *why, size_t whylen) {
  struct erg_collector_config *c = st->c;
  int g = 0;
  while (g < c->ngroups && strcmp(c->groups[g].name, name))
    g++;
  if (g == c->ngroups) {
    struct erg_group_config *v = realloc(c->groups, (size_t)(g + 1) * sizeof *v);
    if (v)
      c->groups = v;
    struct group_spec *s = realloc(st->group_specs, (size_t)(g + 1) * sizeof *s);
    if (s)
      st->group_specs = s;
    if (!v || !s || strlen(name) >= sizeof v->name) {
      snprintf(why, whylen, "out of memory or name too long");
      return -1;
    }
    memset(&c->groups[g], 0, sizeof c->groups[g]);
    memset(&st->group_specs[g], 0, sizeof st->group_specs[g]);
    erg_strlcpy(c->groups[g].name, name, sizeof c->groups[g].name);
    c->ngroups++;
  }
  if (!value[0]) {
    snprintf(why, whylen, "empty");
    return -1;
  }
  if (!strcmp(key, "power"))
    return cfg_str(st->group_specs[g].power, sizeof st->group_specs[g].power, value, why, whylen);
  if (!strcmp(key, "nodes"))
    return cfg_str(st->group_specs[g].nodes, sizeof st->group_specs[g].nodes, value, why, whylen);
  snprintf(why, whylen, "unknown key (power, nodes)");
  return -1;
}

static void source_line(struct config_state *st, int i, const char *key, int line) {
  struct source_lines *l = &st->source_lines[i];
  if (!l->first)
    l->first = line;
  if (l->n < SOURCE_KEY_LINES && strlen(key) < sizeof l->k[0].key) {
    erg_strlcpy(l->k[l->n].key, key, sizeof l->k[0].key);
    l->k[l->n++].line = line;
  }
}

/* The line of a source's key, else of its section's first key. */
static int source_key_line(const struct config_state *st, int i, const char *key) {
  const struct source_lines *l = &st->source_lines[i];
  for (int k = 0; k < l->n; k++)
    if (!strcmp(l->k[k].key, key))
      return l->k[k].line;
  return l->first;
}

/* Each source as its driver would take it, before anything opens it. */
static int cfg_check_sources(const char *path, struct config_state *st,
                             struct erg_config_error *err) {
  const struct erg_collector_config *c = st->c;
  for (int i = 0; i < c->nsources; i++) {
    const char *key = "";
    char why[300];
    if (erg_pdu_source_check(&c->sources[i], &key, why, sizeof why) == 0)
      continue;
    const char *sec = st->source_kind[i] == 'p' ? "pdu" : "meter";
    if (key[0])
      snprintf(err->msg, sizeof err->msg, "%s:%d: [%s.%s] key '%s': %s", path,
               source_key_line(st, i, key), sec, c->sources[i].name, key, why);
    else
      snprintf(err->msg, sizeof err->msg, "%s:%d: [%s.%s]: %s", path, source_key_line(st, i, ""),
               sec, c->sources[i].name, why);
    return -1;
  }
  return 0;
}

static int config_cb(void *user, int line, const char *section, const char *key, const char *value,
                     char *why, size_t whylen) {
  struct config_state *st = user;
  char inner[300];
  int rc;
  if (!strcmp(section, "collector")) {
    if (cfg_collector_key(st->c, key, value, inner, sizeof inner) == 0)
      return 0;
    /* Unknown keys already say which; bad values get the key prepended. */
    if (!strncmp(inner, "unknown key", 11))
      snprintf(why, whylen, "%s", inner);
    else
      snprintf(why, whylen, "key '%s': %s", key, inner);
    return -1;
  }
  if (!strcmp(section, "report")) {
    /* erg report's defaults (web/): checked here, used there. */
    return erg_report_config_key(&st->report, key, value, why, whylen);
  }
  if (!strncmp(section, "meter.", 6) || !strncmp(section, "pdu.", 4)) {
    const char *name = strchr(section, '.') + 1;
    /* Names go into logs, labels and "power" terms ([A-Za-z0-9._-]). */
    if (!erg_name_is_safe(name)) {
      snprintf(why, whylen,
               "[%.100s]: source name '%.64s' is not 1..%d characters of "
               "[A-Za-z0-9._-] not starting with '.'",
               section, name, ERG_NAME_MAX - 1);
      return -1;
    }
    struct erg_pdu_source_config *s =
        cfg_source(st->c, name, section[0] == 'm' ? "modbus" : "snmp");
    if (!s || strlen(name) >= sizeof s->name) {
      snprintf(why, whylen, "bad or too many sources: [%s]", section);
      return -1;
    }
    char *kind = &st->source_kind[s - st->c->sources];
    if (*kind && *kind != section[0]) {
      snprintf(why, whylen,
               "[%.100s]: a source named '%s' is defined as both [meter.%s] and "
               "[pdu.%s]",
               section, name, name, name);
      return -1;
    }
    *kind = section[0];
    source_line(st, (int)(s - st->c->sources), key, line);
    rc = cfg_source_key(s, key, value, inner, sizeof inner);
  } else if (!strncmp(section, "node.", 5)) {
    /* The node's archives and journal are named after it. */
    if (!erg_name_is_safe(section + 5)) {
      snprintf(why, whylen,
               "[%.100s]: node name '%.64s' is not 1..%d characters of "
               "[A-Za-z0-9._-] not starting with '.'",
               section, section + 5, ERG_NAME_MAX - 1);
      return -1;
    }
    struct erg_node_config *n = cfg_node(st, section + 5);
    if (!n || !section[5]) {
      snprintf(why, whylen, "bad or too many nodes: [%s]", section);
      return -1;
    }
    rc = 0;
    if (!strcmp(key, "power") && !value[0]) {
      snprintf(inner, sizeof inner, "empty (want SOURCE[:N|:LEVEL:N][*FACTOR] [+ ...])");
      rc = -1;
    } else if (!strcmp(key, "power")) {
      rc = cfg_str(st->feed_specs[n - st->c->nodes], 512, value, inner, sizeof inner);
    } else if (!strcmp(key, "idle_watts"))
      rc = erg_config_double(value, 0, 1e6, &n->idle_watts, inner, sizeof inner);
    else {
      snprintf(why, whylen, "unknown key '%s' in [%s]", key, section);
      return -1;
    }
  } else if (!strncmp(section, "group.", 6)) {
    if (!erg_name_is_safe(section + 6)) {
      snprintf(why, whylen,
               "[%.100s]: group name '%.64s' is not 1..%d characters of "
               "[A-Za-z0-9._-] not starting with '.'",
               section, section + 6, ERG_NAME_MAX - 1);
      return -1;
    }
    rc = cfg_group_key(st, section + 6, key, value, inner, sizeof inner);
  } else {
    snprintf(why, whylen,
             "unknown section [%s] (collector, meter.NAME, pdu.NAME, node.NAME, group.NAME, "
             "report)",
             section);
    return -1;
  }
  if (rc)
    snprintf(why, whylen, "[%s] key '%s': %s", section, key, inner);
  return rc;
}

/* Unset (0), the cap is 64 or four cells' worth of top keys. */
unsigned erg_collector_key_archives_max(const struct erg_collector_config *c) {
  if (c->key_archives_max)
    return c->key_archives_max;
  return 4 * c->top_processes > 64 ? 4 * c->top_processes : 64;
}

/* Each cell writes up to top_processes keys per kind plus [none],
 * [other] and [system]; a cap below that would evict keys written in the
 * same cell. */
static int cfg_check_key_archives(const struct erg_collector_config *c, char *why, size_t whylen) {
  unsigned need = c->top_processes + 3;
  if (c->key_archives_max && c->key_archives_max < need) {
    snprintf(why, whylen,
             "key_archives_max = %u is below top_processes + 3 = %u (each cell writes the top "
             "keys plus [none], [other] and [system])",
             c->key_archives_max, need);
    return -1;
  }
  return 0;
}

int erg_collector_config_load(const char *path, struct erg_collector_config *c,
                              struct erg_config_error *err) {
  struct config_state st = {.c = c};
  erg_report_config_defaults(&st.report);
  st.source_lines = calloc(ERG_MAX_SOURCES, sizeof *st.source_lines);
  if (!st.source_lines) {
    snprintf(err->msg, sizeof err->msg, "%s: out of memory", path);
    return -1;
  }
  int rc = erg_config_parse_lines(path, config_cb, &st, err);
  char why[400], who[160];
  if (rc == 0)
    rc = cfg_check_sources(path, &st, err);
  for (int i = 0; rc == 0 && i < c->nnodes; i++) {
    snprintf(who, sizeof who, "[node.%s]", c->nodes[i].name);
    if (st.feed_specs[i][0] && cfg_power_parse(c, who, st.feed_specs[i], c->nodes[i].feeds,
                                               &c->nodes[i].nfeeds, why, sizeof why) != 0) {
      snprintf(err->msg, sizeof err->msg, "%s: %s", path, why);
      rc = -1;
    }
  }
  /* Groups after nodes: a member must not have a power of its own. */
  for (int g = 0; rc == 0 && g < c->ngroups; g++) {
    struct group_spec *gs = &st.group_specs[g];
    snprintf(who, sizeof who, "[group.%s]", c->groups[g].name);
    if (!gs->power[0]) {
      snprintf(err->msg, sizeof err->msg, "%s: %s has no 'power' (the meter its nodes share)", path,
               who);
      rc = -1;
    } else if (cfg_power_parse(c, who, gs->power, c->groups[g].feeds, &c->groups[g].nfeeds, why,
                               sizeof why) != 0 ||
               cfg_group_members(c, g, gs->nodes, cfg_node_index, &st, why, sizeof why) != 0) {
      snprintf(err->msg, sizeof err->msg, "%s: %s", path, why);
      rc = -1;
    }
  }
  if (rc == 0 && erg_report_config_check(&st.report, why, sizeof why) != 0) {
    snprintf(err->msg, sizeof err->msg, "%s: %s", path, why);
    rc = -1;
  }
  if (rc == 0 && cfg_power_check(c, why, sizeof why) != 0) {
    snprintf(err->msg, sizeof err->msg, "%s: %s", path, why);
    rc = -1;
  }
  if (rc == 0 && !c->curve_secret_key_file[0] != !c->authorized_keys_file[0]) {
    snprintf(err->msg, sizeof err->msg,
             "%s: [collector] curve_secret_key_file and authorized_keys_file go together", path);
    rc = -1;
  }
  if (rc == 0 && cfg_check_key_archives(c, why, sizeof why) != 0) {
    snprintf(err->msg, sizeof err->msg, "%s: [collector] %s", path, why);
    rc = -1;
  }
  struct erg_web_server_limits lim;
  erg_collector_http_limits(c, &lim);
  if (rc == 0 && erg_web_server_limits_check(&lim, why, sizeof why) != 0) {
    snprintf(err->msg, sizeof err->msg, "%s: [collector] %s", path, why);
    rc = -1;
  }
  if (rc == 0 && !c->www_dir[0]) {
    if (strlen(c->data_dir) + 4 >= sizeof c->www_dir) {
      snprintf(err->msg, sizeof err->msg, "%s: data_dir too long", path);
      rc = -1;
    } else {
      strcpy(c->www_dir, c->data_dir);
      strcat(c->www_dir, "/www");
    }
  }
  free(st.feed_specs);
  free(st.group_specs);
  free(st.source_lines);
  erg_name_index_free(&st.node_index);
  return rc;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* erg-pdusim --redfish: a SIMULATED BMC (sim_redfish.h). One epoll
 * thread (libmicrohttpd) serves every client; a --redfish-delay answer is
 * the connection suspended and resumed by a timer thread when its time
 * comes, so it holds only its own client, as a slow BMC does, and one
 * simulator serves thousands of BMCs' clients at once (tests/bench/
 * bmc_scale.sh: every ergd meter its own session and connection). Sessions: POST
 * /redfish/v1/SessionService/Sessions with the --redfish-user credentials
 * gives an X-Auth-Token and a Location to DELETE; basic auth works too;
 * the service root needs none. /erg-sim/stats (JSON) counts what clients
 * did, for the tests: requests, logins, logouts, 401s, 503s. A BMC-shaped
 * reading (sim_bmc.h) is made per request, with the value of when it came
 * in, and leaves after its own delay (the same suspension). */
#include "sim_redfish.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "erg_common.h"
#include "redfish_parse.h"
#include "sim_bmc.h"

#define SIM_RF_SESSIONS 16384 /* a token names its slot: id % this */
#define SIM_RF_BODY_MAX 4096

struct sim_rf_bind {
  struct erg_rf_plan plan;
  int node;
  struct sim_bmc *bmc; /* a BMC-shaped reading (,refresh=... of the channel); NULL live */
};

struct sim_redfish {
  struct sim *s;
  struct sim_redfish_opts o;
  char dir[1024];
  int nbind;
  struct sim_rf_bind bind[SIM_RF_MAX_CHANNELS];
  struct MHD_Daemon *d;
  pthread_mutex_t lock;              /* sessions, counters, the delay queue */
  pthread_cond_t cond;               /* the delay queue got one */
  struct sim_rf_conn *qhead, *qtail; /* suspended, in the order they are due */
  pthread_t timer;
  bool timer_started, stopping;
  pthread_t ticker; /* samples the BMC-shaped readings on their schedule */
  bool ticking;
  FILE *log; /* --redfish-log (under lock) */
  /* Documents read once (the handler's thread only): a copy per answer. */
  struct sim_rf_doc {
    char *uri;
    json_t *doc; /* NULL: none there */
    bool live;   /* holds a bound reading */
    char *body;  /* doc serialised (with live values at body_ns) */
    uint64_t body_ns;
  } * docs;
  int ndocs, capdocs;
  char tokens[SIM_RF_SESSIONS][40];
  unsigned long requests, gets_with_token, logins, logouts, n401, n503, next_session;
};

struct sim_rf_conn {
  char body[SIM_RF_BODY_MAX];
  size_t n;
  bool over;
  bool delayed;               /* waited already */
  double t_req;               /* realtime when the request came in */
  char *shaped;               /* a BMC-shaped answer, sent when its delay is over */
  double shown, shaped_delay; /* its value, its delay */
  double sample_s;            /* the time of the sample shown */
  struct MHD_Connection *c;
  uint64_t due_ns; /* monotonic: resume then */
  struct sim_rf_conn *next;
};

struct sim_redfish *sim_redfish_setup(struct sim *s, const struct sim_redfish_opts *o, char *why,
                                      size_t whylen) {
  struct sim_redfish *r = calloc(1, sizeof *r);
  if (!r) {
    snprintf(why, whylen, "out of memory");
    return NULL;
  }
  r->s = s;
  r->o = *o;
  pthread_mutex_init(&r->lock, NULL);
  pthread_cond_init(&r->cond, NULL);
  snprintf(r->dir, sizeof r->dir, "%s", o->dir);
  size_t n = strlen(r->dir);
  while (n > 1 && r->dir[n - 1] == '/')
    r->dir[--n] = '\0';
  char inner[1024];
  json_t *root = erg_rf_recording_get(r->dir, "/redfish/v1", inner, sizeof inner);
  if (!root) {
    snprintf(why, whylen, "--redfish %s: no service root (%s/redfish/v1/index.json)", o->dir,
             o->dir);
    sim_redfish_free(r);
    return NULL;
  }
  json_decref(root);
  if (o->log_path && !(r->log = fopen(o->log_path, "w"))) {
    snprintf(why, whylen, "--redfish-log %s: cannot write", o->log_path);
    sim_redfish_free(r);
    return NULL;
  }
  if (r->log)
    fprintf(r->log, "request_unix_seconds,uri,watts,delay_seconds,answer_unix_seconds,"
                    "sample_unix_seconds\n");
  struct erg_rf_discovery *d = calloc(1, sizeof *d);
  for (int i = 0; d && i < o->nchannels; i++) {
    char spec[ERG_RF_URI_MAX + 80], chassis[ERG_RF_URI_MAX];
    struct sim_bmc_shape sh;
    if (sim_bmc_parse(o->channels[i], spec, sizeof spec, &sh, inner, sizeof inner)) {
      snprintf(why, whylen, "--redfish-channel %s", inner);
      free(d);
      sim_redfish_free(r);
      return NULL;
    }
    const char *eq = strrchr(spec, '=');
    int node = -1;
    if (eq && (size_t)(eq - spec) < sizeof chassis) {
      snprintf(chassis, sizeof chassis, "%.*s", (int)(eq - spec), spec);
      node = sim_find(s, eq + 1);
    }
    if (node < 0) {
      snprintf(why, whylen, "--redfish-channel '%s': want CHASSIS=NODE (NODE a --node or --sum)",
               spec);
      free(d);
      sim_redfish_free(r);
      return NULL;
    }
    if (erg_rf_discover(erg_rf_recording_get, r->dir, chassis, false, d, inner, sizeof inner) &&
        !d->plan.npower && !d->plan.have_energy) {
      snprintf(why, whylen, "--redfish-channel '%s': erg reads nothing there: %s", spec, inner);
      free(d);
      sim_redfish_free(r);
      return NULL;
    }
    r->bind[r->nbind].plan = d->plan;
    r->bind[r->nbind].node = node;
    if (sh.refresh_seconds > 0) {
      if (!(r->bind[r->nbind].bmc = sim_bmc_new(s, node, chassis, &sh))) {
        snprintf(why, whylen, "out of memory");
        free(d);
        sim_redfish_free(r);
        return NULL;
      }
      printf("erg-pdusim: %s is BMC-shaped: sampled every %g s, %g W steps, %s, answers "
             "%g-%g s late\n",
             chassis, sh.refresh_seconds, sh.quantum_watts,
             sh.average_seconds > 0 ? "a trailing mean" : "the latest sample", sh.delay_min_seconds,
             sh.delay_max_seconds);
      if (sh.average_seconds > 0)
        printf("erg-pdusim: %s shows the mean of the last %g s\n", chassis, sh.average_seconds);
    }
    r->nbind++;
    for (int k = 0; k < d->plan.npower; k++)
      printf("erg-pdusim: live %s %s = power of %s%s\n", d->plan.power[k].uri,
             erg_rf_kind_name(d->plan.power[k].kind), s->nodes[node].name,
             d->plan.npower > 1 ? " / number of inputs" : "");
    if (d->plan.have_energy)
      printf("erg-pdusim: live %s %s = energy of %s\n", d->plan.energy.uri,
             erg_rf_kind_name(d->plan.energy.kind), s->nodes[node].name);
  }
  free(d);
  fflush(stdout);
  return r;
}

/* Sets the value of term t in doc to x (SI units). */
static void sim_rf_patch(json_t *doc, const struct erg_rf_term *t, double x) {
  json_t *v = json_real(x / (t->to_si > 0 ? t->to_si : 1));
  json_t *pcs, *pc;
  size_t i;
  switch (t->kind) {
    case ERG_RF_POWERCONTROL:
      pcs = json_object_get(doc, "PowerControl");
      json_array_foreach(pcs, i, pc) {
        const char *m = json_string_value(json_object_get(pc, "MemberId"));
        if (!t->member[0] || (m && !strcmp(m, t->member))) {
          json_object_set(pc, "PowerConsumedWatts", v);
          break;
        }
      }
      break;
    case ERG_RF_ENV_POWER:
    case ERG_RF_ENV_ENERGY_J:
    case ERG_RF_ENV_ENERGY_KWH: {
      const char *key = t->kind == ERG_RF_ENV_POWER      ? "PowerWatts"
                        : t->kind == ERG_RF_ENV_ENERGY_J ? "EnergyJoules"
                                                         : "EnergykWh";
      json_t *o = json_object_get(doc, key);
      if (!json_is_object(o)) {
        o = json_object();
        json_object_set_new(doc, key, o);
      }
      json_object_set(o, "Reading", v);
      break;
    }
    default:
      json_object_set(doc, "Reading", v);
  }
  json_decref(v);
}

/* The live values of every binding whose terms sit at uri, as of t_req
 * for a BMC-shaped one; its answer's delay in *delay_s (the largest).
 * delay_s NULL: the shaped ones are left as recorded (never served from
 * the shared cache). */
static void sim_rf_live(struct sim_redfish *r, const char *uri, json_t *doc, double t_req,
                        double *delay_s, double *shown, double *sample_s) {
  double now = erg_time_realtime_ns() / 1e9;
  for (int b = 0; b < r->nbind; b++) {
    const struct erg_rf_plan *p = &r->bind[b].plan;
    struct sim_node *n = &r->s->nodes[r->bind[b].node];
    struct sim_bmc *bmc = r->bind[b].bmc;
    pthread_mutex_lock(&r->s->lock);
    double watts = n->watts, joules = sim_energy_now(n, now);
    pthread_mutex_unlock(&r->s->lock);
    bool mine = false;
    for (int k = 0; k < p->npower; k++)
      mine |= !strcmp(p->power[k].uri, uri);
    if (mine && bmc && !delay_s)
      continue;
    if (mine && bmc) {
      double d = sim_bmc_delay(bmc);
      *delay_s = d > *delay_s ? d : *delay_s;
      double v;
      if (sim_bmc_value(bmc, t_req, &v, sample_s)) {
        watts = v;
        /* A Sensor's own ReadingTime: the sample's, on the BMC's clock
         * (clock=S off ours), in whole seconds as BMCs give it. */
        if (json_is_string(json_object_get(doc, "ReadingTime"))) {
          time_t ts = (time_t)floor(*sample_s + sim_bmc_clock_seconds(bmc));
          struct tm tm;
          char iso[40];
          gmtime_r(&ts, &tm);
          strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
          json_object_set_new(doc, "ReadingTime", json_string(iso));
        }
      }
      *shown = watts;
    }
    for (int k = 0; k < p->npower; k++)
      if (!strcmp(p->power[k].uri, uri))
        sim_rf_patch(doc, &p->power[k], watts / p->npower);
    if (p->have_energy && !strcmp(p->energy.uri, uri))
      sim_rf_patch(doc, &p->energy, joules);
  }
}

static enum MHD_Result sim_rf_answer(struct MHD_Connection *c, unsigned status, const char *body,
                                     const char *hname, const char *hvalue, const char *h2name,
                                     const char *h2value) {
  struct MHD_Response *resp =
      MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
  if (!resp)
    return MHD_NO;
  MHD_add_response_header(resp, "Content-Type", "application/json");
  MHD_add_response_header(resp, "OData-Version", "4.0");
  if (hname)
    MHD_add_response_header(resp, hname, hvalue);
  if (h2name)
    MHD_add_response_header(resp, h2name, h2value);
  enum MHD_Result rc = MHD_queue_response(c, status, resp);
  MHD_destroy_response(resp);
  return rc;
}

static enum MHD_Result sim_rf_error(struct MHD_Connection *c, unsigned status, const char *msg) {
  char body[300];
  snprintf(body, sizeof body, "{\"error\":{\"code\":\"Base.1.0.GeneralError\",\"message\":\"%s\"}}",
           msg);
  return sim_rf_answer(c, status, body, status == 401 ? "WWW-Authenticate" : NULL,
                       "Basic realm=\"erg-pdusim\"", status == 503 ? "Retry-After" : NULL, "1");
}

/* A session token or basic credentials that match; the service root and
 * the login itself need none. */
static bool sim_rf_authorised(struct sim_redfish *r, struct MHD_Connection *c, bool *token_used) {
  *token_used = false;
  if (!r->o.user[0])
    return true;
  const char *tok = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Auth-Token");
  if (tok) {
    *token_used = true;
    unsigned long id = 0;
    if (sscanf(tok, "erg-sim-%8lx", &id) != 1)
      return false;
    pthread_mutex_lock(&r->lock);
    const char *t = r->tokens[id % SIM_RF_SESSIONS];
    bool ok = t[0] && !strcmp(t, tok);
    pthread_mutex_unlock(&r->lock);
    return ok;
  }
  char *pass = NULL;
  char *user = MHD_basic_auth_get_username_password(c, &pass);
  bool ok = user && pass && !strcmp(user, r->o.user) && !strcmp(pass, r->o.pass);
  MHD_free(user);
  MHD_free(pass);
  return ok;
}

static enum MHD_Result sim_rf_login(struct sim_redfish *r, struct MHD_Connection *c,
                                    struct sim_rf_conn *k) {
  json_error_t e;
  json_t *j = k->over ? NULL : json_loadb(k->body, k->n, 0, &e);
  const char *u = json_string_value(json_object_get(j, "UserName"));
  const char *p = json_string_value(json_object_get(j, "Password"));
  bool ok = u && p && (!r->o.user[0] || (!strcmp(u, r->o.user) && !strcmp(p, r->o.pass)));
  json_decref(j);
  if (!ok) {
    pthread_mutex_lock(&r->lock);
    r->n401++;
    pthread_mutex_unlock(&r->lock);
    return sim_rf_error(c, 401, "bad credentials");
  }
  char tok[40], loc[96];
  pthread_mutex_lock(&r->lock);
  unsigned long id = ++r->next_session;
  snprintf(tok, sizeof tok, "erg-sim-%08lx%08x", id, (unsigned)rand());
  snprintf(r->tokens[id % SIM_RF_SESSIONS], sizeof r->tokens[0], "%s", tok);
  r->logins++;
  pthread_mutex_unlock(&r->lock);
  snprintf(loc, sizeof loc, "/redfish/v1/SessionService/Sessions/%lu", id);
  char body[200];
  snprintf(body, sizeof body, "{\"@odata.id\":\"%s\",\"Id\":\"%lu\",\"UserName\":\"%s\"}", loc, id,
           r->o.user[0] ? r->o.user : "any");
  return sim_rf_answer(c, 201, body, "X-Auth-Token", tok, "Location", loc);
}

static enum MHD_Result sim_rf_stats(struct sim_redfish *r, struct MHD_Connection *c) {
  char body[400];
  pthread_mutex_lock(&r->lock);
  snprintf(body, sizeof body,
           "{\"requests\":%lu,\"logins\":%lu,\"logouts\":%lu,\"unauthorized\":%lu,"
           "\"busy\":%lu}",
           r->requests, r->logins, r->logouts, r->n401, r->n503);
  pthread_mutex_unlock(&r->lock);
  return sim_rf_answer(c, 200, body, NULL, NULL, NULL, NULL);
}

/* The answer for uri, or NULL when the recording has none: read from DIR
 * once and kept serialised; one with live values is serialised again at
 * most every SIM_RF_LIVE_NS (the node's values move at --update anyway),
 * so thousands of clients cost the simulator little. */
#define SIM_RF_LIVE_NS 200000000ULL
static struct sim_rf_doc *sim_rf_doc_get(struct sim_redfish *r, const char *uri) {
  struct sim_rf_doc *d = NULL;
  for (int i = 0; i < r->ndocs && !d; i++)
    if (!strcmp(r->docs[i].uri, uri))
      d = &r->docs[i];
  if (!d) {
    char why[300];
    if (r->ndocs == r->capdocs) {
      int cap = r->capdocs ? 2 * r->capdocs : 64;
      struct sim_rf_doc *n = realloc(r->docs, (size_t)cap * sizeof *n);
      if (!n)
        return NULL;
      r->docs = n;
      r->capdocs = cap;
    }
    char *u = strdup(uri);
    if (!u)
      return NULL;
    d = &r->docs[r->ndocs++];
    *d = (struct sim_rf_doc){.uri = u, .doc = erg_rf_recording_get(r->dir, uri, why, sizeof why)};
    for (int b = 0; b < r->nbind; b++) {
      const struct erg_rf_plan *p = &r->bind[b].plan;
      for (int k = 0; k < p->npower; k++)
        d->live |= !strcmp(p->power[k].uri, uri);
      d->live |= p->have_energy && !strcmp(p->energy.uri, uri);
    }
  }
  return d;
}

static const char *sim_rf_body(struct sim_redfish *r, const char *uri) {
  struct sim_rf_doc *d = sim_rf_doc_get(r, uri);
  if (!d || !d->doc)
    return NULL;
  uint64_t now = erg_time_monotonic_ns();
  if (!d->body || (d->live && now - d->body_ns >= SIM_RF_LIVE_NS)) {
    json_t *doc = json_deep_copy(d->doc);
    if (!doc)
      return d->body;
    sim_rf_live(r, uri, doc, 0, NULL, NULL, NULL);
    char *body = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (body) {
      free(d->body);
      d->body = body;
      d->body_ns = now;
    }
  }
  return d->body;
}

/* Whether uri holds a BMC-shaped reading. */
static bool sim_rf_is_shaped(const struct sim_redfish *r, const char *uri) {
  for (int b = 0; b < r->nbind; b++)
    for (int k = 0; r->bind[b].bmc && k < r->bind[b].plan.npower; k++)
      if (!strcmp(r->bind[b].plan.power[k].uri, uri))
        return true;
  return false;
}

/* The answer for a BMC-shaped uri, made for this request alone (the value
 * of when it came in, k->t_req) into k->shaped; -1: none there. */
static int sim_rf_shape(struct sim_redfish *r, struct sim_rf_conn *k, const char *uri) {
  struct sim_rf_doc *d = sim_rf_doc_get(r, uri);
  json_t *doc = d && d->doc ? json_deep_copy(d->doc) : NULL;
  if (!doc)
    return -1;
  k->shaped_delay = 0;
  k->shown = NAN;
  k->sample_s = NAN;
  sim_rf_live(r, uri, doc, k->t_req, &k->shaped_delay, &k->shown, &k->sample_s);
  k->shaped = json_dumps(doc, JSON_COMPACT);
  json_decref(doc);
  return k->shaped ? 0 : -1;
}

/* Suspends k's connection until due_ns (monotonic); the timer thread
 * resumes it and the handler runs again. The queue stays in due order
 * (from the tail: with one --redfish-delay for all, always the tail). */
static void sim_rf_suspend(struct sim_redfish *r, struct sim_rf_conn *k, struct MHD_Connection *c,
                           uint64_t due_ns) {
  k->c = c;
  k->due_ns = due_ns;
  pthread_mutex_lock(&r->lock);
  MHD_suspend_connection(c);
  struct sim_rf_conn **at = &r->qhead;
  if (r->qtail && r->qtail->due_ns <= due_ns)
    at = &r->qtail->next;
  else
    while (*at && (*at)->due_ns <= due_ns)
      at = &(*at)->next;
  k->next = *at;
  *at = k;
  if (!k->next)
    r->qtail = k;
  pthread_cond_signal(&r->cond);
  pthread_mutex_unlock(&r->lock);
}

static enum MHD_Result sim_rf_handler(void *cls, struct MHD_Connection *c, const char *url,
                                      const char *method, const char *version, const char *upload,
                                      size_t *upload_size, void **ptr) {
  (void)version;
  struct sim_redfish *r = cls;
  struct sim_rf_conn *k = *ptr;
  if (!k) {
    if (!(k = calloc(1, sizeof *k)))
      return MHD_NO;
    *ptr = k;
    return MHD_YES;
  }
  if (*upload_size) {
    if (k->n + *upload_size < SIM_RF_BODY_MAX) {
      memcpy(k->body + k->n, upload, *upload_size);
      k->n += *upload_size;
    } else {
      k->over = true;
    }
    *upload_size = 0;
    return MHD_YES;
  }
  if (!strcmp(url, "/erg-sim/stats"))
    return sim_rf_stats(r, c);
  if (k->shaped) { /* a BMC-shaped answer whose delay is over */
    if (r->log && !isnan(k->shown)) {
      pthread_mutex_lock(&r->lock);
      fprintf(r->log, "%.3f,%s,%.1f,%.3f,%.3f,%.3f\n", k->t_req, url, k->shown, k->shaped_delay,
              erg_time_realtime_ns() / 1e9, k->sample_s);
      fflush(r->log);
      pthread_mutex_unlock(&r->lock);
    }
    return sim_rf_answer(c, 200, k->shaped, NULL, NULL, NULL, NULL);
  }
  if (!k->t_req)
    k->t_req = erg_time_realtime_ns() / 1e9;
  if (r->o.delay_seconds > 0 && !k->delayed) {
    /* Answered later: the timer thread resumes it, the handler runs again. */
    k->delayed = true;
    sim_rf_suspend(r, k, c, erg_time_monotonic_ns() + (uint64_t)(r->o.delay_seconds * 1e9));
    return MHD_YES;
  }
  pthread_mutex_lock(&r->lock);
  unsigned long nreq = ++r->requests;
  bool busy = r->o.every_503 > 0 && nreq % (unsigned long)r->o.every_503 == 0;
  r->n503 += busy;
  pthread_mutex_unlock(&r->lock);
  if (busy)
    return sim_rf_error(c, 503, "busy (simulated)");
  bool sessions = !strcmp(url, "/redfish/v1/SessionService/Sessions") ||
                  !strcmp(url, "/redfish/v1/SessionService/Sessions/");
  if (!strcmp(method, "POST"))
    return sessions ? sim_rf_login(r, c, k) : sim_rf_error(c, 405, "read-only simulator");
  if (!strcmp(method, "DELETE")) {
    unsigned long id = 0;
    if (sscanf(url, "/redfish/v1/SessionService/Sessions/%lu", &id) != 1)
      return sim_rf_error(c, 405, "read-only simulator");
    pthread_mutex_lock(&r->lock);
    r->tokens[id % SIM_RF_SESSIONS][0] = '\0';
    r->logouts++;
    pthread_mutex_unlock(&r->lock);
    return sim_rf_answer(c, 204, "", NULL, NULL, NULL, NULL);
  }
  if (strcmp(method, "GET"))
    return sim_rf_error(c, 405, "read-only simulator");
  char uri[ERG_RF_URI_MAX + 32];
  const char *skip = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "$skip");
  snprintf(uri, sizeof uri, "%s%s%s", url, skip ? "?$skip=" : "", skip ? skip : "");
  size_t n = strlen(uri);
  while (n > 1 && uri[n - 1] == '/')
    uri[--n] = '\0';
  bool root = !strcmp(uri, "/redfish/v1") || !strcmp(uri, "/redfish");
  bool token = false;
  if (!root && !sim_rf_authorised(r, c, &token)) {
    pthread_mutex_lock(&r->lock);
    r->n401++;
    pthread_mutex_unlock(&r->lock);
    return sim_rf_error(c, 401, "no valid session or credentials");
  }
  if (token && r->o.every_401 > 0) {
    /* The session expires: every Nth GET with a token, all tokens go. */
    pthread_mutex_lock(&r->lock);
    bool expire = ++r->gets_with_token % (unsigned long)r->o.every_401 == 0;
    if (expire) {
      memset(r->tokens, 0, sizeof r->tokens);
      r->n401++;
    }
    pthread_mutex_unlock(&r->lock);
    if (expire)
      return sim_rf_error(c, 401, "session expired (simulated)");
  }
  if (sim_rf_is_shaped(r, uri)) {
    /* A BMC-shaped answer leaves its delay after the request came in, with
     * the value of that moment. */
    if (sim_rf_shape(r, k, uri))
      return sim_rf_error(c, 404, "no such resource");
    double left = k->t_req + k->shaped_delay - erg_time_realtime_ns() / 1e9;
    if (left < 0)
      left = 0;
    sim_rf_suspend(r, k, c, erg_time_monotonic_ns() + (uint64_t)(left * 1e9));
    return MHD_YES;
  }
  const char *body = sim_rf_body(r, uri);
  if (!body)
    return sim_rf_error(c, 404, "no such resource");
  return sim_rf_answer(c, 200, body, NULL, NULL, NULL, NULL);
}

static void sim_rf_completed(void *cls, struct MHD_Connection *c, void **ptr,
                             enum MHD_RequestTerminationCode code) {
  (void)cls, (void)c, (void)code;
  struct sim_rf_conn *k = *ptr;
  if (k)
    free(k->shaped);
  free(*ptr);
  *ptr = NULL;
}

/* Resumes each suspended connection when its time comes. */
static void *sim_rf_timer(void *arg) {
  struct sim_redfish *r = arg;
  pthread_mutex_lock(&r->lock);
  while (!r->stopping) {
    struct sim_rf_conn *k = r->qhead;
    uint64_t now = erg_time_monotonic_ns();
    if (k && k->due_ns <= now) {
      r->qhead = k->next;
      if (!r->qhead)
        r->qtail = NULL;
      MHD_resume_connection(k->c);
      continue;
    }
    if (!k) {
      pthread_cond_wait(&r->cond, &r->lock);
      continue;
    }
    pthread_mutex_unlock(&r->lock);
    uint64_t d = k->due_ns - now;
    erg_time_sleep_ns(d < 2000000ULL ? d : 2000000ULL);
    pthread_mutex_lock(&r->lock);
  }
  /* Whatever waits is let go, for MHD_stop_daemon. */
  for (struct sim_rf_conn *k = r->qhead; k; k = k->next)
    MHD_resume_connection(k->c);
  r->qhead = r->qtail = NULL;
  pthread_mutex_unlock(&r->lock);
  return NULL;
}

static void *sim_rf_ticker(void *arg) {
  struct sim_redfish *r = arg;
  for (;;) {
    pthread_mutex_lock(&r->lock);
    bool stop = r->stopping;
    pthread_mutex_unlock(&r->lock);
    if (stop)
      break;
    double now = erg_time_realtime_ns() / 1e9;
    for (int b = 0; b < r->nbind; b++)
      if (r->bind[b].bmc)
        sim_bmc_tick(r->bind[b].bmc, now);
    erg_time_sleep_ns(20000000ULL);
  }
  return NULL;
}

int sim_redfish_start(struct sim_redfish *r, char *why, size_t whylen) {
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)r->o.port)};
  if (inet_pton(AF_INET, strcmp(r->o.host, "localhost") ? r->o.host : "127.0.0.1", &sa.sin_addr) !=
      1) {
    snprintf(why, whylen, "--redfish-http: '%s' is not an IPv4 address", r->o.host);
    return -1;
  }
  r->d = MHD_start_daemon(
      MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
      (uint16_t)r->o.port, NULL, NULL, sim_rf_handler, r, MHD_OPTION_SOCK_ADDR, &sa,
      MHD_OPTION_NOTIFY_COMPLETED, sim_rf_completed, r, MHD_OPTION_CONNECTION_TIMEOUT, 60u,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)60000, MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)8192,
      MHD_OPTION_END);
  if (!r->d) {
    snprintf(why, whylen, "cannot listen on %s:%d (port in use?)", r->o.host, r->o.port);
    return -1;
  }
  if (pthread_create(&r->timer, NULL, sim_rf_timer, r)) {
    snprintf(why, whylen, "cannot start the delay timer thread");
    return -1;
  }
  r->timer_started = true;
  bool shaped = false;
  for (int b = 0; b < r->nbind; b++)
    shaped |= r->bind[b].bmc != NULL;
  r->ticking = shaped && pthread_create(&r->ticker, NULL, sim_rf_ticker, r) == 0;
  return 0;
}

void sim_redfish_free(struct sim_redfish *r) {
  if (!r)
    return;
  if (r->timer_started) {
    pthread_mutex_lock(&r->lock);
    r->stopping = true;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->timer, NULL);
  }
  if (r->ticking) {
    pthread_mutex_lock(&r->lock);
    r->stopping = true;
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->ticker, NULL);
  }
  if (r->d)
    MHD_stop_daemon(r->d);
  for (int i = 0; i < r->ndocs; i++) {
    free(r->docs[i].uri);
    free(r->docs[i].body);
    json_decref(r->docs[i].doc);
  }
  free(r->docs);
  pthread_cond_destroy(&r->cond);
  for (int b = 0; b < r->nbind; b++)
    sim_bmc_free(r->bind[b].bmc);
  if (r->log)
    fclose(r->log);
  pthread_mutex_destroy(&r->lock);
  free(r);
}

/* ergd's main loop: one thread owns all state. It polls the agents' PULL
 * socket and the meters' inproc socket, finalises grid cells once a second,
 * writes them to the store and regenerates pages now and then. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "collector_int.h"
#include "erg_store.h"
#include "erg_web.h"

#define MAX_KNOWN_KEYS 256

struct known_key {
  char key[64];
  int64_t last_t;
};

struct node_state {
  char name[128];
  double idle_watts;
  struct erg_grid grid;
  uint64_t samples, dropped_samples, last_seen_ns;
  uint64_t overlap_samples;   /* refused: time already covered by this node */
  uint64_t covered_until_ns;  /* end of the last accepted sample */
  char boot_id[40];
  double last_measured_watts, last_idle_watts;
  double lag_seconds, lag_correlation;  /* for /metrics; NAN until estimated */
  struct erg_lag lag;
  struct known_key known[MAX_KNOWN_KEYS];
  size_t nknown;
  int has_data;
  struct node_model *model;   /* never NULL after collector_node */
  unsigned journal_columns;   /* optional journal columns: sticky once seen */
};

struct source_state {
  struct erg_pdu_counter counters[ERG_PDU_MAX_CHANNELS];
  uint64_t polls, errors;
  int failing;
};

struct collector {
  const struct erg_collector_config *cfg;
  struct node_state **nodes;
  size_t nnodes;
  struct source_state *sources;
  struct erg_store *store;
  struct auth *auth;      /* NULL: plain TCP, no CURVE */
  char journal_dir[600];
  uint64_t msgs_ok, msgs_rejected, nodes_refused, store_errors;
  int64_t last_render;
  int render_due;
  pthread_mutex_t metrics_lock;
  char *metrics;          /* last rendered /metrics body */
  size_t metrics_len;
};

static struct node_state *collector_node(struct collector *c, const char *name, int create) {
  for (size_t i = 0; i < c->nnodes; i++)
    if (!strcmp(c->nodes[i]->name, name))
      return c->nodes[i];
  if (!create || c->nnodes >= ERG_MAX_NODES || strlen(name) >= sizeof c->nodes[0]->name)
    return NULL;
  struct node_state **arr = realloc(c->nodes, (c->nnodes + 1) * sizeof *arr);
  struct node_state *n = calloc(1, sizeof *n);
  if (arr)
    c->nodes = arr;
  if (!arr || !n) {
    free(n);
    return NULL;
  }
  erg_strlcpy(n->name, name, sizeof n->name);
  n->idle_watts = c->cfg->idle_watts;
  for (int i = 0; i < c->cfg->nnodes; i++)
    if (!strcmp(c->cfg->nodes[i].name, name) && !isnan(c->cfg->nodes[i].idle_watts))
      n->idle_watts = c->cfg->nodes[i].idle_watts;
  n->last_measured_watts = NAN;
  n->lag_seconds = n->lag_correlation = NAN;
  erg_lag_init(&n->lag);
  erg_grid_init(&n->grid, c->cfg->step_seconds);
  /* After a restart, resume after the last stored cell: RRD would refuse
   * older updates, and buffered agent data for them is counted as late. */
  int64_t last = erg_store_node_last(c->store, name);
  if (last > 0)
    n->grid.next_final = last - last % (int64_t)c->cfg->step_seconds;
  n->journal_columns = erg_journal_columns(c->journal_dir, name);
  n->model = node_model_open(c->cfg, name, c->journal_dir);
  if (!n->model) {
    erg_grid_free(&n->grid);
    free(n);
    return NULL;
  }
  c->nodes[c->nnodes++] = n;
  return n;
}

/* ---- agent samples ---- */

static void collector_ingest_sample(struct collector *c, const Erg__Sample *s) {
  struct node_state *n = collector_node(c, s->node, 1);
  if (!n) {
    if (c->nodes_refused++ == 0)
      erg_warn("node limit reached or bad node name; refusing node '%.64s'", s->node);
    return;
  }
  const Erg__Interval *iv = s->interval;
  /* A sample for time this node already reported is a duplicate or a
   * second agent claiming the same node: counting it would double the
   * node's CPU time. A new boot starts afresh. */
  if (strcmp(n->boot_id, s->boot_id ? s->boot_id : "") != 0) {
    erg_strlcpy(n->boot_id, s->boot_id ? s->boot_id : "", sizeof n->boot_id);
    n->covered_until_ns = 0;
  }
  if (iv->realtime_start_ns + 50000000ULL < n->covered_until_ns) {
    if (n->overlap_samples++ == 0)
      erg_warn("node %s: sample %llu overlaps time already reported (duplicate agent?); "
               "dropped, further ones only counted", n->name, (unsigned long long)s->seq);
    return;
  }
  n->covered_until_ns = iv->realtime_end_ns;
  size_t np = s->n_procs;
  struct erg_grid_proc *procs = malloc((np ? np : 1) * sizeof *procs);
  if (!procs)
    return;
  for (size_t i = 0; i < np; i++) {
    const Erg__Proc *p = s->procs[i];
    procs[i] = (struct erg_grid_proc){.key = p->comm ? p->comm : "",
                                      .cpu_seconds = (double)p->cpu_ns / 1e9,
                                      .disk_bytes = (double)p->read_bytes + (double)p->write_bytes,
                                      .instructions = (double)p->instructions,
                                      .cycles = (double)p->cycles};
  }
  double busy = s->totals ? (double)s->totals->cpu_busy_ns / 1e9 : 0;
  if (c->cfg->lag_max_seconds)
    erg_lag_add_cpu(&n->lag, iv->realtime_start_ns, iv->realtime_end_ns, busy);
  erg_grid_add_procs(&n->grid, iv->realtime_start_ns, iv->realtime_end_ns, busy,
                     (double)s->system_cpu_ns / 1e9, procs, np);
  free(procs);
  n->samples++;
  n->dropped_samples += s->dropped_samples;
  n->last_seen_ns = erg_time_realtime_ns();
}

static void collector_ingest(struct collector *c, const uint8_t *buf, size_t len) {
  const char *why;
  Erg__Envelope *env = erg_wire_unpack(buf, len, &why);
  if (!env) {
    /* Logged once per kind of problem would need a table; once overall
     * plus the counter in /metrics keeps a flood out of the log. */
    if (c->msgs_rejected++ == 0)
      erg_warn("rejected agent message: %s (further rejections only counted)", why);
    return;
  }
  c->msgs_ok++;
  if (env->body_case == ERG__ENVELOPE__BODY_SAMPLE)
    collector_ingest_sample(c, env->sample);
  else if (env->body_case == ERG__ENVELOPE__BODY_HELLO && collector_node(c, env->hello->node, 1))
    erg_info("agent hello: node %s, version %s, collection %s", env->hello->node,
             env->hello->agent_version, env->hello->collection);
  erg_wire_free(env);
}

/* ---- meters ---- */

static void collector_feed_energy(struct collector *c, int source, int channel, uint64_t t0,
                                  uint64_t t1, double joules) {
  for (int i = 0; i < c->cfg->nnodes; i++) {
    const struct erg_node_config *nc = &c->cfg->nodes[i];
    for (int f = 0; f < nc->nfeeds; f++) {
      if (nc->feeds[f].source != source || nc->feeds[f].channel != channel)
        continue;
      struct node_state *n = collector_node(c, nc->name, 1);
      if (!n)
        continue;
      double j = joules * nc->feeds[f].factor;
      /* The estimator sees readings as they came; the grid sees them moved
       * back by the node's lag, to the time the power was drawn. */
      uint64_t shift = n->lag.have_estimate ? (uint64_t)n->lag.lag_seconds * ERG_NS_PER_S : 0;
      if (c->cfg->lag_max_seconds)
        erg_lag_add_energy(&n->lag, t0, t1, j);
      erg_grid_add_energy(&n->grid, t0 - shift, t1 - shift, j);
    }
  }
}

static void collector_meter(struct collector *c, const struct meter_msg *m) {
  if (m->source < 0 || m->source >= c->cfg->nsources)
    return;
  struct source_state *ss = &c->sources[m->source];
  const char *name = c->cfg->sources[m->source].name;
  ss->polls++;
  if (m->error[0]) {
    ss->errors++;
    if (!ss->failing)
      erg_warn("source %s: %s (logged once until it recovers)", name, m->error);
    ss->failing = 1;
  } else if (ss->failing) {
    erg_info("source %s: polling again", name);
    ss->failing = 0;
  }
  uint64_t max_gap = (uint64_t)(c->cfg->poll_seconds * 5e9) + 2 * ERG_NS_PER_S;
  for (int ch = 0; ch < m->nchannels && ch < ERG_PDU_MAX_CHANNELS; ch++) {
    ss->counters[ch].wrap_joules = m->wrap_joules[ch];
    uint64_t t0, t1;
    double j;
    enum erg_pdu_delta_kind k =
        erg_pdu_counter_update(&ss->counters[ch], &m->readings[ch], max_gap, &t0, &t1, &j);
    if (k == ERG_PDU_DELTA_RESET)
      erg_warn("source %s outlet %d: energy counter went back (reset?); interval skipped", name,
               c->cfg->sources[m->source].channels[ch]);
    if (k == ERG_PDU_DELTA_ENERGY || k == ERG_PDU_DELTA_POWER)
      collector_feed_energy(c, m->source, ch, t0, t1, j);
  }
}

/* ---- finalised cells -> store ---- */

static int share_cmp_desc(const void *a, const void *b) {
  double x = ((const struct erg_attr_share *)a)->watts, y = ((const struct erg_attr_share *)b)->watts;
  return x < y ? 1 : x > y ? -1 : 0;
}

static void node_key_write(struct collector *c, struct node_state *n, const char *key,
                           int64_t t_end, double watts) {
  char why[256];
  if (erg_store_key_update(c->store, n->name, "command", key, t_end, watts, why, sizeof why)) {
    if (c->store_errors++ == 0)
      erg_warn("store: %s (further store errors only counted)", why);
  }
}

/* Keys seen before but absent now get an explicit 0 W, so stacked graphs
 * and reports see "idle", not "unknown". The set is bounded: the key idle
 * longest makes room. */
static void node_key_remember(struct node_state *n, const char *key, int64_t t) {
  size_t oldest = 0;
  for (size_t i = 0; i < n->nknown; i++) {
    if (!strcmp(n->known[i].key, key)) {
      n->known[i].last_t = t;
      return;
    }
    if (n->known[i].last_t < n->known[oldest].last_t)
      oldest = i;
  }
  size_t slot = n->nknown < MAX_KNOWN_KEYS ? n->nknown++ : oldest;
  erg_strlcpy(n->known[slot].key, key, sizeof n->known[slot].key);
  n->known[slot].last_t = t;
}

static void node_write_keys(struct collector *c, struct node_state *n, int64_t t_end,
                            struct erg_attr_share *sh, size_t nsh) {
  /* [system] is last; rank the processes, keep the top N, fold the rest. */
  size_t nproc = nsh - 1;
  qsort(sh, nproc, sizeof *sh, share_cmp_desc);
  size_t top = nproc < c->cfg->top_processes ? nproc : c->cfg->top_processes;
  double other = 0;
  for (size_t i = top; i < nproc; i++)
    other += sh[i].watts;
  for (size_t i = 0; i < top; i++)
    node_key_remember(n, sh[i].key, t_end);
  node_key_remember(n, "[system]", t_end);
  if (nproc > top)
    node_key_remember(n, "[other]", t_end);
  for (size_t k = 0; k < n->nknown; k++) {
    const char *key = n->known[k].key;
    double w = 0;
    if (!strcmp(key, "[system]"))
      w = sh[nproc].watts;
    else if (!strcmp(key, "[other]"))
      w = other;
    else
      for (size_t i = 0; i < top; i++)
        if (!strcmp(sh[i].key, key))
          w += sh[i].watts;
    node_key_write(c, n, key, t_end, w);
  }
}

struct cell_ctx {
  struct collector *c;
  struct node_state *n;
};

/* The cell's journal row: node feature rates, columns as seen so far. */
static void node_journal(struct collector *c, struct node_state *n, const struct erg_grid_result *r,
                         bool estimated) {
  double x[ERG_NFEATURES];
  erg_grid_node_rates(r->cell, r->step, x);
  /* Disk bytes always (the agent always reads them); counters only once
   * seen, so a node without perf counters has no all-zero columns. */
  n->journal_columns |= (1u << ERG_FEAT_DISK) | (r->cell->seen & ~(1u << ERG_FEAT_CPU));
  struct erg_journal_row jr = {.t0 = r->t0, .step_seconds = r->step,
                               .measured_watts = r->measured_watts,
                               .flags = r->flags | (estimated ? ERG_CELL_ESTIMATED : 0),
                               .cpu_seconds_per_second = x[ERG_FEAT_CPU],
                               .disk_bytes_per_second = x[ERG_FEAT_DISK],
                               .instructions_per_second = x[ERG_FEAT_INSTRUCTIONS],
                               .cycles_per_second = x[ERG_FEAT_CYCLES],
                               .columns = n->journal_columns};
  char why[256];
  if (erg_journal_append(c->journal_dir, n->name, &jr, c->cfg->journal_max_bytes, why,
                         sizeof why) && c->store_errors++ == 0)
    erg_warn("%s (further store errors only counted)", why);
}

static void collector_cell(void *user, const struct erg_grid_result *r) {
  struct cell_ctx *ctx = user;
  struct collector *c = ctx->c;
  struct node_state *n = ctx->n;
  int64_t t_end = r->t0 + r->step;
  struct erg_store_node_cell cell = {.t_end = t_end, .measured_watts = r->measured_watts,
                                     .modelled_watts = NAN, .idle_watts = NAN,
                                     .dynamic_watts = NAN, .unattributed_watts = NAN};
  n->last_measured_watts = r->measured_watts;
  struct erg_attr_share *sh = malloc((r->cell->nkeys + 1) * sizeof *sh);
  if (!sh)
    return;
  struct erg_cell_model cm = node_model_cell(n->model);
  struct erg_cell_power pw;
  int rc = erg_cell_attribute(&cm, n->idle_watts, r, sh, &pw);
  cell.modelled_watts = pw.modelled_watts;
  if (rc == 0) {
    cell.estimated = pw.estimated;
    cell.idle_watts = pw.idle_watts;
    cell.dynamic_watts = pw.dynamic_watts;
    cell.unattributed_watts = (r->flags & ERG_CELL_NO_AGENT) ? pw.dynamic_watts : 0;
    n->last_idle_watts = pw.idle_watts;
  }
  node_journal(c, n, r, rc == 0 && pw.estimated);
  char why[256];
  if (erg_store_node_update(c->store, n->name, &cell, why, sizeof why) && c->store_errors++ == 0)
    erg_warn("store: %s (further store errors only counted)", why);
  if (rc == 0 && !(r->flags & ERG_CELL_NO_AGENT)) {
    node_write_keys(c, n, t_end, sh, r->cell->nkeys + 1);
    n->has_data = 1;
    c->render_due |= c->last_render == 0;
  }
  free(sh);
}

static void collector_estimate_lag(struct collector *c, struct node_state *n) {
  int before = n->lag.have_estimate ? n->lag.lag_seconds : -1;
  if (!erg_lag_estimate(&n->lag, (int)c->cfg->lag_max_seconds, (int)c->cfg->lag_window_seconds))
    return;
  n->lag_seconds = n->lag.lag_seconds;
  n->lag_correlation = n->lag.correlation;
  if (n->lag.lag_seconds != before)
    erg_info("node %s: meter reading lags activity by %d s (r=%.2f); compensating", n->name,
             n->lag.lag_seconds, n->lag.correlation);
}

static void collector_finalize(struct collector *c, int64_t now) {
  for (size_t i = 0; i < c->nnodes; i++) {
    struct cell_ctx ctx = {c, c->nodes[i]};
    node_model_tick(c->nodes[i]->model, now);
    if (c->cfg->lag_max_seconds && now % 10 == 0)
      collector_estimate_lag(c, c->nodes[i]);
    /* Shifted meter data for a cell arrives lag seconds later. */
    unsigned settle = c->cfg->settle_steps * c->cfg->step_seconds +
                      (c->nodes[i]->lag.have_estimate ? (unsigned)c->nodes[i]->lag.lag_seconds : 0);
    erg_grid_finalize(&c->nodes[i]->grid, now, settle, collector_cell, &ctx);
  }
}

static void collector_render(struct collector *c, int64_t now) {
  const char **names = malloc((c->nnodes ? c->nnodes : 1) * sizeof *names);
  if (!names)
    return;
  size_t k = 0;
  for (size_t i = 0; i < c->nnodes; i++)
    if (c->nodes[i]->has_data)
      names[k++] = c->nodes[i]->name;
  char why[256];
  if (erg_web_render(c->store, c->cfg->www_dir, names, k, now, why, sizeof why) != 0)
    erg_warn("pages: %s", why);
  free(names);
  c->last_render = now;
  c->render_due = 0;
}

/* ---- /metrics ---- */

/* Prometheus label values escape backslash, quote and newline. */
static void metrics_label(FILE *f, const char *v) {
  for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
    if (*p == '\\' || *p == '"')
      fprintf(f, "\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", f);
    else if (*p >= 0x20 && *p != 0x7f)
      fputc(*p, f);
  }
}

static void metrics_node_gauge(FILE *f, struct collector *c, const char *name, const char *help,
                               size_t off) {
  fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
  for (size_t i = 0; i < c->nnodes; i++) {
    double v = *(const double *)((const char *)c->nodes[i] + off);
    if (isnan(v))
      continue;
    fprintf(f, "%s{node=\"", name);
    metrics_label(f, c->nodes[i]->name);
    fprintf(f, "\"} %.6g\n", v);
  }
}

static void collector_metrics_render(struct collector *c) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return;
  fprintf(f, "# HELP erg_agent_messages_total Agent messages received, by result.\n"
             "# TYPE erg_agent_messages_total counter\n"
             "erg_agent_messages_total{result=\"ok\"} %llu\n"
             "erg_agent_messages_total{result=\"rejected\"} %llu\n",
          (unsigned long long)c->msgs_ok, (unsigned long long)c->msgs_rejected);
  if (c->auth)
    fprintf(f, "# HELP erg_agent_auth_total CURVE handshakes judged by the ZAP handler.\n"
               "# TYPE erg_agent_auth_total counter\n"
               "erg_agent_auth_total{result=\"accepted\"} %llu\n"
               "erg_agent_auth_total{result=\"refused\"} %llu\n",
            (unsigned long long)auth_accepted_total(c->auth),
            (unsigned long long)auth_refused_total(c->auth));
  fprintf(f, "# HELP erg_store_errors_total Failed archive updates.\n"
             "# TYPE erg_store_errors_total counter\nerg_store_errors_total %llu\n",
          (unsigned long long)c->store_errors);
  metrics_node_gauge(f, c, "erg_node_measured_watts", "Measured mean power of the last cell.",
                     offsetof(struct node_state, last_measured_watts));
  metrics_node_gauge(f, c, "erg_node_idle_watts", "Idle power of the last cell.",
                     offsetof(struct node_state, last_idle_watts));
  metrics_node_gauge(f, c, "erg_node_lag_seconds",
                     "Estimated delay between node activity and its meter reading.",
                     offsetof(struct node_state, lag_seconds));
  metrics_node_gauge(f, c, "erg_node_lag_correlation",
                     "Correlation of CPU time and power at the estimated lag.",
                     offsetof(struct node_state, lag_correlation));
  fprintf(f, "# HELP erg_agent_last_seen_timestamp_seconds Last sample from the node's agent.\n"
             "# TYPE erg_agent_last_seen_timestamp_seconds gauge\n");
  for (size_t i = 0; i < c->nnodes; i++) {
    if (!c->nodes[i]->last_seen_ns)
      continue;
    fputs("erg_agent_last_seen_timestamp_seconds{node=\"", f);
    metrics_label(f, c->nodes[i]->name);
    fprintf(f, "\"} %.3f\n", c->nodes[i]->last_seen_ns / 1e9);
  }
  fprintf(f, "# HELP erg_agent_dropped_samples_total Samples agents reported as dropped.\n"
             "# TYPE erg_agent_dropped_samples_total counter\n");
  for (size_t i = 0; i < c->nnodes; i++) {
    fputs("erg_agent_dropped_samples_total{node=\"", f);
    metrics_label(f, c->nodes[i]->name);
    fprintf(f, "\"} %llu\n", (unsigned long long)c->nodes[i]->dropped_samples);
  }
  fprintf(f, "# HELP erg_agent_overlapping_samples_total Samples refused because their node "
             "had already reported that time.\n"
             "# TYPE erg_agent_overlapping_samples_total counter\n");
  for (size_t i = 0; i < c->nnodes; i++) {
    fputs("erg_agent_overlapping_samples_total{node=\"", f);
    metrics_label(f, c->nodes[i]->name);
    fprintf(f, "\"} %llu\n", (unsigned long long)c->nodes[i]->overlap_samples);
  }
  fprintf(f, "# HELP erg_grid_dropped_seconds_total Input seconds that arrived after their cell "
             "was final (late) or too far ahead (future).\n"
             "# TYPE erg_grid_dropped_seconds_total counter\n");
  for (size_t i = 0; i < c->nnodes; i++) {
    const struct erg_grid *g = &c->nodes[i]->grid;
    fputs("erg_grid_dropped_seconds_total{node=\"", f);
    metrics_label(f, c->nodes[i]->name);
    fprintf(f, "\",reason=\"late\"} %llu\n", (unsigned long long)g->late_seconds_dropped);
    fputs("erg_grid_dropped_seconds_total{node=\"", f);
    metrics_label(f, c->nodes[i]->name);
    fprintf(f, "\",reason=\"future\"} %llu\n", (unsigned long long)g->future_seconds_dropped);
  }
  fprintf(f, "# HELP erg_source_poll_errors_total Failed meter/PDU polls.\n"
             "# TYPE erg_source_poll_errors_total counter\n");
  for (int i = 0; i < c->cfg->nsources; i++) {
    fputs("erg_source_poll_errors_total{source=\"", f);
    metrics_label(f, c->cfg->sources[i].name);
    fprintf(f, "\"} %llu\n", (unsigned long long)c->sources[i].errors);
  }
  fclose(f);
  pthread_mutex_lock(&c->metrics_lock);
  free(c->metrics);
  c->metrics = buf;
  c->metrics_len = len;
  pthread_mutex_unlock(&c->metrics_lock);
}

/* Runs on libmicrohttpd's thread: only copies the last rendered body. */
static int collector_http_dynamic(void *user, const char *url, char **body, size_t *len,
                                  const char **ctype) {
  struct collector *c = user;
  if (strcmp(url, "/metrics") != 0)
    return 404;
  pthread_mutex_lock(&c->metrics_lock);
  *len = c->metrics_len;
  *body = malloc(*len + 1);
  if (*body && c->metrics)
    memcpy(*body, c->metrics, *len + 1);
  pthread_mutex_unlock(&c->metrics_lock);
  *ctype = "text/plain; version=0.0.4; charset=utf-8";
  return *body ? 200 : 500;
}

/* ---- the loop ---- */

/* CURVE server side: the ZAP handler socket must be bound before the agent
 * socket accepts anyone, or the first handshakes would go unchecked. */
static int collector_curve(void *zctx, const struct erg_collector_config *cfg, void *agents,
                           void **zap, struct auth **auth) {
  char secret[ERG_KEY_Z85_LEN + 1], why[300];
  *auth = auth_open(cfg->authorized_keys_file, why, sizeof why);
  if (!*auth || erg_key_read_file(cfg->curve_secret_key_file, secret, why, sizeof why) != 0) {
    erg_err("CURVE: %s", why);
    return -1;
  }
  *zap = zmq_socket(zctx, ZMQ_REP);
  int one = 1;
  if (zmq_bind(*zap, "inproc://zeromq.zap.01") != 0 ||
      zmq_setsockopt(agents, ZMQ_CURVE_SERVER, &one, sizeof one) != 0 ||
      zmq_setsockopt(agents, ZMQ_CURVE_SECRETKEY, secret, ERG_KEY_Z85_LEN) != 0 ||
      zmq_setsockopt(agents, ZMQ_ZAP_DOMAIN, "erg", 3) != 0) {
    erg_err("CURVE setup: %s", zmq_strerror(errno));
    return -1;
  }
  return 0;
}

static int collector_open_sockets(void *zctx, struct collector *c, void **agents, void **meters,
                                  void **zap) {
  const struct erg_collector_config *cfg = c->cfg;
  *agents = zmq_socket(zctx, ZMQ_PULL);
  *meters = zmq_socket(zctx, ZMQ_PULL);
  int hwm = 100000;
  zmq_setsockopt(*agents, ZMQ_RCVHWM, &hwm, sizeof hwm);
  if (cfg->curve_secret_key_file[0] && collector_curve(zctx, cfg, *agents, zap, &c->auth) != 0)
    return -1;
  if (zmq_bind(*agents, cfg->listen) != 0) {
    erg_err("cannot listen on %s: %s", cfg->listen, zmq_strerror(errno));
    return -1;
  }
  if (zmq_bind(*meters, METER_ENDPOINT) != 0) {
    erg_err("inproc bind: %s", zmq_strerror(errno));
    return -1;
  }
  return 0;
}

static void collector_loop(struct collector *c, void *agents, void *meters, void *zap,
                           volatile int *stop) {
  zmq_pollitem_t items[3] = {{agents, 0, ZMQ_POLLIN, 0}, {meters, 0, ZMQ_POLLIN, 0},
                             {zap, 0, ZMQ_POLLIN, 0}};
  int64_t last_tick = 0;
  /* After a (re)start agents first deliver what they buffered while ergd
   * was away; finalising the overdue cells before that arrives would store
   * them without agent data. Give them one settle period plus a step. */
  int64_t resume_at = (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S) +
                      (int64_t)((c->cfg->settle_steps + 1) * c->cfg->step_seconds);
  while (!*stop) {
    if (zmq_poll(items, zap ? 3 : 2, 200) < 0 && errno != EINTR)
      break;
    if (zap && (items[2].revents & ZMQ_POLLIN))
      auth_handle(c->auth, zap);
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    /* Drain in bounded batches so a flood of samples cannot starve meters. */
    for (int i = 0; i < 1000 && zmq_msg_recv(&msg, agents, ZMQ_DONTWAIT) >= 0; i++)
      collector_ingest(c, zmq_msg_data(&msg), zmq_msg_size(&msg));
    while (zmq_msg_recv(&msg, meters, ZMQ_DONTWAIT) == (int)sizeof(struct meter_msg))
      collector_meter(c, zmq_msg_data(&msg));
    zmq_msg_close(&msg);
    int64_t now = (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S);
    if (now == last_tick)
      continue;
    last_tick = now;
    if (now >= resume_at)
      collector_finalize(c, now);
    collector_metrics_render(c);
    if (c->render_due || (c->last_render && now - c->last_render >= c->cfg->page_interval_seconds))
      collector_render(c, now);
  }
}

int erg_collector_run(const struct erg_collector_config *cfg, volatile int *stop) {
  struct collector c = {.cfg = cfg};
  char why[256];
  pthread_mutex_init(&c.metrics_lock, NULL);
  c.sources = calloc((size_t)cfg->nsources + 1, sizeof *c.sources);
  struct erg_store_options so = {.root = cfg->data_dir, .step_seconds = cfg->step_seconds};
  if (!c.sources || erg_store_open(&c.store, &so, why, sizeof why) != 0) {
    erg_err("store %s: %s", cfg->data_dir, c.sources ? why : "out of memory");
    free(c.sources);
    return 1;
  }
  erg_mkdir_p(cfg->www_dir, 0755);
  snprintf(c.journal_dir, sizeof c.journal_dir, "%s/journal", cfg->data_dir);
  erg_mkdir_p(c.journal_dir, 0755);
  for (int i = 0; i < cfg->nnodes; i++)
    collector_node(&c, cfg->nodes[i].name, 1);
  collector_metrics_render(&c);
  void *zctx = zmq_ctx_new(), *agents = NULL, *meters = NULL, *zap = NULL;
  struct erg_web_server *web = NULL;
  int rc = collector_open_sockets(zctx, &c, &agents, &meters, &zap);
  if (rc == 0 && cfg->http[0] &&
      erg_web_server_start(&web, cfg->http, cfg->www_dir, collector_http_dynamic, &c, why,
                           sizeof why) != 0) {
    erg_err("http %s: %s", cfg->http, why);
    rc = -1;
  }
  struct meter_thread *mt = NULL;
  if (rc == 0) {
    mt = meters_start(zctx, cfg, stop);
    erg_info("listening for agents on %s, pages on http://%s/, %d sources, %d nodes, step %us",
             cfg->listen, cfg->http, cfg->nsources, cfg->nnodes, cfg->step_seconds);
    collector_loop(&c, agents, meters, zap, stop);
  }
  *stop = 1;
  meters_join(mt, cfg->nsources);
  erg_web_server_stop(web);
  if (agents)
    zmq_close(agents);
  if (meters)
    zmq_close(meters);
  if (zap)
    zmq_close(zap);
  auth_close(c.auth);
  zmq_ctx_term(zctx);
  for (size_t i = 0; i < c.nnodes; i++) {
    erg_grid_free(&c.nodes[i]->grid);
    node_model_close(c.nodes[i]->model);
    free(c.nodes[i]);
  }
  free(c.nodes);
  free(c.sources);
  free(c.metrics);
  erg_store_close(c.store);
  return rc == 0 ? 0 : 1;
}

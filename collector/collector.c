// SPDX-License-Identifier: GPL-3.0-or-later
/* ergd's main loop: one thread owns all state. It polls the agents' PULL
 * socket and the meters' inproc socket (ingest.c), finalises grid cells
 * once a second (cells.c), writes them to the store and regenerates pages
 * now and then. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <zmq.h>

#include "erg_store.h"
#include "erg_web.h"
#include "state.h"

static void collector_render(struct collector *c, int64_t now) {
  c->render_due &= c->renderer != NULL;
  if (!c->renderer)
    return;
  const char **names = malloc((c->nnodes ? c->nnodes : 1) * sizeof *names);
  if (!names)
    return;
  size_t k = 0;
  for (size_t i = 0; i < c->nnodes; i++)
    if (c->nodes[i]->has_data)
      names[k++] = c->nodes[i]->name;
  int rc = renderer_submit(c->renderer, names, k, now);
  free(names);
  if (rc == 1)
    return; /* the previous render is still running: next tick */
  c->last_render = now;
  c->render_due = 0;
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
  auth_monitor(*auth, zctx, agents); /* before the bind: it watches handshakes */
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
  /* The ZAP socket, when there is one, is the last item. */
  zmq_pollitem_t items[4] = {{agents, 0, ZMQ_POLLIN, 0},
                             {meters, 0, ZMQ_POLLIN, 0},
                             {NULL, c->metrics_wake_fd, ZMQ_POLLIN, 0},
                             {zap, 0, ZMQ_POLLIN, 0}};
  int nitems = c->metrics_wake_fd >= 0 ? 3 : 2, zi = nitems;
  if (zap) {
    items[zi] = (zmq_pollitem_t){zap, 0, ZMQ_POLLIN, 0};
    nitems++;
  }
  int64_t last_tick = 0, last_expire = 0;
  /* After a (re)start agents first deliver what they buffered while ergd
   * was away; finalising the overdue cells before that arrives would store
   * them without agent data. Give them one settle period plus a step. */
  int64_t resume_at = (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S) +
                      (int64_t)((c->cfg->settle_steps + 1) * c->cfg->step_seconds);
  while (!*stop) {
    if (zmq_poll(items, nitems, 200) < 0 && errno != EINTR)
      break;
    if (zap && (items[zi].revents & ZMQ_POLLIN))
      auth_handle(c->auth, zap);
    auth_poll(c->auth);
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    /* Drain in bounded batches so a flood of samples cannot starve meters. */
    for (int i = 0; i < 1000 && zmq_msg_recv(&msg, agents, ZMQ_DONTWAIT) >= 0; i++) {
      if (auth_admit(c->auth, &msg)) /* the key may report as this node */
        collector_ingest(c, zmq_msg_data(&msg), zmq_msg_size(&msg));
      /* Loaded nodes take their samples live again soon, not after the batch. */
      if (c->loader && i % 64 == 63)
        node_loader_collect(c->loader, node_loaded, c);
    }
    while (zmq_msg_recv(&msg, meters, ZMQ_DONTWAIT) == (int)sizeof(struct meter_msg))
      collector_meter(c, zmq_msg_data(&msg));
    zmq_msg_close(&msg);
    if (c->loader)
      node_loader_collect(c->loader, node_loaded, c);
    /* /metrics when a scrape asks (after this round's inputs), not each second. */
    if (c->metrics_wake_fd >= 0 && (items[2].revents & ZMQ_POLLIN))
      collector_metrics_asked(c);
    int64_t now = (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S);
    if (now == last_tick)
      continue;
    last_tick = now;
    if (now >= resume_at)
      collector_finalize(c, now);
    durable_tick(c, now);
    if (c->metrics_wake_fd < 0)
      collector_metrics_render(c); /* no way to be asked: every second */
    /* The first pages wait until the writer thread has created the
     * archives they graph: it has done what was queued up to the first
     * cell (its queue need not be empty: at load, with a cell a second,
     * it never was, and no page came). */
    if (c->render_due && !c->render_marked) {
      c->render_after = writer_committed(c->writer);
      c->render_marked = 1;
    }
    if ((c->render_due && writer_done_through(c->writer, c->render_after)) ||
        (c->last_render && now - c->last_render >= c->cfg->page_interval_seconds))
      collector_render(c, now);
    /* Hourly, in the writer thread (the one updating the store): idle
     * keys' archives go. */
    if (now - last_expire >= 3600) {
      writer_expire(c->writer, now, c->cfg->key_expire_seconds, c->cfg->cluster_key_expire_seconds);
      writer_commit(c->writer);
      last_expire = now;
    }
  }
}

/* What erg_collector_run builds before the store opens (free as one; NULL
 * members are fine). */
static void collector_free_tables(struct collector *c) {
  free(c->sources);
  free(c->node_index);
  cluster_free(c->cluster);
  cluster_free(c->gpu_cluster);
  feed_index_free(c->feeds);
}

int erg_collector_run(const struct erg_collector_config *cfg, volatile int *stop) {
  struct collector c = {.cfg = cfg};
  char why[1024], note[512];
  /* First: a data dir of a newer erg (or garbled FORMAT) is left untouched. */
  if (datadir_prepare(cfg->data_dir, note, sizeof note, why, sizeof why) != 0) {
    erg_err("%s", why);
    return 1;
  }
  if (note[0])
    erg_info("%s", note);
  pthread_mutex_init(&c.metrics_lock, NULL);
  pthread_cond_init(&c.metrics_cond, NULL);
  c.metrics_wake_fd = -1;
  c.sources = calloc((size_t)cfg->nsources + 1, sizeof *c.sources);
  c.node_index_len = 1;
  while (c.node_index_len <= 2 * ERG_MAX_NODES)
    c.node_index_len *= 2;
  c.node_index = calloc(c.node_index_len, sizeof *c.node_index);
  c.cluster = cluster_new();
  c.gpu_cluster = cluster_new();
  c.feeds = feed_index_build(cfg);
  struct erg_store_options so = {.root = cfg->data_dir,
                                 .step_seconds = cfg->step_seconds,
                                 .rrdcached = cfg->rrdcached,
                                 .keep_days = cfg->archive_days};
  int ok = c.sources && c.node_index && c.cluster && c.gpu_cluster && c.feeds;
  if (!ok || erg_store_open(&c.store, &so, why, sizeof why) != 0) {
    erg_err("store %s: %s", cfg->data_dir, ok ? why : "out of memory");
    collector_free_tables(&c);
    return 1;
  }
  c.renderer = renderer_start(c.store, cfg->www_dir, cfg->model_dir, cfg->page_format,
                              cfg->page_timeout_seconds);
  if (!c.renderer)
    erg_warn("cannot start the page rendering thread; no pages");
  /* Bounded so a dead disk cannot eat all memory: ~100 B per queued update,
   * 4 M updates are minutes of a large cluster's writes. */
  if (!(c.writer = writer_start(c.store, 4u << 20))) {
    erg_err("cannot start the store writer thread");
    erg_store_close(c.store);
    collector_free_tables(&c);
    return 1;
  }
  erg_mkdir_p(cfg->www_dir, 0755);
  snprintf(c.journal_dir, sizeof c.journal_dir, "%s/journal", cfg->data_dir);
  erg_mkdir_p(c.journal_dir, 0755);
  nodes_scan_stored(&c);
  for (int i = 0; i < cfg->nnodes; i++)
    collector_node(&c, cfg->nodes[i].name, 1);
  if (groups_build(&c) != 0)
    erg_err("out of memory for [group] state: shared meters are not split");
  durable_open(&c, collector_ingest, collector_meter);
  collector_metrics_render(&c);
  /* From here on, nodes met for the first time are read off the loop. */
  if (!(c.loader = node_loader_start(cfg, c.store, c.journal_dir)))
    erg_warn("cannot start the node state loader threads; new nodes are read on the loop");
  void *zctx = zmq_ctx_new(), *agents = NULL, *meters = NULL, *zap = NULL;
  /* A socket per meter thread (the IPMI pool's threads each one). */
  if (zctx)
    zmq_ctx_set(zctx, ZMQ_MAX_SOCKETS, 1024 + cfg->nsources + (int)cfg->ipmi_poll_threads);
  struct erg_web_server *web = NULL;
  c.metrics_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  c.metrics_live = 1;
  int rc = collector_open_sockets(zctx, &c, &agents, &meters, &zap);
  struct erg_web_server_limits lim;
  erg_collector_http_limits(cfg, &lim);
  if (rc == 0 && cfg->http[0] &&
      erg_web_server_start_limits(&web, cfg->http, cfg->www_dir, collector_http_dynamic, &c, &lim,
                                  why, sizeof why) != 0) {
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
  collector_metrics_stop(&c);
  *stop = 1;
  node_loader_stop(c.loader);
  c.loader = NULL;
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
  renderer_stop(c.renderer);
  /* Cells still pending for the cluster sums are written as they are. */
  cluster_flush(c.cluster, INT64_MAX, cluster_write_cell, &c);
  cluster_flush(c.gpu_cluster, INT64_MAX, cluster_write_gpu_cell, &c);
  writer_stop(c.writer);
  durable_close(&c);
  for (size_t i = 0; i < c.nnodes; i++) {
    erg_grid_free(&c.nodes[i]->grid);
    user_names_free(&c.nodes[i]->user_names);
    job_users_free(c.nodes[i]->job_users);
    node_gpu_free(c.nodes[i]);
    erg_lag_free(&c.nodes[i]->lag);
    node_model_close(c.nodes[i]->model);
    for (struct held_msg *h = c.nodes[i]->held, *next; h; h = next) {
      next = h->next;
      free(h);
    }
    for (int k = 0; k < PROFILE_NKINDS; k++)
      profile_known_free(&c.nodes[i]->known[k]);
    free(c.nodes[i]);
  }
  profile_known_free(&c.cluster_jobs);
  profile_known_free(&c.cluster_gpu_jobs);
  free(c.gpu_jobs);
  groups_free(&c);
  free(c.nodes);
  collector_free_tables(&c);
  free(c.metrics);
  free(c.metrics_keys);
  if (c.metrics_wake_fd >= 0)
    close(c.metrics_wake_fd);
  pthread_cond_destroy(&c.metrics_cond);
  pthread_mutex_destroy(&c.metrics_lock);
  free(c.procbuf);
  free(c.keybuf);
  free(c.stored_names);
  erg_store_close(c.store);
  return rc == 0 ? 0 : 1;
}

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

#include "erg_store.h"
#include "erg_web.h"
#include "state.h"

/* ---- agent samples ---- */

/* The node's names of its uids (Sample.users; an older agent sends none). */
static void collector_ingest_users(struct node_state *n, const Erg__Sample *s) {
  char clean[USER_NAME_MAX];
  for (size_t i = 0; i < s->n_users; i++) {
    const Erg__UserName *u = s->users[i];
    if (!u->name || !u->name[0])
      continue;
    int changed = user_name_clean(u->name, clean);
    int set = user_names_set(&n->user_names, u->uid, clean);
    if (set < 0 && n->user_names_dropped++ == 0)
      erg_warn("node %s: more than %d user names; further uids shown as numbers", n->name,
               USER_NAMES_MAX);
    /* Every sample repeats the names: counted when one is stored. */
    if (changed && set > 0 && n->user_names_sanitized++ == 0)
      erg_warn("node %s: user name of uid %u had bytes that cannot be shown (control, "
               "invalid UTF-8, a leading '[', longer than 64 bytes): kept as '%s'; further "
               "ones only counted", n->name, u->uid, clean);
  }
}

/* Room for np processes in the reused per-sample buffers. */
static int collector_scratch(struct collector *c, size_t np) {
  if (np <= c->procbuf_cap)
    return 1;
  size_t cap = np < 256 ? 256 : np;
  struct erg_grid_proc *p = realloc(c->procbuf, cap * sizeof *p);
  if (p)
    c->procbuf = p;
  char *k = p ? realloc(c->keybuf, cap * PROFILE_KEY_MAX) : NULL;
  if (k)
    c->keybuf = k;
  if (!k)
    return 0;
  c->procbuf_cap = cap;
  return 1;
}

static void node_make_room(struct collector *c, struct node_state *n, uint64_t t_end_ns);

/* Claims the sample's time for the node. A resent copy (the agent sends
 * its last samples again after every reconnect) of time the node has,
 * stored or open, is a no-op counted apart from duplicate agents. */
static int collector_claim(struct node_state *n, const Erg__Sample *s) {
  const Erg__Interval *iv = s->interval;
  int stored = n->grid.next_final &&
               iv->realtime_end_ns <= (uint64_t)n->grid.next_final * ERG_NS_PER_S;
  if (s->resent && (stored || erg_coverage_claim(&n->covered, iv->realtime_start_ns,
                                                 iv->realtime_end_ns, 50000000ULL) != 0)) {
    n->resent_duplicates++;
    return -1;
  }
  /* Earlier than the last sample is fine when it fills a gap: after a
   * heartbeat loss the old connection's buffered samples arrive
   * interleaved with the new connection's queue. */
  if (!s->resent && erg_coverage_claim(&n->covered, iv->realtime_start_ns, iv->realtime_end_ns,
                                       50000000ULL) != 0) {
    if (n->overlap_samples++ == 0)
      erg_warn("node %s: sample %llu overlaps time already reported (duplicate agent?); "
               "dropped, further ones only counted", n->name, (unsigned long long)s->seq);
    return -1;
  }
  return 0;
}

/* A sample's claims are checked before anything of it is kept, held or
 * logged in the WAL (nodes.c, ingest_check.c). */
static void collector_ingest_sample(struct collector *c, const Erg__Sample *s, const uint8_t *buf,
                                    size_t len) {
  struct node_state *n = node_for_message(c, s->node);
  if (!n || ingest_sample_ok(c, n, s) != 0)
    return;
  if (!n->loaded)
    node_hold(c, n, buf, len, s->interval->realtime_end_ns);
  else
    node_apply_sample(c, n, s, buf, len, 1);
}

void node_apply_sample(struct collector *c, struct node_state *n, const Erg__Sample *s,
                       const uint8_t *buf, size_t len, int log) {
  const Erg__Interval *iv = s->interval;
  /* A sample for time this node already reported is a duplicate or a
   * second agent claiming the same node: counting it would double the
   * node's CPU time. A new boot starts afresh. */
  if (strcmp(n->boot_id, s->boot_id ? s->boot_id : "") != 0) {
    erg_strlcpy(n->boot_id, s->boot_id ? s->boot_id : "", sizeof n->boot_id);
    memset(&n->covered, 0, sizeof n->covered);
  }
  if (collector_claim(n, s) != 0)
    return;
  size_t np = s->n_procs;
  if (!collector_scratch(c, np))
    return;
  if (log)
    durable_log_sample(c, buf, len, iv->realtime_end_ns);
  struct erg_grid_proc *procs = c->procbuf;
  for (size_t i = 0; i < np; i++) {
    const Erg__Proc *p = s->procs[i];
    /* One grid key per (command, job, unit, container, user): attribution
     * runs once per cell over these, every kind is a roll-up of them. */
    char *key = c->keybuf + i * PROFILE_KEY_MAX;
    profile_key_build(key, PROFILE_KEY_MAX, p->comm, p->job, p->unit, p->container, p->uid);
    procs[i] = (struct erg_grid_proc){.key = key,
                                      .cpu_seconds = (double)p->cpu_ns / 1e9,
                                      .disk_bytes = (double)p->read_bytes + (double)p->write_bytes,
                                      .instructions = (double)p->instructions,
                                      .cycles = (double)p->cycles};
  }
  collector_ingest_users(n, s);
  double busy = s->totals ? (double)s->totals->cpu_busy_ns / 1e9 : 0;
  if (s->totals && s->totals->ncpu)
    n->ncpu = s->totals->ncpu;
  if (c->cfg->lag_max_seconds) {
    double disk = 0;
    for (size_t i = 0; i < np; i++)
      disk += procs[i].disk_bytes;
    erg_lag_add_activity(node_lag(c, n), iv->realtime_start_ns, iv->realtime_end_ns, busy, disk);
  }
  node_make_room(c, n, iv->realtime_end_ns);
  node_gpu_sample(n, s, procs);
  erg_grid_add_procs(&n->grid, iv->realtime_start_ns, iv->realtime_end_ns, busy,
                     (double)s->system_cpu_ns / 1e9, procs, np);
  n->samples++;
  n->dropped_samples += s->dropped_samples;
  if (s->bpf) {
    n->has_bpf = 1;
    n->bpf_map_full_drops += s->bpf->map_full_drops;
    n->bpf_lost_exit_ns += s->bpf->lost_exit_ns;
    n->bpf_unseen_switches += s->bpf->unseen_switches;
    n->bpf_unsettled += s->bpf->unsettled;
  }
  n->last_seen_ns = erg_time_realtime_ns();
}

void collector_ingest(struct collector *c, const uint8_t *buf, size_t len) {
  const char *why;
  Erg__Envelope *env = erg_wire_unpack(buf, len, &why);
  if (!env) {
    /* Once overall plus the counter: a flood stays out of the log. */
    ingest_refuse(c, NULL, NULL, INGEST_MALFORMED, why);
    return;
  }
  if (env->body_case == ERG__ENVELOPE__BODY_SAMPLE)
    collector_ingest_sample(c, env->sample, buf, len);
  else if (env->body_case == ERG__ENVELOPE__BODY_HELLO)
    ingest_hello(c, env->hello);
  erg_wire_free(env);
}

/* ---- meters ---- */

static void collector_feed_energy(struct collector *c, int source, int channel, uint64_t t0,
                                  uint64_t t1, double joules) {
  size_t nref;
  const struct feed_ref *ref = feed_index_find(c->feeds, source, channel, &nref);
  for (size_t r = 0; r < nref; r++) {
    const struct erg_node_config *nc = &c->cfg->nodes[ref[r].node];
    int f = ref[r].feed;
    struct node_state *n = collector_node(c, nc->name, 1);
    if (!n || !n->loaded)
      continue; /* configured nodes are loaded at start: not reached */
    double j = joules * nc->feeds[f].factor;
    /* The estimator sees readings as they came; the grid sees them moved
     * back by the node's lag, to the time the power was drawn. */
    uint64_t shift = n->lag.have_estimate ? (uint64_t)n->lag.lag_seconds * ERG_NS_PER_S : 0;
    /* A shared meter is timed once, by its group's first member. */
    if (c->cfg->lag_max_seconds && !node_lag_follows(c, n))
      erg_lag_add_energy(&n->lag, f, t0, t1, j);
    erg_grid_add_energy(&n->grid, f, t0 - shift, t1 - shift, j);
  }
}

/* Said once per channel (docs/pdu.md, "Coarse counters"): the energy of
 * this source's cells now comes from its power readings. */
static void collector_log_coarse(struct collector *c, int source, int ch,
                                 const struct erg_pdu_reading *r) {
  const struct erg_pdu_counter *pc = &c->sources[source].counters[ch];
  double cell = r->watts * c->cfg->step_seconds;
  erg_warn("source %s %s %d: energy counter too coarse: one step is %.1f J at %.3f kWh, "
           "more than %.0f %% of a %u s cell at %.1f W (%.1f J); using the power readings "
           "instead (logged once; erg_meter_energy_coarse)", c->cfg->sources[source].name,
           collector_level(c, source, ch), collector_outlet(c, source, ch), pc->resolution_joules, r->energy_joules / 3.6e6,
           ERG_PDU_COUNTER_MAX_STEP * 100, c->cfg->step_seconds, r->watts, cell);
}

void collector_meter(struct collector *c, const struct meter_msg *m) {
  if (m->source < 0 || m->source >= c->cfg->nsources)
    return;
  durable_log_meter(c, m);
  struct meter_msg checked; /* m without values outside the channel's range */
  m = meter_check(c, m, &checked);
  struct source_state *ss = &c->sources[m->source];
  const char *name = c->cfg->sources[m->source].name;
  ss->polls++;
  ss->poll_seconds = m->poll_seconds;
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
  uint64_t hold_max = collector_hold_max_seconds(c) * ERG_NS_PER_S;
  if (m->nchannels > 0)
    ss->nchannels = m->nchannels < ERG_PDU_MAX_CHANNELS ? m->nchannels : ERG_PDU_MAX_CHANNELS;
  for (int ch = 0; ch < m->nchannels && ch < ERG_PDU_MAX_CHANNELS; ch++) {
    ss->counters[ch].wrap_joules = m->wrap_joules[ch];
    ss->counters[ch].horizon_seconds = c->cfg->step_seconds;
    ss->counters[ch].hold_max_ns = hold_max;
    uint64_t t0, t1;
    double j;
    uint64_t gap = durable_meter_gap(c, m->source, ch, &m->readings[ch], max_gap);
    enum erg_pdu_delta_kind k =
        erg_pdu_counter_update(&ss->counters[ch], &m->readings[ch], gap, &t0, &t1, &j);
    if (k == ERG_PDU_DELTA_RESET) {
      ss->energy_resets[ch]++;
      if (!ss->reset_logged[ch])
        erg_warn("source %s %s %d: energy counter went back (reset?); interval skipped "
                 "(logged once until it counts up again; erg_meter_energy_resets_total)", name,
                 collector_level(c, m->source, ch), collector_outlet(c, m->source, ch));
      ss->reset_logged[ch] = true;
    } else if (k == ERG_PDU_DELTA_ENERGY) {
      ss->reset_logged[ch] = false;
    }
    if (ss->counters[ch].coarse && !ss->coarse_logged[ch]) {
      ss->coarse_logged[ch] = true;
      collector_log_coarse(c, m->source, ch, &m->readings[ch]);
    }
    if (k == ERG_PDU_DELTA_ENERGY && ss->counters[ch].last_held_seconds > 0 &&
        !ss->held_logged[ch]) {
      ss->held_logged[ch] = true;
      erg_info("source %s %s %d: energy counter stood still for %.1f s and there is no "
               "power reading: each move's energy is spread over the time since the previous "
               "one, cells wait up to %llu s for it (logged once; "
               "erg_meter_energy_held_polls_total)", name, collector_level(c, m->source, ch),
               collector_outlet(c, m->source, ch),
               ss->counters[ch].last_held_seconds, (unsigned long long)(hold_max / ERG_NS_PER_S));
    }
    const struct erg_pdu_reading *rd = &m->readings[ch];
    ss->bad_values[ch] += rd->bad_value;
    ss->power_estimated[ch] = isfinite(rd->watts) && rd->power_source == ERG_PDU_W_ESTIMATED;
    if (ss->power_estimated[ch] && !ss->estimated_logged[ch]) {
      ss->estimated_logged[ch] = true;
      double pf = c->cfg->sources[m->source].power_factor;
      erg_warn("source %s %s %d: the PDU gives no active power here; power is estimated as "
               "A x V (or VA) x power_factor %.2f, cells flagged 32 (logged once; "
               "erg_meter_power_estimated)", name, collector_level(c, m->source, ch),
               collector_outlet(c, m->source, ch), pf > 0 ? pf : 1.0);
    }
    if ((k == ERG_PDU_DELTA_ENERGY || k == ERG_PDU_DELTA_POWER) &&
        meter_check_interval(c, m->source, ch, t0, t1, j))
      collector_feed_energy(c, m->source, ch, t0, t1, j);
  }
}

/* ---- finalised cells -> store ---- */

/* A per-node key pushed out of a full known set loses its archive too, so
 * a node never holds more than key_archives_max archives per kind however
 * many names pass through; cluster-wide job archives are job history and
 * only expire by age. */
static void keys_evict(struct collector *c, const char *node, const char *kind, char *key) {
  if (!key)
    return;
  if (node) {
    erg_debug("node %s: %s key '%s' evicted (key_archives_max)", node, kind, key);
    writer_remove_key(c->writer, node, kind, key);
    c->keys_evicted++;
  }
  free(key);
}

/* Writes one cell's values of a known-key set: the entries given, and an
 * explicit 0 W for every key written before but absent now, so stacked
 * graphs and reports see "idle", not "unknown". Keys idle longer than
 * key_expire_seconds are forgotten (their archives then expire in the
 * store); the set is bounded, the key idle longest makes room. */
static void keys_write(struct collector *c, const char *node, const char *kind,
                       struct profile_known *known, const struct profile_entry *e, size_t n,
                       int64_t t_end, size_t max_keys) {
  double step = c->cfg->step_seconds;
  for (size_t i = 0; i < n; i++) {
    char *evicted = NULL;
    struct profile_known_key *k = profile_known_touch(known, e[i].key, t_end, max_keys, &evicted);
    keys_evict(c, node, kind, evicted);
    if (k) {
      k->joules += e[i].watts * step;
      k->watts = e[i].watts;
    }
    writer_key(c->writer, node, kind, e[i].key, t_end, e[i].watts);
  }
  int64_t idle = c->cfg->key_expire_seconds;
  /* A cluster-wide job gets its 0 W for an hour after it was last seen,
   * not for key_expire_seconds: an ended job is history, 4,096 of them
   * would cost as many updates per cell, and its archive's mtime then
   * tells when it last ran (pages rank recent jobs by it). */
  if (!node && (idle <= 0 || idle > CLUSTER_JOB_ZERO_SECONDS))
    idle = CLUSTER_JOB_ZERO_SECONDS;
  if (idle > 0)
    profile_known_expire(known, t_end, idle);
  for (size_t i = 0; i < known->n; i++)
    if (known->keys[i].last_t != t_end) {
      known->keys[i].watts = 0;
      writer_key(c->writer, node, kind, known->keys[i].key, t_end, 0);
    }
  c->keys_dirty = 1;
}

/* After a restart, the keys written before (archives updated within
 * key_expire_seconds) are known again, so they keep getting 0 W while
 * absent. Their last_t is kept off the step multiples that t_end takes. */
void keys_settle(struct collector *c, const char *node, const char *kind,
                 struct profile_known *known, size_t max_keys) {
  /* More archives than allowed (a lower key_archives_max than the last
   * run's): the ones idle longest go now, not at the next churn. */
  char *old;
  while (known->n > max_keys && (old = profile_known_pop_oldest(known)))
    keys_evict(c, node, kind, old);
  for (size_t i = 0; i < known->n; i++)
    if (known->keys[i].last_t % (int64_t)c->cfg->step_seconds == 0)
      known->keys[i].last_t--;
}

static void keys_load(struct collector *c, const char *node, const char *kind,
                      struct profile_known *known, int64_t now, size_t max_keys) {
  char dir[1024];
  if (erg_store_kind_dir(c->store, node, kind, dir, sizeof dir) != 0)
    return;
  profile_known_load(known, dir, now, c->cfg->key_expire_seconds);
  keys_settle(c, node, kind, known, max_keys);
}

/* Every kind of profile key of a node's cell, and its jobs' watts into the
 * cluster sums (all jobs, before top-N folding). */
static void node_write_keys(struct collector *c, struct node_state *n, int64_t t_end,
                            const struct erg_attr_share *sh, size_t nkeys) {
  struct profile_rollup r;
  if (profile_rollup(&r, sh, nkeys, n->known, c->cfg->top_processes,
                     c->cfg->key_min_share) != 0) {
    if (c->store_errors++ == 0)
      erg_warn("node %s: out of memory rolling up profile keys", n->name);
    return;
  }
  for (int k = 0; k < PROFILE_NKINDS; k++)
    keys_write(c, n->name, profile_kind_names[k], &n->known[k], r.out[k], r.nout[k], t_end,
               erg_collector_key_archives_max(c->cfg));
  /* After the cell's user archives, so the directory is the store's. */
  char *tsv = n->user_names.dirty ? user_names_tsv(&n->user_names) : NULL;
  if (tsv)
    writer_names(c->writer, n->name, "user", tsv);
  free(tsv);
  tsv = NULL;
  /* Whose its jobs are; job ids and uids as the profile keys hold them. */
  int changed = 0;
  for (size_t i = 0; i < nkeys; i++) {
    const char *job, *uid;
    size_t jl = profile_key_field(sh[i].key, PROFILE_JOB, &job);
    size_t ul = profile_key_field(sh[i].key, PROFILE_USER, &uid);
    if (jl && ul && ul < 12)
      changed |= job_users_note(&n->job_users, job, jl, (uint32_t)strtoul(uid, NULL, 10),
                                t_end) > 0;
  }
  if (changed && (tsv = job_users_tsv(n->job_users)))
    writer_job_users(c->writer, n->name, tsv);
  free(tsv);
  cluster_add(c->cluster, t_end, NULL, 0);
  for (size_t i = 0; i < r.nall[PROFILE_JOB]; i++)
    cluster_add(c->cluster, t_end, r.all[PROFILE_JOB][i].key, r.all[PROFILE_JOB][i].watts);
  profile_rollup_free(&r);
}

static void cluster_write_cell(void *user, int64_t t_end, const struct profile_entry *jobs,
                               size_t njobs) {
  struct collector *c = user;
  if (!c->cluster_jobs_loaded) {
    keys_load(c, NULL, "job", &c->cluster_jobs, t_end, CLUSTER_MAX_KNOWN_JOBS);
    c->cluster_jobs_loaded = 1;
  }
  keys_write(c, NULL, "job", &c->cluster_jobs, jobs, njobs, t_end, CLUSTER_MAX_KNOWN_JOBS);
}

/* A cluster cell is complete once every node with a grid has finalised
 * it; a node that lags behind the horizon (settle + largest lag + a step)
 * does not hold the others back, its contribution then counts as late. */
static void collector_flush_cluster(struct collector *c, int64_t now) {
  int64_t done = INT64_MAX;
  for (size_t i = 0; i < c->nnodes; i++) {
    int64_t nf = c->nodes[i]->grid.next_final;
    if (nf && nf < done)
      done = nf;
  }
  int64_t horizon = now - (int64_t)((c->cfg->settle_steps + 2) * c->cfg->step_seconds +
                                    c->cfg->lag_max_seconds);
  if (done == INT64_MAX || done < horizon)
    done = horizon;
  cluster_flush(c->cluster, done, cluster_write_cell, c);
}

/* A feed of the node reads power estimated from A x V (source state of
 * its channels' last readings: what a PDU offers does not change). */
static bool node_power_estimated(const struct collector *c, const struct node_state *n) {
  const struct erg_node_config *nc = NULL;
  for (int i = 0; i < c->cfg->nnodes && !nc; i++)
    if (!strcmp(c->cfg->nodes[i].name, n->name))
      nc = &c->cfg->nodes[i];
  for (int f = 0; nc && f < nc->nfeeds; f++)
    if (c->sources[nc->feeds[f].source].power_estimated[nc->feeds[f].channel])
      return true;
  return false;
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
  int flags = r->flags | (estimated ? ERG_CELL_ESTIMATED : 0) |
              (n->group >= 0 ? ERG_CELL_SHARED : 0);
  if (node_power_estimated(c, n))
    flags |= ERG_CELL_POWER_ESTIMATED;
  /* A cell aligned with no or a wavering lag estimate is off by tens of
   * watts where the load changes: kept, but flagged so the fit skips it. */
  if (c->cfg->lag_max_seconds && erg_lag_cell_unsure(&n->lag, r->t0, r->step)) {
    flags |= ERG_CELL_LAG_UNSURE;
    n->lag_unsure_cells++;
  } else if (c->cfg->lag_max_seconds && erg_lag_unresolved(&n->lag)) {
    n->lag_unresolved_cells++;
  }
  struct erg_journal_row jr = {.t0 = r->t0, .step_seconds = r->step,
                               .measured_watts = r->measured_watts,
                               .flags = flags,
                               .cpu_seconds_per_second = x[ERG_FEAT_CPU],
                               .disk_bytes_per_second = x[ERG_FEAT_DISK],
                               .instructions_per_second = x[ERG_FEAT_INSTRUCTIONS],
                               .cycles_per_second = x[ERG_FEAT_CYCLES],
                               .gpu_watts = r->cell->seen & (1u << ERG_FEAT_GPU)
                                                ? x[ERG_FEAT_GPU] : NAN,
                               .columns = n->journal_columns, .ncpu = n->ncpu};
  char why[256];
  int rc = erg_journal_append_cached(c->journal_dir, n->name, &jr, c->cfg->journal_max_bytes,
                                     c->cfg->journal_max_age_seconds, &n->journal_file, why,
                                     sizeof why);
  c->store_errors += rc != 0;
  store_spell_note(&c->journal_spell, rc ? why : NULL,
                   (int64_t)(erg_time_monotonic_ns() / ERG_NS_PER_S));
}

/* Cells beyond the model's training range are counted (/metrics); the
 * first one of each model is logged with the feature and by how much. */
static void node_beyond_training(struct node_state *n, const struct erg_cell_power *pw) {
  n->out_of_range_cells++;
  if (!node_model_first_beyond(n->model))
    return;
  erg_warn("node %s: %s %.4g is %.2f x its training maximum %.4g: linear terms extrapolated, "
           "the utilisation curve continued with its end slope (once per model; such cells are "
           "counted in erg_cells_out_of_training_range_total)", n->name, pw->beyond_feature,
           pw->beyond_value, pw->beyond_value / pw->beyond_training_max,
           pw->beyond_training_max);
}

static void collector_cell(void *user, const struct erg_grid_result *whole) {
  struct cell_ctx *ctx = user;
  struct collector *c = ctx->c;
  struct node_state *n = ctx->n;
  /* A group member's power is its share of the shared meter; the journal
   * keeps the whole meter for the joint fit. */
  struct erg_grid_result shared = *whole;
  if (n->group >= 0)
    shared.measured_watts *= n->share;
  const struct erg_grid_result *r = &shared;
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
  n->last_modelled_watts = pw.modelled_watts;
  if (pw.beyond_training)
    node_beyond_training(n, &pw);
  if (rc == 0) {
    cell.estimated = pw.estimated;
    cell.idle_watts = pw.idle_watts;
    cell.dynamic_watts = pw.dynamic_watts;
    cell.unattributed_watts = (r->flags & ERG_CELL_NO_AGENT) ? pw.dynamic_watts : 0;
    n->last_idle_watts = pw.idle_watts;
  }
  node_journal(c, n, whole, rc == 0 && pw.estimated);
  writer_node(c->writer, n->name, &cell);
  if (isfinite(r->measured_watts))
    n->measured_joules += r->measured_watts * r->step;
  /* Dynamic energy counts where keys are written, so Σ key energy of any
   * kind equals it; without agent data it is unattributed. */
  if (rc == 0 && isfinite(pw.idle_watts) && isfinite(pw.dynamic_watts)) {
    n->idle_joules += pw.idle_watts * r->step;
    if (r->flags & ERG_CELL_NO_AGENT)
      n->unattributed_joules += pw.dynamic_watts * r->step;
    else
      n->dynamic_joules += pw.dynamic_watts * r->step;
  }
  if (rc == 0 && !(r->flags & ERG_CELL_NO_AGENT)) {
    node_write_keys(c, n, t_end, sh, r->cell->nkeys);
    node_gpu_cell(c, n, r);
    n->has_data = 1;
    c->render_due |= c->last_render == 0;
  }
  free(sh);
}

/* How long an energy counter without power readings may stand still and
 * still have its next move spread back over the time since (pdu.c,
 * holding): the cells it covers stay open meanwhile, so it must fit in the
 * grid's ring beside the settle delay and the largest lag. */
unsigned collector_hold_max_seconds(const struct collector *c) {
  const struct erg_collector_config *cfg = c->cfg;
  long ring = (long)(ERG_GRID_SLOTS - cfg->settle_steps - 4) * cfg->step_seconds -
              (long)cfg->lag_max_seconds;
  return ring < (long)cfg->step_seconds ? 0
         : ring > COUNTER_HOLD_MAX_SECONDS ? COUNTER_HOLD_MAX_SECONDS : (unsigned)ring;
}

/* The longest a feed of the node has been held, in whole seconds: cells
 * after its last move wait for the next one. */
static unsigned node_held_seconds(const struct collector *c, const struct node_state *n) {
  if (n->cfg_index < 0)
    return 0;
  const struct erg_node_config *nc = &c->cfg->nodes[n->cfg_index];
  uint64_t now = erg_time_realtime_ns(), held = 0;
  for (int f = 0; f < nc->nfeeds; f++) {
    const struct erg_node_feed *fd = &nc->feeds[f];
    const struct erg_pdu_counter *pc = &c->sources[fd->source].counters[fd->channel];
    if (pc->held && now > pc->prev_t_ns && now - pc->prev_t_ns > held)
      held = now - pc->prev_t_ns;
  }
  return (unsigned)((held + ERG_NS_PER_S - 1) / ERG_NS_PER_S);
}

/* How long after a cell's end it may still get data: the settle delay, and
 * the lag, as shifted meter data for a cell arrives lag seconds later, or
 * since a held counter's last move, whichever is longer. */
static unsigned node_settle_seconds(const struct collector *c, const struct node_state *n) {
  unsigned lag = n->lag.have_estimate ? (unsigned)n->lag.lag_seconds : 0;
  unsigned settle = c->cfg->settle_steps * c->cfg->step_seconds + lag, held;
  if ((held = node_held_seconds(c, n)) > 0 && held + lag + c->cfg->step_seconds > settle)
    settle = held + lag + c->cfg->step_seconds;
  return settle;
}

/* The members of a group close each cell together: their models weigh
 * their shares of the meter first (groups.c). Returns the cells closed. */
static size_t group_finalize(struct collector *c, struct group_state *g, int64_t now) {
  unsigned settle = 0, step = c->cfg->step_seconds;
  struct node_state *lead = g->members[0];
  for (int m = 0; m < g->nmembers; m++) {
    struct node_state *n = g->members[m];
    if (!n->loaded)
      return 0; /* its stored state is still being read: wait for it */
    if (m > 0) { /* the lag the first member estimated from the group */
      erg_lag_follow(&n->lag, &lead->lag);
      n->lag_seconds = lead->lag_seconds;
      n->lag_correlation = lead->lag_correlation;
      n->lag_confidence = lead->lag_confidence;
    }
    unsigned s = node_settle_seconds(c, n);
    settle = s > settle ? s : settle;
  }
  size_t closed = 0;
  for (;;) {
    int64_t t0 = 0;
    for (int m = 0; m < g->nmembers; m++) {
      int64_t nf = g->members[m]->grid.next_final;
      if (nf && (t0 == 0 || nf < t0))
        t0 = nf;
    }
    if (t0 == 0 || t0 + (int64_t)step + (int64_t)settle > now)
      return closed;
    group_split_cell(c, g, t0);
    for (int m = 0; m < g->nmembers; m++) {
      struct cell_ctx ctx = {c, g->members[m]};
      closed += erg_grid_finalize(&g->members[m]->grid, t0 + step + settle, settle,
                                  collector_cell, &ctx);
    }
  }
}

/* An agent sends in order, so once it sends time t its data for the cells
 * before t's window is complete; meter data exists only in real time, so
 * it is complete for cells past the settle delay. After a long collector
 * outage an agent's backlog arrives faster than wall-clock finalisation
 * moves the grid's window (ERG_GRID_SLOTS cells): close the cells that are
 * complete on both counts now, instead of dropping the backlog as future. */
static void node_make_room(struct collector *c, struct node_state *n, uint64_t t_end_ns) {
  int64_t step = c->cfg->step_seconds;
  int64_t first_open = ((int64_t)(t_end_ns / ERG_NS_PER_S) / step - (ERG_GRID_SLOTS - 1)) * step;
  if (n->grid.next_final == 0 || first_open <= n->grid.next_final)
    return;
  /* finalize closes cell t0 while t0 + step + settle <= its "now". */
  int64_t now = (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S);
  int64_t upto = first_open + node_settle_seconds(c, n);
  struct cell_ctx ctx = {c, n};
  if (n->group >= 0 ? group_finalize(c, &c->groups[n->group], upto < now ? upto : now)
                    : erg_grid_finalize(&n->grid, upto < now ? upto : now,
                                        node_settle_seconds(c, n), collector_cell, &ctx))
    writer_commit(c->writer);
}

static void collector_finalize(struct collector *c, int64_t now) {
  for (size_t i = 0; i < c->nnodes; i++) {
    struct node_state *n = c->nodes[i];
    struct cell_ctx ctx = {c, n};
    if (!n->loaded)
      continue; /* its stored state is still being read */
    node_model_tick(n->model, now);
    if (c->cfg->lag_max_seconds && now % 10 == 0 && !node_lag_follows(c, n))
      node_estimate_lag(c, n);
    if (n->group < 0)
      erg_grid_finalize(&n->grid, now, node_settle_seconds(c, n), collector_cell, &ctx);
  }
  for (int g = 0; g < c->ngroups; g++)
    group_finalize(c, &c->groups[g], now);
  collector_flush_cluster(c, now);
  writer_commit(c->writer);
}

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
  zmq_pollitem_t items[3] = {{agents, 0, ZMQ_POLLIN, 0}, {meters, 0, ZMQ_POLLIN, 0},
                             {zap, 0, ZMQ_POLLIN, 0}};
  int64_t last_tick = 0, last_expire = 0;
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
    int64_t now = (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S);
    if (now == last_tick)
      continue;
    last_tick = now;
    if (now >= resume_at)
      collector_finalize(c, now);
    durable_tick(c, now);
    collector_metrics_render(c);
    /* The first pages wait until the writer thread has created the
     * archives they graph. */
    if ((c->render_due && writer_pending(c->writer) == 0) ||
        (c->last_render && now - c->last_render >= c->cfg->page_interval_seconds))
      collector_render(c, now);
    /* Hourly, in the writer thread (the one updating the store): idle
     * keys' archives go. */
    if (now - last_expire >= 3600) {
      writer_expire(c->writer, now, c->cfg->key_expire_seconds,
                    c->cfg->cluster_key_expire_seconds);
      writer_commit(c->writer);
      last_expire = now;
    }
  }
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
  c.sources = calloc((size_t)cfg->nsources + 1, sizeof *c.sources);
  c.node_index_len = 1;
  while (c.node_index_len <= 2 * ERG_MAX_NODES)
    c.node_index_len *= 2;
  c.node_index = calloc(c.node_index_len, sizeof *c.node_index);
  c.cluster = cluster_new();
  c.feeds = feed_index_build(cfg);
  struct erg_store_options so = {.root = cfg->data_dir, .step_seconds = cfg->step_seconds,
                                 .rrdcached = cfg->rrdcached, .keep_days = cfg->archive_days};
  int ok = c.sources && c.node_index && c.cluster && c.feeds;
  if (!ok || erg_store_open(&c.store, &so, why, sizeof why) != 0) {
    erg_err("store %s: %s", cfg->data_dir, ok ? why : "out of memory");
    free(c.sources);
    free(c.node_index);
    cluster_free(c.cluster);
    feed_index_free(c.feeds);
    return 1;
  }
  c.renderer = renderer_start(c.store, cfg->www_dir, cfg->model_dir, cfg->page_format);
  if (!c.renderer)
    erg_warn("cannot start the page rendering thread; no pages");
  /* Bounded so a dead disk cannot eat all memory: ~100 B per queued update,
   * 4 M updates are minutes of a large cluster's writes. */
  if (!(c.writer = writer_start(c.store, 4u << 20))) {
    erg_err("cannot start the store writer thread");
    erg_store_close(c.store);
    free(c.sources);
    free(c.node_index);
    cluster_free(c.cluster);
    feed_index_free(c.feeds);
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
  durable_open(&c);
  collector_metrics_render(&c);
  /* From here on, nodes met for the first time are read off the loop. */
  if (!(c.loader = node_loader_start(cfg, c.store, c.journal_dir)))
    erg_warn("cannot start the node state loader threads; new nodes are read on the loop");
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
  free(c.gpu_jobs);
  groups_free(&c);
  cluster_free(c.cluster);
  free(c.nodes);
  free(c.node_index);
  free(c.sources);
  feed_index_free(c.feeds);
  free(c.metrics);
  free(c.metrics_keys);
  free(c.procbuf);
  free(c.keybuf);
  free(c.stored_names);
  erg_store_close(c.store);
  return rc == 0 ? 0 : 1;
}

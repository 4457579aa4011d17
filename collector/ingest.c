// SPDX-License-Identifier: GPL-3.0-or-later
/* Inputs into ergd's loop: an agent's sample goes into its node's grid
 * (after the checks of ingest_check.c, held while the node's stored state
 * loads), a meter's readings into the grids of the nodes on each channel.
 * Live from the loop, or replayed from the WAL at start (durable.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
               "ones only counted",
               n->name, u->uid, clean);
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

/* Claims the sample's time for the node. A resent copy (the agent sends
 * its last samples again after every reconnect) of time the node has,
 * stored or open, is a no-op counted apart from duplicate agents. */
static int collector_claim(struct node_state *n, const Erg__Sample *s) {
  const Erg__Interval *iv = s->interval;
  int stored =
      n->grid.next_final && iv->realtime_end_ns <= (uint64_t)n->grid.next_final * ERG_NS_PER_S;
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
               "dropped, further ones only counted",
               n->name, (unsigned long long)s->seq);
    return -1;
  }
  return 0;
}

/* A sample applied to a loaded node (log: into the WAL). */
static void node_apply_sample(struct collector *c, struct node_state *n, const Erg__Sample *s,
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
  double gpu_joules = node_gpu_sample(n, s, procs);
  /* On a GPU node the meter follows the boards' power more than the CPU
   * time (lag.c); the same sample's interval, one clock. */
  if (c->cfg->lag_max_seconds && gpu_joules > 0)
    erg_lag_add_gpu(node_lag(c, n), iv->realtime_start_ns, iv->realtime_end_ns, gpu_joules);
  n->grid.ncpu = n->ncpu;
  /* The model in use splits its curve's power sample by sample. */
  struct erg_cell_model cm = node_model_cell(n->model);
  erg_cell_model_curve(&cm, n->grid.ncpu, n->grid.curve_coef);
  /* The agent's sub-samples of the busy time (checked: ends rising, the
   * last at the interval's end), placed on the realtime interval. */
  size_t ns = s->totals ? s->totals->n_cpu_busy_slice_ns : 0;
  struct erg_grid_slice *sl = ns ? malloc(ns * sizeof *sl) : NULL;
  double mono_span = (double)(iv->monotonic_end_ns - iv->monotonic_start_ns);
  double rt_span = (double)(iv->realtime_end_ns - iv->realtime_start_ns);
  if (!sl || !(mono_span > 0))
    ns = 0;
  for (size_t i = 0; i < ns; i++) {
    double a = i ? (double)s->totals->busy_slice_end_ns[i - 1] : 0;
    double b = (double)s->totals->busy_slice_end_ns[i];
    sl[i] = (struct erg_grid_slice){iv->realtime_start_ns + (uint64_t)(a / mono_span * rt_span),
                                    iv->realtime_start_ns + (uint64_t)(b / mono_span * rt_span),
                                    (double)s->totals->cpu_busy_slice_ns[i] / 1e9};
  }
  erg_grid_add_procs_sliced(&n->grid, iv->realtime_start_ns, iv->realtime_end_ns, busy,
                            (double)s->system_cpu_ns / 1e9, procs, np, sl, ns);
  free(sl);
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

/* ---- samples held while a node's stored state loads ---- */

/* A sample of a node whose stored state is still being read: kept as
 * received, in order, and applied once the state is installed. Logged in
 * the WAL now, as applied ones are. */
static void node_hold(struct collector *c, struct node_state *n, const uint8_t *buf, size_t len,
                      uint64_t end_ns) {
  struct held_msg *h = n->nheld < NODE_HELD_MAX && c->held_bytes + len <= NODE_HELD_MAX_BYTES
                           ? malloc(sizeof *h + len)
                           : NULL;
  if (!h) {
    if (c->held_dropped++ == 0)
      erg_warn("node %s: %u samples arrived while its stored state was read; dropped "
               "(further ones only counted: erg_node_load_held_total)",
               n->name, n->nheld);
    return;
  }
  durable_log_sample(c, buf, len, end_ns);
  h->next = NULL;
  h->len = len;
  memcpy(h->data, buf, len);
  if (n->held_tail)
    n->held_tail->next = h;
  else
    n->held = h;
  n->held_tail = h;
  n->nheld++;
  c->held_total++;
  c->held_bytes += len;
}

/* The node's held samples, now that its stored state is in place. */
static void node_apply_held(struct collector *c, struct node_state *n) {
  struct held_msg *h = n->held;
  n->held = n->held_tail = NULL;
  n->nheld = 0;
  for (struct held_msg *next; h; h = next) {
    next = h->next;
    const char *why;
    Erg__Envelope *env = erg_wire_unpack(h->data, h->len, &why);
    if (env && env->body_case == ERG__ENVELOPE__BODY_SAMPLE)
      node_apply_sample(c, n, env->sample, h->data, h->len, 0);
    erg_wire_free(env);
    c->held_bytes -= h->len;
    free(h);
  }
}

/* The loader's result (node_loader_collect): the node's stored state goes
 * in (nodes.c), then the samples held meanwhile are applied. */
void node_loaded(void *user, void *tag, struct node_stored *st) {
  node_install(user, tag, st);
  node_apply_held(user, tag);
}

/* 0 when the sample may become the node's data (learnt from), -1 when
 * refused (counted, logged by ingest_refuse, nodes.c). */
static int ingest_sample_ok(struct collector *c, struct node_state *n, const Erg__Sample *s) {
  char why[300];
  uint64_t ring_ns = (uint64_t)ERG_GRID_SLOTS * c->cfg->step_seconds * ERG_NS_PER_S;
  enum ingest_reason r =
      ingest_check_sample(s, &n->ingest, erg_time_realtime_ns(), ring_ns, why, sizeof why);
  if (r != INGEST_OK) {
    ingest_refuse(c, n, n->name, r, why);
    return -1;
  }
  ingest_ref_sample(&n->ingest, s);
  c->msgs_ok++;
  return 0;
}

/* A sample's claims are checked before anything of it is kept, held or
 * logged in the WAL (ingest_sample_ok, ingest_check.c). */
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

/* An agent's hello: logged when what it says changed. */
static void ingest_hello(struct collector *c, const Erg__Hello *h) {
  char why[300];
  struct node_state *n = node_for_message(c, h->node);
  if (!n)
    return;
  enum ingest_reason r = ingest_check_hello(h, &n->ingest, why, sizeof why);
  if (r != INGEST_OK) {
    ingest_refuse(c, n, n->name, r, why);
    return;
  }
  unsigned changed = ingest_ref_hello(&n->ingest, h);
  c->msgs_ok++;
  if (changed) { /* repeats (every 60 samples) only counted: erg_agent_hellos_total */
    char line[768];
    ingest_hello_text(h, changed, line, sizeof line);
    erg_info("%s", line);
  }
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

/* The node a feed reference belongs to, once its stored state is loaded
 * (configured nodes are at start), else NULL; *shift: its lag, by which
 * the grid sees meter data moved back to when the power was drawn. */
static struct node_state *feed_ref_node(struct collector *c, const struct feed_ref *ref,
                                        uint64_t *shift) {
  struct node_state *n = collector_node(c, c->cfg->nodes[ref->node].name, 1);
  if (!n || !n->loaded)
    return NULL;
  if (shift)
    *shift = (uint64_t)(erg_lag_shift_seconds(&n->lag) * 1e9);
  return n;
}

static void collector_feed_energy(struct collector *c, int source, int channel, uint64_t t0,
                                  uint64_t t1, double joules) {
  size_t nref;
  const struct feed_ref *ref = feed_index_find(c->feeds, source, channel, &nref);
  for (size_t r = 0; r < nref; r++) {
    int f = ref[r].feed;
    uint64_t shift;
    struct node_state *n = feed_ref_node(c, &ref[r], &shift);
    if (!n)
      continue;
    double j = joules * c->cfg->nodes[ref[r].node].feeds[f].factor;
    /* The estimator sees readings as they came, the grid moved back. */
    /* A shared meter is timed once, by its group's first member. */
    if (c->cfg->lag_max_seconds && !node_lag_follows(c, n))
      erg_lag_add_energy(&n->lag, f, t0, t1, j);
    erg_grid_add_energy(&n->grid, f, t0 - shift, t1 - shift, j);
  }
}

/* Energy j of [t0, t1) from two power readings, w0 at t0 and w1 at t1:
 * fed as its two halves along the line between them (erg_power_halves). */
static void collector_feed_ramp(struct collector *c, int source, int channel, uint64_t t0,
                                uint64_t t1, double w0, double w1, double j) {
  uint64_t tm;
  double first;
  if (erg_power_halves(t0, t1, w0, w1, j, &tm, &first)) {
    collector_feed_energy(c, source, channel, t0, t1, j);
    return;
  }
  collector_feed_energy(c, source, channel, t0, tm, first);
  collector_feed_energy(c, source, channel, tm, t1, j - first);
}

/* The channel's power reading changed between two polls at t0 and t1: each
 * node it is the first feed of sees a meter update there (its load time:
 * moved back by the node's lag), for the tails' windows (tailwin.c). */
static void collector_meter_update(struct collector *c, int source, int channel, uint64_t t0,
                                   uint64_t t1) {
  size_t nref;
  const struct feed_ref *ref = feed_index_find(c->feeds, source, channel, &nref);
  for (size_t r = 0; r < nref; r++) {
    uint64_t shift;
    struct node_state *n = ref[r].feed == 0 ? feed_ref_node(c, &ref[r], &shift) : NULL;
    if (n && t0 > shift)
      erg_grid_meter_update(&n->grid, t0 - shift, t1 - shift);
  }
}

/* A power reading held from t0 until it changed by dw at t1 stood for the
 * power over that time, which moved in between as far as we know only by
 * where it went next: the hold's energy is off by about dw/2 × its length,
 * a variance of dw² (t1 − t0)² / 4 (a load that jumps once at a random
 * moment: / 12; one that moves at every instant as the samples do: / 4).
 * A meter showing the mean of n samples (its average_seconds, taken as 1-s
 * samples) moves by 1/n of each sample's news, and by its own rounding,
 * which is none: × n, between the two (n² counted the rounding n² times:
 * 2-3 × the errors of the accuracy harness's 5-s BMC mean). Each node sees
 * it moved back by its lag, as the energy. */
static void collector_sample_var(struct collector *c, int source, int channel, uint64_t t0,
                                 uint64_t t1, double dw) {
  size_t nref;
  const struct feed_ref *ref = feed_index_find(c->feeds, source, channel, &nref);
  double h = (double)(t1 - t0) / 1e9;
  for (size_t r = 0; r < nref; r++) {
    uint64_t shift;
    struct node_state *n = feed_ref_node(c, &ref[r], &shift);
    if (!n || t0 <= shift)
      continue;
    double k = c->cfg->nodes[ref[r].node].feeds[ref[r].feed].factor * dw * h,
           avg = n->lag.average_seconds > 1 ? n->lag.average_seconds : 1;
    erg_grid_add_sample_var(&n->grid, ref[r].feed, t0 - shift, t1 - shift, k * k / 4 * avg);
  }
}

/* Keeps the start of channel ch's power reading's hold; at a change (w0:
 * the value before it, NAN: no change), a power reading's hold (energy
 * counters: exact, no hold) gives its variance. A hold longer than the
 * sensor's typical one (a steady power, the same value sampled again)
 * moved only in its last sample's time. */
static void collector_hold(struct collector *c, int source, int ch,
                           const struct erg_pdu_reading *rd, double w0, bool power,
                           uint64_t max_gap) {
  struct source_state *ss = &c->sources[source];
  uint64_t since = ss->value_since_ns[ch];
  if (!isnan(w0)) {
    if (power && since && since < rd->t_ns) {
      uint64_t h = rd->t_ns - since;
      double *typ = &ss->hold_typical_seconds[ch];
      if (h <= max_gap)
        *typ = *typ > 0 ? 0.9 * *typ + 0.1 * (double)h / 1e9 : (double)h / 1e9;
      uint64_t cap = *typ > 0 ? (uint64_t)(*typ * 1e9) : max_gap;
      collector_sample_var(c, source, ch, h > cap ? rd->t_ns - cap : since, rd->t_ns,
                           rd->watts - w0);
    }
    ss->value_since_ns[ch] = rd->t_ns;
  } else if (!isfinite(rd->watts) || rd->bad_value) {
    ss->value_since_ns[ch] = 0;
  } else if (!since) {
    ss->value_since_ns[ch] = rd->t_ns;
  }
}

/* A channel that read but gave no usable energy for [t0, t1) (its power a
 * bad value, its counter standing still): its nodes' cells still come, with
 * their measured power missing, on time rather than never. */
static void collector_feed_missing(struct collector *c, int source, int channel, uint64_t t0,
                                   uint64_t t1) {
  size_t nref;
  const struct feed_ref *ref = feed_index_find(c->feeds, source, channel, &nref);
  for (size_t r = 0; r < nref; r++) {
    struct node_state *n = feed_ref_node(c, &ref[r], NULL);
    if (n)
      erg_grid_touch(&n->grid, t0, t1);
  }
}

/* Said once per channel (docs/pdu.md, "Coarse counters"): the energy of
 * this source's cells now comes from its power readings. */
static void collector_log_coarse(struct collector *c, int source, int ch,
                                 const struct erg_pdu_reading *r) {
  const struct erg_pdu_counter *pc = &c->sources[source].counters[ch];
  double cell = r->watts * c->cfg->step_seconds;
  char id[40];
  erg_warn("source %s %s %s: energy counter too coarse: one step is %.1f J at %.3f kWh, "
           "more than %.0f %% of a %u s cell at %.1f W (%.1f J); using the power readings "
           "instead (logged once; erg_meter_energy_coarse)",
           c->cfg->sources[source].name, collector_level(c, source, ch),
           collector_channel(c, source, ch, id, sizeof id), pc->resolution_joules,
           r->energy_joules / 3.6e6, ERG_PDU_COUNTER_MAX_STEP * 100, c->cfg->step_seconds, r->watts,
           cell);
}

void collector_meter(struct collector *c, const struct meter_msg *m) {
  if (m->source < 0 || m->source >= c->cfg->nsources)
    return;
  durable_log_meter(c, m);
  struct meter_msg checked; /* m without values outside the channel's range */
  m = meter_check(c, m, &checked);
  struct source_state *ss = &c->sources[m->source];
  char id[40];
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
    double w0 = ss->counters[ch].prev_watts; /* the previous reading's, for a ramp */
    uint64_t prev_t = ss->counters[ch].have_prev ? ss->counters[ch].last_t_ns : 0;
    enum erg_pdu_delta_kind k =
        erg_pdu_counter_update(&ss->counters[ch], &m->readings[ch], gap, &t0, &t1, &j);
    if (k == ERG_PDU_DELTA_RESET) {
      ss->energy_resets[ch]++;
      if (!ss->reset_logged[ch])
        erg_warn("source %s %s %s: energy counter went back (reset?); interval skipped "
                 "(logged once until it counts up again; erg_meter_energy_resets_total)",
                 name, collector_level(c, m->source, ch),
                 collector_channel(c, m->source, ch, id, sizeof id));
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
      erg_info("source %s %s %s: energy counter stood still for %.1f s and there is no "
               "power reading: each move's energy is spread over the time since the previous "
               "one, cells wait up to %llu s for it (logged once; "
               "erg_meter_energy_held_polls_total)",
               name, collector_level(c, m->source, ch),
               collector_channel(c, m->source, ch, id, sizeof id),
               ss->counters[ch].last_held_seconds, (unsigned long long)(hold_max / ERG_NS_PER_S));
    }
    const struct erg_pdu_reading *rd = &m->readings[ch];
    bool changed = prev_t && rd->t_ns > prev_t && isfinite(w0) && isfinite(rd->watts) &&
                   rd->watts != w0 && !rd->bad_value;
    if (changed)
      collector_meter_update(c, m->source, ch, prev_t, rd->t_ns);
    collector_hold(c, m->source, ch, rd, changed ? w0 : NAN, k == ERG_PDU_DELTA_POWER, max_gap);
    ss->bad_values[ch] += rd->bad_value;
    ss->power_estimated[ch] = isfinite(rd->watts) && rd->power_source == ERG_PDU_W_ESTIMATED;
    if (ss->power_estimated[ch] && !ss->estimated_logged[ch]) {
      ss->estimated_logged[ch] = true;
      double pf = c->cfg->sources[m->source].power_factor;
      erg_warn("source %s %s %s: the PDU gives no active power here; power is estimated as "
               "A x V (or VA) x power_factor %.2f, cells flagged 32 (logged once; "
               "erg_meter_power_estimated)",
               name, collector_level(c, m->source, ch),
               collector_channel(c, m->source, ch, id, sizeof id), pf > 0 ? pf : 1.0);
    }
    if (k == ERG_PDU_DELTA_POWER && meter_check_interval(c, m->source, ch, t0, t1, j))
      collector_feed_ramp(c, m->source, ch, t0, t1, w0, rd->watts, j);
    else if (k == ERG_PDU_DELTA_ENERGY && meter_check_interval(c, m->source, ch, t0, t1, j))
      collector_feed_energy(c, m->source, ch, t0, t1, j);
    else if (k == ERG_PDU_DELTA_NONE && rd->bad_value && rd->t_ns > 0)
      collector_feed_missing(c, m->source, ch, rd->t_ns - (uint64_t)(c->cfg->poll_seconds * 1e9),
                             rd->t_ns);
  }
}

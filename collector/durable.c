// SPDX-License-Identifier: GPL-3.0-or-later
/* The write-ahead log around ergd's loop (wal.c holds the file format):
 * every input that may still feed an open cell is logged before it is
 * applied and replayed on the next start, and the energy counters resume
 * from the logged readings, so a restart's gap is bridged by the counter
 * difference — measured, not estimated (docs/architecture.md
 * "Durability"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"

/* A meter record: this head, then nchannels readings, then nchannels
 * counter moduli (a struct meter_msg has room for 64 channels: 3.3 kB per
 * poll, where one outlet takes 56 bytes). The layout number changes with
 * the structs, so another build's records are never misread. */
struct durable_meter_head {
  int32_t source, nchannels;
  double poll_seconds;
};
#define DURABLE_LAYOUT                                                                             \
  ((uint32_t)(sizeof(struct durable_meter_head) * 256 + sizeof(struct erg_pdu_reading)) |          \
   0x20000000u)

static int64_t ceil_seconds(uint64_t ns) {
  return (int64_t)((ns + ERG_NS_PER_S - 1) / ERG_NS_PER_S);
}

static void durable_append_meter(struct collector *c, int type, const struct meter_msg *m,
                                 int64_t data_s) {
  size_t n = (size_t)(m->nchannels < ERG_PDU_MAX_CHANNELS ? m->nchannels : ERG_PDU_MAX_CHANNELS);
  uint8_t buf[sizeof(struct durable_meter_head) +
              ERG_PDU_MAX_CHANNELS * (sizeof(struct erg_pdu_reading) + sizeof(double))];
  struct durable_meter_head h = {m->source, (int32_t)n, m->poll_seconds};
  size_t off = sizeof h;
  memcpy(buf, &h, sizeof h);
  memcpy(buf + off, m->readings, n * sizeof m->readings[0]);
  off += n * sizeof m->readings[0];
  memcpy(buf + off, m->wrap_joules, n * sizeof m->wrap_joules[0]);
  wal_append(c->wal, type, buf, off + n * sizeof m->wrap_joules[0], data_s);
}

/* Back into a meter_msg; 0, or -1 when the record does not add up. */
static int durable_parse_meter(const uint8_t *data, size_t len, struct meter_msg *m) {
  struct durable_meter_head h;
  if (len < sizeof h)
    return -1;
  memcpy(&h, data, sizeof h);
  size_t n = (size_t)h.nchannels, per = sizeof m->readings[0] + sizeof m->wrap_joules[0];
  if (h.nchannels < 0 || h.nchannels > ERG_PDU_MAX_CHANNELS || len != sizeof h + n * per)
    return -1;
  memset(m, 0, sizeof *m);
  m->source = h.source;
  m->nchannels = h.nchannels;
  m->poll_seconds = h.poll_seconds;
  memcpy(m->readings, data + sizeof h, n * sizeof m->readings[0]);
  memcpy(m->wrap_joules, data + sizeof h + n * sizeof m->readings[0], n * sizeof m->wrap_joules[0]);
  /* Records written before readings said where their watts came from hold
   * padding there: anything unknown reads as measured. */
  for (size_t i = 0; i < n; i++)
    if (m->readings[i].power_source > ERG_PDU_W_ESTIMATED)
      m->readings[i].power_source = ERG_PDU_W_MEASURED;
  return 0;
}

/* A segment holds the last reading of each source, so deleting the older
 * segments never loses the counters' state. */
static void durable_log_state(struct collector *c) {
  for (int i = 0; c->last_meter && i < c->cfg->nsources; i++)
    if (c->last_meter[i].nchannels > 0)
      durable_append_meter(c, WAL_METER_STATE, &c->last_meter[i], INT64_MIN);
}

/* A counter that has no reading yet starts from the logged one. */
static void durable_meter_state(struct collector *c, const struct meter_msg *m) {
  if (m->source < 0 || m->source >= c->cfg->nsources)
    return;
  struct source_state *ss = &c->sources[m->source];
  for (int ch = 0; ch < m->nchannels && ch < ERG_PDU_MAX_CHANNELS; ch++) {
    uint64_t t0, t1;
    double j;
    if (ss->counters[ch].have_prev)
      continue;
    ss->counters[ch].wrap_joules = m->wrap_joules[ch];
    ss->counters[ch].horizon_seconds = c->cfg->step_seconds;
    erg_pdu_counter_update(&ss->counters[ch], &m->readings[ch], 0, &t0, &t1, &j);
  }
  durable_log_meter(c, m);
}

/* Inputs older than this at start are not replayed: their cells would lie
 * far behind, and a grid holding data closes every cell from there to now
 * one by one (erg_grid_finalize), so a week-long stop would hold up the
 * loop for as long. An hour is what an agent's default queue holds. */
#define DURABLE_REPLAY_MAX_AGE_SECONDS 3600

/* The loop's input functions, as durable_open was handed them. */
struct durable_replay {
  struct collector *c;
  durable_sample_fn sample;
  durable_meter_fn meter;
};

static void durable_record(void *user, int type, int64_t data_s, const uint8_t *data, size_t len) {
  const struct durable_replay *rp = user;
  struct collector *c = rp->c;
  if (type != WAL_METER_STATE && data_s < c->replay_oldest_s) {
    c->replay_stale++;
    return;
  }
  struct meter_msg m;
  if (type == WAL_AGENT)
    rp->sample(c, data, len);
  else if (type == WAL_METER && durable_parse_meter(data, len, &m) == 0)
    rp->meter(c, &m);
  else if (type == WAL_METER_STATE && durable_parse_meter(data, len, &m) == 0)
    durable_meter_state(c, &m);
}

void durable_open(struct collector *c, durable_sample_fn sample, durable_meter_fn meter) {
  const struct erg_collector_config *cfg = c->cfg;
  char dir[1100], why[300];
  if (!cfg->wal)
    return;
  if (cfg->wal_dir[0])
    erg_strlcpy(dir, cfg->wal_dir, sizeof dir);
  else
    snprintf(dir, sizeof dir, "%s/wal", cfg->data_dir);
  c->last_meter = calloc((size_t)cfg->nsources + 1, sizeof *c->last_meter);
  c->wal = c->last_meter ? wal_open(dir, DURABLE_LAYOUT, (uint64_t)cfg->wal_max_bytes,
                                    cfg->wal_fsync, why, sizeof why)
                         : NULL;
  if (!c->wal) {
    erg_warn("no write-ahead log: %s", c->last_meter ? why : "out of memory");
    return;
  }
  c->replaying = 1;
  c->replay_oldest_s =
      (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S) - DURABLE_REPLAY_MAX_AGE_SECONDS;
  uint64_t t0 = erg_time_monotonic_ns();
  struct durable_replay rp = {c, sample, meter};
  wal_replay(c->wal, durable_record, &rp);
  c->replaying = 0;
  struct wal_stats st;
  wal_stats(c->wal, &st);
  if (st.replayed)
    erg_info("replayed %llu inputs from the write-ahead log in %s in %.3f s (%llu older than "
             "%d s skipped)",
             (unsigned long long)(st.replayed - c->replay_stale), dir,
             (double)(erg_time_monotonic_ns() - t0) / 1e9, (unsigned long long)c->replay_stale,
             DURABLE_REPLAY_MAX_AGE_SECONDS);
  /* Replayed data for cells stored before the stop is expected, not late. */
  for (size_t i = 0; i < c->nnodes; i++)
    c->nodes[i]->grid.late_seconds_dropped = 0;
  for (int s = 0; s < cfg->nsources; s++)
    for (int ch = 0; ch < ERG_PDU_MAX_CHANNELS; ch++)
      c->sources[s].bridge[ch] = c->sources[s].counters[ch].have_prev;
  if (wal_start(c->wal, (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S)) == 0)
    durable_log_state(c);
}

void durable_log_sample(struct collector *c, const uint8_t *buf, size_t len, uint64_t end_ns) {
  if (c->wal && !c->replaying)
    wal_append(c->wal, WAL_AGENT, buf, len, ceil_seconds(end_ns));
}

void durable_log_meter(struct collector *c, const struct meter_msg *m) {
  if (!c->last_meter)
    return;
  uint64_t t = 0;
  for (int ch = 0; ch < m->nchannels && ch < ERG_PDU_MAX_CHANNELS; ch++)
    if (m->readings[ch].ok && m->readings[ch].t_ns > t)
      t = m->readings[ch].t_ns;
  if (!t)
    return; /* nothing any counter would take */
  if (!c->replaying)
    durable_append_meter(c, WAL_METER, m, ceil_seconds(t));
  /* Per channel: a round where one outlet failed keeps its last reading. */
  struct meter_msg *last = &c->last_meter[m->source];
  last->source = m->source;
  last->error[0] = '\0';
  for (int ch = 0; ch < m->nchannels && ch < ERG_PDU_MAX_CHANNELS; ch++)
    if (m->readings[ch].ok) {
      last->readings[ch] = m->readings[ch];
      last->wrap_joules[ch] = m->wrap_joules[ch];
      if (ch >= last->nchannels)
        last->nchannels = ch + 1;
    }
}

/* The first reading after a replay may span the restart: an energy
 * counter's difference is the energy drawn over it, however long, up to
 * the grid's ring (older cells cannot take it anyway). Instantaneous
 * watts cannot bridge it. */
uint64_t durable_meter_gap(struct collector *c, int s, int ch, const struct erg_pdu_reading *r,
                           uint64_t max_gap_ns) {
  struct source_state *ss = &c->sources[s];
  if (!ss->bridge[ch] || c->replaying || !r->ok)
    return max_gap_ns;
  ss->bridge[ch] = false;
  uint64_t ring_ns = (uint64_t)c->cfg->step_seconds * ERG_GRID_SLOTS * ERG_NS_PER_S;
  if (isnan(r->energy_joules) || isnan(ss->counters[ch].prev_joules) || ring_ns < max_gap_ns)
    return max_gap_ns;
  return ring_ns;
}

/* Segments go once every node has finalised past their data. */
void durable_tick(struct collector *c, int64_t now) {
  if (!c->wal)
    return;
  int64_t done = INT64_MAX;
  for (size_t i = 0; i < c->nnodes; i++) {
    int64_t nf = c->nodes[i]->grid.next_final;
    if (nf && nf < done)
      done = nf;
  }
  if (done == INT64_MAX)
    done = INT64_MIN;
  if (wal_tick(c->wal, now, done, c->cfg->step_seconds))
    durable_log_state(c);
}

void durable_close(struct collector *c) {
  wal_close(c->wal);
  c->wal = NULL;
  free(c->last_meter);
  c->last_meter = NULL;
}

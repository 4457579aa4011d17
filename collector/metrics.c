// SPDX-License-Identifier: GPL-3.0-or-later
/* /metrics in the Prometheus text format (docs/metrics in docs/web.md).
 * The loop renders the body once a second; the per-key energy counters,
 * the large part on a big cluster, only after cells were written. The HTTP
 * thread copies the last bodies. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "erg_fit.h"
#include "erg_store.h"
#include "state.h"

/* Prometheus label values escape backslash, quote and newline, and must
 * be UTF-8: a scrape with one broken byte (a process name is bytes) is
 * rejected whole, so broken sequences become '?'. Other control bytes go. */
static void metrics_label(FILE *f, const char *v) {
  for (size_t i = 0, n = strlen(v); i < n;) {
    unsigned char c = (unsigned char)v[i];
    size_t len = erg_utf8_len(v + i, n - i);
    if (c == '\\' || c == '"')
      fprintf(f, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", f);
    else if (!len)
      fputc('?', f);
    else if (c >= 0x20 && c != 0x7f)
      fwrite(v + i, 1, len, f);
    i += len ? len : 1;
  }
}

static void metrics_head(FILE *f, const char *name, const char *type, const char *help) {
  fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* "VALUE\n", VALUE as Prometheus reads it back exactly: the shortest of
 * %.15g..%.17g that round-trips, so integers print as integers and a
 * timestamp keeps its seconds (%.6g put 1795712345 at 1.79571e+09, up to
 * 5,000 s off). */
static void metrics_num(FILE *f, double v) {
  char buf[40];
  if (isnan(v) || isinf(v)) {
    fputs(isnan(v) ? "NaN\n" : v > 0 ? "+Inf\n" : "-Inf\n", f);
    return;
  }
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (strtod(buf, NULL) == v)
      break;
  }
  fprintf(f, "%s\n", buf);
}

static void metrics_node_label(FILE *f, const char *name, const struct node_state *n) {
  fprintf(f, "%s{node=\"", name);
  metrics_label(f, n->name);
  fputc('"', f);
}

/* A double field of every node; NAN (not known yet) is left out. */
static void metrics_node_gauge(FILE *f, struct collector *c, const char *name, const char *help,
                               size_t off) {
  metrics_head(f, name, "gauge", help);
  for (size_t i = 0; i < c->nnodes; i++) {
    double v = *(const double *)((const char *)c->nodes[i] + off);
    if (isnan(v))
      continue;
    metrics_node_label(f, name, c->nodes[i]);
    fputs("} ", f);
    metrics_num(f, v);
  }
}

/* A uint64_t field of every node, with an optional extra label
 * ("reason=\"late\""); head 0 continues the previous family. */
static void metrics_node_counter(FILE *f, struct collector *c, const char *name, const char *help,
                                 const char *label, size_t off) {
  if (help)
    metrics_head(f, name, "counter", help);
  for (size_t i = 0; i < c->nnodes; i++) {
    uint64_t v = *(const uint64_t *)((const char *)c->nodes[i] + off);
    metrics_node_label(f, name, c->nodes[i]);
    fprintf(f, "%s%s} %llu\n", label ? "," : "", label ? label : "", (unsigned long long)v);
  }
}

/* A uint64_t counter of the nodes whose agent is on the eBPF path (others
 * have no such series), scaled (ns -> seconds: 1e-9). */
static void metrics_node_bpf(FILE *f, struct collector *c, const char *name, const char *help,
                             size_t off, double scale) {
  metrics_head(f, name, "counter", help);
  for (size_t i = 0; i < c->nnodes; i++) {
    if (!c->nodes[i]->has_bpf)
      continue;
    uint64_t v = *(const uint64_t *)((const char *)c->nodes[i] + off);
    metrics_node_label(f, name, c->nodes[i]);
    fputs("} ", f);
    if (scale == 1)
      fprintf(f, "%llu\n", (unsigned long long)v);
    else
      metrics_num(f, (double)v * scale);
  }
}

static void metrics_bpf_health(FILE *f, struct collector *c) {
  metrics_node_bpf(f, c, "erg_agent_bpf_map_full_drops_total",
                   "Events the agent's eBPF programs lost because the process map was full.",
                   offsetof(struct node_state, bpf_map_full_drops), 1);
  metrics_node_bpf(f, c, "erg_agent_bpf_lost_exit_seconds_total",
                   "CPU time of exiting threads charged after their process's final record.",
                   offsetof(struct node_state, bpf_lost_exit_ns), 1e-9);
  metrics_node_bpf(f, c, "erg_agent_bpf_unseen_switches_total",
                   "Context switches whose switch-in the sched_switch tracepoint missed (CPU still "
                   "exact; perf deltas of the slice dropped).",
                   offsetof(struct node_state, bpf_unseen_switches), 1);
  metrics_node_bpf(f, c, "erg_agent_bpf_unsettled_rereads_total",
                   "Drain re-reads that never saw a process's running slices consistently.",
                   offsetof(struct node_state, bpf_unsettled), 1);
}

/* A double energy counter (joules) of every node. */
static void metrics_node_joules(FILE *f, struct collector *c, const char *name, const char *help,
                                size_t off) {
  metrics_head(f, name, "counter", help);
  for (size_t i = 0; i < c->nnodes; i++) {
    double v = *(const double *)((const char *)c->nodes[i] + off);
    metrics_node_label(f, name, c->nodes[i]);
    fputs("} ", f);
    metrics_num(f, v);
  }
}

static void metrics_sources(FILE *f, struct collector *c) {
  metrics_head(f, "erg_source_poll_errors_total", "counter", "Failed meter/PDU polls.");
  for (int i = 0; i < c->cfg->nsources; i++) {
    fputs("erg_source_poll_errors_total{source=\"", f);
    metrics_label(f, c->cfg->sources[i].name);
    fprintf(f, "\"} %llu\n", (unsigned long long)c->sources[i].errors);
  }
  fprintf(f, "# HELP erg_source_polls_total Meter/PDU polls, failed or not.\n"
             "# TYPE erg_source_polls_total counter\n");
  for (int i = 0; i < c->cfg->nsources; i++) {
    fputs("erg_source_polls_total{source=\"", f);
    metrics_label(f, c->cfg->sources[i].name);
    fprintf(f, "\"} %llu\n", (unsigned long long)c->sources[i].polls);
  }
  fprintf(f, "# HELP erg_source_poll_duration_seconds Last poll: request to answer, or to "
             "giving up.\n# TYPE erg_source_poll_duration_seconds gauge\n");
  for (int i = 0; i < c->cfg->nsources; i++) {
    if (!c->sources[i].polls)
      continue;
    fputs("erg_source_poll_duration_seconds{source=\"", f);
    metrics_label(f, c->cfg->sources[i].name);
    fputs("\"} ", f);
    metrics_num(f, c->sources[i].poll_seconds);
  }
}

/* One per-channel family of the meters' channels; which: 0 coarse
 * (gauge), 1 resolution (gauge), 2 intervals the watts replaced it, 3 polls
 * held for its next move (counters), 4 power estimated (gauge), 5 polls
 * with a value that was no reading, 6 counter resets, 7 values outside the
 * channel's range (counters). Labels:
 * source, level (outlet, inlet, phase, bank, device, sensor), index. */
static void metrics_meter_family(FILE *f, struct collector *c, const char *name, const char *type,
                                 const char *help, int which) {
  metrics_head(f, name, type, help);
  for (int i = 0; i < c->cfg->nsources; i++)
    for (int ch = 0; ch < c->sources[i].nchannels; ch++) {
      const struct erg_pdu_counter *pc = &c->sources[i].counters[ch];
      if (which == 1 && !(pc->resolution_joules > 0))
        continue;
      fprintf(f, "%s{source=\"", name);
      metrics_label(f, c->cfg->sources[i].name);
      fprintf(f, "\",level=\"%s\",index=\"%d\"", collector_level(c, i, ch),
              collector_outlet(c, i, ch));
      /* A daisy chain's unit tells two channels of one number apart. */
      if (ch < c->cfg->sources[i].nchannels && c->cfg->sources[i].units[ch][0])
        fprintf(f, ",unit=\"%s\"", c->cfg->sources[i].units[ch]);
      fprintf(f, "} ");
      if (which == 4)
        fprintf(f, "%d\n", c->sources[i].power_estimated[ch] ? 1 : 0);
      else if (which == 5)
        fprintf(f, "%llu\n", (unsigned long long)c->sources[i].bad_values[ch]);
      else if (which == 6)
        fprintf(f, "%llu\n", (unsigned long long)c->sources[i].energy_resets[ch]);
      else if (which == 7)
        fprintf(f, "%llu\n", (unsigned long long)c->sources[i].out_of_range[ch]);
      else if (which == 0)
        fprintf(f, "%d\n", pc->coarse ? 1 : 0);
      else if (which == 1)
        metrics_num(f, pc->resolution_joules);
      else if (which == 2)
        fprintf(f, "%llu\n", (unsigned long long)pc->coarse_intervals);
      else
        fprintf(f, "%llu\n", (unsigned long long)pc->held_polls);
    }
}

static void metrics_meters(FILE *f, struct collector *c) {
  metrics_meter_family(f, c, "erg_meter_energy_coarse", "gauge",
                       "1 while the channel's energy counter steps by more than 5 % of a "
                       "cell's energy at its power, and the power readings are used.",
                       0);
  metrics_meter_family(f, c, "erg_meter_energy_resolution_joules", "gauge",
                       "One step of the channel's energy counter at its current reading "
                       "(float32 spacing, integer unit or smallest move seen).",
                       1);
  metrics_meter_family(f, c, "erg_meter_energy_fallback_intervals_total", "counter",
                       "Meter intervals whose energy came from the power readings because "
                       "the counter was too coarse.",
                       2);
  metrics_meter_family(f, c, "erg_meter_energy_held_polls_total", "counter",
                       "Readings of a channel without power readings whose energy counter "
                       "had not moved: its next move is spread over the time since the "
                       "previous one.",
                       3);
  metrics_meter_family(f, c, "erg_meter_power_estimated", "gauge",
                       "1 while the channel's power is estimated as A x V (or VA) x the "
                       "configured power_factor because the PDU gives no active power there.",
                       4);
  metrics_meter_family(f, c, "erg_meter_bad_values_total", "counter",
                       "Polls in which the device sent a value that is no reading (wrong "
                       "type, negative SNMP value, NaN): read as missing, logged once.",
                       5);
  metrics_meter_family(f, c, "erg_meter_energy_resets_total", "counter",
                       "Times the energy counter went back (PDU reboot, meter reset): the "
                       "interval was skipped.",
                       6);
  metrics_meter_family(f, c, "erg_meter_out_of_range_total", "counter",
                       "Values outside the channel's physical range (power below 0 or above "
                       "max_watts, a negative energy counter, a counter move meaning more than "
                       "max_watts): dropped, logged once.",
                       7);
}

static void metrics_nodes(FILE *f, struct collector *c) {
  metrics_node_gauge(f, c, "erg_node_measured_watts", "Measured mean power of the last cell.",
                     offsetof(struct node_state, last_measured_watts));
  metrics_node_gauge(f, c, "erg_node_idle_watts", "Idle power of the last cell.",
                     offsetof(struct node_state, last_idle_watts));
  metrics_node_gauge(f, c, "erg_node_modelled_watts",
                     "The node model's prediction for the last cell (no model: absent).",
                     offsetof(struct node_state, last_modelled_watts));
  metrics_node_gauge(f, c, "erg_node_lag_seconds",
                     "Estimated delay between node activity and its meter reading.",
                     offsetof(struct node_state, lag_seconds));
  metrics_node_gauge(f, c, "erg_node_lag_shift_seconds",
                     "How far the meter's data are moved back: the lag with its fraction of a "
                     "second, plus half an averaging meter's window.",
                     offsetof(struct node_state, lag_shift_seconds));
  metrics_node_gauge(f, c, "erg_node_lag_correlation",
                     "Correlation of power with the node's activity (CPU time, and disk "
                     "bytes where they add) at the estimated lag.",
                     offsetof(struct node_state, lag_correlation));
  metrics_node_gauge(f, c, "erg_node_lag_confidence",
                     "Correlation margin of the estimated lag over the best lag 2 s or more "
                     "away.",
                     offsetof(struct node_state, lag_confidence));
  metrics_node_gauge(f, c, "erg_node_tail_window_seconds",
                     "Window of the utilisation curve's tails ergd chose by the fit's held-out "
                     "residual (0: the agent's busy-time slices as they came; absent before a "
                     "choice or without slices).",
                     offsetof(struct node_state, tail_window_seconds));
  metrics_node_gauge(f, c, "erg_node_meter_update_seconds",
                     "Update period of the node's meter as ergd sees its power reading change.",
                     offsetof(struct node_state, meter_update_seconds));
  metrics_node_counter(f, c, "erg_node_lag_changes_total",
                       "Changes of an established lag estimate.", NULL,
                       offsetof(struct node_state, lag.changes));
  metrics_node_counter(f, c, "erg_node_lag_unsure_cells_total",
                       "Cells journalled with flag 16: aligned before a confident lag estimate "
                       "or around a change of it.",
                       NULL, offsetof(struct node_state, lag_unsure_cells));
  metrics_node_counter(f, c, "erg_node_lag_unresolved_cells_total",
                       "Cells aligned without a lag estimate and not flagged: the meter's energy "
                       "came in intervals longer than 2.5 s, too coarse to time a lag.",
                       NULL, offsetof(struct node_state, lag_unresolved_cells));
  metrics_node_joules(f, c, "erg_node_measured_energy_joules_total",
                      "Measured energy of the node's final cells (cells with a reading).",
                      offsetof(struct node_state, measured_joules));
  metrics_node_joules(f, c, "erg_node_idle_energy_joules_total",
                      "Idle part of the node's attributed energy.",
                      offsetof(struct node_state, idle_joules));
  metrics_node_joules(f, c, "erg_node_dynamic_energy_joules_total",
                      "Dynamic energy (total - idle) of cells with agent data, attributed to "
                      "profile keys.",
                      offsetof(struct node_state, dynamic_joules));
  metrics_node_joules(f, c, "erg_node_no_agent_energy_joules_total",
                      "Dynamic energy of cells without agent data (no keys to attribute to); "
                      "part of the report's [unattributed].",
                      offsetof(struct node_state, unattributed_joules));
  /* The same counter under its first name, which reads like the report's
   * wider [unattributed] (docs/report.md): kept for existing scrapes. */
  metrics_node_joules(f, c, "erg_node_unattributed_energy_joules_total",
                      "Deprecated: erg_node_no_agent_energy_joules_total under its old name.",
                      offsetof(struct node_state, unattributed_joules));
  metrics_head(f, "erg_agent_last_seen_timestamp_seconds", "gauge",
               "Last sample from the node's agent.");
  for (size_t i = 0; i < c->nnodes; i++) {
    if (!c->nodes[i]->last_seen_ns)
      continue;
    metrics_node_label(f, "erg_agent_last_seen_timestamp_seconds", c->nodes[i]);
    fputs("} ", f);
    metrics_num(f, c->nodes[i]->last_seen_ns / 1e9);
  }
  metrics_node_counter(f, c, "erg_agent_dropped_samples_total",
                       "Samples agents reported as dropped.", NULL,
                       offsetof(struct node_state, dropped_samples));
  metrics_bpf_health(f, c);
  metrics_node_counter(f, c, "erg_agent_user_names_sanitized_total",
                       "User names from the node's agent stored changed to be shown "
                       "(control bytes, invalid UTF-8, a leading '[', over 64 bytes).",
                       NULL, offsetof(struct node_state, user_names_sanitized));
  metrics_node_counter(f, c, "erg_agent_user_names_dropped_total",
                       "Received user names not kept: the node already had 4096 uids named.", NULL,
                       offsetof(struct node_state, user_names_dropped));
  metrics_node_counter(f, c, "erg_agent_overlapping_samples_total",
                       "Samples refused because their node had already reported that time.", NULL,
                       offsetof(struct node_state, overlap_samples));
  metrics_node_counter(f, c, "erg_samples_resent_duplicate_total",
                       "Samples an agent sent again after a reconnect that the node already "
                       "had (no-ops).",
                       NULL, offsetof(struct node_state, resent_duplicates));
  metrics_node_counter(f, c, "erg_grid_dropped_seconds_total",
                       "Input seconds that arrived after their cell was final (late) or too far "
                       "ahead (future).",
                       "reason=\"late\"", offsetof(struct node_state, grid.late_seconds_dropped));
  metrics_node_counter(f, c, "erg_grid_dropped_seconds_total", NULL, "reason=\"future\"",
                       offsetof(struct node_state, grid.future_seconds_dropped));
  metrics_node_counter(f, c, "erg_cells_out_of_training_range_total",
                       "Cells in which a node feature (or its CPU utilisation) was beyond the "
                       "largest value the node's model was trained on; linear terms were "
                       "extrapolated, the utilisation curve continued with its end slope.",
                       NULL, offsetof(struct node_state, out_of_range_cells));
}

/* Hellos: agents say one every 60 samples; only a node's first and those
 * that changed are logged (ingest_ref_hello), all are counted here. */
static void metrics_hellos(FILE *f, struct collector *c) {
  unsigned long long fresh = 0, repeat = 0;
  for (size_t i = 0; i < c->nnodes; i++) {
    fresh += c->nodes[i]->ingest.hellos_new;
    repeat += c->nodes[i]->ingest.hellos_repeated;
  }
  fprintf(f,
          "# HELP erg_agent_hellos_total Agent hellos accepted: a node's first or one that "
          "changed (version, features, CPUs, boot id, collection, agent restarted; logged: "
          "new), or like the node's last (only counted: repeat).\n"
          "# TYPE erg_agent_hellos_total counter\n"
          "erg_agent_hellos_total{kind=\"new\"} %llu\n"
          "erg_agent_hellos_total{kind=\"repeat\"} %llu\n",
          fresh, repeat);
}

/* The write-ahead log (durable.c); absent with wal = no. */
static void metrics_wal(FILE *f, struct collector *c) {
  struct wal_stats st;
  if (!c->wal)
    return;
  wal_stats(c->wal, &st);
  fprintf(f,
          "# HELP erg_wal_records_total Write-ahead log records: appended, replayed at "
          "start, stale (older than an hour at start: not replayed), dropped (log full or "
          "write error), torn (cut or corrupt, found at replay).\n"
          "# TYPE erg_wal_records_total counter\n"
          "erg_wal_records_total{result=\"appended\"} %llu\n"
          "erg_wal_records_total{result=\"replayed\"} %llu\n"
          "erg_wal_records_total{result=\"stale\"} %llu\n"
          "erg_wal_records_total{result=\"dropped\"} %llu\n"
          "erg_wal_records_total{result=\"torn\"} %llu\n",
          (unsigned long long)st.appended, (unsigned long long)(st.replayed - c->replay_stale),
          (unsigned long long)c->replay_stale, (unsigned long long)(st.dropped + st.errors),
          (unsigned long long)st.torn);
  fprintf(f,
          "# HELP erg_wal_bytes Size of the write-ahead log's segments.\n"
          "# TYPE erg_wal_bytes gauge\nerg_wal_bytes %llu\n",
          (unsigned long long)st.bytes);
}

/* One family of the installed models' held-out quality (`erg fit`'s
 * validation); nodes without a model are left out. */
static void metrics_model_family(FILE *f, struct collector *c, const char *name, const char *help,
                                 const char *label, size_t off, double scale) {
  if (help)
    metrics_head(f, name, "gauge", help);
  for (size_t i = 0; i < c->nnodes; i++) {
    const struct erg_model *m = node_model_cell(c->nodes[i]->model).model;
    double v = m ? *(const double *)((const char *)m + off) : NAN;
    if (!isfinite(v))
      continue;
    metrics_node_label(f, name, c->nodes[i]);
    fprintf(f, "%s%s} ", label ? "," : "", label ? label : "");
    metrics_num(f, v * scale);
  }
}

static void metrics_models(FILE *f, struct collector *c) {
  metrics_model_family(f, c, "erg_node_model_heldout_mape_ratio",
                       "Held-out mean absolute percentage error of the node's model, as a "
                       "ratio, on total power and on dynamic power (P - idle).",
                       "kind=\"total\"", offsetof(struct erg_model, metrics.mape_total_percent),
                       0.01);
  metrics_model_family(f, c, "erg_node_model_heldout_mape_ratio", NULL, "kind=\"dynamic\"",
                       offsetof(struct erg_model, metrics.mape_dynamic_percent), 0.01);
  metrics_model_family(f, c, "erg_node_model_heldout_rmse_watts",
                       "Held-out root mean square error of the node's model.", NULL,
                       offsetof(struct erg_model, metrics.rmse_watts), 1);
  metrics_model_family(f, c, "erg_node_model_heldout_r2",
                       "Held-out coefficient of determination of the node's model.", NULL,
                       offsetof(struct erg_model, metrics.r2), 1);
  metrics_model_family(f, c, "erg_node_model_idle_watts", "The node model's idle power.", NULL,
                       offsetof(struct erg_model, idle_watts), 1);
  metrics_model_family(f, c, "erg_node_model_created_timestamp_seconds",
                       "When the node's installed model was fitted.", NULL,
                       offsetof(struct erg_model, created_unix_seconds), 1);
  metrics_head(f, "erg_node_model_refused_total", "counter",
               "Model files and refits not installed as beyond bounds (absurd idle power or "
               "coefficients, above the meters' range or the power measured; the log says why).");
  for (size_t i = 0; i < c->nnodes; i++) {
    metrics_node_label(f, "erg_node_model_refused_total", c->nodes[i]);
    fprintf(f, "} %llu\n", (unsigned long long)node_model_refused(c->nodes[i]->model));
  }
}

/* Per-key and per-job power and energy: one series per known key, so the
 * count is bounded by nodes x kinds x known keys (docs/architecture.md
 * "/metrics"). */
/* off: the known key's value; off_var, where not 0: with off the linear
 * sd of an interval, and this its variance: the family is its 95 %
 * half-width 1.96 √(sd² + var). */
static void metrics_key_family(FILE *f, struct collector *c, const char *name, const char *type,
                               const char *help, size_t off, size_t off_var) {
  metrics_head(f, name, type, help);
  for (size_t i = 0; i < c->nnodes; i++)
    for (int k = 0; k < PROFILE_NKINDS; k++) {
      const struct profile_known *kn = &c->nodes[i]->known[k];
      for (size_t j = 0; j < kn->n; j++) {
        metrics_node_label(f, name, c->nodes[i]);
        fprintf(f, ",kind=\"%s\",key=\"", profile_kind_names[k]);
        metrics_label(f, kn->keys[j].key);
        /* User keys are uids; the name the node gave it, uid as fallback. */
        if (k == PROFILE_USER) {
          const char *u = user_names_get(&c->nodes[i]->user_names, kn->keys[j].key);
          fputs("\",user=\"", f);
          metrics_label(f, u ? u : kn->keys[j].key);
        }
        fputs("\"} ", f);
        double v = *(const double *)((const char *)&kn->keys[j] + off);
        if (off_var) {
          double var = *(const double *)((const char *)&kn->keys[j] + off_var);
          v = ERG_UNC_Z95 * sqrt(v * v + (var > 0 ? var : 0));
        }
        metrics_num(f, v);
      }
    }
}

static void metrics_job_family(FILE *f, struct collector *c, const char *name, const char *type,
                               const char *help, size_t off) {
  metrics_head(f, name, type, help);
  for (size_t j = 0; j < c->cluster_jobs.n; j++) {
    fprintf(f, "%s{job=\"", name);
    metrics_label(f, c->cluster_jobs.keys[j].key);
    fputs("\"} ", f);
    metrics_num(f, *(const double *)((const char *)&c->cluster_jobs.keys[j] + off));
  }
}

/* Half the 95 % interval of each node's erg_node_dynamic_energy_joules_total
 * (docs/model.md, "Uncertainty"), where ergd computes intervals. */
static void metrics_node_uncertainty(FILE *f, struct collector *c) {
  if (!c->cfg->energy_intervals)
    return;
  metrics_head(f, "erg_node_dynamic_energy_uncertainty_joules", "gauge",
               "Half width of the 95 % interval of erg_node_dynamic_energy_joules_total (same "
               "node, same period).");
  for (size_t i = 0; i < c->nnodes; i++) {
    const struct node_state *n = c->nodes[i];
    double var = n->dynamic_var_joules2 > 0 ? n->dynamic_var_joules2 : 0;
    metrics_node_label(f, "erg_node_dynamic_energy_uncertainty_joules", n);
    fputs("} ", f);
    metrics_num(f, ERG_UNC_Z95 * sqrt(n->dynamic_sd_joules * n->dynamic_sd_joules + var));
  }
}

/* Half the 95 % interval of each job's erg_job_energy_joules_total
 * (docs/model.md, "Uncertainty"): 1.96 √(SD² + VAR) of its cluster sums. */
static void metrics_job_uncertainty(FILE *f, struct collector *c) {
  metrics_head(f, "erg_job_energy_uncertainty_joules", "gauge",
               "Half width of the 95 % interval of erg_job_energy_joules_total (same job, same "
               "period): the energy is within total +- this with 95 % confidence.");
  for (size_t j = 0; j < c->cluster_jobs.n; j++) {
    double sd, var;
    if (unc_job_sums(c, c->cluster_jobs.keys[j].key, &sd, &var) != 0)
      continue;
    fputs("erg_job_energy_uncertainty_joules{job=\"", f);
    metrics_label(f, c->cluster_jobs.keys[j].key);
    fputs("\"} ", f);
    metrics_num(f, ERG_UNC_Z95 * sqrt(sd * sd + (var > 0 ? var : 0)));
  }
}

/* Per GPU of the nodes that sent GPU energy (docs/gpu.md). */
static void metrics_gpus(FILE *f, struct collector *c) {
  static const struct {
    const char *name, *type, *help;
    size_t off;
  } fam[] = {{"erg_gpu_power_watts", "gauge",
              "Mean board power of the GPU over the node's last "
              "sample.",
              offsetof(struct node_gpu, power_watts)},
             {"erg_gpu_energy_joules_total", "counter",
              "Board energy of the GPU in the samples "
              "ergd accepted since it started.",
              offsetof(struct node_gpu, energy_joules)}};
  for (size_t k = 0; k < sizeof fam / sizeof fam[0]; k++) {
    metrics_head(f, fam[k].name, fam[k].type, fam[k].help);
    for (size_t i = 0; i < c->nnodes; i++)
      for (size_t g = 0; c->nodes[i]->gpus && g < c->nodes[i]->gpus->n; g++) {
        const struct node_gpu *d = &c->nodes[i]->gpus->gpu[g];
        double v = *(const double *)((const char *)d + fam[k].off);
        if (isnan(v))
          continue;
        metrics_node_label(f, fam[k].name, c->nodes[i]);
        fprintf(f, ",gpu=\"%u\",uuid=\"", d->index);
        metrics_label(f, d->uuid);
        fputs("\"} ", f);
        metrics_num(f, v);
      }
  }
}

/* The GPU part of each job's energy (gpu.c), as its gpu_job archives. */
static void metrics_gpu_jobs(FILE *f, struct collector *c) {
  metrics_head(f, "erg_job_gpu_energy_joules_total", "counter",
               "GPU part of a job's attributed energy summed over all nodes since ergd started: "
               "the node model's gpu_watts term of the job's GPU board energy (its SM shares), "
               "scaled to the measurement as its whole share is; only nodes with such a model.");
  for (size_t j = 0; c->gpu_jobs && j < c->gpu_jobs->n; j++) {
    fputs("erg_job_gpu_energy_joules_total{job=\"", f);
    metrics_label(f, c->gpu_jobs->job[j].job);
    fputs("\"} ", f);
    metrics_num(f, c->gpu_jobs->job[j].joules);
  }
}

static void metrics_keys(FILE *f, struct collector *c) {
  metrics_key_family(f, c, "erg_key_energy_joules_total", "counter",
                     "Energy attributed to a profile key on a node since ergd started (keys the "
                     "node currently writes archives for).",
                     offsetof(struct profile_known_key, joules), 0);
  metrics_key_family(f, c, "erg_key_watts", "gauge",
                     "Mean power attributed to a profile key on a node in its last cell.",
                     offsetof(struct profile_known_key, watts), 0);
  /* Its sd adds linearly over cells, its variance adds (docs/model.md). */
  if (c->cfg->energy_intervals)
    metrics_key_family(f, c, "erg_key_energy_uncertainty_joules", "gauge",
                       "Half width of the 95 % interval of erg_key_energy_joules_total (same "
                       "node, kind, key and period).",
                       offsetof(struct profile_known_key, sd_joules),
                       offsetof(struct profile_known_key, var_joules2));
  metrics_job_family(f, c, "erg_job_energy_joules_total", "counter",
                     "Energy of a job summed over all nodes since ergd started.",
                     offsetof(struct profile_known_key, joules));
  metrics_job_family(f, c, "erg_job_watts", "gauge",
                     "Mean power of a job summed over all nodes in its last cluster cell.",
                     offsetof(struct profile_known_key, watts));
  metrics_job_uncertainty(f, c);
  metrics_node_uncertainty(f, c);
  metrics_gpu_jobs(f, c);
}

static void metrics_publish(struct collector *c, char *body, size_t len, int keys) {
  pthread_mutex_lock(&c->metrics_lock);
  char **dst = keys ? &c->metrics_keys : &c->metrics;
  free(*dst);
  *dst = body;
  *(keys ? &c->metrics_keys_len : &c->metrics_len) = len;
  pthread_mutex_unlock(&c->metrics_lock);
}

/* A counter of every group: the uint64_t at offset off of its state. */
static void metrics_group_counter(FILE *f, const struct collector *c, const char *name,
                                  const char *help, size_t off) {
  metrics_head(f, name, "counter", help);
  for (int g = 0; g < c->ngroups; g++) {
    fprintf(f, "%s{group=\"", name);
    metrics_label(f, c->groups[g].cfg->name);
    fprintf(f, "\"} %llu\n",
            (unsigned long long)*(const uint64_t *)((const char *)&c->groups[g] + off));
  }
}

/* Shared meters ([group.NAME]): each member's share of the last cell,
 * labelled with its group, the cells split equally for want of models and
 * those whose split's intervals had the members' cross covariance. */
static void metrics_groups(FILE *f, struct collector *c) {
  if (!c->ngroups)
    return;
  metrics_head(f, "erg_node_meter_share_ratio", "gauge",
               "The node's share of its group's shared meter in the last cell (its measured "
               "power is that share of the meter, split by the members' models).");
  for (int g = 0; g < c->ngroups; g++)
    for (int m = 0; m < c->groups[g].nmembers; m++) {
      const struct node_state *n = c->groups[g].members[m];
      if (isnan(n->share))
        continue;
      metrics_node_label(f, "erg_node_meter_share_ratio", n);
      fputs(",group=\"", f);
      metrics_label(f, c->groups[g].cfg->name);
      fputs("\"} ", f);
      metrics_num(f, n->share);
    }
  metrics_group_counter(f, c, "erg_group_equal_split_cells_total",
                        "Cells of a shared meter split equally among its nodes because a member "
                        "had no model yet (erg fit --group fits them).",
                        offsetof(struct group_state, equal_split_cells));
  metrics_group_counter(f, c, "erg_group_cross_covariance_cells_total",
                        "Cells of a shared meter whose members' split intervals took the joint "
                        "fit's cross covariance (MODEL_DIR/group/NAME.json); the rest took the "
                        "members as independent.",
                        offsetof(struct group_state, cross_cov_cells));
}

void collector_metrics_render(struct collector *c) {
  char *buf = NULL;
  size_t len = 0;
  /* The asks made before this render began: it answers them. */
  pthread_mutex_lock(&c->metrics_lock);
  uint64_t asked = c->metrics_asked;
  pthread_mutex_unlock(&c->metrics_lock);
  c->metrics_renders++;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return;
  /* Every reason always, so rate() and alerts see a series from the start. */
  fprintf(f,
          "# HELP erg_agent_messages_total Agent messages received: accepted (ok), or "
          "refused whole (rejected) by reason: malformed, clock, interval, ncpu, cpu, rate, "
          "count, gpu, unknown_node_cap, node_limit.\n"
          "# TYPE erg_agent_messages_total counter\n"
          "erg_agent_messages_total{result=\"ok\"} %llu\n",
          (unsigned long long)c->msgs_ok);
  for (int r = INGEST_OK + 1; r < INGEST_NREASONS; r++)
    fprintf(f, "erg_agent_messages_total{result=\"rejected\",reason=\"%s\"} %llu\n",
            ingest_reason_names[r], (unsigned long long)c->msgs_rejected[r]);
  if (c->auth)
    fprintf(f,
            "# HELP erg_agent_auth_total CURVE handshakes judged by the ZAP handler.\n"
            "# TYPE erg_agent_auth_total counter\n"
            "erg_agent_auth_total{result=\"accepted\"} %llu\n"
            "erg_agent_auth_total{result=\"refused\"} %llu\n",
            (unsigned long long)auth_accepted_total(c->auth),
            (unsigned long long)auth_refused_total(c->auth));
  auth_metrics(c->auth, f);
  metrics_hellos(f, c);
  size_t loading = 0;
  for (size_t i = 0; i < c->nnodes; i++)
    loading += !c->nodes[i]->loaded;
  fprintf(f,
          "# HELP erg_nodes_loading Nodes met since the start whose stored state (last "
          "cell, journal, model, keys) is still being read; their samples are held.\n"
          "# TYPE erg_nodes_loading gauge\nerg_nodes_loading %zu\n"
          "# HELP erg_node_load_held_total Agent samples held while their node's stored "
          "state was read (held), or dropped because it held too many (dropped).\n"
          "# TYPE erg_node_load_held_total counter\n"
          "erg_node_load_held_total{result=\"held\"} %llu\n"
          "erg_node_load_held_total{result=\"dropped\"} %llu\n",
          loading, (unsigned long long)c->held_total, (unsigned long long)c->held_dropped);
  fprintf(f,
          "# HELP erg_lag_file_errors_total Meter lag files (JOURNAL_DIR/NODE.lag) that "
          "could not be read at a node's start or written after an estimate.\n"
          "# TYPE erg_lag_file_errors_total counter\nerg_lag_file_errors_total %llu\n",
          (unsigned long long)c->lag_file_errors);
  fprintf(f,
          "# HELP erg_tailwin_file_errors_total Files of the curve's tails' window chosen "
          "(JOURNAL_DIR/NODE.tailwin) that could not be read at a node's start or written "
          "after a choice.\n"
          "# TYPE erg_tailwin_file_errors_total counter\nerg_tailwin_file_errors_total %llu\n",
          (unsigned long long)c->tailwin_file_errors);
  fprintf(f,
          "# HELP erg_journal_future_total Nodes whose journal, read at their start, had "
          "rows ending more than %d s in the future: ignored when choosing where to resume.\n"
          "# TYPE erg_journal_future_total counter\nerg_journal_future_total %llu\n",
          ERG_JOURNAL_FUTURE_SECONDS, (unsigned long long)c->journal_future);
  fprintf(f,
          "# HELP erg_key_archives_evicted_total Per-node key archives removed to keep "
          "each node under key_archives_max per kind.\n"
          "# TYPE erg_key_archives_evicted_total counter\n"
          "erg_key_archives_evicted_total %llu\n",
          (unsigned long long)c->keys_evicted);
  fprintf(f,
          "# HELP erg_store_errors_total Failed archive updates and journal appends.\n"
          "# TYPE erg_store_errors_total counter\nerg_store_errors_total %llu\n",
          (unsigned long long)(c->store_errors + writer_errors(c->writer)));
  fprintf(f,
          "# HELP erg_store_dropped_writes_total Archive updates dropped because the "
          "write queue was full.\n# TYPE erg_store_dropped_writes_total counter\n"
          "erg_store_dropped_writes_total %llu\n",
          (unsigned long long)writer_dropped(c->writer));
  fprintf(f,
          "# HELP erg_store_lock_retries_total Archive updates that found the file locked "
          "by a reader and waited for it.\n# TYPE erg_store_lock_retries_total counter\n"
          "erg_store_lock_retries_total %llu\n",
          (unsigned long long)erg_store_lock_retries(c->store));
  fprintf(f,
          "# HELP erg_page_renders_total Page renders by result: ok, failed (the reason "
          "is logged), timeout (killed after page_timeout_seconds).\n"
          "# TYPE erg_page_renders_total counter\n"
          "erg_page_renders_total{result=\"ok\"} %llu\n"
          "erg_page_renders_total{result=\"failed\"} %llu\n"
          "erg_page_renders_total{result=\"timeout\"} %llu\n",
          (unsigned long long)renderer_count(c->renderer, RENDER_OK),
          (unsigned long long)renderer_count(c->renderer, RENDER_FAILED),
          (unsigned long long)renderer_count(c->renderer, RENDER_TIMEOUT));
  fprintf(f,
          "# HELP erg_store_pending_writes Archive updates queued for the writer thread.\n"
          "# TYPE erg_store_pending_writes gauge\nerg_store_pending_writes %zu\n",
          writer_pending(c->writer));
  fprintf(f,
          "# HELP erg_cluster_late_total Job contributions that came after their "
          "cluster cell was written.\n# TYPE erg_cluster_late_total counter\n"
          "erg_cluster_late_total %llu\n",
          (unsigned long long)(cluster_late(c->cluster) + cluster_late(c->gpu_cluster)));
  fprintf(f,
          "# HELP erg_metrics_renders_total Renders of this page: one per scrape (scrapes "
          "at the same moment share one), none while nobody asks.\n"
          "# TYPE erg_metrics_renders_total counter\nerg_metrics_renders_total %llu\n",
          (unsigned long long)c->metrics_renders);
  metrics_wal(f, c);
  metrics_nodes(f, c);
  metrics_gpus(f, c);
  metrics_groups(f, c);
  metrics_models(f, c);
  metrics_sources(f, c);
  metrics_meters(f, c);
  fclose(f);
  metrics_publish(c, buf, len, 0);
  if (c->keys_dirty || !c->metrics_keys) {
    buf = NULL;
    len = 0;
    if ((f = open_memstream(&buf, &len))) {
      metrics_keys(f, c);
      fclose(f);
      metrics_publish(c, buf, len, 1);
      c->keys_dirty = 0;
    }
  }
  pthread_mutex_lock(&c->metrics_lock);
  c->metrics_rendered = asked;
  pthread_cond_broadcast(&c->metrics_cond);
  pthread_mutex_unlock(&c->metrics_lock);
}

/* The loop's side of an ask: renders when the HTTP thread asked. */
void collector_metrics_asked(struct collector *c) {
  uint64_t n;
  if (c->metrics_wake_fd >= 0 && read(c->metrics_wake_fd, &n, sizeof n) < 0 && errno != EAGAIN)
    return;
  pthread_mutex_lock(&c->metrics_lock);
  bool want = c->metrics_asked != c->metrics_rendered;
  pthread_mutex_unlock(&c->metrics_lock);
  if (want)
    collector_metrics_render(c);
}

/* The loop stops answering: asks get the last body at once. */
void collector_metrics_stop(struct collector *c) {
  pthread_mutex_lock(&c->metrics_lock);
  c->metrics_live = 0;
  pthread_cond_broadcast(&c->metrics_cond);
  pthread_mutex_unlock(&c->metrics_lock);
}

#define METRICS_ASK_WAIT_NS (5 * ERG_NS_PER_S) /* then the last body */

/* Runs on libmicrohttpd's thread: only copies the last rendered bodies. */
int collector_http_dynamic(void *user, const char *url, char **body, size_t *len,
                           const char **ctype) {
  struct collector *c = user;
  if (strcmp(url, "/metrics") != 0)
    return 404;
  pthread_mutex_lock(&c->metrics_lock);
  if (c->metrics_live && c->metrics_wake_fd >= 0) {
    /* A body rendered after this ask: the loop wakes at once. */
    uint64_t ask = ++c->metrics_asked, one = 1;
    if (write(c->metrics_wake_fd, &one, sizeof one) < 0) {
      /* eventfd full: a wake is pending anyway */
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    uint64_t t =
        (uint64_t)until.tv_sec * ERG_NS_PER_S + (uint64_t)until.tv_nsec + METRICS_ASK_WAIT_NS;
    until.tv_sec = (time_t)(t / ERG_NS_PER_S);
    until.tv_nsec = (long)(t % ERG_NS_PER_S);
    while (c->metrics_live && c->metrics_rendered < ask &&
           pthread_cond_timedwait(&c->metrics_cond, &c->metrics_lock, &until) == 0) {
    }
  }
  size_t a = c->metrics ? c->metrics_len : 0, b = c->metrics_keys ? c->metrics_keys_len : 0;
  *len = a + b;
  *body = malloc(*len + 1);
  if (*body) {
    memcpy(*body, c->metrics ? c->metrics : "", a);
    memcpy(*body + a, c->metrics_keys ? c->metrics_keys : "", b);
    (*body)[*len] = '\0';
  }
  pthread_mutex_unlock(&c->metrics_lock);
  *ctype = "text/plain; version=0.0.4; charset=utf-8";
  return *body ? 200 : 500;
}

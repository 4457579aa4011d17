// SPDX-License-Identifier: GPL-3.0-or-later
/* Bounds on an agent's claims (ingest_check.h). Slack: an agent's counters
 * and its interval stamps are not read at one instant (the /proc path
 * reads processes across its sweep, ticks are 10 ms per CPU, a throttled
 * agent may stall between a stamp and a read), and the eBPF path carries
 * an undercount into the next interval: node CPU time gets 25 % and
 * 100 ms per CPU, processes twice the interval and 100 ms per CPU. The
 * values that poisoned the journal were off by factors of millions. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ingest_check.h"

const char *const ingest_reason_names[INGEST_NREASONS] = {
    "ok",   "malformed", "clock", "interval",         "ncpu",      "cpu",
    "rate", "count",     "gpu",   "unknown_node_cap", "node_limit"};

uint64_t ingest_interval_bound(const struct ingest_ref *ref, uint64_t ring_ns) {
  uint64_t most = ring_ns > INGEST_INTERVAL_MIN_BOUND_NS ? ring_ns : INGEST_INTERVAL_MIN_BOUND_NS;
  if (!ref || !ref->interval_ns)
    return most;
  uint64_t b = ref->interval_ns * INGEST_INTERVAL_FACTOR;
  if (b < INGEST_INTERVAL_MIN_BOUND_NS)
    b = INGEST_INTERVAL_MIN_BOUND_NS;
  return b < most ? b : most;
}

/* Writes the message; returns r. */
__attribute__((format(printf, 4, 5))) static enum ingest_reason
say(enum ingest_reason r, char *why, size_t whylen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (why && whylen)
    vsnprintf(why, whylen, fmt, ap);
  va_end(ap);
  return r;
}

/* The interval against ergd's clock and the node's usual interval. */
static enum ingest_reason check_time(const Erg__Sample *s, const struct ingest_ref *ref,
                                     uint64_t now_ns, uint64_t ring_ns, char *why, size_t whylen) {
  const Erg__Interval *iv = s->interval;
  if (!iv || iv->realtime_end_ns <= iv->realtime_start_ns)
    return say(INGEST_MALFORMED, why, whylen, "sample without an interval");
  if (iv->realtime_end_ns > now_ns + INGEST_FUTURE_NS)
    return say(INGEST_CLOCK, why, whylen,
               "interval ends %.1f s after ergd's clock (more than %llu s: the node's clock "
               "is ahead, or the time is made up)",
               (double)(iv->realtime_end_ns - now_ns) / 1e9,
               (unsigned long long)(INGEST_FUTURE_NS / ERG_NS_PER_S));
  if (iv->realtime_start_ns < (uint64_t)INGEST_EPOCH_MIN_S * ERG_NS_PER_S)
    return say(INGEST_CLOCK, why, whylen,
               "interval starts at %.0f s since 1970, before 2020: the node's clock is not set",
               (double)iv->realtime_start_ns / 1e9);
  uint64_t span = iv->realtime_end_ns - iv->realtime_start_ns;
  uint64_t bound = ingest_interval_bound(ref, ring_ns);
  if (span > bound) {
    if (ref && ref->interval_ns && bound < ring_ns)
      return say(INGEST_INTERVAL, why, whylen,
                 "interval of %.1f s, more than %.0f s (%d x the agent's usual %.3g s, at "
                 "least %llu s)",
                 (double)span / 1e9, (double)bound / 1e9, INGEST_INTERVAL_FACTOR,
                 (double)ref->interval_ns / 1e9,
                 (unsigned long long)(INGEST_INTERVAL_MIN_BOUND_NS / ERG_NS_PER_S));
    return say(INGEST_INTERVAL, why, whylen,
               "interval of %.1f s, more than the %.0f s the grid holds open (128 cells of "
               "step_seconds): lower the agent's interval_seconds",
               (double)span / 1e9, (double)bound / 1e9);
  }
  return INGEST_OK;
}

static enum ingest_reason check_ncpu(const Erg__Sample *s, const struct ingest_ref *ref, char *why,
                                     size_t whylen) {
  if (!s->totals)
    return say(INGEST_NCPU, why, whylen, "sample without node totals (CPU count, busy time)");
  unsigned ncpu = s->totals->ncpu;
  if (ncpu == 0 || ncpu > INGEST_MAX_NCPU)
    return say(INGEST_NCPU, why, whylen, "%u CPUs (1 to %d)", ncpu, INGEST_MAX_NCPU);
  if (ref && ref->bound_ncpu && ncpu > ref->bound_ncpu)
    return say(INGEST_NCPU, why, whylen,
               "%u CPUs, more than the %u its agent's run started with (%s; CPUs brought "
               "online count once the agent restarts)",
               ncpu, ref->bound_ncpu, ref->bound_from_hello ? "its hello" : "its first sample");
  return INGEST_OK;
}

/* Node totals, then every process and their sums. Doubles: sums of up to
 * 200,000 uint64 values must not wrap. */
static enum ingest_reason check_values(const Erg__Sample *s, char *why, size_t whylen) {
  const Erg__NodeTotals *t = s->totals;
  double span = (double)(s->interval->realtime_end_ns - s->interval->realtime_start_ns);
  double span_s = span / 1e9, ncpu = t->ncpu;
  double node_cap = ncpu * (span * 1.25 + 1e8), proc_cap = ncpu * (span * 2 + 1e8);
  double byte_cap = INGEST_BYTES_PER_SECOND * (span_s * 2 + 0.1);
  double event_cap = INGEST_EVENTS_PER_CPU_S * ncpu * (span_s * 2 + 0.1);
  if ((double)t->cpu_busy_ns + (double)t->cpu_idle_ns > node_cap)
    return say(INGEST_CPU, why, whylen,
               "node CPU busy %.4g s + idle %.4g s in %.3f s on %u CPUs (at most %.4g s)",
               (double)t->cpu_busy_ns / 1e9, (double)t->cpu_idle_ns / 1e9, span_s, t->ncpu,
               node_cap / 1e9);
  if ((double)s->system_cpu_ns > node_cap)
    return say(INGEST_CPU, why, whylen, "system CPU %.4g s in %.3f s on %u CPUs (at most %.4g s)",
               (double)s->system_cpu_ns / 1e9, span_s, t->ncpu, node_cap / 1e9);
  const struct {
    const char *name;
    uint64_t v;
  } bytes[] = {{"disk read", t->disk_read_bytes},
               {"disk write", t->disk_write_bytes},
               {"network receive", t->net_rx_bytes},
               {"network send", t->net_tx_bytes}};
  for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++)
    if ((double)bytes[i].v > byte_cap)
      return say(INGEST_RATE, why, whylen, "node %s %.4g bytes in %.3f s (more than 1 TB/s)",
                 bytes[i].name, (double)bytes[i].v, span_s);
  double cpu = 0, io = 0, cycles = 0, insns = 0;
  for (size_t i = 0; i < s->n_procs; i++) {
    const Erg__Proc *p = s->procs[i];
    if ((double)p->cpu_ns > proc_cap)
      return say(INGEST_CPU, why, whylen,
                 "process %u: %.4g CPU s in %.3f s on %u CPUs (at most %.4g s)", p->pid,
                 (double)p->cpu_ns / 1e9, span_s, t->ncpu, proc_cap / 1e9);
    cpu += (double)p->cpu_ns;
    io += (double)p->read_bytes + (double)p->write_bytes;
    cycles += (double)p->cycles;
    insns += (double)p->instructions;
  }
  if (cpu > proc_cap)
    return say(INGEST_CPU, why, whylen,
               "processes: %.4g CPU s in all in %.3f s on %u CPUs (at most %.4g s)", cpu / 1e9,
               span_s, t->ncpu, proc_cap / 1e9);
  if (io > byte_cap)
    return say(INGEST_RATE, why, whylen,
               "processes: %.4g bytes of disk I/O in %.3f s (more than 1 TB/s)", io, span_s);
  if (cycles > proc_cap * INGEST_CYCLES_PER_CPU_NS)
    return say(INGEST_RATE, why, whylen,
               "processes: %.4g cycles in %.3f s on %u CPUs (more than 10 GHz)", cycles, span_s,
               t->ncpu);
  if (insns > proc_cap * INGEST_INSNS_PER_CPU_NS)
    return say(INGEST_RATE, why, whylen,
               "processes: %.4g instructions in %.3f s on %u CPUs (more than 10 per cycle at "
               "10 GHz)",
               insns, span_s, t->ncpu);
  if (s->dropped_samples > INGEST_MAX_DROPPED)
    return say(INGEST_COUNT, why, whylen, "%.4g dropped samples (at most %llu)",
               (double)s->dropped_samples, INGEST_MAX_DROPPED);
  const Erg__BpfHealth *b = s->bpf;
  if (b && (double)b->lost_exit_ns > proc_cap)
    return say(INGEST_CPU, why, whylen, "eBPF lost exit CPU %.4g s in %.3f s on %u CPUs",
               (double)b->lost_exit_ns / 1e9, span_s, t->ncpu);
  if (b && ((double)b->map_full_drops > event_cap || (double)b->unseen_switches > event_cap ||
            (double)b->unsettled > event_cap))
    return say(INGEST_COUNT, why, whylen,
               "eBPF health counts %.4g, %.4g, %.4g in %.3f s on %u CPUs (at most %.4g)",
               (double)b->map_full_drops, (double)b->unseen_switches, (double)b->unsettled, span_s,
               t->ncpu, event_cap);
  return INGEST_OK;
}

static bool in_range(double v, double hi) { return isfinite(v) && v >= 0 && v <= hi; }

/* GPUs (docs/gpu.md): each board's energy and power finite, ≥ 0 and below
 * INGEST_GPU_MAX_WATTS (energy: over twice the interval and 0.1 s, as the
 * other rates); each process's use names a GPU of the sample once, its
 * share 0..1 and a GPU's shares summing to at most 1 (both + the
 * agent's rounding, INGEST_GPU_SHARE_SLACK). */
static enum ingest_reason check_gpus(const Erg__Sample *s, char *why, size_t whylen) {
  double span_s = (double)(s->interval->realtime_end_ns - s->interval->realtime_start_ns) / 1e9;
  double joule_cap = INGEST_GPU_MAX_WATTS * (span_s * 2 + 0.1);
  double share[INGEST_MAX_GPUS] = {0};
  if (s->n_gpus > INGEST_MAX_GPUS)
    return say(INGEST_GPU, why, whylen, "%zu GPUs (at most %d)", s->n_gpus, INGEST_MAX_GPUS);
  for (size_t g = 0; g < s->n_gpus; g++) {
    const Erg__Gpu *d = s->gpus[g];
    for (size_t h = 0; h < g; h++)
      if (s->gpus[h]->index == d->index)
        return say(INGEST_GPU, why, whylen, "GPU index %u twice", d->index);
    if (!in_range(d->energy_joules, joule_cap) || !in_range(d->power_watts, INGEST_GPU_MAX_WATTS))
      return say(INGEST_GPU, why, whylen, "GPU %u: %.4g J, %.4g W in %.3f s (0 to %.0f W)",
                 d->index, d->energy_joules, d->power_watts, span_s, INGEST_GPU_MAX_WATTS);
    if (d->util_percent > 100 || d->mem_util_percent > 100)
      return say(INGEST_GPU, why, whylen, "GPU %u: utilization %u %%, memory %u %%", d->index,
                 d->util_percent, d->mem_util_percent);
  }
  for (size_t i = 0; i < s->n_procs; i++) {
    const Erg__Proc *p = s->procs[i];
    if (p->n_gpu > s->n_gpus)
      return say(INGEST_GPU, why, whylen, "process %u: %zu GPU uses, %zu GPUs", p->pid, p->n_gpu,
                 s->n_gpus);
    for (size_t u = 0; u < p->n_gpu; u++) {
      const Erg__GpuUse *use = p->gpu[u];
      size_t g = 0;
      while (g < s->n_gpus && s->gpus[g]->index != use->gpu_index)
        g++;
      for (size_t v = 0; v < u; v++)
        if (p->gpu[v]->gpu_index == use->gpu_index)
          g = s->n_gpus;
      if (g == s->n_gpus)
        return say(INGEST_GPU, why, whylen,
                   "process %u: use of GPU %u, not in the sample or "
                   "twice",
                   p->pid, use->gpu_index);
      if (!in_range(use->sm_share, 1 + INGEST_GPU_SHARE_SLACK) ||
          !in_range(use->sm_percent, INGEST_GPU_MAX_PERCENT) ||
          !in_range(use->mem_percent, INGEST_GPU_MAX_PERCENT))
        return say(INGEST_GPU, why, whylen,
                   "process %u on GPU %u: share %.4g (0 to 1), SM %.4g %%, memory %.4g %%", p->pid,
                   use->gpu_index, use->sm_share, use->sm_percent, use->mem_percent);
      share[g] += use->sm_share;
    }
  }
  for (size_t g = 0; g < s->n_gpus; g++)
    if (share[g] > 1 + INGEST_GPU_SHARE_SLACK)
      return say(INGEST_GPU, why, whylen, "GPU %u: processes' SM shares sum to %.6g (at most 1)",
                 s->gpus[g]->index, share[g]);
  return INGEST_OK;
}

/* The busy time's slices (sub-samples): as many ends as busy times, ends
 * rising, the last at the interval's monotonic end, each slice's busy time
 * within its CPUs x span (with the slack of tick accounting). */
static enum ingest_reason check_slices(const Erg__Sample *s, char *why, size_t whylen) {
  const Erg__NodeTotals *t = s->totals;
  size_t n = t->n_cpu_busy_slice_ns;
  if (n == 0 && t->n_busy_slice_end_ns == 0)
    return INGEST_OK;
  uint64_t span = s->interval->monotonic_end_ns - s->interval->monotonic_start_ns;
  if (n != t->n_busy_slice_end_ns || n > INGEST_MAX_SLICES)
    return say(INGEST_CPU, why, whylen, "%zu busy slices with %zu ends (at most %d, as many)", n,
               t->n_busy_slice_end_ns, INGEST_MAX_SLICES);
  if (s->interval->monotonic_end_ns < s->interval->monotonic_start_ns ||
      t->busy_slice_end_ns[n - 1] != span)
    return say(INGEST_CPU, why, whylen,
               "busy slices end %.6f s after the interval's start, not at its end (%.6f s)",
               (double)t->busy_slice_end_ns[n - 1] / 1e9, (double)span / 1e9);
  uint64_t prev = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t end = t->busy_slice_end_ns[i];
    if (end <= prev)
      return say(INGEST_CPU, why, whylen, "busy slice %zu ends at %.6f s, not after %.6f s", i,
                 (double)end / 1e9, (double)prev / 1e9);
    double cap = (double)t->ncpu * ((double)(end - prev) * 1.25 + 2e7);
    if ((double)t->cpu_busy_slice_ns[i] > cap)
      return say(INGEST_CPU, why, whylen,
                 "busy slice %zu: %.4g CPU s in %.4f s on %u CPUs (at most %.4g s)", i,
                 (double)t->cpu_busy_slice_ns[i] / 1e9, (double)(end - prev) / 1e9, t->ncpu,
                 cap / 1e9);
    prev = end;
  }
  return INGEST_OK;
}

enum ingest_reason ingest_check_sample(const Erg__Sample *s, const struct ingest_ref *ref,
                                       uint64_t now_ns, uint64_t ring_ns, char *why,
                                       size_t whylen) {
  enum ingest_reason r = check_time(s, ref, now_ns, ring_ns, why, whylen);
  if (r == INGEST_OK)
    r = check_ncpu(s, ref, why, whylen);
  if (r == INGEST_OK)
    r = check_values(s, why, whylen);
  if (r == INGEST_OK)
    r = check_slices(s, why, whylen);
  if (r == INGEST_OK)
    r = check_gpus(s, why, whylen);
  if (r == INGEST_OK && why && whylen)
    why[0] = '\0';
  return r;
}

/* The hashes ingest_ref_hello keeps of a hello's fields. */
static void hello_hashes(const Erg__Hello *h, uint64_t out[INGEST_HELLO_NFIELDS]);

enum ingest_reason ingest_check_hello(const Erg__Hello *h, const struct ingest_ref *ref, char *why,
                                      size_t whylen) {
  if (h->ncpu > INGEST_MAX_NCPU)
    return say(INGEST_NCPU, why, whylen, "hello says %u CPUs (at most %d)", h->ncpu,
               INGEST_MAX_NCPU);
  if (why && whylen)
    why[0] = '\0';
  if (ref && ref->bound_from_hello && h->ncpu > ref->bound_ncpu) {
    uint64_t now[INGEST_HELLO_NFIELDS];
    hello_hashes(h, now);
    /* Fields 2 and 4: the boot id and the agent's run (pid, start time). */
    if (now[2] == ref->hello_hash[2] && now[4] == ref->hello_hash[4])
      return say(INGEST_NCPU, why, whylen,
                 "hello says %u CPUs, more than the %u its agent's run started with (CPUs "
                 "brought online count once the agent restarts)",
                 h->ncpu, ref->bound_ncpu);
  }
  return INGEST_OK;
}

static uint64_t hello_str_hash(const char *v) { return erg_hash_fnv1a(v, v ? strlen(v) : 0); }

static void hello_hashes(const Erg__Hello *h, uint64_t out[INGEST_HELLO_NFIELDS]) {
  uint64_t feats = 0, run[2] = {h->agent_pid, h->agent_start_realtime_ns};
  for (size_t i = 0; i < h->n_features; i++) /* in order: each name and its end */
    feats = (feats ^ erg_hash_fnv1a(h->features[i], strlen(h->features[i]) + 1)) * 1099511628211ULL;
  const uint64_t now[INGEST_HELLO_NFIELDS] = {
      hello_str_hash(h->agent_version), feats, hello_str_hash(h->boot_id),
      hello_str_hash(h->collection), erg_hash_fnv1a(run, sizeof run)};
  memcpy(out, now, sizeof now);
}

unsigned ingest_ref_hello(struct ingest_ref *ref, const Erg__Hello *h) {
  uint64_t now[INGEST_HELLO_NFIELDS];
  hello_hashes(h, now);
  static const unsigned bit[INGEST_HELLO_NFIELDS] = {INGEST_HELLO_VERSION, INGEST_HELLO_FEATURES,
                                                     INGEST_HELLO_BOOT, INGEST_HELLO_COLLECTION,
                                                     INGEST_HELLO_RESTART};
  unsigned changed = 0;
  if (!ref->hellos_new && !ref->hellos_repeated) {
    changed = INGEST_HELLO_FIRST;
  } else {
    for (int i = 0; i < INGEST_HELLO_NFIELDS; i++)
      if (ref->hello_hash[i] != now[i])
        changed |= bit[i];
    if (h->ncpu && h->ncpu != ref->hello_ncpu)
      changed |= INGEST_HELLO_NCPU;
  }
  memcpy(ref->hello_hash, now, sizeof now);
  if (h->ncpu)
    ref->hello_ncpu = h->ncpu;
  /* A new run's (or boot's, or the first) hello sets the bound; a later
   * one of the same run never raises it (ingest_check_hello refused it). */
  if (h->ncpu && (!ref->bound_from_hello ||
                  (changed & (INGEST_HELLO_FIRST | INGEST_HELLO_RESTART | INGEST_HELLO_BOOT)))) {
    ref->bound_ncpu = h->ncpu;
    ref->bound_from_hello = 1;
  }
  if (changed)
    ref->hellos_new++;
  else
    ref->hellos_repeated++;
  return changed;
}

void ingest_hello_text(const Erg__Hello *h, unsigned changed, char *buf, size_t len) {
  static const struct {
    unsigned bit;
    const char *name;
  } what[] = {{INGEST_HELLO_VERSION, "version"},
              {INGEST_HELLO_FEATURES, "features"},
              {INGEST_HELLO_NCPU, "CPUs"},
              {INGEST_HELLO_BOOT, "boot id"},
              {INGEST_HELLO_COLLECTION, "collection"},
              {INGEST_HELLO_RESTART, "agent restarted"}};
  char feats[256] = "", why[160] = "";
  for (size_t i = 0, o = 0; i < h->n_features && o < sizeof feats; i++)
    o += (size_t)snprintf(feats + o, sizeof feats - o, "%s%s", i ? "," : "", h->features[i]);
  for (size_t i = 0, o = 0; i < sizeof what / sizeof what[0] && o < sizeof why; i++)
    if (changed & what[i].bit)
      o += (size_t)snprintf(why + o, sizeof why - o, "%s%s", o ? ", " : "", what[i].name);
  snprintf(buf, len,
           "agent hello: node %.128s, version %.64s, collection %.16s, %u CPUs, "
           "features %s, boot id %.40s (%s%s; repeats only counted: erg_agent_hellos_total)",
           h->node, h->agent_version, h->collection, h->ncpu, feats, h->boot_id,
           changed & INGEST_HELLO_FIRST ? "first" : "changed: ", why);
}

/* A moving average (1/8 per sample), not the shortest: one delayed sweep
 * followed by a prompt one gives a short interval, and a bound of ten
 * times that would refuse the agent's normal ones. A smaller sequence
 * number (not a resent copy) is a new agent run, maybe with another
 * interval_seconds: learnt afresh. */
void ingest_ref_sample(struct ingest_ref *ref, const Erg__Sample *s) {
  uint64_t span = s->interval->realtime_end_ns - s->interval->realtime_start_ns;
  if (!s->resent && s->seq < ref->last_seq)
    ref->interval_ns = 0;
  ref->interval_ns = ref->interval_ns ? (ref->interval_ns * 7 + span) / 8 : span;
  if (!s->resent)
    ref->last_seq = s->seq;
  if (!ref->bound_ncpu && s->totals) /* before any hello: the first sample's count */
    ref->bound_ncpu = s->totals->ncpu;
}

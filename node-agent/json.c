// SPDX-License-Identifier: GPL-3.0-or-later
/* JSON rendering of agent messages for --dump. Hand-written (not jansson)
 * so the agent stays small; every string goes through erg_json_escape. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_agent.h"

struct jbuf {
  char *p;
  size_t len, cap;
  int oom;
};

static void jb_printf(struct jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jb_printf(struct jbuf *b, const char *fmt, ...) {
  if (b->oom)
    return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->oom = 1;
      return;
    }
    if ((size_t)n < b->cap - b->len) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = (b->cap + (size_t)n + 1) * 2;
    char *np = realloc(b->p, cap);
    if (!np) {
      b->oom = 1;
      return;
    }
    b->p = np;
    b->cap = cap;
  }
}

static void jb_str(struct jbuf *b, const char *key, const char *val) {
  char *e = erg_json_escape(val ? val : "", val ? strlen(val) : 0);
  jb_printf(b, "\"%s\":\"%s\"", key, e ? e : "");
  free(e);
}

static char *jb_finish(struct jbuf *b) {
  if (b->oom) {
    free(b->p);
    return NULL;
  }
  return b->p;
}

/* Optional per-process counters and the feature that makes each present. */
static const struct {
  const char *feature;
  size_t off;
} jb_counters[] = {{"wakeups", offsetof(Erg__Proc, wakeups)},
                   {"migrations", offsetof(Erg__Proc, migrations)},
                   {"cycles", offsetof(Erg__Proc, cycles)},
                   {"instructions", offsetof(Erg__Proc, instructions)},
                   {"llc_misses", offsetof(Erg__Proc, llc_misses)}};
#define JB_NCOUNTERS (sizeof jb_counters / sizeof jb_counters[0])

static unsigned jb_counter_mask(const Erg__Hello *h) {
  unsigned m = 0;
  for (size_t c = 0; c < JB_NCOUNTERS; c++)
    for (size_t i = 0; h && i < h->n_features; i++)
      if (!strcmp(h->features[i], jb_counters[c].feature))
        m |= 1u << c;
  return m;
}

static void jb_proc(struct jbuf *b, const Erg__Proc *p, unsigned counters) {
  jb_printf(b, "{\"pid\":%u,\"start_time_ns\":%llu,", p->pid, (unsigned long long)p->start_time_ns);
  jb_str(b, "comm", p->comm);
  jb_printf(b, ",\"uid\":%u,", p->uid);
  jb_str(b, "cgroup", p->cgroup);
  jb_printf(b, ",");
  jb_str(b, "job", p->job);
  jb_printf(b, ",");
  jb_str(b, "unit", p->unit);
  jb_printf(b, ",");
  jb_str(b, "container", p->container);
  jb_printf(b,
            ",\"cpu_ns\":%llu,\"rss_bytes\":%llu,\"read_bytes\":%llu,\"write_bytes\":%llu,"
            "\"exited\":%s",
            (unsigned long long)p->cpu_ns, (unsigned long long)p->rss_bytes,
            (unsigned long long)p->read_bytes, (unsigned long long)p->write_bytes,
            p->exited ? "true" : "false");
  for (size_t c = 0; c < JB_NCOUNTERS; c++)
    if (counters & (1u << c))
      jb_printf(b, ",\"%s\":%llu", jb_counters[c].feature,
                (unsigned long long)*(const uint64_t *)((const char *)p + jb_counters[c].off));
  jb_printf(b, ",\"freq\":[");
  for (size_t i = 0; i < p->n_freq; i++)
    jb_printf(b, "%s{\"khz\":%u,\"cpu_ns\":%llu}", i ? "," : "", p->freq[i]->khz,
              (unsigned long long)p->freq[i]->cpu_ns);
  jb_printf(b, "],\"capacity\":[");
  for (size_t i = 0; i < p->n_capacity; i++)
    jb_printf(b, "%s{\"capacity\":%u,\"cpu_ns\":%llu}", i ? "," : "", p->capacity[i]->capacity,
              (unsigned long long)p->capacity[i]->cpu_ns);
  jb_printf(b, "]");
  /* Only with the capacity feature: absent is not the same as zero. */
  if (p->n_capacity)
    jb_printf(b, ",\"capacity_weighted_ns\":%llu", (unsigned long long)p->capacity_weighted_ns);
  /* GPU processes only (docs/gpu.md). */
  for (size_t i = 0; i < p->n_gpu; i++) {
    const Erg__GpuUse *u = p->gpu[i];
    jb_printf(b,
              "%s{\"gpu_index\":%u,\"sm_share\":%.6f,\"sm_percent\":%.3f,\"mem_percent\":%.3f,"
              "\"used_memory_bytes\":%llu",
              i ? "," : ",\"gpu\":[", u->gpu_index, u->sm_share, u->sm_percent, u->mem_percent,
              (unsigned long long)u->used_memory_bytes);
    /* MIG only: the instance it runs in. */
    if (u->has_mig_instance)
      jb_printf(b, ",\"mig_gpu_instance\":%u,\"mig_compute_instance\":%u", u->mig_gpu_instance,
                u->mig_compute_instance);
    jb_printf(b, "}%s", i + 1 == p->n_gpu ? "]" : "");
  }
  jb_printf(b, "}");
}

char *erg_agent_sample_json(const Erg__Sample *s, const Erg__Hello *h) {
  struct jbuf b = {0};
  unsigned counters = jb_counter_mask(h);
  const Erg__Interval *iv = s->interval;
  const Erg__NodeTotals *t = s->totals;
  jb_printf(&b, "{\"type\":\"sample\",");
  jb_str(&b, "node", s->node);
  jb_printf(&b, ",\"seq\":%llu,", (unsigned long long)s->seq);
  jb_str(&b, "boot_id", s->boot_id);
  jb_printf(&b, ",");
  jb_str(&b, "collection", s->collection);
  jb_printf(&b,
            ",\"realtime_start_ns\":%llu,\"realtime_end_ns\":%llu,"
            "\"monotonic_start_ns\":%llu,\"monotonic_end_ns\":%llu,",
            (unsigned long long)(iv ? iv->realtime_start_ns : 0),
            (unsigned long long)(iv ? iv->realtime_end_ns : 0),
            (unsigned long long)(iv ? iv->monotonic_start_ns : 0),
            (unsigned long long)(iv ? iv->monotonic_end_ns : 0));
  if (t) {
    jb_printf(&b,
              "\"totals\":{\"cpu_busy_ns\":%llu,\"cpu_idle_ns\":%llu,\"mem_used_bytes\":%llu,"
              "\"disk_read_bytes\":%llu,\"disk_write_bytes\":%llu,\"net_rx_bytes\":%llu,"
              "\"net_tx_bytes\":%llu,\"ncpu\":%u",
              (unsigned long long)t->cpu_busy_ns, (unsigned long long)t->cpu_idle_ns,
              (unsigned long long)t->mem_used_bytes, (unsigned long long)t->disk_read_bytes,
              (unsigned long long)t->disk_write_bytes, (unsigned long long)t->net_rx_bytes,
              (unsigned long long)t->net_tx_bytes, t->ncpu);
    /* The busy time's sub-samples: [end after the start, busy] in ns. */
    if (t->n_cpu_busy_slice_ns && t->n_cpu_busy_slice_ns == t->n_busy_slice_end_ns) {
      jb_printf(&b, ",\"busy_slices_ns\":[");
      for (size_t i = 0; i < t->n_cpu_busy_slice_ns; i++)
        jb_printf(&b, "%s[%llu,%llu]", i ? "," : "", (unsigned long long)t->busy_slice_end_ns[i],
                  (unsigned long long)t->cpu_busy_slice_ns[i]);
      jb_printf(&b, "]");
    }
    jb_printf(&b, "},");
  }
  jb_printf(&b, "\"system_cpu_ns\":%llu,\"dropped_samples\":%llu,",
            (unsigned long long)s->system_cpu_ns, (unsigned long long)s->dropped_samples);
  /* eBPF path only: on /proc the object is absent, not zeros. */
  if (s->bpf)
    jb_printf(&b,
              "\"bpf\":{\"map_full_drops\":%llu,\"lost_exit_ns\":%llu,\"unseen_switches\":%llu,"
              "\"unsettled\":%llu},",
              (unsigned long long)s->bpf->map_full_drops, (unsigned long long)s->bpf->lost_exit_ns,
              (unsigned long long)s->bpf->unseen_switches, (unsigned long long)s->bpf->unsettled);
  /* GPUs: only on a node whose hello lists gpu_energy (docs/gpu.md). */
  for (size_t i = 0; i < s->n_gpus; i++) {
    const Erg__Gpu *g = s->gpus[i];
    jb_printf(&b, "%s{\"index\":%u,", i ? "," : "\"gpus\":[", g->index);
    jb_str(&b, "uuid", g->uuid);
    jb_printf(&b, ",");
    jb_str(&b, "name", g->name);
    jb_printf(&b,
              ",\"interval_ns\":%llu,\"has_energy\":%s,\"energy_joules\":%.3f,"
              "\"energy_from_counter\":%s,\"power_watts\":%.3f,\"util_percent\":%u,"
              "\"mem_util_percent\":%u,\"mig\":%s,\"sm_shares\":%s,\"idle\":%s}%s",
              (unsigned long long)g->interval_ns, g->has_energy ? "true" : "false",
              g->energy_joules, g->energy_from_counter ? "true" : "false", g->power_watts,
              g->util_percent, g->mem_util_percent, g->mig ? "true" : "false",
              g->sm_shares ? "true" : "false", g->idle ? "true" : "false",
              i + 1 == s->n_gpus ? "]," : "");
  }
  jb_printf(&b, "\"users\":[");
  for (size_t i = 0; i < s->n_users; i++) {
    jb_printf(&b, "%s{\"uid\":%u,", i ? "," : "", s->users[i]->uid);
    jb_str(&b, "name", s->users[i]->name);
    jb_printf(&b, "}");
  }
  jb_printf(&b, "],\"procs\":[");
  for (size_t i = 0; i < s->n_procs; i++) {
    if (i)
      jb_printf(&b, ",");
    jb_proc(&b, s->procs[i], counters);
  }
  jb_printf(&b, "]}");
  return jb_finish(&b);
}

char *erg_agent_hello_json(const Erg__Hello *h, const struct erg_agent *a) {
  struct jbuf b = {0};
  jb_printf(&b, "{\"type\":\"hello\",");
  jb_str(&b, "node", h->node);
  jb_printf(&b, ",");
  jb_str(&b, "agent_version", h->agent_version);
  jb_printf(&b, ",");
  jb_str(&b, "boot_id", h->boot_id);
  jb_printf(&b, ",");
  jb_str(&b, "collection", h->collection);
  jb_printf(&b, ",\"agent_pid\":%u,\"agent_start_realtime_ns\":%llu,\"ncpu\":%u,\"features\":[",
            h->agent_pid, (unsigned long long)h->agent_start_realtime_ns, h->ncpu);
  for (size_t i = 0; i < h->n_features; i++) {
    char *e = erg_json_escape(h->features[i], strlen(h->features[i]));
    jb_printf(&b, "%s\"%s\"", i ? "," : "", e ? e : "");
    free(e);
  }
  jb_printf(&b, "],\"features_off\":{");
  const char *name, *why;
  for (size_t i = 0; (name = erg_agent_feature_off(a, i, &why)) != NULL; i++) {
    jb_printf(&b, "%s", i ? "," : "");
    jb_str(&b, name, why);
  }
  jb_printf(&b, "}}");
  return jb_finish(&b);
}

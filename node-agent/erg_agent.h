// SPDX-License-Identifier: GPL-3.0-or-later
/* erg node agent library: per-process and node-wide resource sampling.
 * The /proc path lives here; the eBPF path is in bpf/. */
#ifndef ERG_AGENT_H
#define ERG_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erg_common.h"

/* ---- /proc parsers (pure functions over file contents; unit-tested) ---- */
struct erg_proc_stat {
  uint32_t pid;
  char comm[64]; /* raw bytes between the outer parentheses */
  char state;
  uint64_t utime_ticks, stime_ticks;
  uint64_t starttime_ticks; /* since boot */
};
int erg_proc_parse_stat(const char *buf, struct erg_proc_stat *out);

struct erg_proc_status {
  uint32_t uid; /* real uid */
  uint64_t rss_anon_bytes, rss_file_bytes, rss_shmem_bytes;
};
int erg_proc_parse_status(const char *buf, struct erg_proc_status *out);

/* /proc/PID/statm: resident = RssAnon + RssFile + RssShmem, shared =
 * RssFile + RssShmem, in pages. A third of the cost of reading status. */
struct erg_proc_statm {
  uint64_t resident_pages, shared_pages;
};
int erg_proc_parse_statm(const char *buf, struct erg_proc_statm *out);

struct erg_proc_io {
  uint64_t read_bytes, write_bytes;
};
int erg_proc_parse_io(const char *buf, struct erg_proc_io *out);

/* Picks the cgroup v2 path ("0::/x"), else the v1 cpu controller's path. */
int erg_proc_parse_cgroup(const char *buf, char *out, size_t outlen);

struct erg_cpu_totals {
  uint64_t busy_ticks, idle_ticks;
  uint32_t ncpu;
  uint64_t scope_busy_ns; /* cumulative CPU of the agent's scope, if any */
};
int erg_proc_parse_cpu_totals(const char *buf, struct erg_cpu_totals *out);
/* MemTotal - MemAvailable, in bytes. */
int erg_proc_parse_meminfo(const char *buf, uint64_t *used_bytes);
/* Bytes read/written, summed over the devices want(dev, user) accepts (all
 * if want is NULL). */
int erg_proc_parse_diskstats(const char *buf, int (*want)(const char *dev, void *user), void *user,
                             uint64_t *read_bytes, uint64_t *write_bytes);
/* Sum of rx/tx bytes over interfaces other than lo. */
int erg_proc_parse_netdev(const char *buf, uint64_t *rx_bytes, uint64_t *tx_bytes);

/* Grouping keys derived from a cgroup path: Slurm job id, systemd unit,
 * container id. Empty strings when absent. */
struct erg_group_keys {
  char job[32];
  char unit[128];
  char container[72];
};
void erg_group_keys_derive(const char *cgroup, struct erg_group_keys *out);
/* Same from all lines of /proc/PID/cgroup: each key from the v2 path if it
 * has one, else from the first v1 hierarchy's path that has it. */
void erg_group_keys_from_proc(const char *proc_cgroup, struct erg_group_keys *out);

/* ---- the agent ---- */
struct erg_agent_config {
  char node[128];
  char collector[256]; /* ZeroMQ endpoint, e.g. tcp://127.0.0.1:9711 */
  double interval_seconds;
  /* The node's busy time is also read every sub_interval_seconds within
   * the interval (sent as slices, NodeTotals.cpu_busy_slice_ns): the meter
   * shows the power of a load that changes within the interval, which the
   * interval's mean does not tell (issue 38). The finest affordable:
   * ergd builds windows of the meter's updates from the slices and keeps
   * the ones the fit says the power follows (collector/tailwin.c), but it
   * cannot split coarser ones (docs/accuracy.md). 0: off, as is anything
   * over half the interval; at least interval / 255 is used. */
  double sub_interval_seconds;
  long queue_samples;       /* bounded send queue while the collector is away */
  long resend_samples;      /* last samples sent again after a reconnect; 0: none */
  double heartbeat_seconds; /* ZMTP ping interval; 0: max(1 s, interval) */
  char proc_root[256];      /* "/proc"; tests may point elsewhere */
  char sysfs_cpu_root[256]; /* "": /sys/devices/system/cpu; tests use a fake tree */
  char collection[8];       /* "auto" (BPF, else /proc), "bpf" or "proc" */
  char scope[256];          /* cgroup path: report only this subtree; "" = all */
  int log_level;
  /* CURVE: the collector's public key (Z85, or a file holding it) and this
   * agent's secret key file. Both empty: plain TCP. */
  char curve_server_key[512];
  char curve_secret_key_file[512];
  /* GPUs (agent_gpu.c, docs/gpu.md): gpu "" or "auto" (NVML and ROCm SMI,
   * those found), "off", "nvml" or "rocm" (that one, or fail);
   * nvml_library "": $ERG_NVML_LIBRARY, else libnvidia-ml.so.1;
   * rocm_smi_library "": $ERG_ROCM_SMI_LIBRARY, else librocm_smi64.so.*. */
  char gpu[8];
  char nvml_library[256];
  char rocm_smi_library[256];
};
void erg_agent_config_defaults(struct erg_agent_config *cfg);
/* sub_interval_seconds' default: 0.1 s, what light load wants (a real
 * node's power follows its load within milliseconds, /proc/stat counts 100
 * ticks a second per CPU; docs/accuracy.md "Slices by default",
 * docs/agent.md "Busy-time slices"). */
#define ERG_AGENT_SUB_INTERVAL_DEFAULT 0.1
/* sub_interval_seconds' value: 0 (off) or 0.01 … 3600. */
int erg_agent_sub_interval(const char *value, double *out, char *why, size_t whylen);
/* Sets cfg->scope from an absolute cgroup path (trailing '/' dropped). */
int erg_agent_scope_set(struct erg_agent_config *cfg, const char *path, char *why, size_t whylen);
int erg_agent_config_load(const char *path, struct erg_agent_config *cfg,
                          struct erg_config_error *err);
/* One [agent] key as the config file gives it (command-line flags that
 * mirror a key): 0, or -1 with why. */
int erg_agent_config_set(struct erg_agent_config *cfg, const char *key, const char *value,
                         char *why, size_t whylen);
/* curve_server_key's value: a 40-character Z85 key, or a file holding one
 * (a file of that name wins). */
int erg_agent_server_key(const char *value, char out[ERG_KEY_Z85_LEN + 1], char *why,
                         size_t whylen);

struct erg_agent;
int erg_agent_open(struct erg_agent **out, const struct erg_agent_config *cfg, char *why,
                   size_t whylen);
/* Takes one sweep. Returns 1 and a sample (owned by the agent until the next
 * call) when an interval is complete, 0 after the first (baseline) sweep,
 * -1 with why on error. */
int erg_agent_sweep(struct erg_agent *a, const Erg__Sample **out, char *why, size_t whylen);
/* Reads the node's busy time now, a slice's end in the next sample (the
 * main loop calls it every sub_interval_seconds between sweeps). */
void erg_agent_subsample(struct erg_agent *a);
const Erg__Hello *erg_agent_hello(struct erg_agent *a);
/* 1 once after the hello changed mid-run (the GPUs were lost): send it
 * again now; 0 otherwise. */
int erg_agent_hello_changed(struct erg_agent *a);
void erg_agent_close(struct erg_agent *a);

/* One JSON object per line, every field (for --dump and tests). A per-process
 * counter whose feature the hello does not list (cycles, instructions,
 * llc_misses, wakeups, migrations) is left out: absent, not zero. */
char *erg_agent_sample_json(const Erg__Sample *s, const Erg__Hello *h);
/* The hello, plus "features_off": {feature: why} for what the eBPF path
 * cannot measure here (empty on the /proc path). */
char *erg_agent_hello_json(const Erg__Hello *h, const struct erg_agent *a);
/* The i-th feature this node lacks on the eBPF path ("cycles"), with why in
 * *why ("perf_event_open on CPU 0: ... (no hardware PMU event: VM?)"); NULL
 * past the last one, and always on the /proc path. */
const char *erg_agent_feature_off(const struct erg_agent *a, size_t i, const char **why);
/* What open and the sweeps found that an operator should hear of is the
 * caller's to log (the eBPF path logs nothing): the features off above, and
 * these. */
/* Why collection = auto fell back to /proc (eBPF unusable here); NULL when
 * it did not. */
const char *erg_agent_bpf_unavailable(const struct erg_agent *a);
/* Why the eBPF path's unseen-switch repair clock is off (docs/bpf.md
 * "Unseen switches"); NULL when it runs, and on the /proc path. */
const char *erg_agent_heal_off(const struct erg_agent *a);
/* Why slices are not charged from per-thread records (docs/bpf.md "Exact
 * slices": a slice whose switch the tracepoint misses is then estimated);
 * NULL when they are (always, today), and on the /proc path. */
const char *erg_agent_thread_records_off(const struct erg_agent *a);
/* Once per agent: the events the eBPF process map had dropped when a sweep
 * first found it full (processes go uncounted), returned by the first call
 * after that sweep; 0 otherwise, and on the /proc path. */
uint64_t erg_agent_map_full(struct erg_agent *a);
/* The i-th line of what opening the GPUs found (none, why not, which), with
 * its erg_log level in *level; NULL past the last (docs/gpu.md). */
const char *erg_agent_gpu_note(const struct erg_agent *a, size_t i, int *level);
/* Once, after the sweep in which the GPUs failed: why (they are closed,
 * their features gone, CPU sampling goes on); NULL otherwise. */
const char *erg_agent_gpu_stopped(struct erg_agent *a);

/* ---- transport ---- */
struct erg_sender;
/* With cfg's CURVE keys set, the link is encrypted and the collector's
 * identity is verified by the handshake. */
int erg_sender_open(struct erg_sender **out, const struct erg_agent_config *cfg, char *why,
                    size_t whylen);
/* Queues one envelope without blocking: 0 queued, 1 dropped (queue full),
 * -1 error. A sample gets dropped_samples set to the samples dropped since
 * the last one queued; dropped hellos are not counted. */
int erg_sender_send(struct erg_sender *s, const Erg__Envelope *env);
/* 1 when a handshake with the collector has succeeded and the link has not
 * been lost since, waiting up to wait_ms for one; 0 otherwise (what is
 * still queued then will not be delivered). */
int erg_sender_link_up(struct erg_sender *s, int wait_ms);
/* What the link did that an operator should hear of is the caller's to log
 * (the sender logs nothing), as often as it is news: */
enum erg_sender_news_kind {
  ERG_SENDER_CONNECTED,    /* a handshake succeeded while the link was not up */
  ERG_SENDER_LOST,         /* a link that was up is gone: closed, or silent for seconds */
  ERG_SENDER_NO_HANDSHAKE, /* a handshake failed: cause; once per cause in a run of failures */
  ERG_SENDER_STILL_DOWN,   /* no link for seconds: cause (the last failure's), at doubling
                              gaps from 10 s to 10 min */
  ERG_SENDER_RESENT,       /* reconnected: the last count samples sent again */
};
struct erg_sender_news {
  enum erg_sender_news_kind kind;
  double seconds;  /* LOST: the heartbeat timeout; STILL_DOWN: time without a link */
  size_t count;    /* RESENT: samples sent again */
  char cause[400]; /* NO_HANDSHAKE, STILL_DOWN: what the failure most likely means */
};
/* The oldest news that send and link_up found and nobody took yet: 1 and
 * *n, 0 when there is none. Taken after each of those calls, it comes in
 * the order and at the moment it happened (at most 256 wait: news past
 * them is dropped). close reads the link's last events without news: call
 * link_up(s, 0) and take the news before it. */
int erg_sender_news(struct erg_sender *s, struct erg_sender_news *n);
void erg_sender_close(struct erg_sender *s);

/* The resend ring (resend.c): copies of the last packed envelopes, at most
 * max_samples of them and max_bytes in all, the oldest dropped first. */
#define ERG_RESEND_MAX_BYTES (64u << 20)
struct erg_resend_ring;
struct erg_resend_ring *erg_resend_ring_new(size_t max_samples, size_t max_bytes);
/* 0, or -1 (no room at all for this one, or out of memory: not kept). */
int erg_resend_ring_push(struct erg_resend_ring *r, const uint8_t *buf, size_t len);
size_t erg_resend_ring_count(const struct erg_resend_ring *r);
size_t erg_resend_ring_bytes(const struct erg_resend_ring *r);
/* The i-th oldest entry, NULL past the last. */
const uint8_t *erg_resend_ring_get(const struct erg_resend_ring *r, size_t i, size_t *len);
void erg_resend_ring_free(struct erg_resend_ring *r);

#endif

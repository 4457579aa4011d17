// SPDX-License-Identifier: GPL-3.0-or-later
/* What an agent message must satisfy before it becomes data (pure;
 * unit-tested). The wire decoder (common/wire.c) checks the message's
 * shape; these checks bound its claims by physics and by what the node's
 * agent said before: time near ergd's clock, an interval no longer than a
 * few of the agent's, CPU time within CPUs x interval, byte and event
 * rates a machine can reach. A message failing one is refused whole
 * (docs/architecture.md "Refused agent messages"). */
#ifndef ERG_INGEST_CHECK_H
#define ERG_INGEST_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "erg_common.h"

/* Why a message was refused: the reason label of
 * erg_agent_messages_total{result="rejected"}. */
enum ingest_reason {
  INGEST_OK = 0,
  INGEST_MALFORMED,        /* the wire decoder refused it */
  INGEST_CLOCK,            /* interval beyond ergd's clock (future, or before 2020) */
  INGEST_INTERVAL,         /* interval longer than the node's agent's allow */
  INGEST_NCPU,             /* CPU count missing, absurd or unlike the hello's */
  INGEST_CPU,              /* CPU time beyond CPUs x interval */
  INGEST_RATE,             /* bytes, cycles or instructions beyond a machine's rate */
  INGEST_COUNT,            /* event counts (dropped samples, eBPF losses) beyond bounds */
  INGEST_GPU,              /* GPU values: not finite, negative, shares or power beyond bounds */
  INGEST_UNKNOWN_NODE_CAP, /* a new unconfigured node beyond max_unconfigured_nodes */
  INGEST_NODE_LIMIT,       /* ergd's node table full, or a name too long for it */
  INGEST_NREASONS
};
extern const char *const ingest_reason_names[INGEST_NREASONS];

/* Bounds, documented in docs/architecture.md "Refused agent messages". */
#define INGEST_MAX_NCPU 8192
#define INGEST_FUTURE_NS (30 * ERG_NS_PER_S)
#define INGEST_EPOCH_MIN_S 1577836800LL /* 2020-01-01: before it, the clock was never set */
#define INGEST_INTERVAL_FACTOR 10
#define INGEST_INTERVAL_MIN_BOUND_NS (60 * ERG_NS_PER_S)
#define INGEST_BYTES_PER_SECOND 1e12     /* 1 TB/s: ten times a large node's disks or NICs */
#define INGEST_CYCLES_PER_CPU_NS 10.0    /* 10 GHz */
#define INGEST_INSNS_PER_CPU_NS 100.0    /* 10 GHz x 10 per cycle */
#define INGEST_EVENTS_PER_CPU_S 1e7      /* eBPF events per CPU second */
#define INGEST_MAX_DROPPED 1000000000ULL /* 3 years of samples at 0.1 s */
#define INGEST_MAX_GPUS 64               /* per node (NODE_GPUS_MAX) */
#define INGEST_GPU_MAX_WATTS 5000.0      /* per GPU board: 4 x the largest boards' limit */
#define INGEST_GPU_SHARE_SLACK 1e-3      /* a GPU's shares sum to at most 1 + this */
#define INGEST_GPU_MAX_PERCENT 200.0     /* mean utilisation %: the agent's means may overshoot */
#define INGEST_MAX_SLICES 1024           /* busy-time slices per sample (sub-samples) */

/* What changed in a node's hello since its last one (ingest_ref_hello). */
enum {
  INGEST_HELLO_FIRST = 1u << 0,
  INGEST_HELLO_VERSION = 1u << 1,
  INGEST_HELLO_FEATURES = 1u << 2,
  INGEST_HELLO_NCPU = 1u << 3,
  INGEST_HELLO_BOOT = 1u << 4,
  INGEST_HELLO_COLLECTION = 1u << 5,
  INGEST_HELLO_RESTART = 1u << 6, /* another agent process (pid, start time) */
};
enum { INGEST_HELLO_NFIELDS = 5 }; /* hashed: version, features, boot, collection, agent run */

/* What ingest knows of a node's agent from its accepted messages. */
struct ingest_ref {
  unsigned hello_ncpu; /* CPU count of its last hello, 0 none */
  /* The most CPUs a sample may claim: the count of the first hello of the
   * agent's run (a new pid or start time, or a new boot id, starts one),
   * before any hello the first sample's; 0 none yet. A hello of the same
   * run claiming more is refused: CPUs brought online count once the
   * agent restarts (issue 35: a hostile hello said 4 CPUs for a 2-CPU node
   * and its rows then held 6 to 10 CPU seconds a second). */
  unsigned bound_ncpu;
  int bound_from_hello;
  uint64_t hello_hash[INGEST_HELLO_NFIELDS]; /* of its last hello's fields */
  uint64_t hellos_new, hellos_repeated;      /* accepted: first or changed / like the last */
  uint64_t interval_ns; /* moving average of its accepted intervals, 0 none yet */
  uint64_t last_seq;    /* of the last accepted sample: a smaller one is a new agent run */
  unsigned logged;      /* bit 1 << reason: said once for this node */
};

/* The longest interval a sample of the node may span: max(10 x its usual
 * interval, 60 s), and at most the grid's ring (ring_ns, cells still open
 * at most: a longer interval's data could never be stored whole); the
 * ring alone before its usual interval is known. */
uint64_t ingest_interval_bound(const struct ingest_ref *ref, uint64_t ring_ns);
/* INGEST_OK, or the reason the sample must be refused with a bounded
 * message (at most whylen bytes) saying which claim and by how much. */
enum ingest_reason ingest_check_sample(const Erg__Sample *s, const struct ingest_ref *ref,
                                       uint64_t now_ns, uint64_t ring_ns, char *why, size_t whylen);
/* ref: what the node's agent said before (NULL: nothing), for the bound
 * on its CPU count. */
enum ingest_reason ingest_check_hello(const Erg__Hello *h, const struct ingest_ref *ref, char *why,
                                      size_t whylen);
/* Learns from an accepted hello; returns what changed (INGEST_HELLO_*),
 * 0 when it repeats the last one. An agent says hello every 60 samples:
 * only a first or changed one is worth a log line (at 5,000 agents the
 * repeats were 83 lines a second), the rest are counted. */
unsigned ingest_ref_hello(struct ingest_ref *ref, const Erg__Hello *h);
/* The log line of a hello that changed (bounded, cut to len). */
void ingest_hello_text(const Erg__Hello *h, unsigned changed, char *buf, size_t len);
/* Learns from an accepted sample. */
void ingest_ref_sample(struct ingest_ref *ref, const Erg__Sample *s);

#endif

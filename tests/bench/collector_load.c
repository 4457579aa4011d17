// SPDX-License-Identifier: GPL-3.0-or-later
/* Load generator for ergd (benchmark, not a test): impersonates N agents,
 * each with its own ZeroMQ PUSH connection, sending a Hello and then one
 * Sample per second with P processes for D seconds. Agents are spread evenly
 * over the second, as real agents started at different times are.
 * usage: collector_load ENDPOINT [N=2000] [P=100] [D=60] [PREFIX=bench] [BACKLOG=0]
 * BACKLOG=B: first send B one-second samples of the B seconds before now, as
 * fast as the socket takes them (an agent's queue after a collector outage;
 * tests/integration/backlog.sh), then D live ones. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <zmq.h>

#include "erg_common.h"

/* 80 of 100 processes run 0.5-1.5 CPU s a second: the node needs more
 * than 80 CPUs, or ergd refuses its busy time as beyond CPUs x interval. */
#define NCPU 128

/* Comms as an HPC node shows them: MPI ranks share a name, daemons do not. */
static const char *const comms[] = {"lmp_mpi",
                                    "gmx_mpi",
                                    "vasp_std",
                                    "python3",
                                    "pw.x",
                                    "namd2",
                                    "slurmstepd",
                                    "srun",
                                    "bash",
                                    "sshd",
                                    "systemd",
                                    "systemd-journal",
                                    "munged",
                                    "chronyd",
                                    "node_exporter",
                                    "dbus-daemon",
                                    "rsyslogd",
                                    "kworker/u128:2",
                                    "irqbalance",
                                    "java",
                                    "R",
                                    "julia",
                                    "cp2k.psmp",
                                    "orted",
                                    "hydra_pmi_proxy",
                                    "nvidia-persiste",
                                    "lustre_agent",
                                    "sssd_nss",
                                    "crond",
                                    "erg-agent"};
#define NCOMMS (sizeof comms / sizeof comms[0])

struct load_node {
  void *sock;
  char name[64], boot_id[40];
  uint64_t seq, last_rt, last_mono;
  Erg__Proc *procs;
  Erg__Proc **pprocs;
  char (*cgroups)[96];
  char (*jobs)[16];
};

struct load_stats {
  uint64_t messages, samples, procs, eagain, late_max_ns;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* Most processes belong to one or two Slurm jobs; the rest are daemons. */
static void node_procs_init(struct load_node *n, int idx, size_t np) {
  for (size_t k = 0; k < np; k++) {
    Erg__Proc *p = &n->procs[k];
    erg__proc__init(p);
    n->pprocs[k] = p;
    int job = k < np * 8 / 10;
    const char *comm = job ? comms[(idx + (k < np / 2 ? 0 : 1)) % 7] : comms[7 + k % (NCOMMS - 7)];
    p->pid = (uint32_t)(1000 + k * 7);
    p->start_time_ns = (uint64_t)(k + 1) * 123456789ULL;
    p->comm = (char *)comm;
    p->uid = job ? 1000 + (uint32_t)idx % 50 : 0;
    if (job) {
      snprintf(n->jobs[k], sizeof n->jobs[k], "%d", 400000 + idx * 2 + (k < np / 2 ? 0 : 1));
      snprintf(n->cgroups[k], sizeof n->cgroups[k],
               "/system.slice/slurmstepd.scope/job_%s/step_0/user/task_%zu", n->jobs[k], k % 8);
      p->job = n->jobs[k];
    } else {
      snprintf(n->cgroups[k], sizeof n->cgroups[k], "/system.slice/%s.service", comm);
      p->unit = n->cgroups[k] + 14;
    }
    p->cgroup = n->cgroups[k];
  }
}

static int backlog_seconds;

static int node_open(void *ctx, struct load_node *n, const char *endpoint, const char *prefix,
                     int idx, size_t np) {
  snprintf(n->name, sizeof n->name, "%s%05d", prefix, idx);
  snprintf(n->boot_id, sizeof n->boot_id, "b00710ad-0000-4000-8000-%012d", idx);
  n->procs = calloc(np ? np : 1, sizeof *n->procs);
  n->pprocs = calloc(np ? np : 1, sizeof *n->pprocs);
  n->cgroups = calloc(np ? np : 1, sizeof *n->cgroups);
  n->jobs = calloc(np ? np : 1, sizeof *n->jobs);
  n->sock = zmq_socket(ctx, ZMQ_PUSH);
  if (!n->procs || !n->pprocs || !n->cgroups || !n->jobs || !n->sock)
    return -1;
  int hwm = 1000 + backlog_seconds, linger = 30000;
  zmq_setsockopt(n->sock, ZMQ_SNDHWM, &hwm, sizeof hwm);
  zmq_setsockopt(n->sock, ZMQ_LINGER, &linger, sizeof linger);
  node_procs_init(n, idx, np);
  return zmq_connect(n->sock, endpoint);
}

/* Frees what node_open allocated; the socket is closed with linger, so queued
 * samples still go out before zmq_ctx_term returns. */
static void node_close(struct load_node *n) {
  if (n->sock)
    zmq_close(n->sock);
  free(n->procs);
  free(n->pprocs);
  free(n->cgroups);
  free(n->jobs);
}

static void send_env(struct load_node *n, const Erg__Envelope *env, struct load_stats *st) {
  uint8_t *buf;
  size_t len = erg_wire_pack(env, &buf);
  if (!len)
    return;
  if (zmq_send(n->sock, buf, len, ZMQ_DONTWAIT) < 0)
    st->eagain++;
  else
    st->messages++;
  free(buf);
}

static void send_hello(struct load_node *n, struct load_stats *st) {
  static char *features[] = {"cpu_time", "rss", "io"};
  Erg__Hello h = ERG__HELLO__INIT;
  h.node = n->name;
  h.agent_version = "bench";
  h.features = features;
  h.n_features = 3;
  h.boot_id = n->boot_id;
  h.collection = "proc";
  h.ncpu = NCPU;
  Erg__Envelope env = ERG__ENVELOPE__INIT;
  env.version = ERG_WIRE_VERSION;
  env.body_case = ERG__ENVELOPE__BODY_HELLO;
  env.hello = &h;
  send_env(n, &env, st);
  n->last_rt = erg_time_realtime_ns();
  n->last_mono = erg_time_monotonic_ns();
}

/* CPU per process at most 1.5 s per second, 120 s in all: below interval x NCPU.
 * The interval ends at rt/mono. */
static void send_sample_at(struct load_node *n, size_t np, struct load_stats *st, uint64_t rt,
                           uint64_t mono) {
  uint64_t sum = 0;
  for (size_t k = 0; k < np; k++) {
    n->procs[k].cpu_ns = k < np * 8 / 10 ? 500000000 + rng() % 1000000000 : rng() % 20000000;
    n->procs[k].rss_bytes = (100 + rng() % 4000) << 20;
    sum += n->procs[k].cpu_ns;
  }
  Erg__Interval iv = ERG__INTERVAL__INIT;
  iv.realtime_start_ns = n->last_rt;
  iv.realtime_end_ns = rt;
  iv.monotonic_start_ns = n->last_mono;
  iv.monotonic_end_ns = mono;
  Erg__NodeTotals t = ERG__NODE_TOTALS__INIT;
  t.cpu_busy_ns = sum + 30000000;
  t.ncpu = NCPU;
  t.mem_used_bytes = 100ULL << 30;
  Erg__Sample s = ERG__SAMPLE__INIT;
  s.node = n->name;
  s.seq = ++n->seq;
  s.boot_id = n->boot_id;
  s.interval = &iv;
  s.totals = &t;
  s.procs = n->pprocs;
  s.n_procs = np;
  s.system_cpu_ns = 30000000;
  s.collection = "proc";
  Erg__Envelope env = ERG__ENVELOPE__INIT;
  env.version = ERG_WIRE_VERSION;
  env.body_case = ERG__ENVELOPE__BODY_SAMPLE;
  env.sample = &s;
  uint64_t before = st->messages;
  send_env(n, &env, st);
  if (st->messages > before) {
    st->samples++;
    st->procs += np;
  }
  n->last_rt = rt;
  n->last_mono = mono;
}

static void send_sample(struct load_node *n, size_t np, struct load_stats *st) {
  send_sample_at(n, np, st, erg_time_realtime_ns(), erg_time_monotonic_ns());
}

/* The backlog: every node's clock starts B seconds back, one second a sample. */
static void run_backlog(struct load_node *nodes, int nn, size_t np, struct load_stats *st) {
  uint64_t back = (uint64_t)backlog_seconds * ERG_NS_PER_S;
  for (int i = 0; i < nn; i++) {
    nodes[i].last_rt -= back;
    nodes[i].last_mono -= back;
  }
  for (int s = 0; s < backlog_seconds; s++)
    for (int i = 0; i < nn; i++)
      send_sample_at(&nodes[i], np, st, nodes[i].last_rt + ERG_NS_PER_S,
                     nodes[i].last_mono + ERG_NS_PER_S);
}

static void raise_nofile(int nodes) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return;
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < (rlim_t)nodes * 3 + 64)
    fprintf(stderr, "collector_load: RLIMIT_NOFILE %llu may be too low for %d sockets\n",
            (unsigned long long)rl.rlim_cur, nodes);
}

/* Second s, node i is due at start + s + i/N: a steady stream, no bursts. */
static void run(struct load_node *nodes, int nn, size_t np, int secs, struct load_stats *st) {
  uint64_t start = erg_time_monotonic_ns();
  for (int s = 1; s <= secs; s++) {
    for (int i = 0; i < nn; i++) {
      uint64_t due = start + (uint64_t)s * ERG_NS_PER_S + (uint64_t)i * ERG_NS_PER_S / nn;
      uint64_t now = erg_time_monotonic_ns();
      if (now < due)
        erg_time_sleep_ns(due - now);
      else if (now - due > st->late_max_ns)
        st->late_max_ns = now - due;
      send_sample(&nodes[i], np, st);
    }
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: collector_load ENDPOINT [NODES=2000] [PROCS=100] [SECONDS=60] "
                    "[PREFIX=bench] [BACKLOG=0]\n");
    return 1;
  }
  int nn = argc > 2 ? atoi(argv[2]) : 2000, secs = argc > 4 ? atoi(argv[4]) : 60;
  size_t np = argc > 3 ? (size_t)atol(argv[3]) : 100;
  const char *prefix = argc > 5 ? argv[5] : "bench";
  backlog_seconds = argc > 6 ? atoi(argv[6]) : 0;
  if (nn < 1 || secs < 1 || backlog_seconds < 0 || backlog_seconds > 86400) {
    fprintf(stderr, "collector_load: NODES and SECONDS must be positive, BACKLOG 0..86400\n");
    return 1;
  }
  raise_nofile(nn);
  void *ctx = zmq_ctx_new();
  zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, nn + 16);
  struct load_node *nodes = calloc((size_t)nn, sizeof *nodes);
  struct load_stats st = {0};
  for (int i = 0; i < nn; i++)
    if (!nodes || node_open(ctx, &nodes[i], argv[1], prefix, i, np) != 0) {
      fprintf(stderr, "collector_load: node %d: %s\n", i, zmq_strerror(errno));
      for (int j = 0; nodes && j <= i; j++)
        node_close(&nodes[j]);
      free(nodes);
      zmq_ctx_term(ctx);
      return 1;
    }
  for (int i = 0; i < nn; i++)
    send_hello(&nodes[i], &st);
  run_backlog(nodes, nn, np, &st);
  run(nodes, nn, np, secs, &st);
  for (int i = 0; i < nn; i++)
    node_close(&nodes[i]);
  free(nodes);
  zmq_ctx_term(ctx);
  printf("sent messages=%llu hellos=%d samples=%llu proc_samples=%llu hwm_drops=%llu "
         "pacing_late_max_ms=%.1f\n",
         (unsigned long long)st.messages, nn, (unsigned long long)st.samples,
         (unsigned long long)st.procs, (unsigned long long)st.eagain, st.late_max_ns / 1e6);
  return 0;
}

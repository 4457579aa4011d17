// SPDX-License-Identifier: GPL-3.0-or-later
/* ergd's bounds on agent claims (collector/ingest_check.c): the hostile
 * and broken messages of issue 23 pass the wire decoder, and are refused
 * here with their reason; an honest agent's samples, slack included, are
 * not. Messages go through erg_wire_pack/erg_wire_unpack as ergd gets
 * them. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "erg_collector.h"
#include "ingest_check.h"

#define NOW (1800000000ULL * ERG_NS_PER_S)
#define RING (128ULL * 5 * ERG_NS_PER_S) /* ERG_GRID_SLOTS x the default step */

static Erg__Proc proc;
static Erg__Proc *procs[1] = {&proc};
static Erg__Interval iv;
static Erg__NodeTotals totals;
static Erg__Sample sample;
static Erg__Envelope env;

/* One second of a 4-CPU node, two CPUs busy, ending 0.5 s before NOW. */
static void make_sample(void) {
  erg__proc__init(&proc);
  proc.pid = 42;
  proc.comm = "stress-ng";
  proc.cpu_ns = 1900000000;
  proc.read_bytes = 1 << 20;
  erg__interval__init(&iv);
  iv.realtime_end_ns = NOW - ERG_NS_PER_S / 2;
  iv.realtime_start_ns = iv.realtime_end_ns - ERG_NS_PER_S;
  erg__node_totals__init(&totals);
  totals.ncpu = 4;
  totals.cpu_busy_ns = 2000000000;
  totals.cpu_idle_ns = 2000000000;
  totals.disk_read_bytes = 1 << 20;
  erg__sample__init(&sample);
  sample.node = "n1";
  sample.seq = 7;
  sample.boot_id = "b";
  sample.interval = &iv;
  sample.totals = &totals;
  sample.procs = procs;
  sample.n_procs = 1;
  erg__envelope__init(&env);
  env.version = ERG_WIRE_VERSION;
  env.body_case = ERG__ENVELOPE__BODY_SAMPLE;
  env.sample = &sample;
}

/* The sample as ergd decodes it, then checked: INGEST_MALFORMED when the
 * decoder already refuses it. */
static enum ingest_reason wire_check(const struct ingest_ref *ref, char *why, size_t whylen) {
  uint8_t *buf;
  size_t len = erg_wire_pack(&env, &buf);
  assert_true(len > 0);
  const char *bad;
  Erg__Envelope *out = erg_wire_unpack(buf, len, &bad);
  free(buf);
  if (!out) {
    snprintf(why, whylen, "%s", bad);
    return INGEST_MALFORMED;
  }
  enum ingest_reason r = ingest_check_sample(out->sample, ref, NOW, RING, why, whylen);
  erg_wire_free(out);
  return r;
}

static enum ingest_reason check(const struct ingest_ref *ref) {
  char why[300];
  enum ingest_reason r = ingest_check_sample(&sample, ref, NOW, RING, why, sizeof why);
  assert_true(strlen(why) < sizeof why);
  assert_true(r == INGEST_OK ? why[0] == '\0' : why[0] != '\0');
  return r;
}

static void test_honest(void **state) {
  (void)state;
  make_sample();
  struct ingest_ref ref = {0};
  char why[300];
  assert_int_equal(wire_check(&ref, why, sizeof why), INGEST_OK);
  /* Slack for the agent's reads: 1.2 x CPUs x interval of node CPU, a
   * process using every CPU for 1.9 intervals (eBPF catch-up). */
  totals.cpu_busy_ns = 4 * 1200000000ULL;
  totals.cpu_idle_ns = 0;
  proc.cpu_ns = 4 * 1900000000ULL;
  assert_int_equal(check(&ref), INGEST_OK);
  /* Up to 30 s ahead of ergd's clock. */
  iv.realtime_end_ns = NOW + 29 * ERG_NS_PER_S;
  iv.realtime_start_ns = iv.realtime_end_ns - ERG_NS_PER_S;
  assert_int_equal(check(&ref), INGEST_OK);
  /* 100 GB/s of disk reads. */
  totals.disk_read_bytes = 100000000000ULL;
  proc.read_bytes = 100000000000ULL;
  assert_int_equal(check(&ref), INGEST_OK);
}

/* Issue 23, item 1: an interval from now + 2 s to now + 1 h. */
static void test_future_interval(void **state) {
  (void)state;
  make_sample();
  iv.realtime_start_ns = NOW + 2 * ERG_NS_PER_S;
  iv.realtime_end_ns = NOW + 3600 * ERG_NS_PER_S;
  char why[300];
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_CLOCK);
  assert_non_null(strstr(why, "after ergd's clock"));
  /* 31 s ahead, a second long. */
  iv.realtime_end_ns = NOW + 31 * ERG_NS_PER_S;
  iv.realtime_start_ns = iv.realtime_end_ns - ERG_NS_PER_S;
  assert_int_equal(check(NULL), INGEST_CLOCK);
  /* A node whose clock was never set. */
  iv.realtime_start_ns = 5 * ERG_NS_PER_S;
  iv.realtime_end_ns = 6 * ERG_NS_PER_S;
  assert_int_equal(check(NULL), INGEST_CLOCK);
}

/* An interval of more than max(10 x the agent's usual, 60 s); before the
 * usual is known, more than the grid's ring. */
static void test_interval_bound(void **state) {
  (void)state;
  make_sample();
  struct ingest_ref ref = {0};
  assert_int_equal(ingest_interval_bound(&ref, RING), RING);
  assert_int_equal(ingest_interval_bound(NULL, RING), RING);
  for (int i = 0; i < 20; i++) {
    sample.seq = 10 + (uint64_t)i;
    ingest_ref_sample(&ref, &sample);
  }
  assert_int_equal(ref.interval_ns, ERG_NS_PER_S);
  assert_int_equal(ingest_interval_bound(&ref, RING), 60 * ERG_NS_PER_S);
  totals.cpu_busy_ns = totals.cpu_idle_ns = 0;
  iv.realtime_start_ns = iv.realtime_end_ns - 59 * ERG_NS_PER_S;
  assert_int_equal(check(&ref), INGEST_OK);
  iv.realtime_start_ns = iv.realtime_end_ns - 61 * ERG_NS_PER_S;
  assert_int_equal(check(&ref), INGEST_INTERVAL);
  /* Not learnt yet: the ring (640 s). */
  assert_int_equal(check(NULL), INGEST_OK);
  iv.realtime_start_ns = iv.realtime_end_ns - 641 * ERG_NS_PER_S;
  assert_int_equal(check(NULL), INGEST_INTERVAL);
  /* An agent of 30 s: 300 s. */
  ref.interval_ns = 30 * ERG_NS_PER_S;
  assert_int_equal(ingest_interval_bound(&ref, RING), 300 * ERG_NS_PER_S);
  /* A new agent run (its sequence starts again) may have another interval. */
  ref.interval_ns = ERG_NS_PER_S;
  ref.last_seq = 100;
  sample.seq = 1;
  iv.realtime_start_ns = iv.realtime_end_ns - 120 * ERG_NS_PER_S;
  ingest_ref_sample(&ref, &sample);
  assert_int_equal(ref.interval_ns, 120 * ERG_NS_PER_S);
  assert_int_equal(ref.last_seq, 1);
  /* A resent copy is not a new run. */
  sample.resent = 1;
  sample.seq = 0;
  ref.interval_ns = ERG_NS_PER_S;
  iv.realtime_start_ns = iv.realtime_end_ns - ERG_NS_PER_S;
  ingest_ref_sample(&ref, &sample);
  assert_int_equal(ref.interval_ns, ERG_NS_PER_S);
  assert_int_equal(ref.last_seq, 1);
}

/* Issue 23, item 2: totals.ncpu = 4294967295, and counts unlike the hello. */
static void test_ncpu(void **state) {
  (void)state;
  make_sample();
  char why[300];
  totals.ncpu = 4294967295u;
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_NCPU);
  totals.ncpu = 8193;
  assert_int_equal(check(NULL), INGEST_NCPU);
  totals.ncpu = 0;
  assert_int_equal(check(NULL), INGEST_NCPU);
  sample.totals = NULL;
  assert_int_equal(check(NULL), INGEST_NCPU);
  sample.totals = &totals;
  struct ingest_ref ref = {0};
  Erg__Hello h = ERG__HELLO__INIT;
  h.node = "n1";
  h.ncpu = 4;
  assert_int_equal(ingest_check_hello(&h, &ref, why, sizeof why), INGEST_OK);
  ingest_ref_hello(&ref, &h);
  totals.ncpu = 4;
  assert_int_equal(check(&ref), INGEST_OK);
  totals.ncpu = 3; /* a CPU taken offline */
  assert_int_equal(check(&ref), INGEST_OK);
  totals.ncpu = 5; /* more than the run started with */
  assert_int_equal(wire_check(&ref, why, sizeof why), INGEST_NCPU);
  assert_non_null(strstr(why, "the agent restarts"));
  h.ncpu = 9000;
  assert_int_equal(ingest_check_hello(&h, &ref, why, sizeof why), INGEST_NCPU);
  h.ncpu = 0; /* unknown: the last known stays */
  ingest_ref_hello(&ref, &h);
  assert_int_equal(ref.hello_ncpu, 4);
  assert_int_equal(ref.bound_ncpu, 4);
}

/* Issue 35: a hello of the same agent run claiming more CPUs (4 for a
 * 2-CPU node) is refused and raises nothing; one of a new run (another
 * pid or start time) or a new boot sets the count anew. Before any hello,
 * the first sample's count bounds the rest. */
static void test_ncpu_hello_run(void **state) {
  (void)state;
  char why[300];
  struct ingest_ref ref = {0};
  make_sample();
  totals.ncpu = 2;
  ingest_ref_sample(&ref, &sample);
  assert_int_equal(ref.bound_ncpu, 2);
  totals.ncpu = 4;
  assert_int_equal(ingest_check_sample(&sample, &ref, NOW, RING, why, sizeof why), INGEST_NCPU);
  assert_non_null(strstr(why, "its first sample"));
  Erg__Hello h = ERG__HELLO__INIT;
  h.node = "n1";
  h.boot_id = "b1";
  h.agent_pid = 100;
  h.agent_start_realtime_ns = 1;
  h.ncpu = 2;
  assert_int_equal(ingest_check_hello(&h, &ref, why, sizeof why), INGEST_OK);
  ingest_ref_hello(&ref, &h);
  h.ncpu = 4; /* the hostile hello: same run, same boot */
  assert_int_equal(ingest_check_hello(&h, &ref, why, sizeof why), INGEST_NCPU);
  assert_non_null(strstr(why, "4 CPUs, more than the 2"));
  totals.ncpu = 4;
  assert_int_equal(check(&ref), INGEST_NCPU);
  h.ncpu = 1; /* fewer: taken, the bound stays */
  assert_int_equal(ingest_check_hello(&h, &ref, why, sizeof why), INGEST_OK);
  ingest_ref_hello(&ref, &h);
  assert_int_equal(ref.bound_ncpu, 2);
  h.ncpu = 4; /* the agent restarted (SMT switched on): a new count */
  h.agent_pid = 101;
  assert_int_equal(ingest_check_hello(&h, &ref, why, sizeof why), INGEST_OK);
  ingest_ref_hello(&ref, &h);
  assert_int_equal(ref.bound_ncpu, 4);
  assert_int_equal(check(&ref), INGEST_OK);
  h.ncpu = 8; /* a new boot with more CPUs, same pid by chance */
  h.boot_id = "b2";
  assert_int_equal(ingest_check_hello(&h, &ref, why, sizeof why), INGEST_OK);
  ingest_ref_hello(&ref, &h);
  assert_int_equal(ref.bound_ncpu, 8);
}

/* Issue 23, item 2: cpu_busy_ns = 1e19, a process with cpu_ns = 1e18. */
static void test_cpu(void **state) {
  (void)state;
  make_sample();
  char why[300];
  totals.cpu_busy_ns = 10000000000000000000ULL;
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_CPU);
  assert_non_null(strstr(why, "busy"));
  make_sample();
  totals.cpu_idle_ns = 10000000000000000000ULL;
  assert_int_equal(check(NULL), INGEST_CPU);
  make_sample();
  sample.system_cpu_ns = 6 * ERG_NS_PER_S;
  assert_int_equal(check(NULL), INGEST_CPU);
  /* The process: the decoder already refuses it on 4 CPUs; on the most
   * CPUs a node may have, and through the decoder with ncpu made up, the
   * checks do. */
  make_sample();
  proc.cpu_ns = 1000000000000000000ULL;
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_MALFORMED);
  totals.ncpu = 8192;
  assert_int_equal(check(NULL), INGEST_CPU);
  totals.ncpu = 4294967295u;
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_NCPU);
  /* Processes each possible, together not. */
  make_sample();
  Erg__Proc many[5];
  Erg__Proc *pm[5];
  for (int i = 0; i < 5; i++) {
    many[i] = proc;
    many[i].cpu_ns = 2 * ERG_NS_PER_S;
    pm[i] = &many[i];
  }
  sample.procs = pm;
  sample.n_procs = 5;
  assert_int_equal(check(NULL), INGEST_CPU);
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_CPU);
  sample.n_procs = 4;
  assert_int_equal(check(NULL), INGEST_OK);
}

static void test_rates_and_counts(void **state) {
  (void)state;
  make_sample();
  char why[300];
  totals.net_rx_bytes = 10000000000000000000ULL;
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_RATE);
  make_sample();
  totals.disk_write_bytes = 3000000000000ULL; /* 3 TB in a second */
  assert_int_equal(check(NULL), INGEST_RATE);
  make_sample();
  proc.write_bytes = 10000000000000000000ULL;
  assert_int_equal(check(NULL), INGEST_RATE);
  make_sample();
  proc.cycles = 4ULL * ERG_NS_PER_S * 25; /* 25 GHz on each of 4 CPUs */
  assert_int_equal(check(NULL), INGEST_RATE);
  proc.cycles = 4ULL * ERG_NS_PER_S * 5; /* 5 GHz on every CPU */
  assert_int_equal(check(NULL), INGEST_OK);
  proc.instructions = 10000000000000000000ULL;
  assert_int_equal(check(NULL), INGEST_RATE);
  make_sample();
  sample.dropped_samples = 10000000000000000000ULL;
  assert_int_equal(check(NULL), INGEST_COUNT);
  make_sample();
  Erg__BpfHealth b = ERG__BPF_HEALTH__INIT;
  sample.bpf = &b;
  b.map_full_drops = 1000;
  assert_int_equal(check(NULL), INGEST_OK);
  b.unseen_switches = 10000000000000000000ULL;
  assert_int_equal(check(NULL), INGEST_COUNT);
  b.unseen_switches = 0;
  b.lost_exit_ns = 10000000000000000000ULL;
  assert_int_equal(check(NULL), INGEST_CPU);
}

/* Issue 26: GPU readings (docs/gpu.md). Two GPUs over the 1 s sample, the
 * process on both; honest values pass (shares summing to 1), then each
 * impossible one is refused with reason "gpu". */
static void test_gpu(void **state) {
  (void)state;
  make_sample();
  Erg__Gpu g[2], *gp[2] = {&g[0], &g[1]};
  Erg__GpuUse u[2], *up[2] = {&u[0], &u[1]};
  for (int i = 0; i < 2; i++) {
    erg__gpu__init(&g[i]);
    g[i].index = (uint32_t)i;
    g[i].uuid = i ? "GPU-b" : "GPU-a";
    g[i].interval_ns = ERG_NS_PER_S;
    g[i].has_energy = 1;
    g[i].energy_joules = 700;
    g[i].power_watts = 700;
    g[i].util_percent = 100;
    erg__gpu_use__init(&u[i]);
    u[i].gpu_index = (uint32_t)i;
    u[i].sm_share = 1;
    u[i].sm_percent = 100;
  }
  sample.gpus = gp;
  sample.n_gpus = 2;
  proc.gpu = up;
  proc.n_gpu = 2;
  char why[300];
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_OK);
  u[1].sm_share = 1.0005; /* rounding of the agent's sums */
  assert_int_equal(check(NULL), INGEST_OK);
  u[1].sm_share = 1.01;
  assert_int_equal(check(NULL), INGEST_GPU);
  u[1].sm_share = -0.1;
  assert_int_equal(check(NULL), INGEST_GPU);
  u[1].sm_share = NAN;
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_GPU);
  assert_non_null(strstr(why, "share"));
  u[1].sm_share = 0.5;
  u[1].gpu_index = 7; /* no such GPU in the sample */
  assert_int_equal(check(NULL), INGEST_GPU);
  u[1].gpu_index = 0; /* GPU 0 twice */
  assert_int_equal(check(NULL), INGEST_GPU);
  u[1].gpu_index = 1;
  assert_int_equal(check(NULL), INGEST_OK);
  g[0].power_watts = 6000;
  assert_int_equal(check(NULL), INGEST_GPU);
  g[0].power_watts = INFINITY;
  assert_int_equal(check(NULL), INGEST_GPU);
  g[0].power_watts = 700;
  g[0].energy_joules = 5000 * 2.2; /* beyond 5 kW over 2 x 1 s + 0.1 s */
  assert_int_equal(check(NULL), INGEST_GPU);
  g[0].energy_joules = -1;
  assert_int_equal(check(NULL), INGEST_GPU);
  g[0].energy_joules = 700;
  g[1].index = 0; /* two GPUs with index 0 */
  assert_int_equal(check(NULL), INGEST_GPU);
  g[1].index = 1;
  g[1].util_percent = 1000;
  assert_int_equal(check(NULL), INGEST_GPU);
  g[1].util_percent = 0;
  assert_int_equal(check(NULL), INGEST_OK);
  /* A second process: the shares of GPU 1 now sum to 1.5. */
  Erg__Proc other;
  Erg__Proc *both[2] = {&proc, &other};
  erg__proc__init(&other);
  other.pid = 43;
  other.comm = "python";
  Erg__GpuUse *one[1] = {&u[1]};
  other.gpu = one;
  other.n_gpu = 1;
  sample.procs = both;
  sample.n_procs = 2;
  u[1].sm_share = 0.75;
  assert_int_equal(check(NULL), INGEST_GPU);
  u[1].sm_share = 0.5;
  assert_int_equal(check(NULL), INGEST_OK);
  assert_string_equal(ingest_reason_names[INGEST_GPU], "gpu");
}

static void test_reason_names(void **state) {
  (void)state;
  for (int r = 0; r < INGEST_NREASONS; r++)
    assert_non_null(ingest_reason_names[r]);
  assert_string_equal(ingest_reason_names[INGEST_UNKNOWN_NODE_CAP], "unknown_node_cap");
}

/* [collector] max_unconfigured_nodes: 64 by default, 0 … 16384. */
static void test_config_key(void **state) {
  (void)state;
  char path[] = "/tmp/test_ingest_check.XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  struct erg_collector_config cfg;
  struct erg_config_error err;
  const char *values[] = {"5", "0", "-1", "16385", "many"};
  const int ok[] = {5, 0, -1, -1, -1};
  for (int i = 0; i < 5; i++) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "[collector]\nmax_unconfigured_nodes = %s\n", values[i]);
    fclose(f);
    erg_collector_config_defaults(&cfg);
    int rc = erg_collector_config_load(path, &cfg, &err);
    if (ok[i] >= 0) {
      assert_int_equal(rc, 0);
      assert_int_equal(cfg.max_unconfigured_nodes, ok[i]);
    } else {
      assert_int_not_equal(rc, 0);
      assert_non_null(strstr(err.msg, "max_unconfigured_nodes"));
    }
    erg_collector_config_free(&cfg);
  }
  erg_collector_config_defaults(&cfg);
  assert_int_equal(cfg.max_unconfigured_nodes, 64);
  unlink(path);
}

/* Issue 25: a hello is logged when it is a node's first or says something
 * new; the repeats every 60 samples are only counted. */
static void test_hello_changes(void **state) {
  (void)state;
  struct ingest_ref ref = {0};
  char *feats[] = {"cpu_time", "rss", "io"}, *more[] = {"cpu_time", "rss", "io", "cycles"};
  Erg__Hello h = ERG__HELLO__INIT;
  h.node = "n1";
  h.agent_version = "0.1.0";
  h.boot_id = "b1";
  h.collection = "bpf";
  h.ncpu = 8;
  h.agent_pid = 100;
  h.agent_start_realtime_ns = 1;
  h.features = feats;
  h.n_features = 3;
  assert_int_equal(ingest_ref_hello(&ref, &h), INGEST_HELLO_FIRST);
  for (int i = 0; i < 3; i++)
    assert_int_equal(ingest_ref_hello(&ref, &h), 0);
  h.boot_id = "b2";
  h.agent_pid = 7;
  assert_int_equal(ingest_ref_hello(&ref, &h), INGEST_HELLO_BOOT | INGEST_HELLO_RESTART);
  h.features = more;
  h.n_features = 4;
  assert_int_equal(ingest_ref_hello(&ref, &h), INGEST_HELLO_FEATURES);
  h.ncpu = 0; /* unknown: no change, the last known stays */
  assert_int_equal(ingest_ref_hello(&ref, &h), 0);
  h.ncpu = 16;
  h.agent_version = "0.2.0";
  h.collection = "proc";
  unsigned changed = ingest_ref_hello(&ref, &h);
  assert_int_equal(changed, INGEST_HELLO_NCPU | INGEST_HELLO_VERSION | INGEST_HELLO_COLLECTION);
  assert_int_equal(ref.hellos_new, 4);
  assert_int_equal(ref.hellos_repeated, 4);
  char line[600];
  ingest_hello_text(&h, changed, line, sizeof line);
  assert_non_null(strstr(line, "node n1, version 0.2.0, collection proc, 16 CPUs, features "
                               "cpu_time,rss,io,cycles, boot id b2"));
  assert_non_null(strstr(line, "(changed: version, CPUs, collection;"));
  ingest_hello_text(&h, INGEST_HELLO_FIRST, line, 40); /* cut, terminated */
  assert_int_equal(strlen(line), 39);
}

/* Issue 38: the busy time's slices (the agent's sub-samples): as many
 * ends as busy times, rising, the last at the interval's monotonic end,
 * each within its CPUs x span; otherwise refused with a reason. */
static void test_busy_slices(void **state) {
  (void)state;
  char why[256];
  make_sample();
  iv.monotonic_start_ns = 1000 * ERG_NS_PER_S;
  iv.monotonic_end_ns = iv.monotonic_start_ns + ERG_NS_PER_S;
  uint64_t end[] = {400000000, 700000000, ERG_NS_PER_S},
           busy[] = {200000000, 1200000000, 600000000};
  totals.cpu_busy_slice_ns = busy;
  totals.busy_slice_end_ns = end;
  totals.n_cpu_busy_slice_ns = totals.n_busy_slice_end_ns = 3;
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_OK);
  totals.n_busy_slice_end_ns = 2; /* one end missing */
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_CPU);
  assert_non_null(strstr(why, "3 busy slices with 2 ends"));
  totals.n_busy_slice_end_ns = 3;
  end[2] = ERG_NS_PER_S - 1; /* not at the interval's end */
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_CPU);
  assert_non_null(strstr(why, "not at its end"));
  end[2] = ERG_NS_PER_S;
  end[1] = end[0]; /* an empty slice */
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_CPU);
  assert_non_null(strstr(why, "busy slice 1 ends at 0.400000 s, not after 0.400000 s"));
  end[1] = 700000000;
  busy[1] = 1600000000; /* 1.6 CPU-s in 0.3 s on 4 CPUs: more than 1.58 */
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_CPU);
  assert_non_null(strstr(why, "busy slice 1: 1.6 CPU s in 0.3000 s on 4 CPUs"));
  busy[1] = 1200000000;
  assert_int_equal(wire_check(NULL, why, sizeof why), INGEST_OK);
  totals.n_cpu_busy_slice_ns = totals.n_busy_slice_end_ns = 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hello_changes),    cmocka_unit_test(test_honest),
      cmocka_unit_test(test_busy_slices),      cmocka_unit_test(test_future_interval),
      cmocka_unit_test(test_interval_bound),   cmocka_unit_test(test_ncpu),
      cmocka_unit_test(test_ncpu_hello_run),   cmocka_unit_test(test_cpu),
      cmocka_unit_test(test_rates_and_counts), cmocka_unit_test(test_reason_names),
      cmocka_unit_test(test_config_key),       cmocka_unit_test(test_gpu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Config errors name the file, the line and the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "erg_agent.h"
#include "erg_collector.h"

static char path[64];

static void write_conf(const char *text) {
  strcpy(path, "/tmp/erg-test-conf-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
}

static void test_collector_ok(void **state) {
  (void)state;
  write_conf("[collector]\nstep_seconds = 10\ndata_dir = /tmp/x\n"
             "wal_fsync = no\nwal_max_bytes = 2097152\n"
             "http_max_connections = 100\nhttp_max_connections_per_address = 10\n"
             "http_header_timeout_seconds = 2.5\nhttp_request_timeout_seconds = 30\n"
             "page_timeout_seconds = 60\n"
             "[node.n1]\npower = m1 + pdu1:3*0.5\nidle_watts = 55\n"
             "[meter.m1]\nhost = 127.0.0.1\nport = 5020\nprofile = erg-sim\nunit_id = 2\n"
             "[pdu.pdu1]\nhost = 10.0.0.9\ncommunity = private\n");
  struct erg_collector_config c;
  struct erg_config_error err;
  erg_collector_config_defaults(&c);
  assert_int_equal(erg_collector_config_load(path, &c, &err), 0);
  assert_int_equal(c.step_seconds, 10);
  assert_string_equal(c.www_dir, "/tmp/x/www");
  assert_int_equal(c.http_max_connections, 100);
  assert_int_equal(c.http_max_connections_per_address, 10);
  assert_float_equal(c.http_header_timeout_seconds, 2.5, 0);
  assert_float_equal(c.http_request_timeout_seconds, 30, 0);
  assert_float_equal(c.page_timeout_seconds, 60, 0);
  assert_int_equal(c.nsources, 2);
  assert_int_equal(c.nnodes, 1);
  assert_int_equal(c.nodes[0].nfeeds, 2);
  assert_int_equal(c.nodes[0].feeds[0].source, 0);
  assert_int_equal(c.sources[0].channels[c.nodes[0].feeds[0].channel], 2);
  assert_string_equal(c.sources[1].driver, "snmp");
  assert_int_equal(c.sources[1].channels[c.nodes[0].feeds[1].channel], 3);
  assert_float_equal(c.nodes[0].feeds[1].factor, 0.5, 1e-12);
  assert_float_equal(c.nodes[0].idle_watts, 55, 1e-12);
  /* Unset, the key cap follows top_processes (never below 64). */
  assert_int_equal(erg_collector_key_archives_max(&c), 64);
  c.top_processes = 50;
  assert_int_equal(erg_collector_key_archives_max(&c), 200);
  c.key_archives_max = 60;
  assert_int_equal(erg_collector_key_archives_max(&c), 60);
  assert_float_equal(c.key_min_share, 0.01, 0);
  /* The write-ahead log: on by default, in DATA_DIR/wal unless wal_dir. */
  assert_true(c.wal && !c.wal_fsync && c.wal_dir[0] == '\0');
  assert_int_equal(c.wal_max_bytes, 2097152);
  assert_float_equal(c.archive_days[0], 2, 0);
  assert_float_equal(c.archive_days[3], 3653, 0);
  erg_collector_config_free(&c);
  unlink(path);
  write_conf("[collector]\narchive_days = 0.25 0 30 0\n");
  erg_collector_config_defaults(&c);
  assert_int_equal(erg_collector_config_load(path, &c, &err), 0);
  assert_float_equal(c.archive_days[0], 0.25, 0);
  assert_float_equal(c.archive_days[1], 0, 0);
  assert_float_equal(c.archive_days[2], 30, 0);
  erg_collector_config_free(&c);
  unlink(path);
}

/* Dual PSUs (a node on two outlets) and a chassis outlet split between two
 * nodes: both nodes point at the same channel with their factors. */
static void test_collector_split(void **state) {
  (void)state;
  write_conf("[meter.m]\nhost = h\nprofile = erg-sim\n[pdu.p]\nhost = 10.0.0.9\n"
             "[node.a]\npower = p:1 + p:2*0.25\n[node.b]\npower = p:2*0.75\n");
  struct erg_collector_config c;
  struct erg_config_error err;
  erg_collector_config_defaults(&c);
  assert_int_equal(erg_collector_config_load(path, &c, &err), 0);
  assert_int_equal(c.nodes[0].nfeeds, 2);
  assert_int_equal(c.nodes[1].nfeeds, 1);
  assert_int_equal(c.nodes[0].feeds[1].channel, c.nodes[1].feeds[0].channel);
  assert_int_equal(c.sources[1].channels[c.nodes[1].feeds[0].channel], 2);
  assert_float_equal(c.nodes[0].feeds[1].factor + c.nodes[1].feeds[0].factor, 1, 1e-12);
  erg_collector_config_free(&c);
  unlink(path);
}

static void expect_error(const char *text, const char *needle, int agent) {
  write_conf(text);
  struct erg_config_error err;
  int rc;
  if (agent) {
    struct erg_agent_config a;
    erg_agent_config_defaults(&a);
    rc = erg_agent_config_load(path, &a, &err);
  } else {
    struct erg_collector_config c;
    erg_collector_config_defaults(&c);
    rc = erg_collector_config_load(path, &c, &err);
    erg_collector_config_free(&c);
  }
  unlink(path);
  if (rc != -1)
    fail_msg("accepted: %s", text);
  if (!strstr(err.msg, needle) || !strstr(err.msg, path))
    fail_msg("error '%s' lacks '%s' or the path", err.msg, needle);
}

/* "SOURCE:LEVEL:N": each (level, number) is one channel of its source. */
static void test_collector_levels(void **state) {
  (void)state;
  write_conf("[node.a]\npower = p:inlet:1 - p:7 - p:8 - p:0\n[node.b]\npower = p:phase:L2 + "
             "p:bank:2*0.5\n[node.c]\npower = q:device + p:7 + p:outlet:8\n[node.d]\npower = "
             "p:bank:2*0.5\n[node.e]\npower = p:outlet:0 + p:bank:0\n"
             "[pdu.p]\nhost = h\npower_factor = 0.95\n[pdu.q]\nhost = h2\n");
  struct erg_collector_config c;
  struct erg_config_error err;
  erg_collector_config_defaults(&c);
  assert_int_equal(erg_collector_config_load(path, &c, &err), 0);
  const struct erg_pdu_source_config *s = &c.sources[0];
  assert_float_equal(s->power_factor, 0.95, 0);
  static const struct {
    int node, feed, level, num;
  } want[] = {{0, 0, ERG_PDU_INLET, 1},  {1, 0, ERG_PDU_PHASE, 2},  {1, 1, ERG_PDU_BANK, 2},
              {2, 0, ERG_PDU_DEVICE, 1}, {2, 1, ERG_PDU_OUTLET, 7}, {2, 2, ERG_PDU_OUTLET, 8},
              {3, 0, ERG_PDU_BANK, 2},   {4, 0, ERG_PDU_OUTLET, 0}, {4, 1, ERG_PDU_BANK, 0}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const struct erg_node_feed *f = &c.nodes[want[i].node].feeds[want[i].feed];
    assert_int_equal(c.sources[f->source].levels[f->channel], want[i].level);
    assert_int_equal(c.sources[f->source].channels[f->channel], want[i].num);
  }
  /* bank 2 feeds b and d: one channel, not two */
  assert_int_equal(c.nodes[1].feeds[1].channel, c.nodes[3].feeds[0].channel);
  assert_int_equal(s->nchannels, 7);
  erg_collector_config_free(&c);
  unlink(path);
}

/* Units of a daisy chain / cords (issue 34 item 1): "LEVEL:UNIT.N" names
 * a channel of one unit; the same N of two units is two channels; a
 * unit of three arcs, a Modbus meter's unit and a bad arc are refused. */
static void test_collector_units(void **state) {
  (void)state;
  write_conf("[node.a]\npower = p:outlet:210.5 + p:outlet:3.5\n[node.b]\npower = p:outlet:1.2.5 "
             "+ p:inlet:1.2\n[node.c]\npower = p:210.6\n[pdu.p]\nhost = h\n");
  struct erg_collector_config c;
  struct erg_config_error err;
  erg_collector_config_defaults(&c);
  assert_int_equal(erg_collector_config_load(path, &c, &err), 0);
  static const struct {
    int node, feed, level, num;
    const char *unit;
  } want[] = {{0, 0, ERG_PDU_OUTLET, 5, "210"},
              {0, 1, ERG_PDU_OUTLET, 5, "3"},
              {1, 0, ERG_PDU_OUTLET, 5, "1.2"},
              {1, 1, ERG_PDU_INLET, 2, "1"},
              {2, 0, ERG_PDU_OUTLET, 6, "210"}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const struct erg_node_feed *f = &c.nodes[want[i].node].feeds[want[i].feed];
    assert_int_equal(c.sources[f->source].levels[f->channel], want[i].level);
    assert_int_equal(c.sources[f->source].channels[f->channel], want[i].num);
    assert_string_equal(c.sources[f->source].units[f->channel], want[i].unit);
  }
  assert_int_equal(c.sources[0].nchannels, 5);
  erg_collector_config_free(&c);
  unlink(path);
  /* An outlet without a unit may be behind the one inlet named. */
  write_conf("[node.a]\npower = p:outlet:5\n[node.b]\npower = p:inlet:1.2\n[pdu.p]\nhost = h\n");
  erg_collector_config_defaults(&c);
  assert_int_not_equal(erg_collector_config_load(path, &c, &err), 0);
  assert_non_null(strstr(err.msg, "is behind inlet 1.2 of source p"));
  erg_collector_config_free(&c);
  unlink(path);
  /* A named profile's unit arcs are checked before any device answers. */
  write_conf("[node.a]\npower = s:outlet:1.5\n[pdu.s]\nhost = h\nprofile = servertech-sentry4\n");
  erg_collector_config_defaults(&c);
  assert_int_not_equal(erg_collector_config_load(path, &c, &err), 0);
  assert_non_null(strstr(err.msg, "numbers its outlets by 2 unit arcs before the number, not 1"));
  erg_collector_config_free(&c);
  unlink(path);
  write_conf("[node.a]\npower = s:outlet:1.2.5 + s:inlet:1.2\n[pdu.s]\nhost = h\n"
             "profile = servertech-sentry4\n");
  erg_collector_config_defaults(&c);
  assert_int_equal(erg_collector_config_load(path, &c, &err), 0);
  erg_collector_config_free(&c);
  unlink(path);
  const char *bad[] = {"p:outlet:1.2.3.5", "p:outlet:70000.5", "p:outlet:1..5", "p:outlet:.5",
                       "p:outlet:5.",      "p:phase:1.L2",     "m:210.5"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char conf[256];
    snprintf(conf, sizeof conf,
             "[node.a]\npower = %s\n[pdu.p]\nhost = h\n[meter.m]\ndriver = modbus\nhost = "
             "h\n",
             bad[i]);
    write_conf(conf);
    erg_collector_config_defaults(&c);
    assert_int_not_equal(erg_collector_config_load(path, &c, &err), 0);
    assert_non_null(
        strstr(err.msg, !strcmp(bad[i], "m:210.5") ? "units of a daisy chain" : "bad term"));
    erg_collector_config_free(&c);
    unlink(path);
  }
}

/* [group.NAME]: members take the group's feeds (the whole meter); a
 * residual subtracts outlets drawn by other nodes. */
static void test_collector_groups(void **state) {
  (void)state;
  write_conf("[pdu.pdu-a]\nhost = h\n[node.n1]\npower = pdu-a:outlet:1\n"
             "[node.n2]\npower = pdu-a:outlet:2\n[group.rest]\n"
             "power = pdu-a:inlet:1 - pdu-a:outlet:1 - pdu-a:outlet:2\nnodes = n3, n4\n"
             "[group.bank]\npower = pdu-a:bank:2\nnodes = n5 n6 n7\n");
  struct erg_collector_config c;
  struct erg_config_error err;
  erg_collector_config_defaults(&c);
  assert_int_equal(erg_collector_config_load(path, &c, &err), 0);
  assert_int_equal(c.ngroups, 2);
  assert_int_equal(c.groups[0].nfeeds, 3);
  assert_int_equal(c.groups[0].nmembers, 2);
  assert_int_equal(c.groups[1].nmembers, 3);
  assert_float_equal(c.groups[0].feeds[0].factor, 1, 0);
  assert_float_equal(c.groups[0].feeds[1].factor, -1, 0);
  assert_float_equal(c.groups[0].feeds[2].factor, -1, 0);
  /* the subtracted outlet is n1's channel, not a new one */
  assert_int_equal(c.groups[0].feeds[1].channel, c.nodes[0].feeds[0].channel);
  for (int m = 0; m < c.groups[1].nmembers; m++) {
    const struct erg_node_config *n = &c.nodes[c.groups[1].members[m]];
    assert_int_equal(n->group, 1);
    assert_int_equal(n->nfeeds, 1);
    assert_int_equal(n->feeds[0].channel, c.groups[1].feeds[0].channel);
  }
  assert_int_equal(c.nodes[0].group, -1);
  erg_collector_config_free(&c);
  unlink(path);
}

/* A whole PDU (SOURCE:device) holds its outlets: each one another node
 * draws, alone or in shares, is subtracted there once; the first node it
 * counts twice is the one named. */
static void test_collector_whole_pdu(void **state) {
  (void)state;
  write_conf("[pdu.p]\nhost = h\n[pdu.q]\nhost = h2\n[node.a]\npower = p:3*0.5\n"
             "[node.b]\npower = p:3*0.5\n[node.c]\npower = p:4\n[group.rest]\n"
             "power = p:device - p:3 - p:4\nnodes = r1 r2\n[node.x]\npower = q:device*0.5\n"
             "[node.y]\npower = q:device*0.5\n");
  struct erg_collector_config c;
  struct erg_config_error err;
  erg_collector_config_defaults(&c);
  if (erg_collector_config_load(path, &c, &err) != 0)
    fail_msg("refused: %s", err.msg);
  erg_collector_config_free(&c);
  unlink(path);
  expect_error("[pdu.p]\nhost = h\n[node.a]\npower = p:3\n[node.b]\npower = p:4\n"
               "[node.c]\npower = p:5\n[node.w]\npower = p:device - p:3\n",
               "node b is counted twice: its outlet 4 of source p is inside node w's whole PDU "
               "(subtract it there: '- p:outlet:4')",
               0);
}

static void test_errors(void **state) {
  (void)state;
  expect_error("[collector]\n\nstep_secs = 5\n", ":3: unknown key 'step_secs' in [collector]", 0);
  expect_error("[collector]\nstep_seconds = five\n", ":2: key 'step_seconds'", 0);
  expect_error("[collector]\nstep_seconds = 0\n", ":2:", 0);
  expect_error("[bogus]\nx = 1\n", ":2: unknown section [bogus]", 0);
  expect_error("[report]\ncost_per_kwh = cheap\n", ":2: key 'cost_per_kwh': want a number", 0);
  /* A factor both constant and over time: erg report would refuse it. */
  expect_error("[report]\nco2_g_per_kwh = 300\ncarbon_csv = /x.csv\n",
               "[report] sets both co2_g_per_kwh and carbon_csv", 0);
  expect_error("[report]\npue_csv = /p.csv\npue = 1.3\n", "[report] sets both pue and pue_csv", 0);
  expect_error("[node.a]\npower = nosuch:1\n", "bad term 'nosuch:1'", 0);
  /* Groups: a node counted twice, a level feeding nobody, shares over 1. */
  const char *p = "[pdu.p]\nhost = h\n";
  char g[512];
  snprintf(g, sizeof g,
           "%s[group.a]\npower = p:bank:1\nnodes = x y\n[group.b]\n"
           "power = p:bank:2\nnodes = y\n",
           p);
  expect_error(g, "node y is counted twice: in [group.a] and in [group.b]", 0);
  snprintf(g, sizeof g, "%s[node.x]\npower = p:3\n[group.a]\npower = p:bank:1\nnodes = x\n", p);
  expect_error(g, "node x is counted twice: its [node.x] power and [group.a]", 0);
  snprintf(g, sizeof g, "%s[group.a]\npower = p:bank:1\n", p);
  expect_error(g, "[group.a] has no nodes", 0);
  snprintf(g, sizeof g, "%s[group.a]\nnodes = x\n", p);
  expect_error(g, "[group.a] has no 'power'", 0);
  snprintf(g, sizeof g, "%s[group.a]\npower = p:inlet:1 - p:outlet:4\nnodes = x\n", p);
  expect_error(g, "subtracts outlet 4 of source p, which feeds no node or group", 0);
  snprintf(g, sizeof g, "%s[group.a]\npower = p:bank:1\nnodes = x\n[node.y]\npower = p:bank:1\n",
           p);
  expect_error(g, "bank 1 of source p is split into 2 of itself", 0);
  snprintf(g, sizeof g, "%s[group.a]\npower = p:device\nnodes = x\n[node.y]\npower = p:5\n", p);
  expect_error(g, "node y is counted twice: its outlet 5 of source p is inside group a's whole", 0);
  snprintf(g, sizeof g, "%s[node.y]\npower = p:5 - p:6\n", p);
  expect_error(g, "subtracts outlet 6", 0);
  snprintf(g, sizeof g, "%s[node.y]\npower = p:5 -\n", p);
  expect_error(g, "ends with '-'", 0);
  snprintf(g, sizeof g, "%s[node.y]\npower = p:5 + p:outlet:5\n", p);
  expect_error(g, "outlet 5 of source p named twice", 0);
  snprintf(g, sizeof g, "%s[group.a]\npower = p:bank:1\nnodes = x\nweights = 1\n", p);
  expect_error(g, "unknown key (power, nodes)", 0);
  /* Junk in outlet or factor is an error, not outlet 1 or factor 0.5. */
  const char *m = "[meter.m]\nhost = h\nprofile = erg-sim\n";
  char t[256];
  snprintf(t, sizeof t, "%s[node.a]\npower = m:abc\n", m);
  expect_error(t, "bad term 'm:abc'", 0);
  snprintf(t, sizeof t, "%s[node.a]\npower = m:2*0.5x\n", m);
  expect_error(t, "bad term 'm:2*0.5x'", 0);
  snprintf(t, sizeof t, "%s[node.a]\npower = m:0\n", m);
  expect_error(t, "Modbus unit id 0 is the broadcast address", 0);
  snprintf(t, sizeof t, "%s[node.a]\npower = m:65536\n", m);
  expect_error(t, "N 0..65535", 0);
  /* Levels: SNMP only, a known level word, a number (phase: L1..), and
   * with a named profile a level that profile offers. */
  snprintf(t, sizeof t, "%s[node.a]\npower = m:inlet:1\n", m);
  expect_error(t, "'m' is a modbus meter", 0);
  const char *pdu = "[pdu.p]\nhost = h\n";
  snprintf(t, sizeof t, "%s[node.a]\npower = p:feed:1\n", pdu);
  expect_error(t, "bad term 'p:feed:1'", 0);
  snprintf(t, sizeof t, "%s[node.a]\npower = p:inlet\n", pdu);
  expect_error(t, "bad term 'p:inlet'", 0);
  snprintf(t, sizeof t, "%s[node.a]\npower = p:phase:L0\n", pdu);
  expect_error(t, "bad term 'p:phase:L0'", 0);
  snprintf(t, sizeof t,
           "[pdu.p]\nhost = h\nprofile = cyberpower-epdu\n[node.a]\n"
           "power = p:inlet:1\n");
  expect_error(t, "profile cyberpower-epdu of source p has no inlet level", 0);
  expect_error("[pdu.p]\nhost = h\npower_factor = 1.2\n", "not a power factor", 0);
  /* One outlet split into more than itself. */
  snprintf(t, sizeof t, "%s[node.a]\npower = m:2*0.8\n[node.b]\npower = m:2*0.8\n", m);
  expect_error(t, "outlet 2 of source m is split into 1.6", 0);
  expect_error("[meter.m]\nport = 99999\n", ":2: [meter.m] key 'port'", 0);
  /* A key cap below one cell's keys would evict what that cell writes. */
  expect_error("[collector]\ntop_processes = 10\nkey_archives_max = 12\n",
               "key_archives_max = 12 is below top_processes + 3 = 13", 0);
  expect_error("[collector]\nkey_min_share = 1.5\n", ":2: key 'key_min_share'", 0);
  /* The HTTP server's limits (issue 35): each key's range, and together. */
  expect_error("[collector]\nhttp_max_connections = 0\n", ":2: key 'http_max_connections'", 0);
  expect_error("[collector]\nhttp_header_timeout_seconds = nan\n",
               ":2: key 'http_header_timeout_seconds'", 0);
  expect_error("[collector]\nhttp_max_connections = 10\nhttp_max_connections_per_address = 20\n",
               "http_max_connections_per_address 20 is not within 1-http_max_connections (10)", 0);
  expect_error("[collector]\nhttp_header_timeout_seconds = 30\nhttp_request_timeout_seconds = 10\n",
               "http_request_timeout_seconds 10 is not within http_header_timeout_seconds", 0);
  expect_error("[collector]\npage_timeout_seconds = 0.5\n", ":2: key 'page_timeout_seconds'", 0);
  expect_error("[collector]\npage_format = gif\n", "'gif' is not one of png, svg", 0);
  expect_error("[collector]\narchive_days = 2 14\n", "is not 4 numbers of days", 0);
  expect_error("[collector]\narchive_days = 2 14 396 3653 1\n", "is not 4 numbers of days", 0);
  expect_error("[collector]\narchive_days = 0 0 0 0\n", "at least one resolution", 0);
  expect_error("[collector]\narchive_days = -1 14 396 3653\n", "0..36525 days", 0);
  expect_error("[agent]\ninterval_seconds = -1\n", ":2: key 'interval_seconds'", 1);
  expect_error("[agent]\nnode=x\nfoo = 1\n", ":3: unknown key 'foo' in [agent]", 1);
  expect_error("[agent]\nheartbeat_seconds = 0.05\n", ":2: key 'heartbeat_seconds'", 1);
  expect_error("[agent]\nheartbeat_seconds = 601\n", ":2: key 'heartbeat_seconds'", 1);
  expect_error("[agent]\nresend_samples = -1\n", ":2: key 'resend_samples'", 1);
  expect_error("[agent]\nsub_interval_seconds = 0.005\n", "0 (off) or at least 0.01", 1);
  expect_error("[agent]\nsub_interval_seconds = -1\n", ":2: key 'sub_interval_seconds'", 1);
  expect_error("[collector]\nwal = maybe\n", ":2: key 'wal'", 0);
  expect_error("[collector]\nwal_max_bytes = 1000\n", ":2: key 'wal_max_bytes'", 0);
}

/* Issue 23: values that passed the checks and broke ergd or the agent
 * later (NaN passes every range test; a typo'd endpoint never connects). */
static void test_hostile(void **state) {
  (void)state;
  expect_error("[collector]\npoll_seconds = nan\n",
               ":2: key 'poll_seconds': 'nan' is not a "
               "finite number",
               0);
  expect_error("[collector]\npoll_seconds = inf\n", ":2: key 'poll_seconds'", 0);
  expect_error("[collector]\nidle_watts = nan\n", ":2: key 'idle_watts'", 0);
  expect_error("[collector]\nkey_min_share = nan\n", ":2: key 'key_min_share'", 0);
  expect_error("[collector]\npage_interval_seconds = -nan\n", ":2: key 'page_interval_seconds'", 0);
  expect_error("[node.a]\nidle_watts = nan\n", ":2: [node.a] key 'idle_watts'", 0);
  expect_error("[meter.m]\ntimeout_seconds = nan\n", ":2: [meter.m] key 'timeout_seconds'", 0);
  expect_error("[pdu.p]\npower_factor = nan\n", "not a power factor", 0);
  expect_error("[collector]\nlisten = garbage\n",
               ":2: key 'listen': 'garbage' is not a ZeroMQ "
               "endpoint",
               0);
  expect_error("[collector]\nlisten = tcp://127.0.0.1\n", ":2: key 'listen'", 0);
  expect_error("[collector]\nlisten = tcp://127.0.0.1:70000\n", ":2: key 'listen'", 0);
  expect_error("[collector]\nhttp = 127.0.0.1:99999\n",
               ":2: key 'http': '127.0.0.1:99999' is "
               "not an IPv4 HOST:PORT",
               0);
  expect_error("[collector]\nhttp = garbage\n", ":2: key 'http'", 0);
  expect_error("[collector]\ndata_dir =\n", ":2: key 'data_dir': empty", 0);
  char t[700];
  snprintf(t, sizeof t, "[collector]\ndata_dir = /%0600d\n", 0);
  expect_error(t, ":2: line longer than", 0);
  /* One section per name, one value per key: a repeat used to merge or
   * replace silently. */
  expect_error("[collector]\nstep_seconds = 5\n[node.a]\nidle_watts = 1\n[collector]\n"
               "settle_steps = 1\n",
               ":5: section [collector] again (first at line 1)", 0);
  expect_error("[collector]\nstep_seconds = 5\nstep_seconds = 10\n",
               ":3: key 'step_seconds' in [collector] again (first at line 2)", 0);
  expect_error("[meter.m]\nhost = h\n[node.a]\npower = m:1\n  + m:2\n",
               ":5: indented line continues key 'power'", 0);
  expect_error("[meter.x]\nhost = h\n[pdu.x]\nhost = h\n",
               ":4: [pdu.x]: a source named 'x' is defined as both [meter.x] and [pdu.x]", 0);
  /* The docs say 0 < FACTOR <= 1. */
  const char *m = "[meter.m]\nhost = h\nprofile = erg-sim\n";
  snprintf(t, sizeof t, "%s[node.a]\npower = m:1*0\n", m);
  expect_error(t, "bad term 'm:1*0'", 0);
  snprintf(t, sizeof t, "%s[node.a]\npower = m:1*nan\n", m);
  expect_error(t, "bad term 'm:1*nan'", 0);
  snprintf(t, sizeof t, "%s[node.a]\npower =\n", m);
  expect_error(t, ":5: [node.a] key 'power': empty", 0);
  expect_error("[node.../../x]\nidle_watts = 1\n",
               ":2: [node.../../x]: node name '../../x' is "
               "not",
               0);
  expect_error("[node.a b]\nidle_watts = 1\n", "node name 'a b'", 0);
  expect_error("[meter.a:b]\nhost = h\n", "source name 'a:b'", 0);
  expect_error("[meter.m]\nmax_watts = 0\n", ":2: [meter.m] key 'max_watts'", 0);
  expect_error("[pdu.p]\nmax_watts = nan\n", ":2: [pdu.p] key 'max_watts'", 0);
  expect_error("[agent]\ninterval_seconds = nan\n", ":2: key 'interval_seconds'", 1);
  /* Issue 35: values ergd cannot use, refused at load with their line,
   * not warned about when the source opens. */
  expect_error("[meter.m]\nhost = h\ndriver = nan\n",
               ":3: [meter.m] key 'driver': unknown driver 'nan'", 0);
  expect_error("[meter.m]\ndriver =\nhost = h\n", ":2: [meter.m] key 'driver': empty", 0);
  expect_error("[meter.m]\nhost =\n", ":2: [meter.m] key 'host': empty", 0);
  expect_error("[meter.m]\nport = 502\n", ":2: [meter.m]: a Modbus meter needs host", 0);
  expect_error("[pdu.p]\nversion = 2c\n", ":2: [pdu.p]: an SNMP PDU needs host", 0);
  expect_error("[meter.m]\nhost = h\nprofile = nan\n",
               ":3: [meter.m] key 'profile': unknown modbus profile 'nan'", 0);
  expect_error("[meter.m]\nhost = h\nprofile = generic\n",
               ":3: [meter.m] key 'profile': profile generic needs power_register", 0);
  expect_error("[meter.m]\nhost = h\nprofile = generic\npower_register = 3:x:float32\n",
               ":4: [meter.m] key 'power_register'", 0);
  expect_error("[pdu.p]\nhost = h\nprofile = nan\n",
               ":3: [pdu.p] key 'profile': unknown snmp profile 'nan'", 0);
  expect_error("[pdu.p]\nhost = h\nversion = 3\nv3_user = u\nv3_level = bogus\n",
               ":5: [pdu.p] key 'v3_level': 'bogus' is not one of", 0);
  expect_error("[pdu.p]\nhost = h\nversion = 3\nv3_user = u\nv3_auth_proto = rot13\n",
               ":5: [pdu.p] key 'v3_auth_proto': 'rot13' is not one of", 0);
  expect_error("[pdu.p]\nhost = h\nv3_priv_proto = rot13\n", ":3: [pdu.p] key 'v3_priv_proto'", 0);
  expect_error("[pdu.p]\nhost = h\nversion = 3\n",
               ":2: [pdu.p]: SNMPv3 (version = 3) needs v3_user", 0);
  expect_error("[pdu.p]\nhost = h\nversion = 3\nv3_user = u\nv3_level = authPriv\n"
               "v3_auth_pass = 12345678\nv3_priv_pass = short\n",
               ":7: [pdu.p] key 'v3_priv_pass'", 0);
  expect_error("[pdu.p]\nhost = h\ncommunity =\n", ":3: [pdu.p] key 'community'", 0);
  /* Physically double counted: residuals holding each other, and a PDU's
   * only inlet on one node with one of its outlets on another. */
  const char *p = "[pdu.p]\nhost = h\n";
  snprintf(t, sizeof t,
           "%s[node.a]\npower = p:inlet:1 - p:outlet:1\n[node.b]\n"
           "power = p:outlet:1 - p:inlet:1\n",
           p);
  expect_error(t, "power terms hold each other in a loop", 0);
  snprintf(t, sizeof t, "%s[node.a]\npower = p:outlet:1 - p:device\n[node.b]\npower = p:device\n",
           p);
  expect_error(t, "counted twice", 0);
  snprintf(t, sizeof t,
           "%s[node.a]\npower = p:bank:1 - p:outlet:1\n[node.b]\n"
           "power = p:outlet:1 - p:phase:1\n[node.c]\npower = p:phase:1 - p:bank:1\n",
           p);
  expect_error(t, "power terms hold each other in a loop", 0);
  snprintf(t, sizeof t, "%s[node.a]\npower = p:inlet:1\n[node.b]\npower = p:outlet:3\n", p);
  expect_error(t,
               "node b is counted twice: its outlet 3 of source p is behind inlet 1 of source p, "
               "which node a draws",
               0);
  /* Subtracted there, or a PDU with two inlets named (which outlet is
   * behind which is not known): accepted. */
  static const char *const fine[] = {
      "[node.a]\npower = p:inlet:1 - p:outlet:3\n[node.b]\npower = p:outlet:3\n",
      "[node.a]\npower = p:inlet:1\n[node.c]\npower = p:inlet:2\n[node.b]\npower = p:outlet:3\n",
      "[node.a]\npower = p:inlet:1 - p:bank:1\n[node.b]\npower = p:outlet:3\n"
      "[node.c]\npower = p:bank:1\n",
      "[node.a]\npower = p:bank:1 - p:outlet:1\n[node.b]\npower = p:outlet:1\n"};
  for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
    snprintf(t, sizeof t, "%s%s", p, fine[i]);
    write_conf(t);
    struct erg_collector_config c;
    struct erg_config_error err;
    erg_collector_config_defaults(&c);
    if (erg_collector_config_load(path, &c, &err) != 0)
      fail_msg("refused: %s: %s", fine[i], err.msg);
    erg_collector_config_free(&c);
    unlink(path);
  }
  expect_error("[agent]\nheartbeat_seconds = nan\n", ":2: key 'heartbeat_seconds'", 1);
  expect_error("[agent]\ncollector = garbage\n",
               ":2: key 'collector': 'garbage' is not a "
               "ZeroMQ endpoint",
               1);
  expect_error("[agent]\ncurve_server_key = abc\n",
               ":2: key 'curve_server_key': 'abc' is "
               "neither a 40-character Z85 CURVE key nor a readable key file",
               1);
  expect_error("[agent]\ncurve_server_key = rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL~@{H8]yf\n",
               ":2: key 'curve_server_key'", 1);
  expect_error("[agent]\nnode = a\nnode = b\n", ":3: key 'node' in [agent] again", 1);
  /* What stays accepted. */
  write_conf("[collector]\nlisten = tcp://*:9711\nhttp =\n[meter.m]\nhost = h\n"
             "max_watts = 3680\n[node.n-1.x_y]\npower = m:1*0.5\n");
  struct erg_collector_config c;
  struct erg_config_error err;
  erg_collector_config_defaults(&c);
  assert_int_equal(erg_collector_config_load(path, &c, &err), 0);
  assert_string_equal(c.http, "");
  assert_float_equal(c.sources[0].max_watts, 3680, 0);
  erg_collector_config_free(&c);
  unlink(path);
  write_conf("[agent]\ncollector = tcp://[::1]:9711\n"
             "curve_server_key = rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7\n");
  struct erg_agent_config a;
  erg_agent_config_defaults(&a);
  assert_int_equal(erg_agent_config_load(path, &a, &err), 0);
  assert_float_equal(a.sub_interval_seconds, 0.1, 0); /* 0.1 s by default */
  unlink(path);
  write_conf("[agent]\nsub_interval_seconds = 0\n");
  erg_agent_config_defaults(&a);
  assert_int_equal(erg_agent_config_load(path, &a, &err), 0);
  assert_float_equal(a.sub_interval_seconds, 0, 0); /* off */
  unlink(path);
  write_conf("[agent]\nsub_interval_seconds = 0.1\n");
  erg_agent_config_defaults(&a);
  assert_int_equal(erg_agent_config_load(path, &a, &err), 0);
  assert_float_equal(a.sub_interval_seconds, 0.1, 0);
  unlink(path);
}

/* A config of n nodes, each with an outlet of its own (64 per PDU), then
 * tail; *lines: the lines before tail. */
static char *many_nodes(int n, const char *tail, int *lines) {
  size_t cap = (size_t)n * 64 + strlen(tail) + 256, len = 0;
  char *t = malloc(cap);
  assert_non_null(t);
  int npdu = (n + 63) / 64;
  len += (size_t)snprintf(t + len, cap - len, "[collector]\ndata_dir = /tmp/x\n");
  for (int s = 0; s < npdu; s++)
    len += (size_t)snprintf(t + len, cap - len, "[pdu.p%d]\nhost = h%d\n", s, s);
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(t + len, cap - len, "[node.n%05d]\npower = p%d:%d\nidle_watts = %d\n",
                            i, i / 64, i % 64 + 1, i);
  snprintf(t + len, cap - len, "%s", tail);
  *lines = 2 + 2 * npdu + 3 * n;
  return t;
}

/* Duplicates are found by hash, nodes by name by hash: with thousands of
 * sections (both tables grown many times over) every node keeps its own
 * keys and file order, a repeat is found however far from the first, and
 * the same key in other sections is no repeat. */
static void test_many_sections(void **state) {
  (void)state;
  enum { N = 3000 };
  int lines, first = 2 + 2 * ((N + 63) / 64) + 3 * 1234 + 1; /* [node.n01234] */
  char *t = many_nodes(N, "", &lines);
  write_conf(t);
  free(t);
  struct erg_collector_config c;
  struct erg_config_error err;
  erg_collector_config_defaults(&c);
  assert_int_equal(erg_collector_config_load(path, &c, &err), 0);
  unlink(path);
  assert_int_equal(c.nnodes, N);
  for (int i = 0; i < N; i++) {
    char name[16];
    snprintf(name, sizeof name, "n%05d", i);
    assert_string_equal(c.nodes[i].name, name);
    assert_float_equal(c.nodes[i].idle_watts, i, 0);
    assert_int_equal(c.nodes[i].nfeeds, 1);
    assert_int_equal(c.nodes[i].group, -1);
    const struct erg_node_feed *f = &c.nodes[i].feeds[0];
    assert_int_equal(f->source, i / 64);
    assert_int_equal(c.sources[f->source].channels[f->channel], i % 64 + 1);
  }
  erg_collector_config_free(&c);
  /* A group's members are the nodes of those names, or new ones. */
  t = many_nodes(N, "[pdu.q]\nhost = h\n[group.g]\npower = q:bank:1\nnodes = m1 n02999\n", &lines);
  expect_error(t, "node n02999 is counted twice: its [node.n02999] power and [group.g]", 0);
  free(t);
  t = many_nodes(N, "[pdu.q]\nhost = h\n[group.g]\npower = q:bank:1\nnodes = m1 m2\n", &lines);
  write_conf(t);
  free(t);
  erg_collector_config_defaults(&c);
  assert_int_equal(erg_collector_config_load(path, &c, &err), 0);
  unlink(path);
  assert_int_equal(c.nnodes, N + 2);
  assert_string_equal(c.nodes[N].name, "m1");
  assert_string_equal(c.nodes[N + 1].name, "m2");
  assert_true(c.nodes[N].group == 0 && c.nodes[N + 1].group == 0 && c.nodes[N - 1].group == -1);
  erg_collector_config_free(&c);
  /* A section again, far from its first; the file's first section again. */
  char want[200];
  t = many_nodes(N, "[node.n01234]\nidle_watts = 1\n", &lines);
  snprintf(want, sizeof want, ":%d: section [node.n01234] again (first at line %d)", lines + 1,
           first);
  expect_error(t, want, 0);
  free(t);
  t = many_nodes(N, "[collector]\nstep_seconds = 5\n", &lines);
  snprintf(want, sizeof want, ":%d: section [collector] again (first at line 1)", lines + 1);
  expect_error(t, want, 0);
  free(t);
  /* A key again in a section after thousands: its first line named. */
  t = many_nodes(N, "[node.late]\nidle_watts = 1\npower = p0:1*0.5\nidle_watts = 2\n", &lines);
  snprintf(want, sizeof want, ":%d: key 'idle_watts' in [node.late] again (first at line %d)",
           lines + 4, lines + 2);
  expect_error(t, want, 0);
  free(t);
  /* The first of two errors is the one said, as before: the repeated
   * section comes before the repeated key. */
  t = many_nodes(N, "[node.n00007]\nx = 1\n[node.z]\nx = 1\nx = 2\n", &lines);
  snprintf(want, sizeof want, ":%d: section [node.n00007] again", lines + 1);
  expect_error(t, want, 0);
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_collector_ok),     cmocka_unit_test(test_collector_split),
      cmocka_unit_test(test_collector_levels), cmocka_unit_test(test_collector_units),
      cmocka_unit_test(test_collector_groups), cmocka_unit_test(test_collector_whole_pdu),
      cmocka_unit_test(test_errors),           cmocka_unit_test(test_hostile),
      cmocka_unit_test(test_many_sections)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

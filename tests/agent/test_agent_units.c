// SPDX-License-Identifier: GPL-3.0-or-later
/* Unit tests for the agent's scope handling, the diskstats parser, the
 * cgroup id -> path cache, the resend ring's bounds and the sender's view
 * of a link whose handshake fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "../erg_test.h"
#include "agent_int.h"

static void test_scope_set(void **state) {
  (void)state;
  struct erg_agent_config cfg;
  char why[300];
  erg_agent_config_defaults(&cfg);
  assert_true(cfg.scope[0] == '\0');
  assert_true(erg_agent_scope_set(&cfg, "/a/b//", why, sizeof why) == 0 &&
              !strcmp(cfg.scope, "/a/b"));
  assert_true(erg_agent_scope_set(&cfg, "/", why, sizeof why) == 0 && !strcmp(cfg.scope, "/"));
  assert_true(erg_agent_scope_set(&cfg, "a/b", why, sizeof why) != 0 && strstr(why, "absolute"));
  assert_true(erg_agent_scope_set(&cfg, "/a/../b", why, sizeof why) != 0);
}

static void test_scope_contains(void **state) {
  (void)state;
  struct erg_agent *a = calloc(1, sizeof *a);
  assert_true(agent_scope_contains(a, "/anything"));
  strcpy(a->cfg.scope, "/");
  assert_true(agent_scope_contains(a, "/x/y"));
  strcpy(a->cfg.scope, "/a/b");
  assert_true(agent_scope_contains(a, "/a/b"));
  assert_true(agent_scope_contains(a, "/a/b/c"));
  assert_true(!agent_scope_contains(a, "/a/bc"));
  assert_true(!agent_scope_contains(a, "/a"));
  assert_true(!agent_scope_contains(a, ""));
  assert_true(!agent_scope_contains(a, NULL));
  free(a);
}

static int only_vda(const char *dev, void *user) {
  (void)user;
  return !strcmp(dev, "vda");
}

static void test_diskstats(void **state) {
  (void)state;
  const char *buf = "   7       0 loop0 5 0 80 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
                    " 253       0 vda 100 7 2000 50 40 3 1000 60 0 90 110 0 0 0 0 0 0\n"
                    " 253       1 vda1 90 7 1900 45 40 3 1000 60 0 80 100 0 0 0 0 0 0\n";
  uint64_t r, w;
  assert_true(erg_proc_parse_diskstats(buf, only_vda, NULL, &r, &w) == 0);
  assert_true(r == 2000 * 512 && w == 1000 * 512);
  assert_true(erg_proc_parse_diskstats(buf, NULL, NULL, &r, &w) == 0);
  assert_true(r == (80 + 2000 + 1900) * 512ull && w == 2000 * 512ull);
  assert_true(erg_proc_parse_diskstats("garbage\n", NULL, NULL, &r, &w) != 0 && r == 0 && w == 0);
}

/* Full: the oldest entry goes; updating an entry does not evict. */
static void test_cgcache_bounded(void **state) {
  (void)state;
  struct cgroup_cache *c = calloc(1, sizeof *c);
  c->max = 3;
  cgcache_put(c, 1, "/a");
  cgcache_put(c, 2, "/b");
  cgcache_put(c, 3, "/c");
  cgcache_put(c, 2, "/b2");
  assert_true(c->n == 3 && !strcmp(cgcache_find(c, 2), "/b2"));
  cgcache_put(c, 4, "/d");
  assert_true(!cgcache_find(c, 1) && !strcmp(cgcache_find(c, 4), "/d"));
  cgcache_put(c, 5, "/e");
  assert_true(!cgcache_find(c, 2) && cgcache_find(c, 3) && cgcache_find(c, 5));
  assert_true(c->n == 3 && !cgcache_find(c, 0));
  cgcache_free(c);
}

static uint64_t ino_of(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* A tree walk merges: a directory removed since the last walk stays known,
 * and a live process's path is kept only if its directory is that id. */
static void test_cgcache_walk(void **state) {
  (void)state;
  struct cgroup_cache *c = calloc(1, sizeof *c);
  char root[] = "/tmp/erg-cgcache.XXXXXX", a[64], b[64];
  assert_true(mkdtemp(root) != NULL);
  snprintf(a, sizeof a, "%s/job_1", root);
  snprintf(b, sizeof b, "%s/job_1/step_0", root);
  assert_true(mkdir(a, 0755) == 0 && mkdir(b, 0755) == 0);
  uint64_t ia = ino_of(a), ib = ino_of(b);
  erg_strlcpy(c->root, root, sizeof c->root);
  cgcache_walk(c);
  assert_true(cgcache_find(c, ib) && !strcmp(cgcache_find(c, ib), "/job_1/step_0"));
  assert_true(cgcache_find(c, ino_of(root)) && !strcmp(cgcache_find(c, ino_of(root)), "/"));
  assert_true(rmdir(b) == 0);
  cgcache_walk(c);
  assert_true(cgcache_find(c, ib) && !strcmp(cgcache_find(c, ib), "/job_1/step_0"));
  assert_true(rmdir(a) == 0 && rmdir(root) == 0);

  struct cgroup_cache *l = calloc(1, sizeof *l);
  strcpy(root, "/tmp/erg-cgcache.XXXXXX");
  assert_true(mkdtemp(root) != NULL);
  snprintf(a, sizeof a, "%s/job_1", root);
  assert_true(mkdir(a, 0755) == 0);
  erg_strlcpy(l->root, root, sizeof l->root);
  ia = ino_of(a);
  cgcache_learn(l, ia + 1, "/job_1"); /* the kernel's id lags a move */
  assert_true(!cgcache_find(l, ia + 1));
  cgcache_learn(l, ia, "/job_1");
  assert_true(cgcache_find(l, ia) && !strcmp(cgcache_find(l, ia), "/job_1"));
  rmdir(a);
  rmdir(root);
  cgcache_free(c);
  cgcache_free(l);
}

/* The ring keeps the newest entries, oldest first, within both bounds;
 * an entry larger than the byte bound is refused, the rest kept. */
static void test_resend_ring(void **state) {
  (void)state;
  struct erg_resend_ring *r = erg_resend_ring_new(4, 100);
  uint8_t buf[200];
  size_t len;
  for (int i = 0; i < 10; i++) {
    memset(buf, i, 10);
    assert_true(erg_resend_ring_push(r, buf, 10) == 0);
  }
  assert_true(erg_resend_ring_count(r) == 4 && erg_resend_ring_bytes(r) == 40);
  for (size_t i = 0; i < 4; i++) {
    const uint8_t *e = erg_resend_ring_get(r, i, &len);
    assert_true(e && len == 10 && e[0] == 6 + i);
  }
  assert_true(erg_resend_ring_get(r, 4, &len) == NULL);
  /* 60 bytes: the oldest makes room (count 4, 30 + 60 <= 100)... */
  memset(buf, 42, 60);
  assert_true(erg_resend_ring_push(r, buf, 60) == 0);
  assert_true(erg_resend_ring_count(r) == 4 && erg_resend_ring_bytes(r) == 90);
  assert_true(erg_resend_ring_get(r, 0, &len)[0] == 7 && erg_resend_ring_get(r, 3, &len)[0] == 42);
  /* ...and the byte bound: 40 more push out all three small ones. */
  memset(buf, 43, 40);
  assert_true(erg_resend_ring_push(r, buf, 40) == 0);
  assert_true(erg_resend_ring_count(r) == 2 && erg_resend_ring_bytes(r) == 100);
  assert_true(erg_resend_ring_get(r, 0, &len)[0] == 42 && erg_resend_ring_get(r, 1, &len)[0] == 43);
  assert_true(erg_resend_ring_push(r, buf, 101) == -1);
  assert_true(erg_resend_ring_count(r) == 2);
  erg_resend_ring_free(r);
  /* resend_samples = 0: nothing kept. */
  r = erg_resend_ring_new(0, 100);
  assert_true(erg_resend_ring_push(r, buf, 10) == -1 && erg_resend_ring_count(r) == 0);
  erg_resend_ring_free(r);
}

/* A PULL socket on a free port, CURVE server when secret is set. */
static void *link_server(void *ctx, const char *secret, char *ep, size_t eplen) {
  void *srv = zmq_socket(ctx, ZMQ_PULL);
  int one = 1, zero = 0;
  zmq_setsockopt(srv, ZMQ_LINGER, &zero, sizeof zero);
  if (secret) {
    zmq_setsockopt(srv, ZMQ_CURVE_SERVER, &one, sizeof one);
    zmq_setsockopt(srv, ZMQ_CURVE_SECRETKEY, secret, ERG_KEY_Z85_LEN);
  }
  assert_true(zmq_bind(srv, "tcp://127.0.0.1:*") == 0);
  assert_true(zmq_getsockopt(srv, ZMQ_LAST_ENDPOINT, ep, &eplen) == 0);
  return srv;
}

/* Issue 25: an agent without keys gets no link to a CURVE collector (it
 * ran silently and exited 0 with every sample lost), one to a plain
 * collector; the command-line key options are checked as the config's. */
static void test_link_up(void **state) {
  (void)state;
  void *ctx = zmq_ctx_new();
  char pub[ERG_KEY_Z85_LEN + 1], sec[ERG_KEY_Z85_LEN + 1], why[512];
  assert_true(zmq_curve_keypair(pub, sec) == 0);
  struct erg_agent_config cfg;
  erg_agent_config_defaults(&cfg);
  for (int curve = 1; curve >= 0; curve--) {
    void *srv = link_server(ctx, curve ? sec : NULL, cfg.collector, sizeof cfg.collector);
    struct erg_sender *s = NULL;
    assert_true(erg_sender_open(&s, &cfg, why, sizeof why) == 0);
    assert_true(s && erg_sender_link_up(s, 1500) == !curve);
    /* What the caller logs: the failure's cause, once per kind (the
     * agent or the collector may see the mismatch first), or the link. */
    struct erg_sender_news n;
    int fails = 0, connects = 0;
    while (erg_sender_news(s, &n)) {
      fails += n.kind == ERG_SENDER_NO_HANDSHAKE;
      connects += n.kind == ERG_SENDER_CONNECTED;
      if (n.kind == ERG_SENDER_NO_HANDSHAKE)
        assert_non_null(strstr(n.cause, "requires CURVE keys"));
    }
    assert_true(curve ? fails >= 1 && fails <= 2 && !connects : !fails && connects == 1);
    erg_sender_close(s);
    zmq_close(srv);
  }
  zmq_ctx_term(ctx);
  assert_true(erg_agent_config_set(&cfg, "curve_server_key", pub, why, sizeof why) == 0);
  assert_true(!strcmp(cfg.curve_server_key, pub));
  assert_true(erg_agent_config_set(&cfg, "curve_server_key", "/no/such/key.pub", why, sizeof why) !=
              0);
  assert_true(strstr(why, "curve_server_key") != NULL);
  assert_true(
      erg_agent_config_set(&cfg, "curve_secret_key_file", "/etc/erg/a.key", why, sizeof why) == 0);
}

/* The next news of the sender, which must be of kind. */
static struct erg_sender_news news_of(struct erg_sender *s, enum erg_sender_news_kind kind) {
  struct erg_sender_news n;
  assert_int_equal(erg_sender_news(s, &n), 1);
  assert_int_equal(n.kind, kind);
  return n;
}

/* The sender logs nothing: what its link does comes back as news, each
 * once and in order: connected, lost (with the heartbeat timeout), the
 * reconnect and the samples sent again after it. */
static void test_sender_news(void **state) {
  (void)state;
  void *ctx = zmq_ctx_new();
  struct erg_agent_config cfg;
  erg_agent_config_defaults(&cfg);
  void *srv = link_server(ctx, NULL, cfg.collector, sizeof cfg.collector);
  struct erg_sender *s = NULL;
  char why[256];
  struct erg_sender_news n;
  assert_true(erg_sender_open(&s, &cfg, why, sizeof why) == 0);
  assert_int_equal(erg_sender_news(s, &n), 0);
  assert_true(erg_sender_link_up(s, 3000));
  news_of(s, ERG_SENDER_CONNECTED);
  assert_int_equal(erg_sender_news(s, &n), 0);
  Erg__Interval iv = ERG__INTERVAL__INIT;
  iv.realtime_start_ns = 1000000000;
  iv.realtime_end_ns = 2000000000;
  Erg__Sample smp = ERG__SAMPLE__INIT;
  smp.node = (char *)"n1";
  smp.interval = &iv;
  Erg__Envelope env = ERG__ENVELOPE__INIT;
  env.version = ERG_WIRE_VERSION;
  env.body_case = ERG__ENVELOPE__BODY_SAMPLE;
  env.sample = &smp;
  int ms = 5000;
  zmq_setsockopt(srv, ZMQ_RCVTIMEO, &ms, sizeof ms);
  char buf[512];
  for (int i = 0; i < 2; i++) {
    assert_int_equal(erg_sender_send(s, &env), 0);
    assert_true(zmq_recv(srv, buf, sizeof buf, 0) > 0);
  }
  assert_int_equal(erg_sender_news(s, &n), 0);
  zmq_close(srv);
  for (int i = 0; i < 250 && erg_sender_link_up(s, 0); i++)
    usleep(20000);
  n = news_of(s, ERG_SENDER_LOST);
  assert_float_equal(n.seconds, 3, 1e-9); /* 3 x the 1-s interval */
  assert_int_equal(erg_sender_news(s, &n), 0);
  srv = zmq_socket(ctx, ZMQ_PULL);
  int zero = 0;
  zmq_setsockopt(srv, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(srv, ZMQ_RCVTIMEO, &ms, sizeof ms);
  assert_int_equal(zmq_bind(srv, cfg.collector), 0);
  assert_true(erg_sender_link_up(s, 5000));
  news_of(s, ERG_SENDER_CONNECTED);
  /* The next send, after the reconnect, sends the 2 samples again first. */
  assert_int_equal(erg_sender_send(s, &env), 0);
  n = news_of(s, ERG_SENDER_RESENT);
  assert_int_equal(n.count, 2);
  assert_int_equal(erg_sender_news(s, &n), 0);
  for (int i = 0; i < 3; i++)
    assert_true(zmq_recv(srv, buf, sizeof buf, 0) > 0);
  erg_sender_close(s);
  zmq_close(srv);
  zmq_ctx_term(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_link_up),      cmocka_unit_test(test_sender_news),
      cmocka_unit_test(test_scope_set),    cmocka_unit_test(test_scope_contains),
      cmocka_unit_test(test_diskstats),    cmocka_unit_test(test_cgcache_bounded),
      cmocka_unit_test(test_cgcache_walk), cmocka_unit_test(test_resend_ring),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

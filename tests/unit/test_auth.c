// SPDX-License-Identifier: GPL-3.0-or-later
/* CURVE keys bound to node names (collector/auth.c, issue 23): the
 * authorised-keys file's "KEY NODE[,NODE...] [# comment]" lines, and the
 * check of every node name a message carries, whichever way protobuf would
 * read it (an Envelope sent twice in one message merges: hello and sample,
 * or two samples, each with a node). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>
#include <cmocka.h>

#include "collector_int.h"

static char keys[5][41], path[64];

static void write_file(const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int setup(void **state) {
  (void)state;
  char sec[41];
  for (int i = 0; i < 5; i++)
    assert_int_equal(zmq_curve_keypair(keys[i], sec), 0);
  strcpy(path, "/tmp/erg-auth-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  unlink(path);
  return 0;
}

/* One packed Envelope with a hello or a sample for node. */
static size_t envelope(const char *node, int sample, uint8_t **out) {
  Erg__Envelope env = ERG__ENVELOPE__INIT;
  Erg__Hello h = ERG__HELLO__INIT;
  Erg__Sample s = ERG__SAMPLE__INIT;
  env.version = 1;
  if (sample) {
    s.node = (char *)node;
    env.body_case = ERG__ENVELOPE__BODY_SAMPLE;
    env.sample = &s;
  } else {
    h.node = (char *)node;
    env.body_case = ERG__ENVELOPE__BODY_HELLO;
    env.hello = &h;
  }
  size_t n = erg_wire_pack(&env, out);
  assert_true(n > 0);
  return n;
}

static int check(struct auth *a, int key, const char *node, int sample) {
  uint8_t *buf;
  size_t n = envelope(node, sample, &buf);
  int ok = auth_check_nodes(a, key, buf, n);
  free(buf);
  return ok;
}

/* Two Envelopes back to back: protobuf merges them into one message. */
static int check2(struct auth *a, int key, const char *n1, const char *n2) {
  uint8_t *b1, *b2;
  size_t l1 = envelope(n1, 0, &b1), l2 = envelope(n2, 1, &b2);
  uint8_t *both = malloc(l1 + l2);
  memcpy(both, b1, l1);
  memcpy(both + l1, b2, l2);
  int ok = auth_check_nodes(a, key, both, l1 + l2);
  free(b1);
  free(b2);
  free(both);
  return ok;
}

static uint64_t mismatches(const struct auth *a) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  auth_metrics(a, f);
  fclose(f);
  const char *p = strstr(buf, "\nerg_auth_node_mismatch_total ");
  assert_non_null(p);
  uint64_t v = strtoull(p + 30, NULL, 10);
  free(buf);
  return v;
}

static void test_bound(void **state) {
  (void)state;
  char text[1024];
  snprintf(text, sizeof text,
           "# authorised agents\n"
           "%s node1\n"
           "  %s node2, node2b\tnode2c   # rack 3\n"
           "%s\n"
           "%s *  # any node, knowingly\n"
           "%s node1b\n"
           "\n",
           keys[0], keys[1], keys[2], keys[3], keys[0]);
  write_file(text);
  char why[256];
  struct auth *a = auth_open(path, why, sizeof why);
  assert_non_null(a);
  /* key 0: node1, and node1b from its second line. */
  assert_int_equal(check(a, 0, "node1", 0), 1);
  assert_int_equal(check(a, 0, "node1", 1), 1);
  assert_int_equal(check(a, 0, "node1b", 1), 1);
  assert_int_equal(check(a, 0, "node2", 1), 0);
  assert_int_equal(check(a, 0, "someoneelse", 0), 0);
  assert_int_equal(check(a, 0, "node", 1), 0);
  assert_int_equal(check(a, 0, "node1 ", 1), 0);
  /* Whichever node protobuf keeps, every one must be allowed. */
  assert_int_equal(check2(a, 0, "node1", "node1b"), 1);
  assert_int_equal(check2(a, 0, "node1", "node2"), 0);
  assert_int_equal(check2(a, 0, "node2", "node1"), 0);
  /* key 1: three names, commas and blanks; the comment is none. */
  assert_int_equal(check(a, 1, "node2", 1), 1);
  assert_int_equal(check(a, 1, "node2b", 1), 1);
  assert_int_equal(check(a, 1, "node2c", 1), 1);
  assert_int_equal(check(a, 1, "rack", 1), 0);
  assert_int_equal(check(a, 1, "node1", 1), 0);
  /* key 2 unbound, key 3 "*": any node. */
  assert_int_equal(check(a, 2, "anything", 1), 1);
  assert_int_equal(check(a, 3, "anything", 0), 1);
  /* No key index (not from ZAP) or an unknown one: refused. */
  assert_int_equal(check(a, -1, "node1", 1), 0);
  assert_int_equal(check(a, 4, "node1", 1), 0);
  /* A node with a NUL inside (protobuf-c would cut it to "node1"). */
  static const uint8_t nul[] = {0x08, 0x01, 0x12, 0x09, 0x0a, 0x07, 'n',
                                'o',  'd',  'e',  '1',  0,    'x'};
  assert_int_equal(auth_check_nodes(a, 0, nul, sizeof nul), 0);
  /* Bytes that are no protobuf: refused, not guessed at. */
  static const uint8_t junk[] = {0x1a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x0a};
  assert_int_equal(auth_check_nodes(a, 0, junk, sizeof junk), 0);
  static const uint8_t group[] = {0x0b, 0x0c};
  assert_int_equal(auth_check_nodes(a, 0, group, sizeof group), 0);
  /* Without a node field it is for ingest to refuse (no node: no data). */
  static const uint8_t empty[] = {0x08, 0x01};
  assert_int_equal(auth_check_nodes(a, 0, empty, sizeof empty), 1);
  assert_int_equal(mismatches(a), 13);
  auth_close(a);
  auth_close(NULL);
}

static void test_bad_files(void **state) {
  (void)state;
  char why[256];
  write_file("notakey node1\n");
  assert_null(auth_open(path, why, sizeof why));
  assert_non_null(strstr(why, ":1: not a 40-character Z85 CURVE key"));
  char *text = malloc(6000);
  snprintf(text, 6000, "%s ", keys[0]);
  memset(text + strlen(text), 'n', 5000);
  text[5041] = '\0';
  write_file(text);
  free(text);
  assert_null(auth_open(path, why, sizeof why));
  assert_non_null(strstr(why, ":1: line longer than"));
  assert_null(auth_open("/nonexistent/keys", why, sizeof why));
  assert_non_null(strstr(why, "No such file"));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_bound),
                                     cmocka_unit_test(test_bad_files)};
  return cmocka_run_group_tests(tests, setup, teardown);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* The meter channel -> node feeds index (collector/feeds.c): every feed of
 * the config found under its source and channel, in config order, nothing
 * under a channel no node uses, and a config of 5,000 nodes on 250 PDUs of
 * 24 outlets indexed exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "collector_int.h"

static void test_small(void **state) {
  (void)state;
  struct erg_node_config nodes[3] = {0};
  /* n0: dual PSU on s0:2 and s1:0; n1 and n2 share s0:5 (chassis). */
  nodes[0].nfeeds = 2;
  nodes[0].feeds[0] = (struct erg_node_feed){.source = 0, .channel = 2, .factor = 1};
  nodes[0].feeds[1] = (struct erg_node_feed){.source = 1, .channel = 0, .factor = 1};
  nodes[1].nfeeds = 1;
  nodes[1].feeds[0] = (struct erg_node_feed){.source = 0, .channel = 5, .factor = 0.5};
  nodes[2].nfeeds = 1;
  nodes[2].feeds[0] = (struct erg_node_feed){.source = 0, .channel = 5, .factor = 0.5};
  struct erg_collector_config cfg = {.nodes = nodes, .nnodes = 3, .nsources = 2};
  struct feed_index *fi = feed_index_build(&cfg);
  assert_non_null(fi);
  size_t n;
  const struct feed_ref *r = feed_index_find(fi, 0, 2, &n);
  assert_int_equal(n, 1);
  assert_int_equal(r[0].node, 0);
  assert_int_equal(r[0].feed, 0);
  r = feed_index_find(fi, 1, 0, &n);
  assert_int_equal(n, 1);
  assert_int_equal(r[0].feed, 1);
  r = feed_index_find(fi, 0, 5, &n);
  assert_int_equal(n, 2);
  assert_int_equal(r[0].node, 1);
  assert_int_equal(r[1].node, 2);
  feed_index_find(fi, 0, 3, &n);
  assert_int_equal(n, 0);
  feed_index_find(fi, 2, 0, &n); /* no such source */
  assert_int_equal(n, 0);
  feed_index_find(fi, 0, ERG_PDU_MAX_CHANNELS, &n);
  assert_int_equal(n, 0);
  feed_index_free(fi);
}

static void test_large(void **state) {
  (void)state;
  int nn = 5000, per = 24;
  struct erg_node_config *nodes = calloc((size_t)nn, sizeof *nodes);
  assert_non_null(nodes);
  for (int i = 0; i < nn; i++) {
    nodes[i].nfeeds = 1;
    nodes[i].feeds[0] = (struct erg_node_feed){.source = i / per, .channel = i % per, .factor = 1};
  }
  struct erg_collector_config cfg = {
      .nodes = nodes, .nnodes = nn, .nsources = (nn + per - 1) / per};
  struct feed_index *fi = feed_index_build(&cfg);
  assert_non_null(fi);
  for (int i = 0; i < nn; i++) {
    size_t n;
    const struct feed_ref *r = feed_index_find(fi, i / per, i % per, &n);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].node, i);
  }
  feed_index_free(fi);
  free(nodes);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_small), cmocka_unit_test(test_large)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

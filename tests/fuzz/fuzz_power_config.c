// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer target: the power expressions and groups of ergd.conf
 * (collector/config_power.c) through the loader. The input is lines: a
 * line starting with 'g' is a [group.gN] with "power = " what follows up
 * to a '|' and "nodes = " the rest; any other line a [node.nN] with
 * "power = " the line. Sources p (SNMP, a PDU) and m (Modbus) are there.
 * An accepted config must hold together: every feed on a defined source
 * and channel, factors in (0, 1] or -1, the shares of a channel at most
 * 1, each group member in one group with the group's feeds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_collector.h"
#include "fuzz_file.h"

static void check_feeds(const struct erg_collector_config *c, const struct erg_node_feed *f,
                        int nf) {
  if (nf < 0 || nf > ERG_MAX_FEEDS)
    abort();
  for (int i = 0; i < nf; i++) {
    if (f[i].source < 0 || f[i].source >= c->nsources || f[i].channel < 0 ||
        f[i].channel >= c->sources[f[i].source].nchannels)
      abort();
    if (!(f[i].factor == -1 || (f[i].factor > 0 && f[i].factor <= 1)))
      abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char text[1 << 16];
  size_t o = (size_t)snprintf(text, sizeof text,
                              "[pdu.p]\nhost = h\n[pdu.q-2]\nhost = h\n[meter.m]\nhost = h\n"
                              "profile = erg-sim\n");
  size_t start = 0;
  int line = 0;
  for (size_t i = 0; i <= size && o < sizeof text - 4096; i++) {
    if (i < size && data[i] != '\n')
      continue;
    const char *l = (const char *)data + start;
    int len = (int)(i - start);
    start = i + 1;
    if (memchr(l, '\0', (size_t)len) || memchr(l, '\r', (size_t)len))
      continue;
    if (len > 0 && l[0] == 'g') {
      const char *bar = memchr(l, '|', (size_t)len);
      int plen = bar ? (int)(bar - l) - 1 : len - 1;
      o += (size_t)snprintf(text + o, sizeof text - o, "[group.g%d]\npower = %.*s\n", line, plen,
                            l + 1);
      if (bar)
        o += (size_t)snprintf(text + o, sizeof text - o, "nodes = %.*s\n", (int)(l + len - bar - 1),
                              bar + 1);
    } else {
      o += (size_t)snprintf(text + o, sizeof text - o, "[node.n%d]\npower = %.*s\n", line, len, l);
    }
    line++;
  }
  const char *path = fuzz_file_write("ergd.conf", (const uint8_t *)text, o);
  if (!path)
    return 0;
  struct erg_collector_config c;
  struct erg_config_error err = {{0}};
  erg_collector_config_defaults(&c);
  if (erg_collector_config_load(path, &c, &err) != 0) {
    if (!err.msg[0])
      abort(); /* a refusal always says why */
    erg_collector_config_free(&c);
    return 0;
  }
  for (int s = 0; s < c.nsources; s++)
    if (c.sources[s].nchannels < 0 || c.sources[s].nchannels > ERG_PDU_MAX_CHANNELS)
      abort();
  for (int n = 0; n < c.nnodes; n++) {
    const struct erg_node_config *nd = &c.nodes[n];
    check_feeds(&c, nd->feeds, nd->nfeeds);
    if (nd->group >= c.ngroups || (nd->group >= 0 && nd->nfeeds != c.groups[nd->group].nfeeds))
      abort();
  }
  /* Shares of one channel across consumers (ungrouped nodes and groups). */
  static double share[ERG_MAX_SOURCES][ERG_PDU_MAX_CHANNELS];
  memset(share, 0, sizeof share);
  for (int g = 0; g < c.ngroups; g++) {
    check_feeds(&c, c.groups[g].feeds, c.groups[g].nfeeds);
    if (c.groups[g].nmembers < 1)
      abort();
    for (int m = 0; m < c.groups[g].nmembers; m++)
      if (c.groups[g].members[m] < 0 || c.groups[g].members[m] >= c.nnodes ||
          c.nodes[c.groups[g].members[m]].group != g)
        abort();
    for (int f = 0; f < c.groups[g].nfeeds; f++)
      if (c.groups[g].feeds[f].factor > 0)
        share[c.groups[g].feeds[f].source][c.groups[g].feeds[f].channel] +=
            c.groups[g].feeds[f].factor;
  }
  for (int n = 0; n < c.nnodes; n++)
    for (int f = 0; c.nodes[n].group < 0 && f < c.nodes[n].nfeeds; f++)
      if (c.nodes[n].feeds[f].factor > 0)
        share[c.nodes[n].feeds[f].source][c.nodes[n].feeds[f].channel] +=
            c.nodes[n].feeds[f].factor;
  for (int s = 0; s < c.nsources; s++)
    for (int ch = 0; ch < c.sources[s].nchannels; ch++)
      if (share[s][ch] > 1 + 1e-6)
        abort();
  erg_collector_config_free(&c);
  return 0;
}

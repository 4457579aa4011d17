// SPDX-License-Identifier: GPL-3.0-or-later
/* Which node feeds hang on a meter channel, so that a reading finds its
 * feeds without scanning every configured node (O(nodes) per outlet and
 * poll would be 24 M steps a second for 2,000 nodes on 500 PDUs x 24
 * outlets). Built once from the config (a counting sort by source and
 * channel), read-only afterwards. */
#include <stdlib.h>

#include "collector_int.h"

struct feed_index {
  struct feed_ref *refs;
  size_t *first; /* [source * ERG_PDU_MAX_CHANNELS + channel], one past the end last */
  size_t nslots;
};

static size_t feed_slot(int source, int channel) {
  return (size_t)source * ERG_PDU_MAX_CHANNELS + (size_t)channel;
}

static int feed_valid(const struct erg_collector_config *cfg, const struct erg_node_feed *f) {
  return f->source >= 0 && f->source < cfg->nsources && f->channel >= 0 &&
         f->channel < ERG_PDU_MAX_CHANNELS;
}

struct feed_index *feed_index_build(const struct erg_collector_config *cfg) {
  struct feed_index *fi = calloc(1, sizeof *fi);
  size_t total = 0;
  for (int i = 0; i < cfg->nnodes; i++)
    total += (size_t)cfg->nodes[i].nfeeds;
  if (!fi)
    return NULL;
  fi->nslots = feed_slot(cfg->nsources, 0);
  fi->first = calloc(fi->nslots + 1, sizeof *fi->first);
  fi->refs = calloc(total ? total : 1, sizeof *fi->refs);
  if (!fi->first || !fi->refs) {
    feed_index_free(fi);
    return NULL;
  }
  /* Count per slot, prefix sums, then place: refs of a slot stay in
   * config order (node, then feed). */
  for (int i = 0; i < cfg->nnodes; i++)
    for (int f = 0; f < cfg->nodes[i].nfeeds; f++)
      if (feed_valid(cfg, &cfg->nodes[i].feeds[f]))
        fi->first[feed_slot(cfg->nodes[i].feeds[f].source, cfg->nodes[i].feeds[f].channel) + 1]++;
  for (size_t s = 0; s < fi->nslots; s++)
    fi->first[s + 1] += fi->first[s];
  size_t *next = malloc((fi->nslots + 1) * sizeof *next);
  if (!next) {
    feed_index_free(fi);
    return NULL;
  }
  for (size_t s = 0; s <= fi->nslots; s++)
    next[s] = fi->first[s];
  for (int i = 0; i < cfg->nnodes; i++)
    for (int f = 0; f < cfg->nodes[i].nfeeds; f++) {
      const struct erg_node_feed *fd = &cfg->nodes[i].feeds[f];
      if (feed_valid(cfg, fd))
        fi->refs[next[feed_slot(fd->source, fd->channel)]++] = (struct feed_ref){i, f};
    }
  free(next);
  return fi;
}

const struct feed_ref *feed_index_find(const struct feed_index *fi, int source, int channel,
                                       size_t *n) {
  *n = 0;
  if (!fi || source < 0 || channel < 0 || channel >= ERG_PDU_MAX_CHANNELS)
    return NULL;
  size_t s = feed_slot(source, channel);
  if (s >= fi->nslots)
    return NULL;
  *n = fi->first[s + 1] - fi->first[s];
  return fi->refs + fi->first[s];
}

void feed_index_free(struct feed_index *fi) {
  if (!fi)
    return;
  free(fi->refs);
  free(fi->first);
  free(fi);
}

/* A store with two nodes (one with a hostile name) and command keys,
 * hostile ones included, filled for the last 20 minutes before now. Shared
 * by the page/HTTP test and the demo server the Chromium test loads. */
#ifndef ERG_WEB_FIXTURE_H
#define ERG_WEB_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "erg_store.h"

#define FIX_STEP 5
#define FIX_NKEYS 17

static const char *const fix_nodes[] = {"n1", "<script>alert(1)</script> rack:2/\"b\""};
static const char *const fix_keys[FIX_NKEYS] = {
    "<script>alert(1)</script>", "a:b\\c\\l", "caf\xc3\xa9", "bad\xff\xfe utf8", "tab\there",
    "k05", "k06", "k07", "k08", "k09", "k10", "k11", "k12", "k13", "k14", "k15", "100%% %s"};

/* Returns 0, or -1 with the reason in why. */
static inline int fixture_fill(struct erg_store *s, int64_t now, char *why, size_t whylen) {
  int64_t end = now - now % FIX_STEP;
  for (int64_t t = end - 1200; t <= end; t += FIX_STEP) {
    for (size_t n = 0; n < 2; n++) {
      size_t nkeys = n == 0 ? FIX_NKEYS : 2;
      double dyn = 0;
      for (size_t k = 0; k < nkeys; k++) {
        double w = 2.0 + (double)(FIX_NKEYS - k) + (double)((t / 60 + (int64_t)k) % 5);
        dyn += w;
        if (erg_store_key_update(s, fix_nodes[n], "command", fix_keys[k], t, w, why, whylen))
          return -1;
      }
      struct erg_store_node_cell c = {.t_end = t, .measured_watts = 80 + dyn,
                                      .modelled_watts = 78 + dyn, .idle_watts = 80,
                                      .dynamic_watts = dyn, .unattributed_watts = 0};
      if (erg_store_node_update(s, fix_nodes[n], &c, why, whylen))
        return -1;
    }
  }
  return 0;
}

#endif

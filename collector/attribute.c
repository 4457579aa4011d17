#include <math.h>

#include "erg_collector.h"

double erg_attribute_cpu_share(const struct erg_grid_cell *c, double measured_watts,
                               double idle_watts, struct erg_attr_share *shares) {
  double idle = measured_watts < idle_watts ? measured_watts : idle_watts;
  double dynamic = measured_watts - idle;
  double total = c->system_cpu_seconds;
  for (size_t i = 0; i < c->nkeys; i++)
    total += c->keys[i].cpu_seconds;
  for (size_t i = 0; i < c->nkeys; i++) {
    shares[i].key = c->keys[i].key;
    shares[i].watts = total > 0 ? dynamic * c->keys[i].cpu_seconds / total : 0;
  }
  /* [system] takes its CPU share, and all of the dynamic power when no CPU
   * time was seen at all, so the sum is always the measured power. */
  shares[c->nkeys].key = "[system]";
  shares[c->nkeys].watts = total > 0 ? dynamic * c->system_cpu_seconds / total : dynamic;
  return idle;
}

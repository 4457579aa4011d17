// SPDX-License-Identifier: GPL-3.0-or-later
/* Attribution of one cell's power to processes with the node's model
 * (docs/model.md, "Attribution"). Pure: no state, no allocation, so the
 * collector can call it for every node and cell. Energy is conserved by
 * construction: every watt of the cell goes to idle, a process or
 * [system]. */
#include <math.h>
#include <string.h>

#include "erg_fit.h"

static const char *policy_names[] = {"separate", "even", "proportional"};

int erg_idle_policy_parse(const char *s) {
  for (int i = 0; i < 3; i++)
    if (strcmp(s, policy_names[i]) == 0)
      return i;
  return -1;
}

const char *erg_idle_policy_name(enum erg_idle_policy p) {
  return (unsigned)p < 3 ? policy_names[p] : "?";
}

/* s_p = Σ β_k x_{k,p}; a negative or non-finite activity (a counter
 * glitch) counts as none rather than taking power from the others. As in
 * erg_model_predict, a linear feature counts as it is, also beyond its
 * training maximum: a linear cost stays linear, and a clamp there gave a
 * disk job's energy to its CPU neighbour (docs/model.md, "Beyond the
 * training range"). */
static double attribute_activity(const struct erg_model *m, const double *xp) {
  double s = 0;
  for (size_t k = 0; k < m->nfeatures; k++)
    s += erg_model_term(m, k, xp[k]);
  return isfinite(s) && s > 0 ? s : 0;
}

/* Idle part of process p (activity sp of sum, active of nproc active). */
static double attribute_idle_share(enum erg_idle_policy policy, double idle, double sp, double sum,
                                   size_t active, size_t nproc) {
  if (policy == ERG_IDLE_EVEN) {
    /* Evenly over the processes that were active; over all when none was. */
    if (!active)
      return idle / (double)nproc;
    return sp > 0 ? idle / (double)active : 0;
  }
  if (policy == ERG_IDLE_PROPORTIONAL && sum > 0)
    return idle * (sp / sum);
  return 0;
}

int erg_attribute_cell(const struct erg_model *m, double measured_watts, const double *x,
                       size_t nproc, size_t system_index, enum erg_idle_policy policy,
                       double *watts, struct erg_attribution *out) {
  return erg_attribute_cell_idle(m, m->idle_watts, measured_watts, x, nproc, system_index, policy,
                                 watts, out);
}

int erg_attribute_cell_idle(const struct erg_model *m, double idle_watts, double measured_watts,
                            const double *x, size_t nproc, size_t system_index,
                            enum erg_idle_policy policy, double *watts,
                            struct erg_attribution *out) {
  if (nproc == 0 || system_index >= nproc || (unsigned)policy > ERG_IDLE_PROPORTIONAL)
    return -1;
  /* Activities are kept in watts[] first, then turned into shares. */
  double sum = 0;
  size_t active = 0;
  for (size_t p = 0; p < nproc; p++) {
    watts[p] = attribute_activity(m, x + p * m->nfeatures);
    sum += watts[p];
    active += watts[p] > 0;
  }
  memset(out, 0, sizeof *out);
  out->estimated = !isfinite(measured_watts);
  out->total_watts = out->estimated ? idle_watts + sum : measured_watts;
  if (!isfinite(out->total_watts) || !isfinite(sum))
    return -1;
  /* Below the idle power there is no dynamic part: all of it is idle. */
  double idle = fmin(idle_watts, out->total_watts);
  double dynamic = out->total_watts - idle;
  out->idle_watts = idle;
  out->dynamic_watts = dynamic;
  for (size_t p = 0; p < nproc; p++) {
    double sp = watts[p];
    watts[p] = (sum > 0 ? dynamic * (sp / sum) : 0) +
               attribute_idle_share(policy, idle, sp, sum, active, nproc);
  }
  /* No modelled activity at all: the dynamic power is unexplained work of
   * the node, which is what [system] stands for; proportional idle follows
   * the dynamic power there. */
  if (!(sum > 0))
    watts[system_index] += dynamic + (policy == ERG_IDLE_PROPORTIONAL ? idle : 0);
  out->idle_separate_watts = policy == ERG_IDLE_SEPARATE ? idle : 0;
  return 0;
}

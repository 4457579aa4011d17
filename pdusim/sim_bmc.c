// SPDX-License-Identifier: GPL-3.0-or-later
/* A BMC-shaped reading (sim_bmc.h). The sensor's samples fall on a fixed
 * schedule, k x refresh + phase (the phase differs per channel, as no BMC's
 * clock is aligned with a reader's cells); each takes the node's power as
 * the simulator has it then (noise included, before the outlet meter's
 * rounding) and the shown value is the latest sample, or the mean of the
 * samples of the last average_seconds, rounded once. */
#include "sim_bmc.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"

#define SIM_BMC_SAMPLES 256 /* the longest average, in samples */

struct sim_bmc {
  struct sim *s;
  int node;
  struct sim_bmc_shape sh;
  double phase_s;
  pthread_mutex_t lock;
  double next_s;                  /* the next sample's time; < 0 before the first */
  double sample[SIM_BMC_SAMPLES]; /* ring of the raw samples */
  double sum;                     /* of the last nav samples */
  int nav, nsamples;              /* samples averaged; taken (up to the ring) */
  unsigned head;                  /* next slot of sample[] */
  double shown_t[2], shown_w[2];  /* the two latest shown values: [1] newest */
  int nshown;
  unsigned seed, read_seed;
  double prev_joules, prev_t_s; /* mean=1: the meter's energy at the last sample */
};

static int bmc_key(const char *key, const char *val, struct sim_bmc_shape *sh, char *why,
                   size_t whylen) {
  double a, b;
  char r[128];
  if (!strcmp(key, "delay") || !strcmp(key, "read")) {
    bool rd = !strcmp(key, "read");
    const char *colon = strchr(val, ':');
    char lo[64];
    if (colon && (size_t)(colon - val) < sizeof lo) {
      snprintf(lo, sizeof lo, "%.*s", (int)(colon - val), val);
      if (erg_config_double(lo, 0, 600, &a, r, sizeof r) ||
          erg_config_double(colon + 1, a, 600, &b, r, sizeof r)) {
        snprintf(why, whylen, "%s=%s: %s (want S or MIN:MAX)", key, val, r);
        return -1;
      }
    } else if (erg_config_double(val, 0, 600, &a, r, sizeof r)) {
      snprintf(why, whylen, "%s=%s: %s", key, val, r);
      return -1;
    } else {
      b = a;
    }
    if (rd)
      sh->read_min_seconds = a, sh->read_max_seconds = b;
    else
      sh->delay_min_seconds = a, sh->delay_max_seconds = b;
    return 0;
  }
  double *dst = !strcmp(key, "refresh")   ? &sh->refresh_seconds
                : !strcmp(key, "quantum") ? &sh->quantum_watts
                : !strcmp(key, "average") ? &sh->average_seconds
                : !strcmp(key, "mean")    ? &sh->mean
                : !strcmp(key, "clock")   ? &sh->clock_seconds
                                          : NULL;
  double lo = dst == &sh->refresh_seconds ? 0.05 : dst == &sh->clock_seconds ? -1e9 : 0;
  if (!dst) {
    snprintf(why, whylen, "'%s' is none of refresh, quantum, average, mean, delay, read, clock",
             key);
    return -1;
  }
  if (erg_config_double(val, lo, dst == &sh->clock_seconds ? 1e9 : 3600, dst, r, sizeof r)) {
    snprintf(why, whylen, "%s=%s: %s", key, val, r);
    return -1;
  }
  return 0;
}

int sim_bmc_parse(const char *spec, char *head, size_t headlen, struct sim_bmc_shape *sh, char *why,
                  size_t whylen) {
  memset(sh, 0, sizeof *sh);
  const char *comma = strchr(spec, ',');
  size_t hl = comma ? (size_t)(comma - spec) : strlen(spec);
  if (hl >= headlen) {
    snprintf(why, whylen, "'%s': too long", spec);
    return -1;
  }
  memcpy(head, spec, hl);
  head[hl] = '\0';
  if (!comma)
    return 0;
  char buf[256], *save = NULL;
  if (strlen(comma + 1) >= sizeof buf) {
    snprintf(why, whylen, "'%s': too long", spec);
    return -1;
  }
  erg_strlcpy(buf, comma + 1, sizeof buf);
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(t, '=');
    if (!eq) {
      snprintf(why, whylen, "'%s': want KEY=VALUE", t);
      return -1;
    }
    *eq = '\0';
    if (bmc_key(t, eq + 1, sh, why, whylen))
      return -1;
  }
  if (!(sh->refresh_seconds > 0))
    sh->refresh_seconds = 1;
  if (sh->average_seconds / sh->refresh_seconds > SIM_BMC_SAMPLES) {
    snprintf(why, whylen, "average=%g: at most %d samples of %g s", sh->average_seconds,
             SIM_BMC_SAMPLES, sh->refresh_seconds);
    return -1;
  }
  return 0;
}

/* FNV-1a of the channel's name, mixed with the node: each endpoint's own
 * number, the same from run to run. */
static unsigned bmc_channel_hash(const char *channel, int node) {
  uint32_t h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *)(channel ? channel : ""); *p; p++)
    h = (h ^ *p) * 16777619u;
  h = (h ^ (uint32_t)node) * 16777619u;
  return h ^ (h >> 15);
}

struct sim_bmc *sim_bmc_new(struct sim *s, int node, const char *channel,
                            const struct sim_bmc_shape *sh) {
  struct sim_bmc *b = calloc(1, sizeof *b);
  if (!b)
    return NULL;
  b->s = s;
  b->node = node;
  b->sh = *sh;
  /* Each channel (a BMC endpoint) its own streams of answer delays and read
   * times and its own phase, from its name: two BMCs of one node (the
   * accuracy harness's bmc, bmc5 and bmct) are independent draws of the
   * same power, not one draw seen several times. */
  unsigned h = bmc_channel_hash(channel, node);
  /* Some fraction of a refresh that differs per channel and is no round one. */
  b->phase_s = sh->refresh_seconds * ((h >> 8) % 997u) / 997.0;
  b->nav = sh->average_seconds > 0 ? (int)lround(sh->average_seconds / sh->refresh_seconds) : 1;
  if (b->nav < 1)
    b->nav = 1;
  b->next_s = -1;
  b->seed = 7919u * h + s->seed;
  b->read_seed = 104729u * (h ^ 0x9e3779b9u) + s->seed;
  pthread_mutex_init(&b->lock, NULL);
  return b;
}

/* The time from one sample to the next: the refresh, plus the sensor's
 * read time where the shape has one (read=MIN:MAX). */
static double bmc_period(struct sim_bmc *b) {
  double r = b->sh.refresh_seconds;
  if (b->sh.read_max_seconds > 0) {
    double u = rand_r(&b->read_seed) / ((double)RAND_MAX + 1.0);
    r += b->sh.read_min_seconds + u * (b->sh.read_max_seconds - b->sh.read_min_seconds);
  }
  return r;
}

/* Takes the samples due by now_s; b->lock held. */
static void bmc_sample(struct sim_bmc *b, double now_s) {
  double r = b->sh.refresh_seconds;
  /* The first sample, or after a long stop: on the schedule k x refresh +
   * phase; from there each one a period after the last. */
  if (b->next_s < 0 || now_s - b->next_s > SIM_BMC_SAMPLES * r)
    b->next_s = floor((now_s - b->phase_s) / r) * r + b->phase_s;
  /* Each due sample takes the power at its own time on the schedule, from
   * the simulator's recent updates: a late tick moves no sample. */
  for (; b->next_s <= now_s; b->next_s += bmc_period(b)) {
    double ts = b->next_s, w, e;
    pthread_mutex_lock(&b->s->lock);
    bool ok = sim_node_at(&b->s->nodes[b->node], ts, &w, &e);
    pthread_mutex_unlock(&b->s->lock);
    if (!ok)
      continue;           /* before the simulator's first update */
    if (b->sh.mean > 0) { /* the meter's mean power since the last sample */
      if (b->prev_t_s > 0 && ts > b->prev_t_s)
        w = (e - b->prev_joules) / (ts - b->prev_t_s);
      b->prev_joules = e, b->prev_t_s = ts;
    }
    if (b->nsamples >= b->nav)
      b->sum -= b->sample[(b->head + SIM_BMC_SAMPLES - (unsigned)b->nav) % SIM_BMC_SAMPLES];
    b->sample[b->head] = w;
    b->head = (b->head + 1) % SIM_BMC_SAMPLES;
    b->sum += w;
    if (b->nsamples < SIM_BMC_SAMPLES)
      b->nsamples++;
    int n = b->nsamples < b->nav ? b->nsamples : b->nav;
    b->shown_t[0] = b->shown_t[1], b->shown_w[0] = b->shown_w[1];
    b->shown_t[1] = ts;
    b->shown_w[1] = erg_pdusim_quantise(b->sum / n, b->sh.quantum_watts);
    if (b->nshown < 2)
      b->nshown++;
  }
}

void sim_bmc_tick(struct sim_bmc *b, double now_s) {
  pthread_mutex_lock(&b->lock);
  bmc_sample(b, now_s);
  pthread_mutex_unlock(&b->lock);
}

bool sim_bmc_value(struct sim_bmc *b, double t_s, double *watts, double *sample_s) {
  pthread_mutex_lock(&b->lock);
  bmc_sample(b, t_s);
  bool ok = b->nshown > 0;
  int i = b->nshown > 1 && b->shown_t[1] > t_s ? 0 : 1;
  if (ok)
    *watts = b->shown_w[i], *sample_s = b->shown_t[i];
  pthread_mutex_unlock(&b->lock);
  return ok;
}

double sim_bmc_delay(struct sim_bmc *b) {
  pthread_mutex_lock(&b->lock);
  double u = rand_r(&b->seed) / ((double)RAND_MAX + 1.0);
  pthread_mutex_unlock(&b->lock);
  return b->sh.delay_min_seconds + u * (b->sh.delay_max_seconds - b->sh.delay_min_seconds);
}

double sim_bmc_clock_seconds(const struct sim_bmc *b) { return b->sh.clock_seconds; }

void sim_bmc_free(struct sim_bmc *b) {
  if (!b)
    return;
  pthread_mutex_destroy(&b->lock);
  free(b);
}

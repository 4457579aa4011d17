// SPDX-License-Identifier: GPL-3.0-or-later
/* The erg_bpf API of a build without BPF support (bpf/CMakeLists.txt picks
 * this file instead of erg_bpf.c and erg_bpf_drain.c): every call fails or
 * reports nothing, with the reason, so the agent falls back to /proc. */
#include "erg_bpf.h"

#include <string.h>

#include "erg_common.h"

int erg_bpf_open(struct erg_bpf **out, const struct erg_bpf_opts *opts, char *why, size_t whylen) {
  (void)opts;
  *out = NULL;
  erg_strlcpy(why, "built without BPF support", whylen);
  return -1;
}
unsigned erg_bpf_features(const struct erg_bpf *b) {
  (void)b;
  return 0;
}
const char *erg_bpf_feature_reason(const struct erg_bpf *b, unsigned bit) {
  (void)b;
  (void)bit;
  return "built without BPF support";
}
int erg_bpf_drain(struct erg_bpf *b, erg_bpf_drain_cb cb, void *user, char *why, size_t whylen) {
  (void)b;
  (void)cb;
  (void)user;
  erg_strlcpy(why, "built without BPF support", whylen);
  return -1;
}
void erg_bpf_stats(const struct erg_bpf *b, struct erg_bpf_stats *out) {
  (void)b;
  memset(out, 0, sizeof(*out));
}
int erg_bpf_capacity_classes(const struct erg_bpf *b, uint32_t out[ERG_BPF_MAX_CAP]) {
  (void)b;
  (void)out;
  return 0;
}
void erg_bpf_close(struct erg_bpf *b) { (void)b; }
uint64_t erg_bpf_drain_time_ns(const struct erg_bpf *b) {
  (void)b;
  return 0;
}
void erg_bpf_set_cut_cb(struct erg_bpf *b, erg_bpf_cut_cb cb, void *user) {
  (void)b;
  (void)cb;
  (void)user;
}
int erg_bpf_cgroup_path(const struct erg_bpf *b, uint64_t id, char *out, size_t len) {
  (void)b;
  (void)id;
  (void)out;
  (void)len;
  return -1;
}
const char *erg_bpf_loader(const struct erg_bpf *b) {
  (void)b;
  return "none";
}
bool erg_bpf_names_current(const struct erg_bpf *b) {
  (void)b;
  return false;
}

const char *erg_bpf_heal_reason(const struct erg_bpf *b) {
  (void)b;
  return "built without BPF support";
}

const char *erg_bpf_thread_records_reason(const struct erg_bpf *b) {
  (void)b;
  return "built without BPF support";
}

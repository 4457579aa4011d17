// SPDX-License-Identifier: GPL-3.0-or-later
/* Cgroup paths recorded at exit (docs/bpf.md "Identity fields"), for
 * erg.bpf.c, which includes it once, after its helpers. */
#ifndef ERG_CGPATH_BPF_H
#define ERG_CGPATH_BPF_H

/* cgroup id -> path of cgroups whose processes exited: a Slurm step or a
 * transient scope may be removed before the next drain, and then the
 * agent cannot find its id in the tree any more. LRU: never full. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, ERG_BPF_CGPATHS);
  __type(key, __u64);
  __type(value, struct erg_cgpath);
} cgpaths SEC(".maps");

/* Path assembly: the name pointers leaf first, then the path. Offsets into
 * path are masked to its first half, so a name written there (at most
 * CGPATH_NAME bytes) always stays inside the buffer for the verifier. */
#define CGPATH_DEPTH 16
#define CGPATH_NAME 256
#define CGPATH_MASK (ERG_BPF_CGPATH_LEN - 1)
/* The cgroups this CPU last found or recorded in cgpaths, one v2 and one
 * v1 (a burst of short processes exits from one cgroup: most exits then
 * skip both hash lookups), and when. Trusted for CGPATH_LAST_NS only: an
 * entry evicted from the LRU meanwhile (more than 1024 cgroups with exits)
 * is recorded again after that. */
#define CGPATH_LAST_NS 1000000000ull
struct cgpath_buf {
  __u64 last_id[2];
  __u64 last_ns[2];
  __u64 names[CGPATH_DEPTH];
  char path[2 * ERG_BPF_CGPATH_LEN];
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct cgpath_buf);
} cgpath_scratch SEC(".maps");

/* Kernels since 6.15 call kernfs_node's parent '__parent' (RCU). */
struct kernfs_node___new {
  struct kernfs_node *__parent;
} __attribute__((preserve_access_index));

struct kernfs_node___old {
  struct kernfs_node *parent;
} __attribute__((preserve_access_index));

/* A function of its own: inlined, clang hoists the old field's offset (a
 * relocation that cannot resolve on new kernels) out of the walk's loop,
 * ahead of the branch that guards it, and the verifier rejects it. */
static __noinline struct kernfs_node *kn_parent_old(struct kernfs_node *kn) {
  return ((struct kernfs_node___old *)kn)->parent;
}

static __always_inline struct kernfs_node *kn_parent(struct kernfs_node *kn) {
  if (bpf_core_field_exists(((struct kernfs_node___new *)kn)->__parent))
    return ((struct kernfs_node___new *)kn)->__parent;
  return kn_parent_old(kn);
}

/* Names from kn up to (not including) the hierarchy root, leaf first;
 * returns their count, or -1 if the path is deeper than CGPATH_DEPTH (the
 * agent's tree walk then has to find it). */
static __always_inline int cgpath_names(struct kernfs_node *kn, struct cgpath_buf *b) {
  for (int i = 0; i < CGPATH_DEPTH; i++) {
    struct kernfs_node *p = kn_parent(kn);

    if (!p)
      return i;
    b->names[i] = (__u64)kn->name;
    kn = p;
  }
  return kn_parent(kn) ? -1 : CGPATH_DEPTH;
}

/* Records the path of the cgroup kn once, from the root down; a path longer
 * than the agent keeps is cut as the agent cuts it. */
static __always_inline void cgpath_record(struct kernfs_node *kn, __u64 id) {
  struct cgpath_buf *b;
  __u32 zero = 0, off = 0, v1 = id >> 63;
  __u64 now = bpf_ktime_get_ns();
  int n;

  b = bpf_map_lookup_elem(&cgpath_scratch, &zero);
  if (!b)
    return;
  if (b->last_id[v1 & 1] == id && now - b->last_ns[v1 & 1] < CGPATH_LAST_NS)
    return;
  b->last_id[v1 & 1] = id;
  b->last_ns[v1 & 1] = now;
  if (bpf_map_lookup_elem(&cgpaths, &id))
    return;
  n = cgpath_names(kn, b);
  if (n < 0)
    return;
  for (int i = CGPATH_DEPTH - 1; i >= 0; i--) {
    long len;

    if (i >= n)
      continue;
    if (off >= ERG_BPF_CGPATH_LEN - 1)
      break;
    b->path[off & CGPATH_MASK] = '/';
    off++;
    len = bpf_probe_read_kernel_str(&b->path[off & CGPATH_MASK], CGPATH_NAME,
                                    (const char *)b->names[i & (CGPATH_DEPTH - 1)]);
    if (len <= 0)
      return;
    off += len - 1;
  }
  if (n == 0) {
    b->path[0] = '/';
    off = 1;
  }
  b->path[off < ERG_BPF_CGPATH_LEN ? off & CGPATH_MASK : CGPATH_MASK] = '\0';
  bpf_map_update_elem(&cgpaths, &id, b->path, BPF_ANY);
}

/* Hybrid hosts (v1 controllers beside the unified tree) keep Slurm's job
 * cgroups in the v1 hierarchies only, so a process that starts and exits
 * between two drains would have no job without its v1 path: the freezer
 * hierarchy's (proctrack/cgroup always uses it) is recorded as well. A
 * kernel without the freezer controller skips this at load (CO-RE). */
static __always_inline __u64 cgv1_record(struct task_struct *l) {
  struct cgroup_subsys_state *css;
  struct kernfs_node *kn;
  __u64 id;

  if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, freezer_cgrp_id))
    return 0;
  css = l->cgroups->subsys[bpf_core_enum_value(enum cgroup_subsys_id, freezer_cgrp_id)];
  if (!css)
    return 0;
  kn = css->cgroup->kn;
  /* Not mounted as v1 (a pure v2 host): the css is the default root's. */
  if (!kn || css->cgroup->root == l->cgroups->dfl_cgrp->root)
    return 0;
  id = kn->id | ERG_CGV1_BIT;
  cgpath_record(kn, id);
  return id;
}

#endif

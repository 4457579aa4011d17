// SPDX-License-Identifier: GPL-3.0-or-later
/* GPU sampling through ROCm SMI (AMD), loaded with dlopen: no build-time
 * dependency, and a node without it simply has no AMD GPUs. One backend of
 * gpu.c (gpu_backend.h); libc and libdl only.
 *
 * Energy: the energy accumulator's difference (× its resolution, µJ),
 * else the trapezoid of the power readings at the interval's ends, as for
 * NVML. Power: rsmi_dev_power_get, else rsmi_dev_current_socket_power_get,
 * else rsmi_dev_power_ave_get, the first this library has and the GPU
 * answers at open. Per-process shares (docs/gpu.md "AMD"): ROCm SMI lists
 * the processes with their GPUs, VRAM and CU occupancy at the reading;
 * a process's share of a GPU is its CU occupancy over the sum of its GPU's
 * processes', else (none occupied, or not reported) its part of their
 * VRAM, else an equal part; all 0 when the GPU was idle (busy 0 % and no CU
 * occupied), as NVML's shares are without activity. */
#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_backend.h"
#include "gpu_rocm_abi.h"

#define ROCM_MAX_PROC_GPUS 64

enum rocm_power_src { ROCM_POWER_NONE, ROCM_POWER_GET, ROCM_POWER_SOCKET, ROCM_POWER_AVE };

struct rocm_api {
  void *dl;
  rsmi_init_fn init;
  rsmi_shut_down_fn shut_down;
  rsmi_status_string_fn status_string;
  rsmi_num_monitor_devices_fn num_devices;
  rsmi_dev_name_get_fn name;
  /* Optional: a library or GPU without one lacks that reading. */
  rsmi_dev_unique_id_get_fn unique_id;
  rsmi_dev_pci_id_get_fn pci_id;
  rsmi_dev_power_get_fn power_get;
  rsmi_dev_current_socket_power_get_fn socket_power;
  rsmi_dev_power_ave_get_fn power_ave;
  rsmi_dev_energy_count_get_fn energy;
  rsmi_dev_busy_percent_get_fn busy;
  rsmi_dev_memory_busy_percent_get_fn mem_busy;
  rsmi_compute_process_info_get_fn procs;
  rsmi_compute_process_info_by_pid_get_fn proc_by_pid;
  rsmi_compute_process_info_by_device_get_fn proc_by_device;
  rsmi_compute_process_gpus_get_fn proc_gpus;
};

/* What the last reading of one device left for the next interval. */
struct rocm_prev {
  enum rocm_power_src power_src;
  bool have_energy, have_power;
  uint64_t energy_raw; /* the accumulator, in units of its resolution */
  double power_w;
};

/* One process on one GPU, as read. */
struct rocm_use {
  uint32_t pid;
  unsigned device;
  uint64_t vram;
  uint32_t cu; /* CU_OCCUPANCY_INVALID: not reported */
};

struct rocm_gpu {
  struct rocm_api api;
  bool initialised;
  bool by_device; /* rsmi_compute_process_info_by_device_get answers */
  size_t n;
  struct erg_gpu_device dev[ERG_GPU_MAX_DEVICES];
  struct rocm_prev prev[ERG_GPU_MAX_DEVICES];
  struct erg_gpu_clock clock;
  rsmi_process_info_t *pl; /* the process list */
  uint32_t pl_cap;
  struct rocm_use *uses;
  size_t nuses, uses_cap;
  struct erg_gpu_proc *procs;
  size_t nprocs, procs_cap;
};

static const char *rocm_str(const struct rocm_gpu *g, rsmi_status_t r) {
  const char *s = NULL;
  if (g->api.status_string && g->api.status_string(r, &s) != RSMI_STATUS_SUCCESS)
    s = NULL;
  return s ? s : "unknown ROCm SMI error";
}

/* A reading that is just not there now (or on this GPU); anything else
 * means the GPU or the driver is gone (EIO reads as UNEXPECTED_SIZE). */
static bool rocm_soft(rsmi_status_t r) {
  return r == RSMI_STATUS_NOT_SUPPORTED || r == RSMI_STATUS_PERMISSION ||
         r == RSMI_STATUS_NOT_FOUND || r == RSMI_STATUS_NO_DATA ||
         r == RSMI_STATUS_INSUFFICIENT_SIZE || r == RSMI_STATUS_BUSY ||
         r == RSMI_STATUS_INTERRUPT || r == RSMI_STATUS_NOT_YET_IMPLEMENTED ||
         r == RSMI_STATUS_UNEXPECTED_DATA || r == RSMI_STATUS_OUT_OF_RESOURCES ||
         r == RSMI_STATUS_SETTING_UNAVAILABLE;
}

/* At open, a capability that answers with bad arguments or out of bounds
 * (an older library, another sensor layout) is just not there. */
static bool rocm_probe_soft(rsmi_status_t r) {
  return rocm_soft(r) || r == RSMI_STATUS_INVALID_ARGS || r == RSMI_STATUS_INPUT_OUT_OF_BOUNDS;
}

static int rocm_fail(const struct rocm_gpu *g, const struct erg_gpu_device *d, const char *fn,
                     rsmi_status_t r, char *why, size_t whylen) {
  if (d)
    snprintf(why, whylen, "GPU %u (%s): %s: %s", d->index, d->uuid, fn, rocm_str(g, r));
  else
    snprintf(why, whylen, "%s: %s", fn, rocm_str(g, r));
  return -1;
}

/* The library's names, newest ABI first; /opt/rocm/lib where ROCm's
 * directory is not in the loader's path. */
static const char *const rocm_names[] = {"librocm_smi64.so.7", "librocm_smi64.so.6",
                                         "librocm_smi64.so.5", "librocm_smi64.so.1",
                                         "librocm_smi64.so",   "/opt/rocm/lib/librocm_smi64.so"};

static int rocm_load(struct rocm_api *api, const char *library, bool *absent, char *why,
                     size_t whylen) {
  const char *used = library;
  /* ROCm SMI may be installed where no AMD GPU is (a shared image): its
   * rsmi_init then fails and writes to stderr. By its default names it is
   * loaded only beside the amdgpu driver; a library named is always. */
  if (!library && access("/sys/module/amdgpu", F_OK) != 0 && access("/dev/kfd", F_OK) != 0) {
    *absent = true;
    snprintf(why, whylen, "no amdgpu driver (/sys/module/amdgpu, /dev/kfd)");
    return -1;
  }
  if (library)
    api->dl = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  for (size_t i = 0; !library && !api->dl && i < sizeof rocm_names / sizeof rocm_names[0]; i++)
    api->dl = dlopen(used = rocm_names[i], RTLD_NOW | RTLD_LOCAL);
  if (!api->dl) {
    *absent = true;
    if (library)
      snprintf(why, whylen, "%s", dlerror());
    else
      snprintf(why, whylen,
               "librocm_smi64.so (.so.7, .so.6, .so.5, .so.1, /opt/rocm/lib): not "
               "found");
    return -1;
  }
  static const struct erg_gpu_sym syms[] = {
#define ROCM_SYM(f, n, req) {n, offsetof(struct rocm_api, f), req}
      ROCM_SYM(init, "rsmi_init", true),
      ROCM_SYM(shut_down, "rsmi_shut_down", true),
      ROCM_SYM(status_string, "rsmi_status_string", true),
      ROCM_SYM(num_devices, "rsmi_num_monitor_devices", true),
      ROCM_SYM(name, "rsmi_dev_name_get", true),
      ROCM_SYM(unique_id, "rsmi_dev_unique_id_get", false),
      ROCM_SYM(pci_id, "rsmi_dev_pci_id_get", false),
      ROCM_SYM(power_get, "rsmi_dev_power_get", false),
      ROCM_SYM(socket_power, "rsmi_dev_current_socket_power_get", false),
      ROCM_SYM(power_ave, "rsmi_dev_power_ave_get", false),
      ROCM_SYM(energy, "rsmi_dev_energy_count_get", false),
      ROCM_SYM(busy, "rsmi_dev_busy_percent_get", false),
      ROCM_SYM(mem_busy, "rsmi_dev_memory_busy_percent_get", false),
      ROCM_SYM(procs, "rsmi_compute_process_info_get", false),
      ROCM_SYM(proc_by_pid, "rsmi_compute_process_info_by_pid_get", false),
      ROCM_SYM(proc_by_device, "rsmi_compute_process_info_by_device_get", false),
      ROCM_SYM(proc_gpus, "rsmi_compute_process_gpus_get", false),
#undef ROCM_SYM
  };
  const char *missing;
  if (erg_gpu_dlsyms(api->dl, api, syms, sizeof syms / sizeof syms[0], &missing)) {
    snprintf(why, whylen, "%s lacks %s (not ROCm SMI?)", used, missing);
    return -1;
  }
  return 0;
}

/* Device i's power now, µW, from the source found at open. */
static rsmi_status_t rocm_power(const struct rocm_gpu *g, uint32_t i, enum rocm_power_src src,
                                uint64_t *uw, const char **fn) {
  RSMI_POWER_TYPE type = RSMI_INVALID_POWER;
  switch (src) {
    case ROCM_POWER_GET:
      *fn = "rsmi_dev_power_get";
      return g->api.power_get(i, uw, &type);
    case ROCM_POWER_SOCKET:
      *fn = "rsmi_dev_current_socket_power_get";
      return g->api.socket_power(i, uw);
    case ROCM_POWER_AVE:
      *fn = "rsmi_dev_power_ave_get";
      return g->api.power_ave(i, 0, uw);
    default:
      *fn = "";
      return RSMI_STATUS_NOT_SUPPORTED;
  }
}

/* Probes one device's identity and what it can report. */
static int rocm_probe(struct rocm_gpu *g, uint32_t i, bool procs, char *why, size_t whylen) {
  struct erg_gpu_device *d = &g->dev[g->n];
  struct rocm_prev *p = &g->prev[g->n];
  memset(d, 0, sizeof *d);
  memset(p, 0, sizeof *p);
  d->index = i;
  snprintf(d->uuid, sizeof d->uuid, "AMD-index-%u", (unsigned)i);
  uint64_t id = 0;
  rsmi_status_t r = RSMI_STATUS_NOT_SUPPORTED;
  if (g->api.unique_id && (r = g->api.unique_id(i, &id)) != RSMI_STATUS_SUCCESS &&
      !rocm_probe_soft(r))
    return rocm_fail(g, d, "rsmi_dev_unique_id_get", r, why, whylen);
  if (g->api.unique_id && r == RSMI_STATUS_SUCCESS && id) {
    snprintf(d->uuid, sizeof d->uuid, "AMD-%016" PRIx64, id);
  } else if (g->api.pci_id && (r = g->api.pci_id(i, &id)) == RSMI_STATUS_SUCCESS) {
    snprintf(d->uuid, sizeof d->uuid, "AMD-pci-%04x:%02x:%02x.%x", (unsigned)(id >> 32),
             (unsigned)(id >> 8) & 0xff, (unsigned)(id >> 3) & 0x1f, (unsigned)id & 0x7);
  } else if (g->api.pci_id && !rocm_probe_soft(r)) {
    return rocm_fail(g, d, "rsmi_dev_pci_id_get", r, why, whylen);
  }
  if ((r = g->api.name(i, d->name, sizeof d->name)) != RSMI_STATUS_SUCCESS) {
    if (!rocm_probe_soft(r))
      return rocm_fail(g, d, "rsmi_dev_name_get", r, why, whylen);
    if (r != RSMI_STATUS_INSUFFICIENT_SIZE) /* that one writes what fits */
      d->name[0] = '\0';
  }
  d->name[sizeof d->name - 1] = '\0';
  if (g->api.energy) {
    uint64_t raw = 0, ts = 0;
    float res = 0;
    r = g->api.energy(i, &raw, &res, &ts);
    if (r != RSMI_STATUS_SUCCESS && !rocm_probe_soft(r))
      return rocm_fail(g, d, "rsmi_dev_energy_count_get", r, why, whylen);
    d->energy_counter = r == RSMI_STATUS_SUCCESS && res > 0 && isfinite(res);
  }
  /* The first power source this library has and this GPU answers. */
  const enum rocm_power_src order[] = {ROCM_POWER_GET, ROCM_POWER_SOCKET, ROCM_POWER_AVE};
  const bool have[] = {g->api.power_get != NULL, g->api.socket_power != NULL,
                       g->api.power_ave != NULL};
  for (size_t k = 0; k < 3 && !d->power_reading; k++) {
    if (!have[k])
      continue;
    uint64_t uw;
    const char *fn;
    r = rocm_power(g, i, order[k], &uw, &fn);
    if (r != RSMI_STATUS_SUCCESS && !rocm_probe_soft(r))
      return rocm_fail(g, d, fn, r, why, whylen);
    if (r == RSMI_STATUS_SUCCESS) {
      d->power_reading = true;
      p->power_src = order[k];
    }
  }
  d->proc_util = procs;
  g->n++;
  return 0;
}

static void rocm_close(void *b);

/* Whether the process list can be read here (the agent's permissions). */
static bool rocm_procs_usable(struct rocm_gpu *g) {
  if (!g->api.procs || !g->api.proc_gpus || (!g->api.proc_by_pid && !g->api.proc_by_device))
    return false;
  uint32_t n = 0;
  return g->api.procs(NULL, &n) == RSMI_STATUS_SUCCESS;
}

static int rocm_open(void **out, const char *library, bool *absent, char *why, size_t whylen) {
  *absent = false;
  struct rocm_gpu *g = calloc(1, sizeof *g);
  if (!g) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  if (rocm_load(&g->api, library, absent, why, whylen) != 0) {
    rocm_close(g);
    return -1;
  }
  rsmi_status_t r = g->api.init(0);
  if (r != RSMI_STATUS_SUCCESS) {
    rocm_fail(g, NULL, "rsmi_init", r, why, whylen);
    rocm_close(g);
    return -1;
  }
  g->initialised = true;
  uint32_t count = 0;
  if ((r = g->api.num_devices(&count)) != RSMI_STATUS_SUCCESS) {
    rocm_fail(g, NULL, "rsmi_num_monitor_devices", r, why, whylen);
    rocm_close(g);
    return -1;
  }
  if (count == 0) {
    *absent = true;
    snprintf(why, whylen, "ROCm SMI sees no GPU");
    rocm_close(g);
    return -1;
  }
  g->by_device = g->api.proc_by_device != NULL;
  bool procs = rocm_procs_usable(g);
  for (uint32_t i = 0; i < count && g->n < ERG_GPU_MAX_DEVICES; i++)
    if (rocm_probe(g, i, procs, why, whylen) != 0) {
      rocm_close(g);
      return -1;
    }
  *out = g;
  return 0;
}

static const struct erg_gpu_device *rocm_devices(const void *b, size_t *n) {
  const struct rocm_gpu *g = b;
  *n = g->n;
  return g->dev;
}

/* Energy and power of device k over the interval. */
static int rocm_energy(struct rocm_gpu *g, size_t k, bool baseline, const char **fn,
                       rsmi_status_t *rr) {
  struct erg_gpu_device *d = &g->dev[k];
  struct rocm_prev *p = &g->prev[k];
  uint64_t raw = 0, uw = 0, ts;
  float res = 0;
  bool have_e = false, have_p = false;
  d->has_energy = d->energy_from_counter = false;
  d->energy_counter_joules = d->energy_power_joules = d->power_now_watts = -1;
  if (d->energy_counter) {
    *fn = "rsmi_dev_energy_count_get";
    if ((*rr = g->api.energy(d->index, &raw, &res, &ts)) != RSMI_STATUS_SUCCESS && !rocm_soft(*rr))
      return -1;
    have_e = *rr == RSMI_STATUS_SUCCESS && res > 0 && isfinite(res);
  }
  if (d->power_reading) {
    if ((*rr = rocm_power(g, d->index, p->power_src, &uw, fn)) != RSMI_STATUS_SUCCESS &&
        !rocm_soft(*rr))
      return -1;
    have_p = *rr == RSMI_STATUS_SUCCESS;
  }
  if (have_p)
    d->power_now_watts = (double)uw / 1e6;
  /* A counter that went back: the driver was reloaded; use the power. */
  erg_gpu_energy_settle(d,
                        !baseline && have_e && p->have_energy && raw >= p->energy_raw
                            ? (double)(raw - p->energy_raw) * (double)res / 1e6
                            : -1,
                        !baseline && p->have_power ? p->power_w : -1);
  p->have_energy = have_e;
  p->energy_raw = raw;
  p->have_power = have_p;
  p->power_w = d->power_now_watts;
  return 0;
}

static struct rocm_use *rocm_use_push(struct rocm_gpu *g) {
  if (g->nuses == g->uses_cap) {
    size_t cap = g->uses_cap ? g->uses_cap * 2 : 64;
    struct rocm_use *u = realloc(g->uses, cap * sizeof *u);
    if (!u)
      return NULL;
    g->uses = u;
    g->uses_cap = cap;
  }
  return &g->uses[g->nuses++];
}

/* The process list into g->pl: 0 and *cnt, 1 when it cannot be read now
 * (soft), -1 (fatal, *rr). */
static int rocm_list(struct rocm_gpu *g, uint32_t *cnt, rsmi_status_t *rr) {
  for (int tries = 0; tries < 4; tries++) {
    uint32_t want = 0;
    if ((*rr = g->api.procs(NULL, &want)) != RSMI_STATUS_SUCCESS)
      return rocm_soft(*rr) ? 1 : -1;
    if (want + 16 > g->pl_cap) {
      uint32_t cap = want + want / 4 + 16;
      rsmi_process_info_t *pl = realloc(g->pl, (size_t)cap * sizeof *pl);
      if (!pl)
        return 1;
      g->pl = pl;
      g->pl_cap = cap;
    }
    *cnt = g->pl_cap;
    *rr = g->api.procs(g->pl, cnt);
    if (*rr == RSMI_STATUS_INSUFFICIENT_SIZE)
      continue; /* more processes since the count */
    if (*rr != RSMI_STATUS_SUCCESS)
      return rocm_soft(*rr) ? 1 : -1;
    *cnt = *cnt < g->pl_cap ? *cnt : g->pl_cap;
    return 0;
  }
  return 1;
}

/* Every listed process on each GPU it has queues on, with its VRAM and
 * CU occupancy there, into g->uses. A process's own calls fail softly
 * (it may have exited since the list): it is left out. */
static void rocm_proc_uses(struct rocm_gpu *g, uint32_t cnt) {
  g->nuses = 0;
  for (uint32_t i = 0; i < cnt; i++) {
    uint32_t pid = g->pl[i].process_id, ind[ROCM_MAX_PROC_GPUS], nd = ROCM_MAX_PROC_GPUS;
    rsmi_status_t r = g->api.proc_gpus(pid, ind, &nd);
    if (r != RSMI_STATUS_SUCCESS && r != RSMI_STATUS_INSUFFICIENT_SIZE)
      continue;
    nd = nd < ROCM_MAX_PROC_GPUS ? nd : ROCM_MAX_PROC_GPUS;
    rsmi_process_info_t all = {0};
    bool have_all = false, tried_all = false;
    for (uint32_t j = 0; j < nd; j++) {
      if (ind[j] >= g->n || !g->dev[ind[j]].proc_util)
        continue;
      rsmi_process_info_t info;
      memset(&info, 0, sizeof info);
      bool ok = false;
      if (g->by_device) {
        r = g->api.proc_by_device(pid, ind[j], &info);
        ok = r == RSMI_STATUS_SUCCESS;
        /* A library that has the call but not its data: by pid from now on. */
        if (r == RSMI_STATUS_NOT_SUPPORTED || r == RSMI_STATUS_NOT_YET_IMPLEMENTED)
          g->by_device = false;
      }
      if (!ok && !g->by_device && g->api.proc_by_pid) {
        /* Summed over its GPUs: its VRAM split evenly between them, its
         * CU occupancy (the mean over their CUs) on each. */
        if (!tried_all) {
          tried_all = true;
          have_all = g->api.proc_by_pid(pid, &all) == RSMI_STATUS_SUCCESS;
        }
        if ((ok = have_all)) {
          info = all;
          info.vram_usage = all.vram_usage / (nd ? nd : 1);
        }
      }
      if (!ok)
        continue;
      struct rocm_use *u = rocm_use_push(g);
      if (!u)
        return;
      *u = (struct rocm_use){pid, ind[j], info.vram_usage, info.cu_occupancy};
    }
  }
}

static int cmp_use(const void *a, const void *b) {
  const struct rocm_use *x = a, *y = b;
  if (x->device != y->device)
    return (x->device > y->device) - (x->device < y->device);
  return (x->pid > y->pid) - (x->pid < y->pid);
}

/* g->uses into g->procs with their shares, per device. */
static int rocm_shares(struct rocm_gpu *g) {
  qsort(g->uses, g->nuses, sizeof *g->uses, cmp_use);
  if (g->nuses > g->procs_cap) {
    struct erg_gpu_proc *p = realloc(g->procs, g->nuses * sizeof *p);
    if (!p)
      return -1;
    g->procs = p;
    g->procs_cap = g->nuses;
  }
  g->nprocs = 0;
  for (size_t i = 0; i < g->nuses;) {
    size_t j = i;
    const struct erg_gpu_device *d = &g->dev[g->uses[i].device];
    double cu = 0, vram = 0;
    for (; j < g->nuses && g->uses[j].device == g->uses[i].device; j++) {
      if (j > i && g->uses[j].pid == g->uses[j - 1].pid)
        continue; /* listed twice */
      cu += g->uses[j].cu != CU_OCCUPANCY_INVALID ? g->uses[j].cu : 0;
      vram += (double)g->uses[j].vram;
    }
    bool idle = cu <= 0 && d->has_util && d->util_percent == 0;
    size_t first = g->nprocs;
    for (size_t k = i; k < j; k++) {
      const struct rocm_use *u = &g->uses[k];
      if (k > i && u->pid == u[-1].pid)
        continue;
      struct erg_gpu_proc *e = &g->procs[g->nprocs++];
      memset(e, 0, sizeof *e);
      e->pid = u->pid;
      e->device = u->device;
      e->gpu_instance = e->compute_instance = ERG_GPU_NO_INSTANCE;
      e->used_memory_bytes = u->vram;
      e->sm_percent = u->cu != CU_OCCUPANCY_INVALID ? u->cu : 0;
      if (e->sm_percent > 100)
        e->sm_percent = 100;
      if (cu > 0)
        e->sm_share = (u->cu != CU_OCCUPANCY_INVALID ? u->cu : 0) / cu;
      else if (!idle && vram > 0)
        e->sm_share = (double)u->vram / vram;
    }
    if (cu <= 0 && !idle && vram <= 0)
      for (size_t k = first; k < g->nprocs; k++)
        g->procs[k].sm_share = 1.0 / (double)(g->nprocs - first);
    i = j;
  }
  return 0;
}

static int rocm_sample(void *b, uint64_t now_ns, struct erg_gpu_interval *out, char *why,
                       size_t whylen) {
  struct rocm_gpu *g = b;
  bool baseline, procs = false;
  double seconds = erg_gpu_clock_begin(&g->clock, now_ns, &baseline);
  g->nprocs = 0;
  for (size_t k = 0; k < g->n; k++) {
    struct erg_gpu_device *d = &g->dev[k];
    rsmi_status_t r;
    const char *fn = "";
    d->seconds = seconds;
    if (rocm_energy(g, k, baseline, &fn, &r) != 0)
      return rocm_fail(g, d, fn, r, why, whylen);
    d->has_util = d->has_proc_util = false;
    d->util_percent = d->mem_util_percent = 0;
    uint32_t pct = 0;
    if (g->api.busy) {
      if ((r = g->api.busy(d->index, &pct)) != RSMI_STATUS_SUCCESS && !rocm_soft(r))
        return rocm_fail(g, d, "rsmi_dev_busy_percent_get", r, why, whylen);
      d->has_util = r == RSMI_STATUS_SUCCESS;
      d->util_percent = d->has_util ? (pct > 100 ? 100 : pct) : 0;
    }
    if (d->has_util && g->api.mem_busy) {
      if ((r = g->api.mem_busy(d->index, &pct)) != RSMI_STATUS_SUCCESS && !rocm_soft(r))
        return rocm_fail(g, d, "rsmi_dev_memory_busy_percent_get", r, why, whylen);
      d->mem_util_percent = r == RSMI_STATUS_SUCCESS ? (pct > 100 ? 100 : pct) : 0;
    }
    procs |= d->proc_util;
  }
  if (!baseline && procs) {
    uint32_t cnt = 0;
    rsmi_status_t r;
    int res = rocm_list(g, &cnt, &r);
    if (res < 0)
      return rocm_fail(g, NULL, "rsmi_compute_process_info_get", r, why, whylen);
    if (res == 0) {
      rocm_proc_uses(g, cnt);
      if (rocm_shares(g) == 0)
        for (size_t k = 0; k < g->n; k++)
          g->dev[k].has_proc_util = g->dev[k].proc_util;
    }
  }
  return erg_gpu_clock_end(&g->clock, now_ns, baseline, out, g->dev, g->n, g->procs, g->nprocs);
}

static void rocm_close(void *b) {
  struct rocm_gpu *g = b;
  if (!g)
    return;
  if (g->initialised)
    g->api.shut_down();
  if (g->api.dl)
    dlclose(g->api.dl);
  free(g->pl);
  free(g->uses);
  free(g->procs);
  free(g);
}

const struct erg_gpu_backend erg_gpu_rocm_backend = {"rocm", rocm_open, rocm_devices, rocm_sample,
                                                     rocm_close};

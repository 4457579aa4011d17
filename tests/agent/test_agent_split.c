// SPDX-License-Identifier: GPL-3.0-or-later
/* Real BPF through the whole agent: CPU time per frequency and per core
 * capacity in the sample, packed to the wire and unpacked again.
 *  1. This machine's sysfs: where it has no cpufreq driver or one core
 *     capacity (VMs), the hello must not list "freq"/"capacity" and no process
 *     may carry freq/capacity entries or capacity_weighted_ns — absent, not
 *     zero-filled.
 *  2. A fake big.LITTLE sysfs tree (sysfs_cpu_root): a busy child on the
 *     little CPU 0 and one on the big last CPU; each must arrive with all its
 *     CPU time at its core's capacity and frequency, and the weighted time
 *     scaled by capacity / 1024.
 * Exit 77 when not root, without BTF, or built without BPF. After a failed
 * assertion the case's teardown kills its children and closes its agent. */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../erg_test.h"
#include "erg_agent.h"
#include "erg_bpf.h"

static pid_t busy_child(int cpu) {
  pid_t pid = fork();
  erg_assert(pid >= 0, "fork");
  if (pid == 0) {
    cpu_set_t set;
    volatile unsigned long x = 0;
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* and erg_kill_children after a failure */
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
      _exit(1);
    for (;;)
      x++;
  }
  return erg_test_child(pid);
}

static int has_feature(const Erg__Hello *h, const char *name) {
  for (size_t i = 0; i < h->n_features; i++)
    if (!strcmp(h->features[i], name))
      return 1;
  return 0;
}

/* Two sweeps 600 ms apart, the sample packed and unpacked; caller frees. */
static Erg__Envelope *sample_roundtrip(struct erg_agent *a, char **json) {
  const Erg__Sample *s = NULL;
  char swhy[256] = "";
  erg_assert(erg_agent_sweep(a, &s, swhy, sizeof swhy) == 0, "baseline sweep: %s", swhy);
  usleep(600000);
  erg_assert(erg_agent_sweep(a, &s, swhy, sizeof swhy) == 1 && s, "second sweep: %s", swhy);
  /* The process map is far from full here: nothing for the log. */
  erg_assert(erg_agent_map_full(a) == 0, "process map full");
  *json = erg_agent_sample_json(s, erg_agent_hello(a));
  Erg__Envelope env = ERG__ENVELOPE__INIT;
  env.version = ERG_WIRE_VERSION;
  env.body_case = ERG__ENVELOPE__BODY_SAMPLE;
  env.sample = (Erg__Sample *)s;
  uint8_t *buf = NULL;
  size_t len = erg_wire_pack(&env, &buf);
  erg_assert(len > 0, "pack");
  const char *why = NULL;
  Erg__Envelope *back = erg_wire_unpack(buf, len, &why);
  free(buf);
  erg_assert(back && back->body_case == ERG__ENVELOPE__BODY_SAMPLE, "unpack: %s", why ? why : "?");
  return back;
}

static const Erg__Proc *find_proc(const Erg__Sample *s, pid_t pid) {
  for (size_t i = 0; i < s->n_procs; i++)
    if (s->procs[i]->pid == (uint32_t)pid)
      return s->procs[i];
  return NULL;
}

/* The agent of the case running, closed by its teardown after a failure. */
static struct erg_agent *open_agent;

static struct erg_agent *agent_open(const char *sysfs_root) {
  struct erg_agent_config cfg;
  struct erg_agent *a;
  char why[512];
  erg_agent_config_defaults(&cfg);
  strcpy(cfg.collection, "bpf");
  if (sysfs_root)
    erg_assert(snprintf(cfg.sysfs_cpu_root, sizeof cfg.sysfs_cpu_root, "%s", sysfs_root) <
                   (int)sizeof cfg.sysfs_cpu_root,
               "sysfs root too long");
  erg_assert(erg_agent_open(&a, &cfg, why, sizeof why) == 0, "open: %s", why);
  return open_agent = a;
}

static void test_real_sysfs(void **state) {
  (void)state;
  uint32_t v[1024], cls[ERG_BPF_MAX_CAP];
  int nf = erg_bpf_read_frequencies("/sys/devices/system/cpu", v, 1024);
  int nc = erg_bpf_read_capacities("/sys/devices/system/cpu", v, 1024);
  int ncls = nc > 0 ? erg_bpf_capacity_group(v, nc, cls, ERG_BPF_MAX_CAP) : 0;
  int want_freq = nf > 0, want_cap = ncls >= 2;
  pid_t child = busy_child(0);
  struct erg_agent *a = agent_open(NULL);
  const Erg__Hello *h = erg_agent_hello(a);
  erg_assert(!erg_agent_bpf_unavailable(a), "collection = bpf opened: no fallback");
  char *json = NULL;
  Erg__Envelope *env = sample_roundtrip(a, &json);
  const Erg__Sample *s = env->sample;
  printf("real sysfs: freq %s, capacity %s (%d classes); %zu procs\n",
         want_freq ? "present" : "absent", want_cap ? "present" : "absent", ncls, s->n_procs);
  erg_assert(has_feature(h, "freq") == want_freq, "hello freq feature");
  erg_assert(has_feature(h, "capacity") == want_cap, "hello capacity feature");
  erg_assert(find_proc(s, child) != NULL, "busy child in the sample");
  for (size_t i = 0; i < s->n_procs; i++) {
    const Erg__Proc *p = s->procs[i];
    if (!want_freq)
      erg_assert(p->n_freq == 0, "pid %u has %zu freq entries", p->pid, p->n_freq);
    if (!want_cap)
      erg_assert(p->n_capacity == 0 && p->capacity_weighted_ns == 0, "pid %u capacity", p->pid);
  }
  if (!want_cap)
    erg_assert(!strstr(json, "capacity_weighted_ns") && strstr(json, "\"capacity\":[]"),
               "dump shows no capacity");
  if (!want_freq)
    erg_assert(!strstr(json, "\"khz\""), "dump shows no frequency");
  free(json);
  erg_wire_free(env);
  erg_agent_close(a);
  open_agent = NULL;
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
}

static void fake_sysfs(const char *root, int ncpu) {
  char path[1024], buf[32];
  for (int i = 0; i < ncpu; i++) {
    int big = i >= ncpu / 2;
    snprintf(path, sizeof path, "%s/cpu%d/cpufreq", root, i);
    erg_assert(erg_mkdir_p(path, 0755) == 0, "mkdir %s", path);
    snprintf(path, sizeof path, "%s/cpu%d/cpu_capacity", root, i);
    snprintf(buf, sizeof buf, "%d\n", big ? 1024 : 446);
    erg_assert(erg_write_file_atomic(path, buf, strlen(buf)) == 0, "write %s", path);
    snprintf(path, sizeof path, "%s/cpu%d/cpufreq/scaling_cur_freq", root, i);
    snprintf(buf, sizeof buf, "%d\n", big ? 1800000 : 1416000);
    erg_assert(erg_write_file_atomic(path, buf, strlen(buf)) == 0, "write %s", path);
  }
}

/* All of p's time on one core type: one capacity and one frequency entry,
 * each equal to cpu_ns (the kernel and the drain charge the same slices). */
static void check_split(const Erg__Proc *p, uint32_t capacity, uint32_t khz) {
  erg_assert(p->cpu_ns > 20000000ull, "pid %u ran only %llu ns", p->pid,
             (unsigned long long)p->cpu_ns);
  erg_assert(p->n_capacity == 1 && p->capacity[0]->capacity == capacity,
             "pid %u: %zu capacity entries, first %u", p->pid, p->n_capacity,
             p->n_capacity ? p->capacity[0]->capacity : 0);
  erg_assert(p->capacity[0]->cpu_ns == p->cpu_ns, "capacity time %llu vs cpu %llu",
             (unsigned long long)p->capacity[0]->cpu_ns, (unsigned long long)p->cpu_ns);
  erg_assert(p->n_freq == 1 && p->freq[0]->khz == khz, "pid %u: %zu freq entries, first %u", p->pid,
             p->n_freq, p->n_freq ? p->freq[0]->khz : 0);
  erg_assert(p->freq[0]->cpu_ns == p->cpu_ns, "freq time %llu vs cpu %llu",
             (unsigned long long)p->freq[0]->cpu_ns, (unsigned long long)p->cpu_ns);
  uint64_t w = p->cpu_ns * capacity / 1024;
  erg_assert(p->capacity_weighted_ns + 1000 >= w && p->capacity_weighted_ns <= w + 1000,
             "weighted %llu, expected %llu", (unsigned long long)p->capacity_weighted_ns,
             (unsigned long long)w);
}

static void test_fake_biglittle(void **state) {
  (void)state;
  int ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
  char root[512], cmd[600];
  if (ncpu < 2) {
    printf("fake big.LITTLE: needs 2 CPUs, part skipped\n");
    skip();
  }
  snprintf(root, sizeof root, "%s/erg-split-cpu.%d", TEST_DIR, (int)getpid());
  fake_sysfs(root, ncpu);
  pid_t little = busy_child(0), big = busy_child(ncpu - 1);
  struct erg_agent *a = agent_open(root);
  const Erg__Hello *h = erg_agent_hello(a);
  erg_assert(has_feature(h, "freq") && has_feature(h, "capacity"), "hello lists freq, capacity");
  char *json = NULL;
  Erg__Envelope *env = sample_roundtrip(a, &json);
  const Erg__Proc *pl = find_proc(env->sample, little), *pb = find_proc(env->sample, big);
  erg_assert(pl && pb, "both children in the sample");
  printf("fake big.LITTLE: little %.1f ms (weighted %.1f), big %.1f ms (weighted %.1f)\n",
         pl->cpu_ns / 1e6, pl->capacity_weighted_ns / 1e6, pb->cpu_ns / 1e6,
         pb->capacity_weighted_ns / 1e6);
  check_split(pl, 446, 1416000);
  check_split(pb, 1024, 1800000);
  erg_assert(strstr(json, "{\"capacity\":446,") && strstr(json, "\"capacity_weighted_ns\":") &&
                 strstr(json, "{\"khz\":1416000,"),
             "dump shows the split");
  free(json);
  erg_wire_free(env);
  erg_agent_close(a);
  open_agent = NULL;
  kill(little, SIGKILL);
  kill(big, SIGKILL);
  waitpid(little, NULL, 0);
  waitpid(big, NULL, 0);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0)
    fprintf(stderr, "warning: could not remove %s\n", root);
}

static int case_teardown(void **state) {
  erg_kill_children(state);
  if (open_agent)
    erg_agent_close(open_agent);
  open_agent = NULL;
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_real_sysfs, case_teardown),
      cmocka_unit_test_teardown(test_fake_biglittle, case_teardown),
  };
#if !ERG_HAVE_BPF
  erg_skip_all("built without BPF support");
#endif
  if (geteuid() != 0 || access("/sys/kernel/btf/vmlinux", R_OK) != 0)
    erg_skip_all("needs root and kernel BTF");
  return cmocka_run_group_tests(tests, NULL, NULL);
}

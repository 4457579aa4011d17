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
 * Exit 77 when not root, without BTF, or built without BPF. */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "erg_agent.h"
#include "erg_bpf.h"

#define CHECK(c, ...)                                                              \
  do {                                                                             \
    if (!(c)) {                                                                    \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #c);                 \
      fprintf(stderr, __VA_ARGS__);                                                \
      fputc('\n', stderr);                                                         \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

static pid_t busy_child(int cpu) {
  pid_t pid = fork();
  CHECK(pid >= 0, "fork");
  if (pid == 0) {
    cpu_set_t set;
    volatile unsigned long x = 0;
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed CHECK exits the parent */
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
      _exit(1);
    for (;;)
      x++;
  }
  return pid;
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
  CHECK(erg_agent_sweep(a, &s) == 0, "baseline sweep");
  usleep(600000);
  CHECK(erg_agent_sweep(a, &s) == 1 && s, "second sweep");
  *json = erg_agent_sample_json(s, erg_agent_hello(a));
  Erg__Envelope env = ERG__ENVELOPE__INIT;
  env.version = ERG_WIRE_VERSION;
  env.body_case = ERG__ENVELOPE__BODY_SAMPLE;
  env.sample = (Erg__Sample *)s;
  uint8_t *buf = NULL;
  size_t len = erg_wire_pack(&env, &buf);
  CHECK(len > 0, "pack");
  const char *why = NULL;
  Erg__Envelope *back = erg_wire_unpack(buf, len, &why);
  free(buf);
  CHECK(back && back->body_case == ERG__ENVELOPE__BODY_SAMPLE, "unpack: %s", why ? why : "?");
  return back;
}

static const Erg__Proc *find_proc(const Erg__Sample *s, pid_t pid) {
  for (size_t i = 0; i < s->n_procs; i++)
    if (s->procs[i]->pid == (uint32_t)pid)
      return s->procs[i];
  return NULL;
}

static struct erg_agent *agent_open(const char *sysfs_root) {
  struct erg_agent_config cfg;
  struct erg_agent *a;
  char why[512];
  erg_agent_config_defaults(&cfg);
  strcpy(cfg.collection, "bpf");
  if (sysfs_root)
    snprintf(cfg.sysfs_cpu_root, sizeof cfg.sysfs_cpu_root, "%s", sysfs_root);
  CHECK(erg_agent_open(&a, &cfg, why, sizeof why) == 0, "open: %s", why);
  return a;
}

static void test_real_sysfs(void) {
  uint32_t v[1024], cls[ERG_BPF_MAX_CAP];
  int nf = erg_bpf_read_frequencies("/sys/devices/system/cpu", v, 1024);
  int nc = erg_bpf_read_capacities("/sys/devices/system/cpu", v, 1024);
  int ncls = nc > 0 ? erg_bpf_capacity_group(v, nc, cls, ERG_BPF_MAX_CAP) : 0;
  int want_freq = nf > 0, want_cap = ncls >= 2;
  pid_t child = busy_child(0);
  struct erg_agent *a = agent_open(NULL);
  const Erg__Hello *h = erg_agent_hello(a);
  char *json = NULL;
  Erg__Envelope *env = sample_roundtrip(a, &json);
  const Erg__Sample *s = env->sample;
  printf("real sysfs: freq %s, capacity %s (%d classes); %zu procs\n",
         want_freq ? "present" : "absent", want_cap ? "present" : "absent", ncls, s->n_procs);
  CHECK(has_feature(h, "freq") == want_freq, "hello freq feature");
  CHECK(has_feature(h, "capacity") == want_cap, "hello capacity feature");
  CHECK(find_proc(s, child) != NULL, "busy child in the sample");
  for (size_t i = 0; i < s->n_procs; i++) {
    const Erg__Proc *p = s->procs[i];
    if (!want_freq)
      CHECK(p->n_freq == 0, "pid %u has %zu freq entries", p->pid, p->n_freq);
    if (!want_cap)
      CHECK(p->n_capacity == 0 && p->capacity_weighted_ns == 0, "pid %u capacity", p->pid);
  }
  if (!want_cap)
    CHECK(!strstr(json, "capacity_weighted_ns") && strstr(json, "\"capacity\":[]"),
          "dump shows no capacity");
  if (!want_freq)
    CHECK(!strstr(json, "\"khz\""), "dump shows no frequency");
  free(json);
  erg_wire_free(env);
  erg_agent_close(a);
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
}

static void fake_sysfs(const char *root, int ncpu) {
  char path[1024], buf[32];
  for (int i = 0; i < ncpu; i++) {
    int big = i >= ncpu / 2;
    snprintf(path, sizeof path, "%s/cpu%d/cpufreq", root, i);
    CHECK(erg_mkdir_p(path, 0755) == 0, "mkdir %s", path);
    snprintf(path, sizeof path, "%s/cpu%d/cpu_capacity", root, i);
    snprintf(buf, sizeof buf, "%d\n", big ? 1024 : 446);
    CHECK(erg_write_file_atomic(path, buf, strlen(buf)) == 0, "write %s", path);
    snprintf(path, sizeof path, "%s/cpu%d/cpufreq/scaling_cur_freq", root, i);
    snprintf(buf, sizeof buf, "%d\n", big ? 1800000 : 1416000);
    CHECK(erg_write_file_atomic(path, buf, strlen(buf)) == 0, "write %s", path);
  }
}

/* All of p's time on one core type: one capacity and one frequency entry,
 * each equal to cpu_ns (the kernel and the drain charge the same slices). */
static void check_split(const Erg__Proc *p, uint32_t capacity, uint32_t khz) {
  CHECK(p->cpu_ns > 20000000ull, "pid %u ran only %llu ns", p->pid,
        (unsigned long long)p->cpu_ns);
  CHECK(p->n_capacity == 1 && p->capacity[0]->capacity == capacity,
        "pid %u: %zu capacity entries, first %u", p->pid, p->n_capacity,
        p->n_capacity ? p->capacity[0]->capacity : 0);
  CHECK(p->capacity[0]->cpu_ns == p->cpu_ns, "capacity time %llu vs cpu %llu",
        (unsigned long long)p->capacity[0]->cpu_ns, (unsigned long long)p->cpu_ns);
  CHECK(p->n_freq == 1 && p->freq[0]->khz == khz, "pid %u: %zu freq entries, first %u", p->pid,
        p->n_freq, p->n_freq ? p->freq[0]->khz : 0);
  CHECK(p->freq[0]->cpu_ns == p->cpu_ns, "freq time %llu vs cpu %llu",
        (unsigned long long)p->freq[0]->cpu_ns, (unsigned long long)p->cpu_ns);
  uint64_t w = p->cpu_ns * capacity / 1024;
  CHECK(p->capacity_weighted_ns + 1000 >= w && p->capacity_weighted_ns <= w + 1000,
        "weighted %llu, expected %llu", (unsigned long long)p->capacity_weighted_ns,
        (unsigned long long)w);
}

static void test_fake_biglittle(void) {
  int ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
  char root[512], cmd[600];
  if (ncpu < 2) {
    printf("fake big.LITTLE: needs 2 CPUs, part skipped\n");
    return;
  }
  snprintf(root, sizeof root, "%s/erg-split-cpu.%d", TEST_DIR, (int)getpid());
  fake_sysfs(root, ncpu);
  pid_t little = busy_child(0), big = busy_child(ncpu - 1);
  struct erg_agent *a = agent_open(root);
  const Erg__Hello *h = erg_agent_hello(a);
  CHECK(has_feature(h, "freq") && has_feature(h, "capacity"), "hello lists freq, capacity");
  char *json = NULL;
  Erg__Envelope *env = sample_roundtrip(a, &json);
  const Erg__Proc *pl = find_proc(env->sample, little), *pb = find_proc(env->sample, big);
  CHECK(pl && pb, "both children in the sample");
  printf("fake big.LITTLE: little %.1f ms (weighted %.1f), big %.1f ms (weighted %.1f)\n",
         pl->cpu_ns / 1e6, pl->capacity_weighted_ns / 1e6, pb->cpu_ns / 1e6,
         pb->capacity_weighted_ns / 1e6);
  check_split(pl, 446, 1416000);
  check_split(pb, 1024, 1800000);
  CHECK(strstr(json, "{\"capacity\":446,") && strstr(json, "\"capacity_weighted_ns\":") &&
            strstr(json, "{\"khz\":1416000,"),
        "dump shows the split");
  free(json);
  erg_wire_free(env);
  erg_agent_close(a);
  kill(little, SIGKILL);
  kill(big, SIGKILL);
  waitpid(little, NULL, 0);
  waitpid(big, NULL, 0);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0)
    fprintf(stderr, "warning: could not remove %s\n", root);
}

int main(void) {
#if !ERG_HAVE_BPF
  printf("SKIP: built without BPF support\n");
  return 77;
#endif
  if (geteuid() != 0 || access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
    printf("SKIP: needs root and kernel BTF\n");
    return 77;
  }
  test_real_sysfs();
  test_fake_biglittle();
  printf("ok\n");
  return 0;
}

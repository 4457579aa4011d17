// SPDX-License-Identifier: GPL-3.0-or-later
/* Real BPF: this process's own CPU time against getrusage, hardware counter
 * availability against perf_event_open, block I/O bytes of an O_DIRECT write
 * (one collector, opened by the first group's setup), and the
 * capacity/frequency split with a fake big.LITTLE sysfs tree (a second
 * group, its own collector, after the first is closed). */
#include <fcntl.h>
#include <sched.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "bpf_test.h"
#include "erg_common.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif

struct self_rec {
  pid_t pid;
  int found;
  struct erg_bpf_proc p;
};

static void find_self(const struct erg_bpf_proc *p, void *user) {
  struct self_rec *s = user;

  if (p->pid == (uint32_t)s->pid && !p->exited) {
    s->found++;
    s->p = *p;
  }
}

static struct erg_bpf_proc drain_self(struct erg_bpf *b) {
  struct self_rec s = {.pid = getpid()};
  char why[256];

  erg_assert(erg_bpf_drain(b, find_self, &s, why, sizeof(why)) > 0, "drain: %s", why);
  erg_assert(s.found == 1, "own record found %d times", s.found);
  return s.p;
}

static uint64_t rusage_self_ns(void) {
  struct rusage ru;

  getrusage(RUSAGE_SELF, &ru);
  return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
         ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

static void test_cpu_time(void **state) {
  struct erg_bpf *b = *state;
  struct erg_bpf_proc p0, p1;
  uint64_t r0, r1, dbpf, dru;
  unsigned long long clk_tck = (unsigned long long)sysconf(_SC_CLK_TCK);
  char path[64], stat[1024];
  unsigned long long starttime = 0;

  usleep(20000); /* a first switch-out/in after attach: see docs/bpf.md */
  p0 = drain_self(b);
  r0 = rusage_self_ns();
  test_burn_ns(200000000ull);
  r1 = rusage_self_ns();
  /* Switched out, the burn is charged from sum_exec_runtime; while it runs
   * the drain's in-flight part depends on this CPU having seen its
   * switch-in, and a missed one (docs/bpf.md "Unseen switches", seen 1 run
   * in ~25 here) gave 23 of 200 ms. In-flight time: test_bpf_inflight. */
  usleep(2000);
  p1 = drain_self(b);
  dbpf = p1.cpu_ns - p0.cpu_ns;
  dru = r1 - r0;
  printf("cpu: bpf %.1f ms, getrusage %.1f ms (%.2f%%)\n", dbpf / 1e6, dru / 1e6,
         100.0 * ((double)dbpf - (double)dru) / (double)dru);
  erg_assert(dbpf >= dru * 0.98 && dbpf <= dru * 1.02, "bpf %llu vs rusage %llu",
             (unsigned long long)dbpf, (unsigned long long)dru);
  erg_assert(p1.uid == getuid(), "uid %u", p1.uid);
  erg_assert(p1.cgroup_id != 0, "cgroup id");
  erg_assert(p1.comm[0] != '\0', "comm");

  /* /proc starttime (clock ticks since boot) is start_time_ns in ticks. */
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)getpid());
  erg_assert(erg_read_file(path, stat, sizeof(stat)) > 0, "read %s", path);
  {
    const char *q = strrchr(stat, ')');
    erg_assert(q && sscanf(q + 2,
                           "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
                           "%*d %*d %*d %*d %llu",
                           &starttime) == 1,
               "parse stat");
  }
  erg_assert(p1.start_time_ns / (1000000000ull / clk_tck) == starttime,
             "start %llu ns vs /proc starttime %llu ticks", (unsigned long long)p1.start_time_ns,
             starttime);
}

static int perf_try(void) {
  struct perf_event_attr a;
  int fd;

  memset(&a, 0, sizeof(a));
  a.type = PERF_TYPE_HARDWARE;
  a.size = sizeof(a);
  a.config = PERF_COUNT_HW_CPU_CYCLES;
  fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, 0);
  if (fd >= 0)
    close(fd);
  return fd >= 0;
}

static void test_features(void **state) {
  struct erg_bpf *b = *state;
  unsigned f = erg_bpf_features(b);
  unsigned hw = ERG_BPF_F_CYCLES | ERG_BPF_F_INSTRUCTIONS | ERG_BPF_F_LLC_MISSES;
  int pmu = perf_try();

  printf("features:");
  for (unsigned bit = 1; bit & ERG_BPF_F_ALL; bit <<= 1)
    if (f & bit)
      printf(" %s", erg_bpf_feature_name(bit));
    else
      printf(" -%s(%s)", erg_bpf_feature_name(bit), erg_bpf_feature_reason(b, bit));
  printf("\nperf_event_open(cycles): %s\n", pmu ? "works" : "fails");
  erg_assert(f & ERG_BPF_F_CPU_TIME, "cpu time always");
  erg_assert(f & ERG_BPF_F_WAKEUPS, "wakeups");
  if (!pmu) {
    erg_assert(!(f & ERG_BPF_F_CYCLES), "no PMU, no cycles feature");
    const char *why = erg_bpf_feature_reason(b, ERG_BPF_F_CYCLES);
    /* The kernel's own errno, not a guess at the cause. */
    erg_assert(why && strstr(why, "perf_event_open on CPU ") && !strstr(why, "Success"),
               "reason with the errno: %s", why ? why : "(none)");
  } else {
    erg_assert(f & ERG_BPF_F_CYCLES, "PMU works, cycles feature expected");
  }
  if (!(f & hw)) {
    struct erg_bpf_proc p;
    usleep(20000); /* let this process switch out once so it has an entry */
    p = drain_self(b);
    erg_assert(p.cycles == 0 && p.instructions == 0 && p.llc_misses == 0, "no counts");
  }
}

/* O_DIRECT writes are submitted by the writing task; the file must live on a
 * real block device (not tmpfs/overlay). */
static void test_blkio(void **state) {
  struct erg_bpf *b = *state;
  const char *dir = TEST_BLOCK_DIR;
  const size_t chunk = 1 << 20, total = 16u << 20;
  struct erg_bpf_proc p0, p1;
  char path[512];
  struct statfs sf;
  void *buf;
  int fd;

  erg_assert(statfs(dir, &sf) == 0, "statfs %s", dir);
  if (sf.f_type == TMPFS_MAGIC || sf.f_type == OVERLAYFS_SUPER_MAGIC) {
    printf("blkio: %s is not on a block device, part skipped\n", dir);
    skip();
  }
  snprintf(path, sizeof(path), "%s/erg-bpf-blkio.%d", dir, (int)getpid());
  fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_DIRECT, 0600);
  erg_assert(fd >= 0, "open %s O_DIRECT", path);
  erg_assert(posix_memalign(&buf, 4096, chunk) == 0, "memalign");
  memset(buf, 0x5a, chunk);
  p0 = drain_self(b);
  for (size_t off = 0; off < total; off += chunk)
    erg_assert(write(fd, buf, chunk) == (ssize_t)chunk, "write");
  erg_assert(fsync(fd) == 0, "fsync");
  p1 = drain_self(b);
  close(fd);
  unlink(path);
  free(buf);
  printf("blkio: wrote %zu MiB, bpf write_bytes +%.2f MiB, read_bytes +%.2f MiB\n", total >> 20,
         (p1.write_bytes - p0.write_bytes) / 1048576.0,
         (p1.read_bytes - p0.read_bytes) / 1048576.0);
  erg_assert(p1.write_bytes - p0.write_bytes >= total, "write bytes attributed");
}

/* big.LITTLE on this machine's real CPUs: first half little (446), second
 * half big (1024), with RK3399-like frequencies. */
static void fake_sysfs(const char *root, int ncpu) {
  char path[1024], buf[32];

  for (int i = 0; i < ncpu; i++) {
    int big = i >= ncpu / 2;
    snprintf(path, sizeof(path), "%s/cpu%d/cpufreq", root, i);
    erg_assert(erg_mkdir_p(path, 0755) == 0, "mkdir");
    snprintf(path, sizeof(path), "%s/cpu%d/cpu_capacity", root, i);
    snprintf(buf, sizeof(buf), "%d\n", big ? 1024 : 446);
    erg_assert(erg_write_file_atomic(path, buf, strlen(buf)) == 0, "write");
    snprintf(path, sizeof(path), "%s/cpu%d/cpufreq/scaling_cur_freq", root, i);
    snprintf(buf, sizeof(buf), "%d\n", big ? 1800000 : 1416000);
    erg_assert(erg_write_file_atomic(path, buf, strlen(buf)) == 0, "write");
  }
}

static void pin_cpu(int cpu) {
  cpu_set_t set;
  int n = (int)sysconf(_SC_NPROCESSORS_CONF);

  CPU_ZERO(&set);
  for (int i = 0; i < n; i++)
    if (cpu < 0 || i == cpu)
      CPU_SET(i, &set);
  erg_assert(sched_setaffinity(0, sizeof(set), &set) == 0, "affinity %d", cpu);
  usleep(1000); /* migrate now */
}

static void test_fake_biglittle(void **state) {
  const char *dir = TEST_BLOCK_DIR;
  /* This part runs on libbpf's loader (the fallback), the rest of the test
   * and test_agent_split on the light skeleton. */
  struct erg_bpf_opts o = {.disable_perf = true, .libbpf_loader = true};
  struct erg_bpf_proc p;
  uint64_t capsum = 0, freqsum = 0;
  uint32_t cls[ERG_BPF_MAX_CAP];
  char root[512], cmd[600];
  int ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
  struct erg_bpf *b;

  (void)state;
  if (ncpu < 2) {
    printf("biglittle: needs 2 CPUs, part skipped\n");
    skip();
  }
  snprintf(root, sizeof(root), "%s/erg-fake-cpu.%d", dir, (int)getpid());
  fake_sysfs(root, ncpu);
  o.sysfs_cpu_root = root;
  b = test_bpf_open(&o);
  erg_assert(!strcmp(erg_bpf_loader(b), "libbpf"), "loader %s", erg_bpf_loader(b));
  erg_assert(erg_bpf_features(b) & ERG_BPF_F_CAPACITY, "capacity: %s",
             erg_bpf_feature_reason(b, ERG_BPF_F_CAPACITY));
  erg_assert(erg_bpf_features(b) & ERG_BPF_F_FREQ, "freq: %s",
             erg_bpf_feature_reason(b, ERG_BPF_F_FREQ));
  erg_assert(!(erg_bpf_features(b) & ERG_BPF_F_CYCLES), "perf disabled");
  erg_assert(erg_bpf_capacity_classes(b, cls) == 2 && cls[0] == 446 && cls[1] == 1024, "classes");
  usleep(20000);
  /* Half the burn on a little CPU, half on a big one. */
  pin_cpu(0);
  test_burn_ns(50000000ull);
  pin_cpu(ncpu - 1);
  test_burn_ns(50000000ull);
  pin_cpu(-1);
  p = drain_self(b);
  for (int i = 0; i < ERG_BPF_MAX_CAP; i++)
    capsum += p.cap_ns[i];
  for (uint32_t i = 0; i < p.nfreq; i++) {
    erg_assert(p.freq[i].khz == 1416000 || p.freq[i].khz == 1800000, "khz %u", p.freq[i].khz);
    freqsum += p.freq[i].cpu_ns;
  }
  printf("biglittle: cpu %.1f ms, little %.1f ms, big %.1f ms, weighted %.1f ms, "
         "%u freqs sum %.1f ms\n",
         p.cpu_ns / 1e6, p.cap_ns[0] / 1e6, p.cap_ns[1] / 1e6, p.capacity_weighted_ns / 1e6,
         p.nfreq, freqsum / 1e6);
  erg_assert(p.cpu_ns >= 100000000ull, "burned");
  erg_assert(p.cap_ns[0] >= 45000000ull && p.cap_ns[1] >= 45000000ull, "both classes charged");
  erg_assert(p.nfreq == 2, "two frequencies");
  erg_assert(capsum + 1000000 >= p.cpu_ns && capsum <= p.cpu_ns + 1000000, "capacity split sums");
  erg_assert(freqsum + p.freq_other_ns + 1000000 >= p.cpu_ns, "frequency split sums");
  erg_assert(p.capacity_weighted_ns >= p.cpu_ns * 446 / 1024 - 1000000 &&
                 p.capacity_weighted_ns <= p.cpu_ns,
             "weighted within bounds");
  erg_bpf_close(b);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
  if (system(cmd) != 0)
    fprintf(stderr, "warning: could not remove %s\n", root);
}

/* A "name : value" or "name: value" line of a /proc file; -1 if absent. */
static long long proc_field(pid_t pid, const char *file, const char *name) {
  char path[64], buf[8192];
  const char *q;

  snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
  if (erg_read_file(path, buf, sizeof(buf)) <= 0 || !(q = strstr(buf, name)))
    return -1;
  q = strchr(q, ':');
  return q ? strtoll(q + 1, NULL, 10) : -1;
}

static struct erg_bpf_proc drain_pid(struct erg_bpf *b, pid_t pid) {
  struct self_rec s = {.pid = pid};
  char why[256];

  erg_assert(erg_bpf_drain(b, find_self, &s, why, sizeof(why)) > 0, "drain: %s", why);
  erg_assert(s.found == 1, "record of %d found %d times", (int)pid, s.found);
  return s.p;
}

/* Wakeups are the group's voluntary switch-outs (sleeps), counted at
 * switch-out, migrations its threads' CPU changes (sched_migrate_task): a
 * child started after the attach is preempted by a hog on its CPU for 60 ms,
 * sleeps 200 times and is moved between two CPUs 20 times, then blocks; its counts must be the
 * kernel's own (voluntary_ctxt_switches in /proc/PID/status, se.nr_migrations in /proc/PID/sched).
 */
static void test_sched_counts(void **state) {
  struct erg_bpf *b = *state;
  long long vol, mig;
  int ready[2], hold[2];
  struct erg_bpf_proc p;
  char c, path[64], buf[512];
  pid_t pid;

  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
    printf("sched counts: needs 2 CPUs, part skipped\n");
    skip();
  }
  erg_assert(pipe(ready) == 0 && pipe(hold) == 0, "pipe");
  pid = fork();
  erg_assert(pid >= 0, "fork");
  if (pid == 0) {
    /* Preempted first: a hog shares its CPU (preemptions are not sleeps). */
    pid_t hog = fork();
    if (hog == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      pin_cpu(0);
      test_burn_ns(2000000000ull); /* killed long before */
      _exit(0);
    }
    pin_cpu(0);
    test_burn_ns(60000000ull);
    kill(hog, SIGKILL);
    waitpid(hog, NULL, 0);
    for (int i = 0; i < 200; i++)
      usleep(300);
    for (int i = 0; i < 20; i++)
      pin_cpu(i % 2);
    if (write(ready[1], "r", 1) != 1 || read(hold[0], &c, 1) < 0)
      _exit(1);
    _exit(0);
  }
  erg_test_child(pid);
  erg_assert(read(ready[0], &c, 1) == 1, "child ready");
  /* Until it sleeps in read(): that switch-out is counted too. */
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  for (int i = 0; i < 200; i++) {
    const char *q;

    if (erg_read_file(path, buf, sizeof(buf)) > 0 && (q = strrchr(buf, ')')) && q[2] == 'S')
      break;
    usleep(1000);
  }
  usleep(20000);
  p = drain_pid(b, pid);
  vol = proc_field(pid, "status", "voluntary_ctxt_switches");
  mig = proc_field(pid, "sched", "se.nr_migrations");
  long long invol = proc_field(pid, "status", "nonvoluntary_ctxt_switches");
  printf("sched counts: wakeups %llu (voluntary_ctxt_switches %lld, nonvoluntary %lld), "
         "migrations %llu (se.nr_migrations %lld)\n",
         (unsigned long long)p.wakeups, vol, invol, (unsigned long long)p.migrations, mig);
  erg_assert(vol >= 200, "voluntary switches %lld", vol);
  /* The signal-aborted sleep (nvcsw counted, state running again) is rare. */
  erg_assert(p.wakeups <= (unsigned long long)vol && p.wakeups + 2 >= (unsigned long long)vol,
             "wakeups %llu vs %lld", (unsigned long long)p.wakeups, vol);
  erg_assert(p.migrations >= 19, "migrations %llu", (unsigned long long)p.migrations);
  if (mig >= 0)
    erg_assert(p.migrations == (unsigned long long)mig, "migrations %llu vs %lld",
               (unsigned long long)p.migrations, mig);
  erg_assert(write(hold[1], "x", 1) == 1, "release child");
  erg_assert(waitpid(pid, NULL, 0) == pid, "reap");
  close(ready[0]), close(ready[1]), close(hold[0]), close(hold[1]);
}

/* The light skeleton needs in-kernel CO-RE (5.17); older kernels must get
 * libbpf's loader instead of failing. */
static void test_loader(void **state) {
  struct erg_bpf *b = *state;
  struct utsname u;
  int major = 0, minor = 0;

  erg_assert(uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2, "uname");
  printf("loader: %s (kernel %d.%d)\n", erg_bpf_loader(b), major, minor);
  if (major > 5 || (major == 5 && minor >= 17))
    erg_assert(!strcmp(erg_bpf_loader(b), "light"), "kernel %d.%d: light skeleton expected", major,
               minor);
}

/* Each group's kthread flag against the kernel's PF_KTHREAD in
 * /proc/PID/stat (the same process: its start time agrees), for the groups
 * still alive at the drain: kernel threads (rcu, ksoftirqd, kworkers run
 * every few ms) and user processes (this one) both seen, none wrong. */
struct kthread_check {
  int kthreads, users, wrong;
  unsigned long long clk_tck;
};

static void check_kthread(const struct erg_bpf_proc *p, void *user) {
  struct kthread_check *k = user;
  char path[64], stat[1024];
  unsigned flags;
  unsigned long long start;

  if (p->exited)
    return;
  snprintf(path, sizeof(path), "/proc/%u/stat", p->pid);
  if (erg_read_file(path, stat, sizeof(stat)) <= 0)
    return;
  const char *q = strrchr(stat, ')');
  if (!q ||
      sscanf(q + 2,
             "%*c %*d %*d %*d %*d %*d %u %*u %*u %*u %*u %*u %*u %*d %*d "
             "%*d %*d %*d %*d %llu",
             &flags, &start) != 2 ||
      p->start_time_ns / (1000000000ull / k->clk_tck) != start)
    return;
  bool kthread = (flags & 0x00200000) != 0; /* PF_KTHREAD */
  k->kthreads += kthread;
  k->users += !kthread;
  if (kthread != p->kthread) {
    k->wrong++;
    printf("pid %u (%s): kthread %d, flag %d\n", p->pid, p->comm, kthread, p->kthread);
  }
}

static void test_kthread(void **state) {
  struct erg_bpf *b = *state;
  struct kthread_check k = {.clk_tck = (unsigned long long)sysconf(_SC_CLK_TCK)};
  char why[256];

  for (int i = 0; i < 20 && (k.kthreads == 0 || k.users == 0); i++) {
    usleep(100000);
    k.kthreads = k.users = 0;
    erg_assert(erg_bpf_drain(b, check_kthread, &k, why, sizeof(why)) > 0, "drain: %s", why);
    erg_assert(k.wrong == 0, "%d groups with the wrong kthread flag", k.wrong);
  }
  printf("kernel threads %d, user processes %d\n", k.kthreads, k.users);
  erg_assert(k.kthreads > 0 && k.users > 0, "kernel threads %d, user processes %d", k.kthreads,
             k.users);
}

static int open_collector(void **state) {
  *state = test_bpf_open(NULL);
  return 0;
}

static int close_collector(void **state) {
  if (*state)
    erg_bpf_close(*state);
  *state = NULL;
  return 0;
}

int main(void) {
  const struct CMUnitTest own[] = {
      cmocka_unit_test(test_loader),
      cmocka_unit_test(test_features),
      cmocka_unit_test(test_cpu_time),
      cmocka_unit_test(test_blkio),
      cmocka_unit_test(test_kthread),
      cmocka_unit_test_teardown(test_sched_counts, erg_kill_children),
  };
  const struct CMUnitTest fake[] = {
      cmocka_unit_test(test_fake_biglittle),
  };
  int failed;

  test_bpf_require();
  failed = cmocka_run_group_tests_name("own process", own, open_collector, close_collector);
  failed += cmocka_run_group_tests_name("fake big.LITTLE", fake, NULL, NULL);
  return failed;
}

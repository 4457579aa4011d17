// SPDX-License-Identifier: GPL-3.0-or-later
/* /proc parsers against recorded and hostile contents. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "erg_agent.h"

static void load(const char *name, char *buf, size_t len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", FIXTURES, name);
  assert_true(erg_read_file(path, buf, len) > 0);
}

static void test_stat_evil_comm(void **state) {
  (void)state;
  char buf[1024];
  load("stat_evil", buf, sizeof buf);
  struct erg_proc_stat st;
  assert_int_equal(erg_proc_parse_stat(buf, &st), 0);
  assert_int_equal(st.pid, 1234);
  assert_string_equal(st.comm, "my (evil) comm");
  assert_int_equal(st.state, 'S');
  assert_int_equal(st.utime_ticks, 250);
  assert_int_equal(st.stime_ticks, 75);
  assert_int_equal(st.starttime_ticks, 98765);
}

static void test_stat_truncated(void **state) {
  (void)state;
  struct erg_proc_stat st;
  assert_int_equal(erg_proc_parse_stat("12 (x) S 1 2 3", &st), -1);
  assert_int_equal(erg_proc_parse_stat("garbage", &st), -1);
  assert_int_equal(erg_proc_parse_stat("", &st), -1);
}

static void test_stat_self(void **state) {
  (void)state;
  char buf[1024];
  assert_true(erg_read_file("/proc/self/stat", buf, sizeof buf) > 0);
  struct erg_proc_stat st;
  assert_int_equal(erg_proc_parse_stat(buf, &st), 0);
  assert_int_equal(st.pid, (uint32_t)getpid());
  assert_true(st.starttime_ticks > 0);
}

static void test_status_and_io(void **state) {
  (void)state;
  char buf[2048];
  load("status", buf, sizeof buf);
  struct erg_proc_status s;
  assert_int_equal(erg_proc_parse_status(buf, &s), 0);
  assert_int_equal(s.uid, 1000);
  assert_int_equal(s.rss_anon_bytes, 4096 * 1024);
  assert_int_equal(s.rss_file_bytes, 1024 * 1024);
  assert_int_equal(s.rss_shmem_bytes, 0);
  assert_int_equal(erg_proc_parse_status("Uid:\t5\t5\t5\t5\nRssShmem:\t   12 kB\n", &s), 0);
  assert_int_equal(s.rss_shmem_bytes, 12 * 1024);
  struct erg_proc_statm m;
  assert_int_equal(erg_proc_parse_statm("2975 450 389 7 0 159 0\n", &m), 0);
  assert_int_equal(m.resident_pages, 450);
  assert_int_equal(m.shared_pages, 389);
  assert_int_equal(erg_proc_parse_statm("2975 450\n", &m), -1);
  assert_int_equal(erg_proc_parse_statm("1 2 3 0 0 0 0\n", &m), -1); /* shared > resident */
  load("io", buf, sizeof buf);
  struct erg_proc_io io;
  assert_int_equal(erg_proc_parse_io(buf, &io), 0);
  assert_int_equal(io.read_bytes, 4096);
  assert_int_equal(io.write_bytes, 1048576);
}

static void test_cpu_totals(void **state) {
  (void)state;
  char buf[1024];
  load("proc_stat", buf, sizeof buf);
  struct erg_cpu_totals t;
  assert_int_equal(erg_proc_parse_cpu_totals(buf, &t), 0);
  assert_int_equal(t.busy_ticks, 1000 + 20 + 300 + 5 + 6 + 7);
  assert_int_equal(t.idle_ticks, 5000 + 40);
  assert_int_equal(t.ncpu, 2);
}

static void test_cgroup(void **state) {
  (void)state;
  char out[256];
  assert_int_equal(erg_proc_parse_cgroup("0::/system.slice/ssh.service\n", out, sizeof out), 0);
  assert_string_equal(out, "/system.slice/ssh.service");
  const char *v1 = "12:pids:/x\n4:cpu,cpuacct:/slurm/uid_1000/job_77/step_0\n1:name=systemd:/y\n";
  assert_int_equal(erg_proc_parse_cgroup(v1, out, sizeof out), 0);
  assert_string_equal(out, "/slurm/uid_1000/job_77/step_0");
  assert_int_equal(erg_proc_parse_cgroup("3:memory:/m\n", out, sizeof out), -1);
}

static void test_group_keys(void **state) {
  (void)state;
  struct erg_group_keys k;
  erg_group_keys_derive("/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0", &k);
  assert_string_equal(k.job, "1234");
  assert_string_equal(k.unit, "slurmstepd.scope");
  erg_group_keys_derive("/slurm/uid_1000/job_77/step_batch", &k);
  assert_string_equal(k.job, "77");
  const char *id = "4f1c2a9e0b7d6c5a4f1c2a9e0b7d6c5a4f1c2a9e0b7d6c5a4f1c2a9e0b7d6c5a";
  char path[256];
  snprintf(path, sizeof path, "/system.slice/docker-%s.scope", id);
  erg_group_keys_derive(path, &k);
  assert_string_equal(k.container, id);
  assert_string_equal(k.job, "");
  snprintf(path, sizeof path,
           "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/"
           "cri-containerd-%s.scope",
           id);
  erg_group_keys_derive(path, &k);
  assert_string_equal(k.container, id);
  erg_group_keys_derive("/user.slice/user-1000.slice/session-3.scope", &k);
  assert_string_equal(k.unit, "session-3.scope");
  assert_string_equal(k.container, "");
  erg_group_keys_derive("/job_x12/../job_", &k);
  assert_string_equal(k.job, "");
}

/* Recorded /proc/PID/cgroup of processes in Slurm jobs, containers and pods
 * (ids shortened to one repeated 64-hex id). Keys must come from whichever
 * hierarchy carries them: on hybrid hosts the v2 path alone has no job. */
#define CID "4f1c2a9e0b7d6c5a4f1c2a9e0b7d6c5a4f1c2a9e0b7d6c5a4f1c2a9e0b7d6c5a"
static const struct {
  const char *name, *file, *path, *job, *unit, *container;
} cgroup_cases[] = {
    {"slurm v1 (CentOS 7, task/cgroup)",
     "11:devices:/slurm/uid_1000/job_4242/step_0/task_0\n"
     "10:freezer:/slurm/uid_1000/job_4242/step_0\n"
     "9:memory:/slurm/uid_1000/job_4242/step_0/task_0\n"
     "8:cpuset:/slurm/uid_1000/job_4242/step_0\n"
     "7:cpu,cpuacct:/slurm/uid_1000/job_4242/step_0/task_0\n"
     "6:blkio:/system.slice/slurmd.service\n5:pids:/system.slice/slurmd.service\n"
     "4:net_cls,net_prio:/\n3:perf_event:/\n2:hugetlb:/\n"
     "1:name=systemd:/system.slice/slurmd.service\n",
     "/slurm/uid_1000/job_4242/step_0/task_0", "4242", "slurmd.service", ""},
    {"slurm hybrid (Debian 12, Slurm 22.05.8 cgroup/v1, slurmd -N erg1; tests/slurm)",
     "9:name=systemd:/\n8:pids:/\n7:blkio:/\n"
     "6:freezer:/slurm_erg1/uid_65534/job_772008/step_batch\n5:devices:/\n"
     "4:memory:/slurm_erg1/uid_65534/job_772008/step_batch/task_0\n"
     "3:cpuset:/slurm_erg1/uid_65534/job_772008/step_batch\n"
     "2:cpuacct:/slurm_erg1/uid_65534/job_772008/step_batch/task_0\n1:cpu:/\n"
     "0::/erg-slurm-27592\n",
     "/erg-slurm-27592", "772008", "", ""},
    {"slurm hybrid (Ubuntu 20.04, cgroup/v1 plugin)",
     "12:cpuset:/slurm/uid_1000/job_77/step_batch\n"
     "11:memory:/slurm/uid_1000/job_77/step_batch/task_0\n"
     "10:devices:/slurm/uid_1000/job_77/step_batch/task_0\n"
     "9:freezer:/slurm/uid_1000/job_77/step_batch\n"
     "4:cpu,cpuacct:/system.slice/slurmd.service\n"
     "1:name=systemd:/system.slice/slurmd.service\n0::/system.slice/slurmd.service\n",
     "/system.slice/slurmd.service", "77", "slurmd.service", ""},
    {"slurm v2 (cgroup/v2 plugin)",
     "0::/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0\n",
     "/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0", "1234", "slurmstepd.scope", ""},
    {"docker v1 (cgroupfs driver)",
     "12:memory:/docker/" CID "\n4:cpu,cpuacct:/docker/" CID "\n1:name=systemd:/docker/" CID "\n",
     "/docker/" CID, "", "", CID},
    {"docker hybrid (cgroupfs driver, unified from containerd)",
     "8:cpuset:/docker/" CID "\n4:cpu,cpuacct:/docker/" CID "\n1:name=systemd:/docker/" CID "\n"
     "0::/system.slice/containerd.service\n",
     "/system.slice/containerd.service", "", "containerd.service", CID},
    {"docker v2 (systemd driver)", "0::/system.slice/docker-" CID ".scope\n",
     "/system.slice/docker-" CID ".scope", "", "docker-" CID ".scope", CID},
    {"podman rootless v2",
     "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" CID ".scope/container\n",
     "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" CID ".scope/container", "",
     "libpod-" CID ".scope", CID},
    {"k8s v1 (cgroupfs driver)",
     "11:memory:/kubepods/burstable/pod0f3c2e0e-8f3b-4a9e-9d55-2b0b8b8d1f11/" CID "\n"
     "3:cpu,cpuacct:/kubepods/burstable/pod0f3c2e0e-8f3b-4a9e-9d55-2b0b8b8d1f11/" CID "\n"
     "1:name=systemd:/kubepods/burstable/pod0f3c2e0e-8f3b-4a9e-9d55-2b0b8b8d1f11/" CID "\n",
     "/kubepods/burstable/pod0f3c2e0e-8f3b-4a9e-9d55-2b0b8b8d1f11/" CID, "", "", CID},
    {"k8s v2 (systemd driver, containerd)",
     "0::/kubepods.slice/kubepods-burstable.slice/"
     "kubepods-burstable-pod0f3c2e0e_8f3b_4a9e_9d55_2b0b8b8d1f11.slice/cri-containerd-" CID
     ".scope\n",
     "/kubepods.slice/kubepods-burstable.slice/"
     "kubepods-burstable-pod0f3c2e0e_8f3b_4a9e_9d55_2b0b8b8d1f11.slice/cri-containerd-" CID
     ".scope",
     "", "cri-containerd-" CID ".scope", CID},
};

static void test_group_keys_from_proc(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cgroup_cases / sizeof cgroup_cases[0]; i++) {
    char path[512];
    struct erg_group_keys k;
    print_message("%s\n", cgroup_cases[i].name);
    assert_int_equal(erg_proc_parse_cgroup(cgroup_cases[i].file, path, sizeof path), 0);
    assert_string_equal(path, cgroup_cases[i].path);
    erg_group_keys_from_proc(cgroup_cases[i].file, &k);
    assert_string_equal(k.job, cgroup_cases[i].job);
    assert_string_equal(k.unit, cgroup_cases[i].unit);
    assert_string_equal(k.container, cgroup_cases[i].container);
  }
  /* The hybrid Slurm case is the one the reported path alone gets wrong. */
  struct erg_group_keys k;
  erg_group_keys_derive("/system.slice/slurmd.service", &k);
  assert_string_equal(k.job, "");
  erg_group_keys_from_proc("", &k);
  assert_string_equal(k.job, "");
  erg_group_keys_from_proc("garbage without colons\n0::/a/job_5\n", &k);
  assert_string_equal(k.job, "5");
}

static void test_netdev_meminfo(void **state) {
  (void)state;
  const char *nd = "Inter-|   Receive |  Transmit\n face |bytes packets\n"
                   "    lo: 500 5 0 0 0 0 0 0 500 5 0 0 0 0 0 0\n"
                   "  eth0: 1000 10 0 0 0 0 0 0 2000 20 0 0 0 0 0 0\n";
  uint64_t rx, tx;
  assert_int_equal(erg_proc_parse_netdev(nd, &rx, &tx), 0);
  assert_int_equal(rx, 1000);
  assert_int_equal(tx, 2000);
  uint64_t used;
  assert_int_equal(
      erg_proc_parse_meminfo("MemTotal: 1000 kB\nMemFree: 1 kB\nMemAvailable: 400 kB\n", &used), 0);
  assert_int_equal(used, 600 * 1024);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stat_evil_comm), cmocka_unit_test(test_stat_truncated),
      cmocka_unit_test(test_stat_self),      cmocka_unit_test(test_status_and_io),
      cmocka_unit_test(test_cpu_totals),     cmocka_unit_test(test_cgroup),
      cmocka_unit_test(test_group_keys),     cmocka_unit_test(test_group_keys_from_proc),
      cmocka_unit_test(test_netdev_meminfo)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

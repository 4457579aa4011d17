// SPDX-License-Identifier: GPL-3.0-or-later
/* Pure sysfs parsing: big.LITTLE capacity trees and cpufreq, no BPF. The
 * trees are written under one temporary folder (the group's setup). */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

#include "bpf_test.h"
#include "erg_common.h"

static char base[] = "/tmp/erg-bpf-sysfs-XXXXXX";

static void fake_cpu(const char *root, int cpu, uint32_t cap, uint32_t khz) {
  char path[512], buf[32];

  snprintf(path, sizeof(path), "%s/cpu%d/cpufreq", root, cpu);
  erg_assert(erg_mkdir_p(path, 0755) == 0, "mkdir %s", path);
  if (cap) {
    snprintf(path, sizeof(path), "%s/cpu%d/cpu_capacity", root, cpu);
    snprintf(buf, sizeof(buf), "%u\n", cap);
    erg_assert(erg_write_file_atomic(path, buf, strlen(buf)) == 0, "write %s", path);
  }
  if (khz) {
    snprintf(path, sizeof(path), "%s/cpu%d/cpufreq/scaling_cur_freq", root, cpu);
    snprintf(buf, sizeof(buf), "%u\n", khz);
    erg_assert(erg_write_file_atomic(path, buf, strlen(buf)) == 0, "write %s", path);
  }
}

/* Writes a tree like /sys/devices/system/cpu, with the siblings real trees
 * have (cpufreq/, cpuidle/, online, possible) that must be ignored. */
static void fake_tree(const char *root, const uint32_t *caps, int n) {
  char path[512];

  for (int i = 0; i < n; i++)
    fake_cpu(root, i, caps[i], caps[i] ? 600000u + caps[i] * 1000u : 0);
  erg_assert(snprintf(path, sizeof(path), "%s/cpufreq/policy0", root) < (int)sizeof(path),
             "path too long");
  erg_mkdir_p(path, 0755);
  erg_assert(snprintf(path, sizeof(path), "%s/cpuidle", root) < (int)sizeof(path), "path too long");
  erg_mkdir_p(path, 0755);
  erg_assert(snprintf(path, sizeof(path), "%s/possible", root) < (int)sizeof(path),
             "path too long");
  erg_write_file_atomic(path, "0-7\n", 4);
}

static void test_rk3399(void **state) {
  /* RK3399-like: 4 little (A53) + 2 big (A72) share the 1024 scale; here
   * 4x446 + 4x1024 as on an 8-core A53/A72 board. */
  const uint32_t caps[8] = {446, 446, 446, 446, 1024, 1024, 1024, 1024};
  uint32_t got[16], cls[4], khz[16];
  char root[512];

  (void)state;
  snprintf(root, sizeof(root), "%s/rk", base);
  fake_tree(root, caps, 8);
  erg_assert(erg_bpf_read_capacities(root, got, 16) == 8, "8 CPUs");
  for (int i = 0; i < 8; i++)
    erg_assert(got[i] == caps[i], "cpu%d capacity %u", i, got[i]);
  erg_assert(got[8] == 0, "no cpu8");
  erg_assert(erg_bpf_capacity_group(got, 8, cls, 4) == 2, "two classes");
  erg_assert(cls[0] == 446 && cls[1] == 1024, "classes %u %u", cls[0], cls[1]);
  erg_assert(erg_bpf_read_frequencies(root, khz, 16) == 8, "8 freqs");
  erg_assert(khz[0] == 1046000 && khz[7] == 1624000, "khz %u %u", khz[0], khz[7]);
  /* max smaller than the tree: only the first CPUs */
  erg_assert(erg_bpf_read_capacities(root, got, 2) == 2, "max 2");
}

static void test_three_classes(void **state) {
  /* Tensor/Exynos-like: 4x little, 2x mid, 2x big, one CPU offline-ish
   * without a file (capacity 0 is not a class). */
  const uint32_t caps[8] = {160, 160, 160, 160, 871, 871, 0, 1024};
  uint32_t got[8], cls[4];
  char root[512];

  (void)state;
  snprintf(root, sizeof(root), "%s/tensor", base);
  fake_tree(root, caps, 8);
  erg_assert(erg_bpf_read_capacities(root, got, 8) == 8, "8 CPUs");
  erg_assert(got[6] == 0, "cpu6 has no file");
  erg_assert(erg_bpf_capacity_group(got, 8, cls, 4) == 3, "three classes");
  erg_assert(cls[0] == 160 && cls[1] == 871 && cls[2] == 1024, "sorted");
  erg_assert(erg_bpf_capacity_group(got, 8, cls, 2) == -1, "too many for 2");
}

static void test_uniform_and_missing(void **state) {
  const uint32_t caps[2] = {1024, 1024};
  uint32_t got[4], cls[4];
  char root[512];

  (void)state;
  snprintf(root, sizeof(root), "%s/smp", base);
  fake_tree(root, caps, 2);
  erg_assert(erg_bpf_read_capacities(root, got, 4) == 2, "2 CPUs");
  erg_assert(erg_bpf_capacity_group(got, 2, cls, 4) == 1, "one class: no feature");
  snprintf(root, sizeof(root), "%s/empty", base);
  erg_assert(erg_mkdir_p(root, 0755) == 0, "mkdir");
  erg_assert(erg_bpf_read_capacities(root, got, 4) == 0, "no files");
  snprintf(root, sizeof(root), "%s/nonexistent", base);
  erg_assert(erg_bpf_read_capacities(root, got, 4) == -1, "no dir");
}

static void test_cpu_list(void **state) {
  bool m[16];

  (void)state;
  erg_assert(erg_bpf_parse_cpu_list("0-3,5,7-8\n", m, 16) == 7, "7 online");
  erg_assert(m[0] && m[3] && !m[4] && m[5] && !m[6] && m[7] && m[8] && !m[9], "mask");
  erg_assert(erg_bpf_parse_cpu_list("0", m, 16) == 1 && m[0] && !m[1], "one CPU");
  erg_assert(erg_bpf_parse_cpu_list("0,2,4,6\n", m, 16) == 4 && m[6] && !m[1], "SMT off");
  erg_assert(erg_bpf_parse_cpu_list("14-20", m, 16) == 2 && m[15], "clipped at max");
  erg_assert(erg_bpf_parse_cpu_list("\n", m, 16) == 0, "none");
  erg_assert(erg_bpf_parse_cpu_list("1-0", m, 16) == -1, "backwards range");
  erg_assert(erg_bpf_parse_cpu_list("0-", m, 16) == -1, "open range");
  erg_assert(erg_bpf_parse_cpu_list("0,", m, 16) == -1, "trailing comma");
  erg_assert(erg_bpf_parse_cpu_list("a", m, 16) == -1, "garbage");
  erg_assert(erg_bpf_parse_cpu_list("0;1", m, 16) == -1, "bad separator");
}

/* SMT off: cpu1 and cpu3 are offline; their stale files are not read. */
static void test_offline(void **state) {
  const uint32_t caps[4] = {512, 300, 1024, 1024};
  uint32_t got[4], khz[4], cls[4];
  bool on[4];
  char root[512], path[600];

  (void)state;
  snprintf(root, sizeof(root), "%s/smtoff", base);
  fake_tree(root, caps, 4);
  erg_assert(erg_bpf_read_online(root, on, 4) == 4, "no online file: all online");
  snprintf(path, sizeof(path), "%s/online", root);
  erg_assert(erg_write_file_atomic(path, "0,2\n", 4) == 0, "write online");
  erg_assert(erg_bpf_read_online(root, on, 4) == 2 && on[0] && !on[1] && on[2] && !on[3], "0,2");
  erg_assert(erg_bpf_read_capacities(root, got, 4) == 3, "up to cpu2");
  erg_assert(got[0] == 512 && got[1] == 0 && got[2] == 1024 && got[3] == 0, "offline skipped");
  erg_assert(erg_bpf_capacity_group(got, 3, cls, 4) == 2, "offline class left out");
  erg_assert(erg_bpf_read_frequencies(root, khz, 4) == 3 && khz[1] == 0 && khz[3] == 0, "freq");
}

static void test_names(void **state) {
  (void)state;
  erg_assert(strcmp(erg_bpf_feature_name(ERG_BPF_F_CPU_TIME), "cpu_time") == 0, "name");
  erg_assert(strcmp(erg_bpf_feature_name(ERG_BPF_F_LLC_MISSES), "llc_misses") == 0, "name");
  erg_assert(erg_bpf_feature_name(1u << 20) == NULL, "unknown");
  for (unsigned bit = 1; bit & ERG_BPF_F_ALL; bit <<= 1)
    erg_assert(erg_bpf_feature_name(bit) != NULL, "bit %u named", bit);
}

static int setup(void **state) {
  (void)state;
  erg_assert(mkdtemp(base) != NULL, "mkdtemp: %s", strerror(errno));
  return 0;
}

static int teardown(void **state) {
  char cmd[128];

  (void)state;
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
  if (system(cmd) != 0)
    fprintf(stderr, "warning: could not remove %s\n", base);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rk3399),
      cmocka_unit_test(test_three_classes),
      cmocka_unit_test(test_uniform_and_missing),
      cmocka_unit_test(test_cpu_list),
      cmocka_unit_test(test_offline),
      cmocka_unit_test(test_names),
  };

  return cmocka_run_group_tests(tests, setup, teardown);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Hybrid hosts keep Slurm's job cgroups in the v1 hierarchies only. A
 * process that starts and exits between two drains is described from what
 * the kernel recorded at its exit: its v1 freezer path must be there, or
 * its job is lost ([none]). Both loaders. Skips (77) without a v1 freezer
 * hierarchy (pure cgroup v2 hosts have no v1 jobs to find). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "bpf_test.h"

#define FREEZER "/sys/fs/cgroup/freezer"

struct found {
  pid_t pid;
  int exited;
  uint64_t v1_id;
};

static void on_proc(const struct erg_bpf_proc *p, void *user) {
  struct found *f = user;

  if ((pid_t)p->pid == f->pid && p->exited) {
    f->exited++;
    f->v1_id = p->cgroup_v1_id;
  }
}

/* A child that joins cgroup dir, burns 5 ms of CPU and exits (on CPU 0
 * when pinned). */
static pid_t child_in(const char *dir, bool pinned) {
  char procs[512], pid[32];
  pid_t c = fork();

  erg_assert(c >= 0, "fork: %s", strerror(errno));
  if (c)
    return c;
  if (pinned && test_pin_try(0) != 0)
    _exit(4);
  snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
  int fd = open(procs, O_WRONLY);
  int n = snprintf(pid, sizeof(pid), "%d", (int)getpid());
  if (fd < 0 || write(fd, pid, (size_t)n) != n)
    _exit(3);
  close(fd);
  test_burn_ns(5000000);
  _exit(0);
}

/* The job cgroup (group setup/teardown) and the collector of the case
 * running, closed by its teardown after a failure. */
static char top[256], dir[300], want[300];

static void run_case(const struct erg_bpf_opts *o, const char *label) {
  struct erg_bpf *b = open_b = test_bpf_open(o);
  struct found f = {0};
  char why[256], path[512];
  int status;

  f.pid = child_in(dir, false);
  erg_assert(waitpid(f.pid, &status, 0) == f.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
             "child failed (status %d)", status);
  usleep(100000); /* its last switch-out */
  erg_assert(erg_bpf_drain(b, on_proc, &f, why, sizeof(why)) >= 0, "drain: %s", why);
  erg_assert(f.exited == 1, "%d exited records for the child", f.exited);
  erg_assert(f.v1_id != 0, "%s loader: no v1 cgroup recorded at exit", label);
  erg_assert(erg_bpf_cgroup_path(b, f.v1_id, path, sizeof(path)) == 0, "no path for the v1 id");
  printf("%s loader: exited child's v1 freezer path %s\n", label, path);
  erg_assert(strcmp(path, want) == 0, "v1 path '%s', want '%s'", path, want);
  erg_bpf_close(b);
  open_b = NULL;
}

/* Exits from two cgroups one right after the other on one CPU: each
 * path is recorded (the exit program skips the lookup of the cgroup it
 * recorded last on that CPU, never of another one). */
static char dir2[320], want2[320];

static void test_back_to_back(void **state) {
  struct erg_bpf *b = open_b = test_bpf_open(NULL);
  const char *dirs[2] = {dir, dir2}, *wants[2] = {want, want2};
  uint64_t ids[2];
  char why[256], path[512];
  int status;

  (void)state;
  for (int i = 0; i < 2; i++) {
    struct found f = {.pid = child_in(dirs[i], true)};
    erg_assert(waitpid(f.pid, &status, 0) == f.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
               "child failed (status %d)", status);
    usleep(20000); /* its last switch-out */
    erg_assert(erg_bpf_drain(b, on_proc, &f, why, sizeof(why)) >= 0, "drain: %s", why);
    erg_assert(f.exited == 1 && f.v1_id != 0, "child %d: %d exited records, v1 id %llu", i,
               f.exited, (unsigned long long)f.v1_id);
    ids[i] = f.v1_id;
  }
  erg_assert(ids[0] != ids[1], "one v1 id for two cgroups");
  for (int i = 0; i < 2; i++) {
    erg_assert(erg_bpf_cgroup_path(b, ids[i], path, sizeof(path)) == 0, "no path for cgroup %d", i);
    erg_assert(strcmp(path, wants[i]) == 0, "v1 path '%s', want '%s'", path, wants[i]);
  }
  erg_bpf_close(b);
  open_b = NULL;
}

static void test_default_loader(void **state) {
  (void)state;
  run_case(NULL, "default");
}

static void test_libbpf_loader(void **state) {
  struct erg_bpf_opts libbpf = {.libbpf_loader = true};

  (void)state;
  run_case(&libbpf, "libbpf");
}

static int make_job_cgroup(void **state) {
  (void)state;
  snprintf(top, sizeof(top), FREEZER "/erg_cgv1_%d", (int)getpid());
  snprintf(dir, sizeof(dir), "%s/job_4711", top);
  erg_assert(mkdir(top, 0755) == 0 && mkdir(dir, 0755) == 0, "mkdir %s: %s", dir, strerror(errno));
  snprintf(want, sizeof(want), "/erg_cgv1_%d/job_4711", (int)getpid());
  snprintf(dir2, sizeof(dir2), "%s/job_4712", top);
  erg_assert(mkdir(dir2, 0755) == 0, "mkdir %s: %s", dir2, strerror(errno));
  snprintf(want2, sizeof(want2), "/erg_cgv1_%d/job_4712", (int)getpid());
  return 0;
}

static int remove_job_cgroup(void **state) {
  (void)state;
  if (dir[0])
    rmdir(dir);
  if (dir2[0])
    rmdir(dir2);
  if (top[0])
    rmdir(top);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_default_loader, test_bpf_teardown),
      cmocka_unit_test_teardown(test_libbpf_loader, test_bpf_teardown),
      cmocka_unit_test_teardown(test_back_to_back, test_bpf_teardown),
  };
  struct stat st;

  if (stat(FREEZER "/cgroup.procs", &st) != 0)
    erg_skip_all("no cgroup v1 freezer hierarchy at " FREEZER " (pure cgroup v2 host)");
  test_bpf_require();
  return cmocka_run_group_tests(tests, make_job_cgroup, remove_job_cgroup);
}

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

static void on_proc(const struct erg_bpf_proc *p, void *user)
{
  struct found *f = user;

  if ((pid_t)p->pid == f->pid && p->exited) {
    f->exited++;
    f->v1_id = p->cgroup_v1_id;
  }
}

/* A child that joins cgroup dir, burns 5 ms of CPU and exits. */
static pid_t child_in(const char *dir)
{
  char procs[512], pid[32];
  pid_t c = fork();

  CHECK(c >= 0, "fork: %s", strerror(errno));
  if (c)
    return c;
  snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
  int fd = open(procs, O_WRONLY);
  int n = snprintf(pid, sizeof(pid), "%d", (int)getpid());
  if (fd < 0 || write(fd, pid, (size_t)n) != n)
    _exit(3);
  close(fd);
  test_burn_ns(5000000);
  _exit(0);
}

static void run_case(const struct erg_bpf_opts *o, const char *label, const char *dir,
                     const char *want)
{
  struct erg_bpf *b = test_bpf_open(o);
  struct found f = {0};
  char why[256], path[512];
  int status;

  f.pid = child_in(dir);
  CHECK(waitpid(f.pid, &status, 0) == f.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "child failed (status %d)", status);
  usleep(100000); /* its last switch-out */
  CHECK(erg_bpf_drain(b, on_proc, &f, why, sizeof(why)) >= 0, "drain: %s", why);
  CHECK(f.exited == 1, "%d exited records for the child", f.exited);
  CHECK(f.v1_id != 0, "%s loader: no v1 cgroup recorded at exit", label);
  CHECK(erg_bpf_cgroup_path(b, f.v1_id, path, sizeof(path)) == 0, "no path for the v1 id");
  printf("%s loader: exited child's v1 freezer path %s\n", label, path);
  CHECK(strcmp(path, want) == 0, "v1 path '%s', want '%s'", path, want);
  erg_bpf_close(b);
}

int main(void)
{
  struct erg_bpf_opts libbpf = {.libbpf_loader = true};
  char top[256], dir[300], want[300];
  struct stat st;

  if (stat(FREEZER "/cgroup.procs", &st) != 0) {
    printf("SKIP: no cgroup v1 freezer hierarchy at " FREEZER " (pure cgroup v2 host)\n");
    return SKIP_CODE;
  }
  snprintf(top, sizeof(top), FREEZER "/erg_cgv1_%d", (int)getpid());
  snprintf(dir, sizeof(dir), "%s/job_4711", top);
  CHECK(mkdir(top, 0755) == 0 && mkdir(dir, 0755) == 0, "mkdir %s: %s", dir, strerror(errno));
  snprintf(want, sizeof(want), "/erg_cgv1_%d/job_4711", (int)getpid());
  run_case(NULL, "default", dir, want);
  run_case(&libbpf, "libbpf", dir, want);
  rmdir(dir);
  rmdir(top);
  printf("ok\n");
  return 0;
}

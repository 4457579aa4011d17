// SPDX-License-Identifier: GPL-3.0-or-later
/* A process that renames itself (prctl, then exec) is reported under its
 * new name at the next drain, both loaders. The agent takes a live
 * process's name from /proc, but one that exits and is reaped first has
 * only the name the programs keep: integration.agent_exits lost whole
 * 20 ms children to their parent's name that way (CI, 0.9964). Without the
 * task_rename program the entry keeps the fork-time name for up to 100 ms
 * of switches, and this test fails. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "bpf_test.h"

#define NEW_COMM "ergren_new"

struct want {
  pid_t pid;
  char comm[16];
  int seen;
};

static void on_proc(const struct erg_bpf_proc *p, void *user) {
  struct want *w = user;

  if ((pid_t)p->pid != w->pid)
    return;
  w->seen++;
  memcpy(w->comm, p->comm, sizeof(w->comm));
  w->comm[15] = '\0';
}

static void drain_for(struct erg_bpf *b, struct want *w) {
  char why[256];

  w->seen = 0;
  w->comm[0] = '\0';
  erg_assert(erg_bpf_drain(b, on_proc, w, why, sizeof(why)) >= 0, "drain: %s", why);
  erg_assert(w->seen == 1, "child %d reported %d times", (int)w->pid, w->seen);
}

/* The child burns a little CPU under the parent's name (so its entry is
 * made with that name), renames itself, says so on the pipe and waits for
 * the next order: 'x' execs sleep (exec renames too), anything else exits. */
static pid_t child_start(int up[2], int down[2]) {
  pid_t pid;
  char c;

  erg_assert(pipe(up) == 0 && pipe(down) == 0, "pipe: %s", strerror(errno));
  pid = fork();
  erg_assert(pid >= 0, "fork: %s", strerror(errno));
  if (pid)
    return erg_test_child(pid);
  test_burn_ns(3000000);
  prctl(PR_SET_NAME, NEW_COMM, 0, 0, 0);
  if (write(up[1], "r", 1) != 1 || read(down[0], &c, 1) != 1)
    _exit(1);
  if (c == 'x')
    execlp("sleep", "sleep", "30", (char *)NULL);
  _exit(0);
}

/* The collector of the case running, closed by its teardown after a
 * failure (with the child: erg_kill_children). */

static void run_case(const struct erg_bpf_opts *o, const char *label) {
  struct erg_bpf *b = open_b = test_bpf_open(o);
  int up[2], down[2], status;
  struct want w = {0};
  char c;

  w.pid = child_start(up, down);
  erg_assert(read(up[0], &c, 1) == 1, "child did not rename");
  /* Its rename switch-out happened just now: well inside the 100 ms. */
  drain_for(b, &w);
  printf("%s loader: after prctl: '%s'\n", label, w.comm);
  erg_assert(strcmp(w.comm, NEW_COMM) == 0, "after prctl the name is '%s', not " NEW_COMM, w.comm);
  erg_assert(write(down[1], "x", 1) == 1, "pipe write");
  usleep(100000);
  drain_for(b, &w);
  printf("%s loader: after exec: '%s'\n", label, w.comm);
  erg_assert(strcmp(w.comm, "sleep") == 0, "after exec the name is '%s', not sleep", w.comm);
  kill(w.pid, SIGKILL);
  erg_assert(waitpid(w.pid, &status, 0) == w.pid, "waitpid: %s", strerror(errno));
  close(up[0]);
  close(up[1]);
  close(down[0]);
  close(down[1]);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_default_loader, test_bpf_teardown),
      cmocka_unit_test_teardown(test_libbpf_loader, test_bpf_teardown),
  };

  test_bpf_require();
  return cmocka_run_group_tests(tests, NULL, NULL);
}

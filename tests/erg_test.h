// SPDX-License-Identifier: GPL-3.0-or-later
/* erg_test.h: the one place for helpers the C tests share on top of cmocka.
 *
 * Every C test asserts with cmocka (assert_true, assert_int_equal, ...) and
 * runs its cases with cmocka_run_group_tests(), linking PkgConfig::CMOCKA.
 * A test that needs more than cmocka includes this header as
 * "../erg_test.h" (it includes <cmocka.h> and the headers cmocka.h needs
 * before it); add new shared helpers here, not in private macros. It adds:
 *
 *  erg_assert(cond, fmt, ...)
 *      assert_true with context. When cond is false it prints the condition
 *      and a printf-style message (the values that made it false: cmocka's
 *      assert_true shows only the expression), then fails the running test
 *      like any cmocka assertion: the test stops, its teardown runs, the
 *      other tests of the group still run, and cmocka_run_group_tests()
 *      returns non-zero. Usable in tests, setups and teardowns.
 *
 *  erg_skip_all(fmt, ...)
 *      The whole program cannot run here (not root, no BPF, rrdcached not
 *      installed): prints "SKIP: <why>" and exits ERG_SKIP_CODE (77), which
 *      the test's CMake properties name as SKIP_RETURN_CODE, so ctest
 *      reports it skipped. cmocka's skip() is not that: it marks one case
 *      skipped and the program still exits 0, which ctest counts as passed.
 *      So call erg_skip_all() from main() before cmocka_run_group_tests(),
 *      and skip() for a case (or part) that cannot run while the rest can.
 *
 *  erg_child_assert(cond, fmt, ...)
 *      The same check in a forked child. cmocka's assertions must not be
 *      used there: a failure would jump back into the child's copy of the
 *      test runner, which would go on running the remaining tests. This
 *      prints like erg_assert and _exit(1)s the child; the parent sees it
 *      in the child's exit status or in what the child then fails to do.
 *
 *  erg_test_child(pid), erg_kill_children (a cmocka teardown)
 *      A child that loops until killed (a busy process, a daemon) outlives
 *      a failed assertion: the test stops before its own kill, and the
 *      cases after it would run beside the child. erg_test_child() records
 *      the pid (and returns it); erg_kill_children(), as the case's
 *      teardown, SIGKILLs and reaps those recorded that are not reaped yet
 *      (waitpid WNOHANG first: an unreaped child's pid cannot have been
 *      reused), then forgets them all.
 *
 *  erg_rrdcached_start(dir, sock), erg_rrdcached_stop(pid)
 *      A real rrdcached (Debian: rrdcached) for a group's setup: started
 *      in the foreground (-g), listening on unix:sock, its files and pid
 *      file under dir (-b dir -B), every update kept in memory (-w 3600
 *      -f 7200: the files on disk lack them until a flush, so only reads
 *      through the daemon see them). Returns its pid once sock exists (5 s
 *      at most), else -1 with the daemon gone (it exited, or was killed).
 *      erg_rrdcached_stop(pid), for the group's teardown, SIGTERMs and
 *      reaps it (nothing if pid <= 0). Not for erg_test_child: the daemon
 *      outlives the cases.
 */
#ifndef ERG_TEST_H
#define ERG_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define ERG_SKIP_CODE 77

#define erg_assert(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      erg_assert_failed_(#cond, __FILE__, __LINE__, __VA_ARGS__);                                  \
  } while (0)

#define erg_child_assert(cond, ...)                                                                \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      erg_child_failed_(#cond, __FILE__, __LINE__, __VA_ARGS__);                                   \
  } while (0)

__attribute__((format(printf, 4, 5), noreturn, unused)) static void
erg_assert_failed_(const char *cond, const char *file, int line, const char *fmt, ...) {
  va_list ap;

  print_error("%s:%d: check failed: %s: ", file, line, cond);
  va_start(ap, fmt);
  vprint_error(fmt, ap);
  va_end(ap);
  print_error("\n");
  _fail(file, line); /* jumps back to the runner (outside a test: exits) */
  abort();
}

__attribute__((format(printf, 4, 5), noreturn, unused)) static void
erg_child_failed_(const char *cond, const char *file, int line, const char *fmt, ...) {
  va_list ap;

  fprintf(stderr, "%s:%d: check failed in child %d: %s: ", file, line, (int)getpid(), cond);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  _exit(1);
}

__attribute__((format(printf, 1, 2), noreturn, unused)) static void erg_skip_all(const char *fmt,
                                                                                 ...) {
  va_list ap;

  printf("SKIP: ");
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
  exit(ERG_SKIP_CODE);
}

#define ERG_TEST_MAX_CHILDREN 16
static pid_t erg_test_children_[ERG_TEST_MAX_CHILDREN];

__attribute__((unused)) static pid_t erg_test_child(pid_t pid) {
  for (int i = 0; pid > 0 && i < ERG_TEST_MAX_CHILDREN; i++)
    if (erg_test_children_[i] <= 0) {
      erg_test_children_[i] = pid;
      break;
    }
  return pid;
}

__attribute__((unused)) static int erg_kill_children(void **state) {
  (void)state;
  for (int i = 0; i < ERG_TEST_MAX_CHILDREN; i++) {
    pid_t pid = erg_test_children_[i];
    erg_test_children_[i] = 0;
    if (pid > 0 && waitpid(pid, NULL, WNOHANG) == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, NULL, 0);
    }
  }
  return 0;
}

__attribute__((unused)) static pid_t erg_rrdcached_start(const char *dir, const char *sock) {
  char addr[300], pidf[300];
  snprintf(addr, sizeof addr, "unix:%s", sock);
  snprintf(pidf, sizeof pidf, "%s/rrdcached.pid", dir);
  pid_t pid = fork();
  if (pid == 0) {
    execlp("rrdcached", "rrdcached", "-g", "-l", addr, "-b", dir, "-B", "-w", "3600", "-f", "7200",
           "-p", pidf, (char *)NULL);
    _exit(127);
  }
  if (pid < 0)
    return -1;
  for (int i = 0; i < 100; i++) {
    struct stat st;
    if (stat(sock, &st) == 0)
      return pid;
    if (waitpid(pid, NULL, WNOHANG) == pid)
      return -1; /* it exited (not installed, a bad option) */
    usleep(50000);
  }
  kill(pid, SIGTERM);
  waitpid(pid, NULL, 0);
  return -1;
}

__attribute__((unused)) static void erg_rrdcached_stop(pid_t pid) {
  if (pid > 0) {
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
  }
}

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/* The render in a process of its own (isolate = 1, ergd): librrd 1.7.2
 * leaks two small strings per DEF per graph and fontconfig/pango keep
 * caches; a process takes them along when it exits.
 *
 * The process is started with posix_spawn and exec, never a bare fork: a
 * forked child of the multi-threaded ergd may call only async-signal-safe
 * functions, and the renderer needs malloc, librrd and the font stack (a
 * forked child once deadlocked in the allocator, holding a read lock on an
 * archive, and pages stopped for good). The program is ergd itself
 * (/proc/self/exe: the very binary that runs, in the build tree, installed,
 * or replaced by an upgrade meanwhile), run as
 *   PROG --erg-render-pages DATA_DIR WWW_DIR MODEL_DIR FORMAT NOW RRDCACHED
 * with the node names on standard input (each ended by a NUL byte) and a
 * failure's reason on standard output; its main() hands such a call to
 * erg_web_render_child_main. It runs in a process group of its own with
 * no inherited descriptor but 0-2; past the deadline, or when the caller
 * cancels, the group is killed. erg_web_render_opts, the entry point,
 * is here too: it renders in-process (pages.c) or starts the process. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "web_int.h"

extern char **environ;

/* Writes all of buf to fd (a memfd: no partial writes but on error). */
static int render_write_all(int fd, const char *buf, size_t len) {
  while (len) {
    ssize_t w = write(fd, buf, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    buf += w;
    len -= (size_t)w;
  }
  return 0;
}

/* The node names, each ended by NUL, in an anonymous file at offset 0. */
static int render_names_file(const char *const *nodes, size_t nnodes, char *why, size_t whylen) {
  int fd = memfd_create("erg-render-nodes", MFD_CLOEXEC);
  if (fd < 0) {
    snprintf(why, whylen, "memfd_create: %s", strerror(errno));
    return -1;
  }
  for (size_t i = 0; i < nnodes; i++)
    if (render_write_all(fd, nodes[i], strlen(nodes[i]) + 1) != 0) {
      snprintf(why, whylen, "node list: %s", strerror(errno));
      close(fd);
      return -1;
    }
  if (lseek(fd, 0, SEEK_SET) != 0) {
    snprintf(why, whylen, "node list: %s", strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

static pid_t render_spawn(const char *prog, char *const argv[], int in, int out, char *why,
                          size_t whylen) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&fa, in, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, out, STDOUT_FILENO);
  /* Listening sockets and files another thread opened without CLOEXEC
   * stay with ergd (a restarted ergd could not bind while a render
   * lives). */
  posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
  sigset_t none, dfl;
  sigemptyset(&none);
  sigemptyset(&dfl);
  sigaddset(&dfl, SIGPIPE); /* ergd ignores it */
  sigaddset(&dfl, SIGTERM);
  sigaddset(&dfl, SIGINT);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &dfl);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, prog, &fa, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    snprintf(why, whylen, "cannot start the renderer %s: %s", prog, strerror(rc));
    return -1;
  }
  return pid;
}

/* erg_web_render_opts with isolate: the render in a process started with
 * posix_spawn, killed past opt->timeout_seconds or on *opt->cancel. */
static int render_process(const struct erg_store *store, const char *www_dir,
                          const char *const *nodes, size_t nnodes, int64_t now,
                          const struct erg_web_options *opt, char *why, size_t whylen) {
  const char *prog =
      opt->render_program && *opt->render_program ? opt->render_program : "/proc/self/exe";
  char nowtext[32];
  snprintf(nowtext, sizeof nowtext, "%lld", (long long)now);
  const char *daemon = erg_store_daemon(store);
  char *argv[] = {(char *)"erg-render",
                  (char *)ERG_WEB_RENDER_ARG,
                  (char *)erg_store_root(store),
                  (char *)www_dir,
                  (char *)(opt->model_dir ? opt->model_dir : ""),
                  (char *)(opt->image_format ? opt->image_format : "png"),
                  nowtext,
                  (char *)(daemon ? daemon : ""),
                  NULL};
  int in = render_names_file(nodes, nnodes, why, whylen), out[2];
  if (in < 0)
    return ERG_WEB_RENDER_FAILED;
  if (pipe2(out, O_CLOEXEC) != 0) {
    snprintf(why, whylen, "pipe: %s", strerror(errno));
    close(in);
    return ERG_WEB_RENDER_FAILED;
  }
  pid_t pid = render_spawn(prog, argv, in, out[1], why, whylen);
  close(in);
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    return ERG_WEB_RENDER_FAILED;
  }
  uint64_t t0 = erg_time_monotonic_ns();
  uint64_t limit = opt->timeout_seconds > 0 ? (uint64_t)(opt->timeout_seconds * 1e9) : UINT64_MAX;
  char err[512];
  size_t n = 0;
  int eof = 0, status = 0, ended = ERG_WEB_RENDER_OK;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR))
      break;
    if (opt->cancel && *opt->cancel)
      ended = ERG_WEB_RENDER_CANCELLED;
    else if (erg_time_monotonic_ns() - t0 >= limit)
      ended = ERG_WEB_RENDER_TIMEOUT;
    if (ended != ERG_WEB_RENDER_OK) {
      kill(-pid, SIGKILL); /* its group: whatever it started goes too */
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
      break;
    }
    /* The reason comes at the end, under the pipe's buffer: the child
     * never waits on it. EOF: it is exiting (or closed stdout), poll
     * only for the exit. */
    struct pollfd p = {.fd = out[0], .events = POLLIN};
    if (eof || poll(&p, 1, 100) != 1) {
      if (eof)
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
      continue;
    }
    char tmp[512];
    ssize_t got = read(out[0], tmp, sizeof tmp);
    if (got <= 0) {
      eof = got == 0 || errno != EINTR;
      continue;
    }
    size_t take = (size_t)got < sizeof err - 1 - n ? (size_t)got : sizeof err - 1 - n;
    memcpy(err + n, tmp, take);
    n += take;
  }
  close(out[0]);
  err[n] = '\0';
  if (ended == ERG_WEB_RENDER_TIMEOUT) {
    snprintf(why, whylen, "the render took over %g s and was killed (page_timeout_seconds)",
             opt->timeout_seconds);
    return ended;
  }
  if (ended == ERG_WEB_RENDER_CANCELLED) {
    snprintf(why, whylen, "the render was cancelled and killed");
    return ended;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return ERG_WEB_RENDER_OK;
  if (n)
    snprintf(why, whylen, "%s", err);
  else if (WIFSIGNALED(status))
    snprintf(why, whylen, "the render process %s died of signal %d", prog, WTERMSIG(status));
  else
    snprintf(why, whylen, "the render process %s failed (exit status %d)", prog,
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return ERG_WEB_RENDER_FAILED;
}

/* The names on standard input, each ended by NUL (the last one may lack it). */
static char **render_read_names(size_t *n) {
  size_t len = 0, cap = 1 << 16;
  char *buf = malloc(cap);
  for (ssize_t r; buf; len += (size_t)r) {
    if (len + 1 >= cap) {
      char *grown = realloc(buf, cap *= 2);
      if (!grown) {
        free(buf);
        return NULL;
      }
      buf = grown;
    }
    r = read(STDIN_FILENO, buf + len, cap - len - 1);
    if (r < 0 && errno == EINTR)
      r = 0;
    else if (r <= 0)
      break;
  }
  if (!buf)
    return NULL;
  buf[len] = '\0';
  size_t count = 0;
  for (size_t i = 0; i < len; i++)
    count += buf[i] == '\0';
  count += len && buf[len - 1] != '\0';
  /* One block: the pointers, then the text they point into. */
  char **names = malloc((count + 1) * sizeof *names + len + 1);
  if (!names) {
    free(buf);
    return NULL;
  }
  char *text = (char *)(names + count + 1);
  memcpy(text, buf, len + 1);
  free(buf);
  size_t k = 0;
  for (size_t i = 0; i < len && k < count; i += strlen(text + i) + 1)
    names[k++] = text + i;
  names[k] = NULL;
  *n = k;
  return names;
}

int erg_web_render_child_main(int argc, char **argv) {
  /* Dies with the thread that started it (ergd killed): no orphan holds
   * archive locks. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (argc != 8 || strcmp(argv[1], ERG_WEB_RENDER_ARG)) {
    printf("renderer: expected %s DATA_DIR WWW_DIR MODEL_DIR FORMAT NOW RRDCACHED",
           ERG_WEB_RENDER_ARG);
    return 2;
  }
  char *end = NULL;
  long long now = strtoll(argv[6], &end, 10);
  size_t n = 0;
  char **names = render_read_names(&n);
  if (!end || *end || !names) {
    printf("renderer: %s", names ? "bad time" : "cannot read the node names");
    free(names);
    return 2;
  }
  struct erg_store *st = NULL;
  struct erg_store_options so = {.root = argv[2], .rrdcached = argv[7][0] ? argv[7] : NULL};
  struct erg_web_options o = {
      .model_dir = argv[4][0] ? argv[4] : NULL, .image_format = argv[5], .isolate = 0};
  char why[512] = "";
  int rc = erg_store_open(&st, &so, why, sizeof why) != 0 ||
           web_render_all(st, argv[3], (const char *const *)names, n, (int64_t)now, &o, why,
                          sizeof why) != 0;
  if (rc)
    fputs(why, stdout);
  erg_store_close(st);
  free(names);
  /* What librrd and the font stack keep is why this is a process of its
   * own: it goes with _exit, unchecked (LeakSanitizer would report it at
   * exit, turn the status into 1 and lose the reason). The render code is
   * leak-checked in-process by web.test_web. */
  fflush(stdout);
  _exit(rc ? 1 : 0);
}

int erg_web_render_opts(const struct erg_store *store, const char *www_dir,
                        const char *const *nodes, size_t nnodes, int64_t now,
                        const struct erg_web_options *opt, char *why, size_t whylen) {
  if (opt && opt->isolate)
    return render_process(store, www_dir, nodes, nnodes, now, opt, why, whylen);
  return web_render_all(store, www_dir, nodes, nnodes, now, opt, why, whylen) == 0
             ? ERG_WEB_RENDER_OK
             : ERG_WEB_RENDER_FAILED;
}

int erg_web_render(const struct erg_store *store, const char *www_dir, const char *const *nodes,
                   size_t nnodes, int64_t now, char *why, size_t whylen) {
  /* ergd's call: it runs for months, so librrd's leaks stay in a process. */
  struct erg_web_options o = {.isolate = 1};
  return erg_web_render_opts(store, www_dir, nodes, nnodes, now, &o, why, whylen);
}

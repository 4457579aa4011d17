// SPDX-License-Identifier: GPL-3.0-or-later
/* Pages are rendered in their own thread: a render draws graphs with
 * librrd (in a process of its own that the thread waits for, see
 * web/render_proc.c), seconds for a few nodes and far more for thousands.
 * On the loop that wait stopped ingest and cells closed without their
 * samples. One thread renders at a time; a request while it is busy is
 * refused and the loop asks again on its next tick. A render past
 * page_timeout_seconds is killed, logged and counted; renderer_stop kills
 * one in progress (SIGTERM does not wait for a render). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "collector_int.h"
#include "erg_web.h"

struct renderer {
  const struct erg_store *store;
  char www_dir[512];
  char model_dir[512];  /* "": the store's models/ */
  char image_format[8]; /* "png" or "svg" */
  char program[512];    /* "": ergd itself; ERG_TEST_RENDER_PROGRAM (tests only) */
  double timeout_seconds;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  int busy, stopping;  /* busy: a job is queued or being rendered */
  volatile int cancel; /* set by renderer_stop: the render in progress is killed */
  char **names;
  size_t nnames;
  int64_t now;
  atomic_ullong results[RENDER_NRESULTS];
  int failing;           /* in a spell of failed renders, logged once */
  uint64_t last_fail_ns; /* monotonic, the spell's last failure */
};

/* A spell of failures ends once renders succeed for this long: on a
 * nearly full disk, space freed now and then lets a render through. */
#define RENDER_RECOVERED_SECONDS 10

static void names_free(char **names, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

/* A spell of failures is logged once, at its first (a full disk fails
 * every render in the same way), and its end; a timeout every time. */
static void renderer_report(struct renderer *r, int rc, const char *why) {
  int k = rc == ERG_WEB_RENDER_OK        ? RENDER_OK
          : rc == ERG_WEB_RENDER_TIMEOUT ? RENDER_TIMEOUT
          : rc == ERG_WEB_RENDER_FAILED  ? RENDER_FAILED
                                         : -1;
  if (k < 0)
    return; /* cancelled: ergd is stopping */
  atomic_fetch_add(&r->results[k], 1);
  uint64_t now = erg_time_monotonic_ns();
  if (k == RENDER_TIMEOUT)
    erg_warn("pages: %s (counted in erg_page_renders_total{result=\"timeout\"})", why);
  if (k == RENDER_FAILED && !r->failing)
    erg_warn("pages: %s (logged once until rendering works again; counted in "
             "erg_page_renders_total{result=\"failed\"})",
             why);
  if (k != RENDER_OK) {
    r->failing = 1;
    r->last_fail_ns = now;
  } else if (r->failing && now - r->last_fail_ns >= RENDER_RECOVERED_SECONDS * ERG_NS_PER_S) {
    erg_info("pages: rendering works again, no failure for %d s", RENDER_RECOVERED_SECONDS);
    r->failing = 0;
  }
}

static void *renderer_main(void *arg) {
  struct renderer *r = arg;
  pthread_mutex_lock(&r->lock);
  for (;;) {
    while (!r->names && !r->stopping)
      pthread_cond_wait(&r->wake, &r->lock);
    if (!r->names)
      break;
    char **names = r->names;
    size_t n = r->nnames;
    int64_t now = r->now;
    r->names = NULL; /* taken: renderer_stop frees only a job not started */
    pthread_mutex_unlock(&r->lock);
    char why[600] = "";
    /* ergd runs for months: librrd's per-render leaks stay in a process. */
    struct erg_web_options o = {.model_dir = r->model_dir[0] ? r->model_dir : NULL,
                                .image_format = r->image_format,
                                .isolate = 1,
                                .render_program = r->program[0] ? r->program : NULL,
                                .timeout_seconds = r->timeout_seconds,
                                .cancel = &r->cancel};
    int rc = erg_web_render_opts(r->store, r->www_dir, (const char *const *)names, n, now, &o, why,
                                 sizeof why);
    renderer_report(r, rc, why);
    names_free(names, n);
    pthread_mutex_lock(&r->lock);
    r->busy = 0;
  }
  pthread_mutex_unlock(&r->lock);
  return NULL;
}

struct renderer *renderer_start(const struct erg_store *store, const char *www_dir,
                                const char *model_dir, const char *image_format,
                                double timeout_seconds) {
  struct renderer *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->store = store;
  erg_strlcpy(r->www_dir, www_dir, sizeof r->www_dir);
  erg_strlcpy(r->model_dir, model_dir ? model_dir : "", sizeof r->model_dir);
  erg_strlcpy(r->image_format, image_format && *image_format ? image_format : "png",
              sizeof r->image_format);
  /* For tests only (docs/config.md): a program that hangs stands in for
   * a wedged renderer. */
  const char *prog = getenv("ERG_TEST_RENDER_PROGRAM");
  erg_strlcpy(r->program, prog ? prog : "", sizeof r->program);
  r->timeout_seconds = timeout_seconds;
  pthread_mutex_init(&r->lock, NULL);
  pthread_cond_init(&r->wake, NULL);
  if (pthread_create(&r->thread, NULL, renderer_main, r) != 0) {
    free(r);
    return NULL;
  }
  return r;
}

int renderer_submit(struct renderer *r, const char *const *nodes, size_t n, int64_t now) {
  pthread_mutex_lock(&r->lock);
  int busy = r->busy;
  pthread_mutex_unlock(&r->lock);
  if (busy)
    return 1;
  /* The thread gets its own copy: node states belong to the loop. */
  char **names = calloc(n ? n : 1, sizeof *names);
  for (size_t i = 0; names && i < n; i++)
    if (!(names[i] = strdup(nodes[i]))) {
      names_free(names, i);
      names = NULL;
    }
  if (!names)
    return -1;
  pthread_mutex_lock(&r->lock);
  r->names = names;
  r->nnames = n;
  r->now = now;
  r->busy = 1;
  pthread_cond_signal(&r->wake);
  pthread_mutex_unlock(&r->lock);
  return 0;
}

uint64_t renderer_count(const struct renderer *r, int result) {
  return r && result >= 0 && result < RENDER_NRESULTS
             ? atomic_load(&((struct renderer *)r)->results[result])
             : 0;
}

void renderer_stop(struct renderer *r) {
  if (!r)
    return;
  pthread_mutex_lock(&r->lock);
  r->stopping = 1;
  r->cancel = 1;
  if (r->names) { /* queued, not started: not worth the wait */
    names_free(r->names, r->nnames);
    r->names = NULL;
  }
  pthread_cond_signal(&r->wake);
  pthread_mutex_unlock(&r->lock);
  pthread_join(r->thread, NULL);
  pthread_mutex_destroy(&r->lock);
  pthread_cond_destroy(&r->wake);
  free(r);
}

/* heaptape tests -- heaptape_start with native = 0 records none of the
** process's mallocs, not even while it starts: a second thread allocates all
** along. argv[1]: libheaptape.so (preloaded, not recording); argv[2]: tape
** prefix, one tape per session (PREFIX.0, PREFIX.1, ...). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include "../../include/heaptape.h"

static atomic_int done;                    /* tells the churning thread to end */
static atomic_long churned;                /* its allocations so far */

/* Allocate and free as fast as possible until done. */
static void *churn(void *arg)
{
  (void)arg;
  cpu_set_t one;                           /* beside the main thread, not after it */
  CPU_ZERO(&one);
  CPU_SET(1, &one);
  sched_setaffinity(0, sizeof(one), &one);
  while (!atomic_load(&done)) {
    void *volatile p = malloc(24);
    free(p);
    atomic_fetch_add(&churned, 1);
  }
  return NULL;
}

/* Writer callback: append to the FILE passed as arg. */
static size_t put(const void *d, size_t n, void *arg) { return fwrite(d, 1, n, arg); }
/* on_stop: close the FILE. */
static int done_cb(void *arg) { return fclose(arg); }

int main(int argc, char **argv)
{
  if (argc < 3) return 2;
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  __typeof__(heaptape_start) *start = (__typeof__(heaptape_start) *)dlsym(h, "heaptape_start");
  __typeof__(heaptape_stop) *stop = (__typeof__(heaptape_stop) *)dlsym(h, "heaptape_stop");
  if (!start || !stop) return 1;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  sched_setaffinity(0, sizeof(one), &one);
  pthread_t th;
  pthread_create(&th, NULL, churn, NULL);
  while (atomic_load(&churned) < 1000) {}  /* it runs before the first start */
  /* The window opens at every start: at least 50 sessions, and more until
  ** the churning thread has been seen to run meanwhile (a loaded machine
  ** may leave it waiting), 200 at most. */
  int bad = 0, i;
  long c0 = atomic_load(&churned);
  for (i = 0; i < 200 && (i < 50 || atomic_load(&churned) - c0 < 200000); i++) {
    char path[4096];
    snprintf(path, sizeof(path), "%s.%d", argv[2], i);
    struct heaptape_options o = HEAPTAPE_OPTIONS_INIT;
    o.writer = put;
    o.on_stop = done_cb;
    o.arg = fopen(path, "wb");
    o.native = 0;
    if (!o.arg || start(&o) || stop()) bad = 1;
  }
  atomic_store(&done, 1);
  pthread_join(th, NULL);
  printf("sessions %d %s\n", i, bad ? "failed" : "ok");
  return bad;
}

/* heaptape tests -- threads the recorder must not disturb: pthread_getattr_np as a
** thread's first allocation, pthread_exit from main, 1000 threads, SIGEV_THREAD timers. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GETATTR_SIZE 2345   /* allocated by each getattr thread after the call */
#define MANY_SIZE 1357      /* allocated by each of the many threads */
#define TIMER_SIZE 2468     /* allocated by the timer callback */

/* Opaque allocator calls: the compiler must not elide malloc/free pairs. */
static void *(*volatile do_malloc)(size_t) = malloc;
static void (*volatile do_free)(void *) = free;

/* Nanoseconds on the monotonic clock. */
static long long now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Allocate and free blocks of mixed sizes for ms milliseconds. */
static void churn_for(long ms)
{
  long long end = now_ns() + ms * 1000000LL;
  void *keep[64] = { 0 };
  for (unsigned i = 0; now_ns() < end; i++) {
    unsigned k = i % 64;
    do_free(keep[k]);
    keep[k] = do_malloc(16 + (i * 7919) % 2000);
  }
  for (int k = 0; k < 64; k++) do_free(keep[k]);
}

/* Thread whose first heap operation is glibc's, inside pthread_getattr_np. */
static void *getattr_thread(void *arg)
{
  pthread_attr_t a;
  size_t size = 0;
  int rc = pthread_getattr_np(pthread_self(), &a);
  if (!rc) { pthread_attr_getstacksize(&a, &size); pthread_attr_destroy(&a); }
  for (int i = 0; i < 100; i++) do_free(do_malloc(GETATTR_SIZE));
  *(int *)arg = rc ? rc : size == 0;
  return NULL;
}

/* Four threads starting with pthread_getattr_np. */
static int getattr_mode(void)
{
  pthread_t th[4];
  int rc[4];
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, getattr_thread, &rc[i]);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++) printf("thread %d: getattr %s\n", i, rc[i] ? "failed" : "ok");
  return 0;
}

/* The thread left when main has called pthread_exit: allocates ~200 ms. */
static void *survivor_thread(void *arg)
{
  (void)arg;
  churn_for(200);
  printf("thread done\n");
  return NULL;
}

/* main prints (buffered: stdout is a pipe) and calls pthread_exit. */
static int mainexit_mode(void)
{
  pthread_t th;
  if (pthread_create(&th, NULL, survivor_thread, NULL)) { printf("pthread_create failed\n"); return 1; }
  printf("main exits\n");
  pthread_exit(NULL);
}

static pthread_barrier_t many_barrier;   /* every thread alive at once */

/* One of the many threads: allocate, wait for all the others, free. */
static void *many_thread(void *arg)
{
  (void)arg;
  void *p[10];
  for (int i = 0; i < 10; i++) p[i] = do_malloc(MANY_SIZE);
  pthread_barrier_wait(&many_barrier);
  for (int i = 0; i < 10; i++) do_free(p[i]);
  return NULL;
}

/* n threads with 64 KiB stacks, alive together. */
static int many_mode(int n)
{
  pthread_t *th = malloc(sizeof(*th) * (size_t)n);
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setstacksize(&a, 64 * 1024);
  pthread_barrier_init(&many_barrier, NULL, (unsigned)n);
  for (int i = 0; i < n; i++) {
    int rc = pthread_create(&th[i], &a, many_thread, NULL);
    if (rc) { printf("pthread_create %d: %s\n", i, strerror(rc)); fflush(stdout); _exit(1); }
  }
  for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
  pthread_attr_destroy(&a);
  free(th);
  printf("%d threads done\n", n);
  return 0;
}

static atomic_int timer_calls;           /* callbacks run */

/* SIGEV_THREAD callback: allocates and frees. */
static void timer_cb(union sigval v)
{
  (void)v;
  do_free(do_malloc(TIMER_SIZE));
  atomic_fetch_add(&timer_calls, 1);
}

/* A 1 ms SIGEV_THREAD timer for ~300 ms while main allocates too. */
static int timer_mode(void)
{
  struct sigevent ev;
  memset(&ev, 0, sizeof(ev));
  ev.sigev_notify = SIGEV_THREAD;
  ev.sigev_notify_function = timer_cb;
  timer_t t;
  if (timer_create(CLOCK_MONOTONIC, &ev, &t)) { printf("timer_create: %s\n", strerror(errno)); return 1; }
  struct itimerspec its = { { 0, 1000000 }, { 0, 1000000 } };
  if (timer_settime(t, 0, &its, NULL)) { printf("timer_settime: %s\n", strerror(errno)); return 1; }
  long long end = now_ns() + 300000000LL;
  while (now_ns() < end) {
    churn_for(10);
    usleep(1000);
  }
  timer_delete(t);
  printf("timer ran: %s\n", atomic_load(&timer_calls) > 0 ? "yes" : "no");
  return 0;
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "getattr")) return getattr_mode();
  if (!strcmp(mode, "mainexit")) return mainexit_mode();
  if (!strcmp(mode, "many")) return many_mode(argc > 2 ? atoi(argv[2]) : 1000);
  if (!strcmp(mode, "timer")) return timer_mode();
  fprintf(stderr, "usage: hard_threads getattr | mainexit | many [N] | timer\n");
  return 2;
}

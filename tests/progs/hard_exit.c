/* heaptape tests -- unusual ends: _exit from a signal handler amid allocation,
** quick_exit with an allocating handler, failed execs while threads allocate,
** threads allocating faster than the writer keeps up. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define QUICK_SIZE 7171     /* allocated by the at_quick_exit handler */

/* Opaque allocator calls: the compiler must not elide malloc/free pairs. */
static void *(*volatile do_malloc)(size_t) = malloc;
static void *(*volatile do_realloc)(void *, size_t) = realloc;
static void (*volatile do_free)(void *) = free;

/* SIGALRM handler: end the process at once, status 3. */
static void on_alarm(int sig)
{
  (void)sig;
  _exit(3);
}

/* Allocate in a tight loop until a 5 ms interval timer's handler calls _exit. */
_Noreturn static void sigexit_mode(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = { { 0, 5000 }, { 0, 5000 } };
  setitimer(ITIMER_REAL, &it, NULL);
  void *keep[256] = { 0 };
  for (unsigned i = 0;; i++) {
    unsigned k = (i * 37) % 256;
    if (i % 3) keep[k] = do_realloc(keep[k], 1 + (i * 613) % 5000);
    else { do_free(keep[k]); keep[k] = do_malloc(1 + (i * 211) % 300); }
  }
}

static void *quick_keep[10];              /* the handler's blocks, never freed */

/* at_quick_exit handler: ten QUICK_SIZE blocks (kept), a line straight to fd 1. */
static void quick_handler(void)
{
  for (int i = 0; i < 10; i++) quick_keep[i] = do_malloc(QUICK_SIZE);
  static const char msg[] = "quick handler ran\n";
  if (write(1, msg, sizeof(msg) - 1) < 0) _exit(99);
}

/* Allocate a little, then quick_exit(9). */
static int quick_mode(void)
{
  at_quick_exit(quick_handler);
  for (int i = 0; i < 100; i++) do_free(do_malloc(500));
  quick_exit(9);
}

static atomic_int stop;                   /* execfail, churn: the threads end */

/* Allocate mixed sizes until told to stop. */
static void *busy(void *arg)
{
  (void)arg;
  void *keep[64] = { 0 };
  for (unsigned i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++) {
    unsigned k = i % 64;
    do_free(keep[k]);
    keep[k] = do_malloc(16 + (i * 7919) % 4000);
  }
  for (int k = 0; k < 64; k++) do_free(keep[k]);
  return NULL;
}

/* Three threads allocate while main calls execvp on a missing program 8 times. */
static int execfail_mode(void)
{
  pthread_t th[3];
  for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, busy, NULL);
  for (int i = 0; i < 8; i++) {
    struct timespec ts = { 0, 3000000 };
    nanosleep(&ts, NULL);
    char *av[] = { "heaptape-no-such-program", NULL };
    execvp(av[0], av);
    printf("exec %d: %s\n", i, strerror(errno));
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  printf("execfail done\n");
  return 0;
}

/* Three threads allocate for two seconds (churn: a writer left behind). */
static int churn_mode(void)
{
  pthread_t th[3];
  for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, busy, NULL);
  struct timespec ts = { 2, 0 };
  nanosleep(&ts, NULL);
  atomic_store(&stop, 1);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  printf("churn done\n");
  return 0;
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "sigexit")) sigexit_mode();
  if (!strcmp(mode, "quick")) return quick_mode();
  if (!strcmp(mode, "execfail")) return execfail_mode();
  if (!strcmp(mode, "churn")) return churn_mode();
  fprintf(stderr, "usage: hard_exit sigexit | quick | execfail | churn\n");
  return 2;
}

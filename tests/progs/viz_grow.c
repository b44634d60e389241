/* heaptape -- test program for continuous profiling: the heap grows by
** 1 MiB a second (a 1/10 MiB block every 100 ms) for argv[1] seconds. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STEP (1048576 / 10)  /* bytes kept every 100 ms */

/* Keep one more block live (never freed until exit). */
__attribute__((noinline)) static void *grow_step(void)
{
  void *p = malloc(STEP);
  if (p) memset(p, 1, STEP);
  return p;
}

/* Short-lived churn that must not show as in use. */
__attribute__((noinline)) static void churn(void)
{
  for (int i = 0; i < 50; i++) free(malloc(4096));
}

int main(int argc, char **argv)
{
  double secs = argc > 1 ? atof(argv[1]) : 4.5;
  int steps = (int)(secs * 10);
  static void *keep[100000];
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < steps && i < 100000; i++) {
    keep[i] = grow_step();
    churn();
    /* Sleep until (i + 1) * 100 ms after the start: no drift. */
    long long due = (long long)(i + 1) * 100000000LL;
    for (;;) {
      clock_gettime(CLOCK_MONOTONIC, &now);
      long long el = (now.tv_sec - t0.tv_sec) * 1000000000LL + (now.tv_nsec - t0.tv_nsec);
      if (el >= due) break;
      struct timespec ts = {0, (long)(due - el)};
      nanosleep(&ts, NULL);
    }
  }
  return keep[0] == NULL;
}

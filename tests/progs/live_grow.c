/* heaptape test program for the live view: grow_cache keeps 64 KiB more
** every 20 ms (the top site by live bytes), churn_buffers allocates and
** frees at a high rate (the top site by rate), and the program prints to
** stdout and stderr all along (output that must not reach the view's
** screen). Runs SECONDS (default 60) or until killed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void *kept[100000];               /* global: the compiler keeps the calls */
void *volatile churn_sink;        /* likewise */

/* Keep one more 64 KiB block. */
__attribute__((noinline)) static void grow_cache(int i)
{
  kept[i % 100000] = malloc(65536);
  memset(kept[i % 100000], 1, 65536);
}

/* Allocate and free many small blocks. */
__attribute__((noinline)) static void churn_buffers(void)
{
  for (int j = 0; j < 200; j++) {
    char *p = malloc(100 + j);
    churn_sink = p;
    p[0] = (char)j;
    free(churn_sink);
  }
}

int main(int argc, char **argv)
{
  double secs = argc > 1 ? atof(argv[1]) : 60;
  struct timespec nap = {0, 20000000};
  for (int i = 0; i < secs * 50; i++) {
    grow_cache(i);
    churn_buffers();
    if (i % 10 == 0) {
      printf("live_grow: step %d OUTPUT-MARKER\n", i);
      fprintf(stderr, "live_grow: stderr %d OUTPUT-MARKER\n", i);
      fflush(stdout);
    }
    nanosleep(&nap, NULL);
  }
  return 0;
}

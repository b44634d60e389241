/* heaptape -- a program whose heap is known exactly, for the report tests:
** leaks, temporaries, a realloc chain and a peak, each in its own function. */
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static void *volatile keep[16];  /* defeats dead-store elimination */

/* 3 blocks of 64 bytes that are never freed. */
NOINLINE static void leak_site(void)
{
  for (int i = 0; i < 3; i++) keep[i] = malloc(64);
}

/* 10 blocks of 32 bytes, each freed before the next allocation. */
NOINLINE static void temp_site(void)
{
  for (int i = 0; i < 10; i++) {
    char *p = malloc(32);
    memset(p, i, 32);
    keep[15] = p;
    free(p);
  }
}

/* One block grown by realloc from 100 to 400 bytes, then freed. */
NOINLINE static void grow_site(void)
{
  char *p = malloc(100);
  p = realloc(p, 200);
  p = realloc(p, 400);
  keep[14] = p;
  free(p);
}

/* 8 blocks of 10000 bytes live together: the peak. */
NOINLINE static void peak_site(void)
{
  void *b[8];
  for (int i = 0; i < 8; i++) b[i] = keep[4 + i] = malloc(10000);
  for (int i = 0; i < 8; i++) free(b[i]);
}

int main(void)
{
  leak_site();
  temp_site();
  grow_site();
  peak_site();
  return 0;
}

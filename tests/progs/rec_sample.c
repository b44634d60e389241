/* heaptape tests -- deterministic workload for the sampler: prints the exact
** count and bytes it allocated (sizes 1..65536 on a fixed cycle). */
#include <stdio.h>
#include <stdlib.h>

/* Opaque allocator calls: the compiler must not elide malloc/free pairs. */
static void *(*volatile do_malloc)(size_t) = malloc;
static void (*volatile do_free)(void *) = free;

int main(void)
{
  unsigned long long bytes = 0, count = 0;
  unsigned x = 12345;
  for (int i = 0; i < 300000; i++) {
    x = x * 1103515245u + 12345u;
    size_t n = (x >> 8) % 4096 + 1;
    if (i % 100 == 0) n = 65536;
    char *p = do_malloc(n);
    p[0] = 1;
    bytes += n;
    count++;
    do_free(p);
  }
  printf("count %llu bytes %llu\n", count, bytes);
  return 0;
}

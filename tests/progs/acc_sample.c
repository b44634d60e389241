/* heaptape test program -- a periodic access pattern for record --access
** --access-sample (tests/integration/record_access.sh). Block A (48 bytes) is
** loaded on every 4th iteration, block B (80 bytes) on the other three: the
** loop's only memory accesses at -O1 (volatile pointers, the counter kept in
** a register), so the program's accesses run B B B A B B B A ... A sampler
** taking every 4th access would keep only A or only B; a fair 1-in-4 sample
** keeps about 25 000 of A's 100 000 loads and 75 000 of B's 300 000. */
#include <stdlib.h>

int main(void)
{
  volatile long *a = malloc(48), *b = malloc(80);
  if (!a || !b) return 1;
  a[0] = 1;
  b[0] = 2;
  long sum = 0;
  for (long i = 0; i < 400000; i++) sum += (i & 3) == 3 ? a[0] : b[0];
  free((void *)a);
  free((void *)b);
  return sum == 100000 + 2 * 300000 ? 0 : 1;
}

/* heaptape tests -- a collector's burst: 3000 blocks of one size freed in a
** shuffled order, then as many taken again (glibc hands them back latest
** freed first). A sealed block of version 9 names each by its rank 0 in
** its size class; version 8 remembered only a class's latest 64 frees and
** spelled the others' addresses out. tests/data/seal_burst.tape is its
** journal (`heaptape record --journal`), sealed_v8_burst.tape that journal
** sealed by version 8. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 3000

int main(void)
{
  static void *p[N];
  static int order[N];
  uint32_t x = 12345;
  for (int i = 0; i < N; i++) { p[i] = malloc(40); order[i] = i; }
  for (int i = N - 1; i > 0; i--) {  /* a fixed shuffle (an LCG) */
    x = x * 1103515245u + 12345u;
    int j = (int)((x >> 8) % (uint32_t)(i + 1)), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (int i = 0; i < N; i++) free(p[order[i]]);
  for (int i = 0; i < N; i++) p[i] = malloc(40);
  for (int i = 0; i < N; i++) free(p[i]);
  puts("burst done");
  return 0;
}

/* heaptape tests -- blocks whose values do not fit the sealer's packed table
** (sizes of 4 GiB and more) among ordinary ones, at the same addresses: a
** pool's blocks (addresses never touched) freed, and dropped by an ALLOC of
** an address still live, moving between the packed table and the wide one. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*PoolAlloc)(const void *, size_t);
typedef int (*PoolFree)(const void *);

int main(void)
{
  PoolAlloc pa = (PoolAlloc)dlsym(RTLD_DEFAULT, "heaptape_pool_alloc");
  PoolFree pf = (PoolFree)dlsym(RTLD_DEFAULT, "heaptape_pool_free");
  if (!pa || !pf) { printf("no heaptape\n"); return 0; }
  const uintptr_t base = (uintptr_t)0x3e0000000000ull;  /* a pool's addresses */
  const size_t big = (size_t)5 << 30;
  void *keep[64];
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < 300; i++) {
      const void *p = (const void *)(base + (uintptr_t)i * 64);
      pa(p, (i + round) % 3 ? 40 + (size_t)i : big + (size_t)i);
      if (i % 7 == 0) keep[i % 64] = malloc(24 + (size_t)i);
      if (i % 7 == 3) free(keep[(i - 3) % 64]);
    }
    /* Half freed, a quarter dropped by an allocation at the live address
    ** (of the other kind: big for small, small for big). */
    for (int i = 0; i < 300; i++) {
      const void *p = (const void *)(base + (uintptr_t)i * 64);
      if (i % 2) pf(p);
      else if (i % 4 == 0) pa(p, (i + round) % 3 ? big + 2 * (size_t)i : 8 + (size_t)i);
    }
    for (int i = 0; i < 300; i += 2) pf((const void *)(base + (uintptr_t)i * 64));
  }
  for (int i = 0; i < 300; i += 5) pa((const void *)(base + (uintptr_t)i * 64), big);  /* leaked */
  printf("pool blocks\n");
  return 0;
}

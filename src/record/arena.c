/* heaptape -- the recorder's memory: zeroed pages straight from mmap, never
** through the traced allocator (libbacktrace's mmap.c does the same). */
#include <sys/mman.h>

#include "recdef.h"

/* Zeroed memory straight from mmap, page-rounded; NULL on failure. */
void *ht_arena_alloc(size_t n)
{
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Return arena memory. */
void ht_arena_free(void *p, size_t n)
{
  if (p) munmap(p, n);
}

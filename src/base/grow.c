/* heaptape -- growing a heap array by doubling.
** Used by the tape writer inside profiled programs, so it only calls realloc. */
#include <stdlib.h>
#include <string.h>
#include "grow.h"

/* Make *arrp hold need elements of size sz; new slots zeroed. */
int ht_grow(void *arrp, size_t *cap, size_t need, size_t sz)
{
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : 16;
  while (c < need) {
    if (c > SIZE_MAX / 2 / sz) return -1;
    c *= 2;
  }
  void *p = realloc(*(void **)arrp, c * sz);
  if (!p) return -1;
  memset((char *)p + *cap * sz, 0, (c - *cap) * sz);
  *(void **)arrp = p;
  *cap = c;
  return 0;
}

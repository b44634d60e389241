/* heaptape -- stacks from frame pointers, each checked against the thread's
** stack bounds so that code without frame pointers ends the walk, never faults. */
#pragma GCC optimize("no-omit-frame-pointer")
#include "unwind.h"

/* Walk the rbp chain; lo/hi bound the thread's stack (0 = unknown: no walk). */
HT_NOINLINE int ht_unwind_fp(uintptr_t *ips, int max, uintptr_t lo, uintptr_t hi)
{
  uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
  int n = 0;
  if (!hi) return 0;
  while (n < max) {
    if (fp < lo || fp > hi - 2 * sizeof(uintptr_t) || (fp & (sizeof(uintptr_t) - 1)))
      break;
    uintptr_t next = ((uintptr_t *)fp)[0], ret = ((uintptr_t *)fp)[1];
    if (ret < 4096) break;
    ips[n++] = ret;
    if (next <= fp) break;             /* stacks grow down: callers sit higher */
    fp = next;
  }
  return n;
}

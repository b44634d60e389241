/* heaptape -- the unwinder contract: fill return addresses, innermost first.
** Variants live in whole files (unwind_libunwind.c, unwind_fp.c). */
#ifndef HT_UNWIND_H
#define HT_UNWIND_H

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "record.h"

/* Every variant: no allocation through the traced allocator, no lock that
** an allocation could hold, never faults on a missing frame pointer. */

/* Fill ips with return addresses, innermost first; returns the count. Inline
** so that the recorder's slow path is the only frame of ours it walks. */
HT_INLINE int ht_unwind_libunwind(uintptr_t *ips, int max)
{
  int n = unw_backtrace((void **)ips, max);
  return n < 0 ? 0 : n;
}

#endif

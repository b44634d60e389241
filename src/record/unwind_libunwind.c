/* heaptape -- stacks from DWARF unwind tables through libunwind.
** Per-thread caching keeps unw_backtrace off global locks and signal masks. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "unwind.h"

/* Choose libunwind's lock-free per-thread cache (once, from the constructor). */
void ht_unwind_init(void)
{
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

/* Fill ips with return addresses, innermost first; returns the count. */
int ht_unwind_libunwind(uintptr_t *ips, int max)
{
  int n = unw_backtrace((void **)ips, max);
  return n < 0 ? 0 : n;
}

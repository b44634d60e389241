/* heaptape -- stacks from DWARF unwind tables through libunwind.
** Per-thread caching keeps unw_backtrace off global locks and signal masks. */
#include "unwind.h"

/* Choose libunwind's lock-free per-thread cache (once, from the constructor). */
void ht_unwind_init(void)
{
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

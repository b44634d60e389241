/* heaptape -- the unwinder contract: fill return addresses, innermost first.
** Variants live in whole files (unwind_libunwind.c, unwind_fp.c); entry points in record.h. */
#ifndef HT_UNWIND_H
#define HT_UNWIND_H

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "record.h"

/* Every variant: no allocation through the traced allocator, no lock that
** an allocation could hold, never faults on a missing frame pointer. */

#endif

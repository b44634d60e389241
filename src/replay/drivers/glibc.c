/* heaptape -- built-in replay driver: glibc malloc (ptmalloc2), with
** mallinfo2() for the allocator's own figures. */
#include <malloc.h>

#include "libc_common.h"

/* Make sure the process's malloc is glibc's. */
static int glibc_init(void **st, const char *args)
{
  (void)args;
  *st = NULL;
  return lc_init_check("libc.so");
}

/* In-use and obtained bytes from mallinfo2. */
static int glibc_stats(void *st, heaptape_driver_stats *s)
{
  (void)st;
  struct mallinfo2 mi = mallinfo2();
  s->in_use = mi.uordblks + mi.hblkhd;
  s->mapped = mi.arena + mi.hblkhd;
  return 0;
}

static const heaptape_driver glibc_driver = {
  .version = HEAPTAPE_DRIVER_VERSION, .name = "glibc", .preload = NULL,
  .init = glibc_init, .malloc = lc_malloc, .calloc = lc_calloc, .aligned = lc_aligned,
  .realloc = lc_realloc, .free = lc_free, .stats = glibc_stats,
};

/* The driver table. */
const heaptape_driver *heaptape_driver_get(void)
{
  return &glibc_driver;
}

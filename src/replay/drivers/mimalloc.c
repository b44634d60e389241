/* heaptape -- built-in replay driver: mimalloc (Debian libmimalloc2.0,
** preloaded), with mi_process_info's committed bytes as its mapped memory. */
#include "libc_common.h"

typedef void (*MiInfoFn)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *,
                         size_t *, size_t *);

static MiInfoFn mi_info;  /* mi_process_info of the preloaded mimalloc */

/* Find mi_process_info and make sure malloc is mimalloc's. */
static int mi_init(void **st, const char *args)
{
  (void)args;
  *st = NULL;
  mi_info = (MiInfoFn)(void (*)(void))dlsym(RTLD_DEFAULT, "mi_process_info");
  return mi_info ? lc_init_check("mimalloc") : -1;
}

/* Committed memory (mimalloc keeps no cheap in-use total in release builds). */
static int mi_stats(void *st, heaptape_driver_stats *s)
{
  (void)st;
  size_t el, us, sy, rss, prss, commit = 0, pcommit, pf;
  mi_info(&el, &us, &sy, &rss, &prss, &commit, &pcommit, &pf);
  s->mapped = commit;
  return 0;
}

static const heaptape_driver mi_driver = {
  .version = HEAPTAPE_DRIVER_VERSION, .name = "mimalloc", .preload = "libmimalloc.so.2",
  .init = mi_init, .malloc = lc_malloc, .calloc = lc_calloc, .aligned = lc_aligned,
  .realloc = lc_realloc, .free = lc_free, .stats = mi_stats,
};

/* The driver table. */
const heaptape_driver *heaptape_driver_get(void)
{
  return &mi_driver;
}

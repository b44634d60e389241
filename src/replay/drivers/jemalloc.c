/* heaptape -- built-in replay driver: jemalloc (Debian libjemalloc2, preloaded),
** with mallctl stats.allocated / stats.mapped for its own figures. */
#include "libc_common.h"

typedef int (*MallctlFn)(const char *, void *, size_t *, void *, size_t);

static MallctlFn je_ctl;  /* mallctl of the preloaded jemalloc */

/* Find mallctl and make sure malloc is jemalloc's. */
static int je_init(void **st, const char *args)
{
  (void)args;
  *st = NULL;
  je_ctl = (MallctlFn)(void (*)(void))dlsym(RTLD_DEFAULT, "mallctl");
  return je_ctl ? lc_init_check("jemalloc") : -1;
}

/* Refresh jemalloc's statistics and read them. */
static int je_stats(void *st, heaptape_driver_stats *s)
{
  (void)st;
  uint64_t epoch = 1;
  size_t len = sizeof(epoch), v = 0, vl = sizeof(v);
  je_ctl("epoch", &epoch, &len, &epoch, sizeof(epoch));
  if (!je_ctl("stats.allocated", &v, &vl, NULL, 0)) s->in_use = v;
  vl = sizeof(v);
  if (!je_ctl("stats.mapped", &v, &vl, NULL, 0)) s->mapped = v;
  return 0;
}

static const heaptape_driver je_driver = {
  .version = HEAPTAPE_DRIVER_VERSION, .name = "jemalloc", .preload = "libjemalloc.so.2",
  .init = je_init, .malloc = lc_malloc, .calloc = lc_calloc, .aligned = lc_aligned,
  .realloc = lc_realloc, .free = lc_free, .stats = je_stats,
};

/* The driver table. */
const heaptape_driver *heaptape_driver_get(void)
{
  return &je_driver;
}

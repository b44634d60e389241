/* heaptape -- built-in replay driver: tcmalloc (gperftools' libtcmalloc_minimal,
** preloaded), with MallocExtension properties for its own figures. */
#include "libc_common.h"

typedef int (*TcPropFn)(const char *, size_t *);

static TcPropFn tc_prop;  /* MallocExtension_GetNumericProperty */

/* Find the MallocExtension C API and make sure malloc is tcmalloc's. */
static int tc_init(void **st, const char *args)
{
  (void)args;
  *st = NULL;
  tc_prop = (TcPropFn)(void (*)(void))dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
  return tc_prop ? lc_init_check("tcmalloc") : -1;
}

/* Allocated bytes and the heap obtained from the OS minus what it unmapped. */
static int tc_stats(void *st, heaptape_driver_stats *s)
{
  (void)st;
  size_t v = 0, unm = 0;
  if (tc_prop("generic.current_allocated_bytes", &v)) s->in_use = v;
  if (tc_prop("generic.heap_size", &v)) {
    tc_prop("tcmalloc.pageheap_unmapped_bytes", &unm);
    s->mapped = v - unm;
  }
  return 0;
}

static const heaptape_driver tc_driver = {
  .version = HEAPTAPE_DRIVER_VERSION, .name = "tcmalloc", .preload = "libtcmalloc_minimal.so.4",
  .init = tc_init, .malloc = lc_malloc, .calloc = lc_calloc, .aligned = lc_aligned,
  .realloc = lc_realloc, .free = lc_free, .stats = tc_stats,
};

/* The driver table. */
const heaptape_driver *heaptape_driver_get(void)
{
  return &tc_driver;
}

/* heaptape tests -- a replay driver over glibc malloc that fails every Nth
** allocation (--driver alloc_failing.so:N; 0 = never) and counts its bytes. */
#include <stdlib.h>

#include "heaptape_driver.h"

typedef struct Fail {
  unsigned long every;       /* fail every Nth allocation (0 = never) */
  unsigned long n;           /* allocations asked for */
  uint64_t in_use;           /* bytes of the blocks handed out and not freed */
} Fail;

static Fail fail_st;  /* the one state (the runner loads the driver once) */

/* Parse N. */
static int fail_init(void **st, const char *args)
{
  fail_st.every = strtoul(args, NULL, 10);
  *st = &fail_st;
  return 0;
}

/* Whether this allocation is one to fail. */
static int fail_now(Fail *f)
{
  return f->every && ++f->n % f->every == 0;
}

/* malloc, failing every Nth. */
static void *fail_malloc(void *st, size_t size, uint64_t handle)
{
  Fail *f = st;
  (void)handle;
  if (fail_now(f)) return NULL;
  void *p = malloc(size ? size : 1);
  if (p) f->in_use += size;
  return p;
}

/* realloc, failing every Nth (the old block stays). */
static void *fail_realloc(void *st, void *old, size_t old_size, size_t size, uint64_t handle)
{
  Fail *f = st;
  (void)handle;
  if (fail_now(f)) return NULL;
  void *p = realloc(old, size ? size : 1);
  if (p) f->in_use += size - old_size;
  return p;
}

/* free. */
static void fail_free(void *st, void *p, size_t size, uint64_t handle)
{
  Fail *f = st;
  (void)handle;
  f->in_use -= size;
  free(p);
}

/* The bytes this driver holds for the runner. */
static int fail_stats(void *st, heaptape_driver_stats *s)
{
  s->in_use = ((Fail *)st)->in_use;
  return 0;
}

static const heaptape_driver fail_driver = {
  .version = HEAPTAPE_DRIVER_VERSION, .name = "failing", .init = fail_init,
  .malloc = fail_malloc, .realloc = fail_realloc, .free = fail_free, .stats = fail_stats,
};

/* The driver table. */
const heaptape_driver *heaptape_driver_get(void)
{
  return &fail_driver;
}

/* heaptape -- shared body of the built-in drivers: the process's own malloc
** family (the allocator the runner was started with via LD_PRELOAD). */
#ifndef HT_LIBC_COMMON_H
#define HT_LIBC_COMMON_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heaptape_driver.h"

/* Check that malloc comes from the library whose file name contains stem. */
static int lc_init_check(const char *stem)
{
  Dl_info di;
  void *m = dlsym(RTLD_DEFAULT, "malloc");
  if (!m || !dladdr(m, &di) || !di.dli_fname || !strstr(di.dli_fname, stem)) {
    fprintf(stderr, "heaptape driver: malloc is not %s's (it is %s)\n", stem,
            m && di.dli_fname ? di.dli_fname : "unknown");
    return -1;
  }
  return 0;
}

/* A block of size bytes. */
static void *lc_malloc(void *st, size_t size, uint64_t handle)
{
  (void)st; (void)handle;
  return malloc(size);
}

/* A zeroed block. */
static void *lc_calloc(void *st, size_t size, uint64_t handle)
{
  (void)st; (void)handle;
  return calloc(1, size);
}

/* An aligned block. */
static void *lc_aligned(void *st, size_t align, size_t size, uint64_t handle)
{
  (void)st; (void)handle;
  void *p = NULL;
  if (align < sizeof(void *)) align = sizeof(void *);
  return posix_memalign(&p, align, size) ? NULL : p;
}

/* Resize a block. */
static void *lc_realloc(void *st, void *old, size_t old_size, size_t size, uint64_t handle)
{
  (void)st; (void)old_size; (void)handle;
  return realloc(old, size ? size : 1);
}

/* Release a block. */
static void lc_free(void *st, void *p, size_t size, uint64_t handle)
{
  (void)st; (void)size; (void)handle;
  free(p);
}

#endif

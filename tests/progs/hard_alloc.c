/* heaptape tests -- allocator edge semantics a recorder must pass through unchanged:
** aligned allocators with odd alignments and sizes, errno across successful calls. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* C++ operator new / delete, by their mangled names (linked with -lstdc++). */
void *_Znwm(size_t);
void *_Znam(size_t);
void _ZdlPv(void *);
void _ZdaPv(void *);
void _ZdlPvm(void *, size_t);

#define SENTINEL 4242       /* errno value no allocator call sets */

/* Opaque allocator calls: the compiler must not fold or elide them. */
static void *(*volatile do_aligned_alloc)(size_t, size_t) = aligned_alloc;
static int (*volatile do_posix_memalign)(void **, size_t, size_t) = posix_memalign;
static void *(*volatile do_memalign)(size_t, size_t) = memalign;
static void *(*volatile do_valloc)(size_t) = valloc;
static void *(*volatile do_pvalloc)(size_t) = pvalloc;
static void *(*volatile do_malloc)(size_t) = malloc;
static void *(*volatile do_calloc)(size_t, size_t) = calloc;
static void *(*volatile do_realloc)(void *, size_t) = realloc;
static void *(*volatile do_reallocarray)(void *, size_t, size_t) = reallocarray;
static void (*volatile do_free)(void *) = free;

/* The smallest power of two >= a (a >= 1). */
static size_t pow2_ceil(size_t a)
{
  size_t p = 1;
  while (p < a) p <<= 1;
  return p;
}

/* One line for a result p of NAME(al, size): NULL or not, errno, misalignment
** (against the power of two glibc rounds al up to), usable size >= size. */
static void show(const char *name, size_t al, size_t size, void *p, int err)
{
  printf("%-17s al %6zu size %20zu: %s errno %d", name, al, size, p ? "ptr " : "NULL", err);
  if (p && al) printf(" mis %zu", (size_t)((uintptr_t)p % pow2_ceil(al)));
  if (p) printf(" usable>=size %d", malloc_usable_size(p) >= size);
  printf("\n");
}

/* Every aligned allocator with odd alignments and sizes. */
static int align_mode(void)
{
  static const size_t als[] = { 0, 3, 24, 48, 100, 12288, 16, 4096, 1, 8, 65536 };
  static const size_t sizes[] = { 0, 1, 24, 100, 4097, 12288, 1 << 20, SIZE_MAX - 4096, SIZE_MAX / 2 };
  for (size_t i = 0; i < sizeof(als) / sizeof(als[0]); i++)
    for (size_t j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
      size_t al = als[i], size = sizes[j];
      errno = 0;
      void *p = do_aligned_alloc(al, size);
      show("aligned_alloc", al, size, p, errno);
      do_free(p);
      errno = 0;
      p = NULL;
      int rc = do_posix_memalign(&p, al, size);
      char name[32];
      snprintf(name, sizeof(name), "posix_memalign=%d", rc);
      show(name, al, size, rc ? NULL : p, errno);
      if (!rc) do_free(p);
      errno = 0;
      p = do_memalign(al, size);
      show("memalign", al, size, p, errno);
      do_free(p);
    }
  for (size_t j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
    errno = 0;
    void *p = do_valloc(sizes[j]);
    show("valloc", 4096, sizes[j], p, errno);
    do_free(p);
    errno = 0;
    p = do_pvalloc(sizes[j]);
    show("pvalloc", 4096, sizes[j], p, errno);
    do_free(p);
  }
  return 0;
}

/* Report err, errno after a successful call named what; reset errno. */
static void keep(const char *what, int err)
{
  printf("%-30s errno %d%s\n", what, err, err == SENTINEL ? "" : " CHANGED");
  errno = SENTINEL;
}

/* Successful allocator calls of every kind, errno set to SENTINEL before each. */
static void errno_run(const char *who)
{
  char what[64];
  int err;
#define K(name) (err = errno, snprintf(what, sizeof(what), "%s %s", who, name), keep(what, err))
  errno = SENTINEL;
  void *a = do_malloc(100); K("malloc 100");
  void *b = do_malloc(1 << 20); K("malloc 1 MiB");
  void *c = do_calloc(10, 100); K("calloc 10x100");
  void *d = do_calloc(1, 1 << 20); K("calloc 1 MiB");
  a = do_realloc(a, 5000); K("realloc grow");
  a = do_realloc(a, 10); K("realloc shrink");
  b = do_realloc(b, 2 << 20); K("realloc mmapped");
  void *e = do_realloc(NULL, 64); K("realloc NULL");
  e = do_reallocarray(e, 10, 64); K("reallocarray");
  void *f = do_aligned_alloc(64, 640); K("aligned_alloc");
  void *g = NULL;
  do_posix_memalign(&g, 256, 1000); K("posix_memalign");
  void *h = do_memalign(4096, 100); K("memalign");
  void *n = _Znwm(48); K("operator new");
  void *na = _Znam(480); K("operator new[]");
  void *ns = _Znwm(40); K("operator new (sized del)");
  _ZdlPv(n); K("operator delete");
  _ZdaPv(na); K("operator delete[]");
  _ZdlPvm(ns, 40); K("operator delete sized");
  do_free(a); K("free small");
  do_free(b); K("free mmapped");
  do_free(c); K("free calloc");
  do_free(d); K("free calloc 1 MiB");
  do_free(e); K("free reallocarray");
  do_free(f); K("free aligned");
  do_free(g); K("free posix_memalign");
  do_free(h); K("free memalign");
  do_free(NULL); K("free NULL");
#undef K
}

/* A new thread whose very first heap operation is checked. */
static void *errno_thread(void *arg)
{
  (void)arg;
  errno_run("thread");
  return NULL;
}

/* errno across successful calls, in main and as a new thread's first calls. */
static int errno_mode(void)
{
  errno_run("main");
  pthread_t th;
  pthread_create(&th, NULL, errno_thread, NULL);
  pthread_join(th, NULL);
  return 0;
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "align")) return align_mode();
  if (!strcmp(mode, "errno")) return errno_mode();
  fprintf(stderr, "usage: hard_alloc align | errno\n");
  return 2;
}

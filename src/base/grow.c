/* heaptape -- growing a heap array by doubling, and transparent huge pages
** for the large arrays of the tools. The recorder uses ht_grow too (inside
** profiled programs): it only calls realloc, and the rest is off there. */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "grow.h"

#define HUGE_PAGE HT_HUGE_PAGE

static int huge_on;                   /* ht_huge_pages: the tools only */

/* The heap's first HEAP_PAD on transparent huge pages, for the commands
** that load a sealed tape's aggregate section: their memory is mostly
** blocks under 2 MiB (the model's maps, names, callers, groups) filled at
** once, and their 4 KiB pages' faults were most of their time on a virtual
** machine (cc1plus's report: 3,143 faults, 513 after; 0.64x the time).
** glibc grows the heap by M_TOP_PAD at its first growth, made here, and
** the range is advised once; the heap grown past it is not (a range of its
** own). The readers of events too, since their decoders and pictures lie on
** huge pages (sqlite3's lifetimes 0.61x, heapmap 0.78x; it was 1.37x when
** the decoders' own 4 KiB pages dominated). */
#define HEAP_PAD ((size_t)64 << 20)

void ht_huge_heap(void)
{
  if (!huge_on) return;
  mallopt(M_TOP_PAD, (int)HEAP_PAD);
  /* One arena: a thread's own would be a heap of 4 KiB pages (the tape's
  ** names loaded on one faulted twice as often). */
  mallopt(M_ARENA_MAX, 1);
  char *b0 = sbrk(0);
  char *volatile p = malloc(256 << 10);  /* more than the top holds: the heap
                                            grows (volatile: gcc drops a
                                            malloc freed unused) */
  char *b1 = sbrk(0);
  free(p);
  uintptr_t a = ((uintptr_t)b0 + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  uintptr_t e = (uintptr_t)b1 & ~(uintptr_t)(HUGE_PAGE - 1);
  if (b0 != (char *)-1 && b1 != (char *)-1 && e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
}

/* Let the functions below ask for transparent huge pages. glibc raises its
** mmap threshold to the size of each mapped block freed (up to 32 MiB),
** after which large arrays come from the heap and stay there once freed
** (cc1plus's html: 6 MB more at its peak); pinned at 128 KiB, every event
** block's buffers were mapped and faulted anew. Pinned at 2 MiB: the arrays
** on huge pages are mapped and go back when freed, the blocks' buffers are
** reused; the heap is trimmed past twice that, as glibc itself would. */
void ht_huge_pages(int on)
{
  huge_on = on;
  if (!on) return;
  mallopt(M_MMAP_THRESHOLD, (int)HUGE_PAGE);
  mallopt(M_TRIM_THRESHOLD, (int)(2 * HUGE_PAGE));
}

/* Ask for transparent huge pages over the 2 MiB-aligned inside of an array
** about to be filled: the system's default ("madvise") gives every 4 KiB
** page its own fault, ~10 us each on a virtual machine (a 9 MB table faulted
** 30 ms in, 4 ms on huge pages). Arrays under 2 MiB are left be. */
static void huge_hint(void *p, size_t bytes)
{
  if (!huge_on || !p || bytes < HUGE_PAGE) return;
  uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  uintptr_t e = ((uintptr_t)p + bytes) & ~(uintptr_t)(HUGE_PAGE - 1);
  if (e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
}

/* malloc(bytes); a large array starts on a huge page boundary (no 4 KiB
** pages at its start) and on huge pages. Freed by free(). */
void *ht_huge_alloc(size_t bytes)
{
  void *p;
  if (!huge_on || bytes < HUGE_PAGE) return malloc(bytes);
  if (posix_memalign(&p, HUGE_PAGE, bytes)) return NULL;
  huge_hint(p, bytes);
  return p;
}

/* Give back the pages of an array past its first `used` bytes of `cap`
** (whole 4 KiB pages): on huge pages its last one is otherwise resident
** whole, up to 2 MiB unused. Those bytes read as zeros afterwards. */
void ht_huge_trim(void *p, size_t used, size_t cap)
{
  if (!huge_on || !p || cap < HUGE_PAGE) return;
  uintptr_t a = ((uintptr_t)p + used + 4095) & ~(uintptr_t)4095;
  uintptr_t e = ((uintptr_t)p + cap) & ~(uintptr_t)4095;
  if (e > a) madvise((void *)a, e - a, MADV_DONTNEED);
}

/* realloc of p (old bytes in use) to bytes; a large array on huge pages
** moves by malloc, hint, copy and free: realloc's mremap would keep its
** 4 KiB pages, and after a hint (the mapping split in three) cannot. */
void *ht_huge_realloc(void *p, size_t old, size_t bytes)
{
  if (!huge_on || bytes < HUGE_PAGE) return realloc(p, bytes);
  void *q = ht_huge_alloc(bytes);
  if (!q) return NULL;
  if (p) memcpy(q, p, old < bytes ? old : bytes);
  free(p);
  return q;
}

/* Make *arrp hold need elements of size sz; new slots zeroed. */
int ht_grow(void *arrp, size_t *cap, size_t need, size_t sz)
{
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : 16;
  while (c < need) {
    if (c > SIZE_MAX / 2 / sz) return -1;
    c *= 2;
  }
  void *p = realloc(*(void **)arrp, c * sz);
  if (!p) return -1;
  memset((char *)p + *cap * sz, 0, (c - *cap) * sz);
  *(void **)arrp = p;
  *cap = c;
  return 0;
}

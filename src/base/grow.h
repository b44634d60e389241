/* heaptape -- growing a heap array by doubling, the one helper for it. */
#ifndef HT_GROW_H
#define HT_GROW_H

#include "ht_def.h"

/* Make the array *arrp (a T ** passed as void *) of *cap elements of size sz
** hold at least need: its capacity doubles from 16, the new slots are zeroed.
** 0, or -1 when out of memory (the array is then unchanged). */
int ht_grow(void *arrp, size_t *cap, size_t need, size_t sz) HT_HIDDEN;

/* Transparent huge pages for large arrays (2 MiB and more) about to be
** filled (hash tables have their own: ht_table_alloc, map.h): ht_huge_alloc
** allocates such an array aligned to a huge page and asks for them (free()
** frees it), ht_huge_realloc moves one; they are plain malloc, realloc
** and nothing until ht_huge_pages(1) (which also pins glibc's mmap and trim
** thresholds: grow.c). The tools turn it on at start (html off again for
** its flame tree); the recorder never does: inside a profiled program its
** memory stays as plain as it can. */
void ht_huge_pages(int on) HT_HIDDEN;
#define HT_HUGE_PAGE ((size_t)2 << 20)  /* x86-64's transparent huge page */
/* After ht_huge_pages(1): the heap's first 64 MiB on huge pages too (for
** the commands that read an aggregate section or the events; grow.c says
** why). */
void ht_huge_heap(void) HT_HIDDEN;
void *ht_huge_alloc(size_t bytes) HT_HIDDEN;
/* The pages of an array past its first used bytes of cap given back (they
** read as zeros after). */
void ht_huge_trim(void *p, size_t used, size_t cap) HT_HIDDEN;
/* realloc(p, bytes) of an array whose first old bytes are in use, on huge
** pages when it is large (and ht_huge_pages is on). */
void *ht_huge_realloc(void *p, size_t old, size_t bytes) HT_HIDDEN;

#endif

/* heaptape -- unit tests of the compacting replay driver
** (src/replay/drivers/compact.c, compiled in): hand-made op sequences with
** a pinned block above a hole, and the heap's size after them worked out by
** hand. Blocks of U bytes (a 16-byte header and U - 16 of payload), so that
** a hole of one block is the 64 KiB a compaction needs at least. */
#include <stdio.h>
#include <string.h>

#include "testhelper.h"
#include "replay/drivers/compact.c"

#define U 65536u
#define PAY (U - 16)

static Heap *heap_new(void)
{
  void *st = NULL;
  CHECK_EQ(compact_init(&st, "heap=64M"), 0);
  return st;
}

/* Every header from base to top: live blocks point back at their table
** entry, holes add up to H->holes; the stats agree. */
static void check_walk(Heap *H)
{
  uint64_t holes = 0;
  unsigned char *q = H->base;
  while (q < H->top) {
    Hdr *b = (Hdr *)q;
    CHECK(b->size >= sizeof(Hdr) && b->size % ALIGN == 0);
    if (!b->size) return;
    if (b->idx) CHECK(H->tab[b->idx - 1].p == q);
    else holes += b->size;
    q += b->size;
  }
  CHECK(q == H->top);
  CHECK_EQ(holes, H->holes);
}

static void fill(Heap *H, void *h, int c)
{
  memset(compact_lock(H, h), c, PAY);
  compact_unlock(H, h);
}

static int holds(Heap *H, void *h, int c)
{
  unsigned char *p = compact_lock(H, h);
  int ok = 1;
  for (size_t i = 0; i < PAY; i++) ok &= p[i] == c;
  compact_unlock(H, h);
  return ok;
}

/* h1 h2 h3 h4, h2 locked, h1 and h3 freed: holes [0,U) below the pinned h2
** and [2U,3U). The next malloc compacts: h4 has to move and fits the gap
** below h2, so it goes there (a slide would put it at 2U and leave the gap);
** the top comes down to 2U, and h5 goes on top: a heap of 3U, no holes.
** (Without the gaps: h4 at 2U, h5 at 3U, a heap of 4U with U of holes.) */
static void test_slide_into_gap(void)
{
  Heap *H = heap_new();
  void *h1 = compact_malloc(H, PAY, 1), *h2 = compact_malloc(H, PAY, 2);
  void *h3 = compact_malloc(H, PAY, 3), *h4 = compact_malloc(H, PAY, 4);
  fill(H, h2, 2);
  fill(H, h4, 4);
  compact_lock(H, h2);
  compact_free(H, h1, PAY, 1);
  compact_free(H, h3, PAY, 3);
  void *h5 = compact_malloc(H, PAY, 5);
  CHECK(h5 != NULL);
  heaptape_driver_stats s = {0};
  compact_stats(H, &s);
  CHECK_EQ(s.compactions, 1);
  CHECK_EQ(s.moved, U);
  CHECK_EQ(s.mapped, 3 * U);
  CHECK_EQ(s.in_use, 3 * U);
  CHECK(compact_get(H, h4)->p == H->base);      /* in the gap below h2 */
  CHECK(compact_get(H, h2)->p == H->base + U);  /* pinned: where it was */
  CHECK(compact_get(H, h5)->p == H->base + 2 * U);
  CHECK(holds(H, h4, 4));
  CHECK(holds(H, h2, 2));
  check_walk(H);
  compact_destroy(H);
}

/* h1 h2 h3, h3 locked, h1 and h2 freed: a hole of 2U below the pinned h3
** and nothing above it to move in. The next malloc compacts (the top cannot
** come down past h3: a gap of 2U) and is carved from the gap, as the one
** after it: a heap of 3U all in use. (Without the gaps: h4 at 3U, h5 at 4U,
** a heap of 5U with 2U of holes.) */
static void test_allocate_into_gap(void)
{
  Heap *H = heap_new();
  void *h1 = compact_malloc(H, PAY, 1), *h2 = compact_malloc(H, PAY, 2);
  void *h3 = compact_malloc(H, PAY, 3);
  compact_lock(H, h3);
  compact_free(H, h1, PAY, 1);
  compact_free(H, h2, PAY, 2);
  void *h4 = compact_malloc(H, PAY, 4);
  heaptape_driver_stats s = {0};
  compact_stats(H, &s);
  CHECK_EQ(s.compactions, 1);
  CHECK_EQ(s.moved, 0);
  CHECK_EQ(s.mapped, 3 * U);
  CHECK_EQ(s.in_use, 2 * U);
  CHECK(compact_get(H, h4)->p == H->base);
  check_walk(H);
  void *h5 = compact_malloc(H, PAY, 5);
  compact_stats(H, &s);
  CHECK_EQ(s.mapped, 3 * U);
  CHECK_EQ(s.in_use, 3 * U);
  CHECK(compact_get(H, h5)->p == H->base + U);
  check_walk(H);
  /* Unpinned and freed below: a later compaction closes up as before. */
  fill(H, h5, 5);
  compact_unlock(H, h3);
  compact_free(H, h4, PAY, 4);
  compact_free(H, h3, PAY, 3);  /* the last block: the top comes down */
  compact_stats(H, &s);
  CHECK_EQ(s.mapped, 2 * U);
  CHECK_EQ(compact_oom(H, PAY), 1);
  compact_stats(H, &s);
  CHECK_EQ(s.mapped, U);
  CHECK_EQ(s.in_use, U);
  CHECK(holds(H, h5, 5));
  check_walk(H);
  compact_destroy(H);
}

/* A gap too small for the block that moves: it slides, the gap stays, and a
** small allocation later is carved from it (the rest stays a hole). */
static void test_gap_too_small(void)
{
  Heap *H = heap_new();
  void *a = compact_malloc(H, 4096 - 16, 1), *p = compact_malloc(H, 4096 - 16, 2);
  void *h1 = compact_malloc(H, PAY, 3), *h2 = compact_malloc(H, PAY, 4);
  compact_lock(H, p);
  compact_free(H, a, 4096 - 16, 1);
  compact_free(H, h1, PAY, 3);
  compact_malloc(H, PAY, 5);  /* compacts: h2 slides to 8K (the gap of 4K is too small) */
  heaptape_driver_stats s = {0};
  compact_stats(H, &s);
  CHECK_EQ(s.compactions, 1);
  CHECK(compact_get(H, h2)->p == H->base + 8192);
  CHECK_EQ(s.mapped, 8192 + 2 * U);
  CHECK_EQ(s.in_use, 4096 + 2 * U);
  void *small = compact_malloc(H, 1024 - 16, 6);
  CHECK(compact_get(H, small)->p == H->base);
  compact_stats(H, &s);
  CHECK_EQ(s.mapped, 8192 + 2 * U);
  CHECK_EQ(s.in_use, 4096 + 1024 + 2 * U);
  check_walk(H);
  compact_destroy(H);
}

int main(void)
{
  TEST(test_slide_into_gap);
  TEST(test_allocate_into_gap);
  TEST(test_gap_too_small);
  return th_summary();
}

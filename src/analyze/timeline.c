/* heaptape -- the heap over time in a fixed number of buckets.
** The resolution is chosen by the tape itself: buckets double in width. */
#include <string.h>
#include "timeline.h"

/* Start empty with the initial resolution. */
void ht_timeline_init(HtTimeline *t)
{
  memset(t, 0, sizeof(*t));
  t->res = HT_TL_RES0;
}

/* Halve the number of buckets by merging neighbours (max of each pair). */
static void timeline_merge(HtTimeline *t)
{
  uint32_t n = (t->n + 1) / 2;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t a = 2 * i, b = 2 * i + 1;
    uint64_t h = t->heap[a], r = t->rss[a];
    if (b < t->n) {
      if (t->heap[b] > h) h = t->heap[b];
      if (t->rss[b] > r) r = t->rss[b];
    }
    t->heap[i] = h;
    t->rss[i] = r;
  }
  memset(t->heap + n, 0, (HT_TL_BUCKETS - n) * sizeof(uint64_t));
  memset(t->rss + n, 0, (HT_TL_BUCKETS - n) * sizeof(uint64_t));
  t->n = n;
  t->res *= 2;
}

/* Bucket of ts, opening buckets up to it (empty ones carry the heap). */
static uint32_t timeline_bucket(HtTimeline *t, uint64_t ts)
{
  while (ts / t->res >= HT_TL_BUCKETS) timeline_merge(t);
  uint32_t i = (uint32_t)(ts / t->res);
  while (t->n <= i) t->heap[t->n++] = t->cur;
  return i;
}

/* The heap became `heap` bytes at time ts. */
void ht_timeline_heap(HtTimeline *t, uint64_t ts, uint64_t heap)
{
  uint32_t i = timeline_bucket(t, ts);
  t->cur = heap;
  if (heap > t->heap[i]) t->heap[i] = heap;
}

/* An RSS sample at time ts. */
void ht_timeline_rss(HtTimeline *t, uint64_t ts, uint64_t rss)
{
  uint32_t i = timeline_bucket(t, ts);
  if (rss > t->rss[i]) t->rss[i] = rss;
}

/* heaptape -- the heap over time: a fixed number of buckets whose width
** doubles whenever the tape outgrows them, so memory never grows. */
#ifndef HT_TIMELINE_H
#define HT_TIMELINE_H

#include "../base/ht_def.h"

#define HT_TL_BUCKETS 512      /* buckets kept; halved by merging when full */
#define HT_TL_RES0 1000000ull  /* initial bucket width: 1 ms */

typedef struct HtTimeline {
  uint64_t res;              /* bucket width in ns */
  uint32_t n;                /* buckets used (0..n-1) */
  uint64_t heap[HT_TL_BUCKETS]; /* largest heap within each bucket */
  uint64_t rss[HT_TL_BUCKETS];  /* largest RSS within each bucket, 0 = none */
  uint64_t cur;              /* heap now (carried into empty buckets) */
} HtTimeline;

/* Start empty with the initial resolution. */
void ht_timeline_init(HtTimeline *t) HT_HIDDEN;
/* The heap became `heap` bytes at time ts (ns since the start). */
void ht_timeline_heap(HtTimeline *t, uint64_t ts, uint64_t heap) HT_HIDDEN;
/* An RSS sample of `rss` bytes at time ts. */
void ht_timeline_rss(HtTimeline *t, uint64_t ts, uint64_t rss) HT_HIDDEN;

#endif

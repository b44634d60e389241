/* heaptape -- deliver a tape's events through a lookahead ring, so a consumer
** whose per-event table lookups miss the caches can prefetch them. */
#ifndef HT_PUMP_H
#define HT_PUMP_H

#include "../format/reader.h"

/* Called for every ALLOC and FREE when it enters the ring (start loads). */
typedef void (*HtPumpPrefetch)(void *ctx, const HtEvent *ev);
/* Called for every event, in order, when it leaves the ring. */
typedef void (*HtPumpApply)(void *ctx, const HtEvent *ev);

/* Read every event of r: prefetch(ctx, ev) for ALLOC and FREE events about
** 16 events before apply(ctx, ev) (prefetch may be NULL). Events whose strings point into the
** reader's buffers (threads, marks, modules) are applied with the ring
** drained first, so their pointers are still valid. */
void ht_pump_run(HtReader *r, HtPumpPrefetch prefetch, HtPumpApply apply, void *ctx) HT_HIDDEN;

#endif

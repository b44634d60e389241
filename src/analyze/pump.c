/* heaptape -- the lookahead event ring shared by the model and the summary
** pass of finalisation: big live tables are cache misses, prefetched early. */
#include "pump.h"

#define PUMP_LOOK 16 /* events between a prefetch and its use */
#define PUMP_BATCH 64 /* a sealed tape's events taken at once */

/* A sealed tape's events, PUMP_BATCH at a time (a MODULE alone: the batch
** ends before it); the prefetch runs PUMP_LOOK events ahead inside a batch. */
static void pump_sealed(HtReader *r, HtPumpPrefetch prefetch, HtPumpApply apply, void *ctx)
{
  HtEvent ev[PUMP_BATCH];
  int n;
  while ((n = ht_reader_events(r, ev, PUMP_BATCH)) > 0) {
    if (!prefetch) {
      for (int i = 0; i < n; i++) apply(ctx, &ev[i]);
      continue;
    }
    for (int i = 0; i < n && i < PUMP_LOOK; i++)
      if (ev[i].type == HT_EV_ALLOC || ev[i].type == HT_EV_FREE) prefetch(ctx, &ev[i]);
    for (int i = 0; i < n; i++) {
      int k = i + PUMP_LOOK;
      if (k < n && (ev[k].type == HT_EV_ALLOC || ev[k].type == HT_EV_FREE))
        prefetch(ctx, &ev[k]);
      apply(ctx, &ev[i]);
    }
  }
}

/* Read every event of r through the ring. */
void ht_pump_run(HtReader *r, HtPumpPrefetch prefetch, HtPumpApply apply, void *ctx)
{
  if (ht_reader_sealed(r)) {
    pump_sealed(r, prefetch, apply, ctx);
    return;
  }
  HtEvent ring[PUMP_LOOK];
  size_t head = 0, n = 0;
  for (;;) {
    HtEvent *ev = &ring[(head + n) % PUMP_LOOK];
    int more = ht_reader_next(r, ev) > 0;
    int plain = more && (ev->type == HT_EV_ALLOC || ev->type == HT_EV_FREE);
    if (plain) {
      if (prefetch) prefetch(ctx, ev);
      n++;
    }
    /* Apply events leaving the ring: all of them at a barrier or the end. */
    while (n && (n == PUMP_LOOK || !plain)) {
      apply(ctx, &ring[head]);
      head = (head + 1) % PUMP_LOOK;
      n--;
    }
    if (!more) break;
    if (!plain) apply(ctx, ev); /* the ring is empty: ev's slot is unused */
  }
}

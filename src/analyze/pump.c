/* heaptape -- the lookahead event ring shared by the model and the summary
** pass of finalisation: big live tables are cache misses, prefetched early. */
#include "pump.h"

#define PUMP_LOOK 16 /* events between a prefetch and its use */

/* Read every event of r through the ring. */
void ht_pump_run(HtReader *r, HtPumpPrefetch prefetch, HtPumpApply apply, void *ctx)
{
  HtEvent ring[PUMP_LOOK];
  size_t head = 0, n = 0;
  for (;;) {
    HtEvent *ev = &ring[(head + n) % PUMP_LOOK];
    int more = ht_reader_next(r, ev) > 0;
    int plain = more && (ev->type == HT_EV_ALLOC || ev->type == HT_EV_FREE);
    if (plain) {
      prefetch(ctx, ev);
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

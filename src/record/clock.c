/* heaptape -- the recorder's clocks: a coarse clock the writer thread
** publishes every millisecond, read by events with one relaxed load. */
#include <time.h>

#include "recdef.h"

static uint64_t clock_t0;              /* CLOCK_MONOTONIC at start, ns */
static int clock_direct;               /* sampled: events read the clock themselves */
static _Atomic uint64_t clock_now;     /* coarse clock: ns since start */

/* Nanoseconds on clock clk. */
uint64_t ht_clock_ns(int clk)
{
  struct timespec ts;
  clock_gettime(clk, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A session starts now; direct: every ht_clock_coarse reads the clock. */
void ht_clock_start(int direct)
{
  clock_t0 = ht_clock_ns(CLOCK_MONOTONIC);
  clock_direct = direct;
  atomic_store(&clock_now, 0);
}

/* Publish the coarse clock. */
uint64_t ht_clock_tick(void)
{
  uint64_t now = ht_clock_ns(CLOCK_MONOTONIC) - clock_t0;
  atomic_store_explicit(&clock_now, now, memory_order_relaxed);
  return now;
}

/* Nanoseconds since start: as last published by the writer thread (1 ms)
** when every call is traced; read afresh when sampling, whose events are too
** rare to pay for a writer thread waking up a thousand times a second. */
uint64_t ht_clock_coarse(void)
{
  if (clock_direct) return ht_clock_tick();
  return atomic_load_explicit(&clock_now, memory_order_relaxed);
}

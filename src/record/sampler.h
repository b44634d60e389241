/* heaptape -- Poisson sampling by bytes (sampler.c): exponential gaps, and
** the set of sampled live addresses with its inline one-load filter. */
#ifndef HT_SAMPLER_H
#define HT_SAMPLER_H

#include "recdef.h"
#include "../../include/heaptape.h"

/* Exponential gap with mean t bytes, drawn from *rng. */
int64_t ht_sampler_gap(uint64_t *rng, uint64_t t) HT_HIDDEN;
/* Reserve the set of sampled live addresses and its filter; 0 or -1. */
int ht_sampler_init(void) HT_HIDDEN;
/* Forget every sampled address. */
void ht_sampler_clear(void) HT_HIDDEN;
/* Add a sampled block's address; 0, or -1 when the set is full. */
int ht_sampler_add(uintptr_t a) HT_HIDDEN;
/* Remove a if it was sampled; 1 if it was (test ht_sampler_maybe first). */
int ht_sampler_remove(uintptr_t a) HT_HIDDEN;

#define FILT_BITS 16     /* counting filter: 64 KiB of 8-bit counters */
extern _Atomic uint8_t *ht_sampler_filt HT_HIDDEN; /* counters by address hash */

/* Filter bucket of address a (other bits than the set's home slot): the
** public header's layout, which runtimes read inline (heaptape_rt_filter). */
HT_INLINE uint32_t ht_sampler_bucket(uintptr_t a)
{
  _Static_assert(FILT_BITS == 16 && HEAPTAPE_FILTER_LAYOUT == 1, "the filter's layout 1");
  return (uint32_t)HEAPTAPE_FILTER_INDEX(a);
}

/* 0 when a is certainly not a live sampled block (one byte load). */
HT_INLINE int ht_sampler_maybe(uintptr_t a)
{
  return atomic_load_explicit(&ht_sampler_filt[ht_sampler_bucket(a)],
                              memory_order_relaxed) != 0;
}

#endif

/* heaptape -- Poisson sampling by bytes: exponential gaps and the set of
** sampled live addresses (lock-free open addressing; docs/SAMPLING.md). */
#include <string.h>

#include "sampler.h"

#define SET_SLOTS (1u << 21)           /* 16 MiB of address slots, lazily touched */
#define SET_TOMB 1                     /* deleted slot (addresses are never 1) */
#define SET_PROBE 4096                 /* give up after this many slots */

#define FILT_SAT 255                   /* a saturated counter sticks (never decremented) */

static _Atomic uintptr_t *set_slots;   /* 0 empty, 1 tombstone, else address */
_Atomic uint8_t *ht_sampler_filt;      /* live sampled addresses per hash bucket */
#define filt ht_sampler_filt
static int set_dirty;                  /* the set or filter holds entries */

/* Natural logarithm of x in (0, 1], without libm (atanh series, ~1e-12). */
static double sampler_ln(double x)
{
  union { double d; uint64_t u; } v = { x };
  int e = (int)((v.u >> 52) & 0x7ff) - 1023;
  v.u = (v.u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
  double m = v.d;                      /* x = m * 2^e, m in [1, 2) */
  if (m > 1.4142135623730951) { m *= 0.5; e++; }
  double z = (m - 1) / (m + 1), z2 = z * z;
  double s = z * (2 + z2 * (2.0 / 3 + z2 * (2.0 / 5 + z2 * (2.0 / 7 + z2 *
             (2.0 / 9 + z2 * (2.0 / 11 + z2 * (2.0 / 13 + z2 * 2.0 / 15)))))));
  return s + e * 0.6931471805599453;
}

/* Next value of a xorshift64* generator. */
HT_INLINE uint64_t sampler_rand(uint64_t *s)
{
  uint64_t x = *s;
  x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
  *s = x;
  return x * 0x2545f4914f6cdd1dULL;
}

/* Exponential gap with mean t bytes (at least 1). */
int64_t ht_sampler_gap(uint64_t *rng, uint64_t t)
{
  double u = (double)((sampler_rand(rng) >> 11) + 1) * (1.0 / 9007199254740992.0);
  double g = -sampler_ln(u) * (double)t;
  if (g < 1) g = 1;
  if (g > 9.0e18) g = 9.0e18;
  return (int64_t)g;
}

/* Reserve the address set and its filter (once). */
int ht_sampler_init(void)
{
  if (!set_slots) set_slots = ht_arena_alloc(SET_SLOTS * sizeof(uintptr_t));
  if (!filt) filt = ht_arena_alloc(1u << FILT_BITS);
  return set_slots && filt ? 0 : -1;
}

/* Forget every sampled address (fresh mmap memory is zero: touch nothing). */
void ht_sampler_clear(void)
{
  if (!set_dirty) return;
  set_dirty = 0;
  if (set_slots) memset((void *)set_slots, 0, SET_SLOTS * sizeof(uintptr_t));
  if (filt) memset((void *)filt, 0, 1u << FILT_BITS);
}

/* Add d (+1 or -1) to a's filter counter; a saturated counter never moves. */
static void sampler_count(uintptr_t a, int d)
{
  _Atomic uint8_t *c = &filt[ht_sampler_bucket(a)];
  uint8_t v = atomic_load_explicit(c, memory_order_relaxed);
  do {
    if (v == FILT_SAT || (d < 0 && v == 0)) return;
  } while (!atomic_compare_exchange_weak(c, &v, (uint8_t)(v + d)));
}

/* First slot of address a. */
HT_INLINE uint32_t sampler_home(uintptr_t a)
{
  return (uint32_t)(((uint64_t)a * 0x9e3779b97f4a7c15ULL) >> 43) & (SET_SLOTS - 1);
}

/* Add a sampled block's address; 0, or -1 when the set is full. The filter
** counter goes up first, so a free that finds it zero never misses a block. */
int ht_sampler_add(uintptr_t a)
{
  uint32_t i = sampler_home(a);
  set_dirty = 1;
  sampler_count(a, 1);
  for (int k = 0; k < SET_PROBE; k++, i = (i + 1) & (SET_SLOTS - 1)) {
    uintptr_t v = atomic_load_explicit(&set_slots[i], memory_order_relaxed);
    if (v > SET_TOMB) continue;
    if (atomic_compare_exchange_strong(&set_slots[i], &v, a)) return 0;
  }
  sampler_count(a, -1);
  static int warned;
  if (!warned) { warned = 1; ht_log("sampled-address set is full; samples dropped"); }
  return -1;
}

/* Remove a if it was sampled; 1 if it was. Callers test ht_sampler_maybe first. */
int ht_sampler_remove(uintptr_t a)
{
  uint32_t i = sampler_home(a);
  for (int k = 0; k < SET_PROBE; k++, i = (i + 1) & (SET_SLOTS - 1)) {
    uintptr_t v = atomic_load_explicit(&set_slots[i], memory_order_relaxed);
    if (v == 0) return 0;
    if (v == a) {
      if (!atomic_compare_exchange_strong(&set_slots[i], &v, SET_TOMB)) return 0;
      sampler_count(a, -1);
      return 1;
    }
  }
  return 0;
}

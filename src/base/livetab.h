/* heaptape -- a table of live blocks keyed by address, payload stored inline.
** One probe sequence (usually one cache line) per lookup: no side pool. */
#ifndef HT_LIVETAB_H
#define HT_LIVETAB_H

#include <string.h>
#include "map.h"

typedef struct HtLive {
  uint8_t *slot;             /* slots of `stride` bytes: key, then payload */
  size_t stride;             /* bytes per slot (8 + payload, rounded to 8) */
  size_t payload;            /* payload bytes */
  size_t mask;               /* slots - 1 (a power of two) */
  size_t count;              /* keys stored, the zero key included */
  int has_zero;              /* address 0 is stored in zero[] */
  int dense;                 /* keys are allocation indexes (see live_home) */
  uint8_t zero[64];          /* payload of address 0 */
} HtLive;

#define HT_LIVE_MAX_PAYLOAD 56

/* Set up an empty table for payloads of n bytes (n <= HT_LIVE_MAX_PAYLOAD). */
void ht_live_init(HtLive *t, size_t payload) HT_HIDDEN;
void ht_live_free(HtLive *t) HT_HIDDEN;
/* Payload of the block at addr, or NULL. Valid until the next insert/delete. */
void *ht_live_get(const HtLive *t, uint64_t addr) HT_HIDDEN;
/* Payload slot for addr, inserted (zeroed) if absent; *existed tells which.
** NULL when out of memory. Valid until the next insert/delete. */
void *ht_live_put(HtLive *t, uint64_t addr, int *existed) HT_HIDDEN;
/* Remove addr, copying its payload to out (if non-NULL); 1 if it was there. */
int ht_live_del(HtLive *t, uint64_t addr, void *out) HT_HIDDEN;
/* Iterate: start with *it = 0; 0 at the end. */
int ht_live_next(const HtLive *t, size_t *it, uint64_t *addr, void **payload) HT_HIDDEN;

/* Keys will be allocation indexes (rising, mostly freed soon), not
** addresses: runs of 16 consecutive keys get neighbouring slots, so a
** sealed tape's blocks are put and taken where the last ones were. Call on
** an empty table. */
HT_INLINE void ht_live_dense(HtLive *t) { t->dense = 1; }

/* The slot a key's probe starts from (before masking). An address's 512
** bytes get 64 neighbouring slots, one per 8 bytes (no allocator spaces
** blocks closer, so a run is never over-full): blocks carved one after
** another from fresh memory, as a program grows, are put side by side, not
** each on a line of its own in a table of hundreds of MB. Sealing python3's
** journal (3.4 M blocks live): 0.73-0.90x the time of a hash of the whole
** address; 4 M blocks of 8 bytes freed in random order (mimalloc), where
** nothing is near: 1.00-1.12x. Runs of 16-byte steps were over-full there
** (1.2-1.5x in runs of 64), runs of 256 slots too long (1.5x). Keys closer
** than 8 bytes (not addresses) still work, in longer probes. */
HT_INLINE size_t ht_live_home(const HtLive *t, uint64_t k)
{
  return t->dense ? (size_t)(ht_hash64(k >> 4) << 4 | (k & 15))
                  : (size_t)(ht_hash64(k >> 9) << 6 | (k >> 3 & 63));
}

/* Start loading the slot addr hashes to (lookahead pipelines). */
HT_INLINE void ht_live_prefetch(const HtLive *t, uint64_t addr)
{
  if (t->slot) __builtin_prefetch(t->slot + (ht_live_home(t, addr) & t->mask) * t->stride);
}

#endif

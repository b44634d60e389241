/* heaptape -- the resolving pass: every free of a tape matched to the
** allocation it releases, events delivered resolved to their consumers. */
#ifndef HT_RESOLVE_H
#define HT_RESOLVE_H

#include "../base/livetab.h"
#include "../format/reader.h"
#include "pump.h"

/*
** This is the only place of the analysis that keeps a map of addresses.
** Every ALLOC gets an allocation index (0, 1, ...: the block's identity;
** `heaptape ops` shows index + 1 as its handle) and an op number; every
** FREE of a block allocated on the tape gets the next op number and the
** block it releases, with what its allocation said. A FREE of a block from
** before the recording is delivered unresolved (known = 0, no op number).
** An ALLOC of an address already live (the tape lost a free) drops the old
** block: the event carries it (dup = 1).
**
** On a sealed tape the sealer did this once: a FREE names the allocation
** index of its block (HtEvent.back) and the table is keyed by index. From
** version 5 the FREE carries that block's size, weight, stack and thread
** too, so a lean resolver (the model's) keeps no table at all: its memory
** follows the sites, never the live blocks. From version 8 it carries the
** block's birth (time, op number) and address too: a resolver told that its
** consumer needs no live set (ht_resolve_carried) keeps no table either.
**
** Consumers (the model, the operations stream, lifetimes, heap maps,
** finalisation's summary, the sealer) see resolved events only and keep no
** live set of their own; the blocks live now are asked of the resolver.
*/

#define HT_RES_NONE UINT64_MAX   /* no op number (unresolved or not an op) */
#define HT_BLOCK_RT 0x80000000u  /* HtBlock.tid: the block is a runtime's */

/* A block as its allocation made it. */
typedef struct HtBlock {
  /* What every consumer needs (a lean resolver keeps only these): */
  uint64_t size;             /* requested bytes */
  uint64_t weight;           /* bytes it stands for (size if unsampled) */
  uint32_t stack;            /* allocation stack */
  uint32_t tid;              /* allocating thread, | HT_BLOCK_RT for a runtime's */
  /* What the sealer needs too (ht_resolve_indexed): */
  uint64_t index;            /* allocation index, from 0 */
  uint64_t born_op;          /* op number of its allocation */
  uint64_t born_ts;          /* time of its allocation (ns since the start) */
  /* What the operations stream and heap maps need too: */
  uint64_t addr;             /* its address as on the tape */
} HtBlock;

typedef struct HtResolve HtResolve;

/* One event, resolved. */
typedef struct HtRes {
  const HtEvent *ev;         /* the event as the tape has it */
  const HtResolve *rs;       /* the resolver (blocks live now) */
  uint64_t op;               /* ALLOC, resolved FREE: op number; else HT_RES_NONE */
  int known;                 /* FREE: the block was allocated on the tape */
  int dup;                   /* ALLOC: its address was live; old is dropped */
  HtBlock blk;               /* ALLOC: the new block; FREE (known): the block freed */
  HtBlock old;               /* ALLOC with dup: the block it replaces */
} HtRes;

struct HtResolve {
  HtLive live;               /* live blocks by ht_event_block(), or by index
                                on sealed tapes: HtBlock (packed: HtPacked) */
  HtLive wide;               /* packed: the blocks whose values do not fit
                                HtPacked, as HtBlock (sampled ones, ...) */
  int by_index;              /* sealed tape: events name the blocks they free */
  int lean;                  /* keep size, weight, stack, tid (and addr) only */
  int indexed;               /* lean, but keep the allocation index too */
  int tableless;             /* lean on a tape whose frees carry their block,
                                or carried on one whose frees carry births */
  int carried;               /* the consumer needs only what a version 8 sealed
                                tape's events carry (ht_resolve_carried) */
  int packed;                /* indexed, by address: live holds HtPacked */
  size_t payload;            /* bytes of HtBlock the table keeps per block */
  uint64_t nallocs;          /* allocations resolved (next allocation index) */
  uint64_t nops;             /* op numbers handed out */
  uint64_t unknown_frees;    /* frees of blocks not allocated on the tape */
  uint64_t dup_allocs;       /* allocations of an address already live */
  int oom;                   /* out of memory: some blocks were not kept */
};

/* Consumer of resolved events. */
typedef void (*HtResFn)(void *ctx, const HtRes *res);

/* Set up an empty resolver (by address; ht_resolve_run picks the key). */
void ht_resolve_init(HtResolve *rs) HT_HIDDEN;
/* Release what rs owns. */
void ht_resolve_free(HtResolve *rs) HT_HIDDEN;
/* Keep only the first fields of HtBlock (size, weight, stack, tid): the
** table's slots are half as big. Blocks delivered have index, born_op and
** born_ts 0 (and addr from the event). Call before the first event. */
void ht_resolve_lean(HtResolve *rs, int by_index) HT_HIDDEN;
/* Lean, but keeping each block's allocation index and birth too (the
** sealer's: it names the block each free releases, and from version 8 its
** birth). On a journal (keyed by address) the table packs them in 32 bytes
** a block where the values allow (see HtPacked). Call before the first event. */
void ht_resolve_indexed(HtResolve *rs) HT_HIDDEN;
/* The consumer reads only the resolved events, never the blocks live (no
** ht_resolve_live_next): on a sealed tape of version 8, whose frees carry
** their block's birth and address, no table is kept at all (lifetimes,
** heap maps without frames). Call before the first event. */
void ht_resolve_carried(HtResolve *rs) HT_HIDDEN;
/* Forget every block and count (for a second pass over the same tape). */
void ht_resolve_reset(HtResolve *rs) HT_HIDDEN;
/* Resolve one event (in tape order) into *out. */
void ht_resolve_event(HtResolve *rs, const HtEvent *ev, HtRes *out) HT_HIDDEN;
/* Start loading the live-table slot an ALLOC or FREE will touch. */
HT_INLINE void ht_resolve_prefetch(const HtResolve *rs, const HtEvent *ev)
{
  if (!rs->by_index) ht_live_prefetch(&rs->live, ht_event_block(ev));
  else if (ev->back) ht_live_prefetch(&rs->live, ev->back - 1);
}
/* Every event of r from where it stands, resolved and handed to fn(ctx, res)
** in order, through the prefetching pump; prefetch (may be NULL) is the
** consumer's own hint for ALLOC and FREE events entering the ring.
** Returns 0, or HEAPTAPE_E_NOMEM (rs->oom). */
int ht_resolve_run(HtResolve *rs, HtReader *r, HtResFn fn, HtPumpPrefetch prefetch,
                   void *ctx) HT_HIDDEN;
/* Rewind r, forget every block, then ht_resolve_run: a second pass for a
** consumer that lays out a picture before drawing it (heap maps). */
int ht_resolve_pass(HtResolve *rs, HtReader *r, HtResFn fn, HtPumpPrefetch prefetch,
                    void *ctx) HT_HIDDEN;
/* Iterate the blocks live now: start with *it = 0; 0 at the end. *addr gets
** the block's address as on the tape. */
int ht_resolve_live_next(const HtResolve *rs, size_t *it, uint64_t *addr,
                         HtBlock *b) HT_HIDDEN;
/* Op numbers of a whole tape (allocations and resolved frees), from r's
** start; r is rewound after. Returns HT_RES_NONE when out of memory. */
uint64_t ht_resolve_count_ops(HtReader *r) HT_HIDDEN;

#endif

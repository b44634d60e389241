/* heaptape -- the tape as a stream of operations on blocks with handles (N/F),
** the shared front end of `heaptape ops`, lifetimes, heapmap and replay. */
#ifndef HT_OPS_H
#define HT_OPS_H

#include <stdio.h>
#include "../base/map.h"
#include "resolve.h"

/*
** Every ALLOC of the tape becomes a New op with a fresh handle (its
** allocation index + 1), every FREE the resolver matched to its block a
** Free op (numbers from the resolver, resolve.h). Frees of
** blocks allocated before the recording started are dropped (counted).
** A realloc stays two ops, Free(old, REALLOC) then New(new, REALLOC, old),
** as on the tape; other threads' ops may come between them. A thread's
** pending realloc Free that its next op does not complete was a realloc to
** size 0 or a failed one: consumers settle it as an ordinary free.
** docs/ALLOCATORS.md specifies the text form.
*/

enum { HT_OP_NEW = 'N', HT_OP_FREE = 'F' };
enum {
  HT_OPF_CALLOC = 1,         /* New: zeroed (calloc) */
  HT_OPF_ALIGN = 2,          /* New: aligned to align */
  HT_OPF_REALLOC = 4,        /* New: second half of a realloc of old;
                                Free: first half of a realloc */
};

typedef struct HtOp {
  uint8_t op;                /* HT_OP_NEW or HT_OP_FREE */
  uint8_t flags;             /* HT_OPF_* */
  uint8_t kind;              /* HT_K_* of the tape event */
  uint32_t tid;              /* thread */
  uint64_t index;            /* op number, from 0 */
  uint64_t seq;              /* tape sequence number */
  uint64_t ts;               /* ns since the tape's start */
  uint64_t handle;           /* block handle (unique over the run) */
  uint64_t size;             /* requested bytes of the block */
  uint64_t align;            /* New with HT_OPF_ALIGN: alignment */
  uint64_t old;              /* New with HT_OPF_REALLOC: handle it replaces */
  uint64_t addr;             /* block address on the tape */
  uint32_t stack;            /* allocation stack of the block */
  uint64_t born;             /* Free: op number of the block's New */
  uint64_t born_ts;          /* Free: time of the block's New */
  uint64_t live;             /* requested bytes live after this op */
} HtOp;

/* A block still live (from ht_ops_live_next). */
typedef struct HtOpBlock {
  uint64_t handle;           /* handle */
  uint64_t size;             /* requested bytes */
  uint64_t addr;             /* address */
  uint64_t born;             /* op number of its New */
  uint64_t born_ts;          /* time of its New */
  uint32_t stack;            /* allocation stack */
} HtOpBlock;

typedef struct HtOps {
  HtMap pend;                /* tid -> handle of a pending realloc Free */
  uint64_t npend;            /* threads with one (0: no lookup needed) */
  uint64_t next_handle;      /* next handle to hand out */
  uint64_t nops;             /* ops produced */
  uint64_t live_bytes;       /* requested bytes live */
  uint64_t live_n;           /* blocks live */
  uint64_t peak;             /* largest live_bytes */
  uint64_t peak_index;       /* op after which live_bytes first peaked */
  uint64_t unknown_frees;    /* frees of blocks not on the tape (dropped) */
  uint64_t dup_allocs;       /* allocations of an address already live */
  int oom;                   /* out of memory: ops are incomplete */
} HtOps;

/* Prepare an empty stream; 0 or -1 (out of memory). */
int ht_ops_init(HtOps *o) HT_HIDDEN;
/* Release what o owns. */
void ht_ops_free(HtOps *o) HT_HIDDEN;
/* Turn one resolved event into an op: 1 when *op was filled, 0 for none. */
int ht_ops_res(HtOps *o, const HtRes *res, HtOp *op) HT_HIDDEN;
/* Iterate the blocks the resolver holds live now: start with *it = 0; 0 at
** the end. */
int ht_ops_live_next(const HtResolve *rs, size_t *it, HtOpBlock *b) HT_HIDDEN;
/* One op as a line of the text log (see docs/ALLOCATORS.md). */
void ht_ops_print(FILE *f, const HtOp *op) HT_HIDDEN;

#endif

/* heaptape -- Steve's locking heuristics: which blocks a handle-based
** (compacting) allocator would find locked, as Lock/Unlock ops in the stream. */
#ifndef HT_LOCKS_H
#define HT_LOCKS_H

#include "../base/map.h"
#include "ops.h"

/*
** Input: the operations stream (ops.h) in order, each op on one block: its
** New, its Free, and -- on tapes with access records -- its accesses. The
** op number (HtOp.index) counts these ops only; the Lock and Unlock ops
** this engine adds are not ops of the program and count for nothing.
**
** coarse  a block is global when its macro lifetime (ops from its New to its
**         Free, or to the end for a never-freed block, over all ops) is at
**         least global_pct %: it is locked right after its New and unlocked
**         right before its Free (never, if never freed). Needs the whole
**         stream first: ht_locks_learn every op, ht_locks_learned, then feed.
** fine    every live block has a life, 0 at its New. An op on the block
**         (its New, an access) adds 1; an op on any other block takes 0.5
**         away, never below 0. The block is locked while its life is above
**         0: Lock right after the op that lifts it from 0, Unlock right
**         after the op that brings it to 0, or right before its Free.
**
** Order of what ht_locks_feed emits for one op: an Unlock of the op's block
** (before a Free), the op itself, a Lock of the op's block, then the
** Unlocks of other blocks whose life reached 0 at this op, by handle.
** A Free always comes unlocked; blocks locked at the end stay locked.
*/

enum { HT_OP_LOCK = 'K', HT_OP_UNLOCK = 'U' };  /* HtOp.op of the ops added */

typedef enum HtLockModel { HT_LOCKS_COARSE, HT_LOCKS_FINE } HtLockModel;

#define HT_LOCKS_GLOBAL_PCT 50  /* coarse: default macro lifetime of a global */

/* An Unlock due at an op (fine model). */
typedef struct HtLockDue {
  uint64_t due;              /* op number at which the block's life reaches 0 */
  uint64_t handle;           /* block */
} HtLockDue;

/* A live block of the fine model. */
typedef struct HtLockLife {
  uint64_t last;             /* op number of its last own op */
  uint64_t life2;            /* twice its life right after that op */
  int queued;                /* it has an entry in the due heap */
} HtLockLife;

typedef struct HtLocks {
  HtLockModel model;         /* coarse or fine */
  unsigned global_pct;       /* coarse: macro lifetime of a global block, % */
  /* coarse */
  uint64_t *span;            /* handle -> born op, then lifetime | HT_LOCKS_FREED */
  size_t nspan;              /* entries of span */
  uint8_t *global;           /* handle -> bit: locked for its whole life */
  uint64_t nglobal;          /* handles global covers (0..nglobal-1) */
  uint64_t nops;             /* ops of the stream (ht_locks_learned) */
  /* fine */
  HtMap live;                /* handle -> index + 1 in lifes */
  HtLockLife *lifes;         /* states of live blocks */
  size_t nlifes, caplifes;   /* used (free list included) and allocated */
  uint64_t freelife;         /* index + 1 of a free state (chained by .last) */
  HtLockDue *heap;           /* min-heap of (due, handle) */
  size_t nheap, capheap;     /* entries and allocated */
  /* counts */
  uint64_t locks, unlocks;   /* Lock and Unlock ops emitted */
  uint64_t locked;           /* blocks locked now */
  uint64_t globals;          /* coarse: blocks found global */
  int oom;                   /* out of memory: the stream is incomplete */
} HtLocks;

/* Receives the ops in their new order (the program's and the added ones). */
typedef void (*HtLocksEmit)(void *ctx, const HtOp *op);

/* Start a model; 0 or -1 (out of memory). */
int ht_locks_init(HtLocks *l, HtLockModel model, unsigned global_pct) HT_HIDDEN;
/* Release what l owns. */
void ht_locks_free(HtLocks *l) HT_HIDDEN;
/* Whether the model needs the learning pass (coarse). */
int ht_locks_two_pass(const HtLocks *l) HT_HIDDEN;
/* Learning pass: one op of the stream. */
void ht_locks_learn(HtLocks *l, const HtOp *op) HT_HIDDEN;
/* End of the learning pass: nops ops in all; decides the global blocks. */
void ht_locks_learned(HtLocks *l, uint64_t nops) HT_HIDDEN;
/* One op of the stream: emits it with the Lock and Unlock ops around it. */
void ht_locks_feed(HtLocks *l, const HtOp *op, HtLocksEmit emit, void *ctx) HT_HIDDEN;
/* The whole of a tape through the model: the learning pass if the model
** needs one (then r is rewound), then every op of the stream o (initialised
** by the caller; its counts are the tape's) with its Lock and Unlock ops to
** emit. On a tape with access records (access.h) every access of a live
** block is an op of that block too, emitted with its letter (L, S, M).
** Returns 0, or HEAPTAPE_E_NOMEM. */
int ht_locks_run(HtLocks *l, HtReader *r, HtOps *o, HtLocksEmit emit, void *ctx) HT_HIDDEN;
struct HtOpsRead;
/* The same over an operations log (opsread.h) from its start: accesses
** count as ops of their blocks. 0, or -1 with err set. */
int ht_locks_run_log(HtLocks *l, struct HtOpsRead *rd, HtLocksEmit emit, void *ctx, char *err,
                     size_t errlen) HT_HIDDEN;
/* Parse a model name ("coarse", "fine"); 0 or -1. */
int ht_locks_model(const char *name, HtLockModel *m) HT_HIDDEN;

#endif

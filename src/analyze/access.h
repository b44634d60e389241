/* heaptape -- accesses to heap blocks (loads, stores, modifies) from a tape's
** ACCESS packets (format version 4, docs/FORMAT.md "ACCESS packets"), read
** alone or delivered among the resolved events. */
#ifndef HT_ACCESS_H
#define HT_ACCESS_H

#include "resolve.h"

/*
** `heaptape record --access` runs the program under heaptape's Valgrind tool,
** which writes every load, store and modify that touches a live heap block
** (or a fair 1-in-N sample of them, HtAccessInfo.sample). The tool knows the
** block an access touches: the tape names it by the sequence number of the
** block's ALLOC, and the offset in it. An access is placed among the events
** by `before`: it came after every event with a smaller sequence number and
** before the event numbered `before`. Times are the tool's coarse clock
** (read at each event and every few thousand accesses), never decreasing.
*/

enum { HT_ACC_LOAD = 'L', HT_ACC_STORE = 'S', HT_ACC_MODIFY = 'M' };

typedef struct HtAccess {
  uint8_t kind;              /* HT_ACC_* */
  uint32_t tid;              /* thread that made it */
  uint64_t before;           /* sequence number of the next event */
  uint64_t ts;               /* ns since the tape's start */
  uint64_t alloc_seq;        /* sequence number of the block's ALLOC */
  uint64_t offset;           /* first byte accessed, from the block's start */
  uint32_t size;             /* bytes accessed */
  /* Filled by ht_access_run only (0 from ht_access_next): */
  uint64_t handle;           /* the block's handle as in `heaptape ops`
                                (allocation index + 1); 0: its ALLOC is not
                                on the tape (damage) */
  uint64_t addr;             /* the address accessed (block address + offset) */
  uint64_t block_size;       /* requested bytes of the block */
  uint32_t stack;            /* allocation stack of the block */
} HtAccess;

/* What a tape says about its accesses. */
typedef struct HtAccessInfo {
  int present;               /* the tape was recorded with --access */
  uint64_t sample;           /* 1 = every access, N = a fair 1-in-N sample */
  uint64_t packets;          /* ACCESS packets */
  uint64_t accesses;         /* accesses they announce */
} HtAccessInfo;

/* The tape's access figures (from the scan: no packet is decoded). */
void ht_access_info(const HtReader *r, HtAccessInfo *info) HT_HIDDEN;

/* -- Alone: every access in tape order ------------------------------------- */

typedef struct HtAccessIter HtAccessIter;

/* Iterate r's accesses in order (before, then as made); *it NULL on failure
** (out of memory). r must outlive the iterator. */
int ht_access_open(HtAccessIter **it, HtReader *r) HT_HIDDEN;
/* Next access: 1 delivered, 0 at the end. A damaged packet ends its own
** accesses (counted by ht_access_damaged), never fails. */
int ht_access_next(HtAccessIter *it, HtAccess *a) HT_HIDDEN;
/* ACCESS packets found damaged so far. */
uint64_t ht_access_damaged(const HtAccessIter *it) HT_HIDDEN;
void ht_access_close(HtAccessIter *it) HT_HIDDEN;

/* -- Among the events ---------------------------------------------------- */

/* Consumer of accesses; a has handle, addr, block_size and stack filled. */
typedef void (*HtAccessFn)(void *ctx, const HtAccess *a);

/* ht_resolve_run over r (from its start), with every access handed to
** afn(ctx, a) just before the first resolved event whose sequence number is
** >= a->before (after the last event if none): so an access comes after its
** block's New and before its Free. Returns 0, or HEAPTAPE_E_NOMEM. */
int ht_access_run(HtResolve *rs, HtReader *r, HtResFn fn, HtAccessFn afn,
                  void *ctx) HT_HIDDEN;

#endif

/* heaptape -- the heap map's layout, kept by the sealer: the 64 KiB
** granules that blocks touch, the operations, and the blocks never freed.
** With it `heaptape heapmap` draws in one pass over the events instead of
** two (AGG field HT_A_LAYOUT, docs/FORMAT.md, version 11). */
#ifndef HT_MAPLAYOUT_H
#define HT_MAPLAYOUT_H

#include <stdint.h>
#include "../base/ht_def.h"
#include "../base/map.h"
#include "../format/reader.h"
#include "resolve.h"

#define HT_GRAN_SHIFT 16  /* a granule: 64 KiB of address space */

/* -- Kept while sealing --------------------------------------------------- */

typedef struct HtLayoutW {
  HtMap g;                   /* granules touched (keys) */
  uint64_t last;             /* the granule noted last (most blocks share it) */
  uint64_t *ended;           /* a bit per allocation index: its block ended
                                (the sealer's resolver may keep no table) */
  size_t nended;             /* words of it */
  uint64_t nallocs;          /* allocations seen */
  int oom;                   /* a granule or a bit could not be noted */
} HtLayoutW;

int ht_layoutw_init(HtLayoutW *l) HT_HIDDEN;  /* 0 or -1 (out of memory) */
void ht_layoutw_free(HtLayoutW *l) HT_HIDDEN;

/* Note one resolved event: an allocated block's granules, the end of the
** block a FREE or an ALLOC over a live address releases. */
void ht_layoutw_res(HtLayoutW *l, const HtRes *res) HT_HIDDEN;

/* The field's payload: the granules, and the blocks no event ended. 0 with
** *out malloc'd, or -1 when out of memory. */
int ht_layoutw_encode(HtLayoutW *l, uint8_t **out, size_t *len) HT_HIDDEN;

/* -- Read by the heap map ----------------------------------------------- */

typedef struct HtLayout {
  uint64_t nops;             /* operations (allocations, resolved frees) */
  uint64_t *gran;            /* granules, rising (malloc'd) */
  size_t ngran;
  uint8_t *own;              /* the never-freed indexes, a copy (malloc'd):
                                the tape's figures need not stay loaded */
  const uint8_t *np, *ne;    /* those not yet passed */
  uint64_t left;             /* how many */
  uint64_t next;             /* the next one (UINT64_MAX: none) */
} HtLayout;

/* The layout of r's sealed tape: 1 loaded, 0 none (or malformed: make the
** pass), or HEAPTAPE_E_NOMEM. It keeps nothing of r's. */
int ht_layout_load(HtReader *r, HtLayout *l) HT_HIDDEN;

/* Whether the block of allocation index i is never freed; i rise from call
** to call. */
int ht_layout_never(HtLayout *l, uint64_t i) HT_HIDDEN;

void ht_layout_free(HtLayout *l) HT_HIDDEN;

#endif

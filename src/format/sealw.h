/* heaptape -- the sealed tape's writer (format version 8): header, copied
** dictionaries, META, STACKS, column-coded event blocks and their index. */
#ifndef HT_SEALW_H
#define HT_SEALW_H

#include <stdio.h>
#include "reader.h"

typedef struct HtSealW HtSealW;

/* Start a sealed tape at f (not owned) for the journal r: its header as a
** sealed tape's (written again at the end). NULL when out of memory. */
HtSealW *ht_sealw_new(FILE *f, const HtReader *r) HT_HIDDEN;
/* The block a FREE releases, or an ALLOC's address drops: back as
** HtEvent.back documents it (0: none), then the block as allocated. */
typedef struct HtSealBlock {
  uint64_t back;
  uint64_t size, weight;
  uint32_t stack, tid;
  uint64_t born_op, born_ts; /* its allocation's op number and time */
} HtSealBlock;

/* Add one event in global order with the block it names (NULL: none). */
void ht_sealw_event(HtSealW *w, const HtEvent *ev, const HtSealBlock *b) HT_HIDDEN;
/* Write the last block, r's DICT and ACCESS packets, META (from r's final
** reading and the counts), the stack nodes, the index and the aggregate
** figures agg (an AGG body, or NULL); the header again (r's final flags);
** free w.
** Returns 0, or a HEAPTAPE_E_* code. */
int ht_sealw_finish(HtSealW *w, const HtReader *r, uint64_t nallocs, uint64_t nops,
                    uint64_t unresolved, const uint8_t *agg, size_t agglen) HT_HIDDEN;

#endif

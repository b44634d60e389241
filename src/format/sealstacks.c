/* heaptape -- a sealed tape's stack table (STACKS packets, docs/FORMAT.md
** "STACKS"): the nodes of a packet decoded straight into the reader's
** table (cc1plus's 558,641 nodes, one at a time through
** ht_reader_node_append, were a third of `stats`: a room check and a call
** each), or only their frames walked (stats' count of symbols, which
** needs no table). */
#include <stdlib.h>

#include "readint.h"
#include "phead.h"

int ht_sealstacks_load(HtReader *r, const uint8_t *p, const uint8_t *end)
{
  uint64_t first, n, up, df, frame = 0;
  if (ht_ruleb128(&p, end, &first) || ht_ruleb128(&p, end, &n)) return -1;
  if (first != r->nnodes || n > (uint64_t)(end - p) / 2) return -1;  /* out of order */
  if (ht_reader_nodes_room(r, (size_t)(first + n))) return -1;  /* (n bounded: 2 bytes a node) */
  StackNode *nd = r->nodes;
  uint32_t id = (uint32_t)first, last = (uint32_t)(first + n);
  int rc = 0;
  for (; id < last; id++) {
    if (ht_ruleb128(&p, end, &up) || ht_ruleb128(&p, end, &df) || up == 0 || up > id) {
      rc = -1;
      break;
    }
    frame += (uint64_t)ht_unzigzag(df);
    uint32_t parent = id - (uint32_t)up;
    nd[id].frame = frame;
    nd[id].parent = parent;
    nd[id].depth = parent ? nd[parent].depth + 1 : 1;
  }
  r->nnodes = id;  /* (a damaged packet keeps the nodes before the damage) */
  return rc;
}

/* Each frame of a STACKS body, in id order, to fn; *next is the id the body
** must start at, and the one after it on return. 0, or -1 when malformed
** (the frames before the damage were given). */
int ht_sealstacks_walk(const uint8_t *p, const uint8_t *end, uint32_t *next,
                       void (*fn)(void *ctx, uint64_t frame), void *ctx)
{
  uint64_t first, n, up, df, frame = 0;
  if (ht_ruleb128(&p, end, &first) || ht_ruleb128(&p, end, &n) || first != *next ||
      n > (uint64_t)(end - p) / 2 || first + n > UINT32_MAX)
    return -1;
  for (uint64_t id = first; id < first + n; id++) {
    if (ht_ruleb128(&p, end, &up) || ht_ruleb128(&p, end, &df) || up == 0 || up > id)
      return -1;
    frame += (uint64_t)ht_unzigzag(df);
    fn(ctx, frame);
  }
  *next = (uint32_t)(first + n);
  return 0;
}

void ht_sealstacks_decode(HtReader *r, size_t n)
{
  ZSTD_DCtx *zd = ZSTD_createDCtx();  /* (the reader's is the caller's) */
  for (size_t i = 0; i < n; i++) {
    const uint8_t *h = r->data + r->stk_off[i];
    uint32_t blen = ht_ru32(h + 8), rawlen = ht_ru32(h + 12), nev = ht_ru32(h + 48);
    uint8_t *own = NULL;
    uint32_t before = r->nnodes;
    const uint8_t *b = zd ? ht_reader_body(zd, h + HT_PHEAD_SIZE, blen, rawlen, h[5], &own) : NULL;
    /* As many nodes as the header said: ht_reader_stack_count answers
    ** from the headers before the table is decoded. */
    if (!b || ht_sealstacks_load(r, b, b + rawlen) || r->nnodes - before != nev) {
      if (!r->stk_bad++) r->stk_bad_off = r->stk_off[i];
      r->stk_bad_bytes += HT_PHEAD_SIZE + (uint64_t)blen;
      if (r->nnodes - before > nev) r->nnodes = before + nev;
    }
    free(own);
  }
  ZSTD_freeDCtx(zd);
}

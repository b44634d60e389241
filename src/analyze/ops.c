/* heaptape -- the operations stream: resolved events to New/Free ops on handles,
** and its text form for `heaptape ops` (docs/ALLOCATORS.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "../base/dec.h"

/* -- Stream ---------------------------------------------------------------- */

/* Prepare an empty stream. */
int ht_ops_init(HtOps *o)
{
  memset(o, 0, sizeof(*o));
  o->next_handle = 1;
  if (ht_map_init(&o->pend, 16)) return -1;
  return 0;
}

/* Release what the stream owns. */
void ht_ops_free(HtOps *o)
{
  ht_map_free(&o->pend);
}

/* Fill the common fields of an op and count it. */
static void ops_emit(HtOps *o, const HtEvent *ev, HtOp *op, uint8_t type)
{
  /* Field by field: memset's `rep stos` was a tenth of heapmap's pass. */
  op->flags = 0;
  op->size = op->align = op->old = 0;
  op->stack = 0;
  op->born = op->born_ts = op->live = 0;
  op->handle = 0;
  op->op = type;
  op->kind = ev->kind;
  op->tid = ev->tid;
  op->seq = ev->seq;
  op->ts = ev->ts;
  op->addr = ev->addr;
  op->index = o->nops++;
}

/* Turn one resolved event into an op: 1 when *op was filled, 0 for none. */
int ht_ops_res(HtOps *o, const HtRes *res, HtOp *op)
{
  const HtEvent *ev = res->ev;
  if (ev->type != HT_EV_ALLOC && ev->type != HT_EV_FREE) return 0;
  unsigned fam = HT_K_FAMILY(ev->kind);
  uint64_t old = 0, *pv = o->npend ? ht_map_get(&o->pend, ev->tid) : NULL;
  if (pv && *pv) { old = *pv; *pv = 0; o->npend--; }  /* any op of the thread ends it */

  if (ev->type == HT_EV_FREE) {
    if (!res->known) { o->unknown_frees++; return 0; }
    const HtBlock *b = &res->blk;
    ops_emit(o, ev, op, HT_OP_FREE);
    op->handle = b->index + 1;
    op->size = b->size;
    op->stack = b->stack;
    op->born = b->born_op;
    op->born_ts = b->born_ts;
    op->addr = b->addr;
    if (fam == HT_K_REALLOC) {
      op->flags = HT_OPF_REALLOC;
      if (ht_map_put(&o->pend, ev->tid, op->handle)) o->oom = 1;
      else o->npend++;
    }
    o->live_bytes -= b->size;
    o->live_n--;
    op->live = o->live_bytes;
    return 1;
  }

  if (res->rs->oom) o->oom = 1;
  if (res->dup) {  /* an address allocated twice: the first block is gone */
    o->dup_allocs++;
    o->live_bytes -= res->old.size;
    o->live_n--;
  }
  ops_emit(o, ev, op, HT_OP_NEW);
  op->handle = res->blk.index + 1;
  op->size = ev->size;
  op->stack = ev->stack;
  op->born = op->index;
  op->born_ts = ev->ts;
  if (fam == HT_K_CALLOC) op->flags = HT_OPF_CALLOC;
  else if (HT_K_HAS_ALIGN(ev->kind) && ev->align > 1) {
    op->flags = HT_OPF_ALIGN;
    op->align = ev->align;
  } else if (fam == HT_K_VALLOC) {
    op->flags = HT_OPF_ALIGN;
    op->align = 4096;
  } else if (fam == HT_K_REALLOC && old) {
    op->flags = HT_OPF_REALLOC;
    op->old = old;
  }
  o->next_handle = op->handle + 1;
  o->live_bytes += ev->size;
  o->live_n++;
  if (o->live_bytes > o->peak) { o->peak = o->live_bytes; o->peak_index = op->index; }
  op->live = o->live_bytes;
  return 1;
}

/* Iterate the blocks live now. */
int ht_ops_live_next(const HtResolve *rs, size_t *it, HtOpBlock *b)
{
  HtBlock blk;
  uint64_t addr;
  if (!ht_resolve_live_next(rs, it, &addr, &blk)) return 0;
  *b = (HtOpBlock){.handle = blk.index + 1, .size = blk.size, .addr = addr,
                   .born = blk.born_op, .born_ts = blk.born_ts, .stack = blk.stack};
  return 1;
}

/* -- Text form ------------------------------------------------------------ */

/* One op as a line of the text log. Formatted by hand: fprintf's parsing
** of its format was most of `heaptape ops`'s time. */
void ht_ops_print(FILE *f, const HtOp *op)
{
  char line[128], *p = line;
  p = ht_dec_u64(p, op->seq);
  *p++ = ' ';
  p = ht_dec_u64(p, op->tid);
  *p++ = ' ';
  *p++ = op->op == HT_OP_FREE ? 'F' : 'N';
  *p++ = ' ';
  p = ht_dec_u64(p, op->handle);
  if (op->op == HT_OP_FREE) {
    if (op->flags & HT_OPF_REALLOC) { *p++ = ' '; *p++ = 'R'; }
  } else {
    *p++ = ' ';
    p = ht_dec_u64(p, op->size);
    if (op->flags & HT_OPF_CALLOC) { *p++ = ' '; *p++ = 'C'; }
    else if (op->flags & HT_OPF_ALIGN) { *p++ = ' '; *p++ = 'A'; p = ht_dec_u64(p, op->align); }
    else if (op->flags & HT_OPF_REALLOC) { *p++ = ' '; *p++ = 'R'; p = ht_dec_u64(p, op->old); }
  }
  *p++ = '\n';
  fwrite_unlocked(line, 1, (size_t)(p - line), f);
}

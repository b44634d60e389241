/* heaptape -- the operations stream: tape events to New/Free ops on handles,
** and its text form for `heaptape ops` (docs/ALLOCATORS.md). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "../analyze/frames.h"

/* -- Stream ---------------------------------------------------------------- */

/* Prepare an empty stream. */
int ht_ops_init(HtOps *o)
{
  memset(o, 0, sizeof(*o));
  o->next_handle = 1;
  ht_live_init(&o->live, sizeof(HtOpBlock));
  if (ht_map_init(&o->pend, 16)) {
    ht_ops_free(o);
    return -1;
  }
  return 0;
}

/* Release what the stream owns. */
void ht_ops_free(HtOps *o)
{
  ht_live_free(&o->live);
  ht_map_free(&o->pend);
}

/* Fill the common fields of an op and count it. */
static void ops_emit(HtOps *o, const HtEvent *ev, HtOp *op, uint8_t type)
{
  memset(op, 0, sizeof(*op));
  op->op = type;
  op->kind = ev->kind;
  op->tid = ev->tid;
  op->seq = ev->seq;
  op->ts = ev->ts;
  op->addr = ev->addr;
  op->index = o->nops++;
}

/* Turn one tape event into an op: 1 when *op was filled, 0 for none. */
int ht_ops_event(HtOps *o, const HtEvent *ev, HtOp *op)
{
  if (ev->type != HT_EV_ALLOC && ev->type != HT_EV_FREE) return 0;
  unsigned fam = HT_K_FAMILY(ev->kind);
  uint64_t old = 0, *pv = ht_map_get(&o->pend, ev->tid);
  if (pv && *pv) { old = *pv; *pv = 0; }  /* any op of the thread ends it */
  uint64_t key = ht_event_block(ev);

  if (ev->type == HT_EV_FREE) {
    HtOpBlock b;
    if (!ht_live_del(&o->live, key, &b)) { o->unknown_frees++; return 0; }
    ops_emit(o, ev, op, HT_OP_FREE);
    op->handle = b.handle;
    op->size = b.size;
    op->stack = b.stack;
    op->born = b.born;
    op->born_ts = b.born_ts;
    op->addr = b.addr;
    if (fam == HT_K_REALLOC) {
      op->flags = HT_OPF_REALLOC;
      if (ht_map_put(&o->pend, ev->tid, b.handle)) o->oom = 1;
    }
    o->live_bytes -= b.size;
    o->live_n--;
    op->live = o->live_bytes;
    return 1;
  }

  int existed;
  HtOpBlock *nb = ht_live_put(&o->live, key, &existed);
  if (!nb) { o->oom = 1; return 0; }
  if (existed) {  /* an address allocated twice: forget the first block */
    o->dup_allocs++;
    o->live_bytes -= nb->size;
    o->live_n--;
  }
  ops_emit(o, ev, op, HT_OP_NEW);
  op->handle = o->next_handle++;
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
  *nb = (HtOpBlock){.handle = op->handle, .size = ev->size, .addr = ev->addr,
                    .born = op->index, .born_ts = ev->ts, .stack = ev->stack};
  o->live_bytes += ev->size;
  o->live_n++;
  if (o->live_bytes > o->peak) { o->peak = o->live_bytes; o->peak_index = op->index; }
  op->live = o->live_bytes;
  return 1;
}

/* Iterate the blocks live now. */
int ht_ops_live_next(const HtOps *o, size_t *it, HtOpBlock *b)
{
  uint64_t k;
  void *v;
  if (!ht_live_next(&o->live, it, &k, &v)) return 0;
  memcpy(b, v, sizeof(*b));
  return 1;
}

/* -- Text form ------------------------------------------------------------ */

/* One op as a line of the text log. */
void ht_ops_print(FILE *f, const HtOp *op)
{
  if (op->op == HT_OP_FREE) {
    fprintf(f, "%" PRIu64 " %" PRIu32 " F %" PRIu64 "%s\n", op->seq, op->tid, op->handle,
            op->flags & HT_OPF_REALLOC ? " R" : "");
    return;
  }
  fprintf(f, "%" PRIu64 " %" PRIu32 " N %" PRIu64 " %" PRIu64, op->seq, op->tid,
          op->handle, op->size);
  if (op->flags & HT_OPF_CALLOC) fputs(" C", f);
  else if (op->flags & HT_OPF_ALIGN) fprintf(f, " A%" PRIu64, op->align);
  else if (op->flags & HT_OPF_REALLOC) fprintf(f, " R%" PRIu64, op->old);
  fputc('\n', f);
}

/* A display name for an allocation stack: its site key. */
const char *ht_ops_site_name(const HtReader *r, uint32_t stack, char *buf, size_t len)
{
  ht_frames_site_name(r, stack, NULL, 0, buf, len, NULL);
  return buf;
}

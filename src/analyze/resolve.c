/* heaptape -- the resolving pass: the one live map of addresses, turning
** tape events into resolved events (allocation index, block freed, op number). */
#include <stddef.h>
#include <string.h>

#include "resolve.h"
#include "../../include/heaptape.h"

/* -- One event ------------------------------------------------------------ */

/* Set up an empty resolver. */
void ht_resolve_init(HtResolve *rs)
{
  memset(rs, 0, sizeof(*rs));
  rs->payload = sizeof(HtBlock);
  ht_live_init(&rs->live, rs->payload);
  ht_live_init(&rs->wide, offsetof(HtBlock, addr));
}

/* -- The sealer's table, packed ------------------------------------------ */

/* The sealer reads a journal (keyed by address) and keeps each block's
** index and birth besides what every consumer needs: 48 bytes as HtBlock.
** Packed, 32 (a slot of 40): the weight equal to the size (unsampled), the
** size in 32 bits, the birth's op number as the resolved frees before it
** (born_op - index) in 32 bits. A block whose values do not fit is kept
** whole in the wide table; the two tables never hold the same key. */
typedef struct HtPacked {
  uint64_t index;            /* allocation index */
  uint64_t born_ts;          /* time of its allocation */
  uint32_t size;             /* requested bytes (= weight) */
  uint32_t stack;            /* allocation stack */
  uint32_t tid;              /* as HtBlock.tid */
  uint32_t frees;            /* resolved frees before it: born_op - index */
} HtPacked;

/* b's values fit HtPacked. */
static int packed_fits(const HtBlock *b)
{
  return b->size <= UINT32_MAX && b->weight == b->size && b->born_op >= b->index &&
         b->born_op - b->index <= UINT32_MAX;
}

static void packed_set(HtPacked *p, const HtBlock *b)
{
  *p = (HtPacked){b->index, b->born_ts, (uint32_t)b->size, b->stack, b->tid,
                  (uint32_t)(b->born_op - b->index)};
}

/* Unpack p into b (its address left as it is). */
static void packed_get(const HtPacked *p, HtBlock *b)
{
  b->size = b->weight = p->size;
  b->stack = p->stack;
  b->tid = p->tid;
  b->index = p->index;
  b->born_op = p->index + p->frees;
  b->born_ts = p->born_ts;
}

/* Put blk at key; the block it drops (if any) into *old, *existed = 1.
** -1 when out of memory. */
static int packed_put(HtResolve *rs, uint64_t key, const HtBlock *blk, HtBlock *old,
                      int *existed)
{
  *existed = 0;
  if (packed_fits(blk)) {
    HtPacked *p = ht_live_put(&rs->live, key, existed);
    if (!p) return -1;
    if (*existed) packed_get(p, old);
    else if (rs->wide.count) *existed = ht_live_del(&rs->wide, key, old);
    packed_set(p, blk);
    return 0;
  }
  HtPacked p;
  if (rs->live.count && ht_live_del(&rs->live, key, &p)) {
    packed_get(&p, old);
    *existed = 1;
  }
  int was = 0;
  HtBlock *w = ht_live_put(&rs->wide, key, &was);
  if (!w) return -1;
  if (was) { memcpy(old, w, rs->wide.payload); *existed = 1; }
  memcpy(w, blk, rs->wide.payload);
  return 0;
}

/* Take the block at key out into *b; 0 if there is none. */
static int packed_del(HtResolve *rs, uint64_t key, HtBlock *b)
{
  HtPacked p;
  if (ht_live_del(&rs->live, key, &p)) { packed_get(&p, b); return 1; }
  return rs->wide.count && ht_live_del(&rs->wide, key, b);
}

/* Bytes of HtBlock a table keeps. */
static size_t resolve_payload(const HtResolve *rs)
{
  if (!rs->lean) return sizeof(HtBlock);
  if (rs->indexed) return offsetof(HtBlock, addr);  /* index and birth, no address */
  return offsetof(HtBlock, index);  /* the key is the index or the address */
}

/* Keep only the first fields of HtBlock. */
void ht_resolve_lean(HtResolve *rs, int by_index)
{
  rs->lean = 1;
  rs->by_index = by_index;
  rs->packed = rs->indexed && !by_index;
  rs->payload = rs->packed ? sizeof(HtPacked) : resolve_payload(rs);
  ht_live_free(&rs->live);
  ht_live_init(&rs->live, rs->payload);
  ht_live_free(&rs->wide);
  ht_live_init(&rs->wide, offsetof(HtBlock, addr));
  if (by_index) ht_live_dense(&rs->live);
}

void ht_resolve_carried(HtResolve *rs)
{
  rs->carried = 1;
}

void ht_resolve_indexed(HtResolve *rs)
{
  rs->indexed = 1;
  ht_resolve_lean(rs, rs->by_index);
}

/* Release what rs owns. */
void ht_resolve_free(HtResolve *rs)
{
  ht_live_free(&rs->live);
  ht_live_free(&rs->wide);
  memset(rs, 0, sizeof(*rs));
}

/* Forget every block and count. */
void ht_resolve_reset(HtResolve *rs)
{
  int by_index = rs->by_index, lean = rs->lean, indexed = rs->indexed, carried = rs->carried;
  ht_resolve_free(rs);
  ht_resolve_init(rs);
  rs->indexed = indexed;
  rs->carried = carried;
  if (lean) ht_resolve_lean(rs, by_index);
  else if (by_index) ht_live_dense(&rs->live);
  rs->by_index = by_index;
}

/* The block an event of a tape whose frees carry their block names. */
static void resolve_carried(const HtEvent *ev, HtBlock *b)
{
  memset(b, 0, sizeof(*b));
  b->index = ev->back - 1;
  b->size = ev->bsize;
  b->weight = ev->bweight;
  b->stack = ev->bstack;
  b->tid = ev->btid | ((ev->kind & HT_K_DOMAIN_RT) ? HT_BLOCK_RT : 0);
  b->addr = ev->type == HT_EV_ALLOC ? ev->addr : ev->baddr;  /* a DUP is at its address */
  b->born_op = ev->bop;
  b->born_ts = ev->bts;
}

/* Resolve one event into *out. */
void ht_resolve_event(HtResolve *rs, const HtEvent *ev, HtRes *out)
{
  out->ev = ev;
  out->rs = rs;
  out->op = HT_RES_NONE;
  out->known = out->dup = 0;
  if (rs->tableless && (ev->type == HT_EV_FREE || ev->type == HT_EV_ALLOC)) {
    if (ev->type == HT_EV_FREE) {
      if (!ev->has_blk) { rs->unknown_frees++; return; }
      resolve_carried(ev, &out->blk);
      out->known = 1;
      out->op = rs->nops++;
      return;
    }
    out->op = rs->nops++;
    out->blk = (HtBlock){.index = rs->nallocs++, .size = ev->size,
                         .weight = ev->weight ? ev->weight : ev->size, .addr = ev->addr,
                         .born_op = out->op, .born_ts = ev->ts, .stack = ev->stack,
                         .tid = ev->tid | ((ev->kind & HT_K_DOMAIN_RT) ? HT_BLOCK_RT : 0)};
    if (ev->has_blk) {
      resolve_carried(ev, &out->old);
      out->dup = 1;
      rs->dup_allocs++;
    }
    return;
  }
  if (ev->type == HT_EV_FREE) {
    if (rs->lean) memset(&out->blk, 0, sizeof(out->blk));
    int found = rs->by_index ? ev->back && ht_live_del(&rs->live, ev->back - 1, &out->blk)
              : rs->packed   ? packed_del(rs, ht_event_block(ev), &out->blk)
                             : ht_live_del(&rs->live, ht_event_block(ev), &out->blk);
    if (!found) {
      rs->unknown_frees++;
      return;
    }
    out->known = 1;
    out->op = rs->nops++;
    if (rs->lean && !rs->by_index) out->blk.addr = ev->addr;
    if (rs->by_index) out->blk.index = ev->back - 1;  /* the key */
    return;
  }
  if (ev->type != HT_EV_ALLOC) return;
  int existed = 0;
  HtBlock *b;
  out->op = rs->nops++;
  out->blk = (HtBlock){.index = rs->nallocs++, .size = ev->size,
                       .weight = ev->weight ? ev->weight : ev->size,
                       .born_op = out->op, .born_ts = ev->ts, .addr = ev->addr,
                       .stack = ev->stack,
                       .tid = ev->tid | ((ev->kind & HT_K_DOMAIN_RT) ? HT_BLOCK_RT : 0)};
  if (rs->lean) memset(&out->old, 0, sizeof(out->old));
  if (rs->by_index) {  /* the sealer says which live block the address drops */
    int dropped = ev->back && ht_live_del(&rs->live, ev->back - 1, &out->old);
    if (dropped) out->old.index = ev->back - 1;  /* the key */
    b = ht_live_put(&rs->live, out->blk.index, &existed);
    existed = dropped;
  } else if (rs->packed) {
    if (packed_put(rs, ht_event_block(ev), &out->blk, &out->old, &existed)) {
      rs->oom = 1;
      return;
    }
    if (existed) {
      out->old.addr = ev->addr;
      out->dup = 1;
      rs->dup_allocs++;
    }
    return;
  } else {
    b = ht_live_put(&rs->live, ht_event_block(ev), &existed);
    if (b && existed) { memcpy(&out->old, b, rs->payload); if (rs->lean) out->old.addr = ev->addr; }
  }
  if (!b) { rs->oom = 1; return; }
  if (existed) {
    out->dup = 1;
    rs->dup_allocs++;
  }
  memcpy(b, &out->blk, rs->payload);
}

/* -- Passes --------------------------------------------------------------- */

typedef struct RunCtx {
  HtResolve *rs;             /* the resolver */
  HtResFn fn;                /* consumer */
  HtPumpPrefetch prefetch;   /* consumer's prefetch, or NULL */
  void *ctx;                 /* consumer's argument */
} RunCtx;

/* Start loading what an event entering the ring will touch. */
static void resolve_prefetch(void *arg, const HtEvent *ev)
{
  RunCtx *c = arg;
  ht_resolve_prefetch(c->rs, ev);
  if (c->prefetch) c->prefetch(c->ctx, ev);
}

/* Resolve an event leaving the ring and hand it over. */
static void resolve_apply(void *arg, const HtEvent *ev)
{
  RunCtx *c = arg;
  HtRes res;
  ht_resolve_event(c->rs, ev, &res);
  c->fn(c->ctx, &res);
}

/* Every event of r, resolved, in order. */
int ht_resolve_run(HtResolve *rs, HtReader *r, HtResFn fn, HtPumpPrefetch prefetch,
                   void *ctx)
{
  RunCtx c = {rs, fn, prefetch, ctx};
  if (rs->by_index != ht_reader_sealed(r)) {  /* the key decides the payload */
    rs->by_index = ht_reader_sealed(r);
    if (rs->lean) ht_resolve_lean(rs, rs->by_index);
    else if (rs->by_index && !rs->live.count) ht_live_dense(&rs->live);
  }
  unsigned ver = ht_reader_header(r)->version;
  rs->tableless = rs->by_index && ((rs->lean && ver >= HT_VERSION_SEALED_BLK) ||
                                   (rs->carried && ver >= HT_VERSION_SEALED_BIRTH));
  /* Without a table nothing is worth loading early but the consumer's. */
  ht_pump_run(r, rs->tableless && !prefetch ? NULL : resolve_prefetch, resolve_apply, &c);
  return rs->oom ? HEAPTAPE_E_NOMEM : 0;
}

/* A second pass from the tape's start. */
int ht_resolve_pass(HtResolve *rs, HtReader *r, HtResFn fn, HtPumpPrefetch prefetch,
                    void *ctx)
{
  if (ht_reader_rewind(r)) return HEAPTAPE_E_NOMEM;
  ht_resolve_reset(rs);
  return ht_resolve_run(rs, r, fn, prefetch, ctx);
}

/* Iterate the blocks live now. */
int ht_resolve_live_next(const HtResolve *rs, size_t *it, uint64_t *addr, HtBlock *b)
{
  uint64_t k;
  void *v;
  const size_t in_wide = (size_t)1 << (sizeof(size_t) * 8 - 1);  /* *it: in rs->wide */
  const HtLive *t = (*it & in_wide) ? &rs->wide : &rs->live;
  size_t sub = *it & ~in_wide;
  int got = ht_live_next(t, &sub, &k, &v);
  if (!got && t == &rs->live && rs->packed) {  /* then the blocks that did not fit */
    t = &rs->wide;
    sub = 0;
    got = ht_live_next(t, &sub, &k, &v);
  }
  *it = sub | (t == &rs->wide ? in_wide : 0);
  if (!got) return 0;
  memset(b, 0, sizeof(*b));
  if (rs->packed && t == &rs->live) packed_get(v, b);
  else memcpy(b, v, t->payload);
  if (rs->lean && !rs->by_index)  /* the key is the address */
    b->addr = k ^ ((b->tid & HT_BLOCK_RT) ? 1ull << 63 : 0);
  if (rs->by_index) b->index = k;  /* the key is the index */
  *addr = b->addr;
  return 1;
}

/* Nothing to do per event: the count is the resolver's. */
static void resolve_none(void *ctx, const HtRes *res)
{
  (void)ctx;
  (void)res;
}

/* Op numbers of a whole tape. */
uint64_t ht_resolve_count_ops(HtReader *r)
{
  uint64_t n;
  if (ht_reader_sealed_ops(r, &n)) return n;  /* the sealer counted them */
  HtResolve rs;
  ht_resolve_init(&rs);
  int rc = ht_resolve_run(&rs, r, resolve_none, NULL, NULL);
  n = rc ? HT_RES_NONE : rs.nops;
  ht_resolve_free(&rs);
  if (ht_reader_rewind(r)) return HT_RES_NONE;
  return n;
}

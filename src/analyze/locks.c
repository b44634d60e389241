/* heaptape -- Steve's locking heuristics (coarse: global blocks locked for
** life; fine: a life per block rising on its ops, sinking on others'). */
#include <stdlib.h>
#include <string.h>

#include "locks.h"
#include "opsread.h"
#include "access.h"
#include "../base/grow.h"
#include "../../include/heaptape_errors.h"

#define HT_LOCKS_FREED (1ull << 63)  /* span: the block was freed; low bits its lifetime */

/* -- Set-up ----------------------------------------------------------------- */

/* Start a model. */
int ht_locks_init(HtLocks *l, HtLockModel model, unsigned global_pct)
{
  memset(l, 0, sizeof(*l));
  l->model = model;
  l->global_pct = global_pct;
  return ht_map_init(&l->live, 64);
}

/* Release what l owns. */
void ht_locks_free(HtLocks *l)
{
  free(l->span);
  free(l->global);
  free(l->lifes);
  free(l->heap);
  ht_map_free(&l->live);
  memset(l, 0, sizeof(*l));
}

/* Parse a model name. */
int ht_locks_model(const char *name, HtLockModel *m)
{
  if (!strcmp(name, "coarse")) *m = HT_LOCKS_COARSE;
  else if (!strcmp(name, "fine")) *m = HT_LOCKS_FINE;
  else return -1;
  return 0;
}

/* Whether the model needs the learning pass. */
int ht_locks_two_pass(const HtLocks *l)
{
  return l->model == HT_LOCKS_COARSE;
}

/* Whether op is one of the program's (not a Lock or Unlock added here). */
static int locks_is_op(const HtOp *op)
{
  return op->op != HT_OP_LOCK && op->op != HT_OP_UNLOCK && op->handle != 0;
}

/* -- Coarse: learning the macro lifetimes ---------------------------------- */

/* Learning pass: a New notes its op number, a Free its lifetime. */
void ht_locks_learn(HtLocks *l, const HtOp *op)
{
  if (!locks_is_op(op)) return;
  uint64_t n = l->nops++, h = op->handle;
  if (op->op == HT_OP_NEW) {
    if (h >= l->nspan) {
      size_t cap = l->nspan;
      if (ht_grow(&l->span, &cap, h + 1, sizeof(*l->span))) { l->oom = 1; return; }
      memset(l->span + l->nspan, 0, (cap - l->nspan) * sizeof(*l->span));
      l->nspan = cap;
    }
    l->span[h] = n + 1;  /* born op + 1; 0 = never seen */
  } else if (op->op == HT_OP_FREE && h < l->nspan && l->span[h] &&
             !(l->span[h] & HT_LOCKS_FREED)) {
    l->span[h] = (n - (l->span[h] - 1)) | HT_LOCKS_FREED;
  }
}

/* End of learning: a block is global when its lifetime is >= global_pct % of nops. */
void ht_locks_learned(HtLocks *l, uint64_t nops)
{
  l->nops = nops;
  l->global = calloc(l->nspan / 8 + 1, 1);
  if (!l->global) { l->oom = 1; return; }
  l->nglobal = l->nspan;
  for (size_t h = 1; h < l->nspan; h++) {
    uint64_t v = l->span[h];
    if (!v) continue;
    uint64_t life = (v & HT_LOCKS_FREED) ? v & ~HT_LOCKS_FREED : nops - (v - 1);
    if (nops && life * 100 >= (uint64_t)l->global_pct * nops) {
      l->global[h / 8] |= (uint8_t)(1u << (h % 8));
      l->globals++;
    }
  }
  free(l->span);
  l->span = NULL;
  l->nspan = 0;
  l->nops = 0;
}

/* Whether handle h was found global. */
static int locks_global(const HtLocks *l, uint64_t h)
{
  return h < l->nglobal && (l->global[h / 8] >> (h % 8) & 1);
}

/* A Lock or Unlock of handle h, placed at op (same sequence, thread, number). */
static void locks_put(HtLocks *l, const HtOp *op, uint8_t type, uint64_t h, HtLocksEmit emit,
                      void *ctx)
{
  HtOp k = {.op = type, .tid = op->tid, .index = op->index, .seq = op->seq, .ts = op->ts,
            .handle = h};
  if (type == HT_OP_LOCK) { l->locks++; l->locked++; }
  else { l->unlocks++; l->locked--; }
  emit(ctx, &k);
}

/* Coarse: global blocks are locked from their New to their Free. */
static void locks_coarse(HtLocks *l, const HtOp *op, HtLocksEmit emit, void *ctx)
{
  int g = locks_global(l, op->handle);
  if (g && op->op == HT_OP_FREE) locks_put(l, op, HT_OP_UNLOCK, op->handle, emit, ctx);
  emit(ctx, op);
  if (g && op->op == HT_OP_NEW) locks_put(l, op, HT_OP_LOCK, op->handle, emit, ctx);
}

/* -- Fine: the life of each block ------------------------------------------ */

/* Push (due, h) onto the min-heap. */
static void locks_push(HtLocks *l, uint64_t due, uint64_t h)
{
  if (ht_grow(&l->heap, &l->capheap, l->nheap + 1, sizeof(*l->heap))) { l->oom = 1; return; }
  size_t i = l->nheap++;
  HtLockDue e = {.due = due, .handle = h};
  while (i) {
    size_t p = (i - 1) / 2;
    HtLockDue *q = &l->heap[p];
    if (q->due < due || (q->due == due && q->handle < h)) break;
    l->heap[i] = *q;
    i = p;
  }
  l->heap[i] = e;
}

/* Remove the heap's smallest entry. */
static void locks_pop(HtLocks *l)
{
  HtLockDue e = l->heap[--l->nheap];
  size_t i = 0, n = l->nheap;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && (l->heap[c + 1].due < l->heap[c].due ||
                      (l->heap[c + 1].due == l->heap[c].due &&
                       l->heap[c + 1].handle < l->heap[c].handle))) c++;
    if (e.due < l->heap[c].due || (e.due == l->heap[c].due && e.handle < l->heap[c].handle)) break;
    l->heap[i] = l->heap[c];
    i = c;
  }
  if (n) l->heap[i] = e;
}

/* The state of live block h, or NULL. */
static HtLockLife *locks_life(HtLocks *l, uint64_t h)
{
  uint64_t *v = ht_map_get(&l->live, h);
  return v ? &l->lifes[*v - 1] : NULL;
}

/* Twice the life of s after op n - 1 (others' ops since its last one sank it). */
static uint64_t locks_now(const HtLockLife *s, uint64_t n)
{
  uint64_t others = n - s->last - 1;
  return s->life2 > others ? s->life2 - others : 0;
}

/* A state for new block h at op n (life 1 after its New). */
static HtLockLife *locks_born(HtLocks *l, uint64_t h, uint64_t n)
{
  uint64_t idx;
  if (l->freelife) {
    idx = l->freelife - 1;
    l->freelife = l->lifes[idx].last;
  } else {
    if (ht_grow(&l->lifes, &l->caplifes, l->nlifes + 1, sizeof(*l->lifes))) { l->oom = 1; return NULL; }
    idx = l->nlifes++;
  }
  if (ht_map_put(&l->live, h, idx + 1)) { l->oom = 1; return NULL; }
  HtLockLife *s = &l->lifes[idx];
  *s = (HtLockLife){.last = n, .life2 = 2, .queued = 0};
  return s;
}

/* Fine: update the op's block, then unlock the blocks whose life ran out. */
static void locks_fine(HtLocks *l, const HtOp *op, HtLocksEmit emit, void *ctx)
{
  uint64_t n = l->nops++, h = op->handle;
  HtLockLife *s = locks_life(l, h);
  if (op->op == HT_OP_FREE) {
    if (s) {
      if (locks_now(s, n)) locks_put(l, op, HT_OP_UNLOCK, h, emit, ctx);
      uint64_t idx;
      ht_map_del(&l->live, h, &idx);
      l->lifes[idx - 1].last = l->freelife;  /* its heap entry goes stale */
      l->freelife = idx;
    }
    emit(ctx, op);
  } else {
    int was = 0;
    if (op->op == HT_OP_NEW && !s) s = locks_born(l, h, n);
    else if (s) {
      uint64_t cur = locks_now(s, n);
      was = cur > 0;
      s->life2 = cur + 2;
      s->last = n;
    }
    emit(ctx, op);
    if (s && !was) {
      locks_put(l, op, HT_OP_LOCK, h, emit, ctx);
      if (!s->queued) { s->queued = 1; locks_push(l, s->last + s->life2, h); }
    }
  }
  /* Entries fall due in op order: those of op n are the only ones <= n. */
  while (l->nheap && l->heap[0].due <= n) {
    HtLockDue e = l->heap[0];
    locks_pop(l);
    HtLockLife *t = locks_life(l, e.handle);
    if (!t) continue;                     /* freed meanwhile */
    uint64_t due = t->last + t->life2;
    if (due > n) { locks_push(l, due, e.handle); continue; }  /* it had ops since */
    t->queued = 0;
    locks_put(l, op, HT_OP_UNLOCK, e.handle, emit, ctx);
  }
}

/* -- The stream ------------------------------------------------------------- */

/* One op of the stream, with its Lock and Unlock ops. */
void ht_locks_feed(HtLocks *l, const HtOp *op, HtLocksEmit emit, void *ctx)
{
  if (!locks_is_op(op)) return;  /* a Lock or Unlock of an earlier pass */
  if (l->model == HT_LOCKS_COARSE) { l->nops++; locks_coarse(l, op, emit, ctx); }
  else locks_fine(l, op, emit, ctx);
}

/* -- A tape through the model ----------------------------------------------- */

/* What a pass over a tape carries. */
typedef struct LocksPass {
  HtLocks *l;                /* the model */
  HtOps *o;                  /* the ops stream */
  HtLocksEmit emit;          /* where the ops go (feeding pass) */
  void *ctx;                 /* its context */
} LocksPass;

/* Learning pass: one resolved event. */
static void locks_learn_res(void *ctx, const HtRes *res)
{
  LocksPass *P = ctx;
  HtOp op;
  if (ht_ops_res(P->o, res, &op)) ht_locks_learn(P->l, &op);
}

/* Feeding pass: one resolved event. */
static void locks_feed_res(void *ctx, const HtRes *res)
{
  LocksPass *P = ctx;
  HtOp op;
  if (ht_ops_res(P->o, res, &op)) ht_locks_feed(P->l, &op, P->emit, P->ctx);
}

/* An access as an op of its block, placed after the ops so far. */
static HtOp locks_access_op(const HtOps *o, const HtAccess *a)
{
  return (HtOp){.op = a->kind, .tid = a->tid, .seq = a->before, .ts = a->ts,
                .index = o->nops ? o->nops - 1 : 0, .handle = a->handle, .addr = a->addr,
                .size = a->size, .live = o->live_bytes};
}

/* Learning pass: one access. */
static void locks_learn_acc(void *ctx, const HtAccess *a)
{
  LocksPass *P = ctx;
  HtOp op = locks_access_op(P->o, a);
  ht_locks_learn(P->l, &op);
}

/* Feeding pass: one access. */
static void locks_feed_acc(void *ctx, const HtAccess *a)
{
  LocksPass *P = ctx;
  HtOp op = locks_access_op(P->o, a);
  ht_locks_feed(P->l, &op, P->emit, P->ctx);
}

/* One pass over r: its events, and its accesses if it has any. */
static int locks_pass(HtResolve *rs, HtReader *r, HtResFn fn, HtAccessFn afn, LocksPass *P)
{
  HtAccessInfo ai;
  ht_access_info(r, &ai);
  return ai.present ? ht_access_run(rs, r, fn, afn, P) : ht_resolve_run(rs, r, fn, NULL, P);
}

/* The whole of a tape through the model. */
int ht_locks_run(HtLocks *l, HtReader *r, HtOps *o, HtLocksEmit emit, void *ctx)
{
  HtResolve rs;
  int rc = 0;
  if (ht_locks_two_pass(l)) {
    HtOps first;
    if (ht_ops_init(&first)) return HEAPTAPE_E_NOMEM;
    LocksPass P = {.l = l, .o = &first};
    ht_resolve_init(&rs);
    rc = locks_pass(&rs, r, locks_learn_res, locks_learn_acc, &P);
    ht_resolve_free(&rs);
    if (first.oom) rc = HEAPTAPE_E_NOMEM;
    ht_locks_learned(l, l->nops);
    ht_ops_free(&first);
    if (!rc && ht_reader_rewind(r)) rc = HEAPTAPE_E_NOMEM;
    if (rc || l->oom) return HEAPTAPE_E_NOMEM;
  }
  LocksPass P = {.l = l, .o = o, .emit = emit, .ctx = ctx};
  ht_resolve_init(&rs);
  rc = locks_pass(&rs, r, locks_feed_res, locks_feed_acc, &P);
  ht_resolve_free(&rs);
  return rc || o->oom || l->oom ? HEAPTAPE_E_NOMEM : 0;
}

/* The same over an operations log. */
int ht_locks_run_log(HtLocks *l, HtOpsRead *rd, HtLocksEmit emit, void *ctx, char *err,
                     size_t errlen)
{
  HtOp op;
  int rc;
  if (ht_locks_two_pass(l)) {
    while ((rc = ht_opsread_next(rd, &op, err, errlen)) > 0) ht_locks_learn(l, &op);
    if (rc < 0) return -1;
    ht_locks_learned(l, l->nops);
    if (ht_opsread_rewind(rd)) { snprintf(err, errlen, "%s: cannot read it again", rd->path); return -1; }
  }
  while ((rc = ht_opsread_next(rd, &op, err, errlen)) > 0 && !l->oom) ht_locks_feed(l, &op, emit, ctx);
  if (!rc && l->oom) { snprintf(err, errlen, "out of memory"); rc = -1; }
  return rc < 0 ? -1 : 0;
}

/* heaptape -- accesses to heap blocks: the ACCESS packets decoded (runs of
** delta-coded accesses, docs/FORMAT.md "ACCESS packets") and delivered alone
** or among the resolved events. */
#include <stdlib.h>
#include <string.h>

#include "../base/grow.h"
#include "../base/map.h"
#include "../base/varint.h"
#include "../../include/heaptape_errors.h"
#include "access.h"

static const uint8_t acc_kind[4] = {0, HT_ACC_LOAD, HT_ACC_STORE, HT_ACC_MODIFY};

struct HtAccessIter {
  HtReader *r;               /* the tape */
  size_t next_pk;            /* next ACCESS packet to open */
  uint8_t *own;              /* decompressed body of the open packet, or NULL */
  const uint8_t *p, *end;    /* decoding position in it */
  uint64_t damaged;          /* packets that ended early */
  /* Packet deltas: */
  uint64_t tid, blk, before, ts;
  /* Run state: */
  int in_run;                /* a run is open (its accesses follow) */
  uint64_t off, size;        /* previous access of the run */
  uint64_t left;             /* repetitions of the last access still due */
  int64_t step;              /* their step */
  uint8_t kind;              /* their kind (HT_ACC_*) */
};

/* The tape's access figures. */
void ht_access_info(const HtReader *r, HtAccessInfo *info)
{
  memset(info, 0, sizeof(*info));
  info->sample = ht_reader_header(r)->access_sample;
  info->packets = ht_reader_access_count(r, &info->accesses);
  info->present = info->sample != 0 || info->packets != 0;
  if (info->present && !info->sample) info->sample = 1;
}

int ht_access_open(HtAccessIter **it, HtReader *r)
{
  *it = calloc(1, sizeof(**it));
  if (!*it) return HEAPTAPE_E_NOMEM;
  (*it)->r = r;
  return 0;
}

void ht_access_close(HtAccessIter *it)
{
  if (!it) return;
  free(it->own);
  free(it);
}

uint64_t ht_access_damaged(const HtAccessIter *it) { return it->damaged; }

/* Open the next packet; 0 at the end. */
static int iter_packet(HtAccessIter *it)
{
  for (;;) {
    free(it->own);
    it->own = NULL;
    it->p = it->end = NULL;
    it->in_run = 0;
    it->left = 0;
    HtPacketInfo pk;
    if (it->next_pk >= ht_reader_access_count(it->r, NULL)) return 0;
    const uint8_t *b = ht_reader_access_packet(it->r, it->next_pk++, &pk, &it->own);
    if (!b) { it->damaged++; continue; }
    it->p = b;
    it->end = b + pk.rawlen;
    it->tid = 0;
    it->blk = 0;
    it->before = pk.seq0;
    it->ts = pk.ts0;
    return 1;
  }
}

/* The packet's body is damaged: drop the rest of it. */
static void iter_bad(HtAccessIter *it)
{
  it->damaged++;
  it->p = it->end;
  it->in_run = 0;
  it->left = 0;
}

/* Fill *a from the run's state and its last access. */
static void iter_fill(const HtAccessIter *it, HtAccess *a)
{
  memset(a, 0, sizeof(*a));
  a->kind = it->kind;
  a->tid = (uint32_t)it->tid;
  a->before = it->before;
  a->ts = it->ts;
  a->alloc_seq = it->blk;
  a->offset = it->off;
  a->size = (uint32_t)it->size;
}

int ht_access_next(HtAccessIter *it, HtAccess *a)
{
  for (;;) {
    if (it->left) {  /* a repeated access */
      it->left--;
      it->off += (uint64_t)it->step;
      iter_fill(it, a);
      return 1;
    }
    if (it->p >= it->end && !iter_packet(it)) return 0;
    if (it->p >= it->end) continue;
    uint64_t v;
    if (!it->in_run) {  /* run := tid blk before dt */
      uint64_t t, b, d, dt;
      if (ht_ruleb128(&it->p, it->end, &t) || ht_ruleb128(&it->p, it->end, &b) ||
          ht_ruleb128(&it->p, it->end, &d) || ht_ruleb128(&it->p, it->end, &dt)) {
        iter_bad(it);
        continue;
      }
      it->tid += (uint64_t)ht_unzigzag(t);
      it->blk += (uint64_t)ht_unzigzag(b);
      it->before += d;
      it->ts += dt;
      it->off = it->size = 0;
      it->in_run = 1;
    }
    if (it->p >= it->end) { iter_bad(it); continue; }
    uint8_t op = *it->p++;
    if (!HT_AOP_KIND(op)) { it->in_run = 0; continue; }  /* the run's end */
    uint64_t size = HT_AOP_SIZE(op) == HT_AOP_SIZE_X ? 0 : 1ull << HT_AOP_SIZE(op);
    int64_t step = 0;
    if (HT_AOP_SIZE(op) == HT_AOP_SIZE_X) {
      if (ht_ruleb128(&it->p, it->end, &size) || size > UINT32_MAX) { iter_bad(it); continue; }
    }
    switch (HT_AOP_STEP(op)) {
    case HT_ASTEP_SEQ: step = (int64_t)it->size; break;
    case HT_ASTEP_SAME: step = 0; break;
    case HT_ASTEP_X:
      if (ht_ruleb128(&it->p, it->end, &v)) { iter_bad(it); continue; }
      step = ht_unzigzag(v);
      break;
    default: iter_bad(it); continue;
    }
    it->left = 0;
    if (op & HT_AOP_REP) {
      if (ht_ruleb128(&it->p, it->end, &v) || v == UINT64_MAX) { iter_bad(it); continue; }
      it->left = v + 1;
    }
    it->kind = acc_kind[HT_AOP_KIND(op)];
    it->size = size;
    it->step = step;
    it->off += (uint64_t)step;
    iter_fill(it, a);
    return 1;
  }
}

/* -- Among the events ---------------------------------------------------- */

/* What the pass keeps of a live block. */
typedef struct BlockRef { uint64_t seq, handle, addr, size; uint32_t stack; } BlockRef;

typedef struct AccessRun {
  HtAccessIter *it;          /* the accesses */
  HtAccess next;             /* the next one, if have */
  int have;                  /* next holds an access not yet delivered */
  HtMap byseq;               /* ALLOC seq of a live block -> slot + 1 */
  HtMap byhandle;            /* its handle -> slot + 1 */
  BlockRef *slot;            /* live blocks (free slots chained by handle) */
  size_t nslot, capslot;     /* slots used, allocated */
  uint64_t freeslot;         /* first free slot + 1, 0 = none */
  HtResFn fn;                /* the events' consumer */
  HtAccessFn afn;            /* the accesses' consumer */
  void *ctx;                 /* theirs */
  int oom;                   /* out of memory */
} AccessRun;

/* Deliver every access that came before event seq, each with its block. */
static void run_accesses(AccessRun *ar, uint64_t seq)
{
  while (ar->have && ar->next.before <= seq) {
    HtAccess *a = &ar->next;
    uint64_t *s = ht_map_get(&ar->byseq, a->alloc_seq);
    if (s) {
      const BlockRef *b = &ar->slot[*s - 1];
      a->handle = b->handle;
      a->addr = b->addr + a->offset;
      a->block_size = b->size;
      a->stack = b->stack;
    }
    ar->afn(ar->ctx, a);
    ar->have = ht_access_next(ar->it, &ar->next);
  }
}

/* Forget the live block with this handle. */
static void run_forget(AccessRun *ar, uint64_t handle)
{
  uint64_t s;
  if (!ht_map_del(&ar->byhandle, handle, &s)) return;
  ht_map_del(&ar->byseq, ar->slot[s - 1].seq, NULL);
  ar->slot[s - 1].handle = ar->freeslot;
  ar->freeslot = s;
}

/* Keep a new live block. */
static void run_keep(AccessRun *ar, const HtRes *res)
{
  uint64_t s = ar->freeslot;
  if (s) ar->freeslot = ar->slot[s - 1].handle;
  else if (ht_grow(&ar->slot, &ar->capslot, ar->nslot + 1, sizeof(BlockRef))) { ar->oom = 1; return; }
  else s = ++ar->nslot;
  const HtEvent *ev = res->ev;
  ar->slot[s - 1] = (BlockRef){.seq = ev->seq, .handle = res->blk.index + 1,
                               .addr = ev->addr, .size = ev->size, .stack = ev->stack};
  if (ht_map_put(&ar->byseq, ev->seq, s) || ht_map_put(&ar->byhandle, res->blk.index + 1, s))
    ar->oom = 1;
}

/* One resolved event: the accesses before it, then it. */
static void run_event(void *ctx, const HtRes *res)
{
  AccessRun *ar = ctx;
  const HtEvent *ev = res->ev;
  run_accesses(ar, ev->seq);
  if (ev->type == HT_EV_ALLOC) {
    if (res->dup) run_forget(ar, res->old.index + 1);
    run_keep(ar, res);
  } else if (ev->type == HT_EV_FREE && res->known) {
    run_forget(ar, res->blk.index + 1);
  }
  ar->fn(ar->ctx, res);
}

int ht_access_run(HtResolve *rs, HtReader *r, HtResFn fn, HtAccessFn afn, void *ctx)
{
  AccessRun ar = {.fn = fn, .afn = afn, .ctx = ctx};
  if (ht_access_open(&ar.it, r) || ht_map_init(&ar.byseq, 64) || ht_map_init(&ar.byhandle, 64)) {
    ht_access_close(ar.it);
    ht_map_free(&ar.byseq);
    return HEAPTAPE_E_NOMEM;
  }
  ar.have = ht_access_next(ar.it, &ar.next);
  int rc = ht_resolve_run(rs, r, run_event, NULL, &ar);
  run_accesses(&ar, UINT64_MAX);
  ht_access_close(ar.it);
  ht_map_free(&ar.byseq);
  ht_map_free(&ar.byhandle);
  free(ar.slot);
  return rc ? rc : ar.oom ? HEAPTAPE_E_NOMEM : 0;
}

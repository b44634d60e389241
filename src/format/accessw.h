/* heaptape -- the ACCESS packet encoder: accesses to heap blocks as runs of
** delta-coded, repeat-folded records (docs/FORMAT.md "ACCESS packets").
** Header-only and libc-free (no call but memset of the compiler's), so
** heaptape's Valgrind tool, which cannot use libc, compiles it as it is. */
#ifndef HT_ACCESSW_H
#define HT_ACCESSW_H

#include "../base/varint.h"
#include "format.h"

/* Worst case of one run head and one access record. */
#define HT_ACC_RUN_MAX (4 * HT_ULEB_MAX)
#define HT_ACC_REC_MAX (1 + 3 * HT_ULEB_MAX + 1)

typedef struct HtAccessW {
  uint8_t *buf, *p, *end;    /* the body, next byte, end of its room */
  uint64_t seq0, ts0;        /* the packet's first run: before, time */
  uint64_t seq1;             /* its last run's before */
  uint32_t nev;              /* accesses in the packet */
  uint64_t tid, blk, before, ts; /* the open run (run deltas' bases after it) */
  int in_run;                /* a run is open */
  uint64_t off, size;        /* the run's last access as written */
  /* The access held back to fold its repeats (n > 0): */
  uint64_t n;                /* times it happens */
  unsigned kind;             /* HT_AK_* */
  uint64_t hsize;            /* its size */
  int64_t step;              /* offset - previous offset, each time */
  uint64_t hoff;             /* offset of its last time */
} HtAccessW;

/* Point w at an empty body of cap bytes (cap >= HT_ACC_RUN_MAX +
** 2 * HT_ACC_REC_MAX + 1). */
HT_INLINE void ht_accessw_init(HtAccessW *w, uint8_t *buf, size_t cap)
{
  *w = (HtAccessW){ .buf = buf, .p = buf, .end = buf + cap };
}

/* Write the held-back access (and its repeats). */
HT_INLINE void ht_accessw_put_held(HtAccessW *w)
{
  if (!w->n) return;
  uint8_t *p = w->p;
  unsigned sz = 0;
  while (sz < 7 && (1ull << sz) != w->hsize) sz++;
  unsigned mode = w->step == (int64_t)w->size ? HT_ASTEP_SEQ
                : w->step == 0 ? HT_ASTEP_SAME : HT_ASTEP_X;
  uint8_t op = (uint8_t)(w->kind | sz << 2 | mode << 5 | (w->n > 1 ? HT_AOP_REP : 0));
  *p++ = op;
  if (sz == HT_AOP_SIZE_X) p = ht_wuleb128(p, w->hsize);
  if (mode == HT_ASTEP_X) p = ht_wuleb128(p, ht_zigzag(w->step));
  if (w->n > 1) p = ht_wuleb128(p, w->n - 2);
  w->p = p;
  w->off = w->hoff;
  w->size = w->hsize;
  w->n = 0;
}

/* Close the open run (its terminating 0). */
HT_INLINE void ht_accessw_end_run(HtAccessW *w)
{
  if (!w->in_run) return;
  ht_accessw_put_held(w);
  *w->p++ = 0;
  w->in_run = 0;
}

/* Room left for a new run with one access (else flush the packet first). */
HT_INLINE int ht_accessw_full(const HtAccessW *w)
{
  return (size_t)(w->end - w->p) < HT_ACC_RUN_MAX + 2 * HT_ACC_REC_MAX + 1;
}

/* One access: kind (HT_AK_*) of size bytes at off in the block whose ALLOC
** has sequence number blk, by thread tid, before event `before`, at time ts.
** The caller flushes when ht_accessw_full says so (after ending the run). */
HT_INLINE void ht_accessw_add(HtAccessW *w, uint32_t tid, uint64_t blk, uint64_t before,
                              uint64_t ts, unsigned kind, uint64_t off, uint64_t size)
{
  if (!w->in_run || tid != w->tid || blk != w->blk || before != w->before || ts != w->ts ||
      (size_t)(w->end - w->p) < 2 * HT_ACC_REC_MAX + 1) {
    ht_accessw_end_run(w);
    uint8_t *p = w->p;
    if (!w->nev && p == w->buf) { w->seq0 = w->before = before; w->ts0 = w->ts = ts; w->tid = w->blk = 0; }
    p = ht_wuleb128(p, ht_zigzag((int64_t)(tid - w->tid)));
    p = ht_wuleb128(p, ht_zigzag((int64_t)(blk - w->blk)));
    p = ht_wuleb128(p, before - w->before);
    p = ht_wuleb128(p, ts - w->ts);
    w->p = p;
    w->tid = tid; w->blk = blk; w->before = w->seq1 = before; w->ts = ts;
    w->in_run = 1;
    w->off = w->size = 0;
  }
  w->nev++;
  if (w->n) {
    int64_t step = (int64_t)(off - w->hoff);
    if (kind == w->kind && size == w->hsize && step == w->step) {
      w->n++;
      w->hoff = off;
      return;
    }
    ht_accessw_put_held(w);
  }
  w->n = 1;
  w->kind = kind;
  w->hsize = size;
  w->step = (int64_t)(off - w->off);
  w->hoff = off;
}

/* Bytes of the finished body (after ht_accessw_end_run). */
HT_INLINE size_t ht_accessw_len(const HtAccessW *w) { return (size_t)(w->p - w->buf); }

#endif

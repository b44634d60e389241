/* heaptape -- one thread's event encoder: appends records to a packet body.
** Inline fast paths reserve the worst case once; the flush hook is the slow path. */
#ifndef HT_STREAM_H
#define HT_STREAM_H

#include "../base/varint.h"
#include "format.h"

typedef struct HtStream HtStream;

/* Back-references: a FREE of the block allocated k allocations ago in the
** same packet is written as k (FREE_BACK), an ALLOC of the address freed k
** frees ago likewise (ALLOC_BACK). Recent blocks recur in every loop, so
** the distances recur and compress to almost nothing. The writer finds
** them through a direct-mapped table (O(1); a collision only costs a miss). */
#define HT_BACKREF_BITS 10
#define HT_BACKREF_SLOTS (1u << HT_BACKREF_BITS)
typedef struct HtBackref {
  uint64_t addr;         /* block address */
  uint64_t ord;          /* stream ordinal of its record (na or nf), 0 = none */
} HtBackref;

/* Slot of an address in the back-reference tables. */
HT_INLINE unsigned ht_backref_slot(uint64_t addr)
{
  return (unsigned)(((addr >> 4) * 0x9E3779B97F4A7C15ULL) >> (64 - HT_BACKREF_BITS));
}
/* Called when the body cannot take another record (or on demand); must leave
** s with an empty body (ht_stream_reset) and room for HT_REC_MAX bytes. */
typedef void (*HtStreamFlush)(HtStream *s, void *ctx);

struct HtStream {
  uint8_t *buf;          /* packet body start */
  uint8_t *p;            /* next byte to write */
  uint8_t *end;          /* end of usable room (buf + cap) */
  HtStreamFlush flush;   /* slow path when room runs out */
  void *ctx;             /* argument of flush */
  uint64_t seq0;         /* sequence number of the packet's first event, 0 none */
  uint64_t seq_prev;     /* sequence number of the last event written */
  uint64_t ts0;          /* timestamp at packet start */
  uint64_t ts_prev;      /* last timestamp written (or ts0) */
  uint64_t addr_prev;    /* base for address deltas, 0 at packet start */
  uint64_t stack_prev;   /* base for stack-id deltas, 0 at packet start */
  uint32_t nev;          /* seq-bearing records in the packet */
  uint16_t gen;          /* stack generation: RESET records so far */
  uint16_t gen0;         /* stack generation at packet start */
  uint32_t pid;          /* process id written in the packet header */
  uint32_t tid;          /* thread id written in the packet header */
  uint64_t na, nf;       /* ALLOC and FREE records of the stream so far */
  uint64_t na0, nf0;     /* their values at packet start */
  HtBackref ab[HT_BACKREF_SLOTS]; /* recent allocations, by address hash */
  HtBackref fb[HT_BACKREF_SLOTS]; /* recent frees, by address hash */
};

/* Worst case of one fixed-size record (strings and STACK reserve their own). */
#define HT_REC_MAX (1 + 6 * HT_ULEB_MAX + 1)

/* Point s at an empty body buffer of cap bytes. */
void ht_stream_init(HtStream *s, uint8_t *buf, size_t cap, uint32_t pid,
                    uint32_t tid, HtStreamFlush flush, void *ctx) HT_HIDDEN;
/* Start a new packet body in the same buffer; keeps seq and time. */
void ht_stream_reset(HtStream *s) HT_HIDDEN;
/* Make room for n bytes, flushing if needed; returns 0 or -1 if n can never fit. */
int ht_stream_need_slow(HtStream *s, size_t n) HT_HIDDEN;

/* Ensure n bytes of room. */
HT_INLINE int ht_stream_need(HtStream *s, size_t n)
{
  if (HT_LIKELY((size_t)(s->end - s->p) >= n)) return 0;
  return ht_stream_need_slow(s, n);
}

/* Write the head byte and the sequence gap of a seq-bearing record. */
HT_INLINE uint8_t *stream_head_seq(HtStream *s, uint8_t *p, unsigned head,
                                   uint64_t seq)
{
  if (HT_UNLIKELY(s->nev == 0)) {  /* first event: seq0 is in the header */
    s->seq0 = seq;
    s->seq_prev = seq - 1;
  }
  uint64_t gap = seq - s->seq_prev - 1;
  s->seq_prev = seq;
  s->nev++;
  if (HT_LIKELY(gap == 0)) { *p++ = (uint8_t)head; return p; }
  *p++ = (uint8_t)(head | HT_HEAD_X);
  return ht_wuleb128(p, gap);
}

/* Emit a TIME record if ts moved since the last one. */
HT_INLINE void ht_stream_time(HtStream *s, uint64_t ts)
{
  if (HT_LIKELY(ts <= s->ts_prev)) return;
  if (ht_stream_need(s, 1 + HT_ULEB_MAX)) return;
  uint8_t *p = s->p;
  *p++ = HT_R_TIME;
  s->p = ht_wuleb128(p, ts - s->ts_prev);
  s->ts_prev = ts;
}

/* Append an allocation. weight 0 means "implied by the tape's sampling". */
HT_INLINE void ht_stream_alloc(HtStream *s, uint64_t seq, unsigned kind,
                               uint64_t size, uint64_t addr, uint64_t stack,
                               uint64_t align, uint64_t weight)
{
  if (ht_stream_need(s, HT_REC_MAX)) return;
  unsigned h = ht_backref_slot(addr);
  HtBackref *f = &s->fb[h];
  int back = f->addr == addr && f->ord > s->nf0 && s->nf - f->ord < HT_BACKREF_MAX;
  unsigned head = (back ? HT_R_ALLOC_BACK : HT_R_ALLOC) | (kind ? HT_RF_KIND : 0) |
                  (weight ? HT_RF_WEIGHT : 0);
  uint8_t *p = stream_head_seq(s, s->p, head, seq);
  if (kind) *p++ = (uint8_t)kind;
  p = ht_wuleb128(p, size);
  if (back) p = ht_wuleb128(p, s->nf - f->ord);
  else {
    p = ht_wuleb128(p, ht_zigzag((int64_t)(addr - s->addr_prev)));
    s->addr_prev = addr;
  }
  p = ht_wuleb128(p, ht_zigzag((int64_t)(stack - s->stack_prev)));
  if (HT_K_HAS_ALIGN(kind)) p = ht_wuleb128(p, align);
  if (weight) p = ht_wuleb128(p, weight);
  s->stack_prev = stack;
  s->ab[h].addr = addr;
  s->ab[h].ord = ++s->na;
  s->p = p;
}

/* Append a free. size is written only for sized kinds. */
HT_INLINE void ht_stream_free(HtStream *s, uint64_t seq, unsigned kind,
                              uint64_t addr, uint64_t size)
{
  if (ht_stream_need(s, HT_REC_MAX)) return;
  unsigned h = ht_backref_slot(addr);
  HtBackref *a = &s->ab[h];
  int back = a->addr == addr && a->ord > s->na0 && s->na - a->ord < HT_BACKREF_MAX;
  uint8_t *p = stream_head_seq(s, s->p, (back ? HT_R_FREE_BACK : HT_R_FREE) |
                               (kind ? HT_RF_KIND : 0), seq);
  if (kind) *p++ = (uint8_t)kind;
  if (back) p = ht_wuleb128(p, s->na - a->ord);
  else {
    p = ht_wuleb128(p, ht_zigzag((int64_t)(addr - s->addr_prev)));
    s->addr_prev = addr;
  }
  if (HT_K_HAS_SIZE(kind)) p = ht_wuleb128(p, size);
  s->fb[h].addr = addr;
  s->fb[h].ord = ++s->nf;
  s->p = p;
}

/* Define stack nodes first..first+n-1: the first a child of parent (0 =
** root), each next one a child of the one before; values[] outermost first
** (ip << 1, or location id << 1 | 1). Ids of a stream are handed out in
** order from 1; first is explicit so a reader that lost a packet never
** renumbers the ids after it. */
void ht_stream_stack_define(HtStream *s, uint64_t first, uint64_t parent,
                     const uint64_t *values, size_t n) HT_HIDDEN;
/* Seq-bearing records with a string: THREAD or MARK. */
void ht_stream_string(HtStream *s, unsigned type, uint64_t seq,
                      const char *str, size_t len) HT_HIDDEN;
/* RSS sample or LOST count. */
void ht_stream_value(HtStream *s, unsigned type, uint64_t seq, uint64_t v) HT_HIDDEN;
/* Say that the numbers first..first+n-1 will never be used (EXT VOID);
** -1 when there is no room for it (the recorder reserves the room with
** each event's: REC_NEED). */
int ht_stream_void(HtStream *s, uint64_t first, uint64_t n) HT_HIDDEN;
/* Forget every stack id of this stream (the next one defined is 1). */
void ht_stream_stack_reset(HtStream *s) HT_HIDDEN;

typedef struct HtSegment {
  uint64_t vaddr;        /* segment start relative to the load base */
  uint64_t memsz;        /* bytes in memory */
  uint32_t prot;         /* PF_R | PF_W | PF_X as in the ELF header */
} HtSegment;

/* Module load (unload = 0) or unload (unload = 1). */
void ht_stream_module(HtStream *s, uint64_t seq, int unload, const char *path,
                      uint64_t base, const uint8_t *build_id, size_t bid_len,
                      const HtSegment *segs, size_t nseg) HT_HIDDEN;

#endif

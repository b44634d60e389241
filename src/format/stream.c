/* heaptape -- the slow and rare paths of the per-thread event encoder.
** Fast records (alloc, free, time) are inline in stream.h. */
#include "stream.h"

/* -- Buffer management ---------------------------------------------------- */

/* Point s at an empty body buffer of cap bytes. */
void ht_stream_init(HtStream *s, uint8_t *buf, size_t cap, uint32_t pid,
                    uint32_t tid, HtStreamFlush flush, void *ctx)
{
  memset(s, 0, sizeof(*s));
  s->buf = s->p = buf;
  s->end = buf + cap;
  s->pid = pid;
  s->tid = tid;
  s->flush = flush;
  s->ctx = ctx;
}

/* Start a new packet body in the same buffer; keeps seq and time. */
void ht_stream_reset(HtStream *s)
{
  s->p = s->buf;
  s->seq0 = 0;
  s->nev = 0;
  s->ts0 = s->ts_prev;
  s->addr_prev = 0;
  s->stack_prev = 0;
  s->gen0 = s->gen;
  s->na0 = s->na; /* back-references never reach into an earlier packet */
  s->nf0 = s->nf;
}

/* Make room for n bytes, flushing if needed; returns 0 or -1 if n can never fit. */
int ht_stream_need_slow(HtStream *s, size_t n)
{
  if (s->p != s->buf && s->flush) s->flush(s, s->ctx);
  return (size_t)(s->end - s->p) >= n ? 0 : -1;
}

/* -- Rare records --------------------------------------------------------- */

/* Define stack nodes first..first+n-1 under parent, frames outermost first. */
void ht_stream_stack_define(HtStream *s, uint64_t first, uint64_t parent,
                     const uint64_t *values, size_t n)
{
  if (ht_stream_need(s, 1 + 3 * HT_ULEB_MAX + n * HT_ULEB_MAX)) return;
  uint8_t *p = s->p;
  *p++ = HT_R_STACK;
  p = ht_wuleb128(p, first);
  p = ht_wuleb128(p, parent);
  p = ht_wuleb128(p, n);
  uint64_t prev = 0;
  for (size_t i = 0; i < n; i++) {
    p = ht_wuleb128(p, ht_zigzag((int64_t)(values[i] - prev)));
    prev = values[i];
  }
  s->p = p;
}

/* Seq-bearing records with a string: THREAD or MARK. */
void ht_stream_string(HtStream *s, unsigned type, uint64_t seq,
                      const char *str, size_t len)
{
  if (len > 4096) len = 4096;
  if (ht_stream_need(s, 1 + 2 * HT_ULEB_MAX + len)) return;
  uint8_t *p = stream_head_seq(s, s->p, type, seq);
  p = ht_wuleb128(p, len);
  s->p = ht_wmem(p, str, len);
}

/* RSS sample or LOST count. */
void ht_stream_value(HtStream *s, unsigned type, uint64_t seq, uint64_t v)
{
  if (ht_stream_need(s, 1 + 2 * HT_ULEB_MAX)) return;
  uint8_t *p = stream_head_seq(s, s->p, type, seq);
  s->p = ht_wuleb128(p, v);
}

int ht_stream_void(HtStream *s, uint64_t first, uint64_t n)
{
  uint8_t pay[2 * HT_ULEB_MAX];
  size_t len = (size_t)(ht_wuleb128(ht_wuleb128(pay, first), n) - pay);
  if (ht_stream_need(s, 3 + len)) return -1;
  uint8_t *p = s->p;
  *p++ = HT_R_EXT;
  *p++ = HT_X_VOID;
  *p++ = (uint8_t)len;                 /* below 128: one byte of uleb */
  memcpy(p, pay, len);
  s->p = p + len;
  return 0;
}

/* Forget every stack id of this stream. */
void ht_stream_stack_reset(HtStream *s)
{
  if (ht_stream_need(s, 1)) return;
  *s->p++ = HT_R_RESET;
  s->stack_prev = 0;
  s->gen++;
}

/* Module load or unload. */
void ht_stream_module(HtStream *s, uint64_t seq, int unload, const char *path,
                      uint64_t base, const uint8_t *build_id, size_t bid_len,
                      const HtSegment *segs, size_t nseg)
{
  size_t plen = strlen(path);
  if (plen > 4096) plen = 4096;
  if (bid_len > 64) bid_len = 64;
  if (nseg > 64) nseg = 64;
  if (ht_stream_need(s, 1 + 6 * HT_ULEB_MAX + plen + bid_len +
                        nseg * 3 * HT_ULEB_MAX)) return;
  uint8_t *p = stream_head_seq(s, s->p, HT_R_MODULE | (unload ? HT_RF_UNLOAD : 0),
                               seq);
  p = ht_wuleb128(p, plen);
  p = ht_wmem(p, path, plen);
  p = ht_wuleb128(p, base);
  p = ht_wuleb128(p, bid_len);
  p = ht_wmem(p, build_id, bid_len);
  p = ht_wuleb128(p, nseg);
  for (size_t i = 0; i < nseg; i++) {
    p = ht_wuleb128(p, segs[i].vaddr);
    p = ht_wuleb128(p, segs[i].memsz);
    p = ht_wuleb128(p, segs[i].prot);
  }
  s->p = p;
}

/* heaptape -- the sealed tape's writer: events in global order into blocks
** of columns, each block one packet of zstd-compressed columns (format.h,
** versions 2 to 8; it writes 8). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "phead.h"
#include "sealclass.h"
#include "sealw.h"
#include "../base/grow.h"
#include "../base/map.h"
#include "../base/varint.h"
#include "../../include/heaptape.h"

/* Bits of the filter of a block's freed addresses: an ALLOC at an address
** the block never freed (fresh memory) skips the searches of its lists. */
#define HT_SEAL_SEEN (1u << 18)

/* One growing column. */
typedef struct Col {
  uint8_t *p;                /* bytes */
  size_t n, cap;             /* used, allocated */
} Col;

/* A filled block, compressed into its packet's body while the writer
** fills the next (zstd at the sealed level is a fifth to a quarter of
** sealing, and the reading of a journal is one thread): the compressor
** touches only the job, the writer writes the body out, in order. */
typedef struct SealJob {
  Col col[HT_SC_COUNT];      /* the block's columns (the writer fills the
                                other set meanwhile) */
  Col body, z;               /* the packet's body; compression scratch */
  ZSTD_CCtx *zc;             /* the compressor's own */
  uint64_t a0, first_seq, f0, seq0, seq1, ts0; /* as HtSealW's */
  uint32_t nev;
  int oom;                   /* the body could not be made */
  int state;                 /* 0 free, 1 to compress, 2 compressed */
} SealJob;

struct HtSealW {
  FILE *f;                   /* the sealed tape */
  uint64_t off;              /* bytes written */
  int err;                   /* a HEAPTAPE_E_* code once something failed */
  uint32_t pid;              /* the journal's process */
  Col col[HT_SC_COUNT];      /* the block being filled */
  Col z, index;              /* compression scratch, the index */
  Col mods;                  /* the MODULES body after its count */
  uint64_t nmods;            /* modules in it */
  uint32_t nev;              /* events in the block */
  uint64_t seq0, seq1, ts0;  /* its first and last sequence, first time */
  uint64_t a0;               /* allocation index of its first ALLOC */
  uint64_t first_seq;        /* sequence number of its first event */
  uint64_t nallocs;          /* allocations so far */
  uint64_t prev_seq, prev_ts, prev_tid, prev_stack, prev_addr, prev_bstack; /* deltas */
  uint64_t prev_bts, prev_bfr, prev_baddr; /* and of BTIME, BOP, BADDR */
  uint64_t prev_bidx;        /* index of the block BOP last named */
  uint64_t nfrees;           /* resolved frees so far */
  uint64_t f0;               /* resolved frees before the block */
  ZSTD_CCtx *zc;             /* compressor */
  uint64_t *aaddr;           /* addresses of the block's ALLOCs, by index - a0 */
  uint64_t *asize;           /* and their sizes */
  HtSealClasses *cls;        /* freed addresses the block knows, per class */
  uint64_t fring[HT_SEAL_FRING]; /* freed addresses the block knows (ring) */
  uint64_t nf;               /* of which written */
  uint64_t last_freed;       /* allocation index the last resolved FREE released */
  size_t raw_bound;          /* the columns' bytes are at most this (sealw_room) */
  uint64_t seen[HT_SEAL_SEEN / 64]; /* bits: addresses the block knows freed, hashed */
  size_t hlen;               /* bytes of the header */
  int mixed;                 /* a packet other than a block among the blocks */
  SealJob job;               /* the block handed over, not yet written */
  int handed;                /* job holds such a block (the writer's flag) */
  int zthread;               /* zthr compresses jobs (else the writer does) */
  int zquit;                 /* zthr is to end */
  pthread_t zthr;
  pthread_mutex_t zmu;       /* job.state, zquit */
  pthread_cond_t zcv;        /* job.state or zquit changed */
};

/* -- Bytes ---------------------------------------------------------------- */

/* Make room for n more bytes in c; NULL when out of memory. */
HT_INLINE uint8_t *col_need(HtSealW *w, Col *c, size_t n)
{
  if (HT_LIKELY(c->n + n <= c->cap)) return c->p + c->n;  /* once per event and column */
  if (ht_grow(&c->p, &c->cap, c->n + n, 1)) { w->err = HEAPTAPE_E_NOMEM; return NULL; }
  return c->p + c->n;
}

/* Append a ULEB128 value. */
HT_INLINE void col_uleb(HtSealW *w, Col *c, uint64_t v)
{
  uint8_t *p = col_need(w, c, 10);
  if (p) c->n = (size_t)(ht_wuleb128(p, v) - c->p);
}

/* Append bytes. */
static void col_mem(HtSealW *w, Col *c, const void *q, size_t n)
{
  if (!n) return;
  uint8_t *p = col_need(w, c, n);
  if (p) { memcpy(p, q, n); c->n += n; }
}

/* Write bytes to the tape. */
static void sealw_out(HtSealW *w, const void *p, size_t n)
{
  if (w->err) return;
  if (n && fwrite(p, 1, n, w->f) != n) w->err = HEAPTAPE_E_IO;
  w->off += n;
}

/* One packet: head, then body compressed when that is smaller. */
static void sealw_packet(HtSealW *w, unsigned kind, uint64_t seq0, uint64_t seq1,
                         uint64_t ts0, uint32_t nev, const uint8_t *body, size_t len,
                         int zip)
{
  if (w->err) return;
  const uint8_t *b = body;
  size_t blen = len;
  unsigned flags = 0;
  size_t bound = ZSTD_compressBound(len);
  if (zip && len > 64 && !ht_grow(&w->z.p, &w->z.cap, bound, 1)) {
    size_t zn = ZSTD_compressCCtx(w->zc, w->z.p, bound, body, len, HT_SEAL_ZLEVEL);
    if (!ZSTD_isError(zn) && zn < len) { b = w->z.p; blen = zn; flags = HT_PF_ZSTD; }
  }
  uint8_t h[HT_PHEAD_SIZE];
  HtPhead f = {kind, flags, 0, (uint32_t)blen, (uint32_t)len, w->pid, 0, seq0, seq1, ts0, nev};
  uint8_t *p = ht_phead_put(h, &f);
  uLong crc = crc32(0, h, HT_PHEAD_SIZE - 4);
  crc = crc32(crc, b, (uInt)blen);
  ht_wu32(p, (uint32_t)crc);
  sealw_out(w, h, sizeof(h));
  sealw_out(w, b, blen);
}

/* -- Blocks --------------------------------------------------------------- */

/* Append n bytes (a ULEB128 value) to a job's body; -1 when out of memory. */
static int job_mem(Col *c, const void *q, size_t n)
{
  if (ht_grow(&c->p, &c->cap, c->n + n, 1)) return -1;
  memcpy(c->p + c->n, q, n);
  c->n += n;
  return 0;
}

static int job_uleb(Col *c, uint64_t v)
{
  uint8_t b[HT_ULEB_MAX];
  return job_mem(c, b, (size_t)(ht_wuleb128(b, v) - b));
}

/* The body of j's packet: each column compressed on its own (version 7),
** as like values compress best beside each other. */
static void job_compress(SealJob *j)
{
  Col *b = &j->body;
  b->n = 0;
  int bad = job_uleb(b, j->a0) || job_uleb(b, j->first_seq) || job_uleb(b, j->f0);
  for (int i = 0; i < HT_SC_COUNT; i++) {
    Col *c = &j->col[i];
    size_t zn = 0, bound = ZSTD_compressBound(c->n);
    if (c->n > 64 && !ht_grow(&j->z.p, &j->z.cap, bound, 1)) {
      zn = ZSTD_compressCCtx(j->zc, j->z.p, bound, c->p, c->n, HT_SEAL_ZLEVEL);
      if (ZSTD_isError(zn) || zn >= c->n) zn = 0;
    }
    bad = bad || job_uleb(b, c->n) || job_uleb(b, zn) ||
          (c->n && job_mem(b, zn ? j->z.p : c->p, zn ? zn : c->n));
    c->n = 0;
  }
  j->oom = bad;
}

/* The compressor thread: jobs as they are handed over, until told to end. */
static void *sealw_zmain(void *arg)
{
  HtSealW *w = arg;
  SealJob *j = &w->job;
  pthread_mutex_lock(&w->zmu);
  for (;;) {
    while (j->state != 1 && !w->zquit) pthread_cond_wait(&w->zcv, &w->zmu);
    if (j->state != 1) break;
    pthread_mutex_unlock(&w->zmu);
    job_compress(j);
    pthread_mutex_lock(&w->zmu);
    j->state = 2;
    pthread_cond_broadcast(&w->zcv);
  }
  pthread_mutex_unlock(&w->zmu);
  return NULL;
}

/* Write the block handed over (if any) once it is compressed: its packet
** and its INDEX entry. Before anything else is written. */
static void sealw_drain(HtSealW *w)
{
  SealJob *j = &w->job;
  if (!w->handed) return;
  w->handed = 0;
  if (w->zthread) {
    pthread_mutex_lock(&w->zmu);
    while (j->state != 2) pthread_cond_wait(&w->zcv, &w->zmu);
    j->state = 0;
    pthread_mutex_unlock(&w->zmu);
  } else {
    j->state = 0;
  }
  Col *b = &j->body;
  if (j->oom || b->n > HT_PACKET_MAX) {  /* (too large: never, see sealw_room) */
    w->err = w->err ? w->err : HEAPTAPE_E_NOMEM;
    return;
  }
  col_uleb(w, &w->index, j->seq0);
  col_uleb(w, &w->index, j->ts0);
  col_uleb(w, &w->index, w->off);
  col_uleb(w, &w->index, j->nev);
  col_uleb(w, &w->index, j->a0);
  sealw_packet(w, HT_P_SEVENTS, j->seq0, j->seq1, j->ts0, j->nev, b->p, b->n, 0);
}

/* Hand the block being filled over to be compressed and written, and
** start the next in the columns of the block before. */
static void sealw_flush(HtSealW *w)
{
  if (!w->nev) return;
  sealw_drain(w);
  SealJob *j = &w->job;
  for (int i = 0; i < HT_SC_COUNT; i++) {
    Col t = j->col[i];                /* emptied by job_compress */
    j->col[i] = w->col[i];
    w->col[i] = t;
  }
  j->a0 = w->a0;
  j->first_seq = w->first_seq;
  j->f0 = w->f0;
  j->seq0 = w->seq0;
  j->seq1 = w->seq1;
  j->ts0 = w->ts0;
  j->nev = w->nev;
  w->nev = 0;
  w->handed = 1;
  if (!w->zthread) {
    job_compress(j);
    j->state = 2;
    return;
  }
  pthread_mutex_lock(&w->zmu);
  j->state = 1;
  pthread_cond_broadcast(&w->zcv);
  pthread_mutex_unlock(&w->zmu);
}

/* Flush the block first unless an event of blob bytes fits its columns
** within a packet (a reader takes no more; HT_PACKET_MAX). */
static void sealw_room(HtSealW *w, size_t blob)
{
  const size_t most = HT_SC_COUNT * 10 + 256;  /* an event's columns, its blob aside */
  if (w->nev && w->raw_bound + blob + most > HT_PACKET_MAX - 4096) {
    /* the bound says it may not fit: count what the columns hold */
    size_t raw = 0;
    for (int i = 0; i < HT_SC_COUNT; i++) raw += w->col[i].n;
    w->raw_bound = raw;
    if (raw + blob + most > HT_PACKET_MAX - 4096) sealw_flush(w);
  }
  if (!w->nev) w->raw_bound = 0;
  w->raw_bound += blob + most;
}

/* The bit of w->seen for addr. */
HT_INLINE uint64_t seen_bit(uint64_t addr, size_t *word)
{
  uint64_t h = ht_hash64(addr) & (HT_SEAL_SEEN - 1);
  *word = h / 64;
  return 1ull << (h % 64);
}

/* Remember a freed address the reader knows too, and its size class when
** it knows the size (a block allocated in this block). */
static void sealw_freed(HtSealW *w, uint64_t addr, const uint64_t *size)
{
  w->fring[w->nf++ & (HT_SEAL_FRING - 1)] = addr;
  size_t word;
  uint64_t bit = seen_bit(addr, &word);
  w->seen[word] |= bit;
  if (!size) return;
  if (ht_seal_classes_push(w->cls, ht_seal_class(*size), addr)) w->err = HEAPTAPE_E_CORRUPT;
}

/* The block an event names, in the B columns, unless it was allocated in
** this block (the reader knows it). */
static void sealw_block(HtSealW *w, const HtEvent *ev, const HtSealBlock *b)
{
  Col *c = w->col;
  if (b->back - 1 >= w->a0) return;
  col_uleb(w, &c[HT_SC_BSTACK], ht_zigzag((int64_t)(b->stack - w->prev_bstack)));
  w->prev_bstack = b->stack;
  col_uleb(w, &c[HT_SC_BSIZE], b->size);
  col_uleb(w, &c[HT_SC_BWEIGHT], ht_zigzag((int64_t)(b->weight - b->size)));
  col_uleb(w, &c[HT_SC_BTID], ht_zigzag((int64_t)b->tid - (int64_t)ev->tid));
  if (ev->type != HT_EV_FREE) return;
  /* its birth and address (version 8): lifetimes and heap maps need no table */
  col_uleb(w, &c[HT_SC_BTIME], ht_zigzag((int64_t)(b->born_ts - w->prev_bts)));
  w->prev_bts = b->born_ts;
  uint64_t fr = b->born_op - (b->back - 1);  /* resolved frees before its birth */
  uint64_t pred = ht_seal_pace(b->back - 1, w->prev_bidx, w->prev_bfr, w->a0, w->f0);
  col_uleb(w, &c[HT_SC_BOP], ht_zigzag((int64_t)(fr - pred)));
  w->prev_bfr = fr;
  w->prev_bidx = b->back - 1;
  col_uleb(w, &c[HT_SC_BADDR], ht_zigzag((int64_t)(ev->addr - w->prev_baddr)));
  w->prev_baddr = ev->addr;
}

/* Write the modules listed so far as one MODULES packet. */
static void sealw_modules(HtSealW *w)
{
  sealw_drain(w);                     /* the blocks before it first */
  Col m = {0};
  col_uleb(w, &m, w->nmods);
  col_mem(w, &m, w->mods.p, w->mods.n);
  sealw_packet(w, HT_P_MODULES, 0, 0, 0, 0, m.p, m.n, 1);
  free(m.p);
  w->mods.n = 0;
  w->nmods = 0;
}

void ht_sealw_event(HtSealW *w, const HtEvent *ev, const HtSealBlock *b)
{
  uint64_t back = b ? b->back : 0;
  size_t blob = 0;
  if (ev->type == HT_EV_THREAD || ev->type == HT_EV_MARK) blob = ev->len;
  if (ev->type == HT_EV_MODULE || ev->type == HT_EV_UNLOAD)
    blob = ev->len + ev->build_id_len + ev->nseg * 30;
  sealw_room(w, blob);
  if (!w->nev) {
    w->seq0 = w->seq1 = ev->seq;
    w->ts0 = ev->ts;
    w->a0 = w->nallocs;
    w->prev_seq = ev->seq - 1;
    w->first_seq = ev->seq;
    w->prev_ts = ev->ts;
    w->prev_tid = w->prev_stack = w->prev_addr = w->prev_bstack = 0;
    w->prev_bts = w->prev_bfr = w->prev_baddr = w->prev_bidx = 0;
    w->f0 = w->nfrees;
    w->nf = w->last_freed = 0;
    ht_seal_classes_reset(w->cls);
    memset(w->seen, 0, sizeof(w->seen));
  }
  Col *c = w->col;
  uint8_t type = ev->type;
  if (ev->type == HT_EV_ALLOC && back) type |= HT_SC_DUP;
  col_mem(w, &c[HT_SC_TYPE], &type, 1);
  col_uleb(w, &c[HT_SC_SEQ], ht_zigzag((int64_t)(ev->seq - w->prev_seq - 1)));
  col_uleb(w, &c[HT_SC_TIME], ev->ts - w->prev_ts);
  col_uleb(w, &c[HT_SC_TID], ht_zigzag((int64_t)(ev->tid - w->prev_tid)));
  w->prev_seq = ev->seq;
  w->prev_ts = ev->ts;
  w->prev_tid = ev->tid;
  switch (ev->type) {
  case HT_EV_ALLOC:
    col_mem(w, &c[HT_SC_KIND], &ev->kind, 1);
    col_uleb(w, &c[HT_SC_SIZE], ev->size);
    col_uleb(w, &c[HT_SC_WEIGHT], ht_zigzag((int64_t)(ev->weight - ev->size)));
    if (HT_K_HAS_ALIGN(ev->kind)) col_uleb(w, &c[HT_SC_ALIGN], ev->align);
    col_uleb(w, &c[HT_SC_STACK], ht_zigzag((int64_t)(ev->stack - w->prev_stack)));
    w->prev_stack = ev->stack;
    {  /* allocators hand freed addresses out again: name a recent one, of
       ** its size class first */
      size_t word;
      uint64_t bit = seen_bit(ev->addr, &word);
      int known = (w->seen[word] & bit) != 0;  /* else no list of the block has it */
      unsigned cl = ht_seal_class(ev->size);
      uint64_t k = known ? ht_seal_classes_rank(w->cls, cl, ev->addr) : HT_SEAL_CRING, taken;
      if (k < HT_SEAL_CRING && !w->err) {
        c[HT_SC_TYPE].p[c[HT_SC_TYPE].n - 1] |= HT_SC_CLASS;
        col_uleb(w, &c[HT_SC_ADDR], k);
        ht_seal_classes_take(w->cls, cl, k, &taken);
        goto named;
      }
      k = 0;
      while (known && k < HT_SEAL_REUSE && k < w->nf &&
             w->fring[(w->nf - 1 - k) & (HT_SEAL_FRING - 1)] != ev->addr) k++;
      if (known && k < HT_SEAL_REUSE && k < w->nf && !w->err) {
        c[HT_SC_TYPE].p[c[HT_SC_TYPE].n - 1] |= HT_SC_REUSE;
        col_uleb(w, &c[HT_SC_ADDR], k);
      } else {  /* fresh memory: the allocator carves on from the last fresh block */
        col_uleb(w, &c[HT_SC_ADDR], ht_zigzag((int64_t)(ev->addr - w->prev_addr)));
        w->prev_addr = ev->addr + ht_seal_chunk(ev->size);
      }
    named:
      w->aaddr[w->nallocs - w->a0] = ev->addr;
      w->asize[w->nallocs - w->a0] = ev->size;
    }
    if (back) {
      col_uleb(w, &c[HT_SC_BACK], w->nallocs - (back - 1));
      sealw_block(w, ev, b);
    }
    w->nallocs++;
    break;
  case HT_EV_FREE:
    col_mem(w, &c[HT_SC_KIND], &ev->kind, 1);
    if (HT_K_HAS_SIZE(ev->kind)) col_uleb(w, &c[HT_SC_SIZE], ev->size);
    if (back) {  /* the smaller of: allocations since, or index after the last freed */
      uint64_t since = w->nallocs - (back - 1);
      uint64_t rel = ht_zigzag((int64_t)(back - 1 - w->last_freed - 1));
      if (rel < since && !w->err) {
        c[HT_SC_TYPE].p[c[HT_SC_TYPE].n - 1] |= HT_SC_REL;
        col_uleb(w, &c[HT_SC_BACK], rel);
      } else col_uleb(w, &c[HT_SC_BACK], since);
      w->last_freed = back - 1;
      w->nfrees++;
      sealw_block(w, ev, b);
    } else col_uleb(w, &c[HT_SC_BACK], 0);
    if (!back) {
      col_uleb(w, &c[HT_SC_ADDR], ht_zigzag((int64_t)(ev->addr - w->prev_addr)));
      w->prev_addr = ev->addr;
      sealw_freed(w, ev->addr, NULL);
    } else if (back - 1 >= w->a0) {  /* allocated in this block: its address is known */
      sealw_freed(w, w->aaddr[back - 1 - w->a0], &w->asize[back - 1 - w->a0]);
    } else sealw_freed(w, ev->addr, &b->size);  /* and BADDR gave it */
    break;
  case HT_EV_RSS:
  case HT_EV_LOST:
    col_uleb(w, &c[HT_SC_SIZE], ev->size);
    break;
  case HT_EV_THREAD:
  case HT_EV_MARK:
    col_uleb(w, &c[HT_SC_BLOB], ev->len);
    col_mem(w, &c[HT_SC_BLOB], ev->str, ev->len);
    break;
  case HT_EV_MODULE:
    /* Listed apart too, so a reader knows every module without a pass. */
    if (w->mods.n > HT_PACKET_MAX / 2) {
      sealw_modules(w);
      w->mixed = 1;
    }
    col_uleb(w, &w->mods, ev->addr);
    col_uleb(w, &w->mods, ev->len);
    col_mem(w, &w->mods, ev->str, ev->len);
    col_uleb(w, &w->mods, ev->build_id_len);
    col_mem(w, &w->mods, ev->build_id, ev->build_id_len);
    col_uleb(w, &w->mods, ev->nseg);
    for (size_t i = 0; i < ev->nseg; i++) {
      col_uleb(w, &w->mods, ev->segs[i].vaddr);
      col_uleb(w, &w->mods, ev->segs[i].memsz);
      col_uleb(w, &w->mods, ev->segs[i].prot);
    }
    w->nmods++;
    /* fall through */
  case HT_EV_UNLOAD:
    col_uleb(w, &c[HT_SC_ADDR], ht_zigzag((int64_t)(ev->addr - w->prev_addr)));
    w->prev_addr = ev->addr;
    col_uleb(w, &c[HT_SC_BLOB], ev->len);
    col_mem(w, &c[HT_SC_BLOB], ev->str, ev->len);
    col_uleb(w, &c[HT_SC_BLOB], ev->build_id_len);
    col_mem(w, &c[HT_SC_BLOB], ev->build_id, ev->build_id_len);
    col_uleb(w, &c[HT_SC_BLOB], ev->nseg);
    for (size_t i = 0; i < ev->nseg; i++) {
      col_uleb(w, &c[HT_SC_BLOB], ev->segs[i].vaddr);
      col_uleb(w, &c[HT_SC_BLOB], ev->segs[i].memsz);
      col_uleb(w, &c[HT_SC_BLOB], ev->segs[i].prot);
    }
    break;
  default:
    break;
  }
  /* A damaged journal may repeat a sequence number; the range covers all. */
  if (ev->seq < w->seq0) w->seq0 = ev->seq;
  if (ev->seq > w->seq1) w->seq1 = ev->seq;
  if (++w->nev == HT_SEAL_BLOCK) sealw_flush(w);
}

/* -- Whole tape ----------------------------------------------------------- */

/* Free w and everything it holds. */
static void sealw_free(HtSealW *w)
{
  if (w->zthread) {
    pthread_mutex_lock(&w->zmu);
    w->zquit = 1;
    pthread_cond_broadcast(&w->zcv);
    pthread_mutex_unlock(&w->zmu);
    pthread_join(w->zthr, NULL);
    pthread_mutex_destroy(&w->zmu);
    pthread_cond_destroy(&w->zcv);
  }
  SealJob *j = &w->job;
  for (size_t i = 0; i < HT_COUNTOF(w->col); i++) { free(w->col[i].p); free(j->col[i].p); }
  free(j->body.p); free(j->z.p); ZSTD_freeCCtx(j->zc);
  free(w->z.p); free(w->index.p); free(w->mods.p);
  ZSTD_freeCCtx(w->zc);
  free(w->aaddr); free(w->asize); free(w->cls);
  free(w);
}

/* The journal's header as a sealed tape's (malloc'd, *len bytes), or NULL:
** sealed, with HT_H_BLOCKS last (blocks_end; a field of that tag the
** journal had dropped), 8 bytes so the header keeps its length. */
static uint8_t *sealw_header(const HtReader *r, uint64_t blocks_end, size_t *len)
{
  size_t jl;
  const uint8_t *d = ht_reader_bytes(r, &jl);
  uint8_t *h = malloc(jl + 10);
  if (!h || jl < HT_HEADER_FIXED + 4) { free(h); return NULL; }
  memcpy(h, d, HT_HEADER_FIXED);
  size_t n = HT_HEADER_FIXED;
  for (const uint8_t *p = d + HT_HEADER_FIXED, *end = d + jl - 4; p < end;) {
    const uint8_t *field = p;
    uint64_t tag, fl;
    if (ht_ruleb128(&p, end, &tag) || ht_ruleb128(&p, end, &fl) || fl > (uint64_t)(end - p)) {
      free(h);
      return NULL;
    }
    p += fl;
    if (tag == HT_H_BLOCKS) continue;
    memcpy(h + n, field, (size_t)(p - field));
    n += (size_t)(p - field);
  }
  h[n++] = HT_H_BLOCKS;
  h[n++] = 8;
  ht_wu64(h + n, blocks_end);
  n += 8;
  ht_wu32(h + 12, (uint32_t)(n - HT_HEADER_FIXED));
  *len = n + 4;
  unsigned flags = (h[10] | h[11] << 8) | HT_F_SEALED;
  unsigned ver = HT_VERSION_SEALED;   /* Python and Ruby locations: 6 at least (7 is) */
  if (ht_reader_rtlocs(r) && ver < HT_VERSION_RTLOC) ver = HT_VERSION_RTLOC;
  h[8] = (uint8_t)ver;
  h[9] = (uint8_t)(ver >> 8);
  h[10] = (uint8_t)flags; h[11] = (uint8_t)(flags >> 8);
  ht_wu32(h + *len - 4, (uint32_t)crc32(0, h, (uInt)(*len - 4)));
  return h;
}

/* Start a sealed tape: its header. The dictionaries and accesses come at
** the end (a journal followed while it is written gains its symbols only
** then), and the header is written again there (their flag). */
HtSealW *ht_sealw_new(FILE *f, const HtReader *r)
{
  HtSealW *w = calloc(1, sizeof(*w));
  if (!w) return NULL;
  w->aaddr = malloc(HT_SEAL_BLOCK * sizeof(uint64_t));
  w->asize = malloc(HT_SEAL_BLOCK * sizeof(uint64_t));
  w->cls = calloc(1, sizeof(*w->cls));
  if (!w->aaddr || !w->asize || !w->cls ||
      !(w->zc = ZSTD_createCCtx()) || !(w->job.zc = ZSTD_createCCtx())) {
    sealw_free(w);
    return NULL;
  }
  if (!pthread_mutex_init(&w->zmu, NULL)) {
    if (!pthread_cond_init(&w->zcv, NULL)) {
      w->zthread = !pthread_create(&w->zthr, NULL, sealw_zmain, w);
      if (!w->zthread) pthread_cond_destroy(&w->zcv);
    }
    if (!w->zthread) pthread_mutex_destroy(&w->zmu);
  }
  w->f = f;
  w->pid = ht_reader_header(r)->pid;
  uint8_t *h = sealw_header(r, 0, &w->hlen);
  if (!h) { sealw_free(w); return NULL; }
  sealw_out(w, h, w->hlen);
  free(h);
  return w;
}

/* The journal's dictionaries and accesses, as they are; the header again,
** from r's final reading (symbolisation sets a flag in it). */
static void sealw_dicts(HtSealW *w, const HtReader *r, uint64_t blocks_end)
{
  size_t n;
  const uint8_t *pk;
  for (size_t i = 0; (pk = ht_reader_dict_packet(r, i, &n)); i++) sealw_out(w, pk, n);
  /* Accesses are copied as they are (they name blocks by sequence numbers,
  ** which sealing keeps) but for their time, from the tape's time zero as
  ** every sealed time is (version 7). */
  uint64_t t0 = ht_reader_time_zero(r);
  for (size_t i = 0; (pk = ht_reader_access_whole(r, i, &n)); i++) {
    uint8_t h[HT_PHEAD_SIZE];
    memcpy(h, pk, sizeof(h));
    uint64_t ts0 = ht_ru64(h + 40);
    ht_wu64(h + 40, ts0 > t0 ? ts0 - t0 : 0);
    uLong crc = crc32(0, h, HT_PHEAD_SIZE - 4);
    crc = crc32(crc, pk + HT_PHEAD_SIZE, (uInt)(n - HT_PHEAD_SIZE));
    ht_wu32(h + HT_PHEAD_SIZE - 4, (uint32_t)crc);
    sealw_out(w, h, sizeof(h));
    sealw_out(w, pk + HT_PHEAD_SIZE, n - HT_PHEAD_SIZE);
  }
  size_t hlen;
  uint8_t *h = sealw_header(r, blocks_end, &hlen);
  if (!h) { w->err = w->err ? w->err : HEAPTAPE_E_NOMEM; return; }
  if (hlen != w->hlen) w->err = w->err ? w->err : HEAPTAPE_E_CORRUPT;
  else if (!w->err && (fflush(w->f) || pwrite(fileno(w->f), h, hlen, 0) != (ssize_t)hlen))
    w->err = HEAPTAPE_E_IO;
  free(h);
}

/* Where an AGG body's snapshot fields begin (HT_A_SNAPS, HT_A_SNAPN,
** HT_A_RSS, and the heap map's HT_A_LAYOUT: fields one command reads, which
** the encoder writes last): its length when it has none. */
static size_t sealw_agg_split(const uint8_t *agg, size_t len)
{
  const uint8_t *p = agg, *end = agg + len;
  while (p < end) {
    const uint8_t *field = p;
    uint64_t tag, n;
    if (ht_ruleb128(&p, end, &tag) || ht_ruleb128(&p, end, &n) || n > (uint64_t)(end - p))
      return len;
    if (tag == HT_A_SNAPS || tag == HT_A_SNAPN || tag == HT_A_RSS || tag == HT_A_LAYOUT)
      return (size_t)(field - agg);
    p += n;
  }
  return len;
}

/* The last block, META, STACKS and INDEX. */
int ht_sealw_finish(HtSealW *w, const HtReader *r, uint64_t nallocs, uint64_t nops,
                    uint64_t unresolved, const uint8_t *agg, size_t agglen)
{
  sealw_flush(w);
  sealw_drain(w);
  /* The blocks end here, unless a MODULES packet came among them. */
  sealw_dicts(w, r, w->mixed ? 0 : w->off);
  const HtReadStats *st = ht_reader_stats(r);
  Col m = {0}, f = {0};
  uint64_t dmg[] = {st->damaged, st->damaged_bytes, st->truncated_bytes, st->foreign,
                    st->lost, (uint64_t)st->has_trailer, st->trailer_events,
                    st->trailer_status + 1, st->end_ns, st->first_error_off + 1};
  for (size_t i = 0; i < HT_COUNTOF(dmg); i++) col_uleb(w, &f, dmg[i]);
  size_t elen = strnlen(st->first_error, sizeof(st->first_error));
  col_uleb(w, &f, elen);
  col_mem(w, &f, st->first_error, elen);
  col_uleb(w, &m, HT_M_DAMAGE); col_uleb(w, &m, f.n); col_mem(w, &m, f.p, f.n);
  f.n = 0;
  col_uleb(w, &f, st->events); col_uleb(w, &f, nallocs); col_uleb(w, &f, nops);
  col_uleb(w, &f, unresolved);
  col_uleb(w, &m, HT_M_COUNTS); col_uleb(w, &m, f.n); col_mem(w, &m, f.p, f.n);
  f.n = 0;
  col_uleb(w, &f, st->file_bytes); col_uleb(w, &f, st->packets);
  col_uleb(w, &f, st->event_packets);
  col_uleb(w, &m, HT_M_JOURNAL); col_uleb(w, &m, f.n); col_mem(w, &m, f.p, f.n);
  sealw_packet(w, HT_P_META, 0, 0, 0, 0, m.p, m.n, 1);
  /* Stack nodes, in id order (a reader interning them gets the same ids),
  ** 65536 to a packet. */
  uint32_t n = ht_reader_stack_count(r);
  for (uint32_t first = 1; first <= n || first == 1; first += 65536) {
    uint32_t k = n - first + 1 < 65536 ? n - first + 1 : 65536;
    if (n == 0) k = 0;
    m.n = 0;
    col_uleb(w, &m, first);
    col_uleb(w, &m, k);
    uint64_t prev = 0;
    for (uint32_t id = first; id < first + k; id++) {
      uint64_t fr = ht_reader_stack_frame(r, id);
      col_uleb(w, &m, id - ht_reader_stack_parent(r, id));
      col_uleb(w, &m, ht_zigzag((int64_t)(fr - prev)));
      prev = fr;
    }
    sealw_packet(w, HT_P_STACKS, 0, 0, 0, k, m.p, m.n, 1);
    if (n == 0) break;
  }
  sealw_packet(w, HT_P_INDEX, 0, 0, 0, 0, w->index.p, w->index.n, 1);
  sealw_modules(w);
  /* The aggregate section in pieces of at most a packet's body, each
  ** naming its offset in the section (seq0): the figures in AGG packets,
  ** from the first snapshot field on in SNAPS packets (version 10: only
  ** html and --at read them; 6.8 of cc1plus's 8.3 MB). */
  size_t split = agg ? sealw_agg_split(agg, agglen) : 0;
  for (size_t off = 0; agg && off < agglen;) {
    size_t end = off < split ? split : agglen;
    size_t k = end - off < HT_PACKET_MAX ? end - off : HT_PACKET_MAX;
    sealw_packet(w, off < split ? HT_P_AGG : HT_P_SNAPS, off, off + k, 0, 0, agg + off, k, 1);
    off += k;
  }
  int rc = w->err;
  free(m.p); free(f.p);
  sealw_free(w);
  return rc;
}

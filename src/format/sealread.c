/* heaptape -- the sealed tape's reader (docs/FORMAT.md, "Sealed tapes"): its
** summary packets (META, STACKS, MODULES) met by the scan, and its events,
** block after block of columns, each decoding on its own. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "readint.h"
#include "sealclass.h"
#include "../base/grow.h"
#include "../../include/heaptape.h"

/* Decoding state of one sealed block (SEVENTS packet). */
typedef struct SealCur {
  uint8_t *own;              /* decompressed body (owned), or NULL */
  uint8_t *cols;             /* decompressed columns (version 7, owned) */
  const uint8_t *p[HT_SC_COUNT], *e[HT_SC_COUNT]; /* column positions, ends */
  uint32_t left;             /* events not yet decoded */
  uint64_t nallocs;          /* allocation index of the next ALLOC */
  uint64_t seq, ts, tid, stack, addr, bstack; /* delta bases */
  uint64_t bts, bfr, baddr;  /* version 8: delta bases of BTIME, BOP, BADDR */
  uint64_t bidx;             /* version 8: index of the block BOP last named */
  uint64_t ops;              /* version 8: op number of the next op */
  uint64_t f0;               /* version 8: resolved frees before the block */
  uint64_t seq0, seq1;       /* sequence range the packet announces */
  uint64_t off;              /* the packet's offset (damage messages) */
  HtSegment segs[64];        /* MODULE segments */
  uint64_t a0;               /* allocation index of the block's first ALLOC */
  uint64_t last_freed;       /* allocation index the last resolved FREE released */
  uint64_t nf;               /* freed addresses written to fring */
  uint32_t cn[HT_SEAL_CLASSES];  /* version 7: freed addresses of each size class */
  /* From here on nothing is read before it is written: a block reusing the
  ** decoder clears only what comes before. */
  uint64_t fring[HT_SEAL_FRING]; /* freed addresses the block knows */
  uint64_t cring[HT_SEAL_CLASSES][HT_SEAL_CRING]; /* and per size class (7, 8) */
  HtSealClasses cls;         /* version 9: per size class, all of them */
  struct {                   /* the block's ALLOCs, by index - a0 */
    uint64_t addr, size, weight;
    uint32_t stack, tid;
    uint64_t ts, op;         /* its time and op number (version 8) */
  } a[HT_SEAL_BLOCK];
} SealCur;

/* -- Sealed tapes: summary and stacks ------------------------------------ */

/* Parse a sealed tape's META body; 0, or -1 when malformed. */
static int seal_meta(HtReader *r, const uint8_t *p, const uint8_t *end)
{
  HtReadStats *m = &r->meta;
  while (p < end) {
    uint64_t tag, n;
    if (ht_ruleb128(&p, end, &tag) || ht_ruleb128(&p, end, &n) || n > (uint64_t)(end - p))
      return -1;
    const uint8_t *q = p, *qe = p + n;
    p += n;
    if (tag == HT_M_COUNTS) {  /* events, allocations, ops, unresolved frees */
      uint64_t ev, na;
      if (ht_ruleb128(&q, qe, &ev) || ht_ruleb128(&q, qe, &na) ||
          ht_ruleb128(&q, qe, &r->meta_ops)) return -1;
      r->have_ops = 1;
    }
    if (tag != HT_M_DAMAGE) continue;
    uint64_t v[10], len;
    for (size_t i = 0; i < HT_COUNTOF(v); i++)
      if (ht_ruleb128(&q, qe, &v[i])) return -1;
    if (ht_ruleb128(&q, qe, &len) || len > (uint64_t)(qe - q) || len >= sizeof(m->first_error))
      return -1;
    m->damaged = v[0]; m->damaged_bytes = v[1]; m->truncated_bytes = v[2];
    m->foreign = v[3]; m->lost = v[4]; m->has_trailer = v[5] != 0;
    m->trailer_events = v[6]; m->trailer_status = v[7] - 1; m->end_ns = v[8];
    m->first_error_off = v[9] - 1;
    memcpy(m->first_error, q, len);
    m->first_error[len] = 0;
    r->have_meta = 1;
  }
  return 0;
}

/* Learn the modules of a MODULES body; 0, or -1 when malformed. */
static int seal_modules(HtReader *r, const uint8_t *p, const uint8_t *end)
{
  uint64_t n, base, len, blen, nseg;
  HtSegment segs[64];
  if (ht_ruleb128(&p, end, &n)) return -1;
  for (uint64_t i = 0; i < n; i++) {
    HtEvent ev = {.type = HT_EV_MODULE};
    if (ht_ruleb128(&p, end, &base) || ht_ruleb128(&p, end, &len) ||
        len > (uint64_t)(end - p))
      return -1;
    ev.addr = base;
    ev.str = (const char *)p;
    ev.len = (size_t)len;
    p += len;
    if (ht_ruleb128(&p, end, &blen) || blen > (uint64_t)(end - p)) return -1;
    ev.build_id = p;
    ev.build_id_len = (size_t)blen;
    p += blen;
    if (ht_ruleb128(&p, end, &nseg) || nseg > HT_COUNTOF(segs)) return -1;
    for (uint64_t k = 0; k < nseg; k++) {
      uint64_t prot;
      if (ht_ruleb128(&p, end, &segs[k].vaddr) || ht_ruleb128(&p, end, &segs[k].memsz) ||
          ht_ruleb128(&p, end, &prot))
        return -1;
      segs[k].prot = (uint32_t)prot;
    }
    ev.segs = segs;
    ev.nseg = (size_t)nseg;
    ht_reader_learn_module(r, &ev);
  }
  return 0;
}

int ht_reader_sealed_ops(const HtReader *r, uint64_t *ops)
{
  if (!r->sealed || !r->have_ops) return 0;
  *ops = r->meta_ops;
  return 1;
}

/* After the scan of a sealed tape: the journal's damage and totals are
** what readers report (the sealed file's own damage, if any, comes first). */
void ht_sealread_scanned(HtReader *r)
{
  HtReadStats *st = &r->st, *m = &r->meta;
  r->ts_base = 0;
  if (r->follow)  /* the stack table is whole: its unused room off the resident set */
    ht_huge_trim(r->nodes, (size_t)r->nnodes * sizeof(*r->nodes),
                 (size_t)r->capnodes * sizeof(*r->nodes));
  if (st->damaged || st->truncated_bytes || r->agg_bad) {  /* the events no longer match it */
    r->have_ops = 0;
    free(r->agg);
    r->agg = NULL;
    r->agglen = 0;
  }
  if (!r->have_meta) return;
  if (st->first_error_off == UINT64_MAX) {
    st->first_error_off = m->first_error_off;
    memcpy(st->first_error, m->first_error, sizeof(st->first_error));
  }
  st->damaged += m->damaged;
  st->damaged_bytes += m->damaged_bytes;
  st->truncated_bytes += m->truncated_bytes;
  st->foreign += m->foreign;
  st->lost = m->lost;
  st->has_trailer = m->has_trailer;
  st->trailer_events = m->trailer_events;
  st->trailer_status = m->trailer_status;
  st->end_ns = m->end_ns;
}

/* A sealed tape's AGG body, or NULL (none, or the file is damaged). */
const uint8_t *ht_reader_agg(const HtReader *r, size_t *len)
{
  *len = r->agglen;
  return r->agg;
}

/* -- Sealed tapes: events ----------------------------------------------- */

/* The decoder of a sealed tape's blocks, run by the reader's caller or by a
** thread ahead of it (below). Of the reader it reads only what the scan
** left (header, stack count, blocks, bytes), which stays as it is while
** events are read; damage it only notes, for the caller to count. */
typedef struct SealDec {
  const HtReader *r;
  ZSTD_DCtx *zd;             /* its own: a thread decompresses beside the reader */
  SealCur *sc;               /* the block being decoded, or NULL */
  SealCur *spare;            /* a decoder to reuse (5 MiB), or NULL */
  size_t next_pk;            /* next block to open */
  size_t stride;             /* blocks from one it decodes to the next (1, or 2:
                                every other block, beside a second decoder) */
  uint64_t ts_last;          /* time of the event decoded last (times made monotone) */
  uint64_t bad;              /* blocks dropped as damaged, not yet counted */
  uint64_t bad_off;          /* the first of them: its offset */
  const char *bad_what;      /* and what was wrong */
} SealDec;

/* Drop the block being decoded. */
static void seal_cur_free(SealDec *d)
{
  if (!d->sc) return;
  free(d->sc->own);
  free(d->sc->cols);
  free(d->spare);
  d->spare = d->sc;
  d->sc = NULL;
}

/* Note damage in a sealed block and drop its rest. */
static void seal_bad(SealDec *d, const char *what)
{
  if (!d->bad++) {
    d->bad_off = d->sc->off;
    d->bad_what = what;
  }
  seal_cur_free(d);
}

/* Count n damaged blocks, the first at off (first pass only). */
static void seal_count_bad(HtReader *r, uint64_t n, uint64_t off, const char *what)
{
  if (!n || r->pass != 1) return;
  r->st.damaged += n;
  ht_reader_damage(r, off, "corrupt %s in sealed block at byte %llu", what,
                   (unsigned long long)off);
}

/* Version 7's columns, each compressed on its own, from p..end into c->cols:
** 0, or -1 when damaged. */
static int seal_unzip(SealDec *d, SealCur *c, const uint8_t *p, const uint8_t *end,
                      int ncol)
{
  uint64_t len[HT_SC_COUNT], zlen[HT_SC_COUNT], total = 0;
  const uint8_t *src[HT_SC_COUNT];
  for (int i = 0; i < ncol; i++) {
    if (ht_ruleb128(&p, end, &len[i]) || ht_ruleb128(&p, end, &zlen[i])) return -1;
    uint64_t n = zlen[i] ? zlen[i] : len[i];
    if (n > (uint64_t)(end - p) || len[i] > HT_PACKET_MAX) return -1;
    src[i] = p;
    p += n;
    total += len[i];
  }
  if (total > HT_PACKET_MAX || !(c->cols = malloc(total ? total : 1))) return -1;
  uint8_t *q = c->cols;
  for (int i = 0; i < ncol; i++) {
    if (zlen[i]) {
      size_t n = ZSTD_decompressDCtx(d->zd, q, len[i], src[i], zlen[i]);
      if (ZSTD_isError(n) || n != len[i]) return -1;
    } else if (len[i]) memcpy(q, src[i], len[i]);
    c->p[i] = q;
    c->e[i] = q + len[i];
    q += len[i];
  }
  return 0;
}

/* A block known from INDEX only: its header, read now (INDEX's offsets
** are within the blocks, a header's length is checked against the file),
** must say what INDEX said. 0, or -1 when it does not. */
static int seal_head(const HtReader *r, PacketRef *pk)
{
  const uint8_t *h = r->data + pk->off;
  if (pk->off > r->size || r->size - pk->off < HT_PHEAD_SIZE || memcmp(h, HT_PMAGIC, 4) ||
      h[4] != HT_P_SEVENTS || (h[5] & ~HT_PF_KNOWN))
    return -1;
  pk->blen = ht_ru32(h + 8);
  pk->rawlen = ht_ru32(h + 12);
  pk->flags = h[5];
  pk->seq1 = ht_ru64(h + 32);
  if (pk->blen > HT_PACKET_MAX || pk->rawlen > HT_PACKET_MAX ||
      r->size - pk->off - HT_PHEAD_SIZE < pk->blen || ht_ru64(h + 24) != pk->seq0 ||
      pk->seq1 < pk->seq0 || ht_ru64(h + 40) != pk->ts0 || ht_ru32(h + 48) != pk->nev)
    return -1;
  return 0;
}

/* Open the decoder's next block: its columns. 1 opened (d->sc NULL if it
** was dropped as damaged), 0 none left, <0 error. */
static int seal_open(SealDec *d)
{
  const HtReader *r = d->r;
  if (d->next_pk < r->npk) {
    PacketRef head = r->pk[d->next_pk];   /* (r->pk is the reader's: read only here) */
    const PacketRef *pk = &head;
    d->next_pk += d->stride;
    /* (On huge pages: its 3 MB on 4 KiB pages were 1,500 faults a pass
    ** beside two decoders, ~6 ms on a virtual machine.) */
    SealCur *c = d->spare ? d->spare : ht_huge_alloc(sizeof(*c));
    if (!c) return HEAPTAPE_E_NOMEM;
    memset(c, 0, offsetof(SealCur, fring));  /* the rest is written before it is read */
    d->spare = NULL;
    d->sc = c;
    ht_seal_classes_reset(&c->cls);
    c->off = pk->off;
    if (pk->head_due && seal_head(r, &head)) {
      seal_bad(d, "header");
      return 1;
    }
    if (pk->crc_due && !ht_reader_crc_ok(r->data + pk->off, pk->blen)) {
      seal_bad(d, "checksum");
      return 1;
    }
    const uint8_t *b = ht_reader_body(d->zd, r->data + pk->off + HT_PHEAD_SIZE, pk->blen,
                                      pk->rawlen, pk->flags, &c->own);
    if (!b) { seal_bad(d, "compression"); return 1; }
    const uint8_t *p = b, *end = b + pk->rawlen;
    uint64_t a0 = 0, s0 = 0, f0 = 0, n;
    int ok = !ht_ruleb128(&p, end, &a0) && !ht_ruleb128(&p, end, &s0);
    if (r->hdr.version >= HT_VERSION_SEALED_BIRTH) ok = ok && !ht_ruleb128(&p, end, &f0);
    int ncol = r->hdr.version >= HT_VERSION_SEALED_BIRTH ? HT_SC_COUNT
             : r->hdr.version >= HT_VERSION_SEALED_BLK ? HT_SC_COUNT_V7 : HT_SC_COUNT_V3;
    if (r->hdr.version >= HT_VERSION_SEALED_COLZ) ok = ok && !seal_unzip(d, c, p, end, ncol);
    else for (int i = 0; ok && i < ncol; i++) {
      ok = !ht_ruleb128(&p, end, &n) && n <= (uint64_t)(end - p);
      if (ok) { c->p[i] = p; c->e[i] = p + n; p += n; }
    }
    if (!ok || s0 < pk->seq0 || s0 > pk->seq1) { seal_bad(d, "columns"); return 1; }
    c->left = pk->nev;
    c->nallocs = c->a0 = a0;
    c->ops = a0 + f0;
    c->f0 = f0;
    c->seq = s0 - 1;
    c->seq0 = pk->seq0;
    c->seq1 = pk->seq1;
    c->ts = pk->ts0;
    return 1;
  }
  return 0;
}

/* A ULEB128 value of column k, or fail. */
#define SC_ULEB(k, v) do { if (ht_ruleb128(&c->p[k], c->e[k], &(v))) goto bad; } while (0)
#define SC_BYTE(k, v) do { if (c->p[k] >= c->e[k]) goto bad; (v) = *c->p[k]++; } while (0)

/* What an event says of the block it frees or drops (version 5). */
typedef struct SealBlk {
  uint64_t size, weight;     /* (weight as the resolver weighs it) */
  uint32_t stack, tid;
  int birth;                 /* a FREE's, version 8: ts, op, addr */
  uint64_t ts, op, addr;
} SealBlk;

/* The block of allocation index i, which a FREE (freeing: 1) or a dropping
** ALLOC at time ts of thread tid names, into *b: from the block's ALLOCs,
** or its B columns. 1, or 0 when it is damaged. */
HT_INLINE int seal_blk(const HtReader *r, SealCur *c, uint64_t i, int freeing, uint32_t tid,
                       uint64_t ts, SealBlk *b)
{
  uint64_t v;
  b->birth = r->hdr.version >= HT_VERSION_SEALED_BIRTH && freeing;
  if (i >= c->a0) {  /* allocated in this block: known */
    b->stack = c->a[i - c->a0].stack;
    b->size = c->a[i - c->a0].size;
    b->weight = c->a[i - c->a0].weight;
    if (!b->weight) b->weight = b->size;  /* as the resolver weighs it */
    b->tid = c->a[i - c->a0].tid;
    b->ts = c->a[i - c->a0].ts;
    b->op = c->a[i - c->a0].op;
    b->addr = c->a[i - c->a0].addr;
    return 1;
  }
  if (ht_ruleb128(&c->p[HT_SC_BSTACK], c->e[HT_SC_BSTACK], &v)) return 0;
  c->bstack += (uint64_t)ht_unzigzag(v);
  if (c->bstack >= r->nnodes) return 0;
  b->stack = (uint32_t)c->bstack;
  if (ht_ruleb128(&c->p[HT_SC_BSIZE], c->e[HT_SC_BSIZE], &b->size)) return 0;
  if (ht_ruleb128(&c->p[HT_SC_BWEIGHT], c->e[HT_SC_BWEIGHT], &v)) return 0;
  b->weight = b->size + (uint64_t)ht_unzigzag(v);
  if (ht_ruleb128(&c->p[HT_SC_BTID], c->e[HT_SC_BTID], &v)) return 0;
  b->tid = (uint32_t)(tid + (uint64_t)ht_unzigzag(v));
  if (!b->birth) return 1;
  if (ht_ruleb128(&c->p[HT_SC_BTIME], c->e[HT_SC_BTIME], &v)) return 0;
  b->ts = c->bts += (uint64_t)ht_unzigzag(v);
  if (ht_ruleb128(&c->p[HT_SC_BOP], c->e[HT_SC_BOP], &v)) return 0;
  c->bfr = ht_seal_pace(i, c->bidx, c->bfr, c->a0, c->f0) + (uint64_t)ht_unzigzag(v);
  c->bidx = i;
  b->op = i + c->bfr;
  if (b->op >= c->ops || b->op < i || b->ts > ts) return 0;  /* born after */
  if (ht_ruleb128(&c->p[HT_SC_BADDR], c->e[HT_SC_BADDR], &v)) return 0;
  b->addr = c->baddr += (uint64_t)ht_unzigzag(v);
  return 1;
}

/* b into ev's fields of the block it names. */
HT_INLINE void seal_blk_set(HtEvent *ev, const SealBlk *b)
{
  ev->bstack = b->stack;
  ev->bsize = b->size;
  ev->bweight = b->weight;
  ev->btid = b->tid;
  ev->has_blk = 1;
  if (!b->birth) return;
  ev->bts = b->ts;
  ev->bop = b->op;
  ev->baddr = b->addr;
  ev->has_birth = 1;
}

/* An event's sequence number, time and thread (the columns every event
** has): 0, or -1 when damaged. */
HT_INLINE int seal_stamp(SealCur *c, uint64_t *seq, uint64_t *ts, uint32_t *tid)
{
  uint64_t v;
  if (ht_ruleb128(&c->p[HT_SC_SEQ], c->e[HT_SC_SEQ], &v)) return -1;
  *seq = c->seq += (uint64_t)ht_unzigzag(v) + 1;
  if (*seq < c->seq0 || *seq > c->seq1) return -1;
  if (ht_ruleb128(&c->p[HT_SC_TIME], c->e[HT_SC_TIME], &v)) return -1;
  *ts = c->ts += v;
  if (ht_ruleb128(&c->p[HT_SC_TID], c->e[HT_SC_TID], &v)) return -1;
  *tid = (uint32_t)(c->tid += (uint64_t)ht_unzigzag(v));
  return 0;
}

/* The address of an ALLOC of the given size, from its ADDR value v: 0, or
** -1 when damaged. */
HT_INLINE int seal_alloc_addr(const HtReader *r, SealCur *c, unsigned type, uint64_t v,
                              uint64_t size, uint64_t *addr)
{
  if (type & HT_SC_CLASS) {  /* a recently freed address of its size class */
    unsigned k = ht_seal_class(size);
    if (r->hdr.version >= HT_VERSION_SEALED_CLASSES)
      return ht_seal_classes_take(&c->cls, k, v, addr);
    if (v >= HT_SEAL_CRING || v >= c->cn[k]) return -1;
    *addr = ht_seal_ring_take(c->cring[k], &c->cn[k], HT_SEAL_CRING - 1, v);
  } else if (type & HT_SC_REUSE) {  /* a recently freed address, named by its rank */
    if (v >= HT_SEAL_REUSE || v >= c->nf) return -1;
    *addr = c->fring[(c->nf - 1 - v) & (HT_SEAL_FRING - 1)];
    /* before version 5 a reused address moved the prediction too */
    if (r->hdr.version < HT_VERSION_SEALED_BLK) c->addr = *addr + ht_seal_chunk(size);
  } else {
    *addr = c->addr += (uint64_t)ht_unzigzag(v);
    c->addr += ht_seal_chunk(size);  /* where the next fresh block is predicted */
  }
  return 0;
}

/* Note the block's next ALLOC (its time as the column says it): its op
** number, or -1 when the block holds more ALLOCs than it may. */
HT_INLINE int64_t seal_alloc_note(SealCur *c, uint64_t addr, uint64_t size,
                                  uint64_t weight, uint64_t stack, uint32_t tid, uint64_t ts)
{
  uint64_t i = c->nallocs - c->a0;
  if (i >= HT_SEAL_BLOCK) return -1;
  c->a[i].addr = addr;
  c->a[i].size = size;
  c->a[i].weight = weight;
  c->a[i].stack = (uint32_t)stack;
  c->a[i].tid = tid;
  c->a[i].ts = ts;
  c->a[i].op = c->ops;
  return (int64_t)c->ops++;
}

/* The allocation index a FREE names, from its BACK value v, + 1 (0: a block
** from before the recording): 0, or -1 when damaged. */
HT_INLINE int seal_free_back(SealCur *c, unsigned type, uint64_t v, uint64_t *back)
{
  if (type & HT_SC_REL) {  /* named after the block the last FREE released */
    uint64_t idx = c->last_freed + 1 + (uint64_t)ht_unzigzag(v);
    if (idx >= c->nallocs) return -1;
    v = c->nallocs - idx;
  }
  if (v > c->nallocs) return -1;
  *back = v ? c->nallocs - v + 1 : 0;
  return 0;
}

/* Note a freed address the block knows, of a block of the given size: 0,
** or -1 when damaged. */
HT_INLINE int seal_freed(const HtReader *r, SealCur *c, uint64_t a, uint64_t size)
{
  unsigned k = ht_seal_class(size);
  c->fring[c->nf++ & (HT_SEAL_FRING - 1)] = a;
  if (r->hdr.version >= HT_VERSION_SEALED_CLASSES) return ht_seal_classes_push(&c->cls, k, a);
  c->cring[k][c->cn[k]++ & (HT_SEAL_CRING - 1)] = a;
  return 0;
}

/* Zero every field of ev, one store each: memset's `rep stos` on its 176
** bytes was a fifth of the decoding's time. */
static inline void ev_clear(HtEvent *ev)
{
  ev->type = ev->kind = 0;
  ev->pid = ev->tid = 0;
  ev->seq = ev->ts = ev->addr = ev->size = ev->align = ev->weight = 0;
  ev->stack = 0;
  ev->str = NULL;
  ev->len = 0;
  ev->build_id = NULL;
  ev->build_id_len = 0;
  ev->segs = NULL;
  ev->nseg = 0;
  ev->back = 0;
  ev->has_blk = 0;
  ev->bsize = ev->bweight = 0;
  ev->bstack = ev->btid = 0;
  ev->has_birth = 0;
  ev->bts = ev->bop = ev->baddr = 0;
}

/* Decode one event of the open block into ev: 1, or 0 when it is damaged. */
static int seal_event(SealDec *d, HtEvent *ev)
{
  const HtReader *r = d->r;
  SealCur *c = d->sc;
  unsigned type, kind = 0;
  uint64_t v, n;
  SC_BYTE(HT_SC_TYPE, type);
  ev_clear(ev);
  ev->pid = r->hdr.pid;
  ev->type = (uint8_t)(type & ~(HT_SC_DUP | HT_SC_REUSE | HT_SC_CLASS));
  if ((type & HT_SC_REL) && ev->type != HT_EV_FREE && ev->type != HT_EV_ALLOC) goto bad;
  if ((type & HT_SC_CLASS) && (ev->type != HT_EV_ALLOC || (type & HT_SC_REUSE) ||
                               r->hdr.version < HT_VERSION_SEALED_COLZ)) goto bad;
  uint64_t ts;
  uint32_t tid;
  if (seal_stamp(c, &ev->seq, &ts, &tid)) goto bad;
  ev->ts = ts;
  ev->tid = tid;
  int blk = r->hdr.version >= HT_VERSION_SEALED_BLK;  /* events carry their block */
  SealBlk b;
  switch (ev->type) {
  case HT_EV_ALLOC: {
    /* Values kept in locals and stored once: reading ev's fields back (the
    ** compiler pairs them in one 16-byte load) stalled on their stores. */
    uint64_t size, addr;
    SC_BYTE(HT_SC_KIND, kind);
    if (kind & ~HT_K_KNOWN) goto bad;
    ev->kind = (uint8_t)kind;
    SC_ULEB(HT_SC_SIZE, size);
    SC_ULEB(HT_SC_WEIGHT, v);
    uint64_t weight = size + (uint64_t)ht_unzigzag(v);
    if (HT_K_HAS_ALIGN(kind)) SC_ULEB(HT_SC_ALIGN, ev->align);
    SC_ULEB(HT_SC_STACK, v);
    uint64_t stack = c->stack += (uint64_t)ht_unzigzag(v);
    if (stack >= r->nnodes) goto bad;
    SC_ULEB(HT_SC_ADDR, v);
    if (seal_alloc_addr(r, c, type, v, size, &addr)) goto bad;
    if (seal_alloc_note(c, addr, size, weight, stack, tid, ts) < 0) goto bad;
    ev->size = size;
    ev->weight = weight;
    ev->stack = (uint32_t)stack;
    ev->addr = addr;
    if (type & HT_SC_DUP) {
      SC_ULEB(HT_SC_BACK, v);
      if (!v || v > c->nallocs) goto bad;
      ev->back = c->nallocs - v + 1;
      if (blk) {
        if (!seal_blk(r, c, ev->back - 1, 0, tid, ts, &b)) goto bad;
        seal_blk_set(ev, &b);
      }
    }
    c->nallocs++;
    break;
  }
  case HT_EV_FREE: {
    uint64_t back;
    SC_BYTE(HT_SC_KIND, kind);
    if (kind & ~HT_K_KNOWN) goto bad;
    ev->kind = (uint8_t)kind;
    if (HT_K_HAS_SIZE(kind)) SC_ULEB(HT_SC_SIZE, ev->size);
    SC_ULEB(HT_SC_BACK, v);
    if (seal_free_back(c, type, v, &back)) goto bad;
    if (!back) {  /* a block from before the recording */
      SC_ULEB(HT_SC_ADDR, v);
      ev->addr = c->addr += (uint64_t)ht_unzigzag(v);
      c->fring[c->nf++ & (HT_SEAL_FRING - 1)] = ev->addr;
      break;
    }
    uint64_t i = back - 1;
    ev->back = back;
    if (blk) {
      if (!seal_blk(r, c, i, 1, tid, ts, &b)) goto bad;
      seal_blk_set(ev, &b);
    }
    c->last_freed = i;
    c->ops++;
    if (i >= c->a0 || ev->has_birth)  /* its address is known */
      if (seal_freed(r, c, i >= c->a0 ? c->a[i - c->a0].addr : ev->baddr,
                     i >= c->a0 ? c->a[i - c->a0].size : ev->bsize)) goto bad;
    break;
  }
  case HT_EV_RSS:
  case HT_EV_LOST:
    SC_ULEB(HT_SC_SIZE, ev->size);
    break;
  case HT_EV_THREAD:
  case HT_EV_MARK:
    SC_ULEB(HT_SC_BLOB, n);
    if (n > (uint64_t)(c->e[HT_SC_BLOB] - c->p[HT_SC_BLOB])) goto bad;
    ev->str = (const char *)c->p[HT_SC_BLOB];
    ev->len = n;
    c->p[HT_SC_BLOB] += n;
    break;
  case HT_EV_MODULE:
  case HT_EV_UNLOAD:
    SC_ULEB(HT_SC_ADDR, v);
    ev->addr = c->addr += (uint64_t)ht_unzigzag(v);
    SC_ULEB(HT_SC_BLOB, n);
    if (n > (uint64_t)(c->e[HT_SC_BLOB] - c->p[HT_SC_BLOB])) goto bad;
    ev->str = (const char *)c->p[HT_SC_BLOB];
    ev->len = n;
    c->p[HT_SC_BLOB] += n;
    SC_ULEB(HT_SC_BLOB, n);
    if (n > (uint64_t)(c->e[HT_SC_BLOB] - c->p[HT_SC_BLOB])) goto bad;
    ev->build_id = c->p[HT_SC_BLOB];
    ev->build_id_len = n;
    c->p[HT_SC_BLOB] += n;
    SC_ULEB(HT_SC_BLOB, n);
    if (n > HT_COUNTOF(c->segs)) goto bad;
    for (uint64_t i = 0; i < n; i++) {
      SC_ULEB(HT_SC_BLOB, c->segs[i].vaddr);
      SC_ULEB(HT_SC_BLOB, c->segs[i].memsz);
      SC_ULEB(HT_SC_BLOB, v);
      c->segs[i].prot = (uint32_t)v;
    }
    ev->segs = c->segs;
    ev->nseg = n;
    break;
  default:
    goto bad;
  }
  return 1;
bad:
  return 0;
}

#undef SC_ULEB
#undef SC_BYTE

/* -- Decoding ahead on other threads --------------------------------------
** A thread decodes the blocks into chunks of events while the caller takes
** the events of the chunks before, filling a ring of SR_RING chunks in
** order. Two threads (the default; HEAPTAPE_READ_THREADS) each decode
** every other block (each block decodes on its own): a chunk holds events
** of one block only, and after a block's last chunk the caller turns to the
** other ring, so the events come exactly as one thread decodes them. Their
** rings hold SR_RING2 chunks, more than a block, so that each thread can
** decode a whole block ahead (they cost 5 MiB each and, for a reader that
** stops early, up to a block decoded for nothing). A chunk owns copies of
** its events' bytes (a THREAD's name, a MODULE's path and segments): the
** block they lie in may be gone when they are delivered. A thread wakes when half its ring is
** free, and the caller, once waiting, when half of it is filled or a block
** is done, not for each chunk: a futex call per chunk cost more than the
** chunk. Times are made monotone by each thread among its own blocks and
** by the caller across them (within a block they never go back, so only a
** chunk's first events can need it).
** HEAPTAPE_READ_THREADS=1 decodes into the same chunks on the caller's
** thread.
**
** An ALLOC or FREE crosses as a SealSlim, one cache line, not as an
** HtEvent's three: the lines written on one core and read on the other
** were most of both threads' time. The caller widens each into an HtEvent
** of its own (in its L1 cache) as it hands it over. The rare events that do
** not fit (threads, marks, modules, aligned or reallocated blocks, sampled
** weights, frees with a size) cross whole, in the chunk's wide[]. */

#define SR_CHUNK 1024              /* events a chunk holds */
#define SR_RING 8                  /* chunks the ring of one decoding thread holds */
#define SR_RING2 80                /* of each of two: a block's 64 and more */
#define SR_DECODERS 2              /* decoding threads at most */

typedef struct SealSlim {
  uint8_t type;              /* HT_EV_ALLOC or HT_EV_FREE; 0: wide[u[0]] */
  uint8_t kind;              /* HT_K_* */
  uint8_t has_blk, has_birth; /* as HtEvent's */
  uint32_t tid;              /* thread */
  uint32_t dseq;             /* seq - the chunk's seq0 */
  uint32_t stack;            /* ALLOC: stack; FREE: bstack */
  uint32_t btid;             /* FREE: the block's thread */
  uint32_t bfr;              /* FREE with birth: bop - (back - 1) */
  uint64_t ts;               /* time */
  uint64_t u[4];             /* ALLOC: addr, size, weight; FREE: back, bsize
                                (= bweight), bts, baddr (addr if back is 0) */
} SealSlim;
_Static_assert(sizeof(SealSlim) == 64, "a slim event is one cache line");
_Static_assert(offsetof(SealSlim, tid) == 4 && offsetof(SealSlim, dseq) == 8 &&
               offsetof(SealSlim, stack) == 12 && offsetof(SealSlim, btid) == 16 &&
               offsetof(SealSlim, bfr) == 20 && offsetof(SealSlim, ts) == 24 &&
               offsetof(SealSlim, u) == 32, "slim_store's layout");

typedef struct SealChunk {
  uint32_t n;                /* events */
  uint32_t nwide;            /* of them in wide[] */
  int end;                   /* the last chunk of the pass: then rc */
  int rc;                    /* 0 (no event left) or an error */
  int blk_end;               /* the last chunk of its block */
  int alone;                 /* allocated on its own, not in a ring's block */
  uint64_t bad, bad_off;     /* damaged blocks met filling it, the first's offset */
  const char *bad_what;      /* and what was wrong with it */
  uint8_t *blob;             /* its events' bytes and segments */
  size_t nblob, capblob;     /* bytes used, allocated */
  HtEvent *wide;             /* the events that cross whole */
  size_t capwide;            /* of them allocated */
  uint64_t seq0;             /* the first event's sequence number */
  _Alignas(64) SealSlim ev[SR_CHUNK]; /* the events, a cache line each */
} SealChunk;

/* A decoding thread and its ring (mode 2), or the caller's decoder (mode 1:
** the first's, its first chunk refilled). */
typedef struct SealWorker {
  _Alignas(64) SealDec d;    /* the decoder (the thread's while it runs) */
  pthread_t th;              /* the thread */
  int running;               /* it was started (and is to be joined) */
  pthread_mutex_t mu;        /* guards head, count, stop and the waits */
  pthread_cond_t cv;         /* a chunk was filled or freed, or stop was set */
  unsigned head, count;      /* the chunk being taken, chunks filled */
  int stop;                  /* the thread is to end */
  int fill_waits, take_waits; /* the thread, the caller waits on cv */
  unsigned nring;            /* chunks in the ring (this pass) */
  SealChunk *ring[SR_RING2];
  SealChunk *ring_blk;       /* the chunks not allocated alone, in one block */
  unsigned blk_n;            /* chunks in it */
  int blk_fresh;             /* their heads are not yet cleared */
} SealWorker;

/* A sealed tape's event reading: its decoders, and the caller's place. */
struct SealRead {
  SealWorker w[SR_DECODERS];
  int mode;                  /* this pass: 0 undecided, 1 one thread, 2 threads */
  unsigned nw;               /* decoding threads (mode 2) */
  /* The caller's, on a cache line of their own: the threads write above. */
  _Alignas(64) SealChunk *cur; /* the chunk being taken, or NULL */
  unsigned turn;             /* the ring it is of (mode 2) */
  uint32_t pos, n;           /* its next event, its events */
};

/* Copy n bytes of p into ch's bytes: their offset + 1 (0: none or no
** memory, *oom set then). 8-byte aligned, for segments. */
static uintptr_t chunk_keep(SealChunk *ch, const void *p, size_t n, int *oom)
{
  if (!p) return 0;
  size_t at = (ch->nblob + 7) & ~(size_t)7;
  if (ht_grow(&ch->blob, &ch->capblob, at + n + 1, 1)) { *oom = 1; return 0; }
  if (n) memcpy(ch->blob + at, p, n);
  ch->nblob = at + n;
  return at + 1;
}

/* A field of the event just decoded, through a register: gcc paired two
** such loads into one 16-byte load, which stalls on the two 8-byte stores
** just made (store forwarding fails): 14% of the decoding thread's time. */
static inline uint64_t slim_ld(uint64_t v)
{
  __asm__("" : "+r"(v));
  return v;
}

/* One slim event's fields into its line at d. On x86-64 the line is
** written around the cache: a plain store first fetched the line the other
** core read last (most of a decoding thread's time), a whole line streamed
** fetches nothing. The line is made in registers: a copy of one made in
** memory stalled on its stores (store forwarding fails). chunk_fill fences
** before the chunk is handed over. */
static inline void slim_store(SealSlim *d, unsigned type, unsigned kind, unsigned has_blk,
                              unsigned has_birth, uint32_t tid, uint32_t dseq, uint32_t stack,
                              uint32_t btid, uint32_t bfr, uint64_t ts, uint64_t u0,
                              uint64_t u1, uint64_t u2, uint64_t u3)
{
#if defined(__x86_64__)
  uint32_t head = type | kind << 8 | has_blk << 16 | has_birth << 24;
  __m128i *q = (__m128i *)d;
  _mm_stream_si128(q, _mm_set_epi32((int)stack, (int)dseq, (int)tid, (int)head));
  _mm_stream_si128(q + 1, _mm_set_epi64x((long long)ts, (long long)((uint64_t)bfr << 32 | btid)));
  _mm_stream_si128(q + 2, _mm_set_epi64x((long long)u1, (long long)u0));
  _mm_stream_si128(q + 3, _mm_set_epi64x((long long)u3, (long long)u2));
#else
  *d = (SealSlim){.type = (uint8_t)type, .kind = (uint8_t)kind, .has_blk = (uint8_t)has_blk,
                  .has_birth = (uint8_t)has_birth, .tid = tid, .dseq = dseq, .stack = stack,
                  .btid = btid, .bfr = bfr, .ts = ts, .u = {u0, u1, u2, u3}};
#endif
}

/* ev as one cache line into sl: 1, or 0 when it does not fit one. */
static inline int slim_pack(const HtEvent *ev, uint64_t seq0, SealSlim *sl)
{
  if (ev->seq < seq0 || ev->seq - seq0 > UINT32_MAX || ev->align) return 0;
  uint32_t dseq = (uint32_t)(ev->seq - seq0);
  if (ev->type == HT_EV_ALLOC) {
    if (ev->back) return 0;
    slim_store(sl, HT_EV_ALLOC, ev->kind, 0, 0, ev->tid, dseq, ev->stack, 0, 0, ev->ts,
               slim_ld(ev->addr), slim_ld(ev->size), slim_ld(ev->weight), 0);
    return 1;
  }
  if (ev->type != HT_EV_FREE || ev->size || ev->bweight != ev->bsize) return 0;
  uint64_t bfr = ev->has_birth ? ev->bop - (ev->back - 1) : 0;
  if (bfr > UINT32_MAX || (ev->back ? ev->addr : ev->baddr)) return 0;
  slim_store(sl, HT_EV_FREE, ev->kind, ev->has_blk, ev->has_birth, ev->tid, dseq, ev->bstack,
             ev->btid, (uint32_t)bfr, ev->ts, slim_ld(ev->back), slim_ld(ev->bsize),
             slim_ld(ev->bts), slim_ld(ev->back ? ev->baddr : ev->addr));
  return 1;
}

/* A slim event as the HtEvent it stands for. */
static inline void slim_widen(const SealSlim *sl, uint64_t seq0, uint32_t pid, HtEvent *ev)
{
  int alloc = sl->type == HT_EV_ALLOC;
  ev->type = sl->type;
  ev->kind = sl->kind;
  ev->pid = pid;
  ev->tid = sl->tid;
  ev->seq = seq0 + sl->dseq;
  ev->ts = sl->ts;
  ev->addr = alloc ? sl->u[0] : sl->u[0] ? 0 : sl->u[3];
  ev->size = alloc ? sl->u[1] : 0;
  ev->align = 0;
  ev->weight = alloc ? sl->u[2] : 0;
  ev->stack = alloc ? sl->stack : 0;
  ev->str = NULL;
  ev->len = 0;
  ev->build_id = NULL;
  ev->build_id_len = 0;
  ev->segs = NULL;
  ev->nseg = 0;
  ev->back = alloc ? 0 : sl->u[0];
  ev->has_blk = sl->has_blk;
  ev->bsize = ev->bweight = alloc ? 0 : sl->u[1];
  ev->bstack = alloc ? 0 : sl->stack;
  ev->btid = sl->btid;
  ev->has_birth = sl->has_birth;
  ev->bts = alloc ? 0 : sl->u[2];
  ev->bop = sl->has_birth ? sl->u[0] - 1 + sl->bfr : 0;
  ev->baddr = alloc || !sl->u[0] ? 0 : sl->u[3];
}

/* A ULEB128 value of column k into v, or damaged. */
#define SL_ULEB(k, v) do { if (ht_ruleb128(&c->p[k], c->e[k], &(v))) return -1; } while (0)

/* The common events of a version 9 block straight into their line sl, as
** seal_event and slim_pack make them, without the HtEvent between (its
** clearing, its fields stored and loaded back: lifetimes on python3's tape
** 0.89x with the caller decoding): an ALLOC neither aligned nor dropping a
** block, a FREE without a size. 1 done; 2 decoded into *ev (it does not fit
** a line); 0 another event (nothing read: seal_event's); -1 damaged. Times
** are made monotone here, as chunk_fill does. */
static inline int seal_slim(SealDec *d, SealChunk *ch, SealSlim *sl, HtEvent *ev)
{
  const HtReader *r = d->r;
  SealCur *c = d->sc;
  if (c->p[HT_SC_TYPE] >= c->e[HT_SC_TYPE] || c->p[HT_SC_KIND] >= c->e[HT_SC_KIND]) return 0;
  unsigned type = *c->p[HT_SC_TYPE], kind = *c->p[HT_SC_KIND];
  int alloc = (type & ~(HT_SC_REUSE | HT_SC_CLASS)) == HT_EV_ALLOC;
  if (kind & ~HT_K_KNOWN) return 0;
  if (alloc ? ((type & HT_SC_REUSE) && (type & HT_SC_CLASS)) || HT_K_HAS_ALIGN(kind)
            : (type & ~HT_SC_REL) != HT_EV_FREE || HT_K_HAS_SIZE(kind))
    return 0;
  c->p[HT_SC_TYPE]++;
  c->p[HT_SC_KIND]++;
  uint64_t v, seq, raw_ts, ts;
  uint32_t tid;
  if (seal_stamp(c, &seq, &raw_ts, &tid)) return -1;
  ts = raw_ts < d->ts_last ? d->ts_last : raw_ts;
  if (alloc) {
    uint64_t size, weight, stack, addr;
    SL_ULEB(HT_SC_SIZE, size);
    SL_ULEB(HT_SC_WEIGHT, v);
    weight = size + (uint64_t)ht_unzigzag(v);
    SL_ULEB(HT_SC_STACK, v);
    stack = c->stack += (uint64_t)ht_unzigzag(v);
    if (stack >= r->nnodes) return -1;
    SL_ULEB(HT_SC_ADDR, v);
    if (seal_alloc_addr(r, c, type, v, size, &addr)) return -1;
    if (seal_alloc_note(c, addr, size, weight, stack, tid, raw_ts) < 0) return -1;
    c->nallocs++;
    d->ts_last = ts;
    if (!ch->n) ch->seq0 = seq;
    if (seq >= ch->seq0 && seq - ch->seq0 <= UINT32_MAX) {
      slim_store(sl, HT_EV_ALLOC, kind, 0, 0, tid, (uint32_t)(seq - ch->seq0), (uint32_t)stack,
                 0, 0, ts, addr, size, weight, 0);
      return 1;
    }
    ev_clear(ev);
    ev->addr = addr;
    ev->size = size;
    ev->weight = weight;
    ev->stack = (uint32_t)stack;
  } else {
    uint64_t back, addr = 0;
    SealBlk b = {0};
    SL_ULEB(HT_SC_BACK, v);
    if (seal_free_back(c, type, v, &back)) return -1;
    if (!back) {  /* a block from before the recording */
      SL_ULEB(HT_SC_ADDR, v);
      addr = c->addr += (uint64_t)ht_unzigzag(v);
      c->fring[c->nf++ & (HT_SEAL_FRING - 1)] = addr;
    } else {
      if (!seal_blk(r, c, back - 1, 1, tid, raw_ts, &b)) return -1;
      c->last_freed = back - 1;
      c->ops++;
      if (seal_freed(r, c, b.addr, b.size)) return -1;
    }
    d->ts_last = ts;
    if (!ch->n) ch->seq0 = seq;
    uint64_t bfr = back ? b.op - (back - 1) : 0;
    if (seq >= ch->seq0 && seq - ch->seq0 <= UINT32_MAX && b.weight == b.size &&
        bfr <= UINT32_MAX) {
      slim_store(sl, HT_EV_FREE, kind, back != 0, back != 0, tid, (uint32_t)(seq - ch->seq0),
                 b.stack, b.tid, (uint32_t)bfr, ts, back, b.size, b.ts, back ? b.addr : addr);
      return 1;
    }
    ev_clear(ev);
    ev->addr = addr;
    ev->back = back;
    if (back) seal_blk_set(ev, &b);
  }
  ev->type = alloc ? HT_EV_ALLOC : HT_EV_FREE;
  ev->kind = (uint8_t)kind;
  ev->pid = r->hdr.pid;
  ev->tid = tid;
  ev->seq = seq;
  ev->ts = ts;
  return 2;
}

#undef SL_ULEB

/* Fill ch with the next events of d's block, opening its next block when
** none is open (the thread's side). */
static void chunk_fill(SealDec *d, SealChunk *ch)
{
  int oom = 0;
  uint32_t pid = d->r->hdr.pid;
  HtEvent tmp, *ev = &tmp;
  int slim = d->r->hdr.version >= HT_VERSION_SEALED_CLASSES;  /* (seal_slim's) */
  ch->n = ch->nwide = 0;
  ch->end = ch->rc = ch->blk_end = 0;
  ch->nblob = 0;
  while (ch->n < SR_CHUNK) {
    if (!d->sc) {
      int rc = seal_open(d);
      if (rc <= 0) { ch->end = 1; ch->rc = rc; break; }
      if (!d->sc) { ch->blk_end = 1; break; }  /* dropped as damaged */
    }
    if (d->sc->left) {
      d->sc->left--;
      int f = slim ? seal_slim(d, ch, &ch->ev[ch->n], ev) : 0;
      if (f == 1) { ch->n++; goto next; }
      if (!f) f = seal_event(d, ev) ? 2 : -1;
      if (f < 0) { seal_bad(d, "event"); ch->blk_end = 1; break; }
      if (ev->ts < d->ts_last) ev->ts = d->ts_last;  /* monotone (see above) */
      d->ts_last = ev->ts;
      if (!ch->n) ch->seq0 = ev->seq;
      SealSlim *sl = &ch->ev[ch->n++];
      if (ev->pid != pid || !slim_pack(ev, ch->seq0, sl)) {  /* whole */
        if (ht_grow(&ch->wide, &ch->capwide, ch->nwide + 1, sizeof(HtEvent))) {
          ch->n--;
          ch->end = 1; ch->rc = HEAPTAPE_E_NOMEM;
          break;
        }
        sl->type = 0;
        sl->ts = ev->ts;
        sl->u[0] = ch->nwide;
        HtEvent *w = &ch->wide[ch->nwide++];
        *w = *ev;
        if (w->str || w->build_id || w->segs) {  /* offsets until the bytes stop moving */
          w->str = (const char *)chunk_keep(ch, w->str, w->len, &oom);
          w->build_id = (const uint8_t *)chunk_keep(ch, w->build_id, w->build_id_len, &oom);
          w->segs = (const HtSegment *)chunk_keep(ch, w->segs, w->nseg * sizeof(HtSegment),
                                                  &oom);
          if (oom) { ch->end = 1; ch->rc = HEAPTAPE_E_NOMEM; break; }
        }
      }
    }
  next:
    if (!d->sc->left) { seal_cur_free(d); ch->blk_end = 1; break; }
  }
#if defined(__x86_64__)
  _mm_sfence();  /* the streamed lines before the chunk is handed over */
#endif
  for (uint32_t i = 0; i < ch->nwide; i++) {
    HtEvent *w = &ch->wide[i];
    if (w->str) w->str = (const char *)ch->blob + ((uintptr_t)w->str - 1);
    if (w->build_id) w->build_id = ch->blob + ((uintptr_t)w->build_id - 1);
    if (w->segs) w->segs = (const HtSegment *)(ch->blob + ((uintptr_t)w->segs - 1));
  }
  ch->bad = d->bad;
  ch->bad_off = d->bad_off;
  ch->bad_what = d->bad_what;
  d->bad = 0;
}

/* Clear the heads of the ring's chunks in its block. The thread does it,
** not the caller: each first store into the block faults in a huge page
** cleared whole, 4% of heapmap's drawing thread on python3's tape. */
static void seal_ring_clear(SealWorker *w)
{
  for (unsigned i = 0; w->blk_fresh && i < w->blk_n; i++)
    memset(&w->ring_blk[i], 0, offsetof(SealChunk, ev));
  w->blk_fresh = 0;
}

/* A decoding thread: fill chunks until the last or until told to stop. */
static void *seal_thread(void *arg)
{
  SealWorker *w = arg;
  seal_ring_clear(w);
  for (;;) {
    pthread_mutex_lock(&w->mu);
    if (w->count == w->nring) {  /* full: on again when half of it is free */
      w->fill_waits = 1;
      while (w->count > w->nring / 2 && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
      w->fill_waits = 0;
    }
    int stop = w->stop;
    SealChunk *ch = w->ring[(w->head + w->count) % w->nring];
    pthread_mutex_unlock(&w->mu);
    if (stop) return NULL;
    chunk_fill(&w->d, ch);
    pthread_mutex_lock(&w->mu);
    w->count++;
    if (w->take_waits && (w->count >= w->nring / 2 || ch->end || ch->blk_end))
      pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (ch->end) return NULL;
  }
}

/* Stop the threads, if they run, and forget the pass's chunks and blocks. */
static void seal_thread_stop(struct SealRead *s)
{
  for (unsigned k = 0; k < SR_DECODERS; k++) {
    SealWorker *w = &s->w[k];
    if (w->running) {
      pthread_mutex_lock(&w->mu);
      w->stop = 1;
      pthread_cond_broadcast(&w->cv);
      pthread_mutex_unlock(&w->mu);
      pthread_join(w->th, NULL);
      w->running = 0;
    }
    w->head = w->count = 0;
    w->stop = w->fill_waits = w->take_waits = 0;
    seal_cur_free(&w->d);
  }
  s->mode = 0;
  s->cur = NULL;
  s->turn = 0;
  s->pos = s->n = 0;
}

/* A worker's ring of n chunks and zstd context: 0, or -1 out of memory. */
static int seal_worker_ready(SealWorker *w, unsigned n)
{
  if (!w->d.zd && !(w->d.zd = ZSTD_createDCtx())) return -1;
  /* The ring's chunks in one block (5 MiB: on huge pages, ~2,600 page
  ** faults fewer for a pass); its first may be the caller's, made alone. */
  unsigned i0 = 0;
  while (i0 < n && w->ring[i0]) i0++;
  if (i0 < n && !w->ring_blk) {
    if (!(w->ring_blk = ht_huge_alloc((n - i0) * sizeof(SealChunk)))) return -1;
    for (unsigned i = i0; i < n; i++) w->ring[i] = &w->ring_blk[i - i0];
    w->blk_n = n - i0;
    w->blk_fresh = 1;  /* cleared by its thread (seal_ring_clear) */
  }
  for (unsigned i = i0; i < n; i++)  /* (a ring grown after its block: never so far) */
    if (!w->ring[i]) {
      if (!(w->ring[i] = calloc(1, sizeof(SealChunk)))) return -1;
      w->ring[i]->alone = 1;
    }
  w->nring = n;
  return 0;
}

/* Start a pass at block r->next_pk: on other threads when there are blocks
** enough to gain from it. 0, or -1 out of memory. */
static int seal_start(HtReader *r, struct SealRead *s)
{
  /* HEAPTAPE_READ_THREADS: 1 the caller alone, 2 one decoding thread
  ** beside it, 3 (the default) two. Measured on python3's tape on two
  ** cores, lifetimes: two decoders 0.49 s of wall, the caller alone 0.72,
  ** one decoder 0.83-1.15 with 1.4-1.6x the CPU; with 8 busy loops beside
  ** it 1.87, 3.3 and 4.9 s; the CPU the same but for one decoder
  ** (docs/PERFORMANCE.md, session 12). */
  static int threads = -1;
  if (threads < 0) {
    const char *e = getenv("HEAPTAPE_READ_THREADS");
    threads = e ? atoi(e) : 3;
  }
  ht_reader_stacks_load(r);  /* before the threads: they check stack ids against it */
  s->mode = 1;
  s->turn = 0;
  SealDec *d0 = &s->w[0].d;
  d0->next_pk = r->next_pk;
  d0->stride = 1;
  d0->ts_last = r->ts_last;
  d0->bad = 0;
  if (!s->w[0].ring[0]) {
    if (!(s->w[0].ring[0] = calloc(1, sizeof(SealChunk)))) return -1;
    s->w[0].ring[0]->alone = 1;
  }
  size_t blocks = r->npk - r->next_pk;
  if (threads == 1 || r->follow || blocks < 2) return 0;
  unsigned nw = threads == 3 ? SR_DECODERS : 1;
  for (unsigned k = 0; k < nw; k++) {
    SealWorker *w = &s->w[k];
    if (seal_worker_ready(w, nw > 1 ? SR_RING2 : SR_RING)) { nw = k; break; }
    w->d.next_pk = r->next_pk + k;
    w->d.stride = nw;
    w->d.ts_last = r->ts_last;
    w->d.bad = 0;
  }
  if (nw < 1) return 0;
  if (nw == 1) s->w[0].nring = SR_RING;  /* (the second's failed) */
  for (unsigned k = 0; k < nw; k++) s->w[k].d.stride = nw;
  for (unsigned k = 0; k < nw; k++) {
    if (pthread_create(&s->w[k].th, NULL, seal_thread, &s->w[k]) == 0) {
      s->w[k].running = 1;
      continue;
    }
    seal_thread_stop(s);  /* no thread: the caller decodes every block */
    s->mode = 1;
    d0->next_pk = r->next_pk;
    d0->stride = 1;
    d0->ts_last = r->ts_last;
    d0->bad = 0;
    return 0;
  }
  s->mode = 2;
  s->nw = nw;
  return 0;
}

/* Make the next filled chunk the one delivered: 1, or the pass's end code
** (0, or <0 error) once every event was delivered. */
static int seal_chunk(HtReader *r, struct SealRead *s)
{
  SealChunk *ch = s->cur;
  if (s->mode == 2) {
    SealWorker *w = &s->w[s->turn];
    if (ch) {
      if (ch->end) return ch->rc;  /* the thread has ended */
      int blk_end = ch->blk_end;   /* (read before the thread may refill it) */
      pthread_mutex_lock(&w->mu);
      w->head = (w->head + 1) % w->nring;
      w->count--;
      if (w->fill_waits && w->count <= w->nring / 2) pthread_cond_signal(&w->cv);
      pthread_mutex_unlock(&w->mu);
      if (blk_end) w = &s->w[s->turn = (s->turn + 1) % s->nw];
    }
    pthread_mutex_lock(&w->mu);
    while (!w->count) {
      w->take_waits = 1;
      pthread_cond_wait(&w->cv, &w->mu);
    }
    w->take_waits = 0;
    ch = s->cur = w->ring[w->head];
    pthread_mutex_unlock(&w->mu);
  } else {  /* one thread: the same chunk refilled (a followed tape may grow) */
    ch = s->cur = s->w[0].ring[0];
    chunk_fill(&s->w[0].d, ch);
    r->next_pk = s->w[0].d.next_pk;
  }
  seal_count_bad(r, ch->bad, ch->bad_off, ch->bad_what);
  s->pos = 0;
  s->n = ch->n;
  /* Monotone across the threads' blocks: a chunk's times never go back. */
  for (uint32_t i = 0; i < ch->n && ch->ev[i].ts < r->ts_last; i++) {
    ch->ev[i].ts = r->ts_last;
    if (!ch->ev[i].type) ch->wide[ch->ev[i].u[0]].ts = r->ts_last;
  }
  if (ch->n) r->ts_last = ch->ev[ch->n - 1].ts;
  return ch->n || !ch->end ? 1 : ch->rc;
}

/* Up to max next events of the pass into buf: their count, 0 at the end,
** <0 error. A MODULE event comes alone, its module learnt as it is
** delivered (as ht_reader_next does). */
static int seal_events(HtReader *r, HtEvent *buf, uint32_t max)
{
  struct SealRead *s = r->sr;
  if (!s) {
    if (!(s = r->sr = aligned_alloc(64, sizeof(*s)))) return HEAPTAPE_E_NOMEM;
    memset(s, 0, sizeof(*s));
    for (unsigned k = 0; k < SR_DECODERS; k++) {
      s->w[k].d.r = r;
      s->w[k].d.stride = 1;
      pthread_mutex_init(&s->w[k].mu, NULL);
      pthread_cond_init(&s->w[k].cv, NULL);
    }
    if (!(s->w[0].d.zd = ZSTD_createDCtx())) return HEAPTAPE_E_NOMEM;
  }
  if (!s->mode && seal_start(r, s)) return HEAPTAPE_E_NOMEM;
  while (s->pos >= s->n) {
    int rc = seal_chunk(r, s);
    if (rc <= 0) return rc;
  }
  const SealChunk *ch = s->cur;
  const SealSlim *sl = &ch->ev[s->pos];
  uint32_t n = s->n - s->pos, pid = r->hdr.pid;
  if (n > max) n = max;
  for (uint32_t i = 0; i < n; i++) {
    __builtin_prefetch(&sl[i + 16]);
    if (HT_LIKELY(sl[i].type)) { slim_widen(&sl[i], ch->seq0, pid, &buf[i]); continue; }
    const HtEvent *w = &ch->wide[sl[i].u[0]];
    if (w->type == HT_EV_MODULE) {  /* alone, after those before it */
      if (i) { n = i; break; }
      ht_reader_learn_module(r, w);
      n = 1;
    }
    buf[i] = *w;
  }
  s->pos += n;
  return (int)n;
}

/* Next event of a sealed tape: blocks in order, no merge. */
int ht_sealread_next(HtReader *r, HtEvent *ev)
{
  return seal_events(r, ev, 1);
}

/* Up to max next events of a sealed tape into buf: their count, 0 at the
** end, <0 error (or a journal). */
int ht_reader_events(HtReader *r, HtEvent *buf, int max)
{
  if (!r->sealed || max < 1) return HEAPTAPE_E_MISUSE;
  if (r->pass == 0) r->pass = 1;
  int rc = seal_events(r, buf, (uint32_t)max);
  if (rc > 0) r->st.delivered += (uint64_t)rc;
  return rc;
}

/* A sealed tape: read on from the block holding the first event after ts
** (the events before it in that block come too). */
int ht_reader_seek_ts(HtReader *r, uint64_t ts)
{
  if (!r->sealed) return -1;
  ht_reader_rewind(r);
  size_t lo = 0, hi = r->npk;  /* the last block starting at or before ts */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->pk[mid].ts0 <= ts) lo = mid; else hi = mid;
  }
  r->next_pk = lo;
  return 0;
}


int ht_sealread_packet(HtReader *r, unsigned kind, const uint8_t *p, const uint8_t *end)
{
  return kind == HT_P_META ? seal_meta(r, p, end)
       : kind == HT_P_STACKS ? ht_sealstacks_load(r, p, end) : seal_modules(r, p, end);
}

void ht_sealread_stop(HtReader *r, int all)
{
  struct SealRead *s = r->sr;
  if (!s) return;
  seal_thread_stop(s);
  if (!all) return;
  for (unsigned k = 0; k < SR_DECODERS; k++) {
    SealWorker *w = &s->w[k];
    seal_ring_clear(w);  /* (no thread ran: its heads are not yet cleared) */
    free(w->d.spare);
    ZSTD_freeDCtx(w->d.zd);
    for (int i = 0; i < SR_RING2; i++) {
      if (w->ring[i]) {
        free(w->ring[i]->blob);
        free(w->ring[i]->wide);
        if (w->ring[i]->alone) free(w->ring[i]);
      }
    }
    free(w->ring_blk);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
  }
  free(s);
  r->sr = NULL;
}

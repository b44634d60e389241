/* heaptape -- the tape reader: scan and validate packets, load dictionaries,
** then merge every thread's events into global sequence order (a sealed
** tape's summary packets and blocks: sealread.c). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "readint.h"
#include "../base/fdio.h"
#include "../base/grow.h"
#include "../base/map.h"
#include "../../include/heaptape.h"

/* -- Types (the reader's own: readint.h has the shared ones) -------------- */

struct ThreadState {
  uint32_t pid, tid;         /* stream identity */
  uint32_t *local;           /* local stack id - 1 -> global id */
  uint32_t nlocal, caplocal; /* ids defined, allocated */
  uint32_t gen;              /* stack generation (RESETs seen) */
  int seen;                  /* a packet of this stream was opened */
};

struct Cursor {
  const PacketRef *pk;       /* packet being decoded: &pkc */
  PacketRef pkc;             /* its copy (a followed tape's r->pk moves) */
  ThreadState *th;           /* its thread (stable: see HtReader.th) */
  uint8_t *own;              /* decompressed body (owned), or NULL */
  uint8_t *cols;             /* decompressed columns (version 7, owned) */
  const uint8_t *p, *end;    /* decode position and end of body */
  uint64_t seq;              /* last sequence number decoded */
  uint64_t ts;               /* current timestamp */
  uint64_t addr;             /* address delta base */
  uint64_t stack;            /* stack delta base */
  uint32_t left;             /* events announced but not yet decoded */
  uint64_t cost;             /* bytes it holds (counted in open_bytes) */
  int dirty;                 /* ev's string fields are set */
  HtEvent ev;                /* next event to deliver */
  HtSegment segs[64];        /* MODULE segments of ev */
  uint64_t na, nf;           /* ALLOC and FREE records decoded in the packet */
  uint64_t ra[HT_BACKREF_MAX]; /* addresses of recent ALLOCs (ring) */
  uint64_t rf[HT_BACKREF_MAX]; /* addresses of recent FREEs (ring) */
};

/* Note the first damage: its offset and a description. */
void ht_reader_damage(HtReader *r, uint64_t off, const char *fmt, ...)
{
  if (r->st.first_error_off != UINT64_MAX) return;
  r->st.first_error_off = off;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->st.first_error, sizeof(r->st.first_error), fmt, ap);
  va_end(ap);
}

/* Drop the pages wholly inside [off, off + len) from our resident set: the
** tape stays in the page cache, but a long tape never sits in our RSS. A
** followed tape's pages are its own copy (zero once dropped): only a
** packet decoded to its end lets go of them (cursor_done). */
static void reader_release(const HtReader *r, uint64_t off, uint64_t len)
{
  if (!r->mapped) return;
  uint64_t pg = 4096, a = (off + pg - 1) & ~(pg - 1), b = (off + len) & ~(pg - 1);
  if (b > a) madvise((void *)(r->data + a), b - a, MADV_DONTNEED);
}

/* -- Header --------------------------------------------------------------- */

/* Copy a header string field into owned storage. */
static char *hdr_str(const uint8_t *p, size_t n)
{
  char *s = malloc(n + 1);
  if (!s) return NULL;
  memcpy(s, p, n);
  s[n] = 0;
  return s;
}

/* Parse and check the file header; returns its size or a negative code. */
static int64_t reader_header(HtReader *r, char *err, size_t errlen)
{
  const uint8_t *d = r->data;
  if (r->size < HT_MAGIC_LEN || memcmp(d, HT_MAGIC, HT_MAGIC_LEN)) {
    snprintf(err, errlen, "not a heaptape tape (no HEAPTAPE magic)");
    return HEAPTAPE_E_NOTTAPE;
  }
  if (r->size < HT_HEADER_FIXED) {
    snprintf(err, errlen, "truncated: the tape ends inside its header");
    return HEAPTAPE_E_TRUNCATED;
  }
  uint32_t ver = d[8] | (uint32_t)d[9] << 8, flags = d[10] | (uint32_t)d[11] << 8;
  if (ver > HT_VERSION_MAX || ver == 0) {
    snprintf(err, errlen, "tape format version %u is not supported (this heaptape reads "
             "versions %d to %d)", ver, HT_VERSION, HT_VERSION_MAX);
    return HEAPTAPE_E_VERSION;
  }
  uint32_t len = ht_ru32(d + 12);
  if ((uint64_t)HT_HEADER_FIXED + len + 4 > r->size) {
    snprintf(err, errlen, "truncated: the tape ends inside its header");
    return HEAPTAPE_E_TRUNCATED;
  }
  size_t hend = HT_HEADER_FIXED + len;
  if (!r->nocrc && crc32(0, d, (uInt)hend) != ht_ru32(d + hend)) {
    snprintf(err, errlen, "corrupt header at byte 0 (checksum mismatch)");
    return HEAPTAPE_E_CORRUPT;
  }
  if (flags & ~HT_F_KNOWN) {
    snprintf(err, errlen, "tape header has unknown flags 0x%x (written by a newer heaptape?)", flags);
    return HEAPTAPE_E_VERSION;
  }
  /* Versions 2, 3, 5, 7 and 8 are sealed, 1 is not; 4 and 6 may be either. */
  if (ver != HT_VERSION_ACCESS && ver != HT_VERSION_RTLOC &&
      (ver >= HT_VERSION_SEALED_MIN) != !!(flags & HT_F_SEALED)) {
    snprintf(err, errlen, "tape header says version %u but %s sealed", ver,
             (flags & HT_F_SEALED) ? "is" : "is not");
    return HEAPTAPE_E_CORRUPT;
  }
  HtHeader *h = &r->hdr;
  h->version = ver;
  h->flags = flags;
  r->sealed = !!(flags & HT_F_SEALED);
  r->hdr_len = hend + 4;
  const uint8_t *p = d + HT_HEADER_FIXED, *end = d + hend;
  while (p < end) {
    uint64_t tag, n;
    if (ht_ruleb128(&p, end, &tag) || ht_ruleb128(&p, end, &n) || n > (uint64_t)(end - p)) {
      snprintf(err, errlen, "corrupt header field at byte %zu", (size_t)(p - d));
      return HEAPTAPE_E_CORRUPT;
    }
    const uint8_t *q = p, *qe = p + n;
    uint64_t v = 0, v2 = 0;
    switch (tag) {
    case HT_H_PID: if (!ht_ruleb128(&q, qe, &v)) h->pid = (uint32_t)v; break;
    case HT_H_EXE: free(r->hdr_exe); r->hdr_exe = hdr_str(p, n); break;
    case HT_H_ARGV: free(r->hdr_argv); r->hdr_argv = hdr_str(p, n); h->argv_len = n; break;
    case HT_H_CLOCK:
      if (!ht_ruleb128(&q, qe, &v) && !ht_ruleb128(&q, qe, &v2)) {
        h->clock = (uint32_t)v; h->clock_res = v2;
      }
      break;
    case HT_H_SAMPLE: if (!ht_ruleb128(&q, qe, &v)) h->sample = v; break;
    case HT_H_START: if (!ht_ruleb128(&q, qe, &v)) h->start_ns = v; break;
    case HT_H_UNWIND: if (!ht_ruleb128(&q, qe, &v)) h->unwind = (uint32_t)v; break;
    case HT_H_FRAMES: if (!ht_ruleb128(&q, qe, &v)) h->frames = (uint32_t)v; break;
    case HT_H_FRONTEND: free(r->hdr_fe); r->hdr_fe = hdr_str(p, n); break;
    case HT_H_T0: if (!ht_ruleb128(&q, qe, &v)) h->clock_start = v; break;
    case HT_H_LATE: if (!ht_ruleb128(&q, qe, &v)) h->late_ns = v; break;
    case HT_H_ACCESS: if (!ht_ruleb128(&q, qe, &v)) h->access_sample = v ? v : 1; break;
    case HT_H_BLOCKS: if (n == 8 && r->sealed) r->blocks_end = ht_ru64(p); break;
    default: break; /* unknown fields are skipped */
    }
    p += n;
  }
  h->exe = r->hdr_exe ? r->hdr_exe : "";
  h->argv = r->hdr_argv ? r->hdr_argv : "";
  h->frontend = r->hdr_fe ? r->hdr_fe : "native";
  return (int64_t)hend + 4;
}

/* -- Dictionary ----------------------------------------------------------- */

/* String of a reference (id + 1) in dictionary dict, or NULL. */
static const char *dict_ref(HtReader *r, uint32_t dict, uint64_t ref)
{
  if (!ref || ref > UINT32_MAX) return NULL;
  uint64_t *i = ht_map_get(&r->strmap, (uint64_t)dict << 32 | (ref - 1));
  return i ? r->strs[*i - 1] : NULL;
}

/* Load the records of one DICT body; returns 0, or -1 when it is malformed. */
static int reader_dict(HtReader *r, uint32_t dict, const uint8_t *p, const uint8_t *end)
{
  r->names_gen++;
  while (p < end) {
    uint8_t t = *p++;
    uint64_t a, n, v[5];
    switch (t) {
    case HT_D_STR: {
      if (ht_ruleb128(&p, end, &a) || ht_ruleb128(&p, end, &n) ||
          n > (uint64_t)(end - p) || a >= UINT32_MAX) return -1;
      if (ht_grow(&r->strs, &r->capstrs, r->nstrs + 1, sizeof(char *))) return -1;
      char *s = hdr_str(p, n);
      if (!s) return -1;
      /* A redefined id names the new string from here on; symbols and
      ** locations loaded before keep pointing at the old one. */
      r->strs[r->nstrs++] = s;
      if (ht_map_put(&r->strmap, (uint64_t)dict << 32 | a, r->nstrs)) return -1;
      p += n;
      break;
    }
    case HT_D_SYM: {
      if (ht_ruleb128(&p, end, &a) || ht_ruleb128(&p, end, &n) || n > 4096) return -1;
      if (ht_grow(&r->syms, &r->capsyms, r->nsyms + n, sizeof(HtSymbol)) ||
          ht_grow(&r->symtab, &r->capsymtab, r->nsymtab + 1, sizeof(SymEntry))) return -1;
      SymEntry *e = &r->symtab[r->nsymtab];
      e->first = (uint32_t)r->nsyms;
      e->n = (uint32_t)n;
      for (uint64_t i = 0; i < n; i++) {
        if (ht_ruleb128(&p, end, &v[0]) || ht_ruleb128(&p, end, &v[1]) ||
            ht_ruleb128(&p, end, &v[2])) return -1;
        HtSymbol *s = &r->syms[r->nsyms++];
        s->func = dict_ref(r, dict, v[0]);
        s->file = dict_ref(r, dict, v[1]);
        s->line = v[2] > UINT32_MAX ? 0 : (uint32_t)v[2];
      }
      r->nsymtab++;
      if (ht_map_put(&r->symmap, a, r->nsymtab)) return -1;
      break;
    }
    case HT_D_LOC: {
      if (ht_ruleb128(&p, end, &a) || p >= end) return -1;
      unsigned kind = *p++;
      for (int i = 0; i < 4; i++) if (ht_ruleb128(&p, end, &v[i])) return -1;
      if (ht_grow(&r->locs, &r->caplocs, r->nlocs + 1, sizeof(HtLocation))) return -1;
      HtLocation *l = &r->locs[r->nlocs++];
      l->kind = kind;
      l->name = dict_ref(r, dict, v[0]);
      l->file = dict_ref(r, dict, v[1]);
      l->line = v[2];
      l->aux = v[3];
      if (ht_map_put(&r->locmap, a, r->nlocs)) return -1;
      break;
    }
    case HT_D_EXT:
      if (ht_ruleb128(&p, end, &a) || ht_ruleb128(&p, end, &n) ||
          n > (uint64_t)(end - p)) return -1;
      p += n;
      break;
    default:
      return -1;
    }
  }
  return 0;
}

/* -- Scan ----------------------------------------------------------------- */

/* Body of a packet, decompressed into *own when needed; NULL if damaged. */
const uint8_t *ht_reader_body(ZSTD_DCtx *zd, const uint8_t *b, uint32_t blen,
                              uint32_t rawlen, uint32_t flags, uint8_t **own)
{
  *own = NULL;
  if (!(flags & HT_PF_ZSTD)) return rawlen == blen ? b : NULL;
  if (rawlen > HT_PACKET_MAX) return NULL;
  uint8_t *buf = malloc(rawlen ? rawlen : 1);
  if (!buf) return NULL;
  size_t n = ZSTD_decompressDCtx(zd, buf, rawlen, b, blen);
  if (ZSTD_isError(n) || n != rawlen) { free(buf); return NULL; }
  *own = buf;
  return buf;
}

/* Validate the packet at off; returns its total size or 0 if it is not one. */
static uint64_t packet_check(HtReader *r, uint64_t off)
{
  const uint8_t *h = r->data + off;
  if (r->size - off < HT_PHEAD_SIZE || memcmp(h, HT_PMAGIC, 4)) return 0;
  uint32_t blen = ht_ru32(h + 8), rawlen = ht_ru32(h + 12);
  if (blen > HT_PACKET_MAX || rawlen > HT_PACKET_MAX) return 0;
  if (r->size - off - HT_PHEAD_SIZE < blen) return 0;
  if (!r->nocrc && !ht_reader_crc_ok(h, blen)) return 0;
  return HT_PHEAD_SIZE + (uint64_t)blen;
}

int ht_reader_crc_ok(const uint8_t *h, uint32_t blen)
{
  uLong crc = crc32(0, h, HT_PHEAD_SIZE - 4);
  crc = crc32(crc, h + HT_PHEAD_SIZE, blen);
  return (uint32_t)crc == ht_ru32(h + HT_PHEAD_SIZE - 4);
}

/* A sealed tape's block of events at off, its checksum left for its
** decoder: its size when the header holds together (a known kind, its
** length ending at the file's end or at the next packet's magic), else 0
** (packet_check decides). An aggregate command reads none of the blocks,
** and checking them cost cc1plus's report 5 ms of its 45 (every page of
** the file fetched): the time to open a tape must not grow with it. */
static uint64_t packet_block(const HtReader *r, uint64_t off)
{
  const uint8_t *h = r->data + off;
  if (!r->sealed || r->follow || r->nocrc || r->size - off < HT_PHEAD_SIZE ||
      memcmp(h, HT_PMAGIC, 4) || h[4] != HT_P_SEVENTS || (h[5] & ~HT_PF_KNOWN))
    return 0;
  uint32_t blen = ht_ru32(h + 8), rawlen = ht_ru32(h + 12);
  if (blen > HT_PACKET_MAX || rawlen > HT_PACKET_MAX || r->size - off - HT_PHEAD_SIZE < blen)
    return 0;
  uint64_t end = off + HT_PHEAD_SIZE + blen;
  if (end != r->size && (r->size - end < HT_PHEAD_SIZE || memcmp(r->data + end, HT_PMAGIC, 4)))
    return 0;
  return HT_PHEAD_SIZE + (uint64_t)blen;
}

/* End of the packet at off when the file holds it whole by its header's
** length (checksum not verified), else 0. */
static uint64_t packet_end(const HtReader *r, uint64_t off)
{
  const uint8_t *h = r->data + off;
  if (r->size - off < HT_PHEAD_SIZE || memcmp(h, HT_PMAGIC, 4)) return 0;
  uint32_t blen = ht_ru32(h + 8);
  if (blen > HT_PACKET_MAX || r->size - off - HT_PHEAD_SIZE < blen) return 0;
  return off + HT_PHEAD_SIZE + blen;
}

/* Room for the stack table of a sealed tape made at once, before its first
** STACKS packet (at off) loads: the packets are written one after another,
** and a node takes 2 raw bytes at least. One array, not grown and copied:
** no moment holding two (9 MB of cc1plus). A hint only: on failure the
** table grows as it loads. */
static void reader_stacks_room(HtReader *r, uint64_t off)
{
  uint64_t raw = 0, end;
  for (uint64_t o = off; (end = packet_end(r, o)) && r->data[o + 4] == HT_P_STACKS; o = end)
    raw += ht_ru32(r->data + o + 12);
  if (raw / 2 < UINT32_MAX - 1) (void)ht_reader_nodes_room(r, (size_t)(raw / 2) + 1);
}

/* Offset of the next valid packet after off, or size if none. */
static uint64_t packet_resync(HtReader *r, uint64_t off)
{
  for (uint64_t o = off + 1; o + HT_PHEAD_SIZE <= r->size; o++) {
    const uint8_t *q = memchr(r->data + o, 'H', r->size - o);
    if (!q) break;
    o = (uint64_t)(q - r->data);
    if (packet_check(r, o)) return o;
  }
  return r->size;
}

/* Parse a TRAILER body. */
static void reader_trailer(HtReader *r, const uint8_t *p, const uint8_t *end)
{
  r->st.has_trailer = 1;
  while (p < end) {
    uint64_t tag, n, v;
    if (ht_ruleb128(&p, end, &tag) || ht_ruleb128(&p, end, &n) || n > (uint64_t)(end - p))
      return;
    const uint8_t *q = p;
    if (!ht_ruleb128(&q, p + n, &v)) {
      if (tag == HT_T_EVENTS) r->st.trailer_events = v;
      else if (tag == HT_T_LOST) r->st.lost += v;
      else if (tag == HT_T_END) r->st.end_ns = v;
      else if (tag == HT_T_STATUS) r->st.trailer_status = v;
    }
    p += n;
  }
}

/* Sort EVENTS packets by first sequence number, then file order. */
static int packet_cmp(const void *a, const void *b)
{
  const PacketRef *x = a, *y = b;
  if (x->seq0 != y->seq0) return x->seq0 < y->seq0 ? -1 : 1;
  return x->off < y->off ? -1 : x->off > y->off;
}


/* A packet's body into dst (rawlen bytes), decompressed when stored so;
** 0 if damaged. */
static int packet_body_into(HtReader *r, const uint8_t *h, const PacketRef *pr, uint8_t *dst)
{
  if (!(pr->flags & HT_PF_ZSTD)) {
    if (pr->rawlen != pr->blen) return 0;
    memcpy(dst, h + HT_PHEAD_SIZE, pr->blen);
    return 1;
  }
  if (pr->rawlen > HT_PACKET_MAX) return 0;
  size_t n = ZSTD_decompressDCtx(r->zd, dst, pr->rawlen, h + HT_PHEAD_SIZE, pr->blen);
  return !ZSTD_isError(n) && n == pr->rawlen;
}

/* Body of a packet the scan loads (summaries, dictionaries, the trailer),
** in the reader's scratch buffer when it must be decompressed (valid until
** the next call); NULL if damaged. A buffer of its own per body was an
** mmap, its page faults and a munmap for each of cc1plus's 1 MiB pieces. */
static const uint8_t *scan_body(HtReader *r, const uint8_t *h, const PacketRef *pr)
{
  if (!(pr->flags & HT_PF_ZSTD)) return pr->rawlen == pr->blen ? h + HT_PHEAD_SIZE : NULL;
  if (pr->rawlen > HT_PACKET_MAX) return NULL;
  if ((size_t)pr->rawlen + 1 > r->scratchcap) {
    free(r->scratch);
    r->scratchcap = 0;
    if (!(r->scratch = malloc((size_t)pr->rawlen + 1))) return NULL;
    r->scratchcap = (size_t)pr->rawlen + 1;
  }
  return packet_body_into(r, h, pr, r->scratch) ? r->scratch : NULL;
}

/* The header of the packet at off (checked by the scan) as a PacketRef. */
static PacketRef packet_ref(const HtReader *r, uint64_t off)
{
  const uint8_t *h = r->data + off;
  return (PacketRef){.off = off, .blen = ht_ru32(h + 8), .rawlen = ht_ru32(h + 12),
                     .flags = h[5]};
}

/* -- A sealed tape's names, loaded after the scan ------------------------- */

/* A sealed tape's dictionaries and its stack table are loaded at the first
** question about a name or a stack, not by the scan (`stats` asks about no
** stack: cc1plus's 558,641 nodes are 9 MB to clear and fill, a quarter of
** its time), or by a thread each that ht_reader_names_start begins and the
** first question waits for (the AGG's sites load meanwhile: cc1plus's
** names took 10 ms of its report's 45). A thread owns what it fills
** (strings, symbols, locations; nodes) until it is joined; the flags
** dict_wait and nstk are the caller's. */

/* The DICT packets, in their order (as the scan would have), their damage
** into dict_bad. */
static void dicts_fill(HtReader *r)
{
  ZSTD_DCtx *zd = ZSTD_createDCtx();  /* (the reader's is the caller's) */
  for (size_t i = 0; i + 1 < r->ndict; i += 2) {
    const uint8_t *h = r->data + r->dict_off[i];
    uint32_t rawlen = ht_ru32(h + 12);
    uint8_t *own = NULL;
    const uint8_t *b = zd ? ht_reader_body(zd, h + HT_PHEAD_SIZE, ht_ru32(h + 8), rawlen, h[5],
                                           &own) : NULL;
    if ((!b || reader_dict(r, ht_ru32(h + 20), b, b + rawlen)) && !r->dict_bad++)
      r->dict_bad_off = r->dict_off[i];
    free(own);
  }
  ZSTD_freeDCtx(zd);
}

static void stacks_fill(HtReader *r)
{
  reader_stacks_room(r, r->stk_off[0]);
  ht_sealstacks_decode(r, r->nstk);
}

/* What dicts_fill left: the dictionaries are loaded, their damage counted. */
static void dicts_done(HtReader *r)
{
  r->dict_wait = 0;
  if (r->dict_bad) {
    r->st.damaged += r->dict_bad;
    ht_reader_damage(r, r->dict_bad_off, "damaged dictionary packet at byte %llu",
                     (unsigned long long)r->dict_bad_off);
    r->dict_bad = 0;
  }
}

/* What stacks_fill left: the table is whole, its damage counted as the
** scan counted it. */
static void stacks_done(HtReader *r)
{
  r->nstk = 0;
  if (r->stk_bad) {
    r->st.damaged += r->stk_bad;
    r->st.damaged_bytes += r->stk_bad_bytes;
    ht_reader_damage(r, r->stk_bad_off, "damaged stack packet at byte %llu",
                     (unsigned long long)r->stk_bad_off);
    r->stk_bad = 0;
  }
  /* its unused room off the resident set */
  ht_huge_trim(r->nodes, (size_t)r->nnodes * sizeof(*r->nodes),
               (size_t)r->capnodes * sizeof(*r->nodes));
}

static void *dicts_thread(void *arg) { dicts_fill(arg); return NULL; }
static void *stacks_thread(void *arg) { stacks_fill(arg); return NULL; }

/* Wait for the names' threads, if they run: what they filled is the
** caller's (what none filled is filled by the first question). */
static void names_join(HtReader *r)
{
  int t = r->names_thread;
  r->names_thread = 0;
  if (t & 1) { pthread_join(r->names_thr, NULL); dicts_done(r); }
  if (t & 2) { pthread_join(r->stacks_thr, NULL); stacks_done(r); }
}

/* The dictionaries and the stack table on a thread each: they fill apart
** (strings, symbols and locations; nodes), and the first question waits
** for the longer of the two, not for both one after the other. */
void ht_reader_names_start(HtReader *r)
{
  if ((!r->dict_wait && !r->nstk) || r->names_thread || r->nnodes > 1) return;
  if (r->dict_wait && !pthread_create(&r->names_thr, NULL, dicts_thread, r))
    r->names_thread |= 1;
  if (r->nstk && !pthread_create(&r->stacks_thr, NULL, stacks_thread, r))
    r->names_thread |= 2;
}

void ht_reader_stacks_load(HtReader *r)
{
  names_join(r);
  if (r->nstk) {
    stacks_fill(r);
    stacks_done(r);
  }
}

/* The dictionaries a sealed tape's scan left, loaded (or waited for). */
static void dicts_load(HtReader *r)
{
  names_join(r);
  if (r->dict_wait) {
    dicts_fill(r);
    dicts_done(r);
  }
}

/* A sealed tape's dictionaries, loaded if they are not yet: the queries
** are const, as they are the tape's; only when they load changes. */
static inline void dicts_need(const HtReader *r)
{
  if (HT_UNLIKELY(r->dict_wait)) dicts_load((HtReader *)r);
}

/* The stack table of a sealed tape, decoded if it is not yet: the queries
** are const, as the table is the tape's; only when it is decoded changes. */
static inline void stacks_need(const HtReader *r)
{
  if (HT_UNLIKELY(r->nstk)) ht_reader_stacks_load((HtReader *)r);
}

/* A sealed tape of version 12 says where its event blocks end: the scan
** goes there at once when a packet begins there (or the file ends), and
** INDEX lists the blocks (scan_index). Opening cc1plus's tape read its 64
** blocks' headers, a page each: the time to open a tape must not grow
** with its events. */
static uint64_t scan_skip(HtReader *r, uint64_t off)
{
  uint64_t e = r->blocks_end;
  if (!r->sealed || r->follow || off != r->hdr_len || e <= off || e > r->size ||
      (e < r->size && (r->size - e < HT_PHEAD_SIZE || memcmp(r->data + e, HT_PMAGIC, 4))))
    return off;
  r->blocks_skipped = 1;
  return e;
}

/* The blocks the scan went past, from INDEX: 0, or -1 when INDEX is missing
** or does not fit them (the caller scans them then). */
static int scan_index(HtReader *r)
{
  const uint8_t *p = r->index, *end = p ? p + r->index_len : NULL;
  uint64_t prev = r->hdr_len, n = 0;
  size_t npk0 = r->npk;
  while (p && p < end) {
    uint64_t v[5];
    for (int i = 0; i < 5; i++)
      if (ht_ruleb128(&p, end, &v[i])) goto bad;
    /* (seq0, ts0, off, nev, a0): offsets rising through the blocks */
    if (v[2] < prev || (n && v[2] == prev) || v[2] > r->blocks_end ||
        r->blocks_end - v[2] < HT_PHEAD_SIZE)
      goto bad;
    if (ht_grow(&r->pk, &r->cappk, r->npk + 1, sizeof(PacketRef))) goto bad;
    r->pk[r->npk++] = (PacketRef){.off = v[2], .seq0 = v[0], .seq1 = UINT64_MAX, .ts0 = v[1],
                                  .nev = v[3] > UINT32_MAX ? UINT32_MAX : (uint32_t)v[3],
                                  .pid = r->hdr.pid, .crc_due = !r->nocrc, .head_due = 1};
    r->st.event_packets++;
    r->st.packets++;
    r->st.events += v[3];
    prev = v[2];
    n++;
  }
  if (p && n) return 0;
bad:
  for (size_t i = npk0; i < r->npk; i++) {
    r->st.event_packets--;
    r->st.packets--;
    r->st.events -= r->pk[i].nev;
  }
  r->npk = npk0;
  return -1;
}

/* Index every packet, load dictionaries and the trailer. */
static int reader_scan(HtReader *r, uint64_t off)
{
  uint64_t end_ts = 0, base0 = r->ts_base, scan_end = r->size;
  int have_ts = r->have_ts;  /* (a followed tape's later scans keep time zero) */
  off = scan_skip(r, off);
again:
  while (off < scan_end) {
    uint64_t n = packet_block(r, off);
    int crc_due = n != 0;
    if (!n) n = packet_check(r, off);
    if (!n) {
      uint64_t next = packet_resync(r, off), end;
      /* No valid packet follows: a packet the file holds whole (by its
      ** header's length) is damaged; one the file ends inside is truncated. */
      if (next >= r->size && (end = packet_end(r, off))) next = end;
      else if (next >= r->size && r->follow) break;  /* being written: the next poll */
      else if (next >= r->size) {
        r->st.truncated_bytes = r->size - off;
        ht_reader_damage(r, off, "truncated: %llu bytes after the last whole packet lost",
                      (unsigned long long)(r->size - off));
        break;
      }
      r->st.damaged++;
      r->st.damaged_bytes += next - off;
      ht_reader_damage(r, off, "damaged packet at byte %llu (bad header or checksum)",
                    (unsigned long long)off);
      off = next;
      continue;
    }
    const uint8_t *h = r->data + off;
    unsigned kind = h[4], flags = h[5];
    PacketRef pr = {
      .off = off, .blen = ht_ru32(h + 8), .rawlen = ht_ru32(h + 12), .flags = flags,
      .gen = h[6] | (uint32_t)h[7] << 8,
      .pid = ht_ru32(h + 16), .tid = ht_ru32(h + 20), .seq0 = ht_ru64(h + 24),
      .seq1 = ht_ru64(h + 32), .ts0 = ht_ru64(h + 40), .nev = ht_ru32(h + 48),
      .crc_due = crc_due,
    };
    if (flags & ~HT_PF_KNOWN) {
      r->st.damaged++;
      r->st.damaged_bytes += n;
      ht_reader_damage(r, off, "packet at byte %llu has unknown flags 0x%x",
                    (unsigned long long)off, flags);
      off += n;
      continue;
    }
    r->st.packets++;
    if (!r->follow) reader_release(r, off, n);
    if (kind == HT_P_DICT) {
      if (ht_grow(&r->dict_off, &r->capdict, r->ndict + 2, sizeof(uint64_t)))
        return HEAPTAPE_E_NOMEM;
      r->dict_off[r->ndict++] = off;
      r->dict_off[r->ndict++] = n;
    }
    if (kind == HT_P_ACCESS) {  /* decoded by src/analyze/access.c on demand */
      if (!r->hdr.pid || pr.pid == r->hdr.pid) {
        if (ht_grow(&r->acc_off, &r->capacc, r->nacc + 1, sizeof(uint64_t)))
          return HEAPTAPE_E_NOMEM;
        r->acc_off[r->nacc++] = off;
        r->acc_events += pr.nev;
      }
      off += n;
      continue;
    }
    if (r->sealed && kind == HT_P_AGG) {  /* pieces in order: seq0 = offset */
      /* Each piece is decompressed in place at the section's end, into
      ** room for all the pieces that follow it at once (cc1plus: 1.7 MB in
      ** 2), made of a whole huge page from 1 MiB on: the heap's first 2 MiB
      ** are 4 KiB pages, and the section was 400 faults of them. */
      size_t need = r->agglen + pr.rawlen + 1, c = r->aggcap * 2;
      if (!r->agg) {
        uint64_t raw = 0, e;
        for (uint64_t o = off; (e = packet_end(r, o)) && r->data[o + 4] == HT_P_AGG; o = e)
          raw += ht_ru32(r->data + o + 12);
        c = raw + 1 >= HT_HUGE_PAGE / 2 && raw + 1 < HT_HUGE_PAGE ? HT_HUGE_PAGE
          : raw < HT_PACKET_MAX * 64 ? (size_t)raw + 1 : need;
      }
      uint8_t *grown = r->agg;
      if (need > r->aggcap && !r->agg_bad &&
          (grown = ht_huge_realloc(r->agg, r->agglen, c > need ? c : need))) {
        r->agg = grown;  /* (before any test: realloc may have moved it) */
        r->aggcap = c > need ? c : need;
      }
      if (pr.seq0 != r->agglen || r->agg_bad || !grown ||
          !packet_body_into(r, h, &pr, r->agg + r->agglen)) {
        r->agg_bad = 1;
      } else {
        r->agglen += pr.rawlen;
      }
      off += n;
      continue;
    }
    if (r->sealed && kind == HT_P_SNAPS) {  /* decompressed by html and --at only */
      if (ht_grow(&r->snap_off, &r->capsnap, r->nsnap + 1, sizeof(uint64_t)))
        return HEAPTAPE_E_NOMEM;
      r->snap_off[r->nsnap++] = off;
      off += n;
      continue;
    }
    if (r->sealed && kind == HT_P_STACKS && !r->follow) {  /* decoded on demand */
      if (ht_grow(&r->stk_off, &r->capstk, r->nstk + 1, sizeof(uint64_t)))
        return HEAPTAPE_E_NOMEM;
      r->stk_off[r->nstk++] = off;
      r->stk_nodes += pr.nev;
      off += n;
      continue;
    }
    if (r->sealed && kind == HT_P_INDEX) {  /* the blocks' list, when the scan skipped them */
      if (r->blocks_skipped && !r->index) {
        const uint8_t *b = ht_reader_body(r->zd, h + HT_PHEAD_SIZE, pr.blen, pr.rawlen, flags,
                                          &r->index_own);
        if (b) { r->index = b; r->index_len = pr.rawlen; }
      }
      off += n;
      continue;
    }
    if (r->sealed && (kind == HT_P_META || kind == HT_P_STACKS || kind == HT_P_MODULES)) {
      if (kind == HT_P_STACKS && r->nnodes <= 1) reader_stacks_room(r, off);
      const uint8_t *b = scan_body(r, h, &pr);
      int bad = !b || ht_sealread_packet(r, kind, b, b + pr.rawlen);
      if (bad) {
        r->st.damaged++;
        r->st.damaged_bytes += n;
        ht_reader_damage(r, off, "damaged %s packet at byte %llu",
                      kind == HT_P_META ? "summary" : kind == HT_P_STACKS ? "stack" : "module",
                      (unsigned long long)off);
      }
      off += n;
      continue;
    }
    if (kind == (r->sealed ? HT_P_SEVENTS : HT_P_EVENTS)) {
      if (r->hdr.pid && pr.pid != r->hdr.pid) { r->st.foreign++; off += n; continue; }
      /* (A sealed block may repeat a sequence number a damaged journal had.) */
      if (pr.seq1 < pr.seq0 || (!r->sealed && pr.nev && pr.seq1 - pr.seq0 + 1 < pr.nev)) {
        r->st.damaged++;
        r->st.damaged_bytes += n;
        ht_reader_damage(r, off, "packet at byte %llu has an impossible sequence range",
                      (unsigned long long)off);
        off += n;
        continue;
      }
      if (ht_grow(&r->pk, &r->cappk, r->npk + 1, sizeof(PacketRef))) return HEAPTAPE_E_NOMEM;
      r->pk[r->npk++] = pr;
      r->st.event_packets++;
      r->st.events += pr.nev;
      if (!r->hdr.clock_start && (!have_ts || pr.ts0 < r->ts_base)) r->ts_base = pr.ts0;
      if (pr.ts0 > end_ts) end_ts = pr.ts0;
      have_ts = 1;
    } else if (kind == HT_P_DICT && r->sealed && !r->follow) {
      r->dict_wait = 1;      /* loaded after the scan (dicts_load) */
    } else if (kind == HT_P_DICT || kind == HT_P_TRAILER) {
      const uint8_t *b = scan_body(r, h, &pr);
      int bad = !b;
      if (b && kind == HT_P_DICT) bad = reader_dict(r, pr.tid, b, b + pr.rawlen) != 0;
      else if (b) reader_trailer(r, b, b + pr.rawlen);
      if (bad) {
        r->st.damaged++;
        ht_reader_damage(r, off, "damaged %s packet at byte %llu",
                      kind == HT_P_DICT ? "dictionary" : "trailer",
                      (unsigned long long)off);
      }
    }
    off += n;
  }
  if (r->blocks_skipped && scan_end == r->size && scan_index(r)) {
    scan_end = r->blocks_end;  /* no usable INDEX: the blocks scanned after all */
    off = r->hdr_len;
    r->blocks_skipped = 0;
    goto again;
  }
  if (scan_end != r->size) off = r->size;
  r->scan_off = off;
  if (!r->follow) {  /* (a followed tape's polls use it again) */
    free(r->scratch);
    r->scratch = NULL;
    r->scratchcap = 0;
  }
  /* A followed tape without T0 whose packet with the smallest ts0 came late
  ** (the writer thread's first): events decoded but not delivered yet move
  ** to the new time zero, as a reader of the whole tape would see them. */
  if (r->have_ts && r->ts_base < base0) {
    for (size_t i = 0; i < r->nheap; i++) r->heap[i]->ev.ts += base0 - r->ts_base;
    if (r->seq_last) {  /* events delivered with the old time zero */
      r->ts_last += base0 - r->ts_base;
      r->reordered++;
    }
  }
  r->have_ts = have_ts;
  if (r->npk > r->next_pk)  /* (a followed tape: only the packets not yet opened) */
    qsort(r->pk + r->next_pk, r->npk - r->next_pk, sizeof(PacketRef), packet_cmp);
  if (r->sealed) { ht_sealread_scanned(r); return 0; }
  if (r->st.end_ns > r->ts_base) r->st.end_ns -= r->ts_base;
  else r->st.end_ns = end_ts > r->ts_base ? end_ts - r->ts_base : 0;
  return 0;
}

/* -- Stacks --------------------------------------------------------------- */

/* Room for need nodes: the capacity doubles, and the new slots are left
** as they are (every node is written when added: a sealed tape's 558k
** nodes of cc1plus were zeroed, then copied, several times over). 0 or -1. */
int ht_reader_nodes_room(HtReader *r, size_t need)
{
  if (need <= r->capnodes) return 0;
  size_t c = (size_t)r->capnodes * 2;
  if (c < need) c = need;
  if (c > UINT32_MAX - 1) c = UINT32_MAX - 1;
  if (need > c) return -1;
  StackNode *p = ht_huge_realloc(r->nodes, (size_t)r->nnodes * sizeof(StackNode),
                                 c * sizeof(StackNode));
  if (!p) return -1;
  r->nodes = p;
  r->capnodes = (uint32_t)c;
  return 0;
}

/* Add node (parent, frame) as the next id (node_intern enters it in its
** table; a sealed tape's STACKS name each node once, in id order, and no
** event adds any: its table is left empty). 0 when out of memory. */
uint32_t ht_reader_node_append(HtReader *r, uint32_t parent, uint64_t frame)
{
  if (HT_UNLIKELY(r->nnodes >= r->capnodes) && ht_reader_nodes_room(r, (size_t)r->nnodes + 1)) return 0;
  uint32_t id = r->nnodes++;
  r->nodes[id].frame = frame;
  r->nodes[id].parent = parent;
  r->nodes[id].depth = parent && parent < id ? r->nodes[parent].depth + 1 : 1;
  return id;
}

/* Hash of a (parent, frame) pair. */
static size_t node_hash(uint32_t parent, uint64_t frame)
{
  return (size_t)ht_hash64(frame * 31 + parent);
}

/* Global id of (parent, frame), created if new; 0 when out of memory. */
static uint32_t node_intern(HtReader *r, uint32_t parent, uint64_t frame)
{
  if ((size_t)(r->nnodes + 1) * 2 > r->nhmask + 1) {
    size_t n = (r->nhmask + 1) * 2;
    uint32_t *t = calloc(n, sizeof(uint32_t));
    if (!t) return 0;
    for (uint32_t i = 1; i < r->nnodes; i++) {
      size_t j = node_hash(r->nodes[i].parent, r->nodes[i].frame) & (n - 1);
      while (t[j]) j = (j + 1) & (n - 1);
      t[j] = i;
    }
    free(r->nhash);
    r->nhash = t;
    r->nhmask = n - 1;
  }
  size_t j = node_hash(parent, frame) & r->nhmask;
  for (; r->nhash[j]; j = (j + 1) & r->nhmask) {
    StackNode *s = &r->nodes[r->nhash[j]];
    if (s->frame == frame && s->parent == parent) return r->nhash[j];
  }
  uint32_t id = ht_reader_node_append(r, parent, frame);
  if (id) r->nhash[j] = id;
  return id;
}

/* Global id for a thread-local stack id; lost ids map to an "unknown" node. */
static uint32_t stack_global(HtReader *r, ThreadState *t, uint64_t local)
{
  if (local == 0) return 0;
  if (local <= t->nlocal) return t->local[local - 1];
  if (!r->unknown) r->unknown = node_intern(r, 0, 0);
  return r->unknown;
}

/* Stream state of (pid, tid), created on first use; the pointer stays
** valid until the reader is closed. */
static ThreadState *thread_get(HtReader *r, uint32_t pid, uint32_t tid)
{
  uint64_t key = (uint64_t)pid << 32 | tid, *i = ht_map_get(&r->thmap, key);
  if (i) return r->th[*i - 1];
  if (ht_grow(&r->th, &r->capth, r->nth + 1, sizeof(ThreadState *))) return NULL;
  ThreadState *t = calloc(1, sizeof(*t));
  if (!t) return NULL;
  t->pid = pid;
  t->tid = tid;
  if (ht_map_put(&r->thmap, key, r->nth + 1)) { free(t); return NULL; }
  r->th[r->nth++] = t;
  return t;
}

/* -- Decoding ------------------------------------------------------------- */

#define HT_READER_OPEN_MAX (1ull << 30) /* bytes all open packets may hold */

#define NEED(x) do { if (!(x)) goto bad; } while (0)
#define ULEB(v) NEED(!ht_ruleb128(&c->p, c->end, &(v)))

/* Weight of an allocation without an explicit one. */
static uint64_t implied_weight(const HtReader *r, uint64_t size)
{
  double t = (double)r->hdr.sample;
  if (t <= 0) return size;
  if (size == 0) return (uint64_t)t;
  double w = (double)size / -expm1(-(double)size / t);
  return w > 1.8e19 ? UINT64_MAX : (uint64_t)(w + 0.5);
}

/* Remember an EXT VOID's numbers (payload [p, end)); a hint for holding
** only, so a malformed one is ignored. */
static void reader_void(HtReader *r, const uint8_t *p, const uint8_t *end)
{
  uint64_t first, n;
  if (ht_ruleb128(&p, end, &first) || ht_ruleb128(&p, end, &n) || !n || first + n < first)
    return;
  unsigned i = r->nvoid++ % HT_READER_VOIDS;
  r->void_lo[i] = first;
  r->void_end[i] = first + n;
}

/* Decode one record: 1 an event (in c->ev), 0 another record, -1 end of
** packet or damage (the rest of the packet is dropped). */
static int cursor_record(HtReader *r, Cursor *c)
{
  ThreadState *t = c->th;
  HtEvent *ev = &c->ev;
  if (c->p >= c->end) return -1;
  {
    const uint8_t *rec = c->p;
    unsigned head = *c->p++, type = HT_HEAD_TYPE(head);
    uint64_t gap = 0, v, n;
    if (type < 32 && ((1u << type) & HT_R_SEQ_MASK)) {
      if (head & HT_HEAD_X) ULEB(gap);
      NEED(c->left > 0);
      uint64_t seq = c->seq + 1 + gap;
      NEED(seq > c->seq && seq <= c->pk->seq1);
      c->seq = seq;
      c->left--;
      if (HT_UNLIKELY(c->dirty)) { /* the last event had strings */
        ev->str = NULL; ev->len = 0; ev->build_id = NULL; ev->build_id_len = 0;
        ev->segs = NULL; ev->nseg = 0;
        c->dirty = 0;
      }
      ev->seq = seq;
      ev->kind = 0; ev->addr = 0; ev->size = 0; ev->align = 0; ev->weight = 0;
      ev->stack = 0;
      ev->ts = c->ts >= r->ts_base ? c->ts - r->ts_base : 0;
    }
    switch (type) {
    case HT_R_ALLOC:
    case HT_R_ALLOC_BACK: {
      unsigned kind = 0;
      if (head & HT_RF_KIND) { NEED(c->p < c->end); kind = *c->p++; }
      NEED(!(kind & ~HT_K_KNOWN));
      uint64_t size, a, s, addr;
      ULEB(size); ULEB(a); ULEB(s);
      if (type == HT_R_ALLOC_BACK) {
        NEED(a < c->nf && a < HT_BACKREF_MAX);
        addr = c->rf[(c->nf - 1 - a) & (HT_BACKREF_MAX - 1)];
      } else addr = c->addr += (uint64_t)ht_unzigzag(a);
      c->ra[c->na++ & (HT_BACKREF_MAX - 1)] = addr;
      c->stack += (uint64_t)ht_unzigzag(s);
      ev->type = HT_EV_ALLOC;
      ev->kind = (uint8_t)kind;
      ev->size = size;
      ev->addr = addr;
      if (HT_K_HAS_ALIGN(kind)) ULEB(ev->align);
      if (head & HT_RF_WEIGHT) ULEB(ev->weight);
      else ev->weight = implied_weight(r, size);
      ev->stack = stack_global(r, t, c->stack);
      return 1;
    }
    case HT_R_FREE:
    case HT_R_FREE_BACK: {
      unsigned kind = 0;
      if (head & HT_RF_KIND) { NEED(c->p < c->end); kind = *c->p++; }
      NEED(!(kind & ~HT_K_KNOWN));
      uint64_t a, addr;
      ULEB(a);
      if (type == HT_R_FREE_BACK) {
        NEED(a < c->na && a < HT_BACKREF_MAX);
        addr = c->ra[(c->na - 1 - a) & (HT_BACKREF_MAX - 1)];
      } else addr = c->addr += (uint64_t)ht_unzigzag(a);
      c->rf[c->nf++ & (HT_BACKREF_MAX - 1)] = addr;
      ev->type = HT_EV_FREE;
      ev->kind = (uint8_t)kind;
      ev->addr = addr;
      if (HT_K_HAS_SIZE(kind)) ULEB(ev->size);
      return 1;
    }
    case HT_R_STACK: {
      uint64_t first, parent;
      ULEB(first); ULEB(parent); ULEB(n);
      NEED(n <= 4096 && first >= 1 && parent < first);
      NEED(first + n < (1u << 26)); /* ids are bounded per stream */
      /* Every id an honest writer hands out cost at least a byte of this
      ** file (lost packets included), so id tables never outgrow the file:
      ** a small crafted tape cannot make the reader allocate gigabytes. */
      if (first - 1 + n > t->caplocal) {
        uint64_t more = first - 1 + n - t->caplocal;
        NEED(more <= r->id_budget);
        r->id_budget -= more;
      }
      size_t cap = t->caplocal;
      NEED(!ht_grow(&t->local, &cap, first - 1 + n, sizeof(uint32_t)));
      t->caplocal = (uint32_t)cap;
      uint32_t g = (uint32_t)stack_global(r, t, parent);
      /* Ids lost with a damaged packet stand for the unknown stack. */
      for (; t->nlocal < first - 1; t->nlocal++)
        t->local[t->nlocal] = (uint32_t)stack_global(r, t, UINT32_MAX);
      uint64_t prev = 0;
      for (uint64_t i = 0; i < n; i++) {
        ULEB(v);
        prev += (uint64_t)ht_unzigzag(v);
        g = node_intern(r, g, prev);
        NEED(g);
        t->local[first - 1 + i] = g;
      }
      if (first - 1 + n > t->nlocal) t->nlocal = (uint32_t)(first - 1 + n);
      break;
    }
    case HT_R_TIME:
      ULEB(v);
      c->ts += v;
      break;
    case HT_R_THREAD:
    case HT_R_MARK:
      ULEB(n);
      NEED(n <= (uint64_t)(c->end - c->p));
      ev->type = type == HT_R_THREAD ? HT_EV_THREAD : HT_EV_MARK;
      c->dirty = 1;
      ev->str = (const char *)c->p;
      ev->len = n;
      c->p += n;
      return 1;
    case HT_R_MODULE: {
      ULEB(n);
      NEED(n <= (uint64_t)(c->end - c->p));
      ev->type = (head & HT_RF_UNLOAD) ? HT_EV_UNLOAD : HT_EV_MODULE;
      c->dirty = 1;
      ev->str = (const char *)c->p;
      ev->len = n;
      c->p += n;
      ULEB(ev->addr);
      ULEB(n);
      NEED(n <= (uint64_t)(c->end - c->p));
      ev->build_id = c->p;
      ev->build_id_len = n;
      c->p += n;
      ULEB(n);
      NEED(n <= HT_COUNTOF(c->segs));
      for (uint64_t i = 0; i < n; i++) {
        ULEB(c->segs[i].vaddr); ULEB(c->segs[i].memsz); ULEB(v);
        c->segs[i].prot = (uint32_t)v;
      }
      ev->segs = c->segs;
      ev->nseg = n;
      return 1;
    }
    case HT_R_RSS:
    case HT_R_LOST:
      ULEB(v);
      ev->type = type == HT_R_RSS ? HT_EV_RSS : HT_EV_LOST;
      ev->size = v;
      if (type == HT_R_LOST && r->pass == 1) r->st.lost += v;
      return 1;
    case HT_R_RESET:
      t->nlocal = 0;
      t->gen = (t->gen + 1) & 0xffff;
      c->stack = 0;
      break;
    case HT_R_EXT:
      ULEB(v); ULEB(n);
      NEED(n <= (uint64_t)(c->end - c->p));
      if (v == HT_X_VOID) reader_void(r, c->p, c->p + n);
      c->p += n;
      break;
    default:
      c->p = rec;
      goto bad;
    }
  }
  return 0;
bad:
  if (r->pass == 1) {
    r->st.damaged++;
    r->st.damaged_bytes += (uint64_t)(c->end - c->p);
    ht_reader_damage(r, c->pk->off, "corrupt record in packet at byte %llu (thread %u)",
                  (unsigned long long)c->pk->off, c->pk->tid);
  }
  c->p = c->end;
  return -1;
}

/* Decode the next event, then every record up to the following event, so a
** thread's stack definitions are applied in its own order even when its next
** packet is opened before this event is delivered. 1 found, 0 end. */
static int cursor_decode(HtReader *r, Cursor *c)
{
  int rc;
  while ((rc = cursor_record(r, c)) == 0) {}
  if (rc < 0) return 0;
  while (c->p < c->end && !((1u << HT_HEAD_TYPE(*c->p)) & HT_R_SEQ_MASK))
    if (cursor_record(r, c) < 0) break;
  return 1;
}

#undef ULEB
#undef NEED

/* Record a module so addresses can be attributed to it. */
void ht_reader_learn_module(HtReader *r, const HtEvent *ev)
{
  if (ev->type == HT_EV_UNLOAD) return; /* keep it: stacks may still refer to it */
  if (ht_grow(&r->mods, &r->capmods, r->nmods + 1, sizeof(Module))) return;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < ev->nseg; i++) {
    uint64_t a = ev->addr + ev->segs[i].vaddr;
    if (a < lo) lo = a;
    if (a + ev->segs[i].memsz > hi) hi = a + ev->segs[i].memsz;
  }
  if (!ev->nseg) lo = hi = ev->addr;
  for (size_t i = 0; i < r->nmods; i++)
    if (r->mods[i].base == ev->addr && r->mods[i].lo == lo) return;
  char *path = malloc(ev->len + 1 + ev->build_id_len);
  if (!path) return;
  memcpy(path, ev->str, ev->len);
  path[ev->len] = 0;
  uint8_t *bid = (uint8_t *)path + ev->len + 1;
  if (ev->build_id_len) memcpy(bid, ev->build_id, ev->build_id_len);
  r->mods[r->nmods++] = (Module){path, bid, ev->build_id_len, ev->addr, lo, hi};
  r->names_gen++;
}

/* -- Merge ---------------------------------------------------------------- */

/* Restore the heap property upward from i. */
static void heap_up(HtReader *r, size_t i)
{
  Cursor **h = r->heap;
  while (i) {
    size_t p = (i - 1) / 2;
    if (h[p]->ev.seq <= h[i]->ev.seq) break;
    Cursor *t = h[p]; h[p] = h[i]; h[i] = t;
    i = p;
  }
}

/* Restore the heap property downward from i. */
static void heap_down(HtReader *r, size_t i)
{
  Cursor **h = r->heap;
  for (;;) {
    size_t l = 2 * i + 1, m = i;
    if (l < r->nheap && h[l]->ev.seq < h[m]->ev.seq) m = l;
    if (l + 1 < r->nheap && h[l + 1]->ev.seq < h[m]->ev.seq) m = l + 1;
    if (m == i) break;
    Cursor *t = h[m]; h[m] = h[i]; h[i] = t;
    i = m;
  }
}

/* Free a cursor and its buffer. */
static void cursor_free(HtReader *r, Cursor *c)
{
  if (!c) return;
  r->open_bytes -= c->cost;
  free(c->own);
  free(c);
}

/* Free a cursor whose packet is done, releasing its pages of the tape. */
static void cursor_done(HtReader *r, Cursor *c)
{
  reader_release(r, c->pk->off, HT_PHEAD_SIZE + (uint64_t)c->pk->blen);
  cursor_free(r, c);
}

/* Open the next packet into a cursor on the heap (or drop it if empty). */
static int reader_activate(HtReader *r)
{
  const PacketRef *pk = &r->pk[r->next_pk++];
  /* Packets are open together only while their sequence ranges overlap:
  ** about one per thread in a real tape. A crafted tape of overlapping
  ** ranges (and zstd bodies that expand 1000x) must not exhaust memory. */
  uint64_t cost = sizeof(Cursor) + ((pk->flags & HT_PF_ZSTD) ? pk->rawlen : 0);
  if (r->open_bytes + cost > HT_READER_OPEN_MAX) {
    if (r->pass == 1) {
      r->st.damaged++;
      r->st.damaged_bytes += pk->blen;
      ht_reader_damage(r, pk->off, "packet at byte %llu skipped: too many packets "
                    "open at once (overlapping sequence ranges)", (unsigned long long)pk->off);
    }
    return 0;
  }
  Cursor *c = malloc(sizeof(*c)); /* the rings need no clearing */
  if (!c) return HEAPTAPE_E_NOMEM;
  memset(c, 0, offsetof(Cursor, ra));
  c->pkc = *pk;
  c->pk = &c->pkc;
  c->cost = cost;
  r->open_bytes += cost;
  c->th = thread_get(r, pk->pid, pk->tid);
  const uint8_t *b = ht_reader_body(r->zd, r->data + pk->off + HT_PHEAD_SIZE, pk->blen,
                                 pk->rawlen, pk->flags, &c->own);
  if (!c->th || !b) {
    if (c->th && r->pass == 1) {
      r->st.damaged++;
      r->st.damaged_bytes += pk->blen;
      ht_reader_damage(r, pk->off, "packet at byte %llu does not decompress",
                    (unsigned long long)pk->off);
    }
    int rc = c->th ? 0 : HEAPTAPE_E_NOMEM;
    cursor_free(r, c);
    return rc;
  }
  ThreadState *t = c->th;
  if (t->seen && t->gen != pk->gen) t->nlocal = 0; /* a RESET was lost */
  t->gen = pk->gen;
  t->seen = 1;
  c->p = b;
  c->end = b + pk->rawlen;
  c->seq = pk->seq0 - 1;
  c->ts = pk->ts0;
  c->ev.pid = pk->pid;
  c->ev.tid = pk->tid;
  c->left = pk->nev;
  if (!cursor_decode(r, c)) { cursor_free(r, c); return 0; }
  if (ht_grow(&r->heap, &r->capheap, r->nheap + 1, sizeof(Cursor *))) {
    cursor_free(r, c);
    return HEAPTAPE_E_NOMEM;
  }
  r->heap[r->nheap++] = c;
  heap_up(r, r->nheap - 1);
  return 0;
}

/*
** Held at a gap, look for the numbers of the gap in the packets not opened
** yet: a thread says it leaves numbers unused (EXT VOID) before its next
** event, so when the writer took its packet in between, the VOID opens
** the thread's next packet, which sorts after the gap and so is not opened
** before the gap is filled. Reads the leading records of the next few
** packets, once each, without opening them (their stacks must get their
** ids in order). Returns whether it learnt of a VOID.
*/
#define HT_READER_PEEK 8           /* packets after the gap looked at */
static int reader_peek(HtReader *r)
{
  unsigned before = r->nvoid;
  for (size_t i = r->next_pk; i < r->npk && i < r->next_pk + HT_READER_PEEK; i++) {
    PacketRef *pk = &r->pk[i];
    if (pk->peeked || pk->head_due) continue;
    pk->peeked = 1;
    uint8_t head[64];                  /* enough for TIME and VOID records */
    const uint8_t *p = r->data + pk->off + HT_PHEAD_SIZE, *end;
    if (pk->flags & HT_PF_ZSTD) {
      ZSTD_inBuffer in = {p, pk->blen, 0};
      ZSTD_outBuffer out = {head, sizeof(head), 0};
      ZSTD_DCtx_reset(r->zd, ZSTD_reset_session_only);
      size_t rc = ZSTD_decompressStream(r->zd, &out, &in);
      ZSTD_DCtx_reset(r->zd, ZSTD_reset_session_only);
      if (ZSTD_isError(rc)) continue;
      p = head;
      end = head + out.pos;
    } else {
      end = p + (pk->blen < sizeof(head) ? pk->blen : sizeof(head));
    }
    uint64_t tag, n;
    while (p < end) {
      if (*p == HT_R_TIME) { p++; if (ht_ruleb128(&p, end, &n)) break; continue; }
      if (*p != HT_R_EXT) break;
      p++;
      if (ht_ruleb128(&p, end, &tag) || ht_ruleb128(&p, end, &n) || n > (uint64_t)(end - p)) break;
      if (tag == HT_X_VOID) reader_void(r, p, p + n);
      p += n;
    }
  }
  return r->nvoid != before;
}

/* Is seq the next number to deliver (or one before it), counting the
** numbers the tape said are never used (EXT VOID)? Moves seq_last past them. */
static int reader_in_line(HtReader *r, uint64_t seq)
{
  for (int moved = 1; moved;) {
    if (seq <= r->seq_last + 1) return 1;  /* (or came late: no use waiting) */
    moved = 0;
    for (unsigned i = 0; i < HT_READER_VOIDS; i++)
      if (r->void_lo[i] <= r->seq_last + 1 && r->seq_last + 1 < r->void_end[i]) {
        r->seq_last = r->void_end[i] - 1;
        moved = 1;
      }
  }
  return 0;
}

/* Next event in global order: 1 delivered, 0 at the end. The event's
** pointers stay valid until the next call. */
int ht_reader_next(HtReader *r, HtEvent *ev)
{
  if (r->pass == 0) r->pass = 1;
  if (r->sealed) {
    int rc = ht_sealread_next(r, ev);
    if (rc > 0) r->st.delivered++;
    return rc;
  }
  Cursor *c = r->pending;
  if (c) {
    r->pending = NULL;
    if (cursor_decode(r, c)) heap_down(r, 0);
    else {
      r->heap[0] = r->heap[--r->nheap];
      if (r->nheap) heap_down(r, 0);
      cursor_done(r, c);
    }
  }
  while (r->next_pk < r->npk &&
         (!r->nheap || r->pk[r->next_pk].seq0 <= r->heap[0]->ev.seq)) {
    /* A followed tape: a packet after a missing number is not opened
    ** before it would be delivered, so that its stacks get the ids a
    ** reader of the whole tape gives them (the missing packet first). */
    const PacketRef *pk = &r->pk[r->next_pk];
    if (!r->nheap && (pk->ts0 > r->ts_base ? pk->ts0 - r->ts_base : 0) >= r->hold_ts &&
        !reader_in_line(r, pk->seq0) && !(reader_peek(r) && reader_in_line(r, pk->seq0)))
      return 0;
    if (r->follow && pk->seq0 < r->act_max) r->reordered++;  /* it came late */
    else if (r->follow) r->act_max = pk->seq0;
    int rc = reader_activate(r);
    if (rc) return rc;
  }
  if (!r->nheap) {
    if (r->st.end_ns < r->ts_last) r->st.end_ns = r->ts_last;
    return 0;
  }
  c = r->heap[0];
  /* A followed tape: a later event waits while a number is missing before
  ** it (in another thread's packet not written yet), at most until hold_ts. */
  if (c->ev.ts >= r->hold_ts && !reader_in_line(r, c->ev.seq) &&
      !(reader_peek(r) && reader_in_line(r, c->ev.seq))) return 0;
  *ev = c->ev;
  if (ev->seq > r->seq_last) r->seq_last = ev->seq;  /* (one came late) */
  if (ev->ts < r->ts_last) ev->ts = r->ts_last;
  r->ts_last = ev->ts;
  if (ev->type == HT_EV_MODULE) ht_reader_learn_module(r, ev);
  r->pending = c;
  r->st.delivered++;
  return 1;
}

int ht_reader_rewind(HtReader *r)
{
  for (size_t i = 0; i < r->nheap; i++) cursor_free(r, r->heap[i]);
  r->nheap = 0;
  r->pending = NULL;
  r->next_pk = 0;
  r->ts_last = 0;
  ht_sealread_stop(r, 0);
  for (size_t i = 0; i < r->nth; i++) r->th[i]->nlocal = r->th[i]->seen = 0;
  r->pass++;
  return 0;
}

/* -- Open and close ------------------------------------------------------- */

/* Common part of opening: header, scan. */
static int reader_init(HtReader *r, char *err, size_t errlen)
{
  r->st.file_bytes = r->size;
  r->id_budget = r->size + 4096;
  r->st.first_error_off = UINT64_MAX;
  r->st.trailer_status = UINT64_MAX;
  r->hold_ts = UINT64_MAX;
  r->nodes = calloc(16, sizeof(StackNode));
  r->capnodes = 16;
  r->nnodes = 1; /* id 0 is the empty stack */
  r->nhash = calloc(16, sizeof(uint32_t));
  r->nhmask = 15;
  r->zd = ZSTD_createDCtx();
  if (!r->nodes || !r->nhash || !r->zd) {
    snprintf(err, errlen, "out of memory");
    return HEAPTAPE_E_NOMEM;
  }
  int64_t h = reader_header(r, err, errlen);
  if (h < 0) return (int)h;
  r->ts_base = r->hdr.clock_start;
  int rc = reader_scan(r, (uint64_t)h);
  if (rc) snprintf(err, errlen, "out of memory");
  return rc;
}

/* Open a tape held in memory. */
static int reader_open_mem(HtReader **out, const void *data, size_t len,
                           int nocrc, char *err, size_t errlen)
{
  *out = NULL;
  HtReader *r = calloc(1, sizeof(*r));
  if (!r) { snprintf(err, errlen, "out of memory"); return HEAPTAPE_E_NOMEM; }
  r->data = data;
  r->size = len;
  r->nocrc = nocrc;
  int rc = reader_init(r, err, errlen);
  if (rc) { ht_reader_close(r); return rc; }
  *out = r;
  return 0;
}

/* Open a tape held in memory; the buffer must outlive the reader. */
int ht_reader_open_mem(HtReader **r, const void *data, size_t len, char *err,
                       size_t errlen)
{
  return reader_open_mem(r, data, len, 0, err, errlen);
}

/* Fuzzing entry: like ht_reader_open_mem but checksums are not verified. */
int ht_reader_open_mem_nocrc(HtReader **r, const void *data, size_t len,
                             char *err, size_t errlen)
{
  return reader_open_mem(r, data, len, 1, err, errlen);
}

/* Open a tape file for reading: its descriptor and size, or a HEAPTAPE_E_*
** code (negative) with the reason in err. */
static int reader_open_file(const char *path, struct stat *sb, char *err, size_t errlen)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    snprintf(err, errlen, "%s", strerror(e));
    return e == ENOENT ? HEAPTAPE_E_NOENT : HEAPTAPE_E_IO;
  }
  if (fstat(fd, sb) || !S_ISREG(sb->st_mode)) {
    close(fd);
    snprintf(err, errlen, "not a regular file");
    return HEAPTAPE_E_IO;
  }
  if (sb->st_size == 0) {
    close(fd);
    snprintf(err, errlen, "empty file, not a heaptape tape");
    return HEAPTAPE_E_NOTTAPE;
  }
  return fd;
}

/* Open a tape file by mapping it. */
int ht_reader_open(HtReader **out, const char *path, char *err, size_t errlen)
{
  *out = NULL;
  struct stat sb;
  int fd = reader_open_file(path, &sb, err, errlen);
  if (fd < 0) return fd;
  void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) {
    snprintf(err, errlen, "cannot map: %s", strerror(errno));
    return HEAPTAPE_E_IO;
  }
  int rc = reader_open_mem(out, m, (size_t)sb.st_size, 0, err, errlen);
  if (rc) munmap(m, (size_t)sb.st_size);
  else (*out)->mapped = 1;
  return rc;
}

int ht_tape_header_of(const char *path, uint32_t *pid, uint64_t *start_ns)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  uint8_t fixed[HT_HEADER_FIXED], *buf = NULL;
  int rc = -1;
  if (!ht_fd_pread(fd, fixed, sizeof(fixed), 0)) {
    size_t n = HT_HEADER_FIXED + (size_t)ht_ru32(fixed + 12) + 4;  /* with its CRC */
    if (n <= (1u << 20) && (buf = malloc(n)) && !ht_fd_pread(fd, buf, n, 0)) {
      HtReader *r;
      char err[256];
      if (!ht_reader_open_mem(&r, buf, n, err, sizeof(err))) {
        *pid = r->hdr.pid;
        *start_ns = r->hdr.start_ns;
        ht_reader_close(r);
        rc = 0;
      }
    }
  }
  free(buf);
  close(fd);
  return rc;
}

/* Copy bytes [from, to) of a followed tape into its memory; how many bytes
** it now has (fewer than to when the file ends first). A file another
** process may cut short is read, never mapped: a mapping raises SIGBUS at
** the first page past the new end (a run starting on the same path, the
** recorder cutting back an exec that failed) while a packet found before
** the cut is decoded. */
static size_t follow_copy(HtReader *r, size_t from, size_t to)
{
  uint8_t *dst = (uint8_t *)r->data;
  if (to > r->rwlen) {  /* more of the reservation made usable, 64 MiB at a time */
    size_t step = (size_t)64 << 20, want = (to + step - 1) / step * step;
    if (want > r->maplen) want = r->maplen;
    if (!mprotect(dst + r->rwlen, want - r->rwlen, PROT_READ | PROT_WRITE)) r->rwlen = want;
    if (to > r->rwlen) to = r->rwlen;  /* (no memory: followed up to there) */
  }
  while (from < to) {
    ssize_t n = pread(r->fd, dst + from, to - from, (off_t)from);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    from += (size_t)n;
  }
  return from;
}

/* Address space for a followed tape: want bytes, or fewer down to need
** under an address-space limit (ulimit -v); NULL if not even need. Reserved
** inaccessible: such pages are not charged to the commit limit
** (vm.overcommit_memory=2), follow_copy makes them usable as the tape grows. */
static void *follow_reserve(size_t want, size_t need, size_t *got)
{
  for (size_t len = want;; len = len / 2 > need ? len / 2 : need) {
    void *m = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m != MAP_FAILED) { *got = len; return m; }
    if (len <= need) return NULL;
  }
}

/* Open a tape that is still being written: read into memory reserved once
** with room to grow (pages past what was read cost nothing). */
int ht_reader_open_follow(HtReader **out, const char *path, char *err, size_t errlen)
{
  *out = NULL;
  struct stat sb;
  int fd = reader_open_file(path, &sb, err, errlen);
  if (fd < 0) return fd;
  size_t need = (size_t)sb.st_size + ((size_t)64 << 20), maplen;
  void *m = follow_reserve(need > HT_READER_FOLLOW_MAX ? need : HT_READER_FOLLOW_MAX, need,
                           &maplen);
  if (!m) {
    close(fd);
    snprintf(err, errlen, "cannot reserve memory to follow it: %s", strerror(errno));
    return HEAPTAPE_E_IO;
  }
  HtReader *r = calloc(1, sizeof(*r));
  if (!r) {
    munmap(m, maplen);
    close(fd);
    snprintf(err, errlen, "out of memory");
    return HEAPTAPE_E_NOMEM;
  }
  r->data = m;
  r->mapped = 1;
  r->maplen = maplen;
  r->follow = 1;
  r->fd = fd;
  r->size = follow_copy(r, 0, (size_t)sb.st_size);
  int rc = reader_init(r, err, errlen);
  if (rc) { ht_reader_close(r); return rc; }
  r->st.truncated_bytes = r->size - r->scan_off;
  *out = r;
  return 0;
}

/* Take in the whole packets a followed tape gained since the last poll. */
int ht_reader_poll(HtReader *r)
{
  if (!r->follow) return 0;
  struct stat sb;
  if (fstat(r->fd, &sb)) return HEAPTAPE_E_IO;
  size_t size = (uint64_t)sb.st_size > r->maplen ? r->maplen : (size_t)sb.st_size;
  /* From the first byte of no whole packet: the recorder may cut a partial
  ** packet back and write others in its place. The header too: finalisation
  ** marks it (symbols appended, the version) in place. */
  size_t from = r->scan_off < r->size ? r->scan_off : r->size;
  if (size > from) size = follow_copy(r, from, size);
  if (size >= r->hdr_len) follow_copy(r, 0, r->hdr_len);
  int cut = size < r->size;
  if (cut) {  /* cut back (an exec that failed, or a partial packet before
              ** symbols were appended): forget what went */
    size_t k = r->next_pk;
    for (size_t i = r->next_pk; i < r->npk; i++)
      if (r->pk[i].off + HT_PHEAD_SIZE + r->pk[i].blen <= size) r->pk[k++] = r->pk[i];
    r->npk = k;
    r->size = size;
    if (r->scan_off > size) r->scan_off = size;
  }
  if (size == r->size && (!cut || r->scan_off >= size)) return 0;
  /* Packets already opened are done with: the index keeps only the rest. */
  memmove(r->pk, r->pk + r->next_pk, (r->npk - r->next_pk) * sizeof(PacketRef));
  r->npk -= r->next_pk;
  r->next_pk = 0;
  r->id_budget += size - r->size;
  r->size = size;
  r->st.file_bytes = size;
  uint64_t end = r->st.end_ns;
  r->st.end_ns = 0;  /* (the scan sets it from this part of the tape) */
  int rc = reader_scan(r, r->scan_off);
  if (r->st.end_ns < end) r->st.end_ns = end;
  r->st.truncated_bytes = r->size - r->scan_off;
  return rc ? rc : 1;
}

/* Packets of a followed tape opened after one with a larger first number. */
uint64_t ht_reader_reordered(const HtReader *r) { return r->reordered; }

/* Hold back events after tape time ts. */
void ht_reader_hold(HtReader *r, uint64_t ts) { r->hold_ts = ts; }

/* Release the reader and everything it owns. */
void ht_reader_close(HtReader *r)
{
  if (!r) return;
  for (size_t i = 0; i < r->nheap; i++) cursor_free(r, r->heap[i]);
  free(r->heap);
  for (size_t i = 0; i < r->nth; i++) {
    free(r->th[i]->local);
    free(r->th[i]);
  }
  free(r->th);
  ht_map_free(&r->thmap);
  if (r->names_thread & 1) pthread_join(r->names_thr, NULL);
  if (r->names_thread & 2) pthread_join(r->stacks_thr, NULL);
  free(r->nodes);
  free(r->nhash);
  free(r->agg);
  free(r->snap_off);
  free(r->stk_off);
  free(r->index_own);
  free(r->scratch);
  for (size_t i = 0; i < r->nmods; i++) free(r->mods[i].path);
  free(r->mods);
  for (size_t i = 0; i < r->nstrs; i++) free(r->strs[i]);
  free(r->strs);
  ht_map_free(&r->strmap);
  free(r->symtab);
  free(r->syms);
  ht_map_free(&r->symmap);
  free(r->locs);
  ht_map_free(&r->locmap);
  free(r->pk);
  ht_sealread_stop(r, 1);
  free(r->dict_off);
  free(r->acc_off);
  free(r->hdr_exe); free(r->hdr_argv); free(r->hdr_fe);
  ZSTD_freeDCtx(r->zd);
  if (r->mapped) munmap((void *)r->data, r->maplen ? r->maplen : r->size);
  if (r->follow) close(r->fd);
  free(r);
}

const HtHeader *ht_reader_header(const HtReader *r) { return &r->hdr; }
const HtReadStats *ht_reader_stats(const HtReader *r) { return &r->st; }
int ht_reader_sealed(const HtReader *r) { return r->sealed; }

/* The tape's bytes, header first. */
const uint8_t *ht_reader_bytes(const HtReader *r, size_t *hdrlen)
{
  *hdrlen = r->hdr_len;
  return r->data;
}

/* Whole DICT packet i. */
const uint8_t *ht_reader_dict_packet(const HtReader *r, size_t i, size_t *len)
{
  if (2 * i >= r->ndict) return NULL;
  *len = (size_t)r->dict_off[2 * i + 1];
  return r->data + r->dict_off[2 * i];
}

/* ACCESS packets: how many, and the accesses they announce. */
size_t ht_reader_access_count(const HtReader *r, uint64_t *accesses)
{
  if (accesses) *accesses = r->acc_events;
  return r->nacc;
}

/* Whole ACCESS packet i (header and stored body, as on the tape). */
const uint8_t *ht_reader_access_whole(const HtReader *r, size_t i, size_t *len)
{
  if (i >= r->nacc) return NULL;
  const uint8_t *h = r->data + r->acc_off[i];
  *len = HT_PHEAD_SIZE + (size_t)ht_ru32(h + 8);
  return h;
}

uint64_t ht_reader_time_zero(const HtReader *r)
{
  return r->ts_base;
}

/* Body of ACCESS packet i (decompressed into *own when needed), its header
** fields in *pk; NULL past the end or when the body is damaged. */
const uint8_t *ht_reader_access_packet(HtReader *r, size_t i, HtPacketInfo *pk,
                                       uint8_t **own)
{
  *own = NULL;
  if (i >= r->nacc) return NULL;
  const uint8_t *h = r->data + r->acc_off[i];
  /* Sealed tapes before version 7 kept the journal's times: from its T0
  ** when the header has one (else they stay off by the journal's zero). */
  uint64_t base = r->sealed && r->hdr.version < HT_VERSION_SEALED_COLZ ? r->hdr.clock_start
                                                                      : r->ts_base;
  *pk = (HtPacketInfo){
    .off = r->acc_off[i], .rawlen = ht_ru32(h + 12), .tid = ht_ru32(h + 20),
    .seq0 = ht_ru64(h + 24), .seq1 = ht_ru64(h + 32),
    .ts0 = ht_ru64(h + 40) > base ? ht_ru64(h + 40) - base : 0,
    .nev = ht_ru32(h + 48),
  };
  return ht_reader_body(r->zd, h + HT_PHEAD_SIZE, ht_ru32(h + 8), pk->rawlen, h[5], own);
}

/* -- Queries -------------------------------------------------------------- */

/* Frame value of a stack node. */
uint64_t ht_reader_stack_frame(const HtReader *r, uint32_t stack)
{
  stacks_need(r);
  return stack && stack < r->nnodes ? r->nodes[stack].frame : 0;
}

/* Parent node of a stack node. */
uint32_t ht_reader_stack_parent(const HtReader *r, uint32_t stack)
{
  stacks_need(r);
  return stack && stack < r->nnodes ? r->nodes[stack].parent : 0;
}

/* Frames of a stack, innermost first. */
size_t ht_reader_stack_frames(const HtReader *r, uint32_t stack, uint64_t *out,
                              size_t max)
{
  stacks_need(r);
  size_t n = 0;
  for (; stack && stack < r->nnodes && n < max; stack = r->nodes[stack].parent)
    out[n++] = r->nodes[stack].frame;
  return n;
}

/* Frames of the stack a node ends. */
uint32_t ht_reader_stack_depth(const HtReader *r, uint32_t stack)
{
  stacks_need(r);
  return stack && stack < r->nnodes ? r->nodes[stack].depth : 0;
}

/* Highest stack node id (before a sealed tape's table is decoded, its
** packets' headers say: a packet that holds other than it says is damaged
** and gives no more). */
uint32_t ht_reader_stack_count(const HtReader *r)
{
  if (r->nstk) return r->stk_nodes < UINT32_MAX - 1 ? (uint32_t)r->stk_nodes : UINT32_MAX - 1;
  return r->nnodes - 1;
}

/* Free a sealed tape's AGG body once its figures are loaded. */
void ht_reader_agg_release(HtReader *r)
{
  free(r->agg);
  r->agg = NULL;
  r->agglen = r->aggcap = 0;
}

/* The AGG body with its snapshot fields (version 10: the SNAPS packets,
** decompressed onto its end the first time they are asked for). NULL when
** the tape has no AGG or a piece is damaged, missing or out of place. */
const uint8_t *ht_reader_agg_snaps(HtReader *r, size_t *len)
{
  *len = 0;
  if (!r->agg || r->snaps_state < 0) return NULL;
  if (r->snaps_state == 0 && r->nsnap) {
    size_t need = r->agglen + 1;
    for (size_t i = 0; i < r->nsnap; i++) need += ht_ru32(r->data + r->snap_off[i] + 12);
    uint8_t *grown = need > r->aggcap ? ht_huge_realloc(r->agg, r->agglen, need) : r->agg;
    if (!grown) return NULL;  /* (a later call may find the room) */
    r->agg = grown;
    r->aggcap = need > r->aggcap ? need : r->aggcap;
    size_t at = r->agglen;
    for (size_t i = 0; i < r->nsnap && r->snaps_state == 0; i++) {
      const uint8_t *h = r->data + r->snap_off[i];
      PacketRef pr = {.off = r->snap_off[i], .flags = h[5], .blen = ht_ru32(h + 8),
                      .rawlen = ht_ru32(h + 12), .seq0 = ht_ru64(h + 24),
                      .seq1 = ht_ru64(h + 32)};
      if (pr.seq0 != at || pr.seq1 - pr.seq0 != pr.rawlen ||
          !packet_body_into(r, h, &pr, r->agg + at))
        r->snaps_state = -1;
      at += pr.rawlen;
    }
    if (r->snaps_state < 0) return NULL;
    r->agglen = at;
  }
  r->snaps_state = 1;
  *len = r->agglen;
  return r->agg;
}

/* Changes whenever the tape names more (caches of frame names check it). */
uint64_t ht_reader_names_gen(const HtReader *r)
{
  dicts_need(r);
  return r->names_gen;
}

/* Inline chain of a native address. */
size_t ht_reader_symbol(const HtReader *r, uint64_t ip, const HtSymbol **out)
{
  dicts_need(r);
  uint64_t *i = ht_map_get(&r->symmap, ip);
  if (!i) { *out = NULL; return 0; }
  const SymEntry *e = &r->symtab[*i - 1];
  *out = e->n ? &r->syms[e->first] : NULL; /* a symbol may have no frames */
  return e->n;
}

/* Symbol coverage of the frame addresses met (ht_reader_symbol_cover). */
typedef struct Cover {
  const HtReader *r;
  HtMap seen;                /* addresses met */
  uint64_t addrs, missing;
  int oom;
} Cover;

static void cover_frame(void *ctx, uint64_t v)
{
  Cover *c = ctx;
  if (c->oom || HT_FRAME_IS_LOC(v) || ht_map_get(&c->seen, HT_FRAME_IP(v))) return;
  if (ht_map_put(&c->seen, HT_FRAME_IP(v), 1)) { c->oom = 1; return; }
  const HtSymbol *sym;
  c->addrs++;
  if (!ht_reader_symbol(c->r, HT_FRAME_IP(v), &sym)) c->missing++;
}

/* The native addresses on the tape's stacks, each once (*addrs), and how
** many have no symbol (*missing). A sealed tape's stack table not yet
** decoded is read as it stands, packet by packet, not built: `stats` asks
** this and nothing else of it. 0, or -1 out of memory. */
int ht_reader_symbol_cover(HtReader *r, uint64_t *addrs, uint64_t *missing)
{
  Cover c = {.r = r};
  if (ht_map_init(&c.seen, 1024)) return -1;
  uint32_t next = 1;
  int whole = 1;
  for (size_t i = 0; i < r->nstk && whole && !c.oom; i++) {
    PacketRef pr = packet_ref(r, r->stk_off[i]);
    const uint8_t *b = scan_body(r, r->data + pr.off, &pr);
    whole = b && !ht_sealstacks_walk(b, b + pr.rawlen, &next, cover_frame, &c);
  }
  if (r->nstk) {  /* (a followed tape's polls keep theirs: it has none waiting) */
    free(r->scratch);
    r->scratch = NULL;
    r->scratchcap = 0;
  }
  if (!whole) {  /* the table's way, which counts the damage */
    ht_map_clear(&c.seen);
    c.addrs = c.missing = 0;
    ht_reader_stacks_load(r);
  }
  if (!r->nstk)
    for (uint32_t id = 1; id < r->nnodes && !c.oom; id++) cover_frame(&c, r->nodes[id].frame);
  ht_map_free(&c.seen);
  *addrs = c.addrs;
  *missing = c.missing;
  return c.oom ? -1 : 0;
}

/* Runtime location by id. */
const HtLocation *ht_reader_location(const HtReader *r, uint64_t id)
{
  dicts_need(r);
  uint64_t *i = ht_map_get(&r->locmap, id);
  return i ? &r->locs[*i - 1] : NULL;
}

/* Whether any runtime location is Python's or Ruby's. */
int ht_reader_rtlocs(const HtReader *r)
{
  dicts_need(r);
  for (size_t i = 0; i < r->nlocs; i++)
    if (r->locs[i].kind >= HT_L_RTLOC_MIN) return 1;
  return 0;
}

/* Modules seen so far, in load order. */
size_t ht_reader_module_count(const HtReader *r) { return r->nmods; }

/* Module i: path, and its range and build id through the pointers. */
const char *ht_reader_module_info(const HtReader *r, size_t i, uint64_t *lo,
                                  uint64_t *hi, const uint8_t **build_id,
                                  size_t *build_id_len)
{
  if (i >= r->nmods) return NULL;
  const Module *m = &r->mods[i];
  *lo = m->lo;
  *hi = m->hi;
  *build_id = m->build_id;
  *build_id_len = m->build_id_len;
  return m->path;
}

/* Module containing ip, or NULL (the most recent load wins). */
const char *ht_reader_module(const HtReader *r, uint64_t ip, uint64_t *base)
{
  for (size_t i = r->nmods; i-- > 0;) {
    const Module *m = &r->mods[i];
    if (ip >= m->lo && ip < m->hi) {
      if (base) *base = m->base;
      return m->path;
    }
  }
  return NULL;
}

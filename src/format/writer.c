/* heaptape -- the tape writer: header, sealed (checksummed, compressed) packets,
** dictionary and trailer, all emitted through the caller's sink. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY          /* ZSTD_createCCtx_advanced */
#include <zstd.h>

#include "phead.h"
#include "writer.h"
#include "../base/grow.h"
#include "../base/strtab.h"
#include "../../include/heaptape.h"

struct HtWriter {
  HtSink sink;               /* where bytes go */
  void *arg;                 /* argument of sink */
  int level;                 /* zstd level, 0 = store */
  _Atomic int raw;           /* store packets uncompressed for now (ht_writer_raw) */
  int err;                   /* first error, sticky */
  ZSTD_CCtx *zc;             /* compression context, or NULL */
  uint8_t *zbuf;             /* compression output */
  size_t zcap;               /* bytes of zbuf */
  uint64_t packets;          /* packets emitted */
  uint64_t bytes;            /* bytes emitted */
  pthread_mutex_t lock;      /* serialises packet emission */
};

/* -- Sink plumbing -------------------------------------------------------- */

/* Emit bytes; latch the first failure. */
static int writer_emit(HtWriter *w, const void *p, size_t n)
{
  if (w->err) return w->err;
  if (n && w->sink(p, n, w->arg) != n) w->err = HEAPTAPE_E_IO;
  else w->bytes += n;
  return w->err;
}

/* zstd's memory straight from mmap: inside a profiled process the writer
** thread would otherwise make glibc create a malloc arena for itself (64 MiB
** of address space) on its first compression. Sizes are kept before each block. */
static void *writer_zalloc(void *opaque, size_t n)
{
  (void)opaque;
  size_t *p = mmap(NULL, n + 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  p[0] = n + 16;
  return (uint8_t *)p + 16;
}

/* Return memory of writer_zalloc. */
static void writer_zfree(void *opaque, void *q)
{
  (void)opaque;
  if (!q) return;
  size_t *p = (size_t *)((uint8_t *)q - 16);
  munmap(p, p[0]);
}

/* Create a writer; allocation happens here only. */
HtWriter *ht_writer_new(HtSink sink, void *arg, int zstd_level)
{
  HtWriter *w = calloc(1, sizeof(*w));
  if (!w) return NULL;
  w->sink = sink;
  w->arg = arg;
  w->level = zstd_level;
  pthread_mutex_init(&w->lock, NULL);
  if (zstd_level > 0) {
    w->zcap = ZSTD_compressBound(HT_PACKET_MAX);
    w->zbuf = malloc(w->zcap);
    w->zc = ZSTD_createCCtx_advanced((ZSTD_customMem){ writer_zalloc, writer_zfree, NULL });
    if (!w->zbuf || !w->zc) { ht_writer_destroy(w); return NULL; }
    ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, zstd_level);
    ZSTD_CCtx_setParameter(w->zc, ZSTD_c_checksumFlag, 0);
    ZSTD_CCtx_setParameter(w->zc, ZSTD_c_contentSizeFlag, 1);
  }
  return w;
}

/* Free the writer. */
void ht_writer_destroy(HtWriter *w)
{
  if (!w) return;
  ZSTD_freeCCtx(w->zc);
  free(w->zbuf);
  pthread_mutex_destroy(&w->lock);
  free(w);
}

int ht_writer_error(const HtWriter *w) { return w->err; }
uint64_t ht_writer_packets(const HtWriter *w) { return w->packets; }
uint64_t ht_writer_bytes(const HtWriter *w) { return w->bytes; }

/* Go on after the sink was cut back to packets/bytes (a trailer taken back). */
void ht_writer_resume(HtWriter *w, uint64_t packets, uint64_t bytes)
{
  w->packets = packets;
  w->bytes = bytes;
  w->err = 0;
}

/* Append to an in-memory tape. */
size_t ht_mem_sink(const void *data, size_t len, void *arg)
{
  HtMemTape *m = arg;
  if (ht_grow(&m->p, &m->cap, m->n + len, 1)) return 0;
  memcpy(m->p + m->n, data, len);
  m->n += len;
  return len;
}

/* -- Header --------------------------------------------------------------- */

/* Append a tag + length + bytes field. */
static uint8_t *field_bytes(uint8_t *p, unsigned tag, const void *b, size_t n)
{
  p = ht_wuleb128(p, tag);
  p = ht_wuleb128(p, n);
  return ht_wmem(p, b, n);
}

/* Append a tag + length + one or two ULEB128 values. */
static uint8_t *field_uleb(uint8_t *p, unsigned tag, uint64_t v, int two, uint64_t v2)
{
  uint8_t tmp[2 * HT_ULEB_MAX], *q = ht_wuleb128(tmp, v);
  if (two) q = ht_wuleb128(q, v2);
  return field_bytes(p, tag, tmp, (size_t)(q - tmp));
}

/* Emit the file header. */
int ht_writer_header(HtWriter *w, const HtTapeInfo *in)
{
  size_t exe = in->exe ? strlen(in->exe) : 0, argv = in->argv ? in->argv_len : 0;
  size_t fe = in->frontend ? strlen(in->frontend) : 0;
  if (exe > 4096) exe = 4096;
  if (argv > 65536) argv = 65536;
  if (fe > 64) fe = 64;
  size_t cap = HT_HEADER_FIXED + 4 + exe + argv + fe + 17 * 3 * HT_ULEB_MAX;
  uint8_t *buf = malloc(cap);
  if (!buf) return w->err = HEAPTAPE_E_NOMEM;
  uint8_t *p = ht_wmem(buf, HT_MAGIC, HT_MAGIC_LEN);
  unsigned ver = in->version ? in->version : HT_VERSION;
  p[0] = ver & 0xff; p[1] = (uint8_t)(ver >> 8);
  p[2] = in->flags & 0xff; p[3] = in->flags >> 8;
  p += 4;
  uint8_t *lenp = p;
  p += 4;
  p = field_uleb(p, HT_H_PID, in->pid, 0, 0);
  if (exe) p = field_bytes(p, HT_H_EXE, in->exe, exe);
  if (argv) p = field_bytes(p, HT_H_ARGV, in->argv, argv);
  p = field_uleb(p, HT_H_CLOCK, in->clock, 1, in->clock_res);
  p = field_uleb(p, HT_H_SAMPLE, in->sample, 0, 0);
  p = field_uleb(p, HT_H_START, in->start_ns, 0, 0);
  p = field_uleb(p, HT_H_UNWIND, in->unwind, 0, 0);
  p = field_uleb(p, HT_H_FRAMES, in->frames, 0, 0);
  if (fe) p = field_bytes(p, HT_H_FRONTEND, in->frontend, fe);
  if (in->clock_start) p = field_uleb(p, HT_H_T0, in->clock_start, 0, 0);
  if (in->late_ns) p = field_uleb(p, HT_H_LATE, in->late_ns, 0, 0);
  ht_wu32(lenp, (uint32_t)(p - lenp - 4));
  p = ht_wu32(p, (uint32_t)crc32(0, buf, (uInt)(p - buf)));
  pthread_mutex_lock(&w->lock);
  int rc = writer_emit(w, buf, (size_t)(p - buf));
  pthread_mutex_unlock(&w->lock);
  free(buf);
  return rc;
}

/* Store packets uncompressed (on) or compress them again (off): a recorder
** whose writer falls behind the program writes its backlog at the speed of
** memory, not of zstd. */
void ht_writer_raw(HtWriter *w, int on)
{
  atomic_store_explicit(&w->raw, on, memory_order_relaxed);
}

/* -- Packets -------------------------------------------------------------- */

/* Emit a packet from its parts, with the stream's stack generation. */
static int writer_packet(HtWriter *w, unsigned kind, unsigned gen, uint32_t pid,
                         uint32_t tid, uint64_t seq0, uint64_t seq1, uint64_t ts0,
                         uint32_t nev, const uint8_t *body, size_t len)
{
  pthread_mutex_lock(&w->lock);
  if (len > HT_PACKET_MAX) {
    if (!w->err) w->err = HEAPTAPE_E_MISUSE;
    pthread_mutex_unlock(&w->lock);
    return HEAPTAPE_E_MISUSE;
  }
  const uint8_t *out = body;
  size_t olen = len;
  unsigned flags = 0;
  if (w->zc && len >= 64 && !atomic_load_explicit(&w->raw, memory_order_relaxed)) {
    size_t z = ZSTD_compress2(w->zc, w->zbuf, w->zcap, body, len);
    if (!ZSTD_isError(z) && z < len) { out = w->zbuf; olen = z; flags = HT_PF_ZSTD; }
  }
  uint8_t h[HT_PHEAD_SIZE];
  HtPhead f = {kind, flags, gen, (uint32_t)olen, (uint32_t)len, pid, tid, seq0, seq1, ts0, nev};
  uint8_t *p = ht_phead_put(h, &f);
  uLong crc = crc32(0, h, (uInt)(p - h));
  crc = crc32(crc, out, (uInt)olen);
  ht_wu32(p, (uint32_t)crc);
  int rc = writer_emit(w, h, sizeof(h));
  if (!rc) rc = writer_emit(w, out, olen);
  if (!rc) w->packets++;
  pthread_mutex_unlock(&w->lock);
  return rc;
}

/* Emit any packet from its parts: compress, checksum, write. */
int ht_writer_packet(HtWriter *w, unsigned kind, uint32_t pid, uint32_t tid,
                     uint64_t seq0, uint64_t seq1, uint64_t ts0, uint32_t nev,
                     const uint8_t *body, size_t len)
{
  return writer_packet(w, kind, 0, pid, tid, seq0, seq1, ts0, nev, body, len);
}

/* Seal the body of s as an EVENTS packet, emit it, and reset s. */
int ht_writer_stream(HtWriter *w, HtStream *s)
{
  int rc = 0;
  if (s->p != s->buf)
    /* A packet without events (only STACK/TIME records) sorts right after
    ** the thread's last event: seq0 = seq1 = that event's number. */
    rc = writer_packet(w, HT_P_EVENTS, s->gen0, s->pid, s->tid,
                          s->nev ? s->seq0 : s->seq_prev, s->seq_prev, s->ts0,
                          s->nev, s->buf, (size_t)(s->p - s->buf));
  ht_stream_reset(s);
  return rc;
}

/* Emit the trailer packet. */
int ht_writer_trailer(HtWriter *w, const HtTrailer *t)
{
  uint8_t body[8 * 3 * HT_ULEB_MAX], *p = body;
  pthread_mutex_lock(&w->lock);
  uint64_t packets = w->packets, bytes = w->bytes;
  pthread_mutex_unlock(&w->lock);
  p = field_uleb(p, HT_T_EVENTS, t->events, 0, 0);
  p = field_uleb(p, HT_T_LOST, t->lost, 0, 0);
  p = field_uleb(p, HT_T_PACKETS, packets, 0, 0);
  p = field_uleb(p, HT_T_BYTES, bytes, 0, 0);
  p = field_uleb(p, HT_T_END, t->end_ns, 0, 0);
  if (t->status != UINT64_MAX) p = field_uleb(p, HT_T_STATUS, t->status, 0, 0);
  return ht_writer_packet(w, HT_P_TRAILER, 0, 0, 0, 0, t->end_ns, 0, body,
                          (size_t)(p - body));
}

/* -- Dictionary ----------------------------------------------------------- */

struct HtDict {
  uint8_t *buf;              /* pending DICT records */
  size_t len, cap;           /* bytes used, allocated */
  HtStrtab strs;             /* strings declared, by id */
  uint32_t id;               /* dictionary id, scope of string ids */
};

/* Name this dictionary. */
void ht_dict_set_id(HtDict *d, uint32_t id) { d->id = id; }

/* Create an empty dictionary builder. */
HtDict *ht_dict_new(void)
{
  HtDict *d = calloc(1, sizeof(*d));
  if (d && ht_strtab_init(&d->strs, 64)) { free(d); return NULL; }
  return d;
}

/* Free the builder and its strings. */
void ht_dict_destroy(HtDict *d)
{
  if (!d) return;
  ht_strtab_free(&d->strs);
  free(d->buf);
  free(d);
}

/* Reserve n bytes at the end of the pending records. */
static uint8_t *dict_need(HtDict *d, size_t n)
{
  if (ht_grow(&d->buf, &d->cap, d->len + n, 1)) return NULL;
  return d->buf + d->len;
}

/* Intern a string; returns id + 1, 0 for NULL, -1 when out of memory. */
int64_t ht_dict_str(HtDict *d, const char *s)
{
  if (!s) return 0;
  size_t n = strlen(s);
  if (n > 65536) n = 65536;
  /* Room for the record first, so that a string is never interned without it. */
  if (!dict_need(d, 1 + 2 * HT_ULEB_MAX + n)) return -1;
  int added;
  int64_t id = ht_strtab_intern(&d->strs, s, &added);
  if (id < 0) return -1;
  if (added) {
    uint8_t *p = d->buf + d->len;
    *p++ = HT_D_STR;
    p = ht_wuleb128(p, (uint64_t)id);
    p = ht_wuleb128(p, n);
    p = ht_wmem(p, s, n);
    d->len = (size_t)(p - d->buf);
  }
  return id + 1;
}

/* Declare the symbol of a native address; frames innermost first. */
int ht_dict_sym(HtDict *d, uint64_t addr, const HtSymFrame *f, size_t n)
{
  if (n > 256) n = 256;
  uint8_t *p = dict_need(d, 1 + 2 * HT_ULEB_MAX + n * 3 * HT_ULEB_MAX);
  if (!p) return HEAPTAPE_E_NOMEM;
  *p++ = HT_D_SYM;
  p = ht_wuleb128(p, addr);
  p = ht_wuleb128(p, n);
  for (size_t i = 0; i < n; i++) {
    p = ht_wuleb128(p, f[i].func);
    p = ht_wuleb128(p, f[i].file);
    p = ht_wuleb128(p, f[i].line);
  }
  d->len = (size_t)(p - d->buf);
  return 0;
}

/* Declare a runtime location id. */
int ht_dict_loc(HtDict *d, uint64_t id, unsigned lkind, uint64_t name,
                uint64_t file, uint64_t line, uint64_t aux)
{
  uint8_t *p = dict_need(d, 2 + 5 * HT_ULEB_MAX);
  if (!p) return HEAPTAPE_E_NOMEM;
  *p++ = HT_D_LOC;
  p = ht_wuleb128(p, id);
  *p++ = (uint8_t)lkind;
  p = ht_wuleb128(p, name);
  p = ht_wuleb128(p, file);
  p = ht_wuleb128(p, line);
  p = ht_wuleb128(p, aux);
  d->len = (size_t)(p - d->buf);
  return 0;
}

/* Length of the DICT record at p (records are self-delimiting). */
static size_t dict_reclen(const uint8_t *p, const uint8_t *end)
{
  const uint8_t *q = p + 1;
  uint64_t a = 0, n = 0;
  switch (*p) {
  case HT_D_STR:
    ht_ruleb128(&q, end, &a); ht_ruleb128(&q, end, &n); q += n; break;
  case HT_D_SYM:
    ht_ruleb128(&q, end, &a); ht_ruleb128(&q, end, &n);
    for (uint64_t i = 0; i < 3 * n; i++) ht_ruleb128(&q, end, &a);
    break;
  default: /* HT_D_LOC */
    ht_ruleb128(&q, end, &a); q++;
    for (int i = 0; i < 4; i++) ht_ruleb128(&q, end, &a);
    break;
  }
  return (size_t)(q - p);
}

/* Emit pending records as DICT packets of at most HT_PACKET_DEFAULT bytes. */
int ht_dict_flush(HtDict *d, HtWriter *w, uint32_t pid)
{
  size_t start = 0, pos = 0;
  while (pos < d->len) {
    size_t n = dict_reclen(d->buf + pos, d->buf + d->len);
    if (pos + n - start > HT_PACKET_DEFAULT && pos > start) {
      int rc = ht_writer_packet(w, HT_P_DICT, pid, d->id, 0, 0, 0, 0,
                                d->buf + start, pos - start);
      if (rc) return rc;
      start = pos;
    }
    pos += n;
  }
  int rc = 0;
  if (pos > start)
    rc = ht_writer_packet(w, HT_P_DICT, pid, d->id, 0, 0, 0, 0, d->buf + start,
                          pos - start);
  d->len = 0;
  return rc;
}

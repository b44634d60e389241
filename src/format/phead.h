/* heaptape -- a packet's header (format.h: phead), written the same by every
** writer: the recorder's (writer.c), the sealer (sealw.c) and the Valgrind
** tool (src/vgtool, no libc: this header needs none). */
#ifndef HT_PHEAD_H
#define HT_PHEAD_H

#include "../base/varint.h"
#include "format.h"

/* The fields of a packet header but its checksum. */
typedef struct HtPhead {
  unsigned kind, flags, gen;  /* HT_P_*, HT_PF_*, stack generation (16 bits) */
  uint32_t blen, rawlen;      /* stored body bytes, after decompression */
  uint32_t pid, tid;          /* stream */
  uint64_t seq0, seq1, ts0;   /* sequence range, first timestamp */
  uint32_t nev;               /* events */
} HtPhead;

/* Write f into h (HT_PHEAD_SIZE bytes); returns where the CRC32 of the
** header's bytes before it, then of the body, goes (its last 4 bytes). */
HT_INLINE uint8_t *ht_phead_put(uint8_t *h, const HtPhead *f)
{
  uint8_t *p = ht_wmem(h, HT_PMAGIC, 4);
  *p++ = (uint8_t)f->kind;
  *p++ = (uint8_t)f->flags;
  *p++ = (uint8_t)f->gen; *p++ = (uint8_t)(f->gen >> 8);
  p = ht_wu32(p, f->blen);
  p = ht_wu32(p, f->rawlen);
  p = ht_wu32(p, f->pid);
  p = ht_wu32(p, f->tid);
  p = ht_wu64(p, f->seq0);
  p = ht_wu64(p, f->seq1);
  p = ht_wu64(p, f->ts0);
  return ht_wu32(p, f->nev);
}

#endif

/* heaptape -- ULEB128 and zigzag coding over raw pointers.
** Writers reserve the worst case first (HT_ULEB_MAX per value) and never check. */
#ifndef HT_VARINT_H
#define HT_VARINT_H

#include <string.h>
#include "ht_def.h"

#define HT_ULEB_MAX 10 /* bytes of the longest 64-bit ULEB128 */

/* Write v as ULEB128 at p; return the byte after it. */
HT_INLINE uint8_t *ht_wuleb128(uint8_t *p, uint64_t v)
{
  while (v >= 0x80) { *p++ = (uint8_t)(v | 0x80); v >>= 7; }
  *p++ = (uint8_t)v;
  return p;
}

/* Map a signed delta onto small unsigned numbers: 0,-1,1,-2 -> 0,1,2,3. */
HT_INLINE uint64_t ht_zigzag(int64_t v)
{
  return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* Inverse of ht_zigzag. */
HT_INLINE int64_t ht_unzigzag(uint64_t u)
{
  return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/* Copy n bytes to p; return the byte after them. */
HT_INLINE uint8_t *ht_wmem(uint8_t *p, const void *q, size_t n)
{
  memcpy(p, q, n);
  return p + n;
}

/* Write a little-endian 32-bit value. */
HT_INLINE uint8_t *ht_wu32(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
  return p + 4;
}

/* Write a little-endian 64-bit value. */
HT_INLINE uint8_t *ht_wu64(uint8_t *p, uint64_t v)
{
  p = ht_wu32(p, (uint32_t)v);
  return ht_wu32(p, (uint32_t)(v >> 32));
}

/* Read a little-endian 32-bit value. */
HT_INLINE uint32_t ht_ru32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* Read a little-endian 64-bit value. */
HT_INLINE uint64_t ht_ru64(const uint8_t *p)
{
  return (uint64_t)ht_ru32(p) | (uint64_t)ht_ru32(p + 4) << 32;
}

/* Read a ULEB128 from [*pp, end); 0 on success, -1 if it runs past end or
** past 64 bits. Advances *pp only on success. */
HT_INLINE int ht_ruleb128(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
  const uint8_t *p = *pp;
  if (HT_LIKELY(p < end && *p < 0x80)) { *out = *p; *pp = p + 1; return 0; }
  uint64_t v = 0;
  unsigned shift = 0;
  for (;;) {
    if (p >= end || shift > 63) return -1;
    uint8_t b = *p++;
    if (shift == 63 && b > 1) return -1;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
    shift += 7;
  }
  *out = v; *pp = p;
  return 0;
}

#endif

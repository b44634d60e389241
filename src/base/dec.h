/* heaptape -- unsigned integers in decimal, written by hand: the tools
** print millions of them (ops lines, the HTML page's data) and fprintf's
** format parsing was most of that time. */
#ifndef HT_DEC_H
#define HT_DEC_H
#include <string.h>
#include "ht_def.h"

#define HT_DEC_MAX 20        /* digits of the largest uint64_t */

/* v in decimal at p (room for HT_DEC_MAX): the end of its digits. */
HT_INLINE char *ht_dec_u64(char *p, uint64_t v)
{
  static const char pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";
  static const uint64_t p10[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
    10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};
  /* Digits from the bit length (1233 / 4096 ~ log10 2) and one comparison:
  ** a division by 10 a digit, each waiting on the one before, was more than
  ** half of `heaptape ops`'s formatting. */
  unsigned t = ((64 - (unsigned)__builtin_clzll(v | 1)) * 1233) >> 12;
  unsigned n = t + (v >= p10[t]);
  n += !n;
  char *q = p + n;
  while (v >= 100) {  /* two digits a step */
    q -= 2;
    memcpy(q, pairs + 2 * (v % 100), 2);
    v /= 100;
  }
  if (v >= 10) memcpy(q - 2, pairs + 2 * v, 2);
  else q[-1] = (char)('0' + v);
  return p + n;
}
#endif

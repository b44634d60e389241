/* heaptape -- FNV-1a, the one string hash of the tree (interners, colours).
** Header-only: the Lua module uses it too without linking anything. */
#ifndef HT_HASH_H
#define HT_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The seed the tree has always used (the published 64-bit offset basis has
** one more digit, 14695981039346656037); kept so that colours and tables
** stay as they were. Any seed serves these tables. */
#define HT_FNV_SEED  1469598103934665603ULL
#define HT_FNV_PRIME 1099511628211ULL        /* FNV-1a 64-bit prime */

/* FNV-1a of the string s folded into h (s may be NULL: h unchanged). */
static inline uint64_t ht_fnv1a_fold(uint64_t h, const char *s)
{
  if (s) for (; *s; s++) h = (h ^ (uint8_t)*s) * HT_FNV_PRIME;
  return h;
}

/* FNV-1a of the string s. */
static inline uint64_t ht_fnv1a(const char *s) { return ht_fnv1a_fold(HT_FNV_SEED, s); }

#endif

/* heaptape -- a sealed block's freed addresses by size class (version 9):
** every address the block knows freed, the latest first in each class. An
** ALLOC at one of its class's latest HT_SEAL_CRING is named by its rank
** there (glibc hands a class's latest freed chunk out first). Versions 7
** and 8 kept only each class's latest 64 pushes (a ring): a collector
** freeing thousands of one class at once lost all but 64 of them. The
** sealer and the reader keep the same lists, entry for entry. */
#ifndef HT_SEALCLASS_H
#define HT_SEALCLASS_H
#include "format.h"

typedef struct HtSealClasses {
  uint64_t addr[HT_SEAL_BLOCK];   /* the block's freed addresses, in order */
  uint32_t older[HT_SEAL_BLOCK];  /* entry -> the next older of its class + 1 */
  uint32_t head[HT_SEAL_CLASSES]; /* class -> its latest entry + 1 (0: none) */
  uint32_t gen[HT_SEAL_CLASSES];  /* class -> the block head[] is of */
  uint32_t n;                     /* entries used */
  uint32_t cur;                   /* the block (zeroed memory: call reset first) */
} HtSealClasses;

/* Empty lists for the next block. */
HT_INLINE void ht_seal_classes_reset(HtSealClasses *s)
{
  s->n = 0;
  s->cur++;
}

/* Add a freed address of class k; 0, or -1 when the block holds more frees
** than events (a damaged block). */
HT_INLINE int ht_seal_classes_push(HtSealClasses *s, unsigned k, uint64_t addr)
{
  if (s->n >= HT_SEAL_BLOCK) return -1;
  if (s->gen[k] != s->cur) { s->gen[k] = s->cur; s->head[k] = 0; }
  s->addr[s->n] = addr;
  s->older[s->n] = s->head[k];
  s->head[k] = ++s->n;
  return 0;
}

/* The rank of addr among class k's latest HT_SEAL_CRING (HT_SEAL_CRING if
** not there). */
HT_INLINE uint64_t ht_seal_classes_rank(const HtSealClasses *s, unsigned k, uint64_t addr)
{
  if (s->gen[k] != s->cur) return HT_SEAL_CRING;
  uint32_t e = s->head[k];
  for (uint64_t r = 0; e && r < HT_SEAL_CRING; r++, e = s->older[e - 1])
    if (s->addr[e - 1] == addr) return r;
  return HT_SEAL_CRING;
}

/* Take the entry of rank r out of class k into *addr: 0, or -1 when the
** class has no such entry. */
HT_INLINE int ht_seal_classes_take(HtSealClasses *s, unsigned k, uint64_t r, uint64_t *addr)
{
  if (s->gen[k] != s->cur || r >= HT_SEAL_CRING) return -1;
  uint32_t *link = &s->head[k];
  for (; *link && r; r--) link = &s->older[*link - 1];
  if (!*link) return -1;
  uint32_t e = *link - 1;
  *addr = s->addr[e];
  *link = s->older[e];
  return 0;
}
#endif

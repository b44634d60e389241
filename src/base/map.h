/* heaptape -- an open-addressing hash map from uint64_t keys to uint64_t values.
** Linear probing over key/value pairs (one cache line per probe), load at most
** one half, backward-shift deletion; key 0 is stored out of band. */
#ifndef HT_MAP_H
#define HT_MAP_H

#include "ht_def.h"

typedef struct HtMapSlot {
  uint64_t key;              /* 0 = empty */
  uint64_t val;              /* value */
} HtMapSlot;

typedef struct HtMap {
  HtMapSlot *slot;           /* slots, NULL until the first insert */
  size_t mask;               /* slots - 1 (a power of two) */
  size_t count;              /* keys stored, the zero key included */
  int has_zero;              /* whether key 0 is present */
  uint64_t zero_val;         /* value of key 0 */
} HtMap;

/* Mix a key into a well-spread hash. */
HT_INLINE uint64_t ht_hash64(uint64_t x)
{
  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

/* Zeroed memory for big tables (mmap + transparent huge pages), and its release. */
void *ht_table_alloc(size_t bytes) HT_HIDDEN;
void ht_table_free(void *p, size_t bytes) HT_HIDDEN;
/* Grown to bytes, zero past old: in place or remapped if big; NULL on OOM. */
void *ht_table_grow(void *p, size_t old, size_t bytes) HT_HIDDEN;

int ht_map_init(HtMap *m, size_t hint) HT_HIDDEN;   /* 0 or -1 (OOM) */
void ht_map_free(HtMap *m) HT_HIDDEN;
/* Room for keys in all, made at once; 0 or -1 (OOM, the map unchanged). */
int ht_map_reserve(HtMap *m, size_t keys) HT_HIDDEN;
/* Remove every key, keeping the slots. */
void ht_map_clear(HtMap *m) HT_HIDDEN;
/* Insert or overwrite; 0 or -1 (OOM). */
int ht_map_put(HtMap *m, uint64_t key, uint64_t val) HT_HIDDEN;
/* Remove key; returns 1 if it was present (its value in *val if non-NULL). */
int ht_map_del(HtMap *m, uint64_t key, uint64_t *val) HT_HIDDEN;
/* Iterate: start with *it = 0; returns 0 at the end. */
int ht_map_next(const HtMap *m, size_t *it, uint64_t *key, uint64_t *val) HT_HIDDEN;

/* Pointer to the value of key, or NULL. Valid until the next insert. */
HT_INLINE uint64_t *ht_map_get(const HtMap *m, uint64_t key)
{
  if (HT_UNLIKELY(key == 0)) return m->has_zero ? (uint64_t *)&m->zero_val : NULL;
  if (HT_UNLIKELY(!m->slot)) return NULL;
  for (size_t i = ht_hash64(key) & m->mask;; i = (i + 1) & m->mask) {
    HtMapSlot *s = &m->slot[i];
    if (s->key == key) return &s->val;
    if (s->key == 0) return NULL;
  }
}

/* Start loading the first slot key would probe (for lookahead pipelines). */
HT_INLINE void ht_map_prefetch(const HtMap *m, uint64_t key)
{
  if (m->slot) __builtin_prefetch(&m->slot[ht_hash64(key) & m->mask]);
}

#endif

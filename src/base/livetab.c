/* heaptape -- live-block table: open addressing over address-keyed slots with
** the payload inline, load at most one half, backward-shift deletion. */
#include <stdlib.h>
#include "livetab.h"

/* Key of slot i. */
static inline uint64_t *live_key(const HtLive *t, size_t i)
{
  return (uint64_t *)(t->slot + i * t->stride);
}

/* Set up an empty table. */
void ht_live_init(HtLive *t, size_t payload)
{
  memset(t, 0, sizeof(*t));
  t->payload = payload;
  t->stride = (8 + payload + 7) & ~(size_t)7;
}

/* Free the slots. */
void ht_live_free(HtLive *t)
{
  if (t->slot) ht_table_free(t->slot, (t->mask + 1) * t->stride);
  t->slot = NULL;
  t->mask = 0;
  t->count = 0;
  t->has_zero = 0;
}

/* Double the table (or create it). */
static int live_grow(HtLive *t)
{
  size_t n = t->slot ? (t->mask + 1) * 2 : 64;
  uint8_t *s = ht_table_alloc(n * t->stride);
  if (!s) return -1;
  for (size_t i = 0; t->slot && i <= t->mask; i++) {
    uint64_t k = *live_key(t, i);
    if (!k) continue;
    size_t j = ht_live_home(t, k) & (n - 1);
    while (*(uint64_t *)(s + j * t->stride)) j = (j + 1) & (n - 1);
    memcpy(s + j * t->stride, live_key(t, i), t->stride);
  }
  if (t->slot) ht_table_free(t->slot, (t->mask + 1) * t->stride);
  t->slot = s;
  t->mask = n - 1;
  return 0;
}

/* Payload of addr, or NULL. */
void *ht_live_get(const HtLive *t, uint64_t addr)
{
  if (HT_UNLIKELY(!addr)) return t->has_zero ? (void *)t->zero : NULL;
  if (!t->slot) return NULL;
  for (size_t i = ht_live_home(t, addr) & t->mask;; i = (i + 1) & t->mask) {
    uint64_t *k = live_key(t, i);
    if (*k == addr) return k + 1;
    if (!*k) return NULL;
  }
}

/* Payload slot for addr, inserting it if absent. */
void *ht_live_put(HtLive *t, uint64_t addr, int *existed)
{
  if (HT_UNLIKELY(!addr)) {
    *existed = t->has_zero;
    if (!t->has_zero) { memset(t->zero, 0, sizeof(t->zero)); t->count++; }
    t->has_zero = 1;
    return t->zero;
  }
  if ((!t->slot || (t->count + 1) * 2 > t->mask + 1) && live_grow(t)) return NULL;
  size_t i = ht_live_home(t, addr) & t->mask;
  for (;; i = (i + 1) & t->mask) {
    uint64_t *k = live_key(t, i);
    if (*k == addr) { *existed = 1; return k + 1; }
    if (!*k) {
      *k = addr;
      memset(k + 1, 0, t->payload);
      t->count++;
      *existed = 0;
      return k + 1;
    }
  }
}

/* Remove addr, shifting later members of its cluster back. */
int ht_live_del(HtLive *t, uint64_t addr, void *out)
{
  if (HT_UNLIKELY(!addr)) {
    if (!t->has_zero) return 0;
    if (out) memcpy(out, t->zero, t->payload);
    t->has_zero = 0;
    t->count--;
    return 1;
  }
  if (!t->slot) return 0;
  size_t i = ht_live_home(t, addr) & t->mask;
  while (*live_key(t, i) != addr) {
    if (!*live_key(t, i)) return 0;
    i = (i + 1) & t->mask;
  }
  if (out) memcpy(out, live_key(t, i) + 1, t->payload);
  for (size_t j = i;;) {
    *live_key(t, i) = 0;
    for (;;) {
      j = (j + 1) & t->mask;
      uint64_t k = *live_key(t, j);
      if (!k) { t->count--; return 1; }
      size_t home = ht_live_home(t, k) & t->mask;
      /* Move j back to i unless its home lies cyclically in (i, j]. */
      if (i <= j ? (i < home && home <= j) : (i < home || home <= j)) continue;
      break;
    }
    memcpy(live_key(t, i), live_key(t, j), t->stride);
    i = j;
  }
}

/* Iterate over every block. */
int ht_live_next(const HtLive *t, size_t *it, uint64_t *addr, void **payload)
{
  size_t n = t->slot ? t->mask + 1 : 0;
  if (*it == 0 && t->has_zero) {
    *it = 1; *addr = 0; *payload = (void *)t->zero;
    return 1;
  }
  if (*it == 0) *it = 1;
  for (size_t i = *it - 1; i < n; i++) {
    uint64_t *k = live_key(t, i);
    if (*k) { *it = i + 2; *addr = *k; *payload = k + 1; return 1; }
  }
  *it = n + 1;
  return 0;
}

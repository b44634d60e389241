/* heaptape -- live-block table: open addressing over address-keyed slots with
** the payload inline, load at most one half, backward-shift deletion.
**
** Probes never wrap: they run on past the last home into LIVE_PAD more
** slots. So the table doubles in place (live_grow): its memory grows by
** remapping, and a key moves only when its new home differs. The sealer's
** table of python3's 3.4 M live blocks is 335 MB; doubling into a fresh
** copy held both (500 MB) and gave the kernel every old table's pages to
** clear again, a sixth of sealing's time. */
#include <stdlib.h>
#include "livetab.h"

#define LIVE_PAD 1024          /* slots past the last home */

/* Key of slot i. */
static inline uint64_t *live_key(const HtLive *t, size_t i)
{
  return (uint64_t *)(t->slot + i * t->stride);
}

/* Slots of a table of n homes. */
static inline size_t live_slots(size_t n)
{
  return n + LIVE_PAD;
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
  if (t->slot) ht_table_free(t->slot, live_slots(t->mask + 1) * t->stride);
  t->slot = NULL;
  t->mask = 0;
  t->count = 0;
  t->has_zero = 0;
}

/* Put slot content e (key, payload) into the first free slot from its home:
** 0, or -1 when the probe ran off the end. */
static int live_place(HtLive *t, const uint64_t *e)
{
  for (size_t i = ht_live_home(t, *e) & t->mask, end = live_slots(t->mask + 1); i < end; i++) {
    uint64_t *k = live_key(t, i);
    if (!*k) { memcpy(k, e, t->stride); return 0; }
  }
  return -1;
}

/* Double the table (or create it), in place. Keys of the old padding go
** out first; then, from the first slot up, each key not at its new home is
** taken out and put at the first free slot from there: at or below its old
** slot, or in the new upper half (which only keys moved there fill). Slots
** are only emptied at the key being moved, above every key placed in the
** lower half, so no probe sequence breaks. No probe runs off the end: the
** slots taken are those of inserting the same keys into an empty table (in
** this order, and in any other), and keys homed in [a, 2n) number at most
** 2n - a + LIVE_PAD: for a >= n they sat in [a - n, n + LIVE_PAD) before,
** and for a < n there are at most n / 2 keys in all. */
static int live_grow(HtLive *t)
{
  if (!t->slot) {
    if (!(t->slot = ht_table_alloc(live_slots(64) * t->stride))) return -1;
    t->mask = 63;
    return 0;
  }
  size_t n = t->mask + 1, s = t->stride;
  uint8_t *pad = malloc(LIVE_PAD * s);  /* the padding's keys */
  if (!pad) return -1;
  uint8_t *g = ht_table_grow(t->slot, live_slots(n) * s, live_slots(2 * n) * s);
  if (!g) { free(pad); return -1; }
  t->slot = g;
  size_t npad = 0;
  for (size_t i = n; i < live_slots(n); i++) {
    uint64_t *k = live_key(t, i);
    if (*k) { memcpy(pad + npad++ * s, k, s); *k = 0; }
  }
  t->mask = 2 * n - 1;
  uint64_t e[HT_LIVE_MAX_PAYLOAD / 8 + 1];
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    uint64_t *k = live_key(t, i);
    if (!*k || (ht_live_home(t, *k) & t->mask) == i) continue;
    memcpy(e, k, s);
    *k = 0;
    rc = live_place(t, e);
  }
  for (size_t i = 0; i < npad && !rc; i++) rc = live_place(t, (const uint64_t *)(pad + i * s));
  free(pad);
  return rc;  /* (-1 cannot happen, see above) */
}

/* Payload of addr, or NULL. */
void *ht_live_get(const HtLive *t, uint64_t addr)
{
  if (HT_UNLIKELY(!addr)) return t->has_zero ? (void *)t->zero : NULL;
  if (!t->slot) return NULL;
  for (size_t i = ht_live_home(t, addr) & t->mask, end = live_slots(t->mask + 1); i < end; i++) {
    uint64_t *k = live_key(t, i);
    if (*k == addr) return k + 1;
    if (!*k) return NULL;
  }
  return NULL;
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
  for (;;) {
    size_t i = ht_live_home(t, addr) & t->mask, end = live_slots(t->mask + 1);
    for (; i < end; i++) {
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
    if (live_grow(t)) return NULL;  /* the padding is full */
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
  size_t i = ht_live_home(t, addr) & t->mask, end = live_slots(t->mask + 1);
  for (;; i++) {
    if (i == end || !*live_key(t, i)) return 0;
    if (*live_key(t, i) == addr) break;
  }
  if (out) memcpy(out, live_key(t, i) + 1, t->payload);
  for (size_t j = i;;) {
    *live_key(t, i) = 0;
    for (;;) {
      if (++j == end) { t->count--; return 1; }
      uint64_t k = *live_key(t, j);
      if (!k) { t->count--; return 1; }
      /* Move j back to i unless its home lies after i (no probe wraps). */
      if ((ht_live_home(t, k) & t->mask) > i) continue;
      break;
    }
    memcpy(live_key(t, i), live_key(t, j), t->stride);
    i = j;
  }
}

/* Iterate over every block. */
int ht_live_next(const HtLive *t, size_t *it, uint64_t *addr, void **payload)
{
  size_t n = t->slot ? live_slots(t->mask + 1) : 0;
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

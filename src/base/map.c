/* heaptape -- open-addressing uint64_t -> uint64_t hash map.
** Used by the reader (stacks), the analysis (live blocks) and the CLI. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "map.h"

#define HUGE_BYTES (2u << 20) /* tables this large come from mmap + THP */

/* Fresh zeroed memory of bytes, starting on a 2 MiB boundary, asking for
** transparent huge pages (they back only whole aligned 2 MiB), or NULL. */
static void *table_map(size_t bytes)
{
  size_t len = (bytes + 4095) & ~(size_t)4095, extra = HUGE_BYTES;
  uint8_t *p = mmap(NULL, len + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                    -1, 0);
  if (p == MAP_FAILED) return NULL;
  uint8_t *a = (uint8_t *)(((uintptr_t)p + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
  if (a > p) munmap(p, (size_t)(a - p));
  if (p + len + extra > a + len) munmap(a + len, (size_t)(p + len + extra - (a + len)));
  madvise(a, len, MADV_HUGEPAGE);
  return a;
}

/* Zeroed memory for a hash table; big tables come from mmap (already zero)
** and ask for transparent huge pages, since every probe of a big table is
** otherwise also a TLB miss. */
void *ht_table_alloc(size_t bytes)
{
  return bytes < HUGE_BYTES ? calloc(1, bytes) : table_map(bytes);
}

/* The table p of old bytes from ht_table_alloc, grown to bytes (zero past
** old), or NULL (out of memory: p unchanged). A big table's pages move
** into the new one (mremap), on the same 2 MiB boundaries, keeping their
** huge pages: never two copies of it, and no fresh pages but the new. */
void *ht_table_grow(void *p, size_t old, size_t bytes)
{
  void *q = ht_table_alloc(bytes);
  if (!q || !p) return q;
  if (old >= HUGE_BYTES && bytes >= HUGE_BYTES) {
    if (mremap(p, old, old, MREMAP_MAYMOVE | MREMAP_FIXED, q) != MAP_FAILED) return q;
    ht_table_free(q, bytes);
    return NULL;
  }
  memcpy(q, p, old);
  ht_table_free(p, old);
  return q;
}

/* Release memory from ht_table_alloc. */
void ht_table_free(void *p, size_t bytes)
{
  if (!p) return;
  if (bytes < HUGE_BYTES) free(p);
  else munmap(p, bytes);
}

/* Allocate an empty table with room for hint keys. */
int ht_map_init(HtMap *m, size_t hint)
{
  size_t n = 16;
  while (n < hint * 2) n <<= 1;
  m->slot = ht_table_alloc(n * sizeof(HtMapSlot));
  m->mask = n - 1;
  m->count = 0;
  m->has_zero = 0;
  m->zero_val = 0;
  return m->slot ? 0 : -1;
}

/* Release the table. */
void ht_map_free(HtMap *m)
{
  ht_table_free(m->slot, (m->mask + 1) * sizeof(HtMapSlot));
  m->slot = NULL;
  m->mask = 0;
  m->count = 0;
  m->has_zero = 0;
}

/* Remove every key, keeping the slots. */
void ht_map_clear(HtMap *m)
{
  if (m->slot) memset(m->slot, 0, (m->mask + 1) * sizeof(HtMapSlot));
  m->count = 0;
  m->has_zero = 0;
}

/* Move the keys to a table of n slots (a power of two, larger). */
static int map_resize(HtMap *m, size_t n)
{
  HtMapSlot *t = ht_table_alloc(n * sizeof(HtMapSlot));
  if (!t) return -1;
  for (size_t i = 0; m->slot && i <= m->mask; i++) {
    uint64_t k = m->slot[i].key;
    if (!k) continue;
    size_t j = ht_hash64(k) & (n - 1);
    while (t[j].key) j = (j + 1) & (n - 1);
    t[j] = m->slot[i];
  }
  ht_table_free(m->slot, (m->mask + 1) * sizeof(HtMapSlot));
  m->slot = t;
  m->mask = n - 1;
  return 0;
}

/* Double the table (or create it). */
static int map_grow(HtMap *m)
{
  return map_resize(m, m->slot ? (m->mask + 1) * 2 : 16);
}

/* Room for keys in all without growing one step at a time. */
int ht_map_reserve(HtMap *m, size_t keys)
{
  size_t n = m->slot ? m->mask + 1 : 16;
  while (n < keys * 2) n <<= 1;
  return m->slot && n == m->mask + 1 ? 0 : map_resize(m, n);
}

/* Insert or overwrite. */
int ht_map_put(HtMap *m, uint64_t key, uint64_t val)
{
  if (key == 0) {
    m->count += !m->has_zero;
    m->has_zero = 1;
    m->zero_val = val;
    return 0;
  }
  if ((!m->slot || (m->count + 1) * 2 > m->mask + 1) && map_grow(m)) return -1;
  size_t i = ht_hash64(key) & m->mask;
  while (m->slot[i].key && m->slot[i].key != key) i = (i + 1) & m->mask;
  if (!m->slot[i].key) { m->slot[i].key = key; m->count++; }
  m->slot[i].val = val;
  return 0;
}

/* Remove key, shifting later members of its cluster back. */
int ht_map_del(HtMap *m, uint64_t key, uint64_t *val)
{
  if (key == 0) {
    if (!m->has_zero) return 0;
    if (val) *val = m->zero_val;
    m->has_zero = 0;
    m->count--;
    return 1;
  }
  if (!m->slot) return 0;
  size_t i = ht_hash64(key) & m->mask;
  while (m->slot[i].key != key) {
    if (!m->slot[i].key) return 0;
    i = (i + 1) & m->mask;
  }
  if (val) *val = m->slot[i].val;
  for (size_t j = i;;) {
    m->slot[i].key = 0;
    for (;;) {
      j = (j + 1) & m->mask;
      if (!m->slot[j].key) { m->count--; return 1; }
      size_t home = ht_hash64(m->slot[j].key) & m->mask;
      /* Move j back to i unless its home lies cyclically in (i, j]. */
      if (i <= j ? (i < home && home <= j) : (i < home || home <= j)) continue;
      break;
    }
    m->slot[i] = m->slot[j];
    i = j;
  }
}

/* Iterate over every entry. */
int ht_map_next(const HtMap *m, size_t *it, uint64_t *key, uint64_t *val)
{
  size_t n = m->slot ? m->mask + 1 : 0;
  if (*it == 0 && m->has_zero) {
    *it = 1; *key = 0; *val = m->zero_val;
    return 1;
  }
  if (*it == 0) *it = 1;
  for (size_t i = *it - 1; i < n; i++) {
    if (m->slot[i].key) {
      *it = i + 2; *key = m->slot[i].key; *val = m->slot[i].val;
      return 1;
    }
  }
  *it = n + 1;
  return 0;
}

/* heaptape -- open-addressing uint64_t -> uint64_t hash map.
** Used by the reader (stacks), the analysis (live blocks) and the CLI. */
#include <stdlib.h>
#include "map.h"

/* Allocate an empty table of at least hint slots. */
int ht_map_init(HtMap *m, size_t hint)
{
  size_t n = 16;
  while (n < hint * 2) n <<= 1;
  m->keys = calloc(n, sizeof(uint64_t));
  m->vals = malloc(n * sizeof(uint64_t));
  m->mask = n - 1;
  m->count = 0;
  m->has_zero = 0;
  m->zero_val = 0;
  if (!m->keys || !m->vals) { ht_map_free(m); return -1; }
  return 0;
}

/* Release the table. */
void ht_map_free(HtMap *m)
{
  free(m->keys); free(m->vals);
  m->keys = m->vals = NULL;
  m->mask = 0;
  m->count = 0;
}

/* Pointer to the value of key, or NULL. */
uint64_t *ht_map_get(const HtMap *m, uint64_t key)
{
  if (key == 0) return m->has_zero ? (uint64_t *)&m->zero_val : NULL;
  if (!m->keys) return NULL;
  for (size_t i = ht_hash64(key) & m->mask;; i = (i + 1) & m->mask) {
    if (m->keys[i] == key) return &m->vals[i];
    if (m->keys[i] == 0) return NULL;
  }
}

/* Double the table. */
static int map_grow(HtMap *m)
{
  HtMap n;
  if (ht_map_init(&n, m->mask + 1)) return -1;
  for (size_t i = 0; i <= m->mask; i++) {
    uint64_t k = m->keys[i];
    if (!k) continue;
    size_t j = ht_hash64(k) & n.mask;
    while (n.keys[j]) j = (j + 1) & n.mask;
    n.keys[j] = k;
    n.vals[j] = m->vals[i];
  }
  n.count = m->count;
  n.has_zero = m->has_zero;
  n.zero_val = m->zero_val;
  free(m->keys); free(m->vals);
  *m = n;
  return 0;
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
  if (!m->keys) { /* lazily allocated: keep a zero key stored before */
    int z = m->has_zero;
    uint64_t zv = m->zero_val;
    if (ht_map_init(m, 16)) return -1;
    m->has_zero = z;
    m->zero_val = zv;
    m->count = (size_t)z;
  }
  if ((m->count + 1) * 4 > (m->mask + 1) * 3 && map_grow(m)) return -1;
  size_t i = ht_hash64(key) & m->mask;
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & m->mask;
  if (!m->keys[i]) { m->keys[i] = key; m->count++; }
  m->vals[i] = val;
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
  if (!m->keys) return 0;
  size_t i = ht_hash64(key) & m->mask;
  while (m->keys[i] != key) {
    if (!m->keys[i]) return 0;
    i = (i + 1) & m->mask;
  }
  if (val) *val = m->vals[i];
  for (size_t j = i;;) {
    m->keys[i] = 0;
    for (;;) {
      j = (j + 1) & m->mask;
      if (!m->keys[j]) { m->count--; return 1; }
      size_t home = ht_hash64(m->keys[j]) & m->mask;
      /* Move j back to i unless its home lies cyclically in (i, j]. */
      if (i <= j ? (i < home && home <= j) : (i < home || home <= j)) continue;
      break;
    }
    m->keys[i] = m->keys[j];
    m->vals[i] = m->vals[j];
    i = j;
  }
}

/* Iterate over every entry. */
int ht_map_next(const HtMap *m, size_t *it, uint64_t *key, uint64_t *val)
{
  size_t n = m->keys ? m->mask + 1 : 0;
  if (*it == 0 && m->has_zero) {
    *it = 1; *key = 0; *val = m->zero_val;
    return 1;
  }
  if (*it == 0) *it = 1;
  for (size_t i = *it - 1; i < n; i++) {
    if (m->keys[i]) { *it = i + 2; *key = m->keys[i]; *val = m->vals[i]; return 1; }
  }
  *it = n + 1;
  return 0;
}

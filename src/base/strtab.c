/* heaptape -- the string interner: FNV-1a hashes in a map, chains of ids.
** Used inside profiled programs (tape dictionary): malloc only, no stdio. */
#include <stdlib.h>
#include <string.h>
#include "strtab.h"
#include "hash.h"
#include "grow.h"

/* Empty table sized for hint strings. */
int ht_strtab_init(HtStrtab *t, size_t hint)
{
  memset(t, 0, sizeof(*t));
  return ht_map_init(&t->head, hint);
}

/* Free every string and the table. */
void ht_strtab_free(HtStrtab *t)
{
  for (size_t i = 0; i < t->n; i++) free(t->str[i]);
  free(t->str); free(t->next);
  ht_map_free(&t->head);
  memset(t, 0, sizeof(*t));
}

/* Id of s, interned if new. */
int64_t ht_strtab_intern(HtStrtab *t, const char *s, int *added)
{
  uint64_t h = ht_fnv1a(s), *head = ht_map_get(&t->head, h);
  if (added) *added = 0;
  for (uint32_t i = head ? (uint32_t)*head : 0; i; i = t->next[i - 1])
    if (!strcmp(t->str[i - 1], s)) return i - 1;
  if (t->n >= UINT32_MAX - 1) return -1;
  size_t cap = t->cap;
  if (ht_grow(&t->str, &cap, t->n + 1, sizeof(char *))) return -1;
  if (cap != t->cap) {  /* next follows str's capacity */
    size_t c = t->cap;
    if (ht_grow(&t->next, &c, cap, sizeof(uint32_t))) return -1;
    t->cap = cap;
  }
  char *copy = strdup(s);
  if (!copy) return -1;
  uint32_t id = (uint32_t)t->n;
  uint32_t chain = head ? (uint32_t)*head : 0;
  if (ht_map_put(&t->head, h, (uint64_t)id + 1)) { free(copy); return -1; }
  t->str[id] = copy;
  t->next[id] = chain;
  t->n++;
  if (added) *added = 1;
  return id;
}

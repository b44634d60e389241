/* heaptape -- a string interner: equal strings get one dense id (0, 1, ...).
** Owns a copy of every string; used by the tape writer's dictionary and by
** the tools' name tables (model locations, flame graph frames, pprof). */
#ifndef HT_STRTAB_H
#define HT_STRTAB_H

#include "ht_def.h"
#include "map.h"

typedef struct HtStrtab {
  char **str;                /* strings by id (owned copies) */
  uint32_t *next;            /* chain of equal hashes: id -> next id + 1 */
  size_t n, cap;             /* strings, allocated slots of str and next */
  HtMap head;                /* FNV-1a hash -> first id + 1 of its chain */
} HtStrtab;

/* An empty table with room for about hint strings; 0 or -1 (OOM). */
int ht_strtab_init(HtStrtab *t, size_t hint) HT_HIDDEN;
/* Free the strings and the table (t may be zeroed or already freed). */
void ht_strtab_free(HtStrtab *t) HT_HIDDEN;
/* Id of s, added (copied) if new: *added (if non-NULL) says which.
** -1 when out of memory, with the table unchanged. */
int64_t ht_strtab_intern(HtStrtab *t, const char *s, int *added) HT_HIDDEN;

#endif

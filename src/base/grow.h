/* heaptape -- growing a heap array by doubling, the one helper for it. */
#ifndef HT_GROW_H
#define HT_GROW_H

#include "ht_def.h"

/* Make the array *arrp (a T ** passed as void *) of *cap elements of size sz
** hold at least need: its capacity doubles from 16, the new slots are zeroed.
** 0, or -1 when out of memory (the array is then unchanged). */
int ht_grow(void *arrp, size_t *cap, size_t need, size_t sz) HT_HIDDEN;

#endif

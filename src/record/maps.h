/* heaptape -- the module map (maps.c): MODULE records for the objects
** loaded, with loads and unloads noticed through dl_iterate_phdr. */
#ifndef HT_MAPS_H
#define HT_MAPS_H

#include "recdef.h"
#include "../format/stream.h"

/* Emit MODULE records for every object loaded or unloaded since last call. */
void ht_maps_scan(HtStream *s) HT_HIDDEN;
/* Cheap check: did dl_iterate_phdr's add/sub counters move? */
int ht_maps_changed(void) HT_HIDDEN;
/* Forget every object seen (a new session lists them all again). */
void ht_maps_reset(void) HT_HIDDEN;
/* Text range of the object containing addr. */
void ht_maps_self(const void *addr, uintptr_t *lo, uintptr_t *hi) HT_HIDDEN;

#endif

/* heaptape -- hooks in the relocation tables of a running process (got.c):
** the GOT/PLT entries of the allocator's functions pointed at preload.c's. */
#ifndef HT_GOT_H
#define HT_GOT_H

#include "recdef.h"

/* A function of preload.c by its own (hidden) address, for got.c: a
** dlopen'd libheaptape.so cannot take &malloc, which names libc's. */
typedef struct HtHook {
  const char *name;          /* the libc name ("malloc"); NULL ends the table */
  void *fn;                  /* preload.c's definition */
} HtHook;
extern const HtHook ht_preload_hooks[] HT_HIDDEN;   /* defined by preload.c */

/* Point every loaded object's relocation slots of the hooked names (and of
** dlopen, dlclose, so later objects get them too) at the hooks; counts of
** slots and objects hooked go to *slots, *objects. 0, or -1 when glibc's
** functions cannot be found. */
int ht_got_hook(uint32_t *slots, uint32_t *objects) HT_HIDDEN;
/* Put back every slot that still holds a hook; the hooks stay valid code
** (a thread inside one, or a pointer copied from a slot, still works). */
void ht_got_restore(void) HT_HIDDEN;

#endif

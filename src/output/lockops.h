/* heaptape -- the text form of an operations stream with Lock/Unlock ops
** (`heaptape locks`, docs/ALLOCATORS.md). */
#ifndef HT_LOCKOPS_H
#define HT_LOCKOPS_H

#include <stdio.h>
#include "../analyze/locks.h"

/* The first lines: the format (with access lines if access), the model. */
void ht_lockops_head(FILE *f, const HtLocks *l, int access) HT_HIDDEN;
/* One op as a line: N, F and accesses as `heaptape ops [--access]` prints
** them, "SEQ TID K HANDLE" (lock) and "SEQ TID U HANDLE" (unlock). */
void ht_lockops_print(FILE *f, const HtOp *op) HT_HIDDEN;
/* The last line: counts of the ops stream and of the locks. */
void ht_lockops_tail(FILE *f, const HtOps *o, const HtLocks *l) HT_HIDDEN;

#endif

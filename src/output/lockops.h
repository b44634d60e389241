/* heaptape -- the text form of an operations stream with Lock/Unlock ops
** (`heaptape locks`, docs/ALLOCATORS.md). */
#ifndef HT_LOCKOPS_H
#define HT_LOCKOPS_H

#include <stdio.h>
#include "../analyze/locks.h"

/* The first line: the format, the model and its parameter. */
void ht_lockops_head(FILE *f, const HtLocks *l) HT_HIDDEN;
/* One op as a line: N and F as `heaptape ops` prints them, then
** "SEQ TID K HANDLE" (lock) and "SEQ TID U HANDLE" (unlock). */
void ht_lockops_print(FILE *f, const HtOp *op) HT_HIDDEN;
/* The last line: counts of the ops stream and of the locks. */
void ht_lockops_tail(FILE *f, const HtOps *o, const HtLocks *l) HT_HIDDEN;

#endif

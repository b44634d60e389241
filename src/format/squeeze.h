/* heaptape -- compress a tape's raw EVENTS and ACCESS packets in place. */
#ifndef HT_SQUEEZE_H
#define HT_SQUEEZE_H

#include <stddef.h>
#include "format.h"

/* 0, or -1 with one line in err (the tape is left as it was). */
int ht_tape_squeeze(const char *path, int level, char *err, size_t errlen) HT_HIDDEN;

#endif

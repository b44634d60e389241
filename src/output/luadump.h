/* heaptape -- a Lua universe dump as `heaptape report --dump` prints it. */
#ifndef HT_OUT_LUADUMP_H
#define HT_OUT_LUADUMP_H

#include <stdio.h>
#include "../analyze/luadump.h"

/* Every object with its links (the memprof layout), then the top objects
** by size and by retained bytes. */
void ht_luadump_print(FILE *f, const HtLuaDump *d, unsigned top) HT_HIDDEN;

#endif

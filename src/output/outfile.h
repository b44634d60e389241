/* heaptape -- writing an output file whole or not at all: into a temporary
** file renamed over the target at the end, unless the target is not a
** regular file (/dev/null, a pipe, a terminal), which is written in place:
** renaming over a device would replace it. */
#ifndef HT_OUTFILE_H
#define HT_OUTFILE_H

#include <stdio.h>
#include "../base/ht_def.h"

typedef struct HtOutFile {
  FILE *f;                   /* what to write to */
  char tmp[4096];            /* the temporary file, or "" when in place */
} HtOutFile;

/* Open path for writing (fopen mode); NULL with errno set on failure. */
FILE *ht_outfile_open(HtOutFile *o, const char *path, const char *mode) HT_HIDDEN;
/* Close, and put the file in place unless bad (a write failed) or this
** fails; 0, or -1 with errno set (the temporary file removed). */
int ht_outfile_close(HtOutFile *o, const char *path, int bad) HT_HIDDEN;

#endif

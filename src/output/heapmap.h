/* heaptape -- heap maps: the address space over time as a PNG (blocks as
** they live and die, coloured by allocation site) and frame sequences. */
#ifndef HT_HEAPMAP_H
#define HT_HEAPMAP_H

#include <stdio.h>
#include "../format/reader.h"

typedef struct HtHeapmapOpts {
  unsigned w, h;             /* picture size in pixels */
  const char *frames;        /* directory for frame_NNNNN.png, or NULL */
  unsigned nframes;          /* frames to write */
  unsigned fw, fh;           /* frame size in pixels */
  FILE *legend;              /* where to print the site colours, or NULL */
} HtHeapmapOpts;

/* Draw the heap map of a tape into png (if not NULL) and the frames.
** Returns 0, or -1 with err set. */
int ht_heapmap_run(HtReader *r, const char *png, const HtHeapmapOpts *o, char *err,
                   size_t errlen) HT_HIDDEN;

#endif

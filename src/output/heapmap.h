/* heaptape -- heap maps: the address space over time as a PNG (blocks as
** they live and die, coloured by allocation site) and frame sequences. */
#ifndef HT_HEAPMAP_H
#define HT_HEAPMAP_H

#include <stdio.h>
#include "../analyze/resolve.h"

typedef struct HtHeapmapOpts {
  unsigned w, h;             /* picture size in pixels */
  const char *frames;        /* directory for frame_NNNNN.png, or NULL */
  const char *animate;       /* the frames as one animated PNG, or NULL */
  unsigned frame_ms;         /* how long each frame of it shows */
  unsigned nframes;          /* frames to write */
  unsigned fw, fh;           /* frame size in pixels */
  FILE *legend;              /* where to print the site colours, or NULL */
  const char *const *wrappers; /* extra wrapper patterns of site names, or NULL */
  size_t nwrappers;          /* patterns */
} HtHeapmapOpts;

/*
** A heap map is drawn from two passes of resolved events: the first lays
** out the address space the blocks touch, the second draws them.
**   m = ht_heapmap_new(r, png, o, err, len);
**   ht_resolve_run(&rs, r, ht_heapmap_layout, NULL, m); ht_heapmap_plan(m);
**   ht_resolve_pass(&rs, r, ht_heapmap_draw, NULL, m); ht_heapmap_finish(m, &rs);
** A sealed tape of version 11 carries the layout (maplayout.h): when
** ht_heapmap_preset(m, r) gives 1, the first pass is left out and the
** second is the only one (ht_resolve_run, not ht_resolve_pass).
** r names the sites; o, png and err must outlive m. Functions returning int
** give 0, or -1 with one line in err.
*/
typedef struct Map HtHeapmap;

HtHeapmap *ht_heapmap_new(const HtReader *r, const char *png, const HtHeapmapOpts *o,
                          char *err, size_t errlen) HT_HIDDEN;
void ht_heapmap_destroy(HtHeapmap *m) HT_HIDDEN;
void ht_heapmap_layout(void *m, const HtRes *res) HT_HIDDEN;
/* The layout from r's sealed tape: 1 loaded, 0 none (make the first pass),
** or -1 with one line in err. */
int ht_heapmap_preset(HtHeapmap *m, HtReader *r) HT_HIDDEN;
int ht_heapmap_plan(HtHeapmap *m) HT_HIDDEN;
void ht_heapmap_draw(void *m, const HtRes *res) HT_HIDDEN;
int ht_heapmap_finish(HtHeapmap *m, const HtResolve *rs) HT_HIDDEN;

#endif

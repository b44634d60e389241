/* heaptape -- the self-contained HTML report: heap over time (RSS samples,
** peak), stacked charts of the top locations, a flame graph and call trees
** with a metric switch, top locations, sizes, leaks, and the heap's
** composition at bucket times (click the timeline, or #t=SECONDS). */
#ifndef HT_HTML_H
#define HT_HTML_H

#include <stdio.h>
#include "flame.h"

/* Per-site live bytes at evenly spaced times, gathered during the pass. */
typedef struct HtHtmlSnaps {
  uint64_t step;             /* ns between snapshots (0 = none) */
  uint64_t *t;               /* snapshot times */
  uint64_t *heap;            /* heap at each time */
  uint32_t n, c;             /* snapshots, allocated */
  uint64_t *ent;             /* (site, bytes) pairs of every snapshot */
  size_t nent, cent;         /* used, allocated (in pairs * 2) */
  size_t *first;             /* per snapshot: its first pair, n + 1 entries */
  uint64_t *allocs, *temp;   /* allocation calls and temporaries so far, per snapshot */
  uint64_t *dent;            /* (site, new calls, new temporaries) since the
                                previous snapshot, of every snapshot */
  size_t ndent, cdent;       /* used, allocated (in triples * 3) */
  size_t *dfirst;            /* per snapshot: its first triple, n + 1 entries */
  uint64_t *prev;            /* per site: calls, temporaries at the last snapshot */
  uint32_t nprev;            /* sites in prev */
  uint64_t *rss;             /* (time, bytes) of every RSS sample */
  size_t nrss, crss;         /* used, allocated (in pairs * 2) */
  int oom;                   /* out of memory */
} HtHtmlSnaps;

/* The interval giving `buckets` snapshots over duration_ns (duration / buckets). */
uint64_t ht_html_step(uint64_t duration_ns, unsigned buckets) HT_HIDDEN;
/* HtSnapFn: record the live bytes of every site (arg is HtHtmlSnaps *). */
void ht_html_snap(void *arg, const HtModel *m, uint64_t t_ns) HT_HIDDEN;
void ht_html_snaps_free(HtHtmlSnaps *s) HT_HIDDEN;
/* HtRssFn: keep an RSS sample (arg is HtHtmlSnaps *). */
void ht_html_rss(void *arg, uint64_t t_ns, uint64_t rss) HT_HIDDEN;
/* The whole report as one HTML page; fl is the model's frame tree. */
void ht_html_write(FILE *f, const HtModel *m, const HtFlame *fl,
                   const HtHtmlSnaps *s, const char *path) HT_HIDDEN;
/* The page script (data in <script id="ht-data">). */
extern const char ht_html_js[] HT_HIDDEN;

#endif

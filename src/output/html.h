/* heaptape -- the self-contained HTML report: heap over time (RSS, peak),
** a flame graph with a metric switch, top sites, leaks, and the heap's
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
  int oom;                   /* out of memory */
} HtHtmlSnaps;

/* The interval giving `buckets` snapshots over duration_ns (duration / buckets). */
uint64_t ht_html_step(uint64_t duration_ns, unsigned buckets) HT_HIDDEN;
/* HtSnapFn: record the live bytes of every site (arg is HtHtmlSnaps *). */
void ht_html_snap(void *arg, const HtModel *m, uint64_t t_ns) HT_HIDDEN;
void ht_html_snaps_free(HtHtmlSnaps *s) HT_HIDDEN;
/* The whole report as one HTML page; fl is the model's frame tree. */
void ht_html_write(FILE *f, const HtModel *m, const HtFlame *fl,
                   const HtHtmlSnaps *s, const char *path) HT_HIDDEN;
/* The page script (data in <script id="ht-data">). */
extern const char ht_html_js[] HT_HIDDEN;

#endif

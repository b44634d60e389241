/* heaptape -- the self-contained HTML report: heap over time (RSS samples,
** peak), stacked charts of the top locations, a flame graph and call trees
** with a metric switch, top locations, sizes, leaks, and the heap's
** composition at bucket times (click the timeline, or #t=SECONDS). */
#ifndef HT_HTML_H
#define HT_HTML_H

#include <stdio.h>
#include "flame.h"
#include "../analyze/snaps.h"
#include "../analyze/accrep.h"

/* The whole report as one HTML page; fl is the model's frame tree; acc the
** access report of a tape of record --access (its top sites' access counts
** per byte offset are drawn; acc_sample: 1, or N of a 1-in-N sample), or NULL. */
void ht_html_write(FILE *f, const HtModel *m, const HtFlame *fl, const HtSnaps *s,
                   const HtAccRep *acc, uint64_t acc_sample, const char *path) HT_HIDDEN;
/* The page script (data in <script id="ht-data">). */
extern const char ht_html_js[] HT_HIDDEN;

#endif

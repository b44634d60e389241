/* heaptape -- `heaptape diff` rendered: text, JSON, or a self-contained
** HTML page. The comparison itself is src/analyze/diff.c. */
#ifndef HT_OUTPUT_DIFF_H
#define HT_OUTPUT_DIFF_H

#include <stdio.h>
#include "../analyze/diff.h"

typedef struct HtDiffOpts {
  const char *base_path;     /* the base tape's path */
  const char *new_path;      /* the new tape's path */
  unsigned top;              /* sites shown (0 = all) */
  const char *warning[2];    /* damage warnings of base and new, or NULL */
} HtDiffOpts;

/* The comparison as text. */
void ht_diff_text(FILE *f, const HtDiff *d, const HtDiffOpts *o) HT_HIDDEN;
/* The comparison as one JSON object. */
void ht_diff_json(FILE *f, const HtDiff *d, const HtDiffOpts *o) HT_HIDDEN;
/* The comparison as a self-contained HTML page (no scripts, no network). */
void ht_diff_html(FILE *f, const HtDiff *d, const HtDiffOpts *o) HT_HIDDEN;

#endif

/* heaptape -- two tapes compared: their sites matched by site key (merged
** by location, ht_frames_site_name), each with its change. */
#ifndef HT_DIFF_H
#define HT_DIFF_H

#include "model.h"

/* What the sites are ordered by: the absolute change of this figure. */
typedef enum {
  HT_DIFF_BYTES = 0,         /* bytes allocated */
  HT_DIFF_CALLS,             /* allocation calls */
  HT_DIFF_PEAK,              /* bytes at the peak */
  HT_DIFF_LEAKED             /* bytes leaked (live at the end) */
} HtDiffKey;

/* Which tapes a site appears on. */
enum { HT_DIFF_BASE = 1, HT_DIFF_NEW = 2, HT_DIFF_BOTH = 3 };

/* One site (location) of either tape. */
typedef struct HtDiffSite {
  const char *name;          /* location name (owned by a model) */
  int side;                  /* HT_DIFF_BASE, HT_DIFF_NEW or HT_DIFF_BOTH */
  const HtFig *base;         /* its figures on the base tape, or NULL */
  const HtFig *now;          /* its figures on the new tape, or NULL */
  int64_t d_allocs;          /* change in allocation calls */
  int64_t d_bytes;           /* change in bytes allocated */
  int64_t d_peak;            /* change in bytes at the peak */
  int64_t d_leaked;          /* change in bytes leaked */
  int64_t d_leaked_n;        /* change in blocks leaked */
} HtDiffSite;

typedef struct HtDiff {
  const HtModel *base;       /* the base tape's finished model (not owned) */
  const HtModel *now;        /* the new tape's finished model (not owned) */
  HtDiffKey key;             /* ordering */
  HtDiffSite *site;          /* sites, largest absolute change first */
  uint32_t nsite;            /* sites */
  uint32_t nboth, nbase, nnew; /* sites on both tapes, only base, only new */
  int64_t d_allocs, d_bytes; /* totals' changes: calls, bytes allocated */
  int64_t d_peak, d_peak_n;  /* peak heap, blocks at the peak */
  int64_t d_leaked, d_leaked_n; /* leaked bytes and blocks */
  int64_t d_temp;            /* temporary allocations */
} HtDiff;

/* Compare two finished models (run without split sites); sites are
** ordered by the absolute change of `key`, larger first, ties by name.
** Returns 0 or HEAPTAPE_E_NOMEM. */
int ht_diff_build(HtDiff *d, const HtModel *base, const HtModel *now,
                  HtDiffKey key) HT_HIDDEN;
/* Release what d owns. */
void ht_diff_free(HtDiff *d) HT_HIDDEN;
/* The change of a site under a key. */
int64_t ht_diff_change(const HtDiffSite *s, HtDiffKey key) HT_HIDDEN;
/* The name of a key as the outputs print it: "bytes allocated", ... */
const char *ht_diff_key_name(HtDiffKey key) HT_HIDDEN;

#endif

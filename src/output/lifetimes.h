/* heaptape -- object lifetime histograms: macro lifetime (share of all
** operations between a block's New and its Free) and lifetime in time. */
#ifndef HT_LIFETIMES_H
#define HT_LIFETIMES_H

#include <stdio.h>
#include "../base/map.h"
#include "../analyze/resolve.h"

#define HT_LIFE_TBUCKETS 48  /* time buckets: [0] < 1 ns, [k] 2^(k-1) .. < 2^k ns */

typedef struct HtLifeOpts {
  double lo, hi;             /* macro lifetime range shown, percent (0-100) */
  unsigned bins;             /* histogram bins over [lo, hi] */
  int by_site;               /* collect per-site figures */
  const char *const *wrappers; /* extra wrapper patterns of site names, or NULL */
  size_t nwrappers;          /* patterns */
} HtLifeOpts;

/* Lifetimes of the blocks of one allocation site (grouped by name). */
typedef struct HtLifeSite {
  char *name;                /* display name (owned) */
  uint64_t blocks;           /* blocks allocated */
  uint64_t freed;            /* of which freed */
  uint64_t in_range;         /* freed with a macro lifetime in [lo, hi] */
  double sum_pct;            /* sum of macro lifetimes of freed blocks, % */
  double sum_ops;            /* sum of lifetimes in operations of freed blocks */
  double sum_ns;             /* sum of lifetimes in ns of freed blocks */
  uint64_t short_n;          /* freed blocks living < 1% of the run */
} HtLifeSite;

typedef struct HtLife {
  HtLifeOpts o;              /* options */
  uint64_t nops;             /* operations of the tape */
  uint64_t blocks;           /* blocks allocated */
  uint64_t freed;            /* blocks freed */
  uint64_t never;            /* blocks never freed */
  uint64_t never_bytes;      /* their bytes */
  uint64_t in_range;         /* freed blocks inside [lo, hi] */
  uint64_t *bin;             /* macro histogram, o.bins counts */
  uint64_t *bin_d;           /* per bin: the fewest operations a lifetime in
                                it lasts (life_thresholds) */
  uint64_t d_hi;             /* the fewest operations past the range */
  uint64_t d_one;            /* the fewest operations lasting 1% or more */
  double guess;              /* bins per operation, for a first guess */
  uint64_t res_ns;           /* the clock's resolution seen on the tape (1 = fine) */
  uint64_t below_res;        /* in-range blocks living less than res_ns */
  uint64_t tb[HT_LIFE_TBUCKETS]; /* time histogram of the in-range blocks, from res_ns */
  uint32_t *site_of;         /* by stack id: site index + 1 (0 = none yet); a
                                stack id names a node of the tape's tree */
  size_t nsite_of;           /* entries of it */
  HtLifeSite *site;          /* sites (by stack until ht_life_run merges names) */
  uint32_t nsite;            /* used */
  size_t csite;              /* allocated */
  int named;                 /* site names are resolved (owned strings) */
  int oom;                   /* out of memory */
} HtLife;

/* Start empty for a tape of nops operations (ht_resolve_count_ops): the
** macro lifetime of a block is its share of them; h gives the clock's
** resolution. 0, or -1 on OOM. */
int ht_life_init(HtLife *l, const HtLifeOpts *o, uint64_t nops, const HtHeader *h) HT_HIDDEN;
/* Count one resolved event (an HtResFn). */
void ht_life_res(void *l, const HtRes *res) HT_HIDDEN;
/* After the pass (blocks never freed are counted as it goes, so rs may keep
** no table: ht_resolve_carried): sites get their names from r. 0, or -1 if
** out of memory. */
int ht_life_finish(HtLife *l, const HtResolve *rs, const HtReader *r) HT_HIDDEN;
/* Release what l owns. */
void ht_life_free(HtLife *l) HT_HIDDEN;
/* Histograms (and sites) as text. */
void ht_life_text(FILE *f, const char *tape, const HtLife *l, unsigned top) HT_HIDDEN;
/* The same figures as one JSON object (top sites with by_site); warning is
** the tape's damage line or NULL. */
void ht_life_json(FILE *f, const char *tape, const HtLife *l, unsigned top,
                  const char *warning) HT_HIDDEN;
/* Both histograms as an SVG picture. */
void ht_life_svg(FILE *f, const char *tape, const HtLife *l) HT_HIDDEN;

#endif

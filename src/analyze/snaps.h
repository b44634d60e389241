/* heaptape -- the heap over time per site, for the HTML page: live bytes,
** calls and temporaries of every site at evenly spaced times, and the RSS
** samples. */
#ifndef HT_SNAPS_H
#define HT_SNAPS_H

#include "model.h"

/* Per-site live bytes at evenly spaced times, gathered during the pass
** (ht_snaps_take as the model's on_snap, ht_snaps_fold as its on_fold,
** ht_snaps_rss as its on_rss: ht_snaps_setup). */
typedef struct HtSnaps {
  uint64_t step;             /* ns between snapshots (0 = none) */
  uint64_t *t;               /* snapshot times */
  uint64_t *heap;            /* heap at each time */
  uint32_t n, c;             /* snapshots, allocated */
  uint32_t *esite;           /* the live sites of every snapshot, in turn */
  uint64_t *ebytes;          /* and their bytes (two arrays: 12 bytes an
                                entry, not 16; cc1plus's page holds 1.2 M) */
  size_t nent;               /* entries */
  size_t cesite, cebytes;    /* allocated */
  uint64_t *entn;            /* per entry: the site's live blocks, or NULL
                                with no_blocks */
  size_t centn;              /* allocated */
  int no_blocks;             /* keep no entn: snapshots loaded from an AGG
                                for a page (it shows bytes; the AGG keeps
                                blocks of the latest only: 8 bytes a pair,
                                a third of cc1plus's snapshots) */
  uint64_t *zent;            /* (site, blocks) pairs of the sites holding
                                blocks of 0 bytes only, every snapshot */
  size_t nzent, czent;       /* used, allocated (in pairs * 2) */
  size_t *zfirst;            /* per snapshot: its first pair, n + 1 entries */
  size_t *first;             /* per snapshot: its first entry, n + 1 of them */
  uint64_t *allocs, *temp;   /* allocation calls and temporaries so far, per snapshot */
  uint32_t *dsite;           /* the sites that made calls since the previous
                                snapshot, of every snapshot in turn */
  uint64_t *dval;            /* and (calls, temporaries) of each: 2 a site */
  size_t ndent;              /* entries */
  size_t cdsite, cdval;      /* allocated */
  size_t *dfirst;            /* per snapshot: its first entry, n + 1 of them */
  uint64_t *prev;            /* per site: calls, temporaries at the last snapshot */
  uint32_t nprev;            /* sites in prev */
  uint64_t *rss;             /* (time, bytes) of every RSS sample */
  size_t nrss, crss;         /* used, allocated (in pairs * 2) */
  uint32_t fold;             /* at most this many: then every other is
                                kept at twice the step (ht_snaps_setup) */
  unsigned pick;             /* the page's buckets (ht_snaps_pick), 0 if
                                not known: snapshots loaded from a tape keep
                                the live sites of those picked only */
  int oom;                   /* out of memory */
} HtSnaps;

#define HT_SNAPS_BUCKETS 100   /* snapshots of the HTML page unless told */

/* The step of the snapshots a pass over duration_ns takes when they fold
** at `fold`: the smallest power of two (ns) giving at most fold of them. */
uint64_t ht_snaps_step(uint64_t duration_ns, uint32_t fold) HT_HIDDEN;
/* Set s (zeroed) and mo's snapshot options up for `buckets` to 2 * buckets
** snapshots over a pass of any length: they start every ns (or at the step
** of end_ns, a length the pass will reach at least) and fold. */
void ht_snaps_setup(HtSnaps *s, unsigned buckets, uint64_t end_ns,
                    HtModelOpts *mo) HT_HIDDEN;
/* HtSnapFn: record the live bytes of every site (arg is HtSnaps *). */
void ht_snaps_take(void *arg, const HtModel *m, uint64_t t_ns) HT_HIDDEN;
/* HtFoldFn: keep every other snapshot, at twice the step (arg is HtSnaps *). */
void ht_snaps_fold(void *arg) HT_HIDDEN;
/* A page's `buckets` of the snapshots: the last one at or before each
** multiple of duration / buckets; step becomes that spacing. */
void ht_snaps_pick(HtSnaps *s, uint64_t duration_ns, unsigned buckets) HT_HIDDEN;
/* Of n snapshots a tape holds a step apart, those the page will show when
** the pass's duration is duration_ns (folded by ht_snaps_fit, then
** ht_snaps_pick(duration_ns, s->pick)): want[k] = 1 (want zeroed, n bytes).
** 0, or -1 out of memory. */
int ht_snaps_wanted(const HtSnaps *s, uint64_t step, uint32_t n, uint64_t duration_ns,
                    uint8_t *want) HT_HIDDEN;
/* Snapshots loaded from a tape (any step): fold them to s->fold; 1 when
** they are then those a pass over duration_ns takes, else 0. */
int ht_snaps_fit(HtSnaps *s, uint64_t duration_ns) HT_HIDDEN;
void ht_snaps_free(HtSnaps *s) HT_HIDDEN;
/* Snapshots built piece by piece (agg.c): begin one (0, or -1 out of
** memory), add its sites in increasing order, end it. */
int ht_snaps_begin(HtSnaps *s, uint64_t t, uint64_t heap, uint64_t allocs,
                   uint64_t temp) HT_HIDDEN;
void ht_snaps_live(HtSnaps *s, uint32_t site, uint64_t bytes, uint64_t blocks) HT_HIDDEN;
void ht_snaps_calls(HtSnaps *s, uint32_t site, uint64_t calls, uint64_t temp) HT_HIDDEN;
void ht_snaps_end(HtSnaps *s) HT_HIDDEN;
/* HtRssFn: keep an RSS sample (arg is HtSnaps *). */
void ht_snaps_rss(void *arg, uint64_t t_ns, uint64_t rss) HT_HIDDEN;

#endif

/* heaptape -- the analysis model: one streaming pass over a tape into sites,
** locations, the live map, the timeline, the peak and per-thread figures. */
#ifndef HT_MODEL_H
#define HT_MODEL_H

#include "../base/map.h"
#include "../base/strtab.h"
#include "../format/reader.h"
#include "resolve.h"
#include "timeline.h"

/*
** What the model keeps, and why it stays small:
** - one HtSite per distinct allocation stack (global stack id),
** - one HtLoc per distinct "innermost meaningful frame" name,
** - no blocks: frees come resolved to the block they release (resolve.h),
** - one HtThread per thread, a fixed-size timeline and histogram.
** Memory is bounded by the live set plus the distinct stacks, never by the
** length of the tape.
**
** Sampled tapes: bytes are the events' weights (the bytes each sample stands
** for) and counts are weight / size, so totals estimate the unsampled run.
**
** Peak composition: a lazy snapshot. Each new peak bumps an epoch; a site
** saves its live bytes (the value it had at the latest peak) the first time
** it changes after that epoch began. At the end a site's bytes at the peak
** are the saved value if it changed since the last peak, else its live
** bytes. One pass, O(1) per event, exact -- no second pass over the tape and
** no per-peak copies of the site vector.
*/

#define HT_LOC_NONE UINT32_MAX  /* no location (e.g. free of an unknown block) */

/* Figures of a site or of a location. */
typedef struct HtFig {
  uint64_t allocs;           /* allocation calls (reallocations included) */
  uint64_t bytes;            /* bytes allocated */
  uint64_t reallocs;         /* of allocs: reallocations of a live block */
  uint64_t frees;            /* blocks allocated here and freed */
  uint64_t freed;            /* bytes of those blocks */
  uint64_t temp;             /* temporary allocations (freed before the next
                                allocation of their thread) */
  uint64_t live;             /* bytes live at the end of the pass (leaked) */
  uint64_t live_n;           /* blocks live at the end of the pass */
  uint64_t peak;             /* bytes live when the heap peaked */
  uint64_t peak_n;           /* blocks live when the heap peaked */
  uint64_t at;               /* bytes live at the --at time */
  uint64_t at_n;             /* blocks live at the --at time */
} HtFig;

/* One allocation stack. */
typedef struct HtSite {
  uint32_t stack;            /* global stack id (0 = no frames) */
  uint32_t tid;              /* thread (split sites only, else 0) */
  uint32_t loc;              /* its innermost meaningful location */
  uint32_t group;            /* a sealed tape's: its stack's caller lines as
                                the report groups them + 1 (0: not stored;
                                see HtModel.group_depth) */
  uint8_t rt;                /* runtime domain (split sites only, else 0) */
  uint64_t recent;           /* allocations at or after since_ns */
  uint64_t recent_bytes;     /* their bytes */
  uint64_t stamp;            /* peak epoch when live last changed */
  uint64_t saved;            /* live bytes at the peak of epoch stamp */
  uint64_t saved_n;          /* live blocks at the peak of epoch stamp */
  HtFig f;                   /* figures */
  /* memprof figures (see report_memprof.c); the location's are their sums. */
  uint64_t r_plus;           /* bytes of the reallocations among f.allocs */
  uint64_t r_minus;          /* bytes of the blocks those reallocations replaced */
  uint64_t d_n;              /* deallocations of blocks from here */
  uint64_t d_minus;          /* their bytes */
} HtSite;

/* One location: the innermost meaningful frame, by display name. Carries
** the figures of the memprof layout besides the sum of its sites; all are
** derived from the sites by ht_model_finish. */
typedef struct HtLoc {
  const char *name;          /* display name (in the model's loc_name table) */
  uint64_t frame;            /* frame value of the first frame seen with it */
  HtFig f;                   /* sum over its sites (after ht_model_finish) */
  uint64_t a_n, a_plus;      /* memprof ALLOCATIONS: events, bytes */
  uint64_t r_n, r_plus, r_minus; /* REALLOCATIONS here: events, new, old bytes */
  uint64_t d_n, d_minus;     /* DEALLOCATIONS of blocks from here: events, bytes */
  uint32_t *r_over;          /* locations of blocks that reallocs here replaced */
  uint32_t nr_over;          /* used */
  size_t cr_over;            /* allocated */
  uint32_t *d_over;          /* locations of blocks freed (see report_memprof.c) */
  uint32_t nd_over;          /* used */
  size_t cd_over;            /* allocated */
  uint64_t scratch;          /* free for outputs (snapshots, sorting) */
} HtLoc;

/* One thread. */
typedef struct HtThread {
  uint32_t tid;              /* thread id */
  char name[48];             /* name from THREAD records, "" if none */
  uint64_t events;           /* events of this thread */
  uint64_t allocs;           /* allocation calls (estimated when sampled) */
  uint64_t bytes;            /* bytes allocated */
  uint64_t frees;            /* free events */
  uint64_t last_addr;        /* its latest allocation: address, or index on a
                                sealed tape (HtRes.rs->by_index) */
  int last_valid;            /* last_addr is still a temporary candidate */
  int pend;                  /* a realloc's free awaits its allocation */
  uint32_t pend_site;        /* site of the block the realloc freed, or
                                UINT32_MAX (allocated before the recording) */
  uint64_t pend_bytes;       /* bytes of that block */
  uint64_t pend_n;           /* count of that block */
} HtThread;

typedef struct HtModel HtModel;

/* Called every snap_ns of tape time with the heap as it was then. */
typedef void (*HtSnapFn)(void *arg, const HtModel *m, uint64_t t_ns);
/* Called when a snapshot is due past o.snap_fold: keep every other one
** (the 2nd, 4th, ...); the step doubles. */
typedef void (*HtFoldFn)(void *arg);
/* Called now and then during the pass: events done of about total. */
typedef void (*HtProgressFn)(void *arg, uint64_t done, uint64_t total);
/* Called with every RSS sample: its tape time and resident bytes. */
typedef void (*HtRssFn)(void *arg, uint64_t t_ns, uint64_t rss);

typedef struct HtModelOpts {
  const char *const *wrappers; /* extra wrapper patterns (fnmatch), or NULL */
  size_t nwrappers;          /* patterns */
  uint64_t at_ns;            /* record the composition at this time, or UINT64_MAX */
  uint64_t snap_ns;          /* call on_snap every snap_ns (0 = never) */
  HtSnapFn on_snap;          /* snapshot callback */
  uint32_t snap_max;         /* at most this many snapshots (0 = no limit): a
                                damaged time far past the tape's end must
                                not cost a long loop */
  uint32_t snap_fold;        /* when a snapshot is due past this many (even;
                                0 = never): on_fold, and snap_ns doubles */
  HtFoldFn on_fold;          /* the snapshots' fold callback */
  HtProgressFn progress;     /* progress callback, or NULL */
  HtRssFn on_rss;            /* RSS sample callback, or NULL */
  int split;                 /* one site per (stack, thread, domain), as
                                the pprof export labels them */
  uint64_t since_ns;         /* count HtSite.recent from this time on */
  int no_sites;              /* the caller reads totals and threads only:
                                a sealed tape's sites are not loaded (a
                                pass still makes them) */
  void *arg;                 /* argument of the callbacks */
} HtModelOpts;

struct HtModel {
  HtReader *r;               /* the tape (not owned) */
  HtModelOpts o;             /* options */
  HtSite *site;              /* sites by index */
  uint32_t nsite;            /* used */
  size_t csite;              /* allocated */
  HtMap site_of;             /* stack id -> site index */
  uint32_t *site_last;       /* stack id -> its last site's index + 1 (0: none):
                                most stacks allocate on one thread only */
  size_t csite_last;         /* allocated */
  int by_stack_id;           /* sites not split, found by site_last alone
                                (ht_model_reserve_sites): site_of unused */
  HtLoc *loc;                /* locations by index */
  uint32_t nloc;             /* used */
  size_t cloc;               /* allocated */
  HtStrtab loc_name;         /* location names: id = location index */
  unsigned group_depth;      /* the sites' stored groups (HtSite.group) are
                                the report's at this --stacks (0: none) */
  uint32_t ngroup;           /* those groups: ids below it */
  HtMap frame_memo;          /* frame value -> its levels << 8 | its first
                                level that is not plumbing (255: none) */
  HtMap level_loc;           /* level key (ht_frames_level_key) -> location */
  uint64_t memo_gen;         /* ht_reader_names_gen the two memos hold for */
  HtMap over_seen;           /* (loc, over, kind) triples already listed */
  uint64_t *over;            /* (site << 32 | site of the block replaced) of
                                reallocations, each pair once, first seen first */
  uint32_t nover;            /* used */
  size_t cover;              /* allocated */
  HtMap over_of;             /* site pairs already in over */
  HtResolve rs;              /* resolver of ht_model_event and ht_model_run */
  HtThread *th;              /* threads */
  uint32_t nth;              /* used */
  size_t cth;                /* allocated */
  HtMap th_of;               /* tid -> thread index */
  uint32_t th_last;          /* the last thread looked up: index + 1 (0: none) */
  HtTimeline tl;             /* heap and RSS over time */
  /* Totals. */
  uint64_t events;           /* events delivered by the reader */
  uint64_t by_type[16];      /* events by HT_EV_* */
  uint64_t by_kind[16];      /* allocations by HT_K_FAMILY */
  uint64_t hist[65];         /* allocations by log2 size: [0] size 0,
                                [k] 2^(k-1) <= size < 2^k */
  uint64_t allocs;           /* allocation calls (estimated when sampled) */
  uint64_t bytes;            /* bytes allocated */
  uint64_t reallocs;         /* reallocations of a live block */
  uint64_t frees;            /* blocks freed */
  uint64_t freed;            /* bytes freed */
  uint64_t temp;             /* temporary allocations */
  uint64_t unknown_frees;    /* frees of blocks not allocated on the tape */
  uint64_t unknown_bytes;    /* their bytes, where the free says (sized) */
  uint64_t dup_allocs;       /* allocations of an address already live */
  uint64_t lost;             /* events the writer reported dropped */
  uint64_t heap;             /* bytes live now */
  uint64_t heap_n;           /* blocks live now */
  uint64_t peak;             /* largest heap seen */
  uint64_t peak_n;           /* blocks live at the peak */
  uint64_t peak_ts;          /* when (ns since start) */
  uint64_t peak_seq;         /* seq of the event that made it */
  uint64_t epoch;            /* peak epoch (see above) */
  uint64_t at_heap;          /* heap at the --at time */
  uint64_t at_heap_n;        /* blocks at the --at time */
  int at_done;               /* the --at composition is taken */
  uint64_t next_snap;        /* tape time of the next snapshot */
  uint32_t nsnap;            /* snapshots taken */
  int snap_cut;              /* snapshots stopped (o.snap_max, or folded
                                times near 2^64) */
  uint64_t rss_max;          /* largest RSS event */
  uint64_t first_ts;         /* first event time */
  uint64_t last_ts;          /* last event time */
  uint64_t duration;         /* tape duration, ns (after finish) */
  int oom;                   /* ran out of memory: figures are incomplete */
};

/* Allocations a block stands for: 1, or its weight over its size when
** sampled; blocks keep it below 2^32 (the width the live table had). */
HT_INLINE uint64_t ht_model_count(uint64_t weight, uint64_t size)
{
  return weight > size && size ? (weight + size / 2) / size : 1;
}

/* Set up m over an open reader; o may be NULL. Returns 0 or HEAPTAPE_E_NOMEM. */
int ht_model_init(HtModel *m, HtReader *r, const HtModelOpts *o) HT_HIDDEN;
/* Release everything m owns (not the reader). */
void ht_model_free(HtModel *m) HT_HIDDEN;
/* Feed one resolved event (an HtResFn: m is the model). */
void ht_model_res(void *m, const HtRes *res) HT_HIDDEN;
/* Feed one event of the tape, resolved by m->rs (normally done by
** ht_model_run). */
void ht_model_event(HtModel *m, const HtEvent *ev) HT_HIDDEN;
/* Settle pending state and derive location figures and peak shares. */
void ht_model_finish(HtModel *m) HT_HIDDEN;
/* Location figures (and memprof Overrides) as the sums of their sites';
** done by ht_model_finish. */
void ht_model_derive(HtModel *m) HT_HIDDEN;
/* The whole pass: every event of the reader resolved by m->rs, then
** finish. Returns 0 or
** HEAPTAPE_E_NOMEM (the model is still usable, m->oom set). Commands call
** ht_agg_model (agg.h), which reads a sealed tape's figures instead when
** they say all m needs. */
int ht_model_run(HtModel *m) HT_HIDDEN;

/* For a model filled without a pass (agg.c): the site of (stack, tid, rt)
** (tid and rt count only with o.split; UINT32_MAX on OOM), the record of a
** thread (NULL on OOM), a replaced-block pair of sites. */
uint32_t ht_model_site(HtModel *m, uint32_t stack, uint32_t tid, unsigned rt) HT_HIDDEN;
/* The same, a new site at location loc when it is not HT_LOC_NONE (the
** caller knows it is the stack's: a sealed tape's stored names). */
uint32_t ht_model_site_at(HtModel *m, uint32_t stack, uint32_t tid, unsigned rt,
                          uint32_t loc) HT_HIDDEN;
/* The location of a stack (HT_LOC_NONE on OOM). */
uint32_t ht_model_loc(HtModel *m, uint32_t stack) HT_HIDDEN;
/* Copy every site's live figures into its `at` figures (--at is now). */
void ht_model_take_at(HtModel *m) HT_HIDDEN;
/* Room for n more sites, made at once; 0 or -1 (OOM). */
int ht_model_reserve_sites(HtModel *m, size_t n, uint32_t nstack) HT_HIDDEN;
HtThread *ht_model_thread(HtModel *m, uint32_t tid) HT_HIDDEN;
void ht_model_replaced(HtModel *m, uint32_t si, uint32_t over) HT_HIDDEN;

/* Where a stack's levels as every list shows them begin (ht_frames_levels
** drops the plumbing at its inner end), from the memo the model's site
** naming keeps: a frame's first level that is not plumbing (its levels,
** *levels, when all are); a stack's first such level, 1 with its node and
** level, 0 when none of its first 256 frames has one. */
unsigned ht_model_frame_first(const HtModel *m, uint64_t frame, unsigned *levels) HT_HIDDEN;
int ht_model_first_kept(const HtModel *m, uint32_t stack, uint32_t *node,
                        unsigned *level) HT_HIDDEN;

/* Live bytes and blocks per location right now, into loc[].scratch (bytes);
** used by snapshot callbacks. */
void ht_model_loc_live(const HtModel *m) HT_HIDDEN;

#endif

/* heaptape -- the access report's engine: per allocation site, what the
** program did with its blocks (reads, writes, how much of each block, when)
** from a tape recorded with `heaptape record --access` (access.h). */
#ifndef HT_ACCREP_H
#define HT_ACCREP_H

#include "access.h"

/*
** One pass over the tape (ht_access_run) keeps a state per live block only
** (dropped at its free) and adds each block to its site when it dies (or at
** the end of the tape). Sites are merged by their name (ht_frames_site_name).
** A second pass counts, for the top sites by accesses, the accesses of each
** byte offset of their blocks (DHAT's access counts), offsets 0..1023.
**
** A modify (read-modify-write in one instruction) counts as a read and as a
** write. The findings, in blocks:
**   never     never accessed
**   wonly     written, never read
**   ronly     read-only after initialisation: written, then read, never
**             written after its first read
**   prefix    accessed, but only at its start: the highest offset + size
**             touched is below half of the block
**   early     allocated too early: the time from its allocation to its first
**             access is at least half of its lifetime
**   late      freed too late: the time from its last access to its free is at
**             least half of its lifetime (freed blocks only)
** Lifetime: allocation to free, or to the tape's last event if never freed.
*/

#define HT_ACCREP_HIST 1024      /* byte offsets of the access counts */
#define HT_ACCREP_IDLE_PCT 50    /* early/late: idle share of the lifetime */
#define HT_ACCREP_PREFIX_PCT 50  /* prefix: touched share of the block below this */

typedef struct HtAccSite {
  char *name;                /* site name (owned) */
  uint64_t blocks;           /* blocks allocated at the site */
  uint64_t bytes;            /* their requested bytes */
  uint64_t reads, writes;    /* accesses (a modify is one of each) */
  uint64_t modifies;         /* modifies among them */
  uint64_t bread, bwritten;  /* bytes read and written */
  double byte_secs;          /* sum of size x lifetime (seconds) of its blocks */
  uint64_t never, wonly, ronly, prefix, early, late;  /* findings, in blocks */
  uint64_t prefix_touched;   /* prefix blocks: bytes up to their highest touch */
  uint64_t prefix_bytes;     /* prefix blocks: their sizes */
  double early_idle, late_idle;  /* sums of the idle fractions of those blocks */
  uint64_t max_size;         /* largest block */
  uint64_t *hist;            /* top sites (2nd pass): accesses per byte offset */
  uint64_t hist_beyond;      /* bytes accessed at offsets >= HT_ACCREP_HIST */
} HtAccSite;

/* The state of a live block. */
typedef struct HtAccBlock {
  uint64_t born, first, last;  /* times: allocation, first and last access */
  uint64_t size;             /* requested bytes */
  uint64_t reads, writes;    /* accesses so far */
  uint64_t maxend;           /* highest offset + size touched */
  uint32_t site;             /* index in sites (by stack, before merging) */
  uint8_t read_seen;         /* a read so far */
  uint8_t write_after_read;  /* a write after the first read */
} HtAccBlock;

typedef struct HtAccRep {
  const char *const *wrappers;  /* extra wrapper patterns of site names */
  size_t nwrappers;
  HtAccSite *sites;          /* by stack (ht_accrep_run), merged by name after */
  size_t nsites, capsites;
  HtMap by_stack;            /* stack + 1 -> index + 1 in sites (first pass) */
  HtMap live;                /* allocation index -> index + 1 in blocks */
  HtAccBlock *blocks;        /* live block states (free ones chained by .size) */
  size_t nblocks, capblocks;
  uint64_t freeblock;        /* index + 1 of a free state */
  uint64_t end_ts;           /* last event's time */
  uint64_t accesses;         /* accesses seen */
  uint64_t unknown;          /* accesses to a block not on the tape */
  size_t ntop;               /* sites with access counts (the first ntop) */
  int oom;
} HtAccRep;

/* Byte offsets a top site's access counts cover: its largest block's, at
** most HT_ACCREP_HIST. */
static inline uint64_t ht_accrep_span(const HtAccSite *s)
{
  return s->max_size < HT_ACCREP_HIST ? s->max_size : HT_ACCREP_HIST;
}

/* Start a report; 0 or -1 (out of memory). */
int ht_accrep_init(HtAccRep *a) HT_HIDDEN;
void ht_accrep_free(HtAccRep *a) HT_HIDDEN;
/* Both passes over r (from its start; rewound between): sites named, merged,
** sorted by accesses (then name); the first ntop (at most top) with access
** counts. Returns 0, or HEAPTAPE_E_NOMEM. */
int ht_accrep_run(HtAccRep *a, HtReader *r, size_t top) HT_HIDDEN;

#endif

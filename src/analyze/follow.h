/* heaptape -- following a tape while it is written: the reader's place, the
** model and the per-site figures kept between refreshes, so a refresh costs
** what was appended since the last one, never the whole tape. */
#ifndef HT_FOLLOW_H
#define HT_FOLLOW_H

#include "../base/map.h"
#include "../base/strtab.h"
#include "frames.h"
#include "model.h"
#include "symbolize.h"

#define HT_FOLLOW_HOLD_NS 300000000ull /* a gap in the sequence numbers waits
                                           this long (one thread allocating) */
#define HT_FOLLOW_GAP_NS 2000000000ull /* or this long (several threads: a
                                           thread's packet is still to come), */
#define HT_FOLLOW_GAP_MAX_NS 16000000000ull /* doubled up to this whenever an
                                           event came later than that */
#define HT_FOLLOW_MOMENTS 256          /* moments of the history kept */
#define HT_FOLLOW_MOMENT0 10000000ull  /* their first spacing: 10 ms, doubled
                                           whenever the history is full */
#define HT_FOLLOW_TOP 64               /* sites remembered per moment */

/* One site as the live view lists it: sites merged by their key
** (ht_frames_site_name), named with symbols found on the fly. */
typedef struct HtFollowSite {
  const char *name;          /* site key (in HtFollow.names) */
  uint32_t stack;            /* its stack with most live bytes (or calls) */
  uint64_t live, live_n;     /* bytes and blocks live now */
  uint64_t allocs, bytes;    /* allocation calls and bytes since the start */
  uint64_t rate_n, rate_b;   /* calls and bytes per second of tape time,
                                over the last refresh */
  uint64_t prev_n, prev_b;   /* allocs and bytes at the previous refresh */
  uint64_t best;             /* scratch: figure of stack while merging */
} HtFollowSite;

/* A site's figures at a moment of the history. */
typedef struct HtFollowFig {
  uint32_t site;             /* index in HtFollow.site */
  uint64_t live, live_n;     /* bytes and blocks live */
  uint64_t allocs, bytes;    /* calls and bytes since the start */
} HtFollowFig;

/* The heap at a moment of the history (its top sites by live bytes). */
typedef struct HtFollowMoment {
  uint64_t ts;               /* tape time, ns since the start */
  uint64_t heap, heap_n;     /* bytes and blocks live */
  uint64_t allocs, bytes;    /* calls and bytes since the start */
  uint32_t n;                /* entries of top */
  HtFollowFig top[HT_FOLLOW_TOP]; /* largest sites, by live bytes */
} HtFollowMoment;

/* An address's symbols, cached. */
typedef struct HtFollowSym {
  uint32_t first;            /* first frame in HtFollow.syms */
  uint32_t n;                /* frames */
} HtFollowSym;

struct HtSealFollow;

typedef struct HtFollow {
  char *path;                /* tape file (owned) */
  uint32_t pid;              /* only a tape of this process (0: any) */
  HtReader *r;               /* followed reader, NULL until the tape is there
                                (the sealer's when fed by one) */
  struct HtSealFollow *sf;   /* the sealing pass feeding the model its
                                resolved events (ht_follow_feed), or NULL:
                                f reads r itself */
  HtModel m;                 /* the model, fed what the reader delivers */
  int minit;                 /* m is set up */
  uint64_t fed_bytes;        /* fed: tape bytes at the last refresh */
  uint64_t fed_events;       /* fed: the model's events then */
  HtSymbolizer *sym;         /* libdw, for addresses the tape does not name */
  HtMap declared;            /* module bases declared to sym */
  HtMap symof;               /* address -> index + 1 in symtab */
  HtFollowSym *symtab;       /* cached lookups */
  size_t nsymtab, csymtab;   /* used, allocated */
  HtSymbol *syms;            /* their frames */
  size_t nsyms, csyms;       /* used, allocated */
  HtStrtab symstr;           /* the frames' strings */
  HtStrtab names;            /* site keys: id = index in site */
  HtFollowSite *site;        /* sites by name */
  size_t csite;              /* allocated (used: names.n) */
  uint32_t *group;           /* model site -> index in site */
  size_t ngroup, cgroup;     /* model sites named, allocated */
  size_t ndict;              /* the tape's DICT packets when they were named */
  HtFollowMoment *mom;       /* the history, oldest first */
  uint32_t nmom;             /* moments kept */
  uint64_t ts;               /* tape time consumed so far */
  uint64_t prev_ts;          /* at the previous refresh */
  uint64_t refreshes;        /* polls that delivered events */
  uint64_t polled_bytes;     /* tape bytes taken in by the last poll */
  uint64_t seq_max;          /* largest sequence number taken in */
  uint64_t late;             /* events taken in after a later one (their
                                packet came after their hold ran out): the
                                figures may be off (a free before its
                                allocation counts as an unknown free) */
  uint64_t gap_ns;           /* how long a gap waits, several threads */
  int done;                  /* the tape is closed and wholly read */
  int oom;                   /* out of memory somewhere: figures incomplete */
  char err[512];             /* the last error, one line */
} HtFollow;

/* Set up a follower of the tape at path (not opened yet); pid, when not 0,
** skips a tape of another process (an older run's). 0 or HEAPTAPE_E_NOMEM. */
int ht_follow_init(HtFollow *f, const char *path, uint32_t pid) HT_HIDDEN;
void ht_follow_free(HtFollow *f) HT_HIDDEN;
/* Take in what the tape gained: open it if needed, read new whole packets,
** feed the model, merge sites, update rates and the history. final (the
** writer is gone) delivers the events held back. Fed by a sealer, it polls
** the sealer, whose pass hands the model its events (should the sealer give
** up, f reads the tape again by itself from its start). Returns 0 (also when
** the tape is not there yet and pid is set), or a HEAPTAPE_E_* code with
** f->err set ("<path>: <problem>"). */
int ht_follow_poll(HtFollow *f, int final) HT_HIDDEN;
/* Take the tape's events from sf's sealing pass instead of a reader of f's
** own (`record --live`: one pass over the journal while the program runs,
** sealed when it exits). Call before the first poll; ht_follow_free lets go
** of sf (left open). */
void ht_follow_feed(HtFollow *f, struct HtSealFollow *sf) HT_HIDDEN;
/* Fed by a sealer: let its pass take in what the journal gained, without
** refreshing the figures (between polls, so the sealer keeps up with the
** program). Nothing otherwise. */
void ht_follow_take(HtFollow *f) HT_HIDDEN;
/* The time to ht_reader_hold a followed tape at, for a model fed from it:
** a gap in the sequence numbers waits for the packet that may fill it, long
** enough for m's threads (UINT64_MAX once closed: the writer is gone). */
uint64_t ht_follow_hold_until(const HtModel *m, const HtReadStats *st, int closed) HT_HIDDEN;
/* Sites known (indices of f->site). */
HT_INLINE size_t ht_follow_nsite(const HtFollow *f) { return f->names.n; }
/* Levels of site i's stack (symbolised on the fly), innermost first;
** returns how many (plumbing at the inner end dropped). */
size_t ht_follow_stack(HtFollow *f, size_t i, HtFrameInfo *out, size_t max) HT_HIDDEN;
/* Heap now (bytes, blocks) and the largest heap so far. */
HT_INLINE uint64_t ht_follow_heap(const HtFollow *f) { return f->m.heap; }

#endif

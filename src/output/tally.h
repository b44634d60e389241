/* heaptape -- per (stack, thread, domain) heap figures for the pprof export,
** fed the same events as the model and weighing them by the same rules. */
#ifndef HT_TALLY_H
#define HT_TALLY_H

#include "../base/map.h"
#include "../format/reader.h"

/* Which live set a tally reports as "in use". */
enum { HT_INUSE_END = 0, HT_INUSE_PEAK = 1, HT_INUSE_AT = 2 };

/* Figures of one (stack, thread, domain). */
typedef struct HtTallyEnt {
  uint32_t stack;            /* global stack id */
  uint32_t tid;              /* thread id */
  uint8_t rt;                /* 1 = runtime domain (HT_K_DOMAIN_RT) */
  uint64_t allocs;           /* allocations counted (since since_ns) */
  uint64_t bytes;            /* bytes of those */
  uint64_t live, live_n;     /* live bytes and blocks now */
  uint64_t stamp;            /* peak epoch when live last changed */
  uint64_t saved, saved_n;   /* live figures at the peak of epoch stamp */
  uint64_t at, at_n;         /* live figures at the --at time */
  uint64_t inuse, inuse_n;   /* the chosen live set (after finish) */
} HtTallyEnt;

/* A module seen on the tape (a pprof mapping). */
typedef struct HtTallyMod {
  char *path;                /* module path (owned) */
  char build_id[81];         /* build id as hex, "" if none */
  uint64_t start, limit;     /* address range [start, limit) */
} HtTallyMod;

/* Thread names by tid. */
typedef struct HtTallyThread {
  uint32_t tid;              /* thread id */
  char name[48];             /* name ("" if none) */
} HtTallyThread;

typedef struct HtTally {
  int mode;                  /* HT_INUSE_* */
  uint64_t at_ns;            /* time of HT_INUSE_AT */
  uint64_t since_ns;         /* count allocations after this time only */
  HtTallyEnt *ent;           /* entries */
  uint32_t nent, cent;       /* used, allocated */
  HtMap ent_of;              /* key -> entry index */
  HtMap live;                /* address -> block index */
  struct TallyBlk *blk;      /* live blocks (pool) */
  uint32_t nblk, cblk;       /* used, allocated */
  uint32_t blk_free;         /* head of the free list + 1 */
  HtTallyMod *mod;           /* modules */
  uint32_t nmod, cmod;       /* used, allocated */
  HtTallyThread *th;         /* named threads */
  uint32_t nth, cth;         /* used, allocated */
  uint64_t allocs, bytes;    /* totals counted (since since_ns) */
  uint64_t heap, heap_n;     /* live now */
  uint64_t peak, peak_n;     /* largest heap and its blocks */
  uint64_t peak_ts;          /* when */
  uint64_t epoch;            /* peak epoch */
  uint64_t at_heap, at_heap_n; /* heap at at_ns */
  int at_done;               /* the at composition is taken */
  uint64_t inuse, inuse_n;   /* the chosen live set's totals (after finish) */
  uint64_t events;           /* events fed */
  uint64_t last_ts;          /* latest event time */
  int oom;                   /* out of memory: figures incomplete */
} HtTally;

/* Set up an empty tally reporting `mode` (at_ns for HT_INUSE_AT). */
int ht_tally_init(HtTally *t, int mode, uint64_t at_ns) HT_HIDDEN;
/* Release what t owns. */
void ht_tally_free(HtTally *t) HT_HIDDEN;
/* Feed one event. */
void ht_tally_event(HtTally *t, const HtEvent *ev) HT_HIDDEN;
/* Settle the chosen live set into inuse/inuse_n. */
void ht_tally_finish(HtTally *t) HT_HIDDEN;
/* Name of a thread, or NULL. */
const char *ht_tally_thread(const HtTally *t, uint32_t tid) HT_HIDDEN;
/* Module containing ip, or NULL. */
const HtTallyMod *ht_tally_module(const HtTally *t, uint64_t ip) HT_HIDDEN;

#endif

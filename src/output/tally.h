/* heaptape -- the figures the pprof export needs, per (stack, thread, domain),
** taken from a model run with split sites (HtModelOpts.split). */
#ifndef HT_TALLY_H
#define HT_TALLY_H

#include "../analyze/model.h"

/* Which live set a tally reports as "in use". */
enum { HT_INUSE_END = 0, HT_INUSE_PEAK = 1, HT_INUSE_AT = 2 };

/* Figures of one (stack, thread, domain). */
typedef struct HtTallyEnt {
  uint32_t stack;            /* global stack id */
  uint32_t tid;              /* thread id */
  uint8_t rt;                /* 1 = runtime domain (HT_K_DOMAIN_RT) */
  uint64_t allocs;           /* allocations counted (since the model's since_ns) */
  uint64_t bytes;            /* bytes of those */
  uint64_t inuse, inuse_n;   /* the chosen live set */
} HtTallyEnt;

/* A module seen on the tape (a pprof mapping). */
typedef struct HtTallyMod {
  const char *path;          /* module path (the reader's) */
  char build_id[129];        /* build id as hex, "" if none */
  uint64_t start, limit;     /* address range [start, limit) */
} HtTallyMod;

typedef struct HtTally {
  const HtModel *m;          /* the model the figures come from */
  int mode;                  /* HT_INUSE_* */
  HtTallyEnt *ent;           /* entries, one per split site */
  uint32_t nent;             /* entries */
  HtTallyMod *mod;           /* modules */
  uint32_t nmod;             /* modules */
  uint64_t allocs, bytes;    /* totals counted */
  uint64_t inuse, inuse_n;   /* the chosen live set's totals */
  uint64_t last_ts;          /* latest event time */
} HtTally;

/* Take the figures of a finished model with split sites, reporting `mode`
** as in use. Returns 0 or HEAPTAPE_E_NOMEM. */
int ht_tally_from_model(HtTally *t, const HtModel *m, int mode) HT_HIDDEN;
/* Release what t owns. */
void ht_tally_free(HtTally *t) HT_HIDDEN;
/* Name of a thread, or NULL. */
const char *ht_tally_thread(const HtTally *t, uint32_t tid) HT_HIDDEN;
/* Module containing ip, or NULL. */
const HtTallyMod *ht_tally_module(const HtTally *t, uint64_t ip) HT_HIDDEN;

#endif

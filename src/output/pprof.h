/* heaptape -- the pprof export: one or more tallies into a gzipped
** perftools.profiles.Profile heap profile (see docs/PPROF.md). */
#ifndef HT_PPROF_H
#define HT_PPROF_H

#include "tally.h"

typedef struct HtPprof HtPprof;

/* Symbols for a native address the tape does not name (a tape still being
** recorded): inline chain innermost first into out[max]; returns how many,
** 0 if unknown. Strings must stay valid until ht_pprof_add returns. */
typedef size_t (*HtPprofSymFn)(void *arg, const HtTallyMod *mod, uint64_t ip,
                               HtSymbol *out, size_t max);

/* Where the samples of one tape come from. */
typedef struct HtPprofSrc {
  const HtReader *r;         /* the tape (symbols, locations, stacks) */
  const HtTally *t;          /* its figures (after ht_tally_finish) */
  const char *const *wrappers; /* extra wrapper patterns, or NULL */
  size_t nwrappers;          /* patterns */
  HtPprofSymFn sym;          /* fallback symbols, or NULL */
  void *sym_arg;             /* its argument */
  uint64_t time_ns;          /* profile time (ns since the epoch), 0 = none */
  uint64_t duration_ns;      /* span the samples cover */
} HtPprofSrc;

/* Totals written, per sample type. */
typedef struct HtPprofTotals {
  uint64_t alloc_objects, alloc_space; /* allocations */
  uint64_t inuse_objects, inuse_space; /* the chosen live set */
  uint64_t samples;          /* samples written */
} HtPprofTotals;

/* A new, empty profile; NULL on OOM. */
HtPprof *ht_pprof_new(void) HT_HIDDEN;
void ht_pprof_destroy(HtPprof *p) HT_HIDDEN;
/* Add every (stack, thread) of one tape; tapes added later are merged in.
** Returns 0 or HEAPTAPE_E_NOMEM. */
int ht_pprof_add(HtPprof *p, const HtPprofSrc *src) HT_HIDDEN;
/* Add a free-text comment. */
int ht_pprof_comment(HtPprof *p, const char *text) HT_HIDDEN;
/* Totals of what was added so far. */
void ht_pprof_totals(const HtPprof *p, HtPprofTotals *out) HT_HIDDEN;
/* Serialise, gzip and write to path (atomically: a temporary file renamed
** over it). Returns 0, or -1 with one line in err. */
int ht_pprof_write(HtPprof *p, const char *path, char *err, size_t errlen) HT_HIDDEN;

#endif

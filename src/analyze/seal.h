/* heaptape -- sealing: a journal (format version 1) rewritten as a sealed
** tape (version 2) by one resolving pass; see docs/FORMAT.md. */
#ifndef HT_SEAL_H
#define HT_SEAL_H

#include <stdint.h>
#include <stdio.h>
#include "../base/ht_def.h"
#include "model.h"
#include "resolve.h"

#define HT_SEAL_SYMBOLIZE 0x01  /* symbolise a journal that is not yet */

/* What sealing found and did. */
typedef struct HtSealSummary {
  int already;               /* the tape was sealed: nothing done */
  uint64_t events;           /* events sealed */
  uint64_t allocs;           /* allocations among them */
  uint64_t journal_bytes;    /* size of the journal */
  uint64_t sealed_bytes;     /* size of the sealed tape */
  double seconds;            /* wall time of the pass */
} HtSealSummary;

/* Seal the tape at path in place (written beside it, then renamed over
** it); a sealed tape is left as it is. Returns 0, or a HEAPTAPE_E_* code
** with one line "<path>: <problem>" in err. sum may be NULL. */
int ht_seal_tape(const char *path, unsigned flags, HtSealSummary *sum, char *err,
                 size_t errlen) HT_HIDDEN;

/* -- One sealing pass, driven by its caller (ht_seal_tape, or the sealer
** that follows a journal while it is written: sealfollow.h) ------------- */

typedef struct HtSealer HtSealer;

/* Begin sealing the events r will deliver into f (not owned): the header
** now, blocks as events come, the rest at ht_sealer_finish; the HTML page's
** snapshots fold as the events come (ht_snaps_setup), so a journal still
** growing gets the same as a whole one (end_ns: a length the journal is
** known to reach, 0 if none). NULL when out of memory. */
HtSealer *ht_sealer_new(HtReader *r, FILE *f, uint64_t end_ns) HT_HIDDEN;
/* The pass's model (sites split by thread, as pprof labels them), as far as
** the events sealed go: for a reader of the same figures while it runs. */
HtModel *ht_sealer_model(HtSealer *sealer) HT_HIDDEN;
/* HtResFn: one resolved event, in the journal's global order. */
void ht_sealer_event(void *sealer, const HtRes *res) HT_HIDDEN;
/* Write the rest from r's final reading (its dictionaries, damage and
** totals: poll a followed reader first) and free the sealer; rs is the
** resolver that fed it, failed the pass's error (0: none). Returns 0 or a
** HEAPTAPE_E_* code. */
int ht_sealer_finish(HtSealer *s, const HtResolve *rs, int failed) HT_HIDDEN;
/* Flush, sync and close f, written at tmp with the result rc so far, and
** rename it over path; on failure remove tmp and put one line in err.
** Returns the final rc. */
int ht_seal_commit(FILE *f, const char *tmp, const char *path, int rc, char *err,
                   size_t errlen) HT_HIDDEN;

#endif

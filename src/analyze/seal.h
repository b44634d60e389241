/* heaptape -- sealing: a journal (format version 1) rewritten as a sealed
** tape (version 2) by one resolving pass; see docs/FORMAT.md. */
#ifndef HT_SEAL_H
#define HT_SEAL_H

#include <stdint.h>
#include "../base/ht_def.h"

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

#endif

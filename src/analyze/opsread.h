/* heaptape -- the text form of the operations stream read back (`heaptape
** ops` and `heaptape locks` output, or a hand-made file in that form). */
#ifndef HT_OPSREAD_H
#define HT_OPSREAD_H

#include <stdio.h>
#include "ops.h"

/*
** Lines as docs/ALLOCATORS.md gives them: "SEQ TID N HANDLE SIZE [C|A<n>|R<old>]",
** "SEQ TID F HANDLE [R]", "SEQ TID K HANDLE", "SEQ TID U HANDLE"; lines
** starting with '#' and empty lines are skipped. Accesses of `ops
** --access`, "SEQ TID L|S|M HANDLE 0xADDR SIZE", come as ops of that letter
** (addr, size) when their block is live, else are skipped; other letters are
** skipped. The first line must start with "# heaptape ops". HtOp.index
** counts the N and F lines; a Free gets its block's size; live and the peak
** are kept as ht_ops does.
*/

#define HT_OPSREAD_MAGIC "# heaptape ops"

typedef struct HtOpsRead {
  FILE *f;                   /* the file */
  const char *path;          /* its name, for messages */
  uint64_t line;             /* line number of the last line read */
  HtMap live;                /* handle -> size + 1 of the live blocks */
  uint64_t nops;             /* N and F lines so far */
  uint64_t max_handle;       /* largest handle seen */
  uint64_t live_bytes;       /* requested bytes live */
  uint64_t peak, peak_index; /* largest live bytes, op after which first reached */
  int oom;                   /* out of memory */
} HtOpsRead;

/* Whether the file at path starts as an operations log. */
int ht_opsread_is(const char *path) HT_HIDDEN;
/* Open path; 0, or -1 with err set. */
int ht_opsread_open(HtOpsRead *o, const char *path, char *err, size_t errlen) HT_HIDDEN;
/* The next operation: 1, 0 at the end, -1 with err set ("PATH:LINE: ..."). */
int ht_opsread_next(HtOpsRead *o, HtOp *op, char *err, size_t errlen) HT_HIDDEN;
/* Back to the first line, every count forgotten; 0 or -1. */
int ht_opsread_rewind(HtOpsRead *o) HT_HIDDEN;
/* Close the file and release what o owns. */
void ht_opsread_close(HtOpsRead *o) HT_HIDDEN;

#endif

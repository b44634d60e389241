/* heaptape -- the binary operations file `heaptape replay` hands to each
** replay runner: a header and fixed 32-byte records, read by mmap. */
#ifndef HT_OPFILE_H
#define HT_OPFILE_H

#include <stdint.h>

/*
** opfile := head rec{nrecs}       (host byte order; a private temporary file)
** rec.op  : 'N' new block, 'F' free (ht_ops HT_OP_*); 'K' lock, 'U' unlock
**           (HT_OP_LOCK/UNLOCK of src/analyze/locks.h, only with --locks):
**           not operations of the program, counted in nrecs, not in nops
** rec.flags: HT_OPF_* of src/analyze/ops.h. A Free with HT_OPF_REALLOC is
**           always completed later by a New with HT_OPF_REALLOC whose aux is
**           its handle (the writer clears the flag of realloc Frees that are
**           not), so a runner may keep the block until then and realloc it.
** rec.aux : New: alignment (HT_OPF_ALIGN) or the replaced handle (REALLOC).
*/

#define HT_OPFILE_MAGIC "HTOPS\0\0\2"  /* 2: K and U records, nrecs */

typedef struct HtOpFileHead {
  char magic[8];             /* HT_OPFILE_MAGIC */
  uint64_t nops;             /* operations of the program (N and F records) */
  uint64_t nhandles;         /* handles are 1..nhandles */
  uint64_t peak;             /* largest live bytes */
  uint64_t peak_index;       /* op after which live bytes first peak */
  uint64_t nrecs;            /* records: nops plus the K and U records */
  uint64_t reserved[2];      /* zero */
} HtOpFileHead;

typedef struct HtOpRec {
  uint8_t op;                /* 'N', 'F', 'K' or 'U' */
  uint8_t flags;             /* HT_OPF_* */
  uint16_t pad;              /* zero */
  uint32_t tid;              /* thread of the tape */
  uint64_t handle;           /* block handle */
  uint64_t size;             /* requested bytes */
  uint64_t aux;              /* alignment or replaced handle */
} HtOpRec;

/* The runner's series comes back as text lines of these seven fields. */
/* One sample of a runner's series. */
typedef struct HtReplaySample {
  uint64_t index;            /* op after which it was taken */
  uint64_t used;             /* live requested bytes */
  int64_t rss;               /* anonymous resident bytes above the baseline */
  int64_t mapped;            /* virtual bytes above the baseline */
  uint64_t a_in_use;         /* the allocator's own in-use figure (0 = none) */
  uint64_t a_mapped;         /* the allocator's own mapped figure (0 = none) */
  uint64_t op_ns;            /* time in the allocator since the last sample */
} HtReplaySample;

#endif

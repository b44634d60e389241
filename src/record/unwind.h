/* heaptape -- the unwinder contract: fill return addresses, innermost first.
** Variants live in whole files (unwind_libunwind.c, unwind_fp.c). */
#ifndef HT_UNWIND_H
#define HT_UNWIND_H

#include "recdef.h"

/* Every variant: no allocation through the traced allocator, no lock that
** an allocation could hold, never faults on a missing frame pointer. */

/* One frame of the previous libunwind-mode walk (unwind_libunwind.c). */
typedef struct HtUnwFrame {
  uintptr_t ip;          /* ip in the frame (a return address but innermost) */
  uintptr_t sp;          /* rsp in the frame: the CFA of the frame inside it */
  uintptr_t rbp;         /* rbp in the frame (CFA rules may be rbp-based) */
  uintptr_t rbp_slot;    /* stack word rbp was restored from; 0 = a register */
} HtUnwFrame;

/* One return address's frame rule (unwind_libunwind.c). */
typedef struct HtUnwRule {
  uintptr_t ip;          /* return address (key), 0 = empty slot */
  int32_t cfa_off;       /* CFA = base register + cfa_off */
  int16_t rbp_off;       /* caller's rbp at CFA + rbp_off; RBP_KEEP = untouched */
  uint8_t kind;          /* RULE_* */
  uint8_t pad;           /* (unused) */
} HtUnwRule;

/* The previous walk (outermost first, so that a new walk rewrites only
** its inner end) and the thread's front to the table of frame rules. */
typedef struct HtUnwCache {
  uint32_t n;            /* frames of the previous walk, 0 = none */
  int trunc;             /* the previous walk stopped at its frame cap */
  HtUnwRule hot[64];     /* recently used rules, direct-mapped */
  HtUnwFrame fr[HT_MAXFRAMES + 8]; /* the previous walk, outermost first */
  HtUnwFrame in[HT_MAXFRAMES + 8]; /* scratch: this walk, innermost first */
} HtUnwCache;

/* Fill ips innermost first; returns the number of frames. lo/hi bound the
** calling thread's stack (0 = unknown). */
int ht_unwind_fp(uintptr_t *ips, int max, uintptr_t lo, uintptr_t hi) HT_HIDDEN;
/* libunwind mode: reuses uc's previous walk; *in_fr set when the frames are
** in uc->fr (outermost first) rather than in ips. */
int ht_unwind_cached(HtUnwCache *uc, uintptr_t *ips, int max, uintptr_t lo,
                     uintptr_t hi, int *in_fr) HT_HIDDEN;
/* Start libunwind and the rule table (set-up). */
void ht_unwind_init(void) HT_HIDDEN;

#endif

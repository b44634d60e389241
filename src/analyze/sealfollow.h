/* heaptape -- sealing a journal while it is written: `heaptape record`
** follows the program's journal on the other core, so that when the
** program exits only the tail is left to seal. */
#ifndef HT_SEALFOLLOW_H
#define HT_SEALFOLLOW_H

#include <stdio.h>
#include "resolve.h"
#include "seal.h"
#include "symbolize.h"

typedef struct HtSealFollow {
  char *path;                /* the journal (owned) */
  char *tmp;                 /* the sealed tape being written: PATH.sealing */
  uint32_t pid;              /* only a journal of this process */
  uint64_t since_ns;         /* started no earlier than this (realtime ns) */
  HtReader *r;               /* followed journal, NULL until it is there */
  HtResolve rs;              /* the sealing resolver: every live block */
  HtSealer *s;               /* the pass */
  FILE *f;                   /* tmp */
  HtSymbolizer *sy;          /* finalisation's, told the modules as they come */
  HtSymSummary sum;          /* finalisation's summary, counted as events come */
  HtSymScan scan;            /* its state */
  uint64_t seq_max;          /* largest sequence number sealed */
  uint32_t tid0;             /* the first thread that allocated (0: none yet) */
  int several;               /* another thread allocated too */
  uint64_t tail;             /* events left to seal when the writer was gone */
  HtResFn also;              /* a second consumer of the events (the live
                                view's: ht_sealfollow_also), or NULL */
  void *also_ctx;            /* its argument */
  int off;                   /* given up (why[]): the caller seals offline */
  char why[256];
} HtSealFollow;

/* Set up a sealer of the journal at path written by process pid started at
** or after since_ns (nothing is opened yet). 0 or HEAPTAPE_E_NOMEM. */
int ht_sealfollow_init(HtSealFollow *sf, const char *path, uint32_t pid,
                       uint64_t since_ns) HT_HIDDEN;
/* Seal what the journal gained (opening it once it is there); final (the
** writer is gone) delivers the events held back. Returns the number of
** events sealed by this call (0: nothing new). A journal whose order cannot
** be followed exactly (an event arrived after a later one was sealed) or an
** error sets sf->off: the caller seals it offline at the end. */
uint64_t ht_sealfollow_poll(HtSealFollow *sf, int final) HT_HIDDEN;
/* Hand every resolved event to fn(ctx, res) too, after the sealer (NULL:
** no more), with sf->r the reader; the reader is closed when sf->off is set
** (the consumer reads on by itself then). */
void ht_sealfollow_also(HtSealFollow *sf, HtResFn fn, void *ctx) HT_HIDDEN;
/* The writer is gone: seal the rest, symbolise the journal (its dictionary
** appended, as `heaptape symbolize` does), finish the sealed tape and put
** it in the journal's place (keep: the journal renamed to keep first, when
** not NULL). *sum gets finalisation's summary. Returns 0; 1 when sf->off
** (nothing done: seal offline); or a HEAPTAPE_E_* code with err set. */
int ht_sealfollow_finish(HtSealFollow *sf, const char *keep, HtSymSummary *sum, char *err,
                         size_t errlen) HT_HIDDEN;
/* The sealing pass's model while it follows the journal (NULL: not open
** yet, or given up); its `recent` figures are the caller's to reset. */
HtModel *ht_sealfollow_model(HtSealFollow *sf) HT_HIDDEN;
/* Release everything; a sealed tape not finished is removed. */
void ht_sealfollow_free(HtSealFollow *sf) HT_HIDDEN;

#endif

/* heaptape -- finalisation: native addresses of a tape symbolised with libdw
** (function, file, line, inline chain) and appended to it as DICT packets. */
#ifndef HT_SYMBOLIZE_H
#define HT_SYMBOLIZE_H

#include "../format/reader.h"
#include "../format/stream.h"
#include "../format/writer.h"
#include "resolve.h"

/* Flags of ht_symbolize_run. */
#define HT_SYM_NOSYMBOLS 0x01  /* only count (events, bytes, peak); append nothing */
#define HT_SYM_QUIET     0x02  /* no warnings on stderr */

/* What finalisation found and did. */
typedef struct HtSymSummary {
  uint64_t events;           /* events read from the tape */
  uint64_t allocated;        /* bytes allocated (sample weights) */
  uint64_t peak;             /* peak of live bytes (sample weights) */
  uint64_t modules;          /* MODULE events seen */
  uint64_t modules_skipped;  /* modules missing on disk or not the recorded file */
  uint64_t addrs;            /* unique native addresses needing a symbol */
  uint64_t resolved;         /* of which libdw named the function */
  uint64_t with_line;        /* of which it also found file:line */
  uint64_t dict_bytes;       /* bytes appended to the tape */
  int truncated;             /* the tape was cut short (no trailer, partial packet) */
  int peak_unknown;          /* the pass ran out of memory for its live blocks:
                                peak (and frees after that) not known */
  double seconds;            /* wall time of the whole pass */
  double sym_seconds;        /* of which symbolisation */
} HtSymSummary;

/* Symbolise every native address of the tape at path once and append the
** symbols to it (dictionary id 1). Returns 0, or a HEAPTAPE_E_* code with
** one line "<path>: <problem>" in err. */
int ht_symbolize_tape(const char *path, char *err, size_t errlen) HT_HIDDEN;
/* The same, with HT_SYM_* flags and totals in *sum (may be NULL). */
int ht_symbolize_run(const char *path, unsigned flags, HtSymSummary *sum,
                     char *err, size_t errlen) HT_HIDDEN;

/* -- The symboliser alone (used by the above; unit-testable) -------------- */

typedef struct HtSymbolizer HtSymbolizer;

/* One frame of an inline chain; strings owned by the symboliser, valid
** until the next ht_symbolizer_lookup. */
typedef struct HtSymOut {
  const char *func;          /* demangled function, never NULL */
  const char *file;          /* source file, or NULL */
  uint32_t line;             /* line, 0 if unknown */
} HtSymOut;

/* New symboliser; flags HT_SYM_QUIET silences warnings. NULL on OOM. */
HtSymbolizer *ht_symbolizer_new(unsigned flags) HT_HIDDEN;
void ht_symbolizer_destroy(HtSymbolizer *s) HT_HIDDEN;
/* Declare a module loaded at base (load bias: ELF vaddr + base = address).
** build_id, when non-empty, must match the file on disk or the module is
** skipped (one warning). Returns 0, or -1 if skipped. */
int ht_symbolizer_module(HtSymbolizer *s, const char *path, uint64_t base,
                         const uint8_t *build_id, size_t bid_len,
                         const HtSegment *segs, size_t nseg) HT_HIDDEN;
/* Declare the module of a MODULE event (its path; an empty path is the
** main program, exe when given). Returns as ht_symbolizer_module. */
int ht_symbolizer_event(HtSymbolizer *s, const HtEvent *ev, const char *exe) HT_HIDDEN;
/* Symbolise a return address (looked up at ip - 1): inline chain innermost
** first into out[max]; returns the number of frames (at least 1: an
** unresolved address gets "<module>+0xoffset" or "0x<ip>"). */
size_t ht_symbolizer_lookup(HtSymbolizer *s, uint64_t ip, HtSymOut *out,
                            size_t max) HT_HIDDEN;

/* -- Its pieces, for a caller that reads the tape itself (the sealer that
** follows a journal while it is written, sealfollow.c) ------------------- */

/* The summary pass's state: events, bytes and peak counted into *sum, MODULE
** events declared to sy (may be NULL). Zero it, set r, sy and sum. */
typedef struct HtSymScan {
  HtReader *r;               /* the tape */
  HtSymbolizer *sy;          /* gets MODULE events, or NULL */
  HtSymSummary *sum;         /* totals being counted */
  uint64_t cur;              /* bytes live now */
} HtSymScan;
/* HtResFn: count one resolved event (ctx is HtSymScan *). */
void ht_symscan_event(void *ctx, const HtRes *res) HT_HIDDEN;
/* Symbolise the addresses of r's stack table (r read to its end, its
** modules declared to sy) into *out (NULL: nothing to add). 0, or a
** HEAPTAPE_E_* code with "<path>: <problem>" in err. */
int ht_symbolize_dict(HtReader *r, const char *path, HtSymbolizer *sy, HtSymSummary *sum,
                      HtDict **out, char *err, size_t errlen) HT_HIDDEN;
/* Append d to the tape at path (process pid), cutting it to keep bytes
** first (a partial last packet); sets sum->dict_bytes and the header's
** HT_F_SYMBOLIZED. 0, or a HEAPTAPE_E_* code with err set. */
int ht_symbolize_append(const char *path, HtDict *d, uint32_t pid, uint64_t keep,
                        HtSymSummary *sum, char *err, size_t errlen) HT_HIDDEN;
/* Raise the journal at path, read by r, to version 6 when it declares
** Python or Ruby locations (as ht_symbolize_run does). */
void ht_symbolize_rtlocs(const HtReader *r, const char *path) HT_HIDDEN;

#endif

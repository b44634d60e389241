/* heaptape -- the recorder's options in one table: the recorder reads them
** from HEAPTAPE_* variables, `heaptape record` makes its flags and --help. */
#ifndef HT_OPTIONS_H
#define HT_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include "ht_def.h"

#ifndef HT_DEFAULT_FRAMES
#define HT_DEFAULT_FRAMES 64      /* native frames per stack */
#endif
#ifndef HT_DEFAULT_ZSTD
#define HT_DEFAULT_ZSTD 1         /* zstd level of tape packets */
#endif
#define HT_MAXFRAMES 256          /* hard cap of HEAPTAPE_FRAMES */

/*
** X(field, NAME, flag, type, def, lo, hi, arg, choices, help):
**   field    member of HtOptions
**   NAME     the environment variable is HEAPTAPE_<NAME>
**   flag     `heaptape record --<flag>`, or NULL: environment only
**   type     STR text; SIZE bytes with K/M/G suffixes; UINT decimal count;
**            BOOL 1/yes/on/true or 0/no/off/false (a flag takes no value);
**            CHOICE one of choices, "name=value|...", stored as its value
**   def      default (numbers); lo, hi: the accepted range
**   arg      the value's name in --help
**   help     what it does (`heaptape record --help` wraps it)
** Values that do not parse or fall outside lo..hi: the recorder warns once
** and keeps the default; `heaptape record` refuses them.
*/
#define HT_OPTIONS(X) \
  X(output, OUTPUT, "output", STR, 0, 0, 0, "FILE", NULL, \
    "tape to write; %p stands for the pid, %e for the program " \
    "(default heaptape.<prog>.<pid>.tape)") \
  X(sample, SAMPLE, "sample", SIZE, 0, 0, 1ULL << 40, "BYTES", NULL, \
    "sample one allocation per BYTES on average (Poisson by bytes, " \
    "K/M/G suffixes); 0 records every event") \
  X(unwind, UNWIND, "unwind", CHOICE, 1, 0, 2, "METHOD", "libunwind=1|fp=2|none=0", \
    "libunwind (default), fp (frame pointers) or none") \
  X(frames, FRAMES, "frames", UINT, HT_DEFAULT_FRAMES, 1, HT_MAXFRAMES, "N", NULL, \
    "frames kept per stack, native and (--lua) Lua (1..256, default 64; " \
    "Lua keeps at most 64)") \
  X(follow_fork, FOLLOW_FORK, "follow-fork", BOOL, 0, 0, 1, NULL, NULL, \
    "keep recording in forked children (one tape each, FILE.<pid> unless " \
    "FILE has %p)") \
  X(follow_exec, FOLLOW_EXEC, "follow-exec", BOOL, 0, 0, 1, NULL, NULL, \
    "record the programs that children execute too (PROG itself is " \
    "followed through its own execs always: each image on a tape of its " \
    "own, FILE with .<program> before .tape, all listed when it ends)") \
  X(seed, SEED, NULL, UINT, 1, 0, UINT64_MAX, "N", NULL, \
    "seed of the sampling PRNG: the same seed, the same samples") \
  X(zstd, ZSTD, NULL, UINT, HT_DEFAULT_ZSTD, 0, 19, "LEVEL", NULL, \
    "zstd level of tape packets (0..19, default 1); 0 stores them raw") \
  X(no_membarrier, NO_MEMBARRIER, NULL, BOOL, 0, 0, 1, NULL, NULL, \
    "1: threads own their buffers by CAS, not by the writer's membarrier " \
    "fences (docs/INTERNALS.md)")

/* Kinds of value. */
enum { HT_OPT_STR, HT_OPT_SIZE, HT_OPT_UINT, HT_OPT_BOOL, HT_OPT_CHOICE };

/* Index of each option in ht_options: HT_OPTION_OUTPUT, ... */
enum {
#define HT_OPT_INDEX(field, NAME, ...) HT_OPTION_##NAME,
  HT_OPTIONS(HT_OPT_INDEX)
#undef HT_OPT_INDEX
  HT_OPTION__COUNT
};

/* The values, one member per option (the recorder's ht_opt). */
#define HT_OPT_STRMAX 4096        /* bytes of a STR value, its NUL included */
#define HT_OPT_FIELD_STR(f) char f[HT_OPT_STRMAX];
#define HT_OPT_FIELD_SIZE(f) uint64_t f;
#define HT_OPT_FIELD_UINT(f) uint64_t f;
#define HT_OPT_FIELD_BOOL(f) int f;
#define HT_OPT_FIELD_CHOICE(f) int f;
typedef struct HtOptions {
#define HT_OPT_FIELD(field, NAME, flag, type, ...) HT_OPT_FIELD_##type(field)
  HT_OPTIONS(HT_OPT_FIELD)
#undef HT_OPT_FIELD
} HtOptions;

/* One row of the table. */
typedef struct HtOptDef {
  const char *env;       /* HEAPTAPE_<NAME> */
  const char *flag;      /* long flag of `heaptape record`, or NULL */
  int type;              /* HT_OPT_* */
  uint64_t def, lo, hi;  /* default and accepted range (numbers) */
  const char *arg;       /* the value's name in --help, or NULL */
  const char *choices;   /* CHOICE: "name=value|...", else NULL */
  const char *help;      /* what it does */
  size_t off;            /* offset of its member in HtOptions */
} HtOptDef;

extern const HtOptDef ht_options[HT_OPTION__COUNT] HT_HIDDEN;

/* Parse s as option d's value into *v (a CHOICE gives its value, a BOOL 0
** or 1); 0, or -1 if malformed or outside lo..hi. STR always fails. */
int ht_option_parse(const HtOptDef *d, const char *s, uint64_t *v) HT_HIDDEN;
/* Store number v (or, for STR, the string at s, cut to fit) into o. */
void ht_option_store(const HtOptDef *d, HtOptions *o, uint64_t v, const char *s) HT_HIDDEN;
/* o with every option at its default. */
void ht_options_defaults(HtOptions *o) HT_HIDDEN;

#endif

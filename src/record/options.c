/* heaptape -- recorder options from one table of HEAPTAPE_* variables, read
** from the environment without allocating; bad values warn and keep defaults. */
#include <stdlib.h>
#include <string.h>

#include "recdef.h"
#include "../format/format.h"

#ifndef HT_DEFAULT_FRAMES
#define HT_DEFAULT_FRAMES 64
#endif
#ifndef HT_DEFAULT_ZSTD
#define HT_DEFAULT_ZSTD 1
#endif

HtOptions ht_opt;

enum { OPT_STR, OPT_SIZE, OPT_INT, OPT_BOOL, OPT_UNWIND };

typedef struct OptDef {
  const char *env;       /* variable name */
  int type;              /* OPT_* */
  size_t off;            /* field offset in HtOptions */
  uint64_t def;          /* default (numbers) */
  uint64_t lo, hi;       /* accepted range (numbers) */
  const char *help;      /* one line for `heaptape record --help` */
} OptDef;

#define OFF(f) offsetof(HtOptions, f)
static const OptDef opt_table[] = {
  { "HEAPTAPE_OUTPUT", OPT_STR, OFF(output), 0, 0, 0,
    "tape path; %p is the pid (default heaptape.<prog>.<pid>.tape)" },
  { "HEAPTAPE_SAMPLE", OPT_SIZE, OFF(sample), 0, 0, 1ULL << 40,
    "mean bytes between Poisson samples, K/M/G suffixes; 0 records all" },
  { "HEAPTAPE_UNWIND", OPT_UNWIND, OFF(unwind), HT_UNWIND_LIBUNWIND, 0, 0,
    "libunwind | fp | none" },
  { "HEAPTAPE_FRAMES", OPT_INT, OFF(frames), HT_DEFAULT_FRAMES, 1, HT_MAXFRAMES,
    "maximum native frames per stack" },
  { "HEAPTAPE_FOLLOW_FORK", OPT_BOOL, OFF(follow_fork), 0, 0, 1,
    "1: forked children write their own tape (<output>.<pid>)" },
  { "HEAPTAPE_FOLLOW_EXEC", OPT_BOOL, OFF(follow_exec), 0, 0, 1,
    "1: exec'd programs stay preloaded and write their own tape" },
  { "HEAPTAPE_SEED", OPT_SIZE, OFF(seed), 1, 0, UINT64_MAX,
    "seed of the sampling PRNG" },
  { "HEAPTAPE_ZSTD", OPT_INT, OFF(zstd), HT_DEFAULT_ZSTD, 0, 19,
    "zstd level of tape packets (writer thread); 0 stores them raw" },
};

/* -- Environment --------------------------------------------------------------- */

/* getenv that reads environ itself: a program may define its own getenv
** (bash does, answering from tables it has not built before main). */
const char *ht_getenv(const char *name)
{
  extern char **environ;
  size_t n = strlen(name);
  for (char **e = environ; e && *e; e++)
    if (!strncmp(*e, name, n) && (*e)[n] == '=') return *e + n + 1;
  return NULL;
}

/* -- Parsing ---------------------------------------------------------------- */

/* Parse a number with an optional K/M/G suffix; 0 on success. */
static int opt_number(const char *s, uint64_t *out)
{
  uint64_t v = 0;
  const char *p = s;
  if (*p < '0' || *p > '9') return -1;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (v > (UINT64_MAX - 9) / 10) return -1;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  unsigned shift = 0;
  switch (*p) {
  case 'k': case 'K': shift = 10; p++; break;
  case 'm': case 'M': shift = 20; p++; break;
  case 'g': case 'G': shift = 30; p++; break;
  }
  if (shift && (*p == 'b' || *p == 'B')) p++;
  if (*p) return -1;
  if (shift && v > (UINT64_MAX >> shift)) return -1;
  *out = v << shift;
  return 0;
}

/* Case-insensitive string equality without locale. */
static int opt_eq(const char *a, const char *b)
{
  for (; *a && *b; a++, b++) {
    char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
    if (x != *b) return 0;
  }
  return *a == *b;
}

/* Store a numeric option. */
static void opt_store(const OptDef *d, uint64_t v)
{
  char *f = (char *)&ht_opt + d->off;
  if (d->type == OPT_SIZE) *(uint64_t *)f = v;
  else *(int *)f = (int)v;
}

/* Read every HEAPTAPE_* variable into ht_opt; warn once and keep defaults. */
void ht_options_load(void)
{
  for (size_t i = 0; i < HT_COUNTOF(opt_table); i++) {
    const OptDef *d = &opt_table[i];
    const char *s = ht_getenv(d->env);
    if (d->type == OPT_STR) {
      char *f = (char *)&ht_opt + d->off;
      size_t n = s ? strlen(s) : 0;
      if (n >= sizeof(ht_opt.output)) n = sizeof(ht_opt.output) - 1;
      memcpy(f, s ? s : "", n);
      f[n] = 0;
      continue;
    }
    opt_store(d, d->def);
    if (!s || !*s) continue;
    uint64_t v = 0;
    int bad = 0;
    if (d->type == OPT_UNWIND) {
      if (opt_eq(s, "libunwind") || opt_eq(s, "dwarf")) v = HT_UNWIND_LIBUNWIND;
      else if (opt_eq(s, "fp")) v = HT_UNWIND_FP;
      else if (opt_eq(s, "none")) v = HT_UNWIND_NONE;
      else bad = 1;
    } else if (d->type == OPT_BOOL) {
      if (opt_eq(s, "1") || opt_eq(s, "yes") || opt_eq(s, "on") || opt_eq(s, "true")) v = 1;
      else if (opt_eq(s, "0") || opt_eq(s, "no") || opt_eq(s, "off") || opt_eq(s, "false")) v = 0;
      else bad = 1;
    } else {
      bad = opt_number(s, &v) || v < d->lo || v > d->hi;
    }
    if (bad) {
      static uint32_t warned;          /* one warning per option */
      if (!(warned & (1u << i))) {
        warned |= 1u << i;
        ht_log("bad value %s=\"%.64s\" ignored (%s)", d->env, s, d->help);
      }
      continue;
    }
    opt_store(d, v);
  }
}

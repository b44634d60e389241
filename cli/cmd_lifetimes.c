/* heaptape -- `heaptape lifetimes`: object lifetime histograms, macro (share of
** all operations) and in time, as text and as an SVG chart. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cmds.h"
#include "../src/format/reader.h"
#include "../src/output/lifetimes.h"

static const char life_usage[] =
  "usage: heaptape lifetimes [options] FILE\n"
  "  --range LO-HI   macro lifetimes shown, in % of the run (default 0-100)\n"
  "  --bins N        histogram bins over the range (default 20)\n"
  "  --by-site       lifetimes per allocation site (--top N sites, default 20)\n"
  "  --json          the same figures as one JSON object (docs/ALLOCATORS.md)\n"
  "  -o, --output FILE.svg  also draw both histograms as SVG\n";

/* `heaptape lifetimes`: parse its arguments and run it; returns the exit status. */
int cmd_lifetimes(int argc, char **argv)
{
  const char *path = NULL, *svg = NULL, *range = "";
  HtLifeOpts o = {.lo = 0, .hi = 100, .bins = 20};
  unsigned top = 20;
  int json = 0;
  enum { O_RANGE = 1, O_BINS, O_TOP, O_BY_SITE, O_JSON, O_OUT };
  static const HtOpt opts[] = {
    {"--range", 0, 1, O_RANGE}, {"--bins", 0, 1, O_BINS}, {"--top", 0, 1, O_TOP},
    {"--by-site", 0, 0, O_BY_SITE}, {"--json", 0, 0, O_JSON}, {"--output", 'o', 1, O_OUT},
    {NULL, 0, 0, 0}
  };
  HtArgs a;
  uint64_t v;
  char *e;
  ht_args_init(&a, argc, argv, "lifetimes", life_usage, opts);
  for (int k; (k = ht_args_next(&a)) != HT_ARG_END;) {
    switch (k) {
    case HT_ARG_HELP: return HT_EXIT_OK;
    case HT_ARG_BAD: return HT_EXIT_USAGE;
    case O_RANGE: {
      const char *h;
      range = a.val;
      o.lo = strtod(range, &e);
      if (*e != '-' || e == range) goto bad_range;
      h = e + 1;
      o.hi = strtod(h, &e);
      if (*e || e == h || o.lo < 0 || o.hi > 100 || o.lo >= o.hi) goto bad_range;
      break;
    }
    case O_BINS: if (ht_args_uint(&a, 1, 10000, &v)) return HT_EXIT_USAGE; o.bins = (unsigned)v; break;
    case O_TOP: if (ht_args_uint(&a, 1, 10000, &v)) return HT_EXIT_USAGE; top = (unsigned)v; break;
    case O_BY_SITE: o.by_site = 1; break;
    case O_JSON: json = 1; break;
    case O_OUT: svg = a.val; break;
    case HT_ARG_OPERAND:
      if (path) return ht_args_extra(&a, "tape", a.val);
      path = a.val;
      break;
    }
  }
  if (!path) return ht_args_missing(&a, "tape");
  HtReader *r;
  if (ht_cli_open_tape(path, &r)) return HT_EXIT_FAIL;
  HtLife l = {0};
  HtResolve rs;
  int rc = HT_EXIT_OK;
  ht_resolve_init(&rs);
  ht_resolve_carried(&rs);  /* on a version 8 sealed tape: no table of blocks */
  uint64_t nops = ht_resolve_count_ops(r);
  int bad = nops == HT_RES_NONE || ht_life_init(&l, &o, nops, ht_reader_header(r));
  if (!bad) bad = ht_resolve_run(&rs, r, ht_life_res, NULL, &l) || ht_life_finish(&l, &rs, r);
  ht_resolve_free(&rs);
  if (bad) {
    ht_cli_error("%s: out of memory", path);
    rc = HT_EXIT_FAIL;
  } else {
    char warn[320];
    ht_cli_damage(r, warn, sizeof(warn));
    ht_cli_warn_damage(path, r);
    if (json) ht_life_json(stdout, path, &l, top, warn[0] ? warn : NULL);
    else ht_life_text(stdout, path, &l, top);
    if (svg) {
      FILE *f = fopen(svg, "w");
      if (!f) { ht_cli_error("%s: cannot create (%s)", svg, strerror(errno)); rc = HT_EXIT_FAIL; }
      else {
        ht_life_svg(f, path, &l);
        if (fclose(f)) { ht_cli_error("%s: write error", svg); rc = HT_EXIT_FAIL; }
      }
    }
  }
  ht_life_free(&l);
  ht_reader_close(r);
  if (fflush(stdout)) rc = HT_EXIT_FAIL;
  return rc;
bad_range:
  return ht_args_bad(&a, "--range takes LO-HI with 0 <= LO < HI <= 100, not '%s'", range);
}

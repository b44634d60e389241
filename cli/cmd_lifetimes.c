/* heaptape -- `heaptape lifetimes`: object lifetime histograms, macro (share of
** all operations) and in time, as text and as an SVG chart. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "../src/format/reader.h"
#include "../src/output/lifetimes.h"

static const char life_usage[] =
  "usage: heaptape lifetimes [options] FILE\n"
  "  --range LO-HI   macro lifetimes shown, in % of the run (default 0-100)\n"
  "  --bins N        histogram bins over the range (default 20)\n"
  "  --by-site       lifetimes per allocation site (--top N sites, default 20)\n"
  "  --json          the same figures as one JSON object (docs/ALLOCATORS.md)\n"
  "  -o FILE.svg     also draw both histograms as SVG\n";

/* `heaptape lifetimes`: parse its arguments and run it; returns the exit status. */
int cmd_lifetimes(int argc, char **argv)
{
  const char *path = NULL, *svg = NULL, *range = "";
  HtLifeOpts o = {.lo = 0, .hi = 100, .bins = 20};
  unsigned top = 20;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    char *e;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(life_usage, stdout); return HT_EXIT_OK; }
    if (!strcmp(a, "--by-site")) { o.by_site = 1; continue; }
    if (!strcmp(a, "--json")) { json = 1; continue; }
    if (a[0] == '-' && a[1] && strcmp(a, "--range") && strcmp(a, "--bins") &&
        strcmp(a, "--top") && strcmp(a, "-o")) {
      ht_cli_error("lifetimes: unknown option '%s'", a);
      goto usage;
    }
    if (a[0] == '-' && a[1] && i + 1 >= argc) {
      ht_cli_error("lifetimes: %s needs a value", a);
      goto usage;
    }
    if (!strcmp(a, "--range")) {
      const char *v = range = argv[++i];
      o.lo = strtod(v, &e);
      if (*e != '-' || e == v) goto bad_range;
      const char *h = e + 1;
      o.hi = strtod(h, &e);
      if (*e || e == h || o.lo < 0 || o.hi > 100 || o.lo >= o.hi) goto bad_range;
    } else if (!strcmp(a, "--bins") || !strcmp(a, "--top")) {
      unsigned long v = strtoul(argv[++i], &e, 10);
      if (*e || !v || v > 10000) {
        ht_cli_error("lifetimes: %s takes a number from 1 to 10000, not '%s'", a, argv[i]);
        goto usage;
      }
      if (a[2] == 'b') o.bins = (unsigned)v; else top = (unsigned)v;
    } else if (!strcmp(a, "-o")) svg = argv[++i];
    else if (path) {
      ht_cli_error("lifetimes: one tape at a time; extra argument '%s'", a);
      goto usage;
    } else path = a;
  }
  if (!path) { ht_cli_error("lifetimes: no tape given"); goto usage; }
  HtReader *r;
  if (ht_cli_open_tape(path, &r)) return HT_EXIT_FAIL;
  HtLife l = {0};
  HtResolve rs;
  int rc = HT_EXIT_OK;
  ht_resolve_init(&rs);
  uint64_t nops = ht_resolve_count_ops(r);
  int bad = nops == HT_RES_NONE || ht_life_init(&l, &o, nops);
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
  ht_cli_error("lifetimes: --range takes LO-HI with 0 <= LO < HI <= 100, not '%s'", range);
usage:
  fputs(life_usage, stderr);
  return HT_EXIT_USAGE;
}

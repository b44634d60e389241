/* heaptape -- `heaptape diff BASE NEW`: two tapes compared site by site
** (sites merged by location), as text, JSON or an HTML page. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "args.h"
#include "vizcli.h"
#include "../include/heaptape.h"
#include "../src/analyze/diff.h"
#include "../src/output/diff.h"

static const char diff_usage[] =
  "usage: heaptape diff [options] BASE.tape NEW.tape\n"
  "\n"
  "Compares two tapes site by site: the change (NEW - BASE) in bytes\n"
  "allocated, allocation calls, bytes at the peak and bytes leaked of each\n"
  "site, and the two summaries side by side. A site is a location (function\n"
  "file:line of the first frame outside the allocators), as in `heaptape\n"
  "report`; sites on one tape only are marked so.\n"
  "\n"
  "  --sort KEY              order by the absolute change of KEY: bytes\n"
  "                          (allocated, the default), calls, peak, leaked\n"
  "  --top N                 sites shown (default 20 in text, all in JSON/HTML;\n"
  "                          0 = all)\n"
  "  --json                  one JSON object\n"
  "  --html                  a self-contained HTML page\n"
  "  -o, --output FILE       write there instead of standard output\n"
  "  --wrapper NAME          treat functions matching NAME (a glob) as\n"
  "                          allocation wrappers; repeatable\n"
  "  --damaged               compare damaged or truncated tapes anyway\n"
  "\n"
  "The totals equal `go tool pprof -diff_base BASE.pb.gz NEW.pb.gz` on the\n"
  "tapes' `heaptape pprof` exports. See docs/REPORT.md.\n";

/* One side of the comparison. */
typedef struct Side {
  const char *path;          /* tape path */
  HtReader *r;               /* open reader, or NULL */
  HtModel m;                 /* its model */
  int model;                 /* m is set up */
  char warn[400];            /* damage, "" if none */
} Side;

/* Open a tape and run the model over it; -1 after one error line. */
static int diff_side(Side *s, const HtModelOpts *mo, int damaged)
{
  if (ht_cli_open_tape(s->path, &s->r)) return -1;
  if (ht_model_init(&s->m, s->r, mo)) {
    ht_cli_error("%s: %s", s->path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    return -1;
  }
  s->model = 1;
  if (ht_vizcli_pass(s->path, &s->m)) return -1;
  ht_cli_damage(s->r, s->warn, sizeof(s->warn));
  if (s->warn[0] && !damaged) {
    ht_cli_error("%s: %s; diff compares whole tapes (--damaged compares it anyway)",
                 s->path, s->warn);
    return -1;
  }
  if (s->warn[0]) ht_cli_error("warning: %s: %s", s->path, s->warn);
  return 0;
}

/* Release a side. */
static void diff_side_free(Side *s)
{
  if (s->model) ht_model_free(&s->m);
  if (s->r) ht_reader_close(s->r);
}

/* `heaptape diff`: parse its arguments and run it; returns the exit status. */
int cmd_diff(int argc, char **argv)
{
  const char **wrappers = calloc((size_t)argc, sizeof(char *));
  const char *paths[2] = {NULL, NULL}, *out = NULL;
  size_t nwrap = 0, npath = 0;
  int json = 0, html = 0, damaged = 0, rc = HT_EXIT_USAGE;
  long top = -1;
  HtDiffKey key = HT_DIFF_BYTES;
  Side side[2];
  memset(side, 0, sizeof(side));
  if (!wrappers) { ht_cli_error("out of memory"); return HT_EXIT_FAIL; }
  enum { O_OUT = 1, O_SORT, O_TOP, O_WRAPPER, O_JSON, O_HTML, O_DAMAGED };
  static const HtOpt opts[] = {
    {"--output", 'o', 1, O_OUT}, {"--sort", 0, 1, O_SORT}, {"--top", 0, 1, O_TOP},
    {"--wrapper", 0, 1, O_WRAPPER}, {"--json", 0, 0, O_JSON}, {"--html", 0, 0, O_HTML},
    {"--damaged", 0, 0, O_DAMAGED}, {NULL, 0, 0, 0}
  };
  HtArgs a;
  uint64_t v;
  ht_args_init(&a, argc, argv, "diff", diff_usage, opts);
  for (int k; (k = ht_args_next(&a)) != HT_ARG_END;) {
    switch (k) {
    case HT_ARG_HELP: rc = HT_EXIT_OK; goto done;
    case HT_ARG_BAD: goto done;
    case O_OUT: if (ht_args_output(&a, &out)) goto done; break;
    case O_SORT:
      if (!strcmp(a.val, "bytes")) key = HT_DIFF_BYTES;
      else if (!strcmp(a.val, "calls")) key = HT_DIFF_CALLS;
      else if (!strcmp(a.val, "peak")) key = HT_DIFF_PEAK;
      else if (!strcmp(a.val, "leaked")) key = HT_DIFF_LEAKED;
      else {
        ht_args_bad(&a, "%s takes bytes, calls, peak or leaked, not '%s'", a.opt, a.val);
        goto done;
      }
      break;
    case O_TOP:
      if (ht_args_uint(&a, 0, 100000000, &v)) goto done;
      top = (long)v;
      break;
    case O_WRAPPER: wrappers[nwrap++] = a.val; break;
    case O_JSON: json = 1; break;
    case O_HTML: html = 1; break;
    case O_DAMAGED: damaged = 1; break;
    case HT_ARG_OPERAND:
      if (npath == 2) { ht_args_bad(&a, "two tapes only; extra argument '%s'", a.val); goto done; }
      paths[npath++] = a.val;
      break;
    }
  }
  if (npath < 2) {
    ht_args_bad(&a, "needs two tapes, BASE and NEW (%zu given)", npath);
    goto done;
  }
  if (json && html) { ht_args_bad(&a, "--json does not combine with --html"); goto done; }
  rc = HT_EXIT_FAIL;
  HtModelOpts mo = {.wrappers = wrappers, .nwrappers = nwrap, .at_ns = UINT64_MAX};
  for (int i = 0; i < 2; i++) {
    side[i].path = paths[i];
    if (diff_side(&side[i], &mo, damaged)) goto done;
  }
  HtDiff d;
  if (ht_diff_build(&d, &side[0].m, &side[1].m, key)) {
    ht_cli_error("diff: %s", heaptape_strerror(HEAPTAPE_E_NOMEM));
    goto done;
  }
  HtDiffOpts o = {.base_path = paths[0], .new_path = paths[1],
                  .top = top >= 0 ? (unsigned)top : json || html ? 0 : 20,
                  .warning = {side[0].warn[0] ? side[0].warn : NULL,
                              side[1].warn[0] ? side[1].warn : NULL}};
  FILE *f = out ? fopen(out, "w") : stdout;
  if (!f) {
    ht_cli_error("%s: cannot create: %s", out, strerror(errno));
    ht_diff_free(&d);
    goto done;
  }
  if (json) ht_diff_json(f, &d, &o);
  else if (html) ht_diff_html(f, &d, &o);
  else ht_diff_text(f, &d, &o);
  int failed = fflush(f) != 0 || ferror(f);
  if (out && fclose(f)) failed = 1;
  if (failed) ht_cli_error("%s: cannot write the comparison", out ? out : "stdout");
  else rc = HT_EXIT_OK;
  ht_diff_free(&d);
done:
  for (int i = 0; i < 2; i++) diff_side_free(&side[i]);
  free(wrappers);
  return rc;
}

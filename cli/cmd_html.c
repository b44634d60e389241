/* heaptape -- `heaptape html`: one self-contained, offline HTML page with
** the heap and RSS over time, stacked charts of the top locations, a flame
** graph, call trees, top locations, sizes, leaks and time buckets. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "args.h"
#include "vizcli.h"
#include "../src/analyze/agg.h"
#include "../src/base/grow.h"
#include "../include/heaptape.h"
#include "../src/output/html.h"
#include "../src/output/outfile.h"
#include "../src/analyze/accrep.h"

#define HTML_ACCESS_TOP 5  /* sites whose access counts per offset are drawn */

static const char html_usage[] =
  "usage: heaptape html [options] FILE -o report.html\n"
  "\n"
  "  -o, --output FILE       page to write (default report.html)\n"
  "  --buckets N             times at which the heap's composition is kept\n"
  "                          (default 100; the page's data grows with\n"
  "                          sites x buckets, never with the events)\n"
  "  --wrapper NAME          treat functions matching NAME (a glob) as\n"
  "                          allocation wrappers; repeatable\n"
  "\n"
  "Open report.html#t=SECONDS to select that time on load, and\n"
  "#view=bottomup|topdown|callers to open that call tree.\n";

/* `heaptape html`: parse its arguments and run it; returns the exit status. */
int cmd_html(int argc, char **argv)
{
  const char *out = "report.html", *path = NULL;
  unsigned buckets = HT_SNAPS_BUCKETS;
  int rc = HT_EXIT_USAGE;
  const char **wrappers = calloc((size_t)argc, sizeof(char *));
  size_t nwrap = 0;
  if (!wrappers) { ht_cli_error("out of memory"); return HT_EXIT_FAIL; }
  enum { O_OUT = 1, O_BUCKETS, O_WRAPPER };
  static const HtOpt opts[] = {
    {"--output", 'o', 1, O_OUT}, {"--buckets", 0, 1, O_BUCKETS}, {"--wrapper", 0, 1, O_WRAPPER},
    {NULL, 0, 0, 0}
  };
  HtArgs a;
  uint64_t v;
  ht_args_init(&a, argc, argv, "html", html_usage, opts);
  for (int k; (k = ht_args_next(&a)) != HT_ARG_END;) {
    switch (k) {
    case HT_ARG_HELP: rc = HT_EXIT_OK; goto done;
    case HT_ARG_BAD: goto done;
    case O_OUT: if (ht_args_output(&a, &out)) goto done; break;
    case O_BUCKETS:
      if (ht_args_uint(&a, 1, 10000, &v)) goto done;
      buckets = (unsigned)v;
      break;
    case O_WRAPPER: wrappers[nwrap++] = a.val; break;
    case HT_ARG_OPERAND:
      if (path) { ht_args_extra(&a, "tape", a.val); goto done; }
      path = a.val;
      break;
    }
  }
  if (!path) { ht_args_missing(&a, "tape"); goto done; }
  rc = HT_EXIT_FAIL;
  HtReader *r;
  if (ht_cli_open_tape(path, &r)) goto done;
  const HtReadStats *st = ht_reader_stats(r);
  HtSnaps snaps;
  memset(&snaps, 0, sizeof(snaps));
  HtModelOpts mo = {.wrappers = wrappers, .nwrappers = nwrap, .at_ns = UINT64_MAX};
  uint64_t end0 = st->end_ns;  /* the end the scan saw (the pass's is later) */
  ht_snaps_setup(&snaps, buckets, end0, &mo);
  snaps.pick = buckets;  /* a sealed tape's: only the picked ones' live sites */
  HtModel m;
  if (ht_model_init(&m, r, &mo)) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    ht_reader_close(r);
    goto done;
  }
  HtFlame fl;
  /* A sealed tape holds the default snapshots: then no pass at all. */
  int got = ht_agg_load_snaps(&m, &snaps);
  int ok = got == 1 || (got == 0 && !ht_vizcli_pass(path, &m));
  if (got < 0) ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
  ht_cli_warn_damage(path, r);
  ht_reader_agg_release(r);  /* loaded: its room is the page's */
  if (ok && m.snap_cut)
    ht_cli_error("warning: %s: times near 2^64 ns (damaged): the page has no buckets", path);
  /* (only against a trailer's end: without one the scan's end is the last
  ** packet's start, and a packet may run on long past it) */
  else if (ok && end0 && st->has_trailer && m.duration / 4 > end0)
    ht_cli_error("warning: %s: events far past the tape's end (damaged times?): the page's "
                 "%u buckets span them", path, snaps.n);
  if (ok && !m.by_type[HT_EV_ALLOC]) ht_cli_error("warning: %s: no allocations on the tape", path);
  if (ok) ht_snaps_pick(&snaps, m.duration, buckets);  /* buckets of the N to 2N */
  /* The page's peak comes while the flame tree is built, beside everything
  ** loaded: on 4 KiB pages it stays at heaptrack_print's (cc1plus: huge
  ** pages' last, partly used one put it 0.8 MB above). */
  ht_huge_pages(0);
  if (ok && (snaps.oom || ht_flame_build(&fl, &m))) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    if (!snaps.oom) ht_flame_free(&fl);
    ok = 0;
  }
  /* A tape of record --access: the top sites' access counts (two more passes). */
  HtAccessInfo ai;
  HtAccRep rep, *acc = NULL;
  ht_access_info(r, &ai);
  if (ok && ai.present) {
    if (ht_accrep_init(&rep) || ht_reader_rewind(r) || ht_accrep_run(&rep, r, HTML_ACCESS_TOP)) {
      ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
      ht_flame_free(&fl);
      ok = 0;
    }
    acc = &rep;
  }
  if (ok) {
    HtOutFile of;
    FILE *f = ht_outfile_open(&of, out, "w");
    if (!f) {
      ht_cli_error("%s: cannot write: %s", out, strerror(errno));
      ok = 0;
    } else {
      ht_html_write(f, &m, &fl, &snaps, acc, ai.sample, path);
      if (ht_outfile_close(&of, out, 0)) {
        ht_cli_error("%s: cannot write: %s", out, strerror(errno));
        ok = 0;
      } else {
        fprintf(stderr, "%s: %" PRIu32 " sites, %" PRIu32 " time buckets of %.3f s\n", out,
                m.nsite, snaps.n, (double)snaps.step / 1e9);
      }
    }
    ht_flame_free(&fl);
  }
  if (acc) ht_accrep_free(acc);
  ht_snaps_free(&snaps);
  ht_model_free(&m);
  ht_cli_read_log(path, r);
  ht_reader_close(r);
  rc = ok ? HT_EXIT_OK : HT_EXIT_FAIL;
done:
  free(wrappers);
  return rc;
}

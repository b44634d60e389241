/* heaptape -- `heaptape pprof`: one or more tapes as a gzipped pprof heap
** profile (alloc_objects, alloc_space, inuse_objects, inuse_space). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "args.h"
#include "vizcli.h"
#include "../src/base/parse.h"
#include "../include/heaptape.h"
#include "../src/output/pprof.h"

static const char pprof_usage[] =
  "usage: heaptape pprof [options] FILE... -o PROFILE.pb.gz\n"
  "\n"
  "  -o, --output FILE       profile to write (default profile.pb.gz)\n"
  "  --at peak|SECONDS       inuse_* at the peak or at that time (default:\n"
  "                          the end of the tape, i.e. what leaked)\n"
  "  --wrapper NAME          treat functions matching NAME (a glob) as\n"
  "                          allocation wrappers; repeatable\n"
  "  -q, --quiet             no summary line\n"
  "\n"
  "Several tapes are merged into one profile (their values add up).\n"
  "Read it with `go tool pprof -top PROFILE.pb.gz`; see docs/PPROF.md.\n";

/* Read one tape into the profile; 0 or -1 (message printed). */
static int pprof_tape(HtPprof *p, const char *path, int mode, uint64_t at_ns,
                      const char *const *wrappers, size_t nwrap)
{
  HtReader *r;
  if (ht_cli_open_tape(path, &r)) return -1;
  HtModelOpts mo = {.wrappers = wrappers, .nwrappers = nwrap, .split = 1,
                    .at_ns = mode == HT_INUSE_AT ? at_ns : UINT64_MAX};
  HtModel m;
  HtTally t = {0};
  if (ht_model_init(&m, r, &mo)) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    ht_reader_close(r);
    return -1;
  }
  int rc = ht_vizcli_pass(path, &m);
  ht_cli_warn_damage(path, r);
  ht_reader_agg_release(r);  /* loaded: its room is the profile's */
  if (!rc && ht_tally_from_model(&t, &m, mode)) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    rc = -1;
  }
  if (!rc) {
    if (!m.by_type[HT_EV_ALLOC])
      ht_cli_error("warning: %s: no allocations on the tape", path);
    const HtHeader *h = ht_reader_header(r);
    HtPprofSrc src = {.r = r, .t = &t, .wrappers = wrappers, .nwrappers = nwrap,
                      .time_ns = h->start_ns, .duration_ns = m.duration};
    char note[512];
    snprintf(note, sizeof(note), "heaptape tape %s: %s (pid %" PRIu32 ")%s", path,
             h->exe && h->exe[0] ? h->exe : "?", h->pid,
             mode == HT_INUSE_PEAK ? ", inuse at the peak"
             : mode == HT_INUSE_AT ? ", inuse at --at" : ", inuse at the end");
    if (ht_pprof_add(p, &src) || ht_pprof_comment(p, note)) {
      ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
      rc = -1;
    }
  }
  ht_tally_free(&t);
  ht_model_free(&m);
  ht_reader_close(r);
  return rc;
}

/* `heaptape pprof`: parse its arguments and run it; returns the exit status. */
int cmd_pprof(int argc, char **argv)
{
  const char *out = "profile.pb.gz";
  int mode = HT_INUSE_END, quiet = 0;
  uint64_t at_ns = UINT64_MAX;
  const char **tapes = calloc((size_t)argc, sizeof(char *));
  const char **wrappers = calloc((size_t)argc, sizeof(char *));
  size_t ntape = 0, nwrap = 0;
  int rc = HT_EXIT_USAGE;
  if (!tapes || !wrappers) { ht_cli_error("out of memory"); rc = HT_EXIT_FAIL; goto done; }
  enum { O_OUT = 1, O_AT, O_WRAPPER, O_QUIET };
  static const HtOpt opts[] = {
    {"--output", 'o', 1, O_OUT}, {"--at", 0, 1, O_AT}, {"--wrapper", 0, 1, O_WRAPPER},
    {"--quiet", 'q', 0, O_QUIET}, {NULL, 0, 0, 0}
  };
  HtArgs a;
  ht_args_init(&a, argc, argv, "pprof", pprof_usage, opts);
  for (int k; (k = ht_args_next(&a)) != HT_ARG_END;) {
    switch (k) {
    case HT_ARG_HELP: rc = HT_EXIT_OK; goto done;
    case HT_ARG_BAD: goto done;
    case O_OUT: if (ht_args_output(&a, &out)) goto done; break;
    case O_AT:
      if (!strcmp(a.val, "peak")) mode = HT_INUSE_PEAK;
      else if (!ht_parse_seconds(a.val, &at_ns)) mode = HT_INUSE_AT;
      else { ht_args_bad(&a, "%s takes peak or seconds, not '%s'", a.opt, a.val); goto done; }
      break;
    case O_WRAPPER: wrappers[nwrap++] = a.val; break;
    case O_QUIET: quiet = 1; break;
    case HT_ARG_OPERAND: tapes[ntape++] = a.val; break;
    }
  }
  if (!ntape) { ht_args_missing(&a, "tape"); goto done; }
  rc = HT_EXIT_FAIL;
  HtPprof *p = ht_pprof_new();
  if (!p) { ht_cli_error("out of memory"); goto done; }
  for (size_t i = 0; i < ntape; i++)
    if (pprof_tape(p, tapes[i], mode, at_ns, wrappers, nwrap)) { ht_pprof_destroy(p); goto done; }
  char err[512];
  if (ht_pprof_write(p, out, err, sizeof(err))) {
    ht_cli_error("%s", err);
    ht_pprof_destroy(p);
    goto done;
  }
  HtPprofTotals tot;
  ht_pprof_totals(p, &tot);
  if (!quiet)
    printf("%s: %zu tape%s, %" PRIu64 " samples; alloc %" PRIu64 " objects %" PRIu64
           " bytes; inuse %" PRIu64 " objects %" PRIu64 " bytes\n", out, ntape,
           ntape == 1 ? "" : "s", tot.samples, tot.alloc_objects, tot.alloc_space,
           tot.inuse_objects, tot.inuse_space);
  ht_pprof_destroy(p);
  rc = HT_EXIT_OK;
done:
  free(tapes);
  free(wrappers);
  return rc;
}

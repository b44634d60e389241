/* heaptape -- `heaptape report`: the analysis model printed as the default
** report, as JSON, or in the LuaJIT memprof layout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "cmds.h"
#include "../include/heaptape.h"
#include "../src/format/reader.h"
#include "../src/analyze/model.h"
#include "../src/analyze/callers.h"
#include "../src/analyze/agg.h"
#include "../src/analyze/luadump.h"
#include "../src/output/luadump.h"
#include "../src/output/report.h"

static const char report_usage[] =
  "usage: heaptape report [options] FILE\n"
  "\n"
  "  --top N                 sites per list (default 10)\n"
  "  --stacks DEPTH          frames shown per stack (default 8)\n"
  "  --by-stack              one row per stack; by default rows with the same\n"
  "                          location (function file:line) are merged\n"
  "  --paths N               stacks shown under a merged row (default 3 in\n"
  "                          text, 20 in JSON; 0 = all)\n"
  "  --peak                  the sites that make up the peak heap\n"
  "  --leaks                 the sites of blocks still live at the end\n"
  "  --temporary             the sites of temporary allocations\n"
  "  --at SECONDS            the heap's composition at that time\n"
  "  --wrapper NAME          treat functions matching NAME (a glob) as\n"
  "                          allocation wrappers; repeatable\n"
  "  --json                  the same content as JSON\n"
  "  --memprof               the LuaJIT memprof layout\n"
  "  --leak-only             memprof: the heap summary alone\n"
  "  --human-readable        memprof: sizes in KiB, MiB, GiB\n"
  "  --heap-snap-interval SEC  memprof: the heap every SEC seconds, first\n"
  "  --dump FILE             a Lua universe dump (heaptape.dump, docs/LUA.md)\n"
  "\n"
  "Without --peak/--leaks/--temporary/--at: summary, top sites by peak,\n"
  "calls and bytes, and leaks. A site is a location: the stacks whose first\n"
  "frame outside allocators, the C++ standard library and --wrapper functions\n"
  "is the same function file:line. See docs/REPORT.md.\n";

/* Progress shown on a terminal during long passes. */
typedef struct Progress {
  const char *path;          /* tape being read */
  struct timespec t0;        /* start of the pass */
  int shown;                 /* a progress line is on the terminal */
} Progress;

/* Seconds since p->t0. */
static double report_elapsed(const Progress *p)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - p->t0.tv_sec) + (double)(t.tv_nsec - p->t0.tv_nsec) / 1e9;
}

/* HtProgressFn: a percentage on stderr once the pass takes over a second. */
static void report_progress(void *arg, uint64_t done, uint64_t total)
{
  Progress *p = arg;
  if (!p || !total || report_elapsed(p) < 1.0) return;
  fprintf(stderr, "\rheaptape: reading %s: %3.0f%%", p->path,
          done >= total ? 100.0 : 100.0 * (double)done / (double)total);
  p->shown = 1;
}

/* Print the one-line damage warning of a reader, if any. */
static void report_warn(const char *path, const HtReader *r, char *buf, size_t len)
{
  ht_cli_damage(r, buf, len);
  if (buf[0]) ht_cli_error("warning: %s: %s", path, buf);
}

/* `heaptape report --dump FILE`: a Lua universe dump, its largest objects and
** retainers (docs/LUA.md). */
static int report_luadump(const char *path, unsigned top)
{
  HtLuaDump d;
  char err[256];
  if (ht_luadump_read(&d, path, err, sizeof(err))) {
    ht_cli_error("%s: %s", path, err);
    ht_luadump_free(&d);
    return HT_EXIT_FAIL;
  }
  if (d.truncated) ht_cli_error("warning: %s: dump is truncated (no end record)", path);
  int rc = ht_luadump_retained(&d);
  ht_luadump_print(stdout, &d, top);
  if (rc) ht_cli_error("out of memory: retained sizes are incomplete");
  ht_luadump_free(&d);
  return fflush(stdout) ? HT_EXIT_FAIL : HT_EXIT_OK;
}

enum { O_TOP = 1, O_STACKS, O_BY_STACK, O_PATHS, O_PEAK, O_LEAKS, O_TEMP, O_AT, O_WRAPPER,
       O_JSON, O_MEMPROF, O_LEAK_ONLY, O_HUMAN, O_SNAP, O_DUMP };

static const HtOpt report_opts[] = {
  {"--top", 0, 1, O_TOP}, {"--stacks", 0, 1, O_STACKS}, {"--by-stack", 0, 0, O_BY_STACK},
  {"--paths", 0, 1, O_PATHS}, {"--peak", 0, 0, O_PEAK}, {"--leaks", 0, 0, O_LEAKS},
  {"--temporary", 0, 0, O_TEMP}, {"--at", 0, 1, O_AT}, {"--wrapper", 0, 1, O_WRAPPER},
  {"--json", 0, 0, O_JSON}, {"--memprof", 0, 0, O_MEMPROF}, {"--leak-only", 0, 0, O_LEAK_ONLY},
  {"--human-readable", 0, 0, O_HUMAN}, {"--heap-snap-interval", 0, 1, O_SNAP},
  {"--dump", 0, 1, O_DUMP}, {NULL, 0, 0, 0}
};

/* `heaptape report`: parse its arguments and run it; returns the exit status. */
int cmd_report(int argc, char **argv)
{
  HtReportOpts o = {.top = 10, .depth = HT_CALLERS_DEPTH, .paths = 3, .at_ns = UINT64_MAX};
  HtModelOpts mo = {.at_ns = UINT64_MAX};
  const char **wrappers = calloc((size_t)argc, sizeof(char *));
  size_t nwrap = 0;
  int json = 0, memprof = 0, paths_set = 0, k, bad = 0;
  unsigned sections = 0;
  const char *path = NULL, *dump = NULL;
  uint64_t v;
  if (!wrappers) { ht_cli_error("out of memory"); return HT_EXIT_FAIL; }
  HtArgs a;
  ht_args_init(&a, argc, argv, "report", report_usage, report_opts);
  while (!bad && (k = ht_args_next(&a)) != HT_ARG_END) {
    switch (k) {
    case HT_ARG_HELP: free(wrappers); return HT_EXIT_OK;
    case HT_ARG_BAD: bad = 1; break;
    case O_TOP: bad = ht_args_uint(&a, 1, 1000000, &v); o.top = (unsigned)v; break;
    case O_STACKS: bad = ht_args_uint(&a, 0, 1000000, &v); o.depth = (unsigned)v; break;
    case O_PATHS:
      bad = ht_args_uint(&a, 0, 1000000, &v);
      o.paths = (unsigned)v;
      paths_set = 1;
      break;
    case O_AT: bad = ht_args_seconds(&a, &o.at_ns); sections |= HT_RS_AT; break;
    case O_SNAP:
      bad = ht_args_seconds(&a, &mo.snap_ns);
      if (!bad && !mo.snap_ns)
        bad = ht_args_bad(&a, "%s takes seconds above 0, not '%s'", a.opt, a.val);
      break;
    case O_WRAPPER: wrappers[nwrap++] = a.val; break;
    case O_PEAK: sections |= HT_RS_PEAK; break;
    case O_LEAKS: sections |= HT_RS_LEAKS; break;
    case O_TEMP: sections |= HT_RS_TEMP; break;
    case O_BY_STACK: o.by_stack = 1; break;
    case O_JSON: json = 1; break;
    case O_MEMPROF: memprof = 1; break;
    case O_LEAK_ONLY: memprof = 1; o.leak_only = 1; break;
    case O_HUMAN: o.human = 1; break;
    case O_DUMP: dump = a.val; break;
    case HT_ARG_OPERAND:
      if (path) bad = ht_args_extra(&a, "tape", a.val);
      else path = a.val;
      break;
    }
  }
  if (bad) { free(wrappers); return HT_EXIT_USAGE; }
  if (dump) {                         /* a Lua dump instead of a tape */
    free(wrappers);
    if (path) return ht_args_bad(&a, "--dump reads a Lua dump, not a tape; extra argument '%s'", path);
    return report_luadump(dump, o.top);
  }
  if (!path) { free(wrappers); return ht_args_missing(&a, "tape"); }
  if (mo.snap_ns) memprof = 1;
  if (memprof && json) { free(wrappers); return ht_args_bad(&a, "--json does not combine with --memprof"); }
  o.json_paths = paths_set ? o.paths : 20;
  o.sections = HT_RS_SUMMARY | (sections ? sections : HT_RS_DEFAULT);
  o.path = path;

  HtReader *r;
  if (ht_cli_open_tape(path, &r)) {
    free(wrappers);
    return HT_EXIT_FAIL;
  }
  Progress pg = {.path = path};
  clock_gettime(CLOCK_MONOTONIC, &pg.t0);
  mo.wrappers = wrappers;
  mo.nwrappers = nwrap;
  mo.at_ns = o.at_ns;
  mo.progress = isatty(2) ? report_progress : NULL;
  mo.arg = &pg;
  if (mo.snap_ns) {
    mo.on_snap = ht_report_memprof_snap;
    /* Four times the snapshots the scan's length asks for: a damaged time
    ** far past the end must not print snapshots for ever. */
    uint64_t want = ht_reader_stats(r)->end_ns / mo.snap_ns + 1;
    mo.snap_max = want < UINT32_MAX / 8 ? (uint32_t)(4 * want + 16) : 0;
  }
  HtModel m;
  if (ht_model_init(&m, r, &mo)) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    ht_reader_close(r);
    free(wrappers);
    return HT_EXIT_FAIL;
  }
  /* Snapshots print while the pass runs, before the rest of the report;
  ** the callbacks share one argument, so progress gives way to them. */
  if (mo.snap_ns) { m.o.arg = stdout; m.o.progress = NULL; }
  ht_agg_model(&m);  /* out of memory still reports what it has (m.oom) */
  ht_reader_agg_release(r);  /* loaded: its room is the report's */
  if (pg.shown) fputs("\r\033[K", stderr);
  char warn[400];
  report_warn(path, r, warn, sizeof(warn));
  o.warning = warn[0] ? warn : NULL;
  if (m.snap_cut)
    ht_cli_error("warning: %s: events past the tape's end (damaged times?): snapshots stop "
                 "after %u", path, (unsigned)m.nsnap);
  if (o.at_ns != UINT64_MAX && o.at_ns > m.duration)  /* a note: the heap at the end is shown */
    ht_cli_error("warning: %s: the tape ends at %.3f s; --at %.3f shows the heap at its end",
                 path, (double)m.duration / 1e9, (double)o.at_ns / 1e9);
  if (memprof) ht_report_memprof(stdout, &m, &o);
  else if (json) ht_report_json(stdout, &m, &o);
  else ht_report_text(stdout, &m, &o);
  int failed = fflush(stdout) != 0 || ferror(stdout);
  if (failed) ht_cli_error("report: cannot write the report");
  if (getenv("HEAPTAPE_READ_LOG"))  /* (a sealed tape's stored names: HT_A_NAMES) */
    ht_cli_error("%s: sites named %s", path, m.group_depth ? "by the sealer" : "here");
  ht_model_free(&m);
  ht_cli_read_log(path, r);
  ht_reader_close(r);
  free(wrappers);
  return failed ? HT_EXIT_FAIL : HT_EXIT_OK;
}

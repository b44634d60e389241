/* heaptape -- `heaptape report`: the analysis model printed as the default
** report, as JSON, or in the LuaJIT memprof layout. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "../include/heaptape.h"
#include "../src/format/reader.h"
#include "../src/analyze/model.h"
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

/* Parse a non-negative number of seconds into ns; -1 if malformed. */
static int report_seconds(const char *s, uint64_t *ns)
{
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || !(v >= 0) || v > 1e9) return -1;
  *ns = (uint64_t)llround(v * 1e9);
  return 0;
}

/* Parse an unsigned count; -1 if malformed. */
static int report_count(const char *s, unsigned *out)
{
  char *end;
  unsigned long v = strtoul(s, &end, 10);
  if (end == s || *end || s[0] == '-' || v > 1000000) return -1;
  *out = (unsigned)v;
  return 0;
}

/* Bad usage: a message, the usage text, exit status 2. */
static int report_bad(const char *what, const char *arg)
{
  ht_cli_error("report: %s '%s'", what, arg);
  fputs(report_usage, stderr);
  return HT_EXIT_USAGE;
}

int ht_report_dump(int argc, char **argv);  /* cli/report_dump.c (Lua dumps) */

/* `heaptape report`: parse its arguments and run it; returns the exit status. */
int cmd_report(int argc, char **argv)
{
  for (int i = 1; i < argc; i++)  /* --dump FILE: a Lua universe dump, docs/LUA.md */
    if (!strcmp(argv[i], "--dump")) return ht_report_dump(argc, argv);
  HtReportOpts o = {.top = 10, .depth = 8, .paths = 3, .at_ns = UINT64_MAX};
  HtModelOpts mo = {.at_ns = UINT64_MAX};
  const char **wrappers = calloc((size_t)argc, sizeof(char *));
  size_t nwrap = 0;
  int json = 0, memprof = 0, paths_set = 0;
  unsigned sections = 0;
  const char *path = NULL;
  if (!wrappers) { ht_cli_error("out of memory"); return HT_EXIT_FAIL; }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = NULL;
    char name[64];
    const char *eq = a[0] == '-' && a[1] == '-' ? strchr(a, '=') : NULL;
    if (eq && (size_t)(eq - a) < sizeof(name)) {  /* --flag=value */
      memcpy(name, a, (size_t)(eq - a));
      name[eq - a] = 0;
      a = name;
      val = eq + 1;
    }
    int takes = !strcmp(a, "--top") || !strcmp(a, "--stacks") || !strcmp(a, "--at") ||
                !strcmp(a, "--paths") ||
                !strcmp(a, "--wrapper") || !strcmp(a, "--heap-snap-interval");
    if (takes && !val) {
      if (i + 1 >= argc) { free(wrappers); return report_bad("missing value for", a); }
      val = argv[++i];
    } else if (!takes && val) {
      free(wrappers);
      return report_bad("option takes no value:", argv[i]);
    }
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(report_usage, stdout);
      free(wrappers);
      return HT_EXIT_OK;
    } else if (!strcmp(a, "--top")) {
      if (report_count(val, &o.top) || !o.top) { free(wrappers); return report_bad("bad --top", val); }
    } else if (!strcmp(a, "--stacks")) {
      if (report_count(val, &o.depth)) { free(wrappers); return report_bad("bad --stacks", val); }
    } else if (!strcmp(a, "--paths")) {
      if (report_count(val, &o.paths)) { free(wrappers); return report_bad("bad --paths", val); }
      paths_set = 1;
    } else if (!strcmp(a, "--at")) {
      if (report_seconds(val, &o.at_ns)) { free(wrappers); return report_bad("bad --at", val); }
      sections |= HT_RS_AT;
    } else if (!strcmp(a, "--heap-snap-interval")) {
      if (report_seconds(val, &mo.snap_ns) || !mo.snap_ns) {
        free(wrappers);
        return report_bad("bad --heap-snap-interval", val);
      }
    } else if (!strcmp(a, "--wrapper")) {
      wrappers[nwrap++] = val;
    } else if (!strcmp(a, "--peak")) sections |= HT_RS_PEAK;
    else if (!strcmp(a, "--leaks")) sections |= HT_RS_LEAKS;
    else if (!strcmp(a, "--temporary")) sections |= HT_RS_TEMP;
    else if (!strcmp(a, "--by-stack")) o.by_stack = 1;
    else if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--memprof")) memprof = 1;
    else if (!strcmp(a, "--leak-only")) { memprof = 1; o.leak_only = 1; }
    else if (!strcmp(a, "--human-readable")) o.human = 1;
    else if (a[0] == '-' && a[1]) { free(wrappers); return report_bad("unknown option", argv[i]); }
    else if (path) { free(wrappers); return report_bad("one tape at a time; extra argument", a); }
    else path = a;
  }
  if (!path) {
    ht_cli_error("report: no tape given");
    fputs(report_usage, stderr);
    free(wrappers);
    return HT_EXIT_USAGE;
  }
  if (mo.snap_ns) memprof = 1;
  if (memprof && json) { free(wrappers); return report_bad("--json does not combine with", "--memprof"); }
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
  if (mo.snap_ns) mo.on_snap = ht_report_memprof_snap;
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
  ht_model_run(&m);  /* out of memory still reports what it has (m.oom) */
  if (pg.shown) fputs("\r\033[K", stderr);
  char warn[400];
  report_warn(path, r, warn, sizeof(warn));
  o.warning = warn[0] ? warn : NULL;
  if (o.at_ns != UINT64_MAX && o.at_ns > m.duration)  /* a note: the heap at the end is shown */
    ht_cli_error("warning: %s: the tape ends at %.3f s; --at %.3f shows the heap at its end",
                 path, (double)m.duration / 1e9, (double)o.at_ns / 1e9);
  if (memprof) ht_report_memprof(stdout, &m, &o);
  else if (json) ht_report_json(stdout, &m, &o);
  else ht_report_text(stdout, &m, &o);
  int failed = fflush(stdout) != 0 || ferror(stdout);
  if (failed) ht_cli_error("report: cannot write the report");
  ht_model_free(&m);
  ht_reader_close(r);
  free(wrappers);
  return failed ? HT_EXIT_FAIL : HT_EXIT_OK;
}

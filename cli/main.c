/* heaptape -- the `heaptape` command: a table of subcommands.
** Each subcommand parses its own flags in cli/cmd_<name>.c. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "../src/base/grow.h"
#include "../src/base/msg.h"
#include "../src/format/format.h"
#include "../src/format/reader.h"
#include "../src/analyze/access.h"

typedef struct Cmd {
  const char *name;          /* subcommand word */
  int (*fn)(int, char **);   /* runs it; returns the exit status */
  const char *help;          /* one line for `heaptape --help` */
  int huge_heap;             /* its heap on huge pages (ht_huge_heap): the
                                aggregate and event readers; not html (its
                                peak) */
} Cmd;

static const Cmd cmds[] = {
  {"record", cmd_record, "run a program and record its heap onto a tape", 0},
  {"live",   cmd_live,   "a terminal view following a tape while it is written", 0},
  {"attach", cmd_attach, "record a running process's heap (until Ctrl-C or detach)", 0},
  {"detach", cmd_detach, "end a recording heaptape attach started", 0},
  {"report", cmd_report, "summary, top sites, leaks, peak (--memprof, --json, ...)", 1},
  {"stats",  cmd_stats,  "event counts, size histogram, threads, damage", 1},
  {"dump",   cmd_dump,   "print every record of a tape as text", 0},
  {"symbolize", cmd_symbolize, "append symbols to a tape recorded without `heaptape record`", 0},
  {"seal",   cmd_seal,   "rewrite tapes as sealed tapes (frees resolved, column blocks)", 0},
  {"diff",   cmd_diff,   "compare two tapes site by site (text, --json, --html)", 1},
  {"pprof",  cmd_pprof,  "gzipped pprof heap profile (go tool pprof, Pyroscope, Parca)", 1},
  {"flamegraph", cmd_flamegraph, "interactive SVG flame graph, or --folded stacks", 1},
  {"html",   cmd_html,   "self-contained HTML report: timeline, flame graph, sites", 0},
  {"ops",    cmd_ops,    "the tape as a plain operations log (N/F lines)", 1},
  {"lifetimes", cmd_lifetimes, "object lifetime histograms (text or SVG)", 1},
  {"access", cmd_access, "per site reads, writes and findings of a record --access tape", 0},
  {"locks",  cmd_locks,  "the operations log with Steve's lock/unlock heuristics", 0},
  {"replay", cmd_replay, "replay the operations against real allocators", 0},
  {"heapmap", cmd_heapmap, "a picture of the address space over time (PNG)", 1},
};

/* Print "heaptape: <message>" on stderr. */
void ht_cli_error(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  ht_vmsg(fmt, ap);
  va_end(ap);
}

/* Open a tape or say why not. */
int ht_cli_open_tape(const char *path, HtReader **r)
{
  char err[256];
  if (!ht_reader_open(r, path, err, sizeof(err))) return 0;
  ht_cli_error("%s: %s", path, err);
  return -1;
}

/* The tape's access figures; with need, a tape without accesses is an
** error: its line printed, r closed, -1. */
int ht_cli_access_info(const char *path, HtReader *r, HtAccessInfo *ai, int need)
{
  ht_access_info(r, ai);
  if (!need || ai->present) return 0;
  ht_cli_error("%s: no accesses on this tape (record it with heaptape record --access)", path);
  ht_reader_close(r);
  return -1;
}

/* The damage of a tape as one line. */
void ht_cli_damage(const HtReader *r, char *buf, size_t len)
{
  const HtReadStats *st = ht_reader_stats(r);
  buf[0] = 0;
  if (st->first_error_off == UINT64_MAX) return;
  int n = snprintf(buf, len, "%s", st->first_error);
  if (st->damaged && n > 0 && (size_t)n < len)
    snprintf(buf + n, len - (size_t)n, "; %llu damaged packets (%llu bytes) skipped",
             (unsigned long long)st->damaged, (unsigned long long)st->damaged_bytes);
}

/* Print the damage warning of a tape, if any. */
void ht_cli_warn_damage(const char *path, const HtReader *r)
{
  char buf[320];
  ht_cli_damage(r, buf, sizeof(buf));
  if (buf[0]) ht_cli_error("warning: %s: %s", path, buf);
}

/* With HEAPTAPE_READ_LOG set, say how many events the command read (every
** pass summed) of those on the tape: 0 when a sealed tape's aggregate
** section answered. */
void ht_cli_read_log(const char *path, const HtReader *r)
{
  const HtReadStats *st = ht_reader_stats(r);
  if (getenv("HEAPTAPE_READ_LOG"))
    ht_cli_error("%s: %" PRIu64 " events read of %" PRIu64, path, st->delivered, st->events);
}

/* List the subcommands. */
static void usage(FILE *f)
{
  fprintf(f, "usage: heaptape <command> [options] [args]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
    fprintf(f, "  %-11s %s\n", cmds[i].name, cmds[i].help);
  fprintf(f, "\n`heaptape <command> --help` (or `heaptape help <command>`) describes a command.\n");
}

int main(int argc, char **argv)
{
  ht_huge_pages(1);   /* large tables on huge pages: src/base/grow.h */
  /* Only the main thread prints; the reader's threads (names, decoding)
  ** print nothing, but their existence made every putc take a lock (a
  ** report's JSON: 1.2x). */
  __fsetlocking(stdout, FSETLOCKING_BYCALLER);
  __fsetlocking(stderr, FSETLOCKING_BYCALLER);
  if (argc < 2) { usage(stderr); return HT_EXIT_USAGE; }
  if (!strcmp(argv[1], "help") && argc > 2) {  /* help COMMAND: COMMAND --help */
    char *hargv[] = {argv[2], "--help", NULL};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
      if (!strcmp(argv[2], cmds[i].name)) return cmds[i].fn(2, hargv);
    ht_cli_error("help: unknown command '%s' (see heaptape --help)", argv[2]);
    return HT_EXIT_USAGE;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return HT_EXIT_OK;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("heaptape 0.1 (writes journals of tape format %d, sealed tapes of %d; reads up to %d)\n",
           HT_VERSION, HT_VERSION_SEALED, HT_VERSION_MAX);
    return HT_EXIT_OK;
  }
  for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
    if (!strcmp(argv[1], cmds[i].name)) {
      if (cmds[i].huge_heap) ht_huge_heap();
      return cmds[i].fn(argc - 1, argv + 1);
    }
  ht_cli_error("unknown command '%s' (see heaptape --help)", argv[1]);
  return HT_EXIT_USAGE;
}

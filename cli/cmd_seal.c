/* heaptape -- `heaptape seal FILE...`: rewrite journals (tapes as the recorder
** writes them) as sealed tapes: events in order, frees resolved, columns. */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "../src/analyze/seal.h"

static const char seal_usage[] =
  "usage: heaptape seal FILE...\n"
  "Rewrite each tape as a sealed tape (docs/FORMAT.md, \"Sealed tapes\"): its events\n"
  "in global order, every free naming the allocation it releases, stored in\n"
  "compressed column blocks with an index, and the figures of report, stats,\n"
  "flamegraph, pprof and html computed once, so they read no event.\n"
  "`heaptape record` seals what it records (unless --journal); seal the tapes\n"
  "of `record --journal`, plain LD_PRELOAD, an embedding program or a run that\n"
  "crashed (a tape not yet symbolised is symbolised first, on the machine that\n"
  "recorded it).\n"
  "Every command reads both forms and answers the same; a sealed tape is left\n"
  "as it is (one of version 2 gains its figures).\n";

/* `heaptape seal`: parse its arguments and run it; returns the exit status. */
int cmd_seal(int argc, char **argv)
{
  int n = 0, rc = HT_EXIT_OK;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(seal_usage, stdout);
      return HT_EXIT_OK;
    }
    if (argv[i][0] == '-' && argv[i][1]) {
      ht_cli_error("seal: unknown option '%s'", argv[i]);
      fputs(seal_usage, stderr);
      return HT_EXIT_USAGE;
    }
  }
  for (int i = 1; i < argc; i++) {
    HtSealSummary sum;
    char err[512];
    n++;
    if (ht_seal_tape(argv[i], HT_SEAL_SYMBOLIZE, &sum, err, sizeof(err))) {
      ht_cli_error("%s", err);
      rc = HT_EXIT_FAIL;
      continue;
    }
    if (sum.already) {
      fprintf(stderr, "heaptape: %s: already sealed\n", argv[i]);
      continue;
    }
    fprintf(stderr, "heaptape: %s: %llu events sealed, %llu -> %llu bytes (%.2f per "
            "allocation) in %.2f s\n", argv[i], (unsigned long long)sum.events,
            (unsigned long long)sum.journal_bytes, (unsigned long long)sum.sealed_bytes,
            sum.allocs ? (double)sum.sealed_bytes / (double)sum.allocs : 0.0, sum.seconds);
  }
  if (!n) {
    ht_cli_error("seal: no tape given");
    fputs(seal_usage, stderr);
    return HT_EXIT_USAGE;
  }
  return rc;
}

/* heaptape -- `heaptape symbolize FILE...`: finalise tapes that were recorded
** without `heaptape record` (plain LD_PRELOAD, embedding, --no-symbols). */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "../src/analyze/symbolize.h"

static const char symbolize_usage[] =
  "usage: heaptape symbolize FILE...\n"
  "Append the symbols (function, file, line, inline chain) of every native\n"
  "address a tape uses, read with libdw from the binaries the tape names, so\n"
  "the tape reads anywhere without them. Run it on the machine that recorded\n"
  "the tape. A tape that already has them is left as it is.\n";

/* `heaptape symbolize`: parse its arguments and run it; returns the exit status. */
int cmd_symbolize(int argc, char **argv)
{
  int n = 0, rc = HT_EXIT_OK;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(symbolize_usage, stdout);
      return HT_EXIT_OK;
    }
    if (argv[i][0] == '-' && argv[i][1]) {
      ht_cli_error("symbolize: unknown option '%s'", argv[i]);
      fputs(symbolize_usage, stderr);
      return HT_EXIT_USAGE;
    }
  }
  for (int i = 1; i < argc; i++) {
    HtSymSummary sum;
    char err[512];
    n++;
    if (ht_symbolize_run(argv[i], 0, &sum, err, sizeof(err))) {
      if (!strncmp(err, argv[i], strlen(argv[i]))) ht_cli_error("%s", err);
      else ht_cli_error("%s: %s", argv[i], err);
      rc = HT_EXIT_FAIL;
      continue;
    }
    fprintf(stderr, "heaptape: %s: %llu addresses, %llu named, %llu with file:line\n",
            argv[i], (unsigned long long)sum.addrs, (unsigned long long)sum.resolved,
            (unsigned long long)sum.with_line);
  }
  if (!n) {
    ht_cli_error("symbolize: no tape given");
    fputs(symbolize_usage, stderr);
    return HT_EXIT_USAGE;
  }
  return rc;
}

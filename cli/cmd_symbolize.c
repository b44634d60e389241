/* heaptape -- `heaptape symbolize FILE...`: finalise tapes that were recorded
** without `heaptape record` (plain LD_PRELOAD, embedding, --no-symbols). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
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
  int n = 0, rc = HT_EXIT_OK, k;
  HtArgs a;
  ht_args_init(&a, argc, argv, "symbolize", symbolize_usage, NULL);
  const char **tapes = calloc((size_t)argc, sizeof(char *));
  if (!tapes) { ht_cli_error("out of memory"); return HT_EXIT_FAIL; }
  while ((k = ht_args_next(&a)) != HT_ARG_END) {
    if (k == HT_ARG_HELP || k == HT_ARG_BAD) {
      free(tapes);
      return k == HT_ARG_HELP ? HT_EXIT_OK : HT_EXIT_USAGE;
    }
    tapes[n++] = a.val;
  }
  if (!n) { free(tapes); return ht_args_missing(&a, "tape"); }
  for (int i = 0; i < n; i++) {
    HtSymSummary sum;
    char err[512];
    if (ht_symbolize_run(tapes[i], 0, &sum, err, sizeof(err))) {
      if (!strncmp(err, tapes[i], strlen(tapes[i]))) ht_cli_error("%s", err);
      else ht_cli_error("%s: %s", tapes[i], err);
      rc = HT_EXIT_FAIL;
      continue;
    }
    fprintf(stderr, "heaptape: %s: %llu addresses, %llu named, %llu with file:line\n",
            tapes[i], (unsigned long long)sum.addrs, (unsigned long long)sum.resolved,
            (unsigned long long)sum.with_line);
  }
  free(tapes);
  return rc;
}

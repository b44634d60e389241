/* heaptape -- `heaptape live FILE`: a terminal view that follows a tape
** while it is written (or scrubs through a finished one). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cmds.h"
#include "live_term.h"

static const char live_usage[] =
  "usage: heaptape live [--pid PID] FILE\n"
  "A terminal view of the tape FILE, following it while it is written: the heap\n"
  "now and over time, the top sites by live bytes, by allocation rate or in\n"
  "total, refreshed every second. Keys: s sort, b bytes/calls, enter a site's\n"
  "stack, p pause, left/right move the moment (scrub through time), n now,\n"
  "up/down select, q quit. `heaptape record --live -- PROG` records and shows\n"
  "PROG at once. --pid PID: the tape of process PID (one recorded elsewhere,\n"
  "e.g. with LD_PRELOAD): waits for it to appear, says when PID has ended.\n"
  "See docs/LIVE.md.\n";

/* `heaptape live`: parse its arguments and run it; returns the exit status. */
int cmd_live(int argc, char **argv)
{
  enum { O_PID = 1 };
  static const HtOpt opts[] = {{"--pid", 0, 1, O_PID}, {NULL, 0, 0, 0}};
  uint64_t pid = 0;
  HtArgs a;
  ht_args_init(&a, argc, argv, "live", live_usage, opts);
  const char *path = NULL;
  int k;
  while ((k = ht_args_next(&a)) != HT_ARG_END) {
    if (k == HT_ARG_HELP) return HT_EXIT_OK;
    if (k == HT_ARG_BAD) return HT_EXIT_USAGE;
    if (k == O_PID) {
      if (ht_args_uint(&a, 1, 4194304, &pid)) return HT_EXIT_USAGE;
      continue;
    }
    if (path) return ht_args_extra(&a, "tape", a.val);
    path = a.val;
  }
  if (!path) return ht_args_missing(&a, "tape");
  HtFollow f;
  if (ht_follow_init(&f, path, (uint32_t)pid)) {
    ht_cli_error("live: out of memory");
    return HT_EXIT_FAIL;
  }
  /* What is wrong with the file is said before the terminal is touched. */
  if (ht_follow_poll(&f, 0)) {
    ht_cli_error("%s", f.err);
    ht_follow_free(&f);
    return HT_EXIT_FAIL;
  }
  if (pid && kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
    ht_cli_error("live: no process %llu", (unsigned long long)pid);
    ht_follow_free(&f);
    return HT_EXIT_FAIL;
  }
  char dmg[320] = "";
  if (f.r) ht_cli_damage(f.r, dmg, sizeof(dmg));
  if (dmg[0]) {
    ht_cli_error("%s: %s (heaptape report reads what is left)", path, dmg);
    ht_follow_free(&f);
    return HT_EXIT_FAIL;
  }
  int status = 0, reaped = 0;
  int rc = ht_live_term_run(&f, (pid_t)pid, &status, &reaped, path);
  ht_follow_free(&f);
  return rc ? HT_EXIT_FAIL : HT_EXIT_OK;
}

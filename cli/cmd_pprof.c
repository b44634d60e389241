/* heaptape -- `heaptape pprof` (placeholder until its issue lands).
** Replaced by the real subcommand. */
#include "cmds.h"

int cmd_pprof(int argc, char **argv)
{
  (void)argc; (void)argv;
  ht_cli_error("pprof: not implemented yet");
  return HT_EXIT_FAIL;
}

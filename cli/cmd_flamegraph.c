/* heaptape -- `heaptape flamegraph` (placeholder until its issue lands).
** Replaced by the real subcommand. */
#include "cmds.h"

int cmd_flamegraph(int argc, char **argv)
{
  (void)argc; (void)argv;
  ht_cli_error("flamegraph: not implemented yet");
  return HT_EXIT_FAIL;
}

/* heaptape -- `heaptape replay` (placeholder until its issue lands).
** Replaced by the real subcommand. */
#include "cmds.h"

int cmd_replay(int argc, char **argv)
{
  (void)argc; (void)argv;
  ht_cli_error("replay: not implemented yet");
  return HT_EXIT_FAIL;
}

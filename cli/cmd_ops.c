/* heaptape -- `heaptape ops` (placeholder until its issue lands).
** Replaced by the real subcommand. */
#include "cmds.h"

int cmd_ops(int argc, char **argv)
{
  (void)argc; (void)argv;
  ht_cli_error("ops: not implemented yet");
  return HT_EXIT_FAIL;
}

/* heaptape -- `heaptape stats` (placeholder until its issue lands).
** Replaced by the real subcommand. */
#include "cmds.h"

int cmd_stats(int argc, char **argv)
{
  (void)argc; (void)argv;
  ht_cli_error("stats: not implemented yet");
  return HT_EXIT_FAIL;
}

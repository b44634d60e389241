/* heaptape -- `heaptape heapmap` (placeholder until its issue lands).
** Replaced by the real subcommand. */
#include "cmds.h"

int cmd_heapmap(int argc, char **argv)
{
  (void)argc; (void)argv;
  ht_cli_error("heapmap: not implemented yet");
  return HT_EXIT_FAIL;
}

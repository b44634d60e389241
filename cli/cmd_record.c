/* heaptape -- `heaptape record` (placeholder until its issue lands).
** Replaced by the real subcommand. */
#include "cmds.h"

int cmd_record(int argc, char **argv)
{
  (void)argc; (void)argv;
  ht_cli_error("record: not implemented yet");
  return HT_EXIT_FAIL;
}

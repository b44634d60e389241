/* heaptape -- `heaptape report` (placeholder until its issue lands).
** Replaced by the real subcommand. */
#include "cmds.h"

int cmd_report(int argc, char **argv)
{
  (void)argc; (void)argv;
  ht_cli_error("report: not implemented yet");
  return HT_EXIT_FAIL;
}

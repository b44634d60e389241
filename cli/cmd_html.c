/* heaptape -- `heaptape html` (placeholder until its issue lands).
** Replaced by the real subcommand. */
#include "cmds.h"

int cmd_html(int argc, char **argv)
{
  (void)argc; (void)argv;
  ht_cli_error("html: not implemented yet");
  return HT_EXIT_FAIL;
}

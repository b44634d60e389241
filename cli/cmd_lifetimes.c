/* heaptape -- `heaptape lifetimes` (placeholder until its issue lands).
** Replaced by the real subcommand. */
#include "cmds.h"

int cmd_lifetimes(int argc, char **argv)
{
  (void)argc; (void)argv;
  ht_cli_error("lifetimes: not implemented yet");
  return HT_EXIT_FAIL;
}

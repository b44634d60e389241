/* heaptape -- helpers shared by the picture commands: tape opening, damage
** warnings, option values and the one analysis pass they all make. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "vizcli.h"
#include "../include/heaptape.h"

/* Parse seconds into ns. */
int ht_vizcli_seconds(const char *s, uint64_t *ns)
{
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || !(v >= 0) || v > 1e9) return -1;
  *ns = (uint64_t)llround(v * 1e9);
  return 0;
}

/* One pass into the model. */
int ht_vizcli_pass(const char *path, HtModel *m)
{
  if (ht_model_run(m)) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    return -1;
  }
  return 0;
}

/* The value of option argv[*i]. */
const char *ht_vizcli_optval(int argc, char **argv, int *i, const char *cmd)
{
  const char *eq = strchr(argv[*i], '=');
  if (eq && argv[*i][0] == '-' && argv[*i][1] == '-') return eq + 1;
  if (*i + 1 >= argc) {
    ht_cli_error("%s: option '%s' needs a value", cmd, argv[*i]);
    return NULL;
  }
  return argv[++*i];
}

/* Whether arg is the flag name, alone or as "name=value". */
int ht_vizcli_is(const char *arg, const char *name)
{
  size_t n = strlen(name);
  return !strncmp(arg, name, n) && (arg[n] == 0 || arg[n] == '=');
}

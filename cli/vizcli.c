/* heaptape -- the one analysis pass the picture commands make. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "vizcli.h"
#include "../src/analyze/agg.h"
#include "../include/heaptape.h"

/* One pass into the model. */
int ht_vizcli_pass(const char *path, HtModel *m)
{
  if (ht_agg_model(m)) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    return -1;
  }
  return 0;
}

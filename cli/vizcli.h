/* heaptape -- what the picture commands (pprof, flamegraph, html) and the
** record --pprof-every hook share: opening tapes, warnings, option values. */
#ifndef HT_VIZCLI_H
#define HT_VIZCLI_H

#include <stdint.h>
#include "../src/format/reader.h"
#include "../src/analyze/model.h"
#include "../src/output/tally.h"

/* Parse seconds (>= 0) into ns; -1 if malformed. */
int ht_vizcli_seconds(const char *s, uint64_t *ns);
/* One pass of the model over its tape (finished). Returns 0, or -1 after
** printing an error. */
int ht_vizcli_pass(const char *path, HtModel *m);
/* "--flag=value" or "--flag value": the value of option i, advancing *i;
** NULL (after an error) if missing. Sets *name to the bare flag. */
const char *ht_vizcli_optval(int argc, char **argv, int *i, const char *cmd);

/* Whether arg is the flag name, alone or as "name=value". */
int ht_vizcli_is(const char *arg, const char *name);

#endif

/* heaptape -- what the picture commands (pprof, flamegraph, html) and the
** record --pprof-every hook share: the analysis pass. */
#ifndef HT_VIZCLI_H
#define HT_VIZCLI_H

#include <stdint.h>
#include "../src/format/reader.h"
#include "../src/analyze/model.h"
#include "../src/output/tally.h"

/* One pass of the model over its tape (finished). Returns 0, or -1 after
** printing an error. */
int ht_vizcli_pass(const char *path, HtModel *m);

#endif

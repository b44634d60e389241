/* heaptape -- a sealed tape's aggregate section (AGG, format version 3):
** the figures of the model's pass, computed once by the sealer, so report,
** stats, flamegraph and pprof need no pass over the events. */
#ifndef HT_AGG_H
#define HT_AGG_H

#include "aggnames.h"
#include "model.h"
#include "snaps.h"

/* Encode the finished model m, built with split sites (one per stack,
** thread and domain), the names of its sites (or NULL) and the snapshots
** sn taken of it (or NULL) as an AGG body into *out (malloc'd, *len
** bytes), the heap map's layout (HT_A_LAYOUT's payload, maplayout.h; NULL:
** none) last. Returns 0 or HEAPTAPE_E_NOMEM. */
int ht_agg_encode(const HtModel *m, const HtAggNames *names, const HtSnaps *sn,
                  const uint8_t *layout, size_t nlayout, uint8_t **out,
                  size_t *len) HT_HIDDEN;

/* Fill m (initialised, not yet fed) from its tape's AGG when usable, else
** by the pass (ht_model_run). Returns as ht_model_run. */
int ht_agg_model(HtModel *m) HT_HIDDEN;

/* Fill m (initialised, not yet fed; its snapshot options are ignored) and
** the snapshots sn (empty, set up by ht_snaps_setup) from the AGG, when its
** snapshots, folded to sn->fold, are those the pass takes (ht_snaps_fit)
** and m asks neither --at nor recent allocations.
** Returns 1 done, 0 when it cannot (m and sn are empty again: make the
** pass), or HEAPTAPE_E_NOMEM. */
int ht_agg_load_snaps(HtModel *m, HtSnaps *sn) HT_HIDDEN;

#endif

/* heaptape -- a sealed tape's names of its sites (AGG field NAMES, format
** version 12): each stored site's location and the group of caller lines
** the report shows it in, made by the sealer under the default options, so
** a report names the few stacks it prints, not all (cc1plus: 70k stacks
** named were a third of its report). */
#ifndef HT_AGGNAMES_H
#define HT_AGGNAMES_H
#include "model.h"

typedef struct HtAggNames {
  uint64_t mark[2];          /* the names they were made with (ht_aggnames_mark) */
  unsigned depth;            /* the groups' --stacks */
  uint32_t n;                /* sites, in the AGG's order */
  uint32_t nloc, ngroup;     /* location and group ids are below these */
  uint32_t *loc, *group;     /* per site */
} HtAggNames;

/* The names r reads stacks with, as a mark: its DICT packets and their
** bytes (heaptape symbolize appends to both; the sealer copies them). */
void ht_aggnames_mark(const HtReader *r, uint64_t mark[2]) HT_HIDDEN;
/* The names of the sites of m (the sealer's finished model) with no
** --wrapper and the report's default --stacks. 0 or HEAPTAPE_E_NOMEM. */
int ht_aggnames_make(const HtModel *m, HtAggNames *nm) HT_HIDDEN;
void ht_aggnames_free(HtAggNames *nm) HT_HIDDEN;
#endif

/* heaptape -- the caller lines of a merged row's stacks, each stack's
** computed once a report: stacks that print the same lines share an id. */
#ifndef HT_CALLERS_H
#define HT_CALLERS_H
#include "model.h"
#include "../base/strtab.h"

/* The report's --stacks when none is given (a sealed tape stores its
** stacks' groups at this depth). */
#define HT_CALLERS_DEPTH 8

typedef struct HtCallers {
  const HtModel *m;          /* sites, stacks and the reader naming them */
  unsigned depth;            /* levels shown per stack (--stacks) */
  int stored;                /* ids are the sites' stored groups (HtSite.group) */
  uint32_t nid;              /* ids are below it */
  HtMap line_of;             /* level (ht_frames_level_key) -> line id + 1 */
  HtStrtab lines;            /* one level as printed, " (inlined)" included */
  HtStrtab keys;             /* a stack's lines as line ids: the text's id */
  uint32_t *text_of;         /* site -> text id + 1 (0 = not yet named) */
  uint32_t *below;           /* stack node -> its and its callers' levels + 1 */
  HtMap frame_at;            /* frame value -> its entry in pool + 1 */
  uint32_t *pool;            /* per frame seen: its levels k, then their k line ids */
  size_t npool, cpool;       /* used, allocated */
} HtCallers;

/* Ready for the model's sites; 0 or -1 (out of memory). */
int ht_callers_init(HtCallers *c, const HtModel *m, unsigned depth) HT_HIDDEN;
void ht_callers_free(HtCallers *c) HT_HIDDEN;
/* The id of site's caller lines (sites that print the same share it, ids
** below c->nid); -1 when out of memory. */
int64_t ht_callers_id(HtCallers *c, uint32_t site) HT_HIDDEN;
/* The caller lines of site (under the row's location, as the report
** prints them; caller frees), or NULL when out of memory. */
char *ht_callers_text(HtCallers *c, uint32_t site) HT_HIDDEN;
#endif

/* heaptape -- a sealed tape's names of its sites: made by the sealer with
** a model of its own (not split, no --wrapper) over the final names, since
** the sealing model named its sites before the symbols came. */
#include <stdlib.h>
#include <string.h>

#include "aggnames.h"
#include "callers.h"
#include "../../include/heaptape.h"

void ht_aggnames_mark(const HtReader *r, uint64_t mark[2])
{
  size_t len;
  mark[0] = mark[1] = 0;
  for (size_t i = 0; ht_reader_dict_packet(r, i, &len); i++) {
    mark[0]++;
    mark[1] += len;
  }
}

int ht_aggnames_make(const HtModel *m, HtAggNames *nm)
{
  memset(nm, 0, sizeof(*nm));
  HtModelOpts o = {.at_ns = UINT64_MAX};
  HtModel names;
  if (ht_model_init(&names, m->r, &o)) return HEAPTAPE_E_NOMEM;
  nm->loc = malloc((m->nsite ? m->nsite : 1) * sizeof(uint32_t));
  nm->group = malloc((m->nsite ? m->nsite : 1) * sizeof(uint32_t));
  int bad = !nm->loc || !nm->group;
  /* Every site's stack as a site of its own model first (the callers are
  ** made for all of them), its index kept in group meanwhile. */
  for (uint32_t i = 0; i < m->nsite && !bad; i++) {
    uint32_t si = ht_model_site(&names, m->site[i].stack, 0, 0);
    if (si == UINT32_MAX) { bad = 1; break; }
    nm->loc[i] = names.site[si].loc;
    nm->group[i] = si;
  }
  HtCallers c;
  if (!bad && !ht_callers_init(&c, &names, HT_CALLERS_DEPTH)) {
    for (uint32_t i = 0; i < m->nsite && !bad; i++) {
      int64_t id = ht_callers_id(&c, nm->group[i]);
      if (id < 0) bad = 1;
      else nm->group[i] = (uint32_t)id;
    }
    nm->ngroup = (uint32_t)c.keys.n;
    ht_callers_free(&c);
  } else {
    bad = 1;
  }
  bad |= names.oom;
  nm->nloc = names.nloc;
  ht_model_free(&names);
  if (bad) { ht_aggnames_free(nm); return HEAPTAPE_E_NOMEM; }
  ht_aggnames_mark(m->r, nm->mark);
  nm->depth = HT_CALLERS_DEPTH;
  nm->n = m->nsite;
  return 0;
}

void ht_aggnames_free(HtAggNames *nm)
{
  free(nm->loc);
  free(nm->group);
  memset(nm, 0, sizeof(*nm));
}

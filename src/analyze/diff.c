/* heaptape -- two tapes compared: sites matched by location name, their
** changes, the totals' changes, and the order the outputs show them in. */
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "../../include/heaptape.h"

/* Difference b - a of two unsigned figures. */
static int64_t diff_sub(uint64_t a, uint64_t b)
{
  return (int64_t)(b - a);
}

/* Fill a site's changes from its two sides (either may be NULL). */
static void diff_fill(HtDiffSite *s)
{
  static const HtFig zero;
  const HtFig *a = s->base ? s->base : &zero, *b = s->now ? s->now : &zero;
  s->d_allocs = diff_sub(a->allocs, b->allocs);
  s->d_bytes = diff_sub(a->bytes, b->bytes);
  s->d_peak = diff_sub(a->peak, b->peak);
  s->d_leaked = diff_sub(a->live, b->live);
  s->d_leaked_n = diff_sub(a->live_n, b->live_n);
}

/* The change of a site under a key. */
int64_t ht_diff_change(const HtDiffSite *s, HtDiffKey key)
{
  switch (key) {
  case HT_DIFF_CALLS: return s->d_allocs;
  case HT_DIFF_PEAK: return s->d_peak;
  case HT_DIFF_LEAKED: return s->d_leaked;
  default: return s->d_bytes;
  }
}

/* The name of a key. */
const char *ht_diff_key_name(HtDiffKey key)
{
  switch (key) {
  case HT_DIFF_CALLS: return "allocation calls";
  case HT_DIFF_PEAK: return "bytes at the peak";
  case HT_DIFF_LEAKED: return "bytes leaked";
  default: return "bytes allocated";
  }
}

/* Location names, for the merge. */
static int diff_name_cmp(const void *a, const void *b, void *arg)
{
  const HtModel *m = arg;
  return strcmp(m->loc[*(const uint32_t *)a].name, m->loc[*(const uint32_t *)b].name);
}

/* Larger absolute change first; then larger growth; ties by name. */
static int diff_cmp(const void *a, const void *b, void *arg)
{
  const HtDiffKey *k = arg;
  const HtDiffSite *x = a, *y = b;
  int64_t cx = ht_diff_change(x, *k), cy = ht_diff_change(y, *k);
  uint64_t ax = cx < 0 ? -(uint64_t)cx : (uint64_t)cx;
  uint64_t ay = cy < 0 ? -(uint64_t)cy : (uint64_t)cy;
  if (ax != ay) return ax > ay ? -1 : 1;
  if (cx != cy) return cx > cy ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Location indexes of a model sorted by name; NULL on OOM. */
static uint32_t *diff_by_name(const HtModel *m)
{
  uint32_t *v = malloc((m->nloc ? m->nloc : 1) * sizeof(uint32_t));
  if (!v) return NULL;
  for (uint32_t i = 0; i < m->nloc; i++) v[i] = i;
  qsort_r(v, m->nloc, sizeof(uint32_t), diff_name_cmp, (void *)m);
  return v;
}

/* Compare two finished models. */
int ht_diff_build(HtDiff *d, const HtModel *base, const HtModel *now, HtDiffKey key)
{
  memset(d, 0, sizeof(*d));
  d->base = base;
  d->now = now;
  d->key = key;
  uint32_t *a = diff_by_name(base), *b = diff_by_name(now);
  d->site = calloc((size_t)base->nloc + now->nloc + 1, sizeof(HtDiffSite));
  if (!a || !b || !d->site) {
    free(a); free(b); ht_diff_free(d);
    return HEAPTAPE_E_NOMEM;
  }
  uint32_t i = 0, j = 0;
  while (i < base->nloc || j < now->nloc) {  /* merge two sorted name lists */
    const HtLoc *x = i < base->nloc ? &base->loc[a[i]] : NULL;
    const HtLoc *y = j < now->nloc ? &now->loc[b[j]] : NULL;
    int c = !x ? 1 : !y ? -1 : strcmp(x->name, y->name);
    HtDiffSite *s = &d->site[d->nsite++];
    if (c <= 0) { s->base = &x->f; s->name = x->name; s->side |= HT_DIFF_BASE; i++; }
    if (c >= 0) { s->now = &y->f; s->name = y->name; s->side |= HT_DIFF_NEW; j++; }
    diff_fill(s);
    if (s->side == HT_DIFF_BOTH) d->nboth++;
    else if (s->side == HT_DIFF_BASE) d->nbase++;
    else d->nnew++;
  }
  free(a);
  free(b);
  qsort_r(d->site, d->nsite, sizeof(HtDiffSite), diff_cmp, &d->key);
  d->d_allocs = diff_sub(base->allocs, now->allocs);
  d->d_bytes = diff_sub(base->bytes, now->bytes);
  d->d_peak = diff_sub(base->peak, now->peak);
  d->d_peak_n = diff_sub(base->peak_n, now->peak_n);
  d->d_leaked = diff_sub(base->heap, now->heap);
  d->d_leaked_n = diff_sub(base->heap_n, now->heap_n);
  d->d_temp = diff_sub(base->temp, now->temp);
  return 0;
}

/* Release what d owns. */
void ht_diff_free(HtDiff *d)
{
  free(d->site);
  memset(d, 0, sizeof(*d));
}

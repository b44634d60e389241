/* heaptape -- the heap over time per site: snapshots at evenly spaced
** times taken during the model's pass (or loaded from a sealed tape's
** aggregate section), which the HTML page draws. */
#include <stdlib.h>
#include <string.h>

#include "snaps.h"
#include "../base/grow.h"

/* The step the snapshots of a pass over duration_ns get when they fold at
** `fold` (ht_snaps_setup): the smallest power of two (ns) giving at most
** fold snapshots (at step, 2 step, ... up to the end). A pass needs not
** know it (its snapshots fold as the tape goes on); readers of stored
** snapshots compare with it. */
uint64_t ht_snaps_step(uint64_t duration_ns, uint32_t fold)
{
  uint64_t step = 1;
  while (fold && duration_ns / step > fold && step < UINT64_MAX / 4) step *= 2;
  return step;
}

/* Make room for need elements of size sz in *v (void ** as void *). */
static int snaps_grow(HtSnaps *s, void *v, size_t need, size_t *cap, size_t sz)
{
  if (!ht_grow(v, cap, need, sz)) return 0;
  s->oom = 1;
  return -1;
}

/* In the snapshot begun: site holds only blocks of 0 bytes (report --at
** counts them). */
static void snaps_zero(HtSnaps *s, uint32_t site, uint64_t blocks)
{
  if (s->oom || snaps_grow(s, &s->zent, s->nzent + 2, &s->czent, sizeof(uint64_t))) return;
  s->zent[s->nzent++] = site;
  s->zent[s->nzent++] = blocks;
}

/* Start snapshot n at time t with the heap and the totals so far. */
int ht_snaps_begin(HtSnaps *s, uint64_t t, uint64_t heap, uint64_t allocs, uint64_t temp)
{
  if (s->oom) return -1;
  if (s->n + 2 > s->c) {
    uint32_t c = s->c ? s->c * 2 : 128;
    uint64_t **arr[] = {&s->t, &s->heap, &s->allocs, &s->temp};
    for (size_t i = 0; i < HT_COUNTOF(arr); i++) {
      uint64_t *v = realloc(*arr[i], c * sizeof(uint64_t));
      if (!v) { s->oom = 1; return -1; }
      *arr[i] = v;
    }
    size_t **idx[] = {&s->first, &s->dfirst, &s->zfirst};
    for (size_t i = 0; i < HT_COUNTOF(idx); i++) {
      size_t *v = realloc(*idx[i], (c + 1) * sizeof(size_t));
      if (!v) { s->oom = 1; return -1; }
      *idx[i] = v;
    }
    s->c = c;
  }
  s->t[s->n] = t;
  s->heap[s->n] = heap;
  s->allocs[s->n] = allocs;
  s->temp[s->n] = temp;
  s->first[s->n] = s->nent;
  s->dfirst[s->n] = s->ndent;
  s->zfirst[s->n] = s->nzent;
  return 0;
}

/* In the snapshot begun: site holds bytes (not 0) in blocks, sites in
** increasing order. */
void ht_snaps_live(HtSnaps *s, uint32_t site, uint64_t bytes, uint64_t blocks)
{
  if (s->oom || snaps_grow(s, &s->esite, s->nent + 1, &s->cesite, sizeof(uint32_t)) ||
      snaps_grow(s, &s->ebytes, s->nent + 1, &s->cebytes, sizeof(uint64_t)) ||
      (!s->no_blocks && snaps_grow(s, &s->entn, s->nent + 1, &s->centn, sizeof(uint64_t))))
    return;
  if (!s->no_blocks) s->entn[s->nent] = blocks;
  s->esite[s->nent] = site;
  s->ebytes[s->nent++] = bytes;
}

/* In the snapshot begun: site made calls and temporaries since the last. */
void ht_snaps_calls(HtSnaps *s, uint32_t site, uint64_t calls, uint64_t temp)
{
  if (s->oom || snaps_grow(s, &s->dsite, s->ndent + 1, &s->cdsite, sizeof(uint32_t)) ||
      snaps_grow(s, &s->dval, 2 * s->ndent + 2, &s->cdval, sizeof(uint64_t)))
    return;
  s->dval[2 * s->ndent] = calls;
  s->dval[2 * s->ndent + 1] = temp;
  s->dsite[s->ndent++] = site;
}

/* End the snapshot begun. */
void ht_snaps_end(HtSnaps *s)
{
  if (s->oom) return;
  s->n++;
  s->first[s->n] = s->nent;
  s->dfirst[s->n] = s->ndent;
  s->zfirst[s->n] = s->nzent;
}

/* HtSnapFn: record the live bytes of every site, and the calls and
** temporaries each site made since the previous snapshot. */
void ht_snaps_take(void *arg, const HtModel *m, uint64_t t_ns)
{
  HtSnaps *s = arg;
  if (s->oom) return;
  if (m->nsite > s->nprev) {
    uint64_t *p = realloc(s->prev, (size_t)m->nsite * 2 * sizeof(uint64_t));
    if (!p) { s->oom = 1; return; }
    memset(p + 2 * (size_t)s->nprev, 0, (size_t)(m->nsite - s->nprev) * 2 * sizeof(uint64_t));
    s->prev = p;
    s->nprev = m->nsite;
  }
  if (ht_snaps_begin(s, t_ns, m->heap, m->allocs, m->temp)) return;
  for (uint32_t i = 0; i < m->nsite; i++) {
    const HtFig *f = &m->site[i].f;
    uint64_t *p = s->prev + 2 * (size_t)i;
    if (f->allocs != p[0] || f->temp != p[1]) {
      ht_snaps_calls(s, i, f->allocs - p[0], f->temp - p[1]);
      p[0] = f->allocs;
      p[1] = f->temp;
    }
    if (f->live) ht_snaps_live(s, i, f->live, f->live_n);
    else if (f->live_n) snaps_zero(s, i, f->live_n);
  }
  ht_snaps_end(s);
}

static int snaps_u32_cmp(const void *x, const void *y)
{
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  return a < b ? -1 : a > b;
}

/* Keep the snapshots keep[0..nk) (rising indexes), each with the calls
** and temporaries of the dropped ones since the previous kept; the rest go.
** In place: what is kept only moves down (a group's triples are all read
** before its sums are written, over at most as many). */
static void snaps_keep(HtSnaps *s, const uint32_t *keep, uint32_t nk)
{
  if (s->oom) return;
  uint64_t nsite = 0;  /* sites named by the triples */
  for (size_t e = 0; e < s->ndent; e++)
    if (s->dsite[e] >= nsite) nsite = (uint64_t)s->dsite[e] + 1;
  uint64_t *sum = calloc(2 * nsite + 1, sizeof(uint64_t));
  uint8_t *mark = calloc(nsite + 1, 1);
  uint32_t *list = malloc((nsite + 1) * sizeof(uint32_t));
  if (!sum || !mark || !list) {
    free(sum); free(mark); free(list);
    s->oom = 1;
    return;
  }
  size_t ne = 0, nz = 0, nd = 0;  /* entries written so far */
  uint32_t from = 0;
  for (uint32_t j = 0; j < nk; j++) {
    uint32_t k = keep[j];
    size_t e0 = s->first[k], e1 = s->first[k + 1], z0 = s->zfirst[k], z1 = s->zfirst[k + 1];
    size_t d0 = s->dfirst[from], d1 = s->dfirst[k + 1];
    s->t[j] = s->t[k];
    s->heap[j] = s->heap[k];
    s->allocs[j] = s->allocs[k];
    s->temp[j] = s->temp[k];
    s->first[j] = ne;
    s->zfirst[j] = nz;
    s->dfirst[j] = nd;
    if (e1 > e0) {
      memmove(s->esite + ne, s->esite + e0, (e1 - e0) * sizeof(uint32_t));
      memmove(s->ebytes + ne, s->ebytes + e0, (e1 - e0) * sizeof(uint64_t));
      if (s->entn) memmove(s->entn + ne, s->entn + e0, (e1 - e0) * sizeof(uint64_t));
    }
    ne += e1 - e0;
    if (z1 > z0) memmove(s->zent + nz, s->zent + z0, (z1 - z0) * sizeof(uint64_t));
    nz += z1 - z0;
    uint32_t nl = 0;  /* the sites of the triples from..k, summed */
    for (size_t e = d0; e < d1; e++) {
      uint32_t i = s->dsite[e];
      if (!mark[i]) { mark[i] = 1; list[nl++] = i; }
      sum[2 * i] += s->dval[2 * e];
      sum[2 * i + 1] += s->dval[2 * e + 1];
    }
    qsort(list, nl, sizeof(uint32_t), snaps_u32_cmp);
    for (uint32_t l = 0; l < nl; l++) {
      uint32_t i = list[l];
      s->dsite[nd] = i;
      s->dval[2 * nd] = sum[2 * i];
      s->dval[2 * nd + 1] = sum[2 * i + 1];
      nd++;
      sum[2 * i] = sum[2 * i + 1] = 0;
      mark[i] = 0;
    }
    from = k + 1;
  }
  s->n = nk;
  s->nent = ne;
  s->nzent = nz;
  s->ndent = nd;
  if (s->first) {  /* (none when no snapshot was ever begun) */
    s->first[nk] = ne;
    s->zfirst[nk] = nz;
    s->dfirst[nk] = nd;
  }
  free(sum); free(mark); free(list);
}

/* HtFoldFn: keep every other snapshot (the 2nd, 4th, ...), each with the
** calls and temporaries of the one dropped before it, at twice the step:
** the snapshots a pass at that step takes. An odd last one is dropped (the
** next at the new step is not taken yet). */
void ht_snaps_fold(void *arg)
{
  HtSnaps *s = arg;
  uint32_t *keep = malloc((s->n / 2 + 1) * sizeof(uint32_t));
  if (!keep) { s->oom = 1; return; }
  for (uint32_t j = 0; j < s->n / 2; j++) keep[j] = 2 * j + 1;
  snaps_keep(s, keep, s->n / 2);
  free(keep);
  s->step *= 2;
}

/* The snapshots a page of `buckets` keeps of n a step apart (the k-th at
** (k + 1) step) over duration_ns: the last at or before each of duration /
** buckets, 2 duration / buckets, ... up to the end; their indexes into
** keep (room for buckets), their number returned. */
static uint32_t snaps_pick_keep(uint64_t step, uint32_t n, uint64_t duration_ns,
                                unsigned buckets, uint32_t *keep)
{
  uint64_t q = duration_ns / buckets, r = duration_ns % buckets;
  uint32_t nk = 0;
  for (unsigned j = 1; j <= buckets; j++) {
    uint64_t at = q * j + r * j / buckets, k = at / step;  /* snapshot k at k step */
    if (k >= 1 && k <= n && (!nk || keep[nk - 1] < k - 1)) keep[nk++] = (uint32_t)(k - 1);
  }
  return nk;
}

/* For a page of `buckets` (the snapshots folded to 2 * buckets over
** duration_ns): the last snapshot at or before each of duration / buckets,
** 2 duration / buckets, ... up to the end, so that the page holds buckets
** of them, a step apart at most from even spacing; s->step becomes that
** spacing. Fewer snapshots than buckets (a tape of a few ns) stay. */
void ht_snaps_pick(HtSnaps *s, uint64_t duration_ns, unsigned buckets)
{
  if (s->oom || !buckets || s->n <= buckets || !s->step) return;
  uint32_t *keep = malloc(buckets * sizeof(uint32_t));
  if (!keep) { s->oom = 1; return; }
  uint32_t nk = snaps_pick_keep(s->step, s->n, duration_ns, buckets, keep);
  snaps_keep(s, keep, nk);
  free(keep);
  s->step = duration_ns / buckets;
}

/* Of n snapshots loaded a step apart (the k-th at (k + 1) step), those
** ht_snaps_fit's folds to s->fold and then ht_snaps_pick(duration_ns,
** s->pick) keep: want[k] = 1 (want zeroed, n bytes). 0, or -1 out of
** memory. */
int ht_snaps_wanted(const HtSnaps *s, uint64_t step, uint32_t n, uint64_t duration_ns,
                    uint8_t *want)
{
  uint64_t stride = 1;  /* folded snapshot j is loaded snapshot (j + 1) stride - 1 */
  while (s->fold && n > s->fold && step < UINT64_MAX / 4) {  /* ht_snaps_fold's */
    n /= 2;
    stride *= 2;
    step *= 2;
  }
  if (!s->pick || n <= s->pick) {  /* ht_snaps_pick keeps them all */
    for (uint32_t j = 0; j < n; j++) want[(j + 1) * stride - 1] = 1;
    return 0;
  }
  uint32_t *keep = malloc(s->pick * sizeof(uint32_t));
  if (!keep) return -1;
  uint32_t nk = snaps_pick_keep(step, n, duration_ns, s->pick, keep);
  for (uint32_t j = 0; j < nk; j++) want[(keep[j] + 1) * stride - 1] = 1;
  free(keep);
  return 0;
}

/* Set s (empty) and mo up for snapshots that fold at 2 * buckets: from
** every ns, their step doubles whenever more are due, so that a pass of
** unknown length ends with `buckets` to 2 * buckets of them (or fewer
** on a tape shorter than 2 * buckets ns), spaced as ht_snaps_step says.
** A pass known to reach end_ns (a whole tape's scan) starts at the step of
** end_ns instead: the same snapshots, without the finer ones folded away. */
void ht_snaps_setup(HtSnaps *s, unsigned buckets, uint64_t end_ns, HtModelOpts *mo)
{
  s->fold = 2 * buckets;
  s->step = ht_snaps_step(end_ns, s->fold);
  mo->snap_ns = s->step;
  mo->snap_fold = s->fold;
  mo->on_snap = ht_snaps_take;
  mo->on_fold = ht_snaps_fold;
  mo->on_rss = ht_snaps_rss;
  mo->arg = s;
}

/* Fold snapshots loaded from a tape to s->fold; 1 when they are then the
** ones a pass over duration_ns gives (ht_snaps_setup), 0 when not (another
** spacing, or cut short). */
int ht_snaps_fit(HtSnaps *s, uint64_t duration_ns)
{
  while (!s->oom && s->fold && s->n > s->fold && s->step < UINT64_MAX / 4) ht_snaps_fold(s);
  if (s->oom || s->step != ht_snaps_step(duration_ns, s->fold) || s->n != duration_ns / s->step)
    return 0;
  for (uint32_t i = 0; i < s->n; i++)
    if (s->t[i] != (uint64_t)(i + 1) * s->step) return 0;
  return 1;
}

/* HtRssFn: keep an RSS sample. */
void ht_snaps_rss(void *arg, uint64_t t_ns, uint64_t rss)
{
  HtSnaps *s = arg;
  if (s->oom || snaps_grow(s, &s->rss, s->nrss + 2, &s->crss, sizeof(uint64_t))) return;
  s->rss[s->nrss++] = t_ns;
  s->rss[s->nrss++] = rss;
}

/* Release the snapshots. */
void ht_snaps_free(HtSnaps *s)
{
  free(s->t); free(s->heap); free(s->esite); free(s->ebytes); free(s->entn); free(s->first);
  free(s->zent); free(s->zfirst);
  free(s->allocs); free(s->temp); free(s->dsite); free(s->dval); free(s->dfirst); free(s->prev);
  free(s->rss);
  memset(s, 0, sizeof(*s));
}

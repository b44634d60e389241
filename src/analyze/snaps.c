/* heaptape -- the heap over time per site: snapshots at evenly spaced
** times taken during the model's pass (or loaded from a sealed tape's
** aggregate section), which the HTML page draws. */
#include <stdlib.h>
#include <string.h>

#include "snaps.h"
#include "../base/grow.h"

/* The interval giving `buckets` snapshots over duration_ns (at step, 2 step,
** ... up to the end). Not rounded to a 1-2-5 value: rounding up gave as few
** as 40% of the buckets asked for. A tape shorter than buckets^2 ns (10 us
** for 100) may get fewer: the step is a whole number of ns. */
uint64_t ht_snaps_step(uint64_t duration_ns, unsigned buckets)
{
  if (!duration_ns || !buckets) return 0;
  uint64_t step = duration_ns / buckets;
  if (!step || duration_ns / step > buckets) step++;
  return step;
}

/* Make room for need elements of size sz in *v (void ** as void *). */
static int snaps_grow(HtSnaps *s, void *v, size_t need, size_t *cap, size_t sz)
{
  if (!ht_grow(v, cap, need, sz)) return 0;
  s->oom = 1;
  return -1;
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
  if (s->oom || snaps_grow(s, &s->ent, s->nent + 2, &s->cent, sizeof(uint64_t)) ||
      snaps_grow(s, &s->entn, s->nent / 2 + 1, &s->centn, sizeof(uint64_t)))
    return;
  s->entn[s->nent / 2] = blocks;
  s->ent[s->nent++] = site;
  s->ent[s->nent++] = bytes;
}

/* In the snapshot begun: site made calls and temporaries since the last. */
void ht_snaps_calls(HtSnaps *s, uint32_t site, uint64_t calls, uint64_t temp)
{
  if (s->oom || snaps_grow(s, &s->dent, s->ndent + 3, &s->cdent, sizeof(uint64_t))) return;
  s->dent[s->ndent++] = site;
  s->dent[s->ndent++] = calls;
  s->dent[s->ndent++] = temp;
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
    else if (f->live_n && !snaps_grow(s, &s->zent, s->nzent + 2, &s->czent, sizeof(uint64_t))) {
      s->zent[s->nzent++] = i;  /* blocks of 0 bytes: for report --at's count */
      s->zent[s->nzent++] = f->live_n;
    }
  }
  ht_snaps_end(s);
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
  free(s->t); free(s->heap); free(s->ent); free(s->entn); free(s->first);
  free(s->zent); free(s->zfirst);
  free(s->allocs); free(s->temp); free(s->dent); free(s->dfirst); free(s->prev);
  free(s->rss);
  memset(s, 0, sizeof(*s));
}

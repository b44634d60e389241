/* heaptape -- a sealed tape's aggregate section: the model's figures
** encoded once by the sealer and loaded by every analysis that needs no
** more than them. Layout: docs/FORMAT.md, "AGG". */
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "../base/grow.h"
#include "../base/varint.h"
#include "../../include/heaptape.h"

/*
** Sites are stored split, one per (stack, thread, domain), because pprof
** labels samples by thread and domain; a model that does not split merges
** them by stack as it loads. Every figure of a site adds up under merging
** (the peak is one moment for all sites), so the merged model is the one a
** pass would have built. Sites, threads and replaced-block pairs are stored
** in the order the pass created them, so indexes, and every tie an output
** breaks by index, come out the same.
*/

#define AGG_SITE_FIELDS 17     /* values per site (a reader skips more) */
#define AGG_THREAD_FIELDS 4    /* values per thread after its tid and name */

/* -- Encoding ------------------------------------------------------------- */

typedef struct Buf {
  uint8_t *p;
  size_t n, cap;
  int oom;
} Buf;

static void buf_uleb(Buf *b, uint64_t v)
{
  if (b->oom || ht_grow(&b->p, &b->cap, b->n + 10, 1)) { b->oom = 1; return; }
  b->n = (size_t)(ht_wuleb128(b->p + b->n, v) - b->p);
}

static void buf_mem(Buf *b, const void *q, size_t n)
{
  if (b->oom || ht_grow(&b->p, &b->cap, b->n + n + 1, 1)) { b->oom = 1; return; }
  memcpy(b->p + b->n, q, n);
  b->n += n;
}

/* Append field tag with the payload f holds; empty f for the next one. */
static void buf_field(Buf *out, unsigned tag, Buf *f)
{
  buf_uleb(out, tag);
  buf_uleb(out, f->n);
  buf_mem(out, f->p, f->n);
  if (f->oom) out->oom = 1;
  f->n = 0;
}

static void buf_u64s(Buf *b, const uint64_t *v, size_t n)
{
  for (size_t i = 0; i < n; i++) buf_uleb(b, v[i]);
}

/* The model's totals, in the order of HT_A_TOTALS. */
#define AGG_TOTALS(m) { (m)->events, (m)->allocs, (m)->bytes, (m)->reallocs, \
    (m)->frees, (m)->freed, (m)->temp, (m)->unknown_frees, (m)->unknown_bytes, \
    (m)->dup_allocs, (m)->lost, (m)->heap, (m)->heap_n, (m)->peak, (m)->peak_n, \
    (m)->peak_ts, (m)->peak_seq, (m)->rss_max, (m)->first_ts, (m)->last_ts, \
    (uint64_t)(m)->oom }
#define AGG_NTOTALS 21

int ht_agg_encode(const HtModel *m, const HtAggNames *names, const HtSnaps *sn,
                  const uint8_t *layout, size_t nlayout, uint8_t **out, size_t *len)
{
  Buf o = {0}, f = {0};
  uint64_t tot[AGG_NTOTALS] = AGG_TOTALS(m);
  buf_u64s(&f, tot, AGG_NTOTALS);
  buf_field(&o, HT_A_TOTALS, &f);

  buf_uleb(&f, 16);
  buf_u64s(&f, m->by_type, 16);
  buf_u64s(&f, m->by_kind, 16);
  buf_uleb(&f, 65);
  buf_u64s(&f, m->hist, 65);
  buf_field(&o, HT_A_COUNTS, &f);

  buf_uleb(&f, m->nth);
  buf_uleb(&f, AGG_THREAD_FIELDS);
  for (uint32_t i = 0; i < m->nth; i++) {
    const HtThread *t = &m->th[i];
    size_t nl = strnlen(t->name, sizeof(t->name));
    buf_uleb(&f, t->tid);
    buf_uleb(&f, nl);
    buf_mem(&f, t->name, nl);
    uint64_t v[AGG_THREAD_FIELDS] = {t->events, t->allocs, t->bytes, t->frees};
    buf_u64s(&f, v, AGG_THREAD_FIELDS);
  }
  buf_field(&o, HT_A_THREADS, &f);

  if (names && names->n == m->nsite) {  /* before SITES: read as they load */
    uint64_t h[] = {names->mark[0], names->mark[1], names->depth, names->n, names->nloc,
                    names->ngroup};
    buf_u64s(&f, h, HT_COUNTOF(h));
    /* Each id as 0 when it is the next new one, else how far back it is:
    ** ids come new in site order (cc1plus: most sites have a group of
    ** their own; python3: 27 KB as plain ids, on 764 KB). */
    for (int col = 0; col < 2; col++) {
      const uint32_t *v = col ? names->group : names->loc;
      uint32_t next = 0;
      for (uint32_t i = 0; i < names->n; i++) {
        buf_uleb(&f, v[i] == next ? 0 : (uint64_t)next - v[i]);
        if (v[i] == next) next++;
      }
    }
    buf_field(&o, HT_A_NAMES, &f);
  }

  /* Sites column by column (version 7: like values compress best together),
  ** stacks as differences from the previous site's. */
  buf_uleb(&f, m->nsite);
  buf_uleb(&f, AGG_SITE_FIELDS);
  for (size_t j = 0; j < AGG_SITE_FIELDS; j++) {
    uint64_t prev = 0;
    for (uint32_t i = 0; i < m->nsite; i++) {
      const HtSite *s = &m->site[i];
      const HtFig *g = &s->f;
      uint64_t v[AGG_SITE_FIELDS] = {
        s->stack, s->tid, s->rt, g->allocs, g->bytes, g->reallocs, g->frees, g->freed,
        g->temp, g->live, g->live_n, g->peak, g->peak_n, s->r_plus, s->r_minus, s->d_n,
        s->d_minus};
      buf_uleb(&f, j ? v[j] : ht_zigzag((int64_t)(v[0] - prev)));
      prev = v[0];
    }
  }
  buf_field(&o, HT_A_SITES, &f);

  buf_uleb(&f, m->nover);
  for (uint32_t i = 0; i < m->nover; i++) {
    buf_uleb(&f, m->over[i] >> 32);
    buf_uleb(&f, (uint32_t)m->over[i]);
  }
  buf_field(&o, HT_A_OVERS, &f);

  const HtTimeline *tl = &m->tl;
  buf_uleb(&f, tl->res);
  buf_uleb(&f, tl->n);
  buf_uleb(&f, tl->cur);
  buf_u64s(&f, tl->heap, tl->n);
  buf_u64s(&f, tl->rss, tl->n);
  buf_field(&o, HT_A_TIMELINE, &f);

  if (sn && sn->step && !sn->oom) {
    buf_uleb(&f, sn->step);
    buf_uleb(&f, sn->n);
    uint64_t prev_t = 0;
    for (uint32_t i = 0; i < sn->n; i++) {
      uint64_t v[] = {sn->t[i] - prev_t, sn->heap[i], sn->allocs[i], sn->temp[i]};
      prev_t = sn->t[i];
      buf_u64s(&f, v, HT_COUNTOF(v));
      uint64_t prev = 0;
      buf_uleb(&f, sn->first[i + 1] - sn->first[i]);
      for (size_t e = sn->first[i]; e < sn->first[i + 1]; e++) {
        buf_uleb(&f, sn->esite[e] - prev);  /* sites rise within a snapshot */
        buf_uleb(&f, sn->ebytes[e]);
        prev = sn->esite[e];
      }
      prev = 0;
      buf_uleb(&f, sn->dfirst[i + 1] - sn->dfirst[i]);
      for (size_t e = sn->dfirst[i]; e < sn->dfirst[i + 1]; e++) {
        buf_uleb(&f, sn->dsite[e] - prev);
        buf_uleb(&f, sn->dval[2 * e]);
        buf_uleb(&f, sn->dval[2 * e + 1]);
        prev = sn->dsite[e];
      }
    }
    buf_field(&o, HT_A_SNAPS, &f);
    if (sn->entn) {  /* the blocks too: `report --at` starts from a snapshot */
      buf_uleb(&f, sn->n);
      for (uint32_t i = 0; i < sn->n; i++) {
        buf_uleb(&f, sn->first[i + 1] - sn->first[i]);
        for (size_t e = sn->first[i]; e < sn->first[i + 1]; e++) buf_uleb(&f, sn->entn[e]);
        uint64_t prev = 0;
        buf_uleb(&f, (sn->zfirst[i + 1] - sn->zfirst[i]) / 2);
        for (size_t e = sn->zfirst[i]; e < sn->zfirst[i + 1]; e += 2) {
          buf_uleb(&f, sn->zent[e] - prev);
          buf_uleb(&f, sn->zent[e + 1]);
          prev = sn->zent[e];
        }
      }
      buf_field(&o, HT_A_SNAPN, &f);
    }
    buf_uleb(&f, sn->nrss / 2);
    for (size_t i = 0; i < sn->nrss; i++) buf_uleb(&f, sn->rss[i]);
    buf_field(&o, HT_A_RSS, &f);
  }
  if (layout) {
    buf_mem(&f, layout, nlayout);
    buf_field(&o, HT_A_LAYOUT, &f);
  }

  free(f.p);
  if (o.oom) { free(o.p); return HEAPTAPE_E_NOMEM; }
  *out = o.p;
  *len = o.n;
  return 0;
}

/* -- Decoding ------------------------------------------------------------- */

/* A field's payload being read; any short or bad read sets bad. */
typedef struct Rd {
  const uint8_t *p, *end;
  int bad;
} Rd;

static uint64_t rd_u(Rd *d)
{
  uint64_t v = 0;
  if (!d->bad && ht_ruleb128(&d->p, d->end, &v)) d->bad = 1;
  return d->bad ? 0 : v;
}

/* A count of items of at least min_bytes each that the payload can hold. */
static uint64_t rd_count(Rd *d, size_t min_bytes)
{
  uint64_t n = rd_u(d);
  if (n > (uint64_t)(d->end - d->p) / min_bytes) d->bad = 1;
  return d->bad ? 0 : n;
}

/* Skip k values. */
static void rd_skip(Rd *d, uint64_t k)
{
  while (k-- && !d->bad) rd_u(d);
}

/* Skip k values (their bytes: those with the top bit clear end one). */
static void rd_skip_fast(Rd *d, uint64_t k)
{
  const uint8_t *p = d->p;
  while (k && p < d->end) k -= *p++ < 0x80;
  d->p = p;
  if (k) d->bad = 1;
}

static void agg_totals(HtModel *m, Rd *d)
{
  uint64_t v[AGG_NTOTALS];
  for (size_t i = 0; i < AGG_NTOTALS; i++) v[i] = rd_u(d);
  uint64_t *dst[AGG_NTOTALS - 1] = {
    &m->events, &m->allocs, &m->bytes, &m->reallocs, &m->frees, &m->freed, &m->temp,
    &m->unknown_frees, &m->unknown_bytes, &m->dup_allocs, &m->lost, &m->heap, &m->heap_n,
    &m->peak, &m->peak_n, &m->peak_ts, &m->peak_seq, &m->rss_max, &m->first_ts,
    &m->last_ts};
  for (size_t i = 0; i < AGG_NTOTALS - 1; i++) *dst[i] = v[i];
  m->oom = v[AGG_NTOTALS - 1] != 0;
}

/* n values into v[max] (the rest dropped). */
static void agg_array(Rd *d, uint64_t *v, size_t max)
{
  uint64_t n = rd_count(d, 1);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t x = rd_u(d);
    if (i < max) v[i] = x;
  }
}

static void agg_counts(HtModel *m, Rd *d)
{
  uint64_t n = rd_count(d, 2);  /* by type, then by kind: n each */
  for (uint64_t i = 0; i < n; i++) {
    uint64_t x = rd_u(d);
    if (i < HT_COUNTOF(m->by_type)) m->by_type[i] = x;
  }
  for (uint64_t i = 0; i < n; i++) {
    uint64_t x = rd_u(d);
    if (i < HT_COUNTOF(m->by_kind)) m->by_kind[i] = x;
  }
  agg_array(d, m->hist, HT_COUNTOF(m->hist));
}

static void agg_threads(HtModel *m, Rd *d)
{
  uint64_t n = rd_count(d, 2), k = rd_u(d);
  if (k < AGG_THREAD_FIELDS) d->bad = 1;
  for (uint64_t i = 0; i < n && !d->bad; i++) {
    uint64_t tid = rd_u(d), nl = rd_u(d);
    if (tid > UINT32_MAX || nl > (uint64_t)(d->end - d->p)) { d->bad = 1; break; }
    HtThread *t = ht_model_thread(m, (uint32_t)tid);
    if (!t) { d->bad = 1; break; }
    size_t c = nl < sizeof(t->name) - 1 ? (size_t)nl : sizeof(t->name) - 1;
    memcpy(t->name, d->p, c);
    t->name[c] = 0;
    d->p += nl;
    t->events += rd_u(d);
    t->allocs += rd_u(d);
    t->bytes += rd_u(d);
    t->frees += rd_u(d);
    rd_skip(d, k - AGG_THREAD_FIELDS);
  }
}

/* A site's stored values, into m's site si (merged as m's options say). */
static void agg_site_add(HtModel *m, uint32_t si, const uint64_t *v)
{
  HtSite *s = &m->site[si];
  HtFig *g = &s->f;
  g->allocs += v[3]; g->bytes += v[4]; g->reallocs += v[5]; g->frees += v[6];
  g->freed += v[7]; g->temp += v[8]; g->live += v[9]; g->live_n += v[10];
  g->peak += v[11]; g->peak_n += v[12];
  s->r_plus += v[13]; s->r_minus += v[14]; s->d_n += v[15]; s->d_minus += v[16];
}

/* The sites' names as stored (HT_A_NAMES), kept in nm when they are the
** names m would give: made with the names the tape has now (heaptape
** symbolize adds to them) and no --wrapper. */
static void agg_names(HtModel *m, Rd *d, HtAggNames *nm)
{
  uint64_t h[6], mark[2];
  for (size_t i = 0; i < HT_COUNTOF(h); i++) h[i] = rd_u(d);
  if (h[3] > (uint64_t)(d->end - d->p) / 2 || h[4] > UINT32_MAX || h[5] > UINT32_MAX ||
      !h[2] || h[2] > UINT32_MAX)
    d->bad = 1;
  ht_aggnames_mark(m->r, mark);
  if (d->bad || h[0] != mark[0] || h[1] != mark[1] || m->o.nwrappers || m->o.no_sites) {
    d->p = d->end;           /* not these names: the sites are named as they load */
    return;
  }
  *nm = (HtAggNames){{h[0], h[1]}, (unsigned)h[2], (uint32_t)h[3], (uint32_t)h[4],
                     (uint32_t)h[5], malloc((h[3] ? h[3] : 1) * sizeof(uint32_t)),
                     malloc((h[3] ? h[3] : 1) * sizeof(uint32_t))};
  if (!nm->loc || !nm->group) { ht_aggnames_free(nm); m->oom = 1; d->bad = 1; return; }
  for (int col = 0; col < 2; col++) {  /* (coded as ht_agg_encode says) */
    uint32_t *v = col ? nm->group : nm->loc, lim = col ? nm->ngroup : nm->nloc, next = 0;
    for (uint32_t i = 0; i < nm->n && !d->bad; i++) {
      uint64_t back = rd_u(d);
      if (back > next || (!back && next >= lim)) d->bad = 1;
      else if (!back) v[i] = next++;
      else v[i] = next - (uint32_t)back;
    }
  }
  if (d->bad) ht_aggnames_free(nm);
}

/* One stored site's values v into m, a new site at location loc unless it
** is HT_LOC_NONE: its index there, or UINT32_MAX when damaged or out of
** memory. */
static uint32_t agg_site(HtModel *m, const uint64_t *v, uint32_t nstack, uint32_t loc)
{
  if (v[0] > nstack || v[1] > UINT32_MAX || v[2] > 1) return UINT32_MAX;
  uint32_t si = ht_model_site_at(m, (uint32_t)v[0], (uint32_t)v[1], (unsigned)v[2], loc);
  if (si != UINT32_MAX) agg_site_add(m, si, v);
  return si;
}

/* Stored site i into m; with its stored names (nm->n is 0 without them) a
** new site's location is for now its stored one, and first[] notes the
** site each stored location first came with (agg_sites_named). */
static uint32_t agg_site_named(HtModel *m, const uint64_t *v, uint32_t nstack,
                               const HtAggNames *nm, uint32_t *first, uint64_t i)
{
  if (!nm->n) return agg_site(m, v, nstack, HT_LOC_NONE);
  uint32_t sl = nm->loc[i];
  uint32_t si = agg_site(m, v, nstack, sl);
  if (si != UINT32_MAX) {
    if (!first[sl]) first[sl] = si + 1;
    m->site[si].group = nm->group[i] + 1;
  }
  return si;
}

/* The stored locations of sites from..nsite made m's: each named from the
** stack of its first site, in the order they were stored (as m would have
** made them), once the sites are in and the stack table decoded. */
static void agg_sites_named(HtModel *m, Rd *d, const uint32_t *first, uint32_t nloc,
                            uint32_t from)
{
  uint32_t *loc = malloc((nloc ? nloc : 1) * sizeof(uint32_t));
  if (!loc) { m->oom = 1; d->bad = 1; return; }
  for (uint32_t j = 0; j < nloc && !d->bad; j++)
    if (first[j] && (loc[j] = ht_model_loc(m, m->site[first[j] - 1].stack)) == HT_LOC_NONE)
      d->bad = 1;
  for (uint32_t i = from; i < m->nsite && !d->bad; i++) m->site[i].loc = loc[m->site[i].loc];
  free(loc);
}

#define AGG_BAND 128           /* sites read at once from version 7's columns */

/* Version 7's sites: k columns of n values each. Read AGG_BAND sites at a
** time, a cursor in each column, the first found by skipping the columns
** before: a table of all the values at once (cc1plus: 9 MB) cost more in
** fresh pages than the sites' figures themselves. */
static void agg_site_cols(HtModel *m, Rd *d, uint64_t n, uint64_t k, uint32_t *map,
                          uint32_t nstack, const HtAggNames *nm, uint32_t *first)
{
  const uint8_t *cur[AGG_SITE_FIELDS];
  for (uint64_t j = 0; j < k && !d->bad; j++) {
    if (j < AGG_SITE_FIELDS) cur[j] = d->p;
    rd_skip_fast(d, n);
  }
  uint64_t band[AGG_BAND][AGG_SITE_FIELDS], prev = 0;
  for (uint64_t i0 = 0; i0 < n && !d->bad; i0 += AGG_BAND) {
    uint64_t nb = n - i0 < AGG_BAND ? n - i0 : AGG_BAND;
    for (size_t j = 0; j < AGG_SITE_FIELDS; j++) {
      Rd c = {cur[j], d->end, 0};
      for (uint64_t i = 0; i < nb; i++) band[i][j] = rd_u(&c);
      if (c.bad) { d->bad = 1; return; }
      cur[j] = c.p;
    }
    for (uint64_t i = 0; i < nb; i++) band[i][0] = prev += (uint64_t)ht_unzigzag(band[i][0]);
    for (uint64_t i = 0; i < nb; i++) {
      if (i + 8 < nb) {      /* the index's slot of a later site */
        uint64_t later = band[i + 8][0];
        if (m->by_stack_id && later < m->csite_last) __builtin_prefetch(&m->site_last[later]);
        else if (!m->o.split) ht_map_prefetch(&m->site_of, later);
      }
      if ((map[i0 + i] = agg_site_named(m, band[i], nstack, nm, first, i0 + i)) ==
          UINT32_MAX) { d->bad = 1; return; }
    }
  }
}

/* Sites, merged as m's options say, named as nm says when it holds their
** names (see agg_names); *map gets each stored site's index in m. */
static void agg_sites(HtModel *m, Rd *d, HtAggNames *nm, uint32_t **map, uint64_t *nmap)
{
  uint64_t n = rd_count(d, AGG_SITE_FIELDS), k = rd_u(d);
  if (k < AGG_SITE_FIELDS) d->bad = 1;
  if (d->bad) return;
  *map = malloc((n ? n : 1) * sizeof(uint32_t));
  if (!*map) { d->bad = 1; m->oom = 1; return; }
  *nmap = n;
  if (nm->n != n) ht_aggnames_free(nm);  /* (nm->depth: the names are there) */
  uint32_t *first = nm->depth ? calloc(nm->nloc ? nm->nloc : 1, sizeof(uint32_t)) : NULL;
  if (nm->depth && !first) ht_aggnames_free(nm);
  uint32_t nstack = ht_reader_stack_count(m->r), from = m->nsite;
  if (ht_model_reserve_sites(m, n, nstack)) d->bad = 1;  /* (rd_count bounds n) */
  else if (ht_reader_header(m->r)->version >= HT_VERSION_SEALED_COLZ)
    agg_site_cols(m, d, n, k, *map, nstack, nm, first);
  for (uint64_t i = 0; ht_reader_header(m->r)->version < HT_VERSION_SEALED_COLZ && i < n &&
       !d->bad; i++) {
    uint64_t v[AGG_SITE_FIELDS];
    for (size_t j = 0; j < AGG_SITE_FIELDS; j++) v[j] = rd_u(d);
    rd_skip(d, k - AGG_SITE_FIELDS);
    if (!d->bad && ((*map)[i] = agg_site_named(m, v, nstack, nm, first, i)) == UINT32_MAX)
      d->bad = 1;
  }
  if (nm->depth && !d->bad) {  /* the report's groups, at the depth they were made */
    agg_sites_named(m, d, first, nm->nloc, from);
    m->group_depth = nm->depth;
    m->ngroup = nm->ngroup;
  }
  free(first);
}

static void agg_overs(HtModel *m, Rd *d, const uint32_t *map, uint64_t nmap)
{
  uint64_t n = rd_count(d, 2);
  for (uint64_t i = 0; i < n && !d->bad; i++) {
    uint64_t a = rd_u(d), b = rd_u(d);
    if (a >= nmap || b >= nmap) { d->bad = 1; break; }
    ht_model_replaced(m, map[a], map[b]);
  }
}

static void agg_timeline(HtModel *m, Rd *d)
{
  HtTimeline *tl = &m->tl;
  uint64_t res = rd_u(d), n = rd_u(d), cur = rd_u(d);
  if (d->bad || res == 0 || n > HT_TL_BUCKETS) { d->bad = 1; return; }
  tl->res = res;
  tl->n = (uint32_t)n;
  tl->cur = cur;
  for (uint64_t i = 0; i < n; i++) tl->heap[i] = rd_u(d);
  for (uint64_t i = 0; i < n; i++) tl->rss[i] = rd_u(d);
}

/* Merge state of snapshot loading: the sites of one snapshot in m's terms. */
typedef struct Merge {
  uint64_t *a, *b, *c;       /* per m site: sums (live, or calls and temporaries) */
  uint8_t *mark;             /* per m site: in the list */
  uint32_t *list;            /* m sites of this snapshot */
  uint32_t n;
} Merge;

static int u32_cmp(const void *x, const void *y)
{
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  return a < b ? -1 : a > b;
}

/* Add values to m site mi. */
static void merge_add(Merge *g, uint32_t mi, uint64_t a, uint64_t b, uint64_t c)
{
  if (!g->mark[mi]) { g->mark[mi] = 1; g->list[g->n++] = mi; }
  g->a[mi] += a;
  g->b[mi] += b;
  g->c[mi] += c;
}

/* Sort the list (sites rise within a snapshot), then call each and clear. */
static void merge_flush(Merge *g, HtSnaps *sn, int live)
{
  uint32_t k = 1;  /* in order already when m's sites are the stored ones */
  while (k < g->n && g->list[k - 1] < g->list[k]) k++;
  if (k < g->n) qsort(g->list, g->n, sizeof(uint32_t), u32_cmp);
  for (uint32_t k = 0; k < g->n; k++) {
    uint32_t mi = g->list[k];
    if (live) ht_snaps_live(sn, mi, g->a[mi], 0);
    else ht_snaps_calls(sn, mi, g->b[mi], g->c[mi]);
    g->a[mi] = g->b[mi] = g->c[mi] = 0;
    g->mark[mi] = 0;
  }
  g->n = 0;
}

/* Make the array *v (*cap values of sz bytes) hold need, exactly and not
** zeroed (its values are written as they are added); on failure it stays
** as it is. */
static void agg_room(void **v, size_t *cap, size_t need, size_t sz)
{
  if (need <= *cap) return;
  void *p = need < SIZE_MAX / sz ? ht_huge_realloc(*v, *cap * sz, need * sz) : NULL;
  if (!p) return;
  *v = p;
  *cap = need;
}

/* Room in sn for what n snapshots at d (those want keeps, or all) hold
** at most, made before they are read: cc1plus's page keeps 100 of
** 70k-site snapshots (72 MB of pairs), which doubling copied and zeroed
** several times over. A look over the payload's bytes, not a decoding;
** sn's own growth takes over should the counts be wrong. */
static void agg_snaps_room(const Rd *d, uint64_t n, const uint8_t *want, HtSnaps *sn)
{
  Rd q = *d;
  size_t live = 0, calls = 0;
  for (uint64_t i = 0; i < n && !q.bad; i++) {
    rd_skip_fast(&q, 4);
    uint64_t ne = rd_u(&q);
    if (!want || want[i]) live += ne;
    rd_skip_fast(&q, 2 * ne);
    uint64_t nd = rd_u(&q);
    calls += nd;
    rd_skip_fast(&q, 3 * nd);
  }
  if (q.bad) return;
  agg_room((void **)&sn->esite, &sn->cesite, sn->nent + live, sizeof(uint32_t));
  agg_room((void **)&sn->ebytes, &sn->cebytes, sn->nent + live, sizeof(uint64_t));
  if (!sn->no_blocks) agg_room((void **)&sn->entn, &sn->centn, sn->nent + live + 1, 8);
  agg_room((void **)&sn->dsite, &sn->cdsite, sn->ndent + calls, sizeof(uint32_t));
  agg_room((void **)&sn->dval, &sn->cdval, 2 * (sn->ndent + calls), sizeof(uint64_t));
}

/* The snapshots, their sites mapped into m's by map (stored index -> m's).
** With the pass's duration known (dur, else 0) and a page's pick (sn->pick),
** the live sites of only the snapshots the page keeps: the others' are
** dropped by the pick. */
static void agg_snaps(HtModel *m, Rd *d, const uint32_t *map, uint64_t nmap, HtSnaps *sn,
                      uint64_t dur)
{
  uint64_t step = rd_u(d), n = rd_count(d, 6);
  if (d->bad || !step || !map || n > UINT32_MAX) { d->bad = 1; return; }
  sn->step = step;  /* (ht_snaps_fit checks it) */
  if (sn->pick && !sn->n) sn->no_blocks = 1;  /* a page's: bytes only */
  uint8_t *want = NULL;
  Merge g = {calloc(m->nsite + 1, 8), calloc(m->nsite + 1, 8), calloc(m->nsite + 1, 8),
             calloc(m->nsite + 1, 1), calloc(m->nsite + 1, 4), 0};
  if (!g.a || !g.b || !g.c || !g.mark || !g.list) { d->bad = 1; m->oom = 1; goto done; }
  if (dur && sn->pick && n &&
      (!(want = calloc(n, 1)) || ht_snaps_wanted(sn, step, (uint32_t)n, dur, want))) {
    d->bad = 1;
    m->oom = 1;
    goto done;
  }
  agg_snaps_room(d, n, want, sn);
  uint64_t t = 0;
  for (uint64_t i = 0; i < n && !d->bad; i++) {
    t += rd_u(d);
    uint64_t heap = rd_u(d), allocs = rd_u(d), temp = rd_u(d);
    if (d->bad || ht_snaps_begin(sn, t, heap, allocs, temp)) { d->bad = 1; break; }
    for (int pass = 0; pass < 2 && !d->bad; pass++) {  /* live, then calls */
      uint64_t ne = rd_count(d, pass ? 3 : 2), site = 0;
      for (uint64_t e = 0; e < ne; e++) {
        site += rd_u(d);
        uint64_t x = rd_u(d), y = pass ? rd_u(d) : 0;
        if (d->bad || site >= nmap) { d->bad = 1; break; }
        if (pass) merge_add(&g, map[site], 0, x, y);
        else if (!want || want[i]) merge_add(&g, map[site], x, 0, 0);
      }
      merge_flush(&g, sn, !pass);
    }
    ht_snaps_end(sn);
  }
  if (sn->oom) { d->bad = 1; m->oom = 1; }
done:
  free(g.a); free(g.b); free(g.c); free(g.mark); free(g.list);
  free(want);
}

static void agg_rss(Rd *d, HtSnaps *sn)
{
  uint64_t n = rd_count(d, 2);
  for (uint64_t i = 0; i < n && !d->bad; i++) {
    uint64_t t = rd_u(d), v = rd_u(d);
    if (!d->bad) ht_snaps_rss(sn, t, v);
  }
}

/* -- report --at: the snapshot before the moment, then the events after it -- */

/* The last snapshot at or before the moment asked: its live sites in m's
** site indexes, their bytes and blocks. */
typedef struct AtSnap {
  uint64_t at;               /* the moment (ns) */
  int found;                 /* a snapshot at or before it, with its blocks */
  uint64_t k, t, heap;       /* its index, time and heap */
  uint32_t n;                /* its live sites */
  uint32_t *site;            /* m's site of each */
  uint64_t *bytes, *blocks;  /* their live bytes and blocks */
  uint32_t nz;               /* sites holding blocks of 0 bytes only */
  uint32_t *zsite;           /* m's site of each */
  uint64_t *zblocks;         /* their blocks */
  /* --heap-snap-interval (keep set): every snapshot is read in turn, so the
  ** decoding keeps the site map and the two fields instead (agg_snap_run) */
  int keep;
  uint32_t *map;             /* m's site of each stored site */
  uint64_t nmap;
  Rd snaps, snapn;           /* the payloads of HT_A_SNAPS and HT_A_SNAPN */
} AtSnap;

/* SNAPS: find the snapshot and keep its sites and bytes. */
static void agg_at_snaps(Rd *d, const uint32_t *map, uint64_t nmap, AtSnap *a)
{
  rd_u(d);  /* step */
  uint64_t n = rd_count(d, 6), t = 0;
  if (!map) { d->bad = 1; return; }
  for (uint64_t i = 0; i < n && !d->bad; i++) {
    t += rd_u(d);
    uint64_t heap = rd_u(d);
    rd_u(d); rd_u(d);  /* calls, temporaries */
    uint64_t ne = rd_count(d, 2), site = 0;
    int keep = t <= a->at;
    if (keep) {
      free(a->site); free(a->bytes);
      a->site = malloc((ne + 1) * sizeof(uint32_t));
      a->bytes = malloc((ne + 1) * sizeof(uint64_t));
      if (!a->site || !a->bytes) { d->bad = 1; return; }
      a->k = i; a->t = t; a->heap = heap; a->n = (uint32_t)ne; a->found = 1;
    }
    for (uint64_t e = 0; e < ne && !d->bad; e++) {
      site += rd_u(d);
      uint64_t bytes = rd_u(d);
      if (site >= nmap) d->bad = 1;
      else if (keep) { a->site[e] = map[site]; a->bytes[e] = bytes; }
    }
    rd_skip(d, 3 * rd_count(d, 3));  /* sites with new calls */
  }
}

/* SNAPN: the blocks of the snapshot found. */
static void agg_at_blocks(Rd *d, const uint32_t *map, uint64_t nmap, AtSnap *a)
{
  uint64_t n = rd_count(d, 2);
  for (uint64_t i = 0; i < n && !d->bad; i++) {
    uint64_t ne = rd_count(d, 1);
    int keep = a->found && i == a->k;
    if (keep) {
      if (ne != a->n || !(a->blocks = malloc((ne + 1) * sizeof(uint64_t)))) { d->bad = 1; return; }
      for (uint64_t e = 0; e < ne; e++) a->blocks[e] = rd_u(d);
    } else rd_skip(d, ne);
    uint64_t nz = rd_count(d, 2), site = 0;
    if (keep && (!(a->zsite = malloc((nz + 1) * sizeof(uint32_t))) ||
                 !(a->zblocks = malloc((nz + 1) * sizeof(uint64_t))))) { d->bad = 1; return; }
    for (uint64_t e = 0; e < nz && !d->bad; e++) {
      site += rd_u(d);
      uint64_t blocks = rd_u(d);
      if (!map || site >= nmap) d->bad = 1;
      else if (keep) { a->zsite[e] = map[site]; a->zblocks[e] = blocks; }
    }
    if (keep) a->nz = (uint32_t)nz;
  }
}

/* Add (sign 1) or take out (-1) a block's figures at the moment. */
static void agg_at_block(HtModel *m, uint32_t stack, uint32_t tid, unsigned rt,
                         uint64_t size, uint64_t weight, int sign)
{
  uint64_t w = weight ? weight : size, n = ht_model_count(w, size);
  uint32_t si = ht_model_site(m, stack, tid, rt);
  if (si == UINT32_MAX) { m->oom = 1; return; }
  HtSite *s = &m->site[si];
  s->f.at += sign > 0 ? w : -w;
  s->f.at_n += sign > 0 ? n : -n;
  m->at_heap += sign > 0 ? w : -w;
  m->at_heap_n += sign > 0 ? n : -n;
}

/* The figures at a->at: the snapshot's, then the events after it up to
** the moment (frees carry their block: no table). 0 when the tape cannot
** be read so (the pass then gives them). */
static int agg_at(HtModel *m, AtSnap *a)
{
  if (!a->found || !a->blocks) { a->found = 0; a->t = 0; a->heap = 0; a->n = a->nz = 0; }
  if (ht_reader_seek_ts(m->r, a->t)) return 0;
  for (uint32_t i = 0; i < m->nsite; i++) m->site[i].f.at = m->site[i].f.at_n = 0;
  m->at_heap = a->heap;
  m->at_heap_n = 0;
  for (uint32_t e = 0; e < a->n; e++) {
    m->site[a->site[e]].f.at += a->bytes[e];
    m->site[a->site[e]].f.at_n += a->blocks[e];
    m->at_heap_n += a->blocks[e];
  }
  for (uint32_t e = 0; e < a->nz; e++) {
    m->site[a->zsite[e]].f.at_n += a->zblocks[e];
    m->at_heap_n += a->zblocks[e];
  }
  HtEvent ev;
  int rc;
  while ((rc = ht_reader_next(m->r, &ev)) > 0) {
    if (a->found && ev.ts <= a->t) continue;  /* in the snapshot */
    if (ev.ts > a->at) break;
    unsigned rt = (ev.kind & HT_K_DOMAIN_RT) != 0;
    if (ev.type == HT_EV_ALLOC)
      agg_at_block(m, ev.stack, ev.tid, rt, ev.size, ev.weight, 1);
    if ((ev.type == HT_EV_ALLOC || ev.type == HT_EV_FREE) && ev.has_blk)
      agg_at_block(m, ev.bstack, ev.btid, rt, ev.bsize, ev.bweight, -1);
  }
  int damaged = ht_reader_stats(m->r)->damaged != 0;
  if (ht_reader_rewind(m->r) || rc < 0 || damaged) return 0;
  m->at_done = 1;
  ht_model_derive(m);  /* the locations' figures at the moment */
  return 1;
}

/* -- --heap-snap-interval: the snapshots in turn, the events between ------ */

static int agg_load(HtModel *m, HtSnaps *sn, AtSnap *at);

/* The next stored snapshot's time, t the one before: 0 and *next, or -1
** when none is left. */
static int snap_peek(const Rd *s, uint64_t left, uint64_t t, uint64_t *next)
{
  Rd c = *s;
  if (!left) return -1;
  *next = t + rd_u(&c);
  return c.bad ? -1 : 0;
}

/* Pass over the next stored snapshot of s and z; t gets its time. */
static void snap_skip(Rd *s, Rd *z, uint64_t *t)
{
  *t += rd_u(s);
  rd_skip(s, 3);  /* heap, calls, temporaries */
  rd_skip(s, 2 * rd_count(s, 2));
  rd_skip(s, 3 * rd_count(s, 3));
  rd_skip(z, rd_count(z, 1));
  rd_skip(z, 2 * rd_count(z, 2));
}

/* Read the next stored snapshot of s and z into the sites' at figures. */
static void snap_take(HtModel *m, Rd *s, Rd *z, const AtSnap *a, uint64_t *t)
{
  for (uint32_t i = 0; i < m->nsite; i++) m->site[i].f.at = m->site[i].f.at_n = 0;
  *t += rd_u(s);
  m->at_heap = rd_u(s);
  m->at_heap_n = 0;
  rd_u(s); rd_u(s);  /* calls, temporaries */
  uint64_t ne = rd_count(s, 2), nb = rd_count(z, 1), site = 0;
  if (ne != nb) s->bad = 1;
  for (uint64_t e = 0; e < ne && !s->bad && !z->bad; e++) {
    site += rd_u(s);
    uint64_t bytes = rd_u(s), blocks = rd_u(z);
    if (site >= a->nmap) { s->bad = 1; break; }
    m->site[a->map[site]].f.at += bytes;
    m->site[a->map[site]].f.at_n += blocks;
    m->at_heap_n += blocks;
  }
  rd_skip(s, 3 * rd_count(s, 3));  /* sites with new calls */
  uint64_t nz = rd_count(z, 2);
  site = 0;
  for (uint64_t e = 0; e < nz && !z->bad; e++) {
    site += rd_u(z);
    uint64_t blocks = rd_u(z);
    if (site >= a->nmap) { z->bad = 1; break; }
    m->site[a->map[site]].f.at_n += blocks;
    m->at_heap_n += blocks;
  }
}

/* One event's change to the at figures (frees carry their block). */
static void snap_event(HtModel *m, const HtEvent *ev)
{
  unsigned rt = (ev->kind & HT_K_DOMAIN_RT) != 0;
  if (ev->type == HT_EV_ALLOC) agg_at_block(m, ev->stack, ev->tid, rt, ev->size, ev->weight, 1);
  if ((ev->type == HT_EV_ALLOC || ev->type == HT_EV_FREE) && ev->has_blk)
    agg_at_block(m, ev->bstack, ev->btid, rt, ev->bsize, ev->bweight, -1);
}

/* Hand the at figures to on_snap as the live ones, as the pass would. */
static void snap_call(HtModel *m, uint64_t t)
{
  for (uint32_t i = 0; i < m->nsite; i++) {
    HtFig *f = &m->site[i].f;
    uint64_t v = f->live;
    f->live = f->at;
    f->at = v;
  }
  m->o.on_snap(m->o.arg, m, t);
  for (uint32_t i = 0; i < m->nsite; i++) {
    HtFig *f = &m->site[i].f;
    uint64_t v = f->live;
    f->live = f->at;
    f->at = v;
  }
}

/* Every snapshot the pass would take (at snap_ns, 2 snap_ns, ... up to the
** duration), each from the stored snapshot at or before it and the events
** after that up to it: a jump to the newest stored snapshot when it is
** two or more past the moment before (a jump decodes its block from the
** start), else on from that moment. m is loaded from the AGG first.
** 1 done, 0 when the tape cannot be read so (m is empty again: the pass),
** or HEAPTAPE_E_NOMEM. Once snapshots are out it stops where the events
** cannot be read (the damage is counted) instead. */
static int agg_snap_run(HtModel *m)
{
  HtModelOpts o = m->o;
  AtSnap a = {.at = UINT64_MAX, .keep = 1};
  m->o.snap_ns = 0;  /* loaded as at the end; snapshots after */
  m->o.on_snap = NULL;
  int rc = agg_load(m, NULL, &a);
  m->o = o;
  if (rc != 1) {  /* (the model was set up again without the snapshots) */
    m->next_snap = o.snap_ns;
    free(a.map);
    return rc;
  }
  Rd s = a.snaps, z = a.snapn;
  rd_u(&s);  /* step */
  /* t: the time of the last stored snapshot passed; base: of the one the
  ** figures started from at the last jump (events up to it are in them) */
  uint64_t ns = rd_count(&s, 6), nz = rd_count(&z, 2), t = 0, base = 0, next, have = 0;
  uint64_t taken = 0;
  HtEvent ev;
  int pend = 0, started = 0;
  if (s.bad || z.bad || ns != nz) goto pass;
  for (uint64_t k = 1; o.snap_ns <= m->duration / k; k++) {
    uint64_t when = k * o.snap_ns;
    if (o.snap_max && m->nsnap >= o.snap_max) { m->snap_cut = 1; break; }
    uint64_t ahead = 0, tt = t;
    Rd ps = s, pz = z;
    while (!snap_peek(&ps, ns - taken - ahead, tt, &next) && next <= when) {
      snap_skip(&ps, &pz, &tt);
      ahead++;
    }
    int jump = !started || ahead >= 2;
    if (jump && ahead) {  /* the newest of them */
      for (; ahead > 1; ahead--, taken++) snap_skip(&s, &z, &t);
      snap_take(m, &s, &z, &a, &t);
      taken++;
      have = 1;
    } else {  /* on from the moment before: the one passed is not needed */
      for (; ahead; ahead--, taken++) snap_skip(&s, &z, &t);
    }
    if (s.bad || z.bad || ps.bad || pz.bad) goto pass_or_stop;
    if (jump) {
      if (!have) {  /* before the first stored snapshot: from the start */
        for (uint32_t i = 0; i < m->nsite; i++) m->site[i].f.at = m->site[i].f.at_n = 0;
        m->at_heap = m->at_heap_n = 0;
      }
      base = have ? t : 0;
      if (ht_reader_seek_ts(m->r, base)) goto pass_or_stop;
      pend = 0;
      started = 1;
    }
    for (;;) {
      if (!pend) {
        rc = ht_reader_next(m->r, &ev);
        if (rc < 0 || ht_reader_stats(m->r)->damaged) goto pass_or_stop;
        if (!rc) break;
        if (have && ev.ts <= base) continue;  /* in the stored snapshot */
        pend = 1;
      }
      if (ev.ts > when) break;
      snap_event(m, &ev);
      pend = 0;
    }
    if (m->oom) break;
    snap_call(m, when);
    m->nsnap++;
  }
  free(a.map);
  ht_model_take_at(m);  /* what the AGG's load left: --at is the end */
  return ht_reader_rewind(m->r) ? HEAPTAPE_E_NOMEM : 1;
pass_or_stop:
  if (m->nsnap) {  /* printed already: stop, as a pass over damage would */
    free(a.map);
    ht_model_take_at(m);
    ht_reader_rewind(m->r);
    return 1;
  }
pass:
  free(a.map);
  {
    HtReader *r = m->r;
    ht_model_free(m);
    if (ht_model_init(m, r, &o) || ht_reader_rewind(r)) return HEAPTAPE_E_NOMEM;
  }
  return 0;
}

/* Whether m (initialised, not yet fed) can be filled from its tape's AGG:
** the tape has one and m's options ask nothing only a pass gives (--at,
** snapshots, RSS samples, recent allocations). */
static int agg_usable(const HtModel *m)
{
  size_t len;
  return m->r && ht_reader_agg(m->r, &len) && m->o.at_ns == UINT64_MAX && !m->o.snap_ns &&
         !m->o.on_rss && !m->o.since_ns;
}

/* Decode every field (the snapshots too when sn is given); 1 done, 0
** malformed. */
static int agg_decode(HtModel *m, HtSnaps *sn, AtSnap *at, const uint8_t *p,
                      const uint8_t *end)
{
  uint32_t *map = NULL;
  uint64_t nmap = 0;
  HtAggNames names = {0};
  unsigned seen = 0;
  int ok = 1;
  while (ok && p < end) {
    uint64_t tag, n;
    if (ht_ruleb128(&p, end, &tag) || ht_ruleb128(&p, end, &n) ||
        n > (uint64_t)(end - p)) { ok = 0; break; }
    Rd d = {p, p + n, 0};
    p += n;
    switch (tag) {
    case HT_A_TOTALS: agg_totals(m, &d); break;
    case HT_A_COUNTS: agg_counts(m, &d); break;
    case HT_A_THREADS: agg_threads(m, &d); break;
    case HT_A_NAMES: if (map) d.bad = 1; else agg_names(m, &d, &names); break;
    case HT_A_SITES:
      if (map) d.bad = 1;
      else if (!m->o.no_sites || sn || at) agg_sites(m, &d, &names, &map, &nmap);
      break;
    case HT_A_OVERS: if (map || !m->o.no_sites) agg_overs(m, &d, map, nmap); break;  /* after SITES */
    case HT_A_TIMELINE: agg_timeline(m, &d); break;
    case HT_A_SNAPS:  /* after SITES */
      if (sn) {  /* the pass's duration, as agg_load gives it, once TOTALS is read */
        const HtReadStats *st = ht_reader_stats(m->r);
        uint64_t dur = !(seen & 1u << HT_A_TOTALS) ? 0
                     : st->end_ns > m->last_ts ? st->end_ns : m->last_ts;
        agg_snaps(m, &d, map, nmap, sn, dur);
      }
      else if (at && at->keep) { at->snaps = d; d.p = d.end; }
      else if (at) agg_at_snaps(&d, map, nmap, at);
      break;
    case HT_A_RSS: if (sn) agg_rss(&d, sn); break;
    case HT_A_SNAPN:  /* after SNAPS */
      if (at && at->keep) { at->snapn = d; d.p = d.end; }
      else if (at) agg_at_blocks(&d, map, nmap, at);
      break;
    default: continue;  /* a later version's field */
    }
    if (d.bad || tag >= 32 || (seen & 1u << tag)) ok = 0;
    seen |= 1u << tag;
  }
  if (at && at->keep && ok) {
    at->map = map;
    at->nmap = nmap;
    map = NULL;
  }
  free(map);
  ht_aggnames_free(&names);
  unsigned need = 1u << HT_A_TOTALS | 1u << HT_A_COUNTS | 1u << HT_A_THREADS |
                  1u << HT_A_SITES | 1u << HT_A_OVERS | 1u << HT_A_TIMELINE;
  if (sn) need |= 1u << HT_A_SNAPS | 1u << HT_A_RSS;
  if (at && at->keep) need |= 1u << HT_A_SNAPS | 1u << HT_A_SNAPN;
  return ok && (seen & need) == need;
}

/* Fill m (and sn) from the AGG as a pass would have left them: 1 done, 0
** none or malformed (m and sn reset: make the pass), or HEAPTAPE_E_NOMEM. */
static int agg_load(HtModel *m, HtSnaps *sn, AtSnap *at)
{
  size_t len;  /* the snapshot fields only for the page and --at (version 10) */
  const uint8_t *p = sn || at ? ht_reader_agg_snaps(m->r, &len) : ht_reader_agg(m->r, &len);
  if (!p) return 0;
  /* The names and the stack table load on the other core while the sites
  ** do: they need only the table's size, until their locations are named. */
  if (!m->o.no_sites || sn || at) ht_reader_names_start(m->r);
  const HtReadStats *st = ht_reader_stats(m->r);
  uint64_t step = sn ? sn->step : 0;
  uint32_t fold = sn ? sn->fold : 0;
  /* Snapshots at another spacing than a pass takes: the pass. */
  if (!agg_decode(m, sn, at, p, p + len) ||
      (sn && !ht_snaps_fit(sn, st->end_ns > m->last_ts ? st->end_ns : m->last_ts))) {
    int oom = m->oom || (sn && sn->oom);
    HtReader *r = m->r;
    HtModelOpts o = m->o;
    ht_model_free(m);
    if (sn) {
      ht_snaps_free(sn);
      sn->step = step;
      sn->fold = fold;
    }
    if (ht_model_init(m, r, &o)) return HEAPTAPE_E_NOMEM;
    return oom ? HEAPTAPE_E_NOMEM : 0;
  }
  /* What ht_model_finish leaves: --at is the end, every allocation recent. */
  for (uint32_t i = 0; i < m->nsite; i++) {
    m->site[i].recent = m->site[i].f.allocs;
    m->site[i].recent_bytes = m->site[i].f.bytes;
  }
  ht_model_take_at(m);
  m->duration = st->end_ns > m->last_ts ? st->end_ns : m->last_ts;
  ht_model_derive(m);
  return 1;
}

/* Whether m asks --at of a tape whose AGG and events give it without the
** pass: version 5 (frees carry their block), nothing else only a pass gives. */
static int agg_usable_at(const HtModel *m)
{
  size_t len;
  return m->r && ht_reader_agg(m->r, &len) && m->o.at_ns != UINT64_MAX && !m->o.snap_ns &&
         !m->o.on_rss && !m->o.since_ns &&
         ht_reader_header(m->r)->version >= HT_VERSION_SEALED_BLK;
}

/* Whether m asks snapshots (report --heap-snap-interval) of a tape whose
** AGG and events give them without the pass, as for --at. */
static int agg_usable_snaps(const HtModel *m)
{
  size_t len;
  return m->r && ht_reader_agg(m->r, &len) && m->o.at_ns == UINT64_MAX && m->o.snap_ns &&
         m->o.on_snap && !m->o.snap_fold && !m->o.on_rss && !m->o.since_ns &&
         ht_reader_header(m->r)->version >= HT_VERSION_SEALED_BLK;
}

int ht_agg_model(HtModel *m)
{
  if (agg_usable_snaps(m)) {
    int rc = agg_snap_run(m);
    if (rc == 1) return m->oom ? HEAPTAPE_E_NOMEM : 0;
    if (rc) return rc;
  } else if (agg_usable(m)) {
    int rc = agg_load(m, NULL, NULL);
    if (rc == 1) return m->oom ? HEAPTAPE_E_NOMEM : 0;
    if (rc) return rc;
  } else if (agg_usable_at(m)) {
    AtSnap a = {.at = m->o.at_ns};
    m->o.at_ns = UINT64_MAX;  /* loaded as at the end, then moved back */
    int rc = agg_load(m, NULL, &a);
    m->o.at_ns = a.at;
    int done = rc == 1 && (a.at >= m->duration || agg_at(m, &a));
    free(a.site); free(a.bytes); free(a.blocks); free(a.zsite); free(a.zblocks);
    if (done) return m->oom ? HEAPTAPE_E_NOMEM : 0;
    if (rc < 0) return rc;
    if (rc == 1) {  /* loaded, but the events could not be read: the pass */
      HtReader *r = m->r;
      HtModelOpts o = m->o;
      ht_model_free(m);
      if (ht_model_init(m, r, &o)) return HEAPTAPE_E_NOMEM;
    }
  }
  return ht_model_run(m);
}

int ht_agg_load_snaps(HtModel *m, HtSnaps *sn)
{
  size_t len;
  if (!m->r || !ht_reader_agg(m->r, &len) || m->o.at_ns != UINT64_MAX || m->o.since_ns)
    return 0;
  return agg_load(m, sn, NULL);
}

/* heaptape -- the analysis model: one streaming pass over a tape.
** Sites, locations, live blocks, peak (lazy snapshot), temporaries, threads. */
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "frames.h"
#include "../base/grow.h"
#include "../../include/heaptape.h"

/* -- Growable vectors ----------------------------------------------------- */

/* Make room for one more element of size sz in *v (void ** as void *). */
static int model_grow(HtModel *m, void *v, uint32_t used, size_t *cap, size_t sz)
{
  if (!ht_grow(v, cap, (size_t)used + 1, sz)) return 0;
  m->oom = 1;
  return -1;
}

/* -- Locations ------------------------------------------------------------ */

/* Index of the location named `name`, created if new; HT_LOC_NONE on OOM. */
static uint32_t model_loc_named(HtModel *m, const char *name, uint64_t frame)
{
  int added;
  int64_t id = ht_strtab_intern(&m->loc_name, name, &added);
  if (id < 0) { m->oom = 1; return HT_LOC_NONE; }
  if (!added) return (uint32_t)id;
  if (model_grow(m, &m->loc, m->nloc, &m->cloc, sizeof(HtLoc))) return HT_LOC_NONE;
  HtLoc *l = &m->loc[m->nloc++];
  memset(l, 0, sizeof(*l));
  l->name = m->loc_name.str[id];
  l->frame = frame;
  return (uint32_t)id;
}

/* Location of a stack the long way: its site key (ht_frames_site_name). */
static uint32_t model_loc_named_stack(HtModel *m, uint32_t stack)
{
  char name[1024];
  uint64_t frame;
  ht_frames_site_name(m->r, stack, m->o.wrappers, m->o.nwrappers, name,
                      sizeof(name), &frame);
  return model_loc_named(m, name, frame);
}

/* A frame's levels << 8 | its first level that is not plumbing (255 when
** all are), memoised by frame value; UINT64_MAX on OOM. */
static uint64_t model_frame_memo(HtModel *m, uint64_t frame)
{
  uint64_t *v = ht_map_get(&m->frame_memo, frame);
  if (v) return *v;
  HtFrameInfo fi[16];
  size_t k = ht_frames_info(m->r, frame, fi, HT_COUNTOF(fi)), j = 0;
  while (j < k && ht_frames_plumbing(&fi[j], m->o.wrappers, m->o.nwrappers)) j++;
  uint64_t memo = (uint64_t)k << 8 | (j < k ? j : 255);
  if (ht_map_put(&m->frame_memo, frame, memo)) return UINT64_MAX;
  return memo;
}

/* A frame's first level that is not plumbing (its levels when all are),
** *levels its levels: from the memo when it holds the frame. */
unsigned ht_model_frame_first(const HtModel *m, uint64_t frame, unsigned *levels)
{
  const uint64_t *v = m->memo_gen == ht_reader_names_gen(m->r)
                    ? ht_map_get(&m->frame_memo, frame) : NULL;
  if (v) {
    *levels = (unsigned)(*v >> 8);
    return (*v & 255) == 255 ? *levels : (unsigned)(*v & 255);
  }
  HtFrameInfo fi[16];
  size_t k = ht_frames_info(m->r, frame, fi, HT_COUNTOF(fi)), j = 0;
  while (j < k && ht_frames_plumbing(&fi[j], m->o.wrappers, m->o.nwrappers)) j++;
  *levels = (unsigned)k;
  return (unsigned)j;
}

/* The first level of a stack that is not plumbing: 1 with its node and
** level, 0 when there is none among its first 256 frames. */
int ht_model_first_kept(const HtModel *m, uint32_t stack, uint32_t *node, unsigned *level)
{
  unsigned levels;
  for (unsigned i = 0; stack && i < 256; i++, stack = ht_reader_stack_parent(m->r, stack)) {
    unsigned j = ht_model_frame_first(m, ht_reader_stack_frame(m->r, stack), &levels);
    if (j < levels) {
      *node = stack;
      *level = j;
      return 1;
    }
  }
  return 0;
}

/* Location of a stack: its site key (ht_frames_site_name), the name of its
** innermost meaningful frame. The key is the name of one level (a frame,
** a place in its inline chain): sites are many, their distinct first
** levels few, so the levels' plumbing and the location of a level are
** memoised (while the tape names no more: ht_reader_names_gen). */
static uint32_t model_loc_of_stack(HtModel *m, uint32_t stack)
{
  uint64_t gen = ht_reader_names_gen(m->r);
  if (gen != m->memo_gen) {
    ht_map_clear(&m->frame_memo);
    ht_map_clear(&m->level_loc);
    m->memo_gen = gen;
  }
  if (!ht_reader_stack_depth(m->r, stack)) return model_loc_named_stack(m, stack);
  /* All plumbing: the innermost level. (The walk stops at the first kept
  ** frame: it seldom goes past a few nodes.) */
  HtFrameInfo lv = {.frame = ht_reader_stack_frame(m->r, stack)};
  uint32_t node = stack;
  for (unsigned i = 0; node && i < 256; i++, node = ht_reader_stack_parent(m->r, node)) {
    uint64_t frame = ht_reader_stack_frame(m->r, node);
    uint64_t memo = model_frame_memo(m, frame);
    if (memo == UINT64_MAX) return model_loc_named_stack(m, stack);
    if ((memo & 255) != 255) {
      lv.frame = frame;
      lv.level = (unsigned)(memo & 255);
      break;
    }
  }
  uint64_t key;
  if (!ht_frames_level_key(&lv, &key)) return model_loc_named_stack(m, stack);
  uint64_t *v = ht_map_get(&m->level_loc, key);
  if (v) return (uint32_t)*v;
  HtFrameInfo fi[16];
  size_t k = ht_frames_info(m->r, lv.frame, fi, HT_COUNTOF(fi));
  if (lv.level >= k) return model_loc_named_stack(m, stack);
  char name[1024];
  ht_frames_format(&fi[lv.level], name, sizeof(name));
  uint32_t loc = model_loc_named(m, name, lv.frame);
  if (loc != HT_LOC_NONE && ht_map_put(&m->level_loc, key, loc)) m->oom = 1;
  return loc;
}

uint32_t ht_model_loc(HtModel *m, uint32_t stack)
{
  return model_loc_of_stack(m, stack);
}

/* Add `over` to a location's override list (each pair once). */
static void model_override(HtModel *m, uint32_t loc, uint32_t over, int dealloc)
{
  if (loc == HT_LOC_NONE || over == HT_LOC_NONE) return;
  uint64_t key = ((uint64_t)loc << 33) | ((uint64_t)over << 1) | (unsigned)dealloc;
  if (ht_map_get(&m->over_seen, key)) return;
  if (ht_map_put(&m->over_seen, key, 1)) { m->oom = 1; return; }
  HtLoc *l = &m->loc[loc];
  uint32_t **v = dealloc ? &l->d_over : &l->r_over;
  uint32_t *n = dealloc ? &l->nd_over : &l->nr_over;
  size_t *c = dealloc ? &l->cd_over : &l->cr_over;
  if (model_grow(m, v, *n, c, sizeof(uint32_t))) return;
  (*v)[(*n)++] = over;
}

/* -- Sites and threads ---------------------------------------------------- */

/* Remember site id as stack's last (an out-of-memory leaves it unknown),
** when remember: a model fed events meets each stack again and again; one
** filled from the aggregate section meets it once, and the table (4 bytes a
** stack id: 4.8 MiB with doublings for cc1plus) would only cost memory. */
static uint32_t model_site_last(HtModel *m, uint32_t stack, uint32_t id, int remember)
{
  if (remember && (stack < m->csite_last ||
      !ht_grow(&m->site_last, &m->csite_last, (size_t)stack + 1, sizeof(uint32_t))))
    m->site_last[stack] = id + 1;
  return id;
}

/* Index of the site of a block, created if new (at location loc, unless
** it is HT_LOC_NONE: then the stack's is looked up); UINT32_MAX on OOM.
** A site is a stack, or with o.split a (stack, thread, domain). */
static uint32_t model_site(HtModel *m, const HtBlock *blk, int remember, uint32_t loc)
{
  uint32_t stack = blk->stack, tid = m->o.split ? blk->tid & ~HT_BLOCK_RT : 0;
  unsigned rt = m->o.split && (blk->tid & HT_BLOCK_RT);
  if (stack < m->csite_last && m->site_last[stack] && m->site_last[stack] <= m->nsite) {
    const HtSite *s = &m->site[m->site_last[stack] - 1];  /* a hash lookup less */
    if (s->stack == stack && s->tid == tid && s->rt == rt) return m->site_last[stack] - 1;
  }
  uint64_t key = stack;
  if (m->o.split) /* thread ids are below 2^22; hash collisions probe on */
    key = ht_hash64((uint64_t)stack | (uint64_t)tid << 32 | (uint64_t)rt << 63);
  uint64_t *v;
  for (; !m->by_stack_id && (v = ht_map_get(&m->site_of, key)); key++) {
    const HtSite *s = &m->site[*v];
    if (s->stack == stack && s->tid == tid && s->rt == rt)
      return model_site_last(m, stack, (uint32_t)*v, remember);
  }
  if (loc == HT_LOC_NONE && (loc = model_loc_of_stack(m, stack)) == HT_LOC_NONE)
    return UINT32_MAX;
  if (model_grow(m, &m->site, m->nsite, &m->csite, sizeof(HtSite)))
    return UINT32_MAX;
  uint32_t id = m->nsite++;
  HtSite *s = &m->site[id];
  memset(s, 0, sizeof(*s));
  s->stack = stack;
  s->tid = tid;
  s->rt = (uint8_t)rt;
  s->loc = loc;
  s->stamp = m->epoch;
  if (m->by_stack_id) {      /* site_last is the index: kept whatever remember says */
    if (stack >= m->csite_last &&
        ht_grow(&m->site_last, &m->csite_last, (size_t)stack + 1, sizeof(uint32_t))) {
      m->oom = 1;
      m->nsite--;
      return UINT32_MAX;
    }
    m->site_last[stack] = id + 1;
    return id;
  }
  if (ht_map_put(&m->site_of, key, id)) { m->oom = 1; m->nsite--; return UINT32_MAX; }
  return model_site_last(m, stack, id, remember);
}

/* Index of a thread record, created if new; UINT32_MAX on OOM. */
static uint32_t model_thread(HtModel *m, uint32_t tid)
{
  if (m->th_last && m->th[m->th_last - 1].tid == tid) return m->th_last - 1;
  uint64_t *v = ht_map_get(&m->th_of, tid);
  if (v) return (m->th_last = (uint32_t)*v + 1) - 1;
  if (model_grow(m, &m->th, m->nth, &m->cth, sizeof(HtThread)))
    return UINT32_MAX;
  uint32_t id = m->nth++;
  memset(&m->th[id], 0, sizeof(HtThread));
  m->th[id].tid = tid;
  if (ht_map_put(&m->th_of, tid, id)) { m->oom = 1; m->nth--; return UINT32_MAX; }
  return id;
}

/* The site of (stack, tid, rt) for a model filled without a pass (agg.c);
** thread and domain count only with o.split. UINT32_MAX on OOM. */
uint32_t ht_model_site(HtModel *m, uint32_t stack, uint32_t tid, unsigned rt)
{
  return ht_model_site_at(m, stack, tid, rt, HT_LOC_NONE);
}

uint32_t ht_model_site_at(HtModel *m, uint32_t stack, uint32_t tid, unsigned rt, uint32_t loc)
{
  HtBlock b = {.stack = stack, .tid = tid | (rt ? HT_BLOCK_RT : 0)};
  return model_site(m, &b, 0, loc);
}

/* Room for n more sites, made at once (agg.c knows how many come). */
int ht_model_reserve_sites(HtModel *m, size_t n, uint32_t nstack)
{
  /* Not zeroed (model_site clears each site it makes): 70k sites of
  ** cc1plus are 14 MB. */
  size_t need = m->nsite + n;
  HtSite *v = need > m->csite
            ? ht_huge_realloc(m->site, m->nsite * sizeof(HtSite), need * sizeof(HtSite)) : NULL;
  if (v) {
    m->site = v;
    m->csite = need;
  }
  if (need > m->csite && !v) {
    m->oom = 1;
    return -1;
  }
  /* Sites by stack: an array of the stack ids, written where a site is
  ** (cc1plus: 2.2 MB mapped, 70k entries), not a hash map of them (4 MB,
  ** every slot cleared). */
  if (!m->o.split && !m->nsite && !m->site_last) {
    if (!(m->site_last = calloc((size_t)nstack + 1, sizeof(uint32_t)))) { m->oom = 1; return -1; }
    m->csite_last = (size_t)nstack + 1;
    m->by_stack_id = 1;
    return 0;
  }
  if (ht_map_reserve(&m->site_of, need)) {
    m->oom = 1;
    return -1;
  }
  return 0;
}

/* The record of thread tid (agg.c), or NULL on OOM. */
HtThread *ht_model_thread(HtModel *m, uint32_t tid)
{
  uint32_t i = model_thread(m, tid);
  return i == UINT32_MAX ? NULL : &m->th[i];
}

/* Save a site's live figures for the current peak before they change. */
HT_INLINE void model_touch(HtModel *m, HtSite *s)
{
  if (s->stamp != m->epoch) {
    s->saved = s->f.live;
    s->saved_n = s->f.live_n;
    s->stamp = m->epoch;
  }
}

/* -- Events --------------------------------------------------------------- */


/* Settle a realloc's free that no allocation followed: a deallocation. */
static void model_settle(HtModel *m, HtThread *t)
{
  if (!t->pend) return;
  t->pend = 0;
  if (t->pend_site == UINT32_MAX) return;
  HtSite *s = &m->site[t->pend_site];
  s->d_n += t->pend_n;
  s->d_minus += t->pend_bytes;
}

/* Note that a reallocation at site si replaced a block of site over. */
static void model_replaced(HtModel *m, uint32_t si, uint32_t over)
{
  if (over == UINT32_MAX) return;
  uint64_t key = (uint64_t)si << 32 | over;
  if (ht_map_get(&m->over_of, key)) return;
  if (ht_map_put(&m->over_of, key, 1)) { m->oom = 1; return; }
  if (model_grow(m, &m->over, m->nover, &m->cover, sizeof(uint64_t))) return;
  m->over[m->nover++] = key;
}

/* Take a block's figures out of its site and the heap. */
static HtSite *model_unlive(HtModel *m, const HtBlock *b, uint64_t *n)
{
  uint64_t c = ht_model_count(b->weight, b->size);
  *n = c > UINT32_MAX ? UINT32_MAX : c;
  uint32_t si = model_site(m, b, 1, HT_LOC_NONE);
  if (si == UINT32_MAX) return NULL;
  HtSite *s = &m->site[si];
  model_touch(m, s);
  s->f.live -= b->weight;
  s->f.live_n -= *n;
  m->heap -= b->weight;
  m->heap_n -= *n;
  return s;
}

/* An allocation event. */
static void model_alloc(HtModel *m, const HtRes *res, HtThread *t)
{
  const HtEvent *ev = res->ev;
  uint64_t w = res->blk.weight;
  uint64_t n = ht_model_count(w, ev->size);
  unsigned k = HT_K_FAMILY(ev->kind);
  m->by_kind[k]++;
  unsigned lg = ev->size ? 64 - (unsigned)__builtin_clzll(ev->size) : 0;
  m->hist[lg]++;
  uint32_t si = model_site(m, &res->blk, 1, HT_LOC_NONE);
  if (si == UINT32_MAX) return;
  HtSite *s = &m->site[si];
  /* memprof classification: a realloc pairs with its thread's pending free. */
  if (k == HT_K_REALLOC && t->pend) {
    s->r_plus += w;
    s->r_minus += t->pend_bytes;
    model_replaced(m, si, t->pend_site);
    s = &m->site[si];
    t->pend = 0;
    s->f.reallocs += n;
    m->reallocs += n;
  } else {
    model_settle(m, t);
  }
  s->f.allocs += n;
  s->f.bytes += w;
  if (ev->ts >= m->o.since_ns) {
    s->recent += n;
    s->recent_bytes += w;
  }
  m->allocs += n;
  m->bytes += w;
  t->allocs += n;
  t->bytes += w;
  t->last_addr = res->rs->by_index ? res->blk.index : ev->addr;
  t->last_valid = 1;

  if (res->rs->oom) { m->oom = 1; return; }
  if (res->dup) {
    /* An address allocated twice: the tape lost the free; drop the old one. */
    uint64_t on;
    model_unlive(m, &res->old, &on);
    m->dup_allocs++;
  }
  s = &m->site[si];
  model_touch(m, s);
  s->f.live += w;
  s->f.live_n += n;
  m->heap += w;
  m->heap_n += n;
  if (m->heap > m->peak) {
    m->peak = m->heap;
    m->peak_n = m->heap_n;
    m->peak_ts = ev->ts;
    m->peak_seq = ev->seq;
    m->epoch++;
  }
  ht_timeline_heap(&m->tl, ev->ts, m->heap);
}

/* A free event. */
static void model_free_ev(HtModel *m, const HtRes *res, HtThread *t)
{
  const HtEvent *ev = res->ev;
  int realloc_free = HT_K_FAMILY(ev->kind) == HT_K_REALLOC;
  model_settle(m, t);
  t->frees++;
  if (!res->known) {
    m->unknown_frees++;
    if (HT_K_HAS_SIZE(ev->kind)) m->unknown_bytes += ev->size;
    if (realloc_free) {  /* realloc of a block from before the recording */
      t->pend = 1;
      t->pend_site = UINT32_MAX;
      t->pend_bytes = 0;
      t->pend_n = 0;
    }
    return;
  }
  const HtBlock *b = &res->blk;
  uint64_t n;
  HtSite *s = model_unlive(m, b, &n);
  uint32_t oi = model_thread(m, b->tid & ~HT_BLOCK_RT);
  if (!s || oi == UINT32_MAX) return;
  s->f.frees += n;
  s->f.freed += b->weight;
  m->frees += n;
  m->freed += b->weight;
  HtThread *owner = &m->th[oi];  /* it allocated: m->th did not move */
  uint64_t id = res->rs->by_index ? b->index : b->addr;
  if (!realloc_free && owner->last_valid && owner->last_addr == id) {
    s->f.temp += n;
    m->temp += n;
  }
  if (owner->last_addr == id) owner->last_valid = 0;
  if (realloc_free) {
    t->pend = 1;
    t->pend_site = (uint32_t)(s - m->site);
    t->pend_bytes = b->weight;
    t->pend_n = n;
  } else {
    s->d_n += n;
    s->d_minus += b->weight;
  }
  ht_timeline_heap(&m->tl, ev->ts, m->heap);
}

void ht_model_take_at(HtModel *m)
{
  for (uint32_t i = 0; i < m->nsite; i++) {
    m->site[i].f.at = m->site[i].f.live;
    m->site[i].f.at_n = m->site[i].f.live_n;
  }
  m->at_heap = m->heap;
  m->at_heap_n = m->heap_n;
  m->at_done = 1;
}

/* Take the snapshot due, unless o.snap_max are taken: then stop them; or
** o.snap_fold: then keep every other one at twice the step (the caller
** checks again whether the next is due). */
static void model_snap(HtModel *m)
{
  if (m->o.snap_fold && m->nsnap >= m->o.snap_fold) {
    if (m->o.snap_ns > UINT64_MAX / 4 / ((uint64_t)m->o.snap_fold + 2)) {
      m->snap_cut = 1;  /* times near 2^64: damaged */
      m->o.snap_ns = 0;
      return;
    }
    if (m->o.on_fold) m->o.on_fold(m->o.arg);
    m->nsnap /= 2;
    m->o.snap_ns *= 2;
    m->next_snap = (uint64_t)(m->nsnap + 1) * m->o.snap_ns;
    return;
  }
  if (m->o.snap_max && m->nsnap >= m->o.snap_max) {
    m->snap_cut = 1;
    m->o.snap_ns = 0;
    return;
  }
  m->o.on_snap(m->o.arg, m, m->next_snap);
  m->nsnap++;
  m->next_snap += m->o.snap_ns;
}

/* Before an event at time ts: take the --at composition and snapshots due. */
static void model_clock(HtModel *m, uint64_t ts)
{
  if (!m->at_done && ts > m->o.at_ns) ht_model_take_at(m);
  while (m->o.snap_ns && m->o.on_snap && ts > m->next_snap) model_snap(m);
}

/* Feed one resolved event. */
void ht_model_res(void *arg, const HtRes *res)
{
  HtModel *m = arg;
  const HtEvent *ev = res->ev;
  if (m->events == 0) m->first_ts = ev->ts;
  m->events++;
  if (ev->type < HT_COUNTOF(m->by_type)) m->by_type[ev->type]++;
  model_clock(m, ev->ts);
  if (ev->ts > m->last_ts) m->last_ts = ev->ts;
  uint32_t ti = model_thread(m, ev->tid);
  if (ti == UINT32_MAX) return;
  HtThread *t = &m->th[ti];
  t->events++;
  switch (ev->type) {
  case HT_EV_ALLOC: model_alloc(m, res, t); break;
  case HT_EV_FREE: model_free_ev(m, res, t); break;
  case HT_EV_THREAD: {
    size_t n = ev->len < sizeof(t->name) - 1 ? ev->len : sizeof(t->name) - 1;
    memcpy(t->name, ev->str, n);
    t->name[n] = 0;
    break;
  }
  case HT_EV_RSS:
    if (ev->size > m->rss_max) m->rss_max = ev->size;
    ht_timeline_rss(&m->tl, ev->ts, ev->size);
    if (m->o.on_rss) m->o.on_rss(m->o.arg, ev->ts, ev->size);
    break;
  case HT_EV_LOST: m->lost += ev->size; break;
  default: break;
  }
}

/* Feed one event of the tape, resolved by the model's own resolver. */
void ht_model_event(HtModel *m, const HtEvent *ev)
{
  HtRes res;
  ht_resolve_event(&m->rs, ev, &res);
  ht_model_res(m, &res);
}

/* -- Lifecycle ------------------------------------------------------------ */

/* Set up m over an open reader. */
int ht_model_init(HtModel *m, HtReader *r, const HtModelOpts *o)
{
  memset(m, 0, sizeof(*m));
  m->r = r;
  if (o) m->o = *o;
  else m->o.at_ns = UINT64_MAX;
  m->next_snap = m->o.snap_ns;
  ht_timeline_init(&m->tl);
  ht_resolve_init(&m->rs);
  ht_resolve_lean(&m->rs, r && ht_reader_sealed(r));  /* the model needs no more */
  if (ht_map_init(&m->site_of, 1024) || ht_strtab_init(&m->loc_name, 256) ||
      ht_map_init(&m->over_seen, 256) || ht_map_init(&m->over_of, 256) ||
      ht_map_init(&m->th_of, 16) || ht_map_init(&m->frame_memo, 256) ||
      ht_map_init(&m->level_loc, 256)) {
    ht_model_free(m);
    return HEAPTAPE_E_NOMEM;
  }
  return 0;
}

/* Release everything m owns. */
void ht_model_free(HtModel *m)
{
  for (uint32_t i = 0; i < m->nloc; i++) {
    free(m->loc[i].r_over);
    free(m->loc[i].d_over);
  }
  free(m->loc); ht_strtab_free(&m->loc_name); free(m->site); free(m->th);
  ht_map_free(&m->site_of);
  free(m->site_last);
  ht_map_free(&m->frame_memo);
  ht_map_free(&m->level_loc);
  ht_map_free(&m->over_seen);
  free(m->over);
  ht_map_free(&m->over_of);
  ht_resolve_free(&m->rs); ht_map_free(&m->th_of);
  memset(m, 0, sizeof(*m));
}

/* Live bytes per location right now, into loc[].scratch. */
void ht_model_loc_live(const HtModel *m)
{
  for (uint32_t i = 0; i < m->nloc; i++) m->loc[i].scratch = 0;
  for (uint32_t i = 0; i < m->nsite; i++)
    m->loc[m->site[i].loc].scratch += m->site[i].f.live;
}

/* Settle pending state; derive peak shares and location sums. */
void ht_model_finish(HtModel *m)
{
  for (uint32_t i = 0; i < m->nth; i++) model_settle(m, &m->th[i]);
  if (!m->at_done) ht_model_take_at(m);
  const HtReadStats *st = ht_reader_stats(m->r);
  /* The reader's end is the trailer's end time (else the last event's),
  ** relative to the tape's start like event times. */
  m->duration = st && st->end_ns > m->last_ts ? st->end_ns : m->last_ts;
  while (m->o.snap_ns && m->o.on_snap && m->next_snap <= m->duration) model_snap(m);
  for (uint32_t i = 0; i < m->nsite; i++) {
    HtSite *s = &m->site[i];
    s->f.peak = s->stamp == m->epoch ? s->saved : s->f.live;
    s->f.peak_n = s->stamp == m->epoch ? s->saved_n : s->f.live_n;
  }
  ht_model_derive(m);
}

/* Location figures: the sums of their sites'. */
void ht_model_derive(HtModel *m)
{
  for (uint32_t i = 0; i < m->nloc; i++) {
    HtLoc *l = &m->loc[i];
    memset(&l->f, 0, sizeof(HtFig));
    l->a_n = l->a_plus = l->r_n = l->r_plus = l->r_minus = l->d_n = l->d_minus = 0;
    l->nr_over = l->nd_over = 0;
  }
  ht_map_clear(&m->over_seen);
  for (uint32_t i = 0; i < m->nsite; i++) {
    const HtSite *s = &m->site[i];
    HtLoc *l = &m->loc[s->loc];
    HtFig *a = &l->f;
    const HtFig *b = &s->f;
    a->allocs += b->allocs; a->bytes += b->bytes; a->reallocs += b->reallocs;
    a->frees += b->frees; a->freed += b->freed; a->temp += b->temp;
    a->live += b->live; a->live_n += b->live_n; a->peak += b->peak;
    a->peak_n += b->peak_n; a->at += b->at; a->at_n += b->at_n;
    l->a_n += b->allocs - b->reallocs;
    l->a_plus += b->bytes - s->r_plus;
    l->r_n += b->reallocs;
    l->r_plus += s->r_plus;
    l->r_minus += s->r_minus;
    l->d_n += s->d_n;
    l->d_minus += s->d_minus;
    if (s->d_n) model_override(m, s->loc, s->loc, 1);
  }
  for (uint32_t i = 0; i < m->nover; i++)
    model_override(m, m->site[m->over[i] >> 32].loc, m->site[(uint32_t)m->over[i]].loc, 0);
}

/* Start loading the site an allocation will touch. */
static void model_prefetch(void *ctx, const HtEvent *ev)
{
  HtModel *m = ctx;
  if (ev->type == HT_EV_ALLOC && !m->o.split) ht_map_prefetch(&m->site_of, ev->stack);
}

/* Apply one resolved event and report progress now and then. */
static void model_apply(void *ctx, const HtRes *res)
{
  HtModel *m = ctx;
  ht_model_res(m, res);
  if (m->o.progress && (m->events & 0xfffff) == 0)
    m->o.progress(m->o.arg, m->events, ht_reader_stats(m->r)->events);
}

/* The whole pass: the resolver's (resolve.h), then finish. */
int ht_model_run(HtModel *m)
{
  if (ht_resolve_run(&m->rs, m->r, model_apply, model_prefetch, m)) m->oom = 1;
  ht_model_finish(m);
  return m->oom ? HEAPTAPE_E_NOMEM : 0;
}

/* A reallocation at site si replaced a block of site over (agg.c). */
void ht_model_replaced(HtModel *m, uint32_t si, uint32_t over)
{
  model_replaced(m, si, over);
}

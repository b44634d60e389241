/* heaptape -- following a tape while it is written: one reader kept open at
** its place, one model fed only what was appended, sites named on the fly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "follow.h"
#include "sealfollow.h"
#include "../base/grow.h"
#include "../../include/heaptape.h"

/* -- Symbols the tape does not carry yet ----------------------------------- */

/* HtFramesSymFn: an address's inline chain from libdw, cached. */
static size_t follow_sym(void *arg, uint64_t ip, const HtSymbol **out)
{
  HtFollow *f = arg;
  uint64_t *v = ht_map_get(&f->symof, ip);
  if (v) {
    const HtFollowSym *e = &f->symtab[*v - 1];
    *out = f->syms + e->first;
    return e->n;
  }
  if (!f->sym) return 0;
  HtSymOut so[16];
  size_t n = ht_symbolizer_lookup(f->sym, ip, so, HT_COUNTOF(so));
  if (ht_grow(&f->symtab, &f->csymtab, f->nsymtab + 1, sizeof(HtFollowSym)) ||
      ht_grow(&f->syms, &f->csyms, f->nsyms + n, sizeof(HtSymbol))) {
    f->oom = 1;
    return 0;
  }
  HtFollowSym *e = &f->symtab[f->nsymtab];
  e->first = (uint32_t)f->nsyms;
  e->n = 0;
  for (size_t i = 0; i < n; i++) {  /* strings kept: libdw's last only a call */
    int64_t fu = ht_strtab_intern(&f->symstr, so[i].func, NULL);
    int64_t fi = so[i].file ? ht_strtab_intern(&f->symstr, so[i].file, NULL) : -2;
    if (fu < 0 || fi == -1) { f->oom = 1; return 0; }
    HtSymbol *s = &f->syms[f->nsyms + e->n++];
    s->func = f->symstr.str[fu];
    s->file = fi >= 0 ? f->symstr.str[fi] : NULL;
    s->line = so[i].line;
  }
  f->nsyms += e->n;
  if (ht_map_put(&f->symof, ip, ++f->nsymtab)) { f->oom = 1; f->nsymtab--; return 0; }
  *out = f->syms + e->first;
  return e->n;
}

/* Declare a MODULE event's file to the symboliser (once per base). */
static void follow_module(HtFollow *f, const HtEvent *ev)
{
  if (!f->sym || ht_map_get(&f->declared, ev->addr)) return;
  ht_symbolizer_event(f->sym, ev, NULL);
  if (ht_map_put(&f->declared, ev->addr, 1)) f->oom = 1;
}

/* -- Sites merged by key ---------------------------------------------------- */

/* Index in f->site of model site i, named now if new; UINT32_MAX on OOM. */
static uint32_t follow_group(HtFollow *f, uint32_t i)
{
  while (f->ngroup <= i) {
    if (ht_grow(&f->group, &f->cgroup, f->ngroup + 1, sizeof(uint32_t))) {
      f->oom = 1;
      return UINT32_MAX;
    }
    const HtSite *s = &f->m.site[f->ngroup];
    char name[1024];
    ht_frames_site_name_sym(f->r, s->stack, NULL, 0, follow_sym, f, name,
                            sizeof(name), NULL);
    int added;
    int64_t id = ht_strtab_intern(&f->names, name, &added);
    if (id < 0 || (added && ht_grow(&f->site, &f->csite, f->names.n, sizeof(HtFollowSite)))) {
      f->oom = 1;
      return UINT32_MAX;
    }
    if (added) {
      memset(&f->site[id], 0, sizeof(HtFollowSite));
      f->site[id].name = f->names.str[id];
      f->site[id].stack = s->stack;
    }
    f->group[f->ngroup++] = (uint32_t)id;
  }
  return f->group[i];
}

/* Sum the model's sites into f->site: O(sites), whatever the tape's length. */
static void follow_merge(HtFollow *f)
{
  for (size_t i = 0; i < f->names.n; i++) {
    HtFollowSite *s = &f->site[i];
    s->live = s->live_n = s->allocs = s->bytes = 0;
    s->best = 0;
  }
  for (uint32_t i = 0; i < f->m.nsite; i++) {
    uint32_t g = follow_group(f, i);
    if (g == UINT32_MAX) continue;
    const HtSite *ms = &f->m.site[i];
    HtFollowSite *s = &f->site[g];
    s->live += ms->f.live;
    s->live_n += ms->f.live_n;
    s->allocs += ms->f.allocs;
    s->bytes += ms->f.bytes;
    uint64_t w = ms->f.live ? ms->f.live << 1 | 1 : ms->f.allocs << 1; /* live first */
    if (w > s->best) { s->best = w; s->stack = ms->stack; }
  }
}

/* -- The history -------------------------------------------------------------- */

/* Order of figures: larger live bytes first. */
static int follow_fig_cmp(const void *a, const void *b)
{
  const HtFollowFig *x = a, *y = b;
  return x->live != y->live ? (x->live < y->live ? 1 : -1)
                            : (x->site > y->site) - (x->site < y->site);
}

/* HtSnapFn: keep the heap at time t; when the history is full, keep every
** other moment and space them twice as far apart from now on. */
static void follow_snap(void *arg, const HtModel *m, uint64_t t)
{
  HtFollow *f = arg;
  if (f->nmom == HT_FOLLOW_MOMENTS) {
    for (uint32_t i = 0; i < HT_FOLLOW_MOMENTS / 2; i++) f->mom[i] = f->mom[2 * i + 1];
    f->nmom = HT_FOLLOW_MOMENTS / 2;
    f->m.o.snap_ns *= 2;  /* (the model reads it again for the next moment) */
  }
  follow_merge(f);
  HtFollowMoment *mo = &f->mom[f->nmom++];
  mo->ts = t;
  mo->heap = m->heap;
  mo->heap_n = m->heap_n;
  mo->allocs = m->allocs;
  mo->bytes = m->bytes;
  mo->n = 0;
  /* The largest HT_FOLLOW_TOP sites: an insertion into a sorted short list. */
  for (size_t i = 0; i < f->names.n; i++) {
    const HtFollowSite *s = &f->site[i];
    if (!s->live && !s->allocs) continue;
    HtFollowFig fg = {(uint32_t)i, s->live, s->live_n, s->allocs, s->bytes};
    if (mo->n == HT_FOLLOW_TOP && follow_fig_cmp(&fg, &mo->top[mo->n - 1]) >= 0) continue;
    uint32_t k = mo->n < HT_FOLLOW_TOP ? mo->n++ : mo->n - 1;
    while (k > 0 && follow_fig_cmp(&fg, &mo->top[k - 1]) < 0) {
      mo->top[k] = mo->top[k - 1];
      k--;
    }
    mo->top[k] = fg;
  }
}

/* -- Following -------------------------------------------------------------- */

/* Set up a follower of path. */
int ht_follow_init(HtFollow *f, const char *path, uint32_t pid)
{
  memset(f, 0, sizeof(*f));
  f->pid = pid;
  f->path = strdup(path);
  f->mom = calloc(HT_FOLLOW_MOMENTS, sizeof(HtFollowMoment));
  if (!f->path || !f->mom || ht_map_init(&f->declared, 64) || ht_map_init(&f->symof, 1024) ||
      ht_strtab_init(&f->symstr, 1024) || ht_strtab_init(&f->names, 256)) {
    ht_follow_free(f);
    return HEAPTAPE_E_NOMEM;
  }
  f->sym = ht_symbolizer_new(HT_SYM_QUIET);
  f->gap_ns = HT_FOLLOW_GAP_NS;
  return 0;
}

/* Release everything f owns. */
void ht_follow_free(HtFollow *f)
{
  if (f->minit) ht_model_free(&f->m);
  if (f->sf) ht_sealfollow_also(f->sf, NULL, NULL);
  else ht_reader_close(f->r);
  if (f->sym) ht_symbolizer_destroy(f->sym);
  ht_map_free(&f->declared);
  ht_map_free(&f->symof);
  ht_strtab_free(&f->symstr);
  ht_strtab_free(&f->names);
  free(f->symtab); free(f->syms); free(f->site); free(f->group); free(f->mom);
  free(f->path);
  memset(f, 0, sizeof(*f));
}

/* HtResFn: one resolved event to the model (its module to the symboliser). */
static void follow_apply(void *ctx, const HtRes *res)
{
  HtFollow *f = ctx;
  const HtEvent *ev = res->ev;
  if (ev->type == HT_EV_MODULE) follow_module(f, ev);
  if (ev->seq > f->seq_max) f->seq_max = ev->seq;
  else if (ev->seq < f->seq_max) {  /* its packet came after its hold ran out */
    f->late++;
    if (f->gap_ns < HT_FOLLOW_GAP_MAX_NS / 2) f->gap_ns *= 2;  /* wait longer from now on */
  }
  ht_model_res(&f->m, res);
}

/* HtPumpPrefetch: start loading the site an allocation will touch. */
static void follow_prefetch(void *ctx, const HtEvent *ev)
{
  HtFollow *f = ctx;
  if (ev->type == HT_EV_ALLOC) ht_map_prefetch(&f->m.site_of, ev->stack);
}

/* Set the model up over f->r: 0 or HEAPTAPE_E_NOMEM (f->err said). */
static int follow_model(HtFollow *f)
{
  HtModelOpts mo = {.at_ns = UINT64_MAX, .snap_ns = HT_FOLLOW_MOMENT0,
                    .on_snap = follow_snap, .arg = f};
  if (ht_model_init(&f->m, f->r, &mo)) {
    snprintf(f->err, sizeof(f->err), "%s: out of memory", f->path);
    return HEAPTAPE_E_NOMEM;
  }
  f->minit = 1;
  return 0;
}

/* Open the tape: 0 (also "not there yet" when following a process), or an error. */
static int follow_open(HtFollow *f)
{
  char err[400];
  int rc = ht_reader_open_follow(&f->r, f->path, err, sizeof(err));
  if (rc) {
    f->r = NULL;
    if (f->pid && rc != HEAPTAPE_E_NOMEM) return 0;  /* being created: later */
    snprintf(f->err, sizeof(f->err), "%s: %s", f->path, err);
    return rc;
  }
  if (f->pid && ht_reader_header(f->r)->pid != f->pid) {  /* an older run's */
    ht_reader_close(f->r);
    f->r = NULL;
    return 0;
  }
  if (follow_model(f)) {
    ht_reader_close(f->r);
    f->r = NULL;
    return HEAPTAPE_E_NOMEM;
  }
  return 0;
}

/* Tape time up to which a growing tape's events are delivered, a gap
** waiting gap_ns while several threads allocate. */
static uint64_t follow_hold_until(const HtModel *m, const HtReadStats *st, int closed,
                                  uint64_t gap_ns)
{
  /* One thread allocating: numbers skipped are its block's leftovers, a
  ** short wait. Several: every number is used, a gap is a packet to come. */
  uint32_t busy = 0;
  for (uint32_t i = 0; i < m->nth; i++) busy += m->th[i].allocs > 0;
  uint64_t hold = busy > 1 ? gap_ns : HT_FOLLOW_HOLD_NS;
  return closed ? UINT64_MAX : st->end_ns > hold ? st->end_ns - hold : 0;
}

/* Tape time up to which a growing tape's events are delivered. */
uint64_t ht_follow_hold_until(const HtModel *m, const HtReadStats *st, int closed)
{
  return follow_hold_until(m, st, closed, HT_FOLLOW_GAP_NS);
}

/* After events were taken in (n of them; rc their pass's result): sites
** merged, named anew when symbols arrived, rates over the tape time this
** poll covered. */
static void follow_refresh(HtFollow *f, uint64_t n, int rc, int closed, int renamed)
{
  if (rc || f->m.oom) f->oom = 1;
  follow_merge(f);
  f->ts = f->m.last_ts;
  if (f->ts > f->prev_ts) {  /* rates over the tape time this poll covered */
    uint64_t dt = f->ts - f->prev_ts;
    for (size_t i = 0; i < f->names.n; i++) {
      HtFollowSite *s = &f->site[i];
      if (!renamed) {  /* (a site named anew has no previous figures) */
        s->rate_n = (uint64_t)((double)(s->allocs - s->prev_n) * 1e9 / (double)dt);
        s->rate_b = (uint64_t)((double)(s->bytes - s->prev_b) * 1e9 / (double)dt);
      }
      s->prev_n = s->allocs;
      s->prev_b = s->bytes;
    }
    f->prev_ts = f->ts;
  }
  if (n) f->refreshes++;
  f->done = closed && !rc;
}

/* Symbols arrived (finalisation appends them): sites are to be named anew. */
static int follow_renamed(HtFollow *f)
{
  size_t nd = 0, len;
  while (ht_reader_dict_packet(f->r, nd, &len)) nd++;
  int renamed = nd != f->ndict;
  if (renamed) f->ndict = nd, f->ngroup = 0;
  return renamed;
}

/* -- Fed by the sealer -------------------------------------------------------- */

/* HtResFn: one event of the sealing pass (the model set up at the first). */
static void follow_fed(void *ctx, const HtRes *res)
{
  HtFollow *f = ctx;
  if (!f->minit) {
    f->r = f->sf->r;
    if (follow_model(f)) { f->oom = 1; return; }
  }
  follow_apply(f, res);
}

void ht_follow_feed(HtFollow *f, HtSealFollow *sf)
{
  f->sf = sf;
  ht_sealfollow_also(sf, follow_fed, f);
}

/* The sealer gave up (its reader closed): forget what it fed, so that f
** reads the tape from its start by itself. */
static void follow_unfeed(HtFollow *f)
{
  ht_sealfollow_also(f->sf, NULL, NULL);
  f->sf = NULL;
  f->r = NULL;
  if (f->minit) ht_model_free(&f->m);
  memset(&f->m, 0, sizeof(f->m));
  f->minit = 0;
  ht_strtab_free(&f->names);
  if (ht_strtab_init(&f->names, 256)) f->oom = 1;
  f->ngroup = f->ndict = 0;
  f->nmom = 0;
  f->ts = f->prev_ts = f->seq_max = f->late = 0;
  f->fed_bytes = f->fed_events = 0;
}

/* Poll the sealer, whose pass feeds the model: 0, 1 when it gave up (f
** reads alone from now on), or HEAPTAPE_E_NOMEM. */
static int follow_pump(HtFollow *f, int final)
{
  HtSealFollow *sf = f->sf;
  ht_sealfollow_poll(sf, final);
  if (sf->off) {
    follow_unfeed(f);
    return 1;
  }
  if (sf->r && !f->minit) {  /* (open, no event yet) */
    f->r = sf->r;
    if (follow_model(f)) return HEAPTAPE_E_NOMEM;
  }
  return 0;
}

/* Take in what the sealer has now, and refresh. */
static int follow_poll_fed(HtFollow *f, int final)
{
  int rc = follow_pump(f, final);
  if (rc == 1) return ht_follow_poll(f, final);
  f->polled_bytes = 0;
  if (rc || !f->r) return rc;  /* (not there yet) */
  const HtReadStats *st = ht_reader_stats(f->r);
  f->polled_bytes = st->file_bytes > f->fed_bytes ? st->file_bytes - f->fed_bytes : 0;
  f->fed_bytes = st->file_bytes;
  uint64_t n = f->m.events - f->fed_events;
  f->fed_events = f->m.events;
  int renamed = follow_renamed(f);
  follow_refresh(f, n, 0, final || st->has_trailer, renamed);
  return 0;
}

/* Between refreshes: keep the sealer's pass going. */
void ht_follow_take(HtFollow *f)
{
  if (f->sf) (void)follow_pump(f, 0);
}

/* -- Reading by itself ---------------------------------------------------------- */

/* Take in what the tape gained since the last poll. */
int ht_follow_poll(HtFollow *f, int final)
{
  if (f->sf) return follow_poll_fed(f, final);
  f->polled_bytes = 0;
  if (!f->r) {
    int rc = follow_open(f);
    if (rc || !f->r) return rc;
    f->polled_bytes = ht_reader_stats(f->r)->file_bytes;
  } else {
    uint64_t before = ht_reader_stats(f->r)->file_bytes;
    int rc = ht_reader_poll(f->r);
    if (rc < 0) {
      snprintf(f->err, sizeof(f->err), "%s: cannot read on: %s", f->path,
               heaptape_strerror(rc));
      return rc;
    }
    uint64_t after = ht_reader_stats(f->r)->file_bytes;
    f->polled_bytes = after > before ? after - before : 0;
  }
  int renamed = follow_renamed(f);
  const HtReadStats *st = ht_reader_stats(f->r);
  int closed = final || st->has_trailer;
  ht_reader_hold(f->r, follow_hold_until(&f->m, st, closed, f->gap_ns));
  uint64_t before = f->m.events;
  int rc = ht_resolve_run(&f->m.rs, f->r, follow_apply, follow_prefetch, f);
  follow_refresh(f, f->m.events - before, rc, closed, renamed);
  return 0;
}

/* Levels of site i's stack, symbolised on the fly. */
size_t ht_follow_stack(HtFollow *f, size_t i, HtFrameInfo *out, size_t max)
{
  if (!f->r || i >= f->names.n) return 0;
  size_t n = ht_frames_levels_sym(f->r, f->site[i].stack, NULL, 0, follow_sym, f, out, max);
  return n < max ? n : max;
}

/* heaptape -- per (stack, thread, domain) figures for the pprof export.
** Mirrors the model's weighing (weights, counts, duplicate addresses, peak). */
#include <stdlib.h>
#include <string.h>

#include "tally.h"

/* One live block. */
typedef struct TallyBlk {
  uint64_t weight;           /* bytes it stands for */
  uint64_t n;                /* allocations it stands for; free-list link */
  uint32_t ent;              /* entry index */
} TallyBlk;

/* Make room for one more element in *v. */
static int tally_grow(HtTally *t, void **v, uint32_t used, uint32_t *cap, size_t sz)
{
  if (used < *cap) return 0;
  uint32_t c = *cap ? *cap * 2 : 64;
  void *nv = realloc(*v, (size_t)c * sz);
  if (!nv) { t->oom = 1; return -1; }
  *v = nv;
  *cap = c;
  return 0;
}

/* Set up an empty tally. */
int ht_tally_init(HtTally *t, int mode, uint64_t at_ns)
{
  memset(t, 0, sizeof(*t));
  t->mode = mode;
  t->at_ns = mode == HT_INUSE_AT ? at_ns : UINT64_MAX;
  if (ht_map_init(&t->ent_of, 1024) || ht_map_init(&t->live, 4096)) {
    ht_tally_free(t);
    return -1;
  }
  return 0;
}

/* Release what t owns. */
void ht_tally_free(HtTally *t)
{
  for (uint32_t i = 0; i < t->nmod; i++) free(t->mod[i].path);
  free(t->ent); free(t->blk); free(t->mod); free(t->th);
  ht_map_free(&t->ent_of); ht_map_free(&t->live);
  memset(t, 0, sizeof(*t));
}

/* Entry of (stack, tid, rt), created if new; UINT32_MAX on OOM. */
static uint32_t tally_ent(HtTally *t, uint32_t stack, uint32_t tid, unsigned rt)
{
  uint64_t key = (uint64_t)stack | ((uint64_t)tid << 32);
  key = ht_hash64(key) ^ (rt ? 0x9e3779b97f4a7c15ULL : 0);
  /* Hash collisions are resolved by probing the next keys. */
  for (;; key++) {
    uint64_t *v = ht_map_get(&t->ent_of, key);
    if (!v) break;
    HtTallyEnt *e = &t->ent[*v];
    if (e->stack == stack && e->tid == tid && e->rt == rt) return (uint32_t)*v;
  }
  if (tally_grow(t, (void **)&t->ent, t->nent, &t->cent, sizeof(HtTallyEnt)))
    return UINT32_MAX;
  uint32_t id = t->nent;
  if (ht_map_put(&t->ent_of, key, id)) { t->oom = 1; return UINT32_MAX; }
  t->nent++;
  HtTallyEnt *e = &t->ent[id];
  memset(e, 0, sizeof(*e));
  e->stack = stack;
  e->tid = tid;
  e->rt = (uint8_t)rt;
  e->stamp = t->epoch;
  return id;
}

/* Save an entry's live figures for the current peak before they change. */
static void tally_touch(HtTally *t, HtTallyEnt *e)
{
  if (e->stamp != t->epoch) {
    e->saved = e->live;
    e->saved_n = e->live_n;
    e->stamp = t->epoch;
  }
}

/* Copy every entry's live figures into its at figures. */
static void tally_take_at(HtTally *t)
{
  for (uint32_t i = 0; i < t->nent; i++) {
    t->ent[i].at = t->ent[i].live;
    t->ent[i].at_n = t->ent[i].live_n;
  }
  t->at_heap = t->heap;
  t->at_heap_n = t->heap_n;
  t->at_done = 1;
}

/* Take a block off its entry and the heap. */
static void tally_unlive(HtTally *t, const TallyBlk *b)
{
  HtTallyEnt *e = &t->ent[b->ent];
  tally_touch(t, e);
  e->live -= b->weight;
  e->live_n -= b->n;
  t->heap -= b->weight;
  t->heap_n -= b->n;
}

/* An allocation event. */
static void tally_alloc(HtTally *t, const HtEvent *ev)
{
  uint64_t w = ev->weight ? ev->weight : ev->size, n = 1;
  if (ev->weight > ev->size && ev->size) n = (ev->weight + ev->size / 2) / ev->size;
  uint32_t ei = tally_ent(t, ev->stack, ev->tid, (ev->kind & HT_K_DOMAIN_RT) != 0);
  if (ei == UINT32_MAX) return;
  if (ev->ts > t->since_ns || !t->since_ns) {
    t->ent[ei].allocs += n;
    t->ent[ei].bytes += w;
    t->allocs += n;
    t->bytes += w;
  }
  uint64_t *old = ht_map_get(&t->live, ev->addr);
  TallyBlk *b;
  if (old) {  /* an address allocated twice: the tape lost the free */
    b = &t->blk[*old];
    tally_unlive(t, b);
  } else {
    uint32_t bi;
    if (t->blk_free) {
      bi = t->blk_free - 1;
      t->blk_free = (uint32_t)t->blk[bi].n;
    } else {
      if (tally_grow(t, (void **)&t->blk, t->nblk, &t->cblk, sizeof(TallyBlk))) return;
      bi = t->nblk++;
    }
    if (ht_map_put(&t->live, ev->addr, bi)) { t->oom = 1; return; }
    b = &t->blk[bi];
  }
  b->weight = w;
  b->n = n;
  b->ent = ei;
  HtTallyEnt *e = &t->ent[ei];
  tally_touch(t, e);
  e->live += w;
  e->live_n += n;
  t->heap += w;
  t->heap_n += n;
  if (t->heap > t->peak) {
    t->peak = t->heap;
    t->peak_n = t->heap_n;
    t->peak_ts = ev->ts;
    t->epoch++;
  }
}

/* A free event. */
static void tally_free_ev(HtTally *t, const HtEvent *ev)
{
  uint64_t bi;
  if (!ht_map_del(&t->live, ev->addr, &bi)) return;
  TallyBlk *b = &t->blk[bi];
  tally_unlive(t, b);
  b->n = t->blk_free;  /* free-list link */
  t->blk_free = (uint32_t)bi + 1;
}

/* Record a thread's name. */
static void tally_thread(HtTally *t, const HtEvent *ev)
{
  HtTallyThread *th = NULL;
  for (uint32_t i = 0; i < t->nth; i++)
    if (t->th[i].tid == ev->tid) th = &t->th[i];
  if (!th) {
    if (tally_grow(t, (void **)&t->th, t->nth, &t->cth, sizeof(HtTallyThread))) return;
    th = &t->th[t->nth++];
    th->tid = ev->tid;
  }
  size_t n = ev->len < sizeof(th->name) - 1 ? ev->len : sizeof(th->name) - 1;
  memcpy(th->name, ev->str, n);
  th->name[n] = 0;
}

/* Record a module load as an address range. */
static void tally_module(HtTally *t, const HtEvent *ev)
{
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < ev->nseg; i++) {
    if (ev->segs[i].vaddr < lo) lo = ev->segs[i].vaddr;
    if (ev->segs[i].vaddr + ev->segs[i].memsz > hi) hi = ev->segs[i].vaddr + ev->segs[i].memsz;
  }
  if (lo >= hi) { lo = 0; hi = 1; }
  for (uint32_t i = 0; i < t->nmod; i++)
    if (t->mod[i].start == ev->addr + lo) return;  /* seen (e.g. re-read) */
  if (tally_grow(t, (void **)&t->mod, t->nmod, &t->cmod, sizeof(HtTallyMod))) return;
  HtTallyMod *m = &t->mod[t->nmod];
  m->path = strndup(ev->str ? ev->str : "", ev->len);
  if (!m->path) { t->oom = 1; return; }
  t->nmod++;
  size_t nb = ev->build_id_len < 40 ? ev->build_id_len : 40;
  for (size_t i = 0; i < nb; i++) {
    static const char hex[] = "0123456789abcdef";
    m->build_id[2 * i] = hex[ev->build_id[i] >> 4];
    m->build_id[2 * i + 1] = hex[ev->build_id[i] & 15];
  }
  m->build_id[2 * nb] = 0;
  m->start = ev->addr + lo;
  m->limit = ev->addr + hi;
}

/* Feed one event. */
void ht_tally_event(HtTally *t, const HtEvent *ev)
{
  t->events++;
  if (!t->at_done && ev->ts > t->at_ns) tally_take_at(t);
  if (ev->ts > t->last_ts) t->last_ts = ev->ts;
  switch (ev->type) {
  case HT_EV_ALLOC: tally_alloc(t, ev); break;
  case HT_EV_FREE: tally_free_ev(t, ev); break;
  case HT_EV_THREAD: tally_thread(t, ev); break;
  case HT_EV_MODULE: tally_module(t, ev); break;
  default: break;
  }
}

/* Settle the chosen live set. */
void ht_tally_finish(HtTally *t)
{
  if (!t->at_done) tally_take_at(t);
  for (uint32_t i = 0; i < t->nent; i++) {
    HtTallyEnt *e = &t->ent[i];
    switch (t->mode) {
    case HT_INUSE_PEAK:
      e->inuse = e->stamp == t->epoch ? e->saved : e->live;
      e->inuse_n = e->stamp == t->epoch ? e->saved_n : e->live_n;
      break;
    case HT_INUSE_AT: e->inuse = e->at; e->inuse_n = e->at_n; break;
    default: e->inuse = e->live; e->inuse_n = e->live_n; break;
    }
  }
  t->inuse = t->mode == HT_INUSE_PEAK ? t->peak : t->mode == HT_INUSE_AT ? t->at_heap : t->heap;
  t->inuse_n = t->mode == HT_INUSE_PEAK ? t->peak_n
             : t->mode == HT_INUSE_AT ? t->at_heap_n : t->heap_n;
}

/* Name of a thread, or NULL. */
const char *ht_tally_thread(const HtTally *t, uint32_t tid)
{
  for (uint32_t i = 0; i < t->nth; i++)
    if (t->th[i].tid == tid && t->th[i].name[0]) return t->th[i].name;
  return NULL;
}

/* Module containing ip, or NULL (the latest load wins). */
const HtTallyMod *ht_tally_module(const HtTally *t, uint64_t ip)
{
  for (uint32_t i = t->nmod; i-- > 0;)
    if (ip >= t->mod[i].start && ip < t->mod[i].limit) return &t->mod[i];
  return NULL;
}

/* heaptape -- the access report's engine: per site reads, writes, how much of
** each block was touched and when; access counts per offset for the top sites. */
#include <stdlib.h>
#include <string.h>

#include "accrep.h"
#include "frames.h"
#include "../base/grow.h"
#include "../base/map.h"
#include "../../include/heaptape_errors.h"

/* Start a report. */
int ht_accrep_init(HtAccRep *a)
{
  memset(a, 0, sizeof(*a));
  if (ht_map_init(&a->by_stack, 64)) return -1;
  if (ht_map_init(&a->live, 64)) { ht_map_free(&a->by_stack); return -1; }
  return 0;
}

/* Release what a owns. */
void ht_accrep_free(HtAccRep *a)
{
  for (size_t i = 0; i < a->nsites; i++) { free(a->sites[i].name); free(a->sites[i].hist); }
  free(a->sites);
  free(a->blocks);
  ht_map_free(&a->by_stack);
  ht_map_free(&a->live);
  memset(a, 0, sizeof(*a));
}

/* -- First pass: blocks live, sites by stack ------------------------------- */

/* The site of stack, made if new; its index, or UINT32_MAX (out of memory). */
static uint32_t accrep_site(HtAccRep *a, uint32_t stack)
{
  uint64_t *v = ht_map_get(&a->by_stack, (uint64_t)stack + 1);
  if (v) return (uint32_t)(*v - 1);
  if (ht_grow(&a->sites, &a->capsites, a->nsites + 1, sizeof(*a->sites))) { a->oom = 1; return UINT32_MAX; }
  HtAccSite *s = &a->sites[a->nsites];
  memset(s, 0, sizeof(*s));
  s->name = (char *)(uintptr_t)stack;  /* the stack until named */
  if (ht_map_put(&a->by_stack, (uint64_t)stack + 1, a->nsites + 1)) { a->oom = 1; return UINT32_MAX; }
  return (uint32_t)a->nsites++;
}

/* A live state for block index, born at ts. */
static void accrep_born(HtAccRep *a, const HtBlock *b, uint64_t ts)
{
  uint32_t site = accrep_site(a, b->stack);
  if (site == UINT32_MAX) return;
  uint64_t idx;
  if (a->freeblock) {
    idx = a->freeblock - 1;
    a->freeblock = a->blocks[idx].size;
  } else {
    if (ht_grow(&a->blocks, &a->capblocks, a->nblocks + 1, sizeof(*a->blocks))) { a->oom = 1; return; }
    idx = a->nblocks++;
  }
  if (ht_map_put(&a->live, b->index, idx + 1)) { a->oom = 1; return; }
  a->blocks[idx] = (HtAccBlock){.born = ts, .size = b->size, .site = site};
}

/* Idle share of a lifetime, 0..1. */
static double accrep_share(uint64_t idle, uint64_t life)
{
  return life ? (double)idle / (double)life : 0;
}

/* Block k dies at ts (freed, or the tape's end): add it to its site. */
static void accrep_retire(HtAccRep *a, const HtAccBlock *k, uint64_t ts, int freed)
{
  HtAccSite *s = &a->sites[k->site];
  uint64_t life = ts > k->born ? ts - k->born : 0;
  s->blocks++;
  s->bytes += k->size;
  if (k->size > s->max_size) s->max_size = k->size;
  s->byte_secs += (double)k->size * (double)life / 1e9;
  if (!k->reads && !k->writes) { s->never++; return; }
  if (!k->reads) s->wonly++;
  else if (k->writes && !k->write_after_read) s->ronly++;
  if (k->size && k->maxend * 100 < k->size * HT_ACCREP_PREFIX_PCT) {
    s->prefix++;
    s->prefix_touched += k->maxend;
    s->prefix_bytes += k->size;
  }
  if (!life) return;
  uint64_t before = k->first > k->born ? k->first - k->born : 0;
  uint64_t after = ts > k->last ? ts - k->last : 0;
  if (before * 100 >= life * HT_ACCREP_IDLE_PCT) { s->early++; s->early_idle += accrep_share(before, life); }
  if (freed && after * 100 >= life * HT_ACCREP_IDLE_PCT) { s->late++; s->late_idle += accrep_share(after, life); }
}

/* Block index dies at ts: retire it and drop its state. */
static void accrep_die(HtAccRep *a, uint64_t index, uint64_t ts)
{
  uint64_t idx;
  if (!ht_map_del(&a->live, index, &idx)) return;  /* not kept (out of memory) */
  accrep_retire(a, &a->blocks[idx - 1], ts, 1);
  a->blocks[idx - 1].size = a->freeblock;
  a->freeblock = idx;
}

/* First pass: one resolved event. */
static void accrep_res(void *ctx, const HtRes *res)
{
  HtAccRep *a = ctx;
  const HtEvent *ev = res->ev;
  a->end_ts = ev->ts;
  if (ev->type == HT_EV_ALLOC) {
    if (res->dup) accrep_die(a, res->old.index, ev->ts);
    accrep_born(a, &res->blk, ev->ts);
  } else if (ev->type == HT_EV_FREE && res->known) {
    accrep_die(a, res->blk.index, ev->ts);
  }
}

/* First pass: one access. */
static void accrep_acc(void *ctx, const HtAccess *x)
{
  HtAccRep *a = ctx;
  a->accesses++;
  uint64_t *v = x->handle ? ht_map_get(&a->live, x->handle - 1) : NULL;
  if (!v) { a->unknown++; return; }
  HtAccBlock *k = &a->blocks[*v - 1];
  HtAccSite *s = &a->sites[k->site];
  int rd = x->kind != HT_ACC_STORE, wr = x->kind != HT_ACC_LOAD;
  if (!k->reads && !k->writes) k->first = x->ts;
  k->last = x->ts;
  if (wr && k->read_seen) k->write_after_read = 1;
  if (rd) { k->reads++; k->read_seen = 1; s->reads++; s->bread += x->size; }
  if (wr) { k->writes++; s->writes++; s->bwritten += x->size; }
  if (x->kind == HT_ACC_MODIFY) s->modifies++;
  if (x->offset + x->size > k->maxend) k->maxend = x->offset + x->size;
}

/* -- Naming, merging, ordering ---------------------------------------------- */

static int accrep_cmp_name(const void *x, const void *y)
{
  return strcmp(((const HtAccSite *)x)->name, ((const HtAccSite *)y)->name);
}

/* By accesses (descending), then name. */
static int accrep_cmp_acc(const void *x, const void *y)
{
  const HtAccSite *p = x, *q = y;
  uint64_t m = p->reads + p->writes, n = q->reads + q->writes;
  if (m != n) return m < n ? 1 : -1;
  return strcmp(p->name, q->name);
}

/* Add site t into s. */
static void accrep_merge(HtAccSite *s, const HtAccSite *t)
{
  s->blocks += t->blocks; s->bytes += t->bytes;
  s->reads += t->reads; s->writes += t->writes; s->modifies += t->modifies;
  s->bread += t->bread; s->bwritten += t->bwritten; s->byte_secs += t->byte_secs;
  s->never += t->never; s->wonly += t->wonly; s->ronly += t->ronly;
  s->prefix += t->prefix; s->early += t->early; s->late += t->late;
  s->prefix_touched += t->prefix_touched; s->prefix_bytes += t->prefix_bytes;
  s->early_idle += t->early_idle; s->late_idle += t->late_idle;
  if (t->max_size > s->max_size) s->max_size = t->max_size;
}

/* Name the sites, merge those of one name, sort by accesses. The stacks
** of the sites before merging stay in *stacks (n of them). */
static uint32_t *accrep_name(HtAccRep *a, const HtReader *r, size_t *n_out)
{
  char buf[1024];
  uint32_t *stacks = malloc((a->nsites + 1) * sizeof(*stacks));
  if (!stacks) { a->oom = 1; return NULL; }
  *n_out = a->nsites;
  for (size_t i = 0; i < a->nsites; i++) {
    uint32_t stack = (uint32_t)(uintptr_t)a->sites[i].name;
    stacks[i] = stack;
    ht_frames_site_name(r, stack, a->wrappers, a->nwrappers, buf, sizeof(buf), NULL);
    a->sites[i].name = strdup(buf);
    if (!a->sites[i].name) { a->sites[i].name = strdup("?"); a->oom = 1; }
  }
  qsort(a->sites, a->nsites, sizeof(*a->sites), accrep_cmp_name);
  size_t n = 0;
  for (size_t i = 0; i < a->nsites; i++) {
    HtAccSite *s = &a->sites[i];
    if (n && !strcmp(a->sites[n - 1].name, s->name)) { accrep_merge(&a->sites[n - 1], s); free(s->name); }
    else a->sites[n++] = *s;
  }
  a->nsites = n;
  qsort(a->sites, a->nsites, sizeof(*a->sites), accrep_cmp_acc);
  return stacks;
}

/* Map the stacks of the first ntop sites to them (by_stack), counts zeroed. */
static void accrep_top(HtAccRep *a, const HtReader *r, const uint32_t *stacks, size_t nstacks,
                       size_t top)
{
  char buf[1024];
  ht_map_clear(&a->by_stack);
  a->ntop = 0;
  while (a->ntop < top && a->ntop < a->nsites && a->sites[a->ntop].reads + a->sites[a->ntop].writes) {
    HtAccSite *s = &a->sites[a->ntop];
    s->hist = calloc(HT_ACCREP_HIST, sizeof(*s->hist));
    if (!s->hist) { a->oom = 1; return; }
    a->ntop++;
  }
  for (size_t i = 0; i < nstacks && a->ntop; i++) {
    ht_frames_site_name(r, stacks[i], a->wrappers, a->nwrappers, buf, sizeof(buf), NULL);
    for (size_t t = 0; t < a->ntop; t++)
      if (!strcmp(a->sites[t].name, buf)) {
        if (ht_map_put(&a->by_stack, (uint64_t)stacks[i] + 1, t + 1)) a->oom = 1;
        break;
      }
  }
}

/* -- Second pass: access counts per offset of the top sites ---------------- */

/* Second pass: events are of no interest. */
static void accrep_res2(void *ctx, const HtRes *res)
{
  (void)ctx;
  (void)res;
}

/* Second pass: one access of a top site adds 1 to each byte it touched. */
static void accrep_acc2(void *ctx, const HtAccess *x)
{
  HtAccRep *a = ctx;
  if (!x->handle) return;
  uint64_t *v = ht_map_get(&a->by_stack, (uint64_t)x->stack + 1);
  if (!v) return;
  HtAccSite *s = &a->sites[*v - 1];
  for (uint64_t o = x->offset; o < x->offset + x->size; o++) {
    if (o < HT_ACCREP_HIST) s->hist[o]++;
    else s->hist_beyond++;
  }
}

/* Both passes. */
int ht_accrep_run(HtAccRep *a, HtReader *r, size_t top)
{
  HtResolve rs;
  ht_resolve_init(&rs);
  int rc = ht_access_run(&rs, r, accrep_res, accrep_acc, a);
  ht_resolve_free(&rs);
  if (rc || a->oom) return HEAPTAPE_E_NOMEM;
  /* The blocks never freed die at the tape's end. */
  size_t it = 0;
  uint64_t key, val;
  while (ht_map_next(&a->live, &it, &key, &val)) accrep_retire(a, &a->blocks[val - 1], a->end_ts, 0);
  ht_map_clear(&a->live);
  free(a->blocks);
  a->blocks = NULL;
  a->nblocks = a->capblocks = 0;
  a->freeblock = 0;
  size_t nstacks = 0;
  uint32_t *stacks = accrep_name(a, r, &nstacks);
  if (stacks) accrep_top(a, r, stacks, nstacks, top);
  free(stacks);
  if (a->oom) return HEAPTAPE_E_NOMEM;
  if (!a->ntop) return 0;
  if (ht_reader_rewind(r)) return HEAPTAPE_E_NOMEM;
  ht_resolve_init(&rs);
  rc = ht_access_run(&rs, r, accrep_res2, accrep_acc2, a);
  ht_resolve_free(&rs);
  return rc || a->oom ? HEAPTAPE_E_NOMEM : 0;
}

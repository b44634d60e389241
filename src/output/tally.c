/* heaptape -- per (stack, thread, domain) figures for the pprof export, read
** off a model whose sites were split that way; modules from the reader. */
#include <stdlib.h>
#include <string.h>

#include "tally.h"
#include "../../include/heaptape.h"

/* Take the figures of a finished model with split sites. */
int ht_tally_from_model(HtTally *t, const HtModel *m, int mode)
{
  memset(t, 0, sizeof(*t));
  t->m = m;
  t->mode = mode;
  t->ent = calloc(m->nsite ? m->nsite : 1, sizeof(HtTallyEnt));
  size_t nmod = ht_reader_module_count(m->r);
  t->mod = calloc(nmod ? nmod : 1, sizeof(HtTallyMod));
  if (!t->ent || !t->mod) { ht_tally_free(t); return HEAPTAPE_E_NOMEM; }
  for (uint32_t i = 0; i < m->nsite; i++) {
    const HtSite *s = &m->site[i];
    HtTallyEnt *e = &t->ent[t->nent++];
    e->stack = s->stack;
    e->tid = s->tid;
    e->rt = s->rt;
    e->allocs = s->recent;
    e->bytes = s->recent_bytes;
    e->inuse = mode == HT_INUSE_PEAK ? s->f.peak : mode == HT_INUSE_AT ? s->f.at : s->f.live;
    e->inuse_n = mode == HT_INUSE_PEAK ? s->f.peak_n
               : mode == HT_INUSE_AT ? s->f.at_n : s->f.live_n;
    t->allocs += e->allocs;
    t->bytes += e->bytes;
    t->inuse += e->inuse;
    t->inuse_n += e->inuse_n;
  }
  for (size_t i = 0; i < nmod; i++) {
    HtTallyMod *md = &t->mod[t->nmod];
    const uint8_t *bid;
    size_t nb;
    md->path = ht_reader_module_info(m->r, i, &md->start, &md->limit, &bid, &nb);
    if (!md->path) continue;
    if (md->start >= md->limit) md->limit = md->start + 1;
    if (nb > 64) nb = 64;
    for (size_t j = 0; j < nb; j++) {
      static const char hex[] = "0123456789abcdef";
      md->build_id[2 * j] = hex[bid[j] >> 4];
      md->build_id[2 * j + 1] = hex[bid[j] & 15];
    }
    md->build_id[2 * nb] = 0;
    t->nmod++;
  }
  t->last_ts = m->last_ts;
  return 0;
}

/* Release what t owns. */
void ht_tally_free(HtTally *t)
{
  free(t->ent);
  free(t->mod);
  memset(t, 0, sizeof(*t));
}

/* Name of a thread, or NULL. */
const char *ht_tally_thread(const HtTally *t, uint32_t tid)
{
  for (uint32_t i = 0; i < t->m->nth; i++)
    if (t->m->th[i].tid == tid && t->m->th[i].name[0]) return t->m->th[i].name;
  return NULL;
}

/* Module containing ip, or NULL (the latest load wins). */
const HtTallyMod *ht_tally_module(const HtTally *t, uint64_t ip)
{
  for (uint32_t i = t->nmod; i-- > 0;)
    if (ip >= t->mod[i].start && ip < t->mod[i].limit) return &t->mod[i];
  return NULL;
}

/* heaptape -- sealing a journal while it is written: one followed reader,
** the sealing resolver and pass fed what the journal gained at each poll,
** finalisation's summary and modules gathered on the way, so that after the
** program exits only the tail, the symbols and the sealed tape's last
** packets remain. The result is the sealed tape `heaptape seal` makes of
** the same journal, byte for byte. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sealfollow.h"
#include "follow.h"
#include "../../include/heaptape.h"

/* Set up a sealer of path (nothing opened yet). */
int ht_sealfollow_init(HtSealFollow *sf, const char *path, uint32_t pid, uint64_t since_ns)
{
  memset(sf, 0, sizeof(*sf));
  sf->pid = pid;
  sf->since_ns = since_ns;
  size_t n = strlen(path);
  sf->path = strdup(path);
  sf->tmp = malloc(n + sizeof(".sealing"));
  sf->sy = ht_symbolizer_new(HT_SYM_QUIET);
  if (!sf->path || !sf->tmp || !sf->sy) {
    ht_sealfollow_free(sf);
    return HEAPTAPE_E_NOMEM;
  }
  memcpy(sf->tmp, path, n);
  memcpy(sf->tmp + n, ".sealing", sizeof(".sealing"));
  ht_resolve_init(&sf->rs);
  ht_resolve_indexed(&sf->rs);
  return 0;
}

/* Stop following: the caller seals the journal offline at the end. */
static void sf_give_up(HtSealFollow *sf, const char *why)
{
  if (!sf->off) snprintf(sf->why, sizeof(sf->why), "%s", why);
  sf->off = 1;
  if (sf->s) ht_sealer_finish(sf->s, &sf->rs, HEAPTAPE_E_MISUSE);  /* (discarded) */
  sf->s = NULL;
  if (sf->f) { fclose(sf->f); unlink(sf->tmp); }
  sf->f = NULL;
  ht_resolve_free(&sf->rs);
  ht_reader_close(sf->r);
  sf->r = NULL;
}

/* Open the journal once this run's is there, and start the sealed tape. */
static void sf_open(HtSealFollow *sf)
{
  struct stat st;
  if (stat(sf->path, &st)) return;              /* not created yet */
  if (!S_ISREG(st.st_mode)) { sf_give_up(sf, "not a regular file"); return; }
  /* Mapped only once its header is this run's: an older run's tape at the
  ** path is cut short when the program's recorder starts, under a mapping. */
  uint32_t pid;
  uint64_t start_ns;
  if (ht_tape_header_of(sf->path, &pid, &start_ns)) return;  /* not whole yet */
  if (pid != sf->pid || start_ns < sf->since_ns) return;     /* an older run's */
  char err[256];
  if (ht_reader_open_follow(&sf->r, sf->path, err, sizeof(err))) {
    sf->r = NULL;
    return;
  }
  if (ht_reader_sealed(sf->r)) { sf_give_up(sf, "already sealed"); return; }
  sf->f = fopen(sf->tmp, "wb");
  if (!sf->f) { sf_give_up(sf, strerror(errno)); return; }
  sf->s = ht_sealer_new(sf->r, sf->f, 0);
  if (!sf->s) { sf_give_up(sf, "out of memory"); return; }
  sf->scan = (HtSymScan){.r = sf->r, .sy = sf->sy, .sum = &sf->sum};
}

/* HtResFn: one event to the sealer and to finalisation's summary. */
static void sf_event(void *ctx, const HtRes *res)
{
  HtSealFollow *sf = ctx;
  const HtEvent *ev = res->ev;
  /* An event after a later one: its packet came after its hold ran out.
  ** The offline order differs: the sealed tape would too. */
  if (sf->sum.events && ev->seq <= sf->seq_max && !sf->off) {
    snprintf(sf->why, sizeof(sf->why), "event %llu arrived after %llu",
             (unsigned long long)ev->seq, (unsigned long long)sf->seq_max);
    sf->off = 1;
  }
  if (ev->seq > sf->seq_max) sf->seq_max = ev->seq;
  if (ev->type == HT_EV_ALLOC) {
    if (!sf->tid0) sf->tid0 = ev->tid + 1;
    else if (sf->tid0 != ev->tid + 1) sf->several = 1;
  }
  if (!sf->off) ht_sealer_event(sf->s, res);
  ht_symscan_event(&sf->scan, res);
  if (sf->also) sf->also(sf->also_ctx, res);
}

void ht_sealfollow_also(HtSealFollow *sf, HtResFn fn, void *ctx)
{
  sf->also = fn;
  sf->also_ctx = ctx;
}

/* Seal what r delivers now, holding events after a missing number until
** the journal is hold_ns past them (UINT64_MAX: the writer is gone). */
static uint64_t sf_run(HtSealFollow *sf, int final)
{
  const HtReadStats *st = ht_reader_stats(sf->r);
  /* One thread allocating: numbers skipped are its block's leftovers, a
  ** short wait. Several: every number is used, a gap is a packet to come. */
  uint64_t hold = sf->several ? HT_FOLLOW_GAP_NS : HT_FOLLOW_HOLD_NS;
  ht_reader_hold(sf->r, final || st->has_trailer ? UINT64_MAX
                        : st->end_ns > hold ? st->end_ns - hold : 0);
  uint64_t before = sf->sum.events;
  int rc = ht_resolve_run(&sf->rs, sf->r, sf_event, NULL, sf);
  if (rc) sf_give_up(sf, heaptape_strerror(rc));
  else if (sf->off) sf_give_up(sf, sf->why);
  else if (ht_reader_reordered(sf->r))  /* stack ids may differ from offline */
    sf_give_up(sf, "a packet reached the journal after a later one was read");
  return sf->sum.events - before;
}

/* Seal what the journal gained. */
uint64_t ht_sealfollow_poll(HtSealFollow *sf, int final)
{
  if (sf->off) return 0;
  if (!sf->r) {
    sf_open(sf);
    if (!sf->r) return 0;
  } else if (ht_reader_poll(sf->r) < 0) {
    sf_give_up(sf, "cannot read on");
    return 0;
  }
  uint64_t n = sf_run(sf, final);
  if (final) sf->tail += n;  /* (left when the writer was gone) */
  return n;
}

/* The rest, the symbols, the sealed tape in the journal's place. */
int ht_sealfollow_finish(HtSealFollow *sf, const char *keep, HtSymSummary *sum, char *err,
                         size_t errlen)
{
  if (!sf->off && !sf->r) sf_open(sf);
  if (!sf->off && !sf->r) sf_give_up(sf, "no journal of this run");
  if (!sf->off && ht_reader_poll(sf->r) < 0) sf_give_up(sf, "cannot read on");
  if (!sf->off) sf->tail += sf_run(sf, 1);
  if (sf->off) return 1;
  const HtReadStats *st = ht_reader_stats(sf->r);
  uint64_t whole = st->file_bytes - st->truncated_bytes;
  sf->sum.truncated = !st->has_trailer || st->truncated_bytes;
  /* Finalisation, as ht_symbolize_run does it, from what was gathered. */
  HtDict *d;
  int rc = ht_symbolize_dict(sf->r, sf->path, sf->sy, &sf->sum, &d, err, errlen);
  if (!rc && d) rc = ht_symbolize_append(sf->path, d, sf->pid, whole, &sf->sum, err, errlen);
  ht_dict_destroy(d);
  if (rc) return rc;
  ht_symbolize_rtlocs(sf->r, sf->path);
  /* The dictionary just appended (and the partial packet cut) are read. */
  if (ht_reader_poll(sf->r) < 0) {
    snprintf(err, errlen, "%s: cannot read on", sf->path);
    return HEAPTAPE_E_IO;
  }
  rc = ht_sealer_finish(sf->s, &sf->rs, 0);
  sf->s = NULL;
  if (!rc && keep && rename(sf->path, keep)) {
    snprintf(err, errlen, "%s: cannot keep the journal as %s: %s", sf->path, keep,
             strerror(errno));
    rc = HEAPTAPE_E_IO;
  }
  FILE *f = sf->f;
  sf->f = NULL;
  rc = ht_seal_commit(f, sf->tmp, sf->path, rc, err, errlen);
  if (sum) *sum = sf->sum;
  return rc;
}

HtModel *ht_sealfollow_model(HtSealFollow *sf)
{
  return sf->off || !sf->s ? NULL : ht_sealer_model(sf->s);
}

/* Release everything. */
void ht_sealfollow_free(HtSealFollow *sf)
{
  if (sf->s) ht_sealer_finish(sf->s, &sf->rs, HEAPTAPE_E_MISUSE);
  if (sf->f) { fclose(sf->f); unlink(sf->tmp); }
  if (!sf->off) ht_resolve_free(&sf->rs);
  ht_reader_close(sf->r);
  if (sf->sy) ht_symbolizer_destroy(sf->sy);
  free(sf->path);
  free(sf->tmp);
  memset(sf, 0, sizeof(*sf));
}

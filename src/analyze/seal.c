/* heaptape -- sealing: the resolving pass over a journal feeds the sealed
** tape's writer and the model whose figures become its aggregate section;
** the result replaces the journal atomically. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "seal.h"
#include "agg.h"
#include "resolve.h"
#include "symbolize.h"
#include "../format/sealw.h"
#include "../../include/heaptape.h"

/* Monotonic seconds. */
static double seal_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The writer, and the model whose figures become the aggregate section. */
typedef struct SealCtx {
  HtSealW *w;
  HtModel m;
  HtSnaps sn;                /* the HTML page's snapshots, taken of m */
} SealCtx;

/* Hand one resolved event to the writer with the block it names, and to
** the model. */
static void seal_event(void *ctx, const HtRes *res)
{
  SealCtx *c = ctx;
  const HtEvent *ev = res->ev;
  const HtBlock *b = ev->type == HT_EV_FREE && res->known ? &res->blk
                   : ev->type == HT_EV_ALLOC && res->dup ? &res->old : NULL;
  HtSealBlock sb;
  if (b) sb = (HtSealBlock){b->index + 1, b->size, b->weight, b->stack, b->tid & ~HT_BLOCK_RT};
  ht_sealw_event(c->w, ev, b ? &sb : NULL);
  ht_model_res(&c->m, res);
}

/* The aggregate section of the finished pass, or NULL (out of memory). */
static uint8_t *seal_agg(SealCtx *c, size_t *len)
{
  uint8_t *agg = NULL;
  ht_model_finish(&c->m);
  /* Snapshots cut short (times past the end the scan saw) are left out. */
  if (c->m.oom || ht_agg_encode(&c->m, c->m.snap_cut ? NULL : &c->sn, &agg, len)) return NULL;
  if (*len > UINT32_MAX / 2) { free(agg); return NULL; }  /* a packet's limit */
  return agg;
}

/* Seal the tape at path in place. */
int ht_seal_tape(const char *path, unsigned flags, HtSealSummary *sump, char *err,
                 size_t errlen)
{
  HtSealSummary dummy, *sum = sump ? sump : &dummy;
  memset(sum, 0, sizeof(*sum));
  double t0 = seal_now();
  HtReader *r;
  char why[256];
  int rc = ht_reader_open(&r, path, why, sizeof(why));
  if (rc) { snprintf(err, errlen, "%s: %s", path, why); return rc; }
  /* Sealed tapes of older versions are sealed again (version 2 gains its
  ** aggregate section, all the newer columns and coding). */
  if (ht_reader_sealed(r) && ht_reader_header(r)->version >= HT_VERSION_SEALED) {
    sum->already = 1;
    ht_reader_close(r);
    return 0;
  }
  if ((flags & HT_SEAL_SYMBOLIZE) && !(ht_reader_header(r)->flags & HT_F_SYMBOLIZED)) {
    ht_reader_close(r);
    rc = ht_symbolize_run(path, HT_SYM_QUIET, NULL, err, errlen);
    if (rc) return rc;
    rc = ht_reader_open(&r, path, why, sizeof(why));
    if (rc) { snprintf(err, errlen, "%s: %s", path, why); return rc; }
  }
  char tmp[4096];
  if (snprintf(tmp, sizeof(tmp), "%s.sealing", path) >= (int)sizeof(tmp)) {
    ht_reader_close(r);
    snprintf(err, errlen, "%s: path too long", path);
    return HEAPTAPE_E_MISUSE;
  }
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    snprintf(err, errlen, "%s: cannot create (%s)", tmp, strerror(errno));
    ht_reader_close(r);
    return HEAPTAPE_E_IO;
  }
  SealCtx c = {.w = ht_sealw_new(f, r)};
  c.sn.step = ht_snaps_step(ht_reader_stats(r)->end_ns, HT_SNAPS_BUCKETS);
  HtModelOpts mo = {.at_ns = UINT64_MAX, .split = 1, .snap_ns = c.sn.step,
                    .on_snap = ht_snaps_take, .on_rss = ht_snaps_rss, .arg = &c.sn,
                    .snap_max = 4 * HT_SNAPS_BUCKETS};
  int mrc = ht_model_init(&c.m, r, &mo);
  HtResolve rs;
  ht_resolve_init(&rs);
  rc = c.w && !mrc ? ht_resolve_run(&rs, r, seal_event, NULL, &c) : HEAPTAPE_E_NOMEM;
  if (c.w) {
    size_t agglen = 0;
    uint8_t *agg = rc || mrc ? NULL : seal_agg(&c, &agglen);
    int wrc = ht_sealw_finish(c.w, r, rs.nallocs, rs.nops, rs.unknown_frees, agg, agglen);
    free(agg);
    if (!rc) rc = wrc;
  }
  if (!mrc) ht_model_free(&c.m);
  ht_snaps_free(&c.sn);
  sum->events = ht_reader_stats(r)->events;
  sum->allocs = rs.nallocs;
  sum->journal_bytes = ht_reader_stats(r)->file_bytes;
  ht_resolve_free(&rs);
  ht_reader_close(r);
  if (fflush(f) || fsync(fileno(f))) rc = rc ? rc : HEAPTAPE_E_IO;
  if (fclose(f)) rc = rc ? rc : HEAPTAPE_E_IO;
  if (!rc && rename(tmp, path)) rc = HEAPTAPE_E_IO;
  if (rc) {
    unlink(tmp);
    snprintf(err, errlen, "%s: cannot seal: %s", path,
             rc == HEAPTAPE_E_IO ? strerror(errno) : heaptape_strerror(rc));
    return rc;
  }
  struct stat st;
  if (!stat(path, &st)) sum->sealed_bytes = (uint64_t)st.st_size;
  sum->seconds = seal_now() - t0;
  return 0;
}

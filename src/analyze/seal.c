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
#include "maplayout.h"
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

/* A sealing pass: the writer, and the model whose figures become the
** aggregate section. */
struct HtSealer {
  HtReader *r;               /* the journal being read */
  HtSealW *w;
  HtModel m;
  int mrc;                   /* the model's set-up failed */
  HtSnaps sn;                /* the HTML page's snapshots, taken of m */
  HtLayoutW lay;             /* the heap map's layout */
};

/* Hand one resolved event to the writer with the block it names, and to
** the model. */
void ht_sealer_event(void *ctx, const HtRes *res)
{
  HtSealer *c = ctx;
  const HtEvent *ev = res->ev;
  const HtBlock *b = ev->type == HT_EV_FREE && res->known ? &res->blk
                   : ev->type == HT_EV_ALLOC && res->dup ? &res->old : NULL;
  HtSealBlock sb;
  if (b) sb = (HtSealBlock){b->index + 1, b->size, b->weight, b->stack, b->tid & ~HT_BLOCK_RT,
                            b->born_op, b->born_ts};
  ht_sealw_event(c->w, ev, b ? &sb : NULL);
  ht_model_res(&c->m, res);
  ht_layoutw_res(&c->lay, res);
}

/* The aggregate section of the finished pass, or NULL (out of memory). */
static uint8_t *seal_agg(HtSealer *c, size_t *len)
{
  uint8_t *agg = NULL, *lay = NULL;
  size_t nlay = 0;
  HtAggNames names = {0};
  ht_model_finish(&c->m);
  /* Snapshots cut short (times near 2^64: damaged) are left out. */
  const HtSnaps *sn = !c->m.snap_cut ? &c->sn : NULL;
  int bad = c->m.oom || ht_aggnames_make(&c->m, &names);
  bad = bad || ht_layoutw_encode(&c->lay, &lay, &nlay) ||
        ht_agg_encode(&c->m, &names, sn, lay, nlay, &agg, len);
  ht_aggnames_free(&names);
  free(lay);
  if (bad) return NULL;
  if (*len > UINT32_MAX / 2) { free(agg); return NULL; }  /* a packet's limit */
  return agg;
}

/* Begin sealing r's events into f. */
HtSealer *ht_sealer_new(HtReader *r, FILE *f, uint64_t end_ns)
{
  HtSealer *c = calloc(1, sizeof(*c));
  if (!c) return NULL;
  c->r = r;
  HtModelOpts mo = {.at_ns = UINT64_MAX, .split = 1};
  /* Snapshots that fold as the journal goes on: the same whether sealed
  ** after the run or while it grows (its duration unknown). */
  ht_snaps_setup(&c->sn, HT_SNAPS_BUCKETS, end_ns, &mo);
  c->mrc = ht_model_init(&c->m, r, &mo);
  c->w = c->mrc || ht_layoutw_init(&c->lay) ? NULL : ht_sealw_new(f, r);
  if (!c->w) {
    if (!c->mrc) ht_model_free(&c->m);
    ht_layoutw_free(&c->lay);
    free(c);
    return NULL;
  }
  return c;
}

HtModel *ht_sealer_model(HtSealer *c)
{
  return &c->m;
}

/* Write the rest of the sealed tape from r's final reading; free c. */
int ht_sealer_finish(HtSealer *c, const HtResolve *rs, int failed)
{
  size_t agglen = 0;
  uint8_t *agg = failed ? NULL : seal_agg(c, &agglen);
  int rc = ht_sealw_finish(c->w, c->r, rs->nallocs, rs->nops, rs->unknown_frees, agg, agglen);
  free(agg);
  ht_model_free(&c->m);
  ht_snaps_free(&c->sn);
  ht_layoutw_free(&c->lay);
  free(c);
  return rc;
}

/* Make the sealed file at tmp (its writing ended with rc) the tape at path. */
int ht_seal_commit(FILE *f, const char *tmp, const char *path, int rc, char *err,
                   size_t errlen)
{
  if (fflush(f) || fsync(fileno(f))) rc = rc ? rc : HEAPTAPE_E_IO;
  if (fclose(f)) rc = rc ? rc : HEAPTAPE_E_IO;
  if (!rc && rename(tmp, path)) rc = HEAPTAPE_E_IO;
  if (rc) {
    int e = errno;
    unlink(tmp);
    snprintf(err, errlen, "%s: cannot seal: %s", path,
             rc == HEAPTAPE_E_IO ? strerror(e) : heaptape_strerror(rc));
  }
  return rc;
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
  HtSealer *c = ht_sealer_new(r, f, ht_reader_stats(r)->end_ns);
  HtResolve rs;
  ht_resolve_init(&rs);
  ht_resolve_indexed(&rs);  /* its index and birth too: 32 bytes a live block, packed */
  rc = c ? ht_resolve_run(&rs, r, ht_sealer_event, NULL, c) : HEAPTAPE_E_NOMEM;
  if (c) {
    int wrc = ht_sealer_finish(c, &rs, rc);
    if (!rc) rc = wrc;
  }
  sum->events = ht_reader_stats(r)->events;
  sum->allocs = rs.nallocs;
  sum->journal_bytes = ht_reader_stats(r)->file_bytes;
  ht_resolve_free(&rs);
  ht_reader_close(r);
  rc = ht_seal_commit(f, tmp, path, rc, err, errlen);
  if (rc) return rc;
  struct stat st;
  if (!stat(path, &st)) sum->sealed_bytes = (uint64_t)st.st_size;
  sum->seconds = seal_now() - t0;
  return 0;
}

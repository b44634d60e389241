/* heaptape -- fuzz target: the sealed tape. Any input that opens as a
** journal is sealed in memory (no frees named) and read back: the events
** must come back the same. Any input that opens as a sealed tape is read
** whole, checksums trusted so that mutations reach the column decoder,
** after stats' count of symbolised addresses (from the STACKS packets, the
** stack table not yet decoded), the model's load of its aggregate section
** (or its pass) with the report's caller groups (version 12: the sites'
** stored names), the page's snapshots (version 10: SNAPS packets, loaded
** on demand) and the heap map's layout (version 11).
** Property: no crash, no leak, sealing loses no event. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/reader.h"
#include "format/sealw.h"
#include "analyze/model.h"
#include "analyze/agg.h"
#include "analyze/callers.h"
#include "analyze/snaps.h"
#include "analyze/maplayout.h"

/* Read every event (bounded work). */
static void walk(HtReader *r)
{
  HtEvent ev;
  uint64_t fr[256];
  int n = 0;
  while (ht_reader_next(r, &ev) > 0 && n++ < 1000000)
    if (ev.type == HT_EV_ALLOC) (void)ht_reader_stack_frames(r, ev.stack, fr, 256);
}

/* Whether two events say the same. */
static int same(const HtEvent *a, const HtEvent *b)
{
  return a->type == b->type && a->seq == b->seq && a->ts == b->ts && a->tid == b->tid &&
         a->size == b->size && a->stack == b->stack && a->kind == b->kind &&
         (a->type != HT_EV_ALLOC || (a->addr == b->addr && a->weight == b->weight));
}

/* Seal a journal into memory and compare the events read back with those
** the sealer was given (a damaged journal may read differently when read
** again: its reader's budgets are spent by the first pass). */
static void round_trip(HtReader *j)
{
  enum { MAXEV = 200000 };
  HtEvent *seen = malloc(MAXEV * sizeof(*seen));
  char *buf = NULL;
  size_t len = 0;
  FILE *f = seen ? open_memstream(&buf, &len) : NULL;
  if (!f) { free(seen); return; }
  HtSealW *w = ht_sealw_new(f, j);
  HtEvent ev;
  int n = 0;
  while (w && n < MAXEV && ht_reader_next(j, &ev) > 0) {
    ht_sealw_event(w, &ev, NULL);
    seen[n] = ev;
    seen[n].str = NULL;  /* strings point into the reader's buffers */
    seen[n].build_id = NULL;
    seen[n++].segs = NULL;
  }
  int rc = w ? ht_sealw_finish(w, j, 0, 0, 0, NULL, 0) : -1;
  fclose(f);
  char err[256];
  HtReader *s;
  if (!rc && n < MAXEV) {
    /* Opened as the journal was: its DICT packets are copied as they are. */
    if (ht_reader_open_mem_nocrc(&s, buf, len, err, sizeof(err))) abort();
    HtEvent b;
    for (int i = 0; i < n; i++)
      if (ht_reader_next(s, &b) <= 0 || !same(&seen[i], &b)) abort();
    if (ht_reader_next(s, &b) > 0) abort();
    if (ht_reader_stack_count(s) != ht_reader_stack_count(j)) abort();
    ht_reader_close(s);
  }
  free(buf);
  free(seen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  uint8_t *copy = malloc(size ? size : 1); /* exact size: overreads are caught */
  memcpy(copy, data, size);
  char err[256];
  HtReader *r;
  if (!ht_reader_open_mem_nocrc(&r, copy, size, err, sizeof(err))) {
    if (ht_reader_sealed(r)) {
      /* stats' count of symbolised addresses, read from the STACKS packets
      ** as they stand (the stack table not decoded yet), first */
      uint64_t addrs, missing;
      (void)ht_reader_symbol_cover(r, &addrs, &missing);
      HtModel m;
      if (!ht_model_init(&m, r, NULL)) {
        ht_agg_model(&m);
        /* The report's groups (stored ones when the tape has them) and
        ** the lines of a few. */
        HtCallers c;
        if (!ht_callers_init(&c, &m, HT_CALLERS_DEPTH)) {
          for (uint32_t i = 0; i < m.nsite; i++) {
            int64_t id = ht_callers_id(&c, i);
            if (id >= (int64_t)c.nid) abort();
            if (i < 64) free(ht_callers_text(&c, i));
          }
          ht_callers_free(&c);
        }
        ht_model_free(&m);
      }
      /* The page's snapshots (version 10: the SNAPS packets, loaded lazily). */
      HtSnaps sn;
      memset(&sn, 0, sizeof(sn));
      HtModelOpts mo = {.at_ns = UINT64_MAX};
      ht_snaps_setup(&sn, HT_SNAPS_BUCKETS, ht_reader_stats(r)->end_ns, &mo);
      sn.pick = HT_SNAPS_BUCKETS;
      if (!ht_model_init(&m, r, &mo)) {
        ht_agg_load_snaps(&m, &sn);  /* (no pass when it declines: bounded work) */
        ht_model_free(&m);
      }
      ht_snaps_free(&sn);
      /* The heap map's layout (version 11), its never-freed list walked. */
      HtLayout lay;
      if (ht_layout_load(r, &lay) == 1) {
        for (uint64_t i = 0; i < 4096; i++) (void)ht_layout_never(&lay, i);
        ht_layout_free(&lay);
      }
      ht_reader_rewind(r);
      walk(r);
    }
    else round_trip(r);
    ht_reader_close(r);
  }
  free(copy);
  return 0;
}

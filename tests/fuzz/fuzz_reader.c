/* heaptape -- fuzz target: the reader on raw bytes, checksums trusted so that
** mutations reach the decoder. Property: no crash, no leak, bounded work. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/reader.h"
#include "analyze/access.h"

static void on_res(void *ctx, const HtRes *res) { (void)ctx; (void)res; }
static void on_access(void *ctx, const HtAccess *a) { (void)a; ++*(uint64_t *)ctx; }

/* Walk every event and every stack of one reader. */
static void walk(HtReader *r)
{
  HtEvent ev;
  uint64_t fr[256];
  int n = 0;
  while (ht_reader_next(r, &ev) > 0 && n++ < 1000000) {
    if (ev.type == HT_EV_ALLOC) {
      size_t d = ht_reader_stack_frames(r, ev.stack, fr, 256);
      for (size_t i = 0; i < d; i++) {
        const HtSymbol *s;
        if (HT_FRAME_IS_LOC(fr[i])) (void)ht_reader_location(r, HT_FRAME_LOC(fr[i]));
        else (void)ht_reader_symbol(r, HT_FRAME_IP(fr[i]), &s);
        (void)ht_reader_module(r, HT_FRAME_IP(fr[i]), NULL);
      }
    }
  }
  ht_reader_rewind(r);
  while (ht_reader_next(r, &ev) > 0 && n++ < 2000000) {}
  /* ACCESS packets (version 4): alone, then among the resolved events. */
  HtAccessIter *it;
  if (!ht_access_open(&it, r)) {
    HtAccess a;
    while (ht_access_next(it, &a) && n++ < 4000000) {}
    ht_access_close(it);
  }
  ht_reader_rewind(r);
  HtResolve rs;
  uint64_t k = 0;
  ht_resolve_init(&rs);
  ht_access_run(&rs, r, on_res, on_access, &k);
  ht_resolve_free(&rs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  uint8_t *copy = malloc(size ? size : 1); /* exact size: overreads are caught */
  memcpy(copy, data, size);
  char err[256];
  HtReader *r;
  if (!ht_reader_open_mem_nocrc(&r, copy, size, err, sizeof(err))) {
    walk(r);
    ht_reader_close(r);
  }
  if (!ht_reader_open_mem(&r, copy, size, err, sizeof(err))) {
    walk(r);
    ht_reader_close(r);
  }
  free(copy);
  return 0;
}

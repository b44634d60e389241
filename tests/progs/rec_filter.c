/* heaptape tests -- the sampled-address filter a runtime reads inline
** (heaptape_rt_filter): dlopen libheaptape.so (argv[1]), record into
** argv[2]; prints "ok ..." or "FAIL ..." lines. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include "../../include/heaptape.h"

static int fails;

/* Writer callback: append to the FILE passed as arg. */
static size_t put(const void *d, size_t n, void *arg) { return fwrite(d, 1, n, arg); }
/* on_stop: close the FILE. */
static int done(void *arg) { return fclose(arg); }

/* Print one check. */
static void check(int good, const char *what)
{
  printf("%s %s\n", good ? "ok  " : "FAIL", what);
  fails += !good;
}

int main(int argc, char **argv)
{
  if (argc < 3) return 2;
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
#define SYM(name) __typeof__(name) *p_##name = (__typeof__(name) *)dlsym(h, #name)
  SYM(heaptape_start); SYM(heaptape_stop); SYM(heaptape_rt_filter);
  SYM(heaptape_rt_alloc); SYM(heaptape_rt_free); SYM(heaptape_rt_due);
  if (!p_heaptape_rt_filter) { printf("FAIL heaptape_rt_filter is exported\n"); return 1; }
  check(p_heaptape_rt_filter(HEAPTAPE_FILTER_LAYOUT) == NULL, "not recording: no filter");

  struct heaptape_options o = HEAPTAPE_OPTIONS_INIT;
  o.writer = put;
  o.on_stop = done;
  o.arg = fopen(argv[2], "wb");
  o.unwind = HEAPTAPE_UNWIND_NONE;
  p_heaptape_start(&o);                   /* every allocation recorded */
  check(p_heaptape_rt_filter(HEAPTAPE_FILTER_LAYOUT) == NULL,
        "every allocation recorded: no filter (report every free)");
  p_heaptape_stop();

  o.arg = fopen(argv[2], "wb");
  o.sample_bytes = 1;                     /* every allocation a sample point */
  p_heaptape_start(&o);
  const volatile unsigned char *f = p_heaptape_rt_filter(HEAPTAPE_FILTER_LAYOUT);
  check(f != NULL, "sampled: a filter");
  check(p_heaptape_rt_filter(HEAPTAPE_FILTER_LAYOUT + 1) == NULL, "another layout: no filter");
  static char blocks[64][16];
  int other = 1;                          /* a block in another filter byte than blocks[0] */
  while (other < 63 && HEAPTAPE_FILTER_INDEX(blocks[other]) == HEAPTAPE_FILTER_INDEX(blocks[0]))
    other++;
  heaptape_loc_t loc = 1;
  if (f) {
    check(!heaptape_rt_filter_maybe(f, blocks[0]), "a block never allocated: not in the filter");
    if (p_heaptape_rt_due(16)) p_heaptape_rt_alloc(&loc, 1, blocks[0], 16);
    check(heaptape_rt_filter_maybe(f, blocks[0]), "a sampled live block: maybe");
    check(!heaptape_rt_filter_maybe(f, blocks[other]), "another address: not in the filter");
    p_heaptape_rt_free(blocks[0]);
    check(!heaptape_rt_filter_maybe(f, blocks[0]), "freed: not in the filter");
  }
  p_heaptape_stop();
  check(p_heaptape_rt_filter(HEAPTAPE_FILTER_LAYOUT) == NULL, "stopped: no filter");
  return fails != 0;
}

/* heaptape -- `heaptape heapmap`: one PNG of the address space over time,
** blocks coloured by allocation site; --frames writes a frame sequence. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmds.h"
#include "../src/format/reader.h"
#include "../src/output/heapmap.h"

static const char heapmap_usage[] =
  "usage: heaptape heapmap [options] FILE\n"
  "  -o MAP.png        the address space (y) over operations (x)\n"
  "  --size WxH        its size in pixels (default 1024x768)\n"
  "  --frames DIR      also write DIR/frame_NNNNN.png: the live heap at N moments\n"
  "  --nframes N       how many frames (default 50)\n"
  "  --frame-size WxH  frame size (default 512x512)\n";

/* Parse "WxH" into w, h (1..16384); 0 or -1. */
static int heapmap_size(const char *s, unsigned *w, unsigned *h)
{
  char *e;
  unsigned long a = strtoul(s, &e, 10);
  if (*e != 'x' || !a || a > 16384) return -1;
  unsigned long b = strtoul(e + 1, &e, 10);
  if (*e || !b || b > 16384) return -1;
  *w = (unsigned)a;
  *h = (unsigned)b;
  return 0;
}

/* `heaptape heapmap`: parse its arguments and run it; returns the exit status. */
int cmd_heapmap(int argc, char **argv)
{
  const char *path = NULL, *png = NULL;
  HtHeapmapOpts o = {.w = 1024, .h = 768, .nframes = 50, .fw = 512, .fh = 512, .legend = stdout};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(heapmap_usage, stdout); return HT_EXIT_OK; }
    int val = !strcmp(a, "-o") || !strcmp(a, "--size") || !strcmp(a, "--frames") ||
              !strcmp(a, "--nframes") || !strcmp(a, "--frame-size");
    if (a[0] == '-' && a[1] && !val) { ht_cli_error("heapmap: unknown option '%s'", a); goto usage; }
    if (val && i + 1 >= argc) { ht_cli_error("heapmap: %s needs a value", a); goto usage; }
    if (!strcmp(a, "-o")) png = argv[++i];
    else if (!strcmp(a, "--frames")) o.frames = argv[++i];
    else if (!strcmp(a, "--size") || !strcmp(a, "--frame-size")) {
      int fs = a[2] == 'f';
      if (heapmap_size(argv[++i], fs ? &o.fw : &o.w, fs ? &o.fh : &o.h)) {
        ht_cli_error("heapmap: %s takes WxH (1-16384 each), not '%s'", a, argv[i]);
        goto usage;
      }
    } else if (!strcmp(a, "--nframes")) {
      char *e;
      unsigned long v = strtoul(argv[++i], &e, 10);
      if (*e || !v || v > 100000) {
        ht_cli_error("heapmap: --nframes takes 1 to 100000, not '%s'", argv[i]);
        goto usage;
      }
      o.nframes = (unsigned)v;
    } else if (path) { ht_cli_error("heapmap: one tape at a time; extra argument '%s'", a); goto usage; }
    else path = a;
  }
  if (!path) { ht_cli_error("heapmap: no tape given"); goto usage; }
  if (!png && !o.frames) { ht_cli_error("heapmap: nothing to write (-o MAP.png or --frames DIR)"); goto usage; }
  if (o.frames && mkdir(o.frames, 0777) && errno != EEXIST) {
    ht_cli_error("%s: cannot create (%s)", o.frames, strerror(errno));
    return HT_EXIT_FAIL;
  }
  HtReader *r;
  char err[512];
  if (ht_cli_open_tape(path, &r)) return HT_EXIT_FAIL;
  int rc = HT_EXIT_OK;
  HtResolve rs;
  ht_resolve_init(&rs);
  HtHeapmap *m = ht_heapmap_new(r, png, &o, err, sizeof(err));
  int bad = !m || ht_resolve_run(&rs, r, ht_heapmap_layout, NULL, m) || ht_heapmap_plan(m) ||
            ht_resolve_pass(&rs, r, ht_heapmap_draw, NULL, m) || ht_heapmap_finish(m, &rs);
  ht_heapmap_destroy(m);
  ht_resolve_free(&rs);
  if (bad) {
    if (strchr(err, ':')) ht_cli_error("%s", err);
    else ht_cli_error("%s: %s", path, err);
    rc = HT_EXIT_FAIL;
  } else {
    ht_cli_warn_damage(path, r);
  }
  ht_reader_close(r);
  if (fflush(stdout)) rc = HT_EXIT_FAIL;
  return rc;
usage:
  fputs(heapmap_usage, stderr);
  return HT_EXIT_USAGE;
}

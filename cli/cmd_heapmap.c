/* heaptape -- `heaptape heapmap`: one PNG of the address space over time,
** blocks coloured by allocation site; --frames writes a frame sequence,
** --animate the same frames as one animated PNG. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "cmds.h"
#include "../src/format/reader.h"
#include "../src/output/heapmap.h"

static const char heapmap_usage[] =
  "usage: heaptape heapmap [options] FILE\n"
  "  -o, --output MAP.png  the address space (y) over operations (x)\n"
  "  --size WxH        its size in pixels (default 1024x768)\n"
  "  --frames DIR      also write DIR/frame_NNNNN.png: the live heap at N moments\n"
  "  --animate ANIM.png  the frames as one animated PNG (APNG; browsers play it)\n"
  "  --fps N           frames per second of the animation (1-100, default 10)\n"
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
  enum { O_OUT = 1, O_SIZE, O_FRAMES, O_NFRAMES, O_FRAME_SIZE, O_ANIMATE, O_FPS };
  static const HtOpt opts[] = {
    {"--output", 'o', 1, O_OUT}, {"--size", 0, 1, O_SIZE}, {"--frames", 0, 1, O_FRAMES},
    {"--nframes", 0, 1, O_NFRAMES}, {"--frame-size", 0, 1, O_FRAME_SIZE},
    {"--animate", 0, 1, O_ANIMATE}, {"--fps", 0, 1, O_FPS}, {NULL, 0, 0, 0}
  };
  HtArgs a;
  uint64_t v;
  ht_args_init(&a, argc, argv, "heapmap", heapmap_usage, opts);
  for (int k; (k = ht_args_next(&a)) != HT_ARG_END;) {
    switch (k) {
    case HT_ARG_HELP: return HT_EXIT_OK;
    case HT_ARG_BAD: return HT_EXIT_USAGE;
    case O_OUT: png = a.val; break;
    case O_FRAMES: o.frames = a.val; break;
    case O_ANIMATE: if (ht_args_output(&a, &o.animate)) return HT_EXIT_USAGE; break;
    case O_FPS:
      if (ht_args_uint(&a, 1, 100, &v)) return HT_EXIT_USAGE;
      o.frame_ms = (unsigned)(1000 / v);
      break;
    case O_SIZE: case O_FRAME_SIZE: {
      int fs = k == O_FRAME_SIZE;
      if (heapmap_size(a.val, fs ? &o.fw : &o.w, fs ? &o.fh : &o.h))
        return ht_args_bad(&a, "%s takes WxH (1-16384 each), not '%s'", a.opt, a.val);
      break;
    }
    case O_NFRAMES:
      if (ht_args_uint(&a, 1, 100000, &v)) return HT_EXIT_USAGE;
      o.nframes = (unsigned)v;
      break;
    case HT_ARG_OPERAND:
      if (path) return ht_args_extra(&a, "tape", a.val);
      path = a.val;
      break;
    }
  }
  if (!path) return ht_args_missing(&a, "tape");
  if (!png && !o.frames && !o.animate)
    return ht_args_bad(&a, "nothing to write (-o MAP.png, --frames DIR or --animate ANIM.png)");
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
  /* Frames show the blocks live at their moments: those need the table; the
  ** picture alone does not on a version 8 sealed tape. */
  if (!o.frames && !o.animate) ht_resolve_carried(&rs);
  HtHeapmap *m = ht_heapmap_new(r, png, &o, err, sizeof(err));
  /* A sealed tape of version 11 gives the layout: one pass, not two. */
  int pre = m ? ht_heapmap_preset(m, r) : -1;
  int bad = pre < 0 || (!pre && ht_resolve_run(&rs, r, ht_heapmap_layout, NULL, m)) ||
            ht_heapmap_plan(m) ||
            (pre ? ht_resolve_run(&rs, r, ht_heapmap_draw, NULL, m)
                 : ht_resolve_pass(&rs, r, ht_heapmap_draw, NULL, m)) ||
            ht_heapmap_finish(m, &rs);
  ht_heapmap_destroy(m);
  ht_resolve_free(&rs);
  if (bad) {
    if (strchr(err, ':')) ht_cli_error("%s", err);
    else ht_cli_error("%s: %s", path, err);
    rc = HT_EXIT_FAIL;
  } else {
    ht_cli_warn_damage(path, r);
    ht_cli_read_log(path, r);
  }
  ht_reader_close(r);
  if (fflush(stdout)) rc = HT_EXIT_FAIL;
  return rc;
}

/* heaptape -- `heaptape flamegraph`: an interactive SVG flame graph of one
** tape under a metric, or the collapsed stacks other flame-graph tools read. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "args.h"
#include "vizcli.h"
#include "../include/heaptape.h"
#include "../src/output/flame.h"
#include "../src/output/outfile.h"

static const char flame_usage[] =
  "usage: heaptape flamegraph [options] FILE -o flame.svg\n"
  "\n"
  "  -o, --output FILE       file to write (default flame.svg, with --folded the\n"
  "                          standard output; - for stdout)\n"
  "  --metric M              alloc (bytes allocated, default), inuse (live at\n"
  "                          --at, else at the end), peak (live at the peak),\n"
  "                          leaks (live at the end), temporary (count of\n"
  "                          temporary allocations)\n"
  "  --at SECONDS            the time of --metric inuse\n"
  "  --folded                collapsed stacks (\"a;b;c value\") instead of SVG\n"
  "  --title TEXT            title of the SVG\n"
  "  --wrapper NAME          treat functions matching NAME (a glob) as\n"
  "                          allocation wrappers; repeatable\n"
  "\n"
  "In the SVG: hover a frame for its figures, click to zoom, Search to\n"
  "highlight frames matching a regular expression.\n";

/* `heaptape flamegraph`: parse its arguments and run it; returns the exit status. */
int cmd_flamegraph(int argc, char **argv)
{
  const char *out = NULL, *path = NULL, *title = NULL;
  HtFlameMetric metric = HT_FM_ALLOC;
  uint64_t at_ns = UINT64_MAX;
  int folded = 0, rc = HT_EXIT_USAGE;
  const char **wrappers = calloc((size_t)argc, sizeof(char *));
  size_t nwrap = 0;
  if (!wrappers) { ht_cli_error("out of memory"); return HT_EXIT_FAIL; }
  enum { O_OUT = 1, O_METRIC, O_AT, O_TITLE, O_WRAPPER, O_FOLDED };
  static const HtOpt opts[] = {
    {"--output", 'o', 1, O_OUT}, {"--metric", 0, 1, O_METRIC}, {"--at", 0, 1, O_AT},
    {"--title", 0, 1, O_TITLE}, {"--wrapper", 0, 1, O_WRAPPER}, {"--folded", 0, 0, O_FOLDED},
    {NULL, 0, 0, 0}
  };
  HtArgs a;
  ht_args_init(&a, argc, argv, "flamegraph", flame_usage, opts);
  for (int k, bad = 0; !bad && (k = ht_args_next(&a)) != HT_ARG_END;) {
    switch (k) {
    case HT_ARG_HELP: rc = HT_EXIT_OK; goto done;
    case HT_ARG_BAD: goto done;
    case O_OUT: if (ht_args_output(&a, &out)) goto done; break;
    case O_METRIC: {
      int m = 0;
      while (m < HT_FM_COUNT && strcmp(a.val, ht_flame_metric_name((HtFlameMetric)m))) m++;
      if (m == HT_FM_COUNT) {
        ht_args_bad(&a, "%s takes alloc, inuse, peak, leaks or temporary, not '%s'", a.opt, a.val);
        goto done;
      }
      metric = (HtFlameMetric)m;
      break;
    }
    case O_AT: if (ht_args_seconds(&a, &at_ns)) goto done; break;
    case O_TITLE: title = a.val; break;
    case O_WRAPPER: wrappers[nwrap++] = a.val; break;
    case O_FOLDED: folded = 1; break;
    case HT_ARG_OPERAND:
      if (path) { ht_args_extra(&a, "tape", a.val); goto done; }
      path = a.val;
      break;
    }
  }
  if (!path) { ht_args_missing(&a, "tape"); goto done; }
  if (!out) out = folded ? "-" : "flame.svg";  /* (folded text is for a pipe, not an .svg) */
  rc = HT_EXIT_FAIL;
  HtReader *r;
  if (ht_cli_open_tape(path, &r)) goto done;
  HtModelOpts mo = {.wrappers = wrappers, .nwrappers = nwrap, .at_ns = at_ns};
  HtModel m;
  if (ht_model_init(&m, r, &mo)) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    ht_reader_close(r);
    goto done;
  }
  HtFlame fl;
  int ok = !ht_vizcli_pass(path, &m);
  ht_cli_warn_damage(path, r);
  ht_reader_agg_release(r);  /* loaded: its room is the tree's */
  if (ok && !m.by_type[HT_EV_ALLOC]) ht_cli_error("warning: %s: no allocations on the tape", path);
  if (ok && ht_flame_build(&fl, &m)) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    ok = 0;
  }
  if (ok) {
    uint64_t total = ht_flame_values(&fl, &m, metric);
    HtOutFile of;
    int to_stdout = !strcmp(out, "-");
    FILE *f = to_stdout ? stdout : ht_outfile_open(&of, out, "w");
    if (!f) {
      ht_cli_error("%s: cannot write: %s", out, strerror(errno));
      ok = 0;
    } else {
      if (folded) ht_flame_folded(f, &fl, &m, metric);
      else {
        char t[1024];
        if (!title) {
          const HtHeader *h = ht_reader_header(r);
          const char *exe = h->exe && h->exe[0] ? h->exe : path;
          const char *base = strrchr(exe, '/');
          snprintf(t, sizeof(t), "heaptape: %s of %s", ht_flame_metric_name(metric),
                   base ? base + 1 : exe);
          title = t;
        }
        ht_flame_svg(f, &fl, title, metric);
      }
      int bad = to_stdout ? fflush(f) != 0 || ferror(f) : ht_outfile_close(&of, out, 0);
      if (bad) {
        ht_cli_error("%s: cannot write: %s", out, strerror(errno));
        ok = 0;
      } else if (!to_stdout) {
        fprintf(stderr, "%s: %s, total %" PRIu64 " %s\n", out, ht_flame_metric_name(metric),
                total, ht_flame_metric_unit(metric));
      }
    }
    ht_flame_free(&fl);
  }
  ht_model_free(&m);
  ht_reader_close(r);
  rc = ok ? HT_EXIT_OK : HT_EXIT_FAIL;
done:
  free(wrappers);
  return rc;
}

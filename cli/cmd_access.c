/* heaptape -- `heaptape access`: per allocation site what the program did
** with its blocks, from a tape of `heaptape record --access` (docs/ACCESS.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cmds.h"
#include "../include/heaptape.h"
#include "../src/format/reader.h"
#include "../src/analyze/accrep.h"
#include "../src/output/accrep.h"

#define ACCESS_TOP 5  /* sites with access counts per offset, by default */

static const char access_usage[] =
  "usage: heaptape access [--json] [--top N] [-o, --output OUT] FILE\n"
  "  per allocation site of a tape of `heaptape record --access`, by accesses:\n"
  "  blocks, reads, writes (a modify counts as both), bytes read and written,\n"
  "  accesses per byte per second of lifetime; and the findings, in blocks:\n"
  "    never accessed; written, never read; read-only after initialisation\n"
  "    (no write after the first read); only a prefix touched (the highest\n"
  "    byte touched below the middle); allocated too early / freed too late\n"
  "    (idle at least half of the lifetime before the first / after the last\n"
  "    access)\n"
  "  then, for the top N sites (default 5), the accesses of each byte offset\n"
  "  of their blocks (offsets 0-1023)\n"
  "  --json  the same as one JSON object\n";

/* `heaptape access`: parse its arguments and run it; returns the exit status. */
int cmd_access(int argc, char **argv)
{
  enum { O_OUT = 1, O_JSON, O_TOP };
  static const HtOpt opts[] = {{"--output", 'o', 1, O_OUT}, {"--json", 0, 0, O_JSON},
                               {"--top", 0, 1, O_TOP}, {NULL, 0, 0, 0}};
  const char *path = NULL, *out = NULL;
  int json = 0, k;
  uint64_t top = ACCESS_TOP;
  HtArgs a;
  ht_args_init(&a, argc, argv, "access", access_usage, opts);
  while ((k = ht_args_next(&a)) != HT_ARG_END) {
    if (k == HT_ARG_HELP) return HT_EXIT_OK;
    if (k == HT_ARG_BAD) return HT_EXIT_USAGE;
    if (k == O_OUT) { if (ht_args_output(&a, &out)) return HT_EXIT_USAGE; }
    else if (k == O_JSON) json = 1;
    else if (k == O_TOP) { if (ht_args_uint(&a, 0, 1000, &top)) return HT_EXIT_USAGE; }
    else if (path) return ht_args_extra(&a, "tape", a.val);
    else path = a.val;
  }
  if (!path) return ht_args_missing(&a, "tape");
  HtReader *r;
  if (ht_cli_open_tape(path, &r)) return HT_EXIT_FAIL;
  HtAccessInfo ai;
  if (ht_cli_access_info(path, r, &ai, 1)) return HT_EXIT_FAIL;
  if (ht_reader_header(r)->sample)
    ht_cli_error("warning: %s: sampled tape; the report holds the sampled blocks only", path);
  if (ai.sample > 1)
    ht_cli_error("warning: %s: accesses sampled 1 in %" PRIu64 "; counts are of the sample",
                 path, ai.sample);
  HtAccRep rep;
  if (ht_accrep_init(&rep) || ht_accrep_run(&rep, r, (size_t)top)) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    ht_accrep_free(&rep);
    ht_reader_close(r);
    return HT_EXIT_FAIL;
  }
  int rc = HT_EXIT_OK;
  FILE *f = out ? fopen(out, "w") : stdout;
  if (!f) {
    ht_cli_error("%s: cannot create (%s)", out, strerror(errno));
    rc = HT_EXIT_FAIL;
  } else {
    if (json) ht_accrep_json(f, &rep, &ai, path);
    else ht_accrep_text(f, &rep, &ai);
    if ((out ? fclose(f) : fflush(f)) != 0) {
      ht_cli_error("%s: write error", out ? out : "stdout");
      rc = HT_EXIT_FAIL;
    }
  }
  ht_cli_warn_damage(path, r);
  ht_accrep_free(&rep);
  ht_reader_close(r);
  return rc;
}

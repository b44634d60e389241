/* heaptape -- `heaptape ops`: the tape as a plain operations log, one line per
** New or Free of a block with a run-unique handle (docs/ALLOCATORS.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cmds.h"
#include "../include/heaptape.h"
#include "../src/format/reader.h"
#include "../src/analyze/access.h"
#include "../src/analyze/ops.h"

static const char ops_usage[] =
  "usage: heaptape ops [--access] [-o, --output OUT] FILE\n"
  "  one line per operation: SEQ TID N HANDLE SIZE [C|A<align>|R<old>]\n"
  "                          SEQ TID F HANDLE [R]\n"
  "  --access: and per access of a tape of record --access (before the op\n"
  "  numbered SEQ):          SEQ TID L|S|M HANDLE ADDRESS SIZE\n";

/* The log being written. */
typedef struct OpsLog { HtOps o; FILE *f; uint64_t accesses; } OpsLog;

/* One resolved event: its line, if it is an op. */
static void ops_line(void *ctx, const HtRes *res)
{
  OpsLog *l = ctx;
  HtOp op;
  if (ht_ops_res(&l->o, res, &op)) ht_ops_print(l->f, &op);
}

/* One access: its line. */
static void ops_access(void *ctx, const HtAccess *a)
{
  OpsLog *l = ctx;
  l->accesses++;
  fprintf(l->f, "%" PRIu64 " %" PRIu32 " %c %" PRIu64 " 0x%" PRIx64 " %" PRIu32 "\n",
          a->before, a->tid, a->kind, a->handle, a->addr, a->size);
}

/* `heaptape ops`: parse its arguments and run it; returns the exit status. */
int cmd_ops(int argc, char **argv)
{
  static const HtOpt opts[] = {{"--output", 'o', 1, 1}, {"--access", 0, 0, 2},
                               {NULL, 0, 0, 0}};
  int access = 0;
  const char *path = NULL, *out = NULL;
  int k;
  HtArgs a;
  ht_args_init(&a, argc, argv, "ops", ops_usage, opts);
  while ((k = ht_args_next(&a)) != HT_ARG_END) {
    if (k == HT_ARG_HELP) return HT_EXIT_OK;
    if (k == HT_ARG_BAD) return HT_EXIT_USAGE;
    if (k == 1) out = a.val;
    else if (k == 2) access = 1;
    else if (path) return ht_args_extra(&a, "tape", a.val);
    else path = a.val;
  }
  if (!path) return ht_args_missing(&a, "tape");
  HtReader *r;
  if (ht_cli_open_tape(path, &r)) return HT_EXIT_FAIL;
  HtAccessInfo ai;
  if (ht_cli_access_info(path, r, &ai, access)) return HT_EXIT_FAIL;
  FILE *f = out ? fopen(out, "w") : stdout;
  if (!f) {
    ht_cli_error("%s: cannot create (%s)", out, strerror(errno));
    ht_reader_close(r);
    return HT_EXIT_FAIL;
  }
  /* A line is ~25 bytes and a log hundreds of MB: stdio's 4 KiB buffer
  ** made a write call every 160 lines. */
  static char obuf[1 << 20];
  setvbuf(f, obuf, _IOFBF, sizeof(obuf));
  OpsLog l = {.f = f};
  HtOps *o = &l.o;
  if (ht_ops_init(o)) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    ht_reader_close(r);
    return HT_EXIT_FAIL;
  }
  if (ht_reader_header(r)->sample)
    ht_cli_error("warning: %s: sampled tape; the log holds the sampled blocks only", path);
  fprintf(f, "# heaptape ops 1: seq tid N handle size [C|A<align>|R<old>] | seq tid F handle [R]%s\n",
          access ? " | seq tid L|S|M handle address size" : "");
  if (access && ai.sample > 1)
    ht_cli_error("warning: %s: accesses sampled 1 in %" PRIu64, path, ai.sample);
  HtResolve rs;
  ht_resolve_init(&rs);
  /* The log needs sizes and handles only: on a sealed tape (frees name
  ** their block) a lean resolver, with no table at all from version 5. */
  if (!access && ht_reader_sealed(r)) ht_resolve_lean(&rs, 1);
  if (access ? ht_access_run(&rs, r, ops_line, ops_access, &l)
             : ht_resolve_run(&rs, r, ops_line, NULL, &l)) o->oom = 1;
  ht_resolve_free(&rs);
  fprintf(f, "# ops %" PRIu64 " handles %" PRIu64 " live %" PRIu64 " bytes %" PRIu64
          " peak %" PRIu64 " unknown-frees %" PRIu64, o->nops, o->next_handle - 1,
          o->live_n, o->live_bytes, o->peak, o->unknown_frees);
  if (access) fprintf(f, " accesses %" PRIu64, l.accesses);
  fputc('\n', f);
  ht_cli_warn_damage(path, r);
  int rc = HT_EXIT_OK;
  if (o->oom) { ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM)); rc = HT_EXIT_FAIL; }
  if ((out ? fclose(f) : fflush(f)) != 0) {
    ht_cli_error("%s: write error", out ? out : "stdout");
    rc = HT_EXIT_FAIL;
  }
  ht_ops_free(o);
  ht_reader_close(r);
  return rc;
}

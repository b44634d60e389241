/* heaptape -- `heaptape locks`: the operations log with the Lock and Unlock
** ops of Steve's coarse or fine locking model (docs/ALLOCATORS.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cmds.h"
#include "../include/heaptape.h"
#include "../src/format/reader.h"
#include "../src/analyze/locks.h"
#include "../src/output/lockops.h"
#include "../src/analyze/opsread.h"
#include "../src/analyze/access.h"

static const char locks_usage[] =
  "usage: heaptape locks [--model coarse|fine] [--global PCT] [-o, --output OUT] FILE\n"
  "  FILE is a tape or an operations log (`heaptape ops [--access]` output); the\n"
  "  accesses of a log (L, S, M lines) are operations of their blocks\n"
  "  the operations log (as `heaptape ops`) with lock and unlock lines:\n"
  "    SEQ TID K HANDLE    the block is locked (pinned) from here\n"
  "    SEQ TID U HANDLE    the block is unlocked (movable) from here\n"
  "  --model coarse  (default) blocks living at least --global PCT % of all ops\n"
  "                  (default 50) are locked from their New to their Free\n"
  "  --model fine    a life per block: +1 on its own ops (its New, its accesses),\n"
  "                  -0.5 on every other op, never below 0; locked while above 0\n"
  "  `heaptape replay --locks MODEL` replays a tape with the same locks.\n";

/* Where the ops go. */
static void locks_line(void *ctx, const HtOp *op)
{
  ht_lockops_print(ctx, op);
}

/* The model over an operations log; returns the exit status. */
static int locks_log(const char *path, const char *out, HtLockModel model, unsigned pct)
{
  char err[512];
  HtOpsRead rd;
  if (ht_opsread_open(&rd, path, err, sizeof(err))) { ht_cli_error("%s", err); return HT_EXIT_FAIL; }
  FILE *f = out ? fopen(out, "w") : stdout;
  if (!f) {
    ht_cli_error("%s: cannot create (%s)", out, strerror(errno));
    ht_opsread_close(&rd);
    return HT_EXIT_FAIL;
  }
  HtLocks l;
  int rc = HT_EXIT_OK;
  if (ht_locks_init(&l, model, pct)) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    rc = HT_EXIT_FAIL;
  } else {
    ht_lockops_head(f, &l, 0);
    if (ht_locks_run_log(&l, &rd, locks_line, f, err, sizeof(err))) {
      ht_cli_error("%s", err);
      rc = HT_EXIT_FAIL;
    }
    fprintf(f, "# ops %" PRIu64 " handles %" PRIu64 " live %" PRIu64 " peak %" PRIu64
            " locks %" PRIu64 " unlocks %" PRIu64 " locked %" PRIu64 "\n", rd.nops,
            rd.max_handle, rd.live.count, rd.peak, l.locks, l.unlocks, l.locked);
  }
  if ((out ? fclose(f) : fflush(f)) != 0) {
    ht_cli_error("%s: write error", out ? out : "stdout");
    rc = HT_EXIT_FAIL;
  }
  ht_locks_free(&l);
  ht_opsread_close(&rd);
  return rc;
}

/* `heaptape locks`: parse its arguments and run it; returns the exit status. */
int cmd_locks(int argc, char **argv)
{
  enum { O_OUT = 1, O_MODEL, O_GLOBAL };
  static const HtOpt opts[] = {{"--output", 'o', 1, O_OUT}, {"--model", 0, 1, O_MODEL},
                               {"--global", 0, 1, O_GLOBAL}, {NULL, 0, 0, 0}};
  const char *path = NULL, *out = NULL;
  HtLockModel model = HT_LOCKS_COARSE;
  uint64_t pct = HT_LOCKS_GLOBAL_PCT;
  int global_given = 0, k;
  HtArgs a;
  ht_args_init(&a, argc, argv, "locks", locks_usage, opts);
  while ((k = ht_args_next(&a)) != HT_ARG_END) {
    if (k == HT_ARG_HELP) return HT_EXIT_OK;
    if (k == HT_ARG_BAD) return HT_EXIT_USAGE;
    if (k == O_OUT) { if (ht_args_output(&a, &out)) return HT_EXIT_USAGE; }
    else if (k == O_MODEL) {
      if (ht_locks_model(a.val, &model))
        return ht_args_bad(&a, "--model takes coarse or fine, not '%s'", a.val);
    } else if (k == O_GLOBAL) {
      if (ht_args_uint(&a, 1, 100, &pct)) return HT_EXIT_USAGE;
      global_given = 1;
    } else if (path) return ht_args_extra(&a, "tape", a.val);
    else path = a.val;
  }
  if (!path) return ht_args_missing(&a, "tape");
  if (global_given && model != HT_LOCKS_COARSE)
    return ht_args_bad(&a, "--global is for --model coarse");
  if (ht_opsread_is(path)) return locks_log(path, out, model, (unsigned)pct);
  HtReader *r;
  if (ht_cli_open_tape(path, &r)) return HT_EXIT_FAIL;
  FILE *f = out ? fopen(out, "w") : stdout;
  if (!f) {
    ht_cli_error("%s: cannot create (%s)", out, strerror(errno));
    ht_reader_close(r);
    return HT_EXIT_FAIL;
  }
  HtLocks l;
  HtOps o;
  if (ht_locks_init(&l, model, (unsigned)pct) || ht_ops_init(&o)) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    ht_reader_close(r);
    return HT_EXIT_FAIL;
  }
  if (ht_reader_header(r)->sample)
    ht_cli_error("warning: %s: sampled tape; the log holds the sampled blocks only", path);
  HtAccessInfo ai;
  ht_access_info(r, &ai);
  if (ai.present && ai.sample > 1)
    ht_cli_error("warning: %s: accesses sampled 1 in %" PRIu64 "; the fine model sees the sample",
                 path, ai.sample);
  ht_lockops_head(f, &l, ai.present);
  int rc = HT_EXIT_OK;
  if (ht_locks_run(&l, r, &o, locks_line, f)) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    rc = HT_EXIT_FAIL;
  }
  ht_lockops_tail(f, &o, &l);
  ht_cli_warn_damage(path, r);
  if ((out ? fclose(f) : fflush(f)) != 0) {
    ht_cli_error("%s: write error", out ? out : "stdout");
    rc = HT_EXIT_FAIL;
  }
  ht_ops_free(&o);
  ht_locks_free(&l);
  ht_reader_close(r);
  return rc;
}

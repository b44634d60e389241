/* heaptape -- `heaptape replay`: replays a tape's operations against allocator
** drivers, one runner process each, and compares them (docs/ALLOCATORS.md). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cmds.h"
#include "../src/format/reader.h"
#include "../src/replay/replay.h"
#include "../src/analyze/locks.h"
#include "../src/analyze/opsread.h"
#include "../src/output/svgplot.h"

static const char replay_usage[] =
  "usage: heaptape replay [options] FILE\n"
  "  FILE is a tape, or an operations log (`heaptape ops` or `heaptape locks` output)\n"
  "  --allocator NAME[,NAME...]  built-in drivers: glibc, jemalloc, mimalloc, tcmalloc,\n"
  "                              all (the default when no --driver is given)\n"
  "  --driver PATH[:ARGS]        a driver .so (include/heaptape_driver.h); repeatable\n"
  "  --touch page|all|none       first touch of new blocks: one byte per page (default),\n"
  "                              every byte, or nothing\n"
  "  --interval N                operations between samples (default: ops / 1000)\n"
  "  --allocstats FILE.json      the results and the sampled series as JSON\n"
  "  --plot FILE.svg             the allocators side by side\n"
  "  --killpercent P             after the ops, free P% (0-100) of the live blocks at\n"
  "                              random and replay the ops again with new blocks\n"
  "  --rounds N                  kill-and-replay rounds with --killpercent (default 1)\n"
  "  --seed S                    seed of the random choice (default 1)\n"
  "  --locks coarse|fine         lock and unlock blocks as Steve's locking model says\n"
  "                              (see `heaptape locks`); only handle-based drivers\n"
  "                              (compact) use them, the others ignore them\n"
  "  --global PCT                --locks coarse: macro lifetime of a global block (50)\n"
  "  built-in handle-based driver: compact (a compacting allocator; not in 'all')\n";

#define MAX_DRIVERS 32
static const char *const builtin[] = {"glibc", "jemalloc", "mimalloc", "tcmalloc", "compact"};
#define NBUILTIN_ALL 4  /* 'all' and the default: the first four (compact is asked by name) */

/* Directory of the runner and drivers: next to the heaptape binary (the
** build tree), else ../lib/heaptape/ (where `make install` puts them). */
static void replay_bindir(char *buf, size_t len)
{
  if (ht_cli_selfdir(buf, len)) { snprintf(buf, len, "."); return; }
  char cand[PATH_MAX + 64];
  snprintf(cand, sizeof(cand), "%s/heaptape-replay", buf);
  if (!access(cand, X_OK)) return;
  snprintf(cand, sizeof(cand), "%s/../lib/heaptape", buf);
  size_t n2 = strlen(cand);
  if (n2 < len) memcpy(buf, cand, n2 + 1);
}

/* Open path for writing, or report why not. */
static FILE *replay_create(const char *path)
{
  FILE *f = fopen(path, "w");
  if (!f) ht_cli_error("%s: cannot create (%s)", path, strerror(errno));
  return f;
}

/* Bytes of memory the kernel says are available (MemAvailable), or 0 when
** it does not say. */
static uint64_t replay_mem_available(void)
{
  FILE *f = fopen("/proc/meminfo", "r");
  char line[256];
  uint64_t kb = 0;
  while (f && fgets(line, sizeof(line), f))
    if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kb) == 1) break;
  if (f) fclose(f);
  return kb * 1024;
}

/* A replay that touches its blocks holds the tape's live peak resident: one
** past the memory available would have the kernel kill processes (this one
** or others) rather than fail. 0 when it fits; else the line saying why not. */
static int replay_fits(const char *path, const HtReplayPrep *p, const char *touch)
{
  uint64_t avail = replay_mem_available();
  if (!strcmp(touch, "none") || !avail || p->peak <= avail) return 0;
  char need[32], have[32];
  ht_svg_fmt(need, sizeof(need), (double)p->peak, HT_SVG_BYTES);
  ht_svg_fmt(have, sizeof(have), (double)avail, HT_SVG_BYTES);
  ht_cli_error("replay: %s: its heap peaks at %s live, more than the %s of memory available "
               "(--touch none replays without touching the blocks)", path, need, have);
  return -1;
}

/* `heaptape replay`: parse its arguments and run it; returns the exit status. */
int cmd_replay(int argc, char **argv)
{
  const char *path = NULL, *touch = "page", *json = NULL, *plot = NULL;
  char *drv[MAX_DRIVERS];
  size_t nd = 0;
  uint64_t interval = 0;
  char bindir[PATH_MAX];
  replay_bindir(bindir, sizeof(bindir));
  int rc = HT_EXIT_OK;
  HtReplayKill killv = {.rounds = 1, .seed = HT_REPLAY_KILL_SEED}, *kill = NULL;
  int rounds_given = 0, seed_given = 0, global_given = 0, use_locks = 0;
  HtLockModel model = HT_LOCKS_COARSE;
  uint64_t global_pct = HT_LOCKS_GLOBAL_PCT;
  enum { O_ALLOC = 1, O_DRIVER, O_TOUCH, O_INTERVAL, O_STATS, O_PLOT, O_KILL, O_ROUNDS, O_SEED,
         O_LOCKS, O_GLOBAL };
  static const HtOpt opts[] = {
    {"--allocator", 0, 1, O_ALLOC}, {"--driver", 0, 1, O_DRIVER}, {"--touch", 0, 1, O_TOUCH},
    {"--interval", 0, 1, O_INTERVAL}, {"--allocstats", 0, 1, O_STATS}, {"--plot", 0, 1, O_PLOT},
    {"--killpercent", 0, 1, O_KILL}, {"--rounds", 0, 1, O_ROUNDS}, {"--seed", 0, 1, O_SEED},
    {"--locks", 0, 1, O_LOCKS}, {"--global", 0, 1, O_GLOBAL}, {NULL, 0, 0, 0}
  };
  HtArgs a;
  ht_args_init(&a, argc, argv, "replay", replay_usage, opts);
  for (int o; (o = ht_args_next(&a)) != HT_ARG_END;) {
    switch (o) {
    case HT_ARG_HELP: goto out;
    case HT_ARG_BAD: rc = HT_EXIT_USAGE; goto out;
    case O_ALLOC: {
      char list[1024];
      snprintf(list, sizeof(list), "%s", a.val);
      for (char *sv, *t = strtok_r(list, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
        size_t k, nb = HT_COUNTOF(builtin);
        int all = !strcmp(t, "all");
        for (k = 0; k < nb && !all && strcmp(t, builtin[k]); k++) {}
        if (!all && k == nb) {
          rc = ht_args_bad(&a, "unknown allocator '%s' (glibc, jemalloc, mimalloc, tcmalloc, compact, all)", t);
          goto out;
        }
        for (size_t j = all ? 0 : k; j < (all ? NBUILTIN_ALL : k + 1) && nd < MAX_DRIVERS; j++) {
          char p[PATH_MAX + 64];
          snprintf(p, sizeof(p), "%s/driver_%s.so", bindir, builtin[j]);
          drv[nd++] = strdup(p);
        }
      }
      break;
    }
    case O_DRIVER: if (nd < MAX_DRIVERS) drv[nd++] = strdup(a.val); break;
    case O_TOUCH:
      touch = a.val;
      if (strcmp(touch, "page") && strcmp(touch, "all") && strcmp(touch, "none")) {
        rc = ht_args_bad(&a, "--touch takes page, all or none, not '%s'", touch);
        goto out;
      }
      break;
    case O_INTERVAL:
      if (ht_args_uint(&a, 1, UINT64_MAX, &interval)) { rc = HT_EXIT_USAGE; goto out; }
      break;
    case O_STATS: json = a.val; break;
    case O_PLOT: plot = a.val; break;
    case O_KILL: {
      uint64_t v;
      if (ht_args_uint(&a, 0, 100, &v)) { rc = HT_EXIT_USAGE; goto out; }
      killv.pct = (unsigned)v;
      kill = &killv;
      break;
    }
    case O_ROUNDS:
      if (ht_args_uint(&a, 1, 1000000, &killv.rounds)) { rc = HT_EXIT_USAGE; goto out; }
      rounds_given = 1;
      break;
    case O_SEED:
      if (ht_args_uint(&a, 0, UINT64_MAX, &killv.seed)) { rc = HT_EXIT_USAGE; goto out; }
      seed_given = 1;
      break;
    case O_LOCKS:
      if (ht_locks_model(a.val, &model)) {
        rc = ht_args_bad(&a, "--locks takes coarse or fine, not '%s'", a.val);
        goto out;
      }
      use_locks = 1;
      break;
    case O_GLOBAL:
      if (ht_args_uint(&a, 1, 100, &global_pct)) { rc = HT_EXIT_USAGE; goto out; }
      global_given = 1;
      break;
    case HT_ARG_OPERAND:
      if (path) { rc = ht_args_extra(&a, "tape", a.val); goto out; }
      path = a.val;
      break;
    }
  }
  if (!path) { rc = ht_args_missing(&a, "tape"); goto out; }
  if (!kill && (rounds_given || seed_given)) {
    rc = ht_args_bad(&a, "%s needs --killpercent", rounds_given ? "--rounds" : "--seed");
    goto out;
  }
  if (global_given && !(use_locks && model == HT_LOCKS_COARSE)) {
    rc = ht_args_bad(&a, "--global needs --locks coarse");
    goto out;
  }
  if (!nd)
    for (size_t j = 0; j < HT_COUNTOF(builtin); j++) {
      char p[PATH_MAX + 64];
      snprintf(p, sizeof(p), "%s/driver_%s.so", bindir, builtin[j]);
      drv[nd++] = strdup(p);
    }

  HtReader *r = NULL;
  char err[512];
  int opslog = ht_opsread_is(path);  /* `heaptape ops` / `heaptape locks` output */
  if (!opslog && ht_cli_open_tape(path, &r)) {
    rc = HT_EXIT_FAIL;
    goto out;
  }
  if (r && ht_reader_header(r)->sample)
    ht_cli_error("warning: %s: sampled tape; only the sampled blocks are replayed", path);
  const char *tdir = getenv("TMPDIR");
  char tmp[PATH_MAX], opfile[PATH_MAX + 16], runner[PATH_MAX + 32];
  snprintf(tmp, sizeof(tmp), "%s/heaptape-replay.XXXXXX", tdir && *tdir ? tdir : "/tmp");
  if (!mkdtemp(tmp)) {
    ht_cli_error("%s: cannot create a temporary directory (%s)", tmp, strerror(errno));
    if (r) ht_reader_close(r);
    rc = HT_EXIT_FAIL;
    goto out;
  }
  snprintf(opfile, sizeof(opfile), "%s/ops", tmp);
  snprintf(runner, sizeof(runner), "%s/heaptape-replay", bindir);
  HtReplayPrep prep;
  HtLocks locks;
  int bad = use_locks && ht_locks_init(&locks, model, (unsigned)global_pct);
  if (bad) snprintf(err, sizeof(err), "out of memory");
  else bad = ht_replay_prepare(r, opslog ? path : NULL, use_locks ? &locks : NULL, opfile,
                               &prep, err, sizeof(err));
  if (use_locks) ht_locks_free(&locks);
  if (!bad && r) ht_cli_warn_damage(path, r);
  if (r) ht_reader_close(r);
  if (bad) {
    if (opslog) ht_cli_error("%s", err);
    else ht_cli_error("%s: %s", path, err);
    unlink(opfile);
    rmdir(tmp);
    rc = HT_EXIT_FAIL;
    goto out;
  }
  if (replay_fits(path, &prep, touch)) { rc = HT_EXIT_FAIL; goto clean; }
  if (!interval) {  /* about 1000 samples over all passes */
    uint64_t total = prep.nops * (kill ? kill->rounds + 1 : 1);
    interval = total / 1000 ? total / 1000 : 1;
  }
  HtReplayResult *res = calloc(nd, sizeof(*res));
  if (!res) { ht_cli_error("%s: out of memory", path); rc = HT_EXIT_FAIL; goto clean; }
  for (size_t i = 0; i < nd; i++) {
    if (isatty(2)) fprintf(stderr, "\rheaptape: replaying %zu/%zu ...", i + 1, nd);
    if (ht_replay_run(runner, opfile, drv[i], touch, interval, kill, tmp, &res[i])) rc = HT_EXIT_FAIL;
  }
  if (isatty(2)) fputs("\r\033[K", stderr);
  ht_replay_text(stdout, path, &prep, kill, res, nd);
  for (size_t i = 0; i < nd; i++)
    if (res[i].problem[0]) ht_cli_error("%s: %s: %s", path, drv[i], res[i].problem);
  FILE *f;
  if (json) {
    if ((f = replay_create(json))) {
      ht_replay_json(f, path, &prep, kill, res, nd);
      if (fclose(f)) { ht_cli_error("%s: write error", json); rc = HT_EXIT_FAIL; }
    } else rc = HT_EXIT_FAIL;
  }
  if (plot) {
    if ((f = replay_create(plot))) {
      ht_replay_svg(f, path, &prep, res, nd);
      if (fclose(f)) { ht_cli_error("%s: write error", plot); rc = HT_EXIT_FAIL; }
    } else rc = HT_EXIT_FAIL;
  }
  for (size_t i = 0; i < nd; i++) ht_replay_result_free(&res[i]);
  free(res);
clean:
  unlink(opfile);
  rmdir(tmp);
  goto out;
out:
  for (size_t i = 0; i < nd; i++) free(drv[i]);
  if (fflush(stdout)) rc = HT_EXIT_FAIL;
  return rc;
}

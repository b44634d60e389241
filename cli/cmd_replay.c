/* heaptape -- `heaptape replay`: replays a tape's operations against allocator
** drivers, one runner process each, and compares them (docs/ALLOCATORS.md). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "../src/format/reader.h"
#include "../src/replay/replay.h"

static const char replay_usage[] =
  "usage: heaptape replay [options] FILE\n"
  "  --allocator NAME[,NAME...]  built-in drivers: glibc, jemalloc, mimalloc, tcmalloc,\n"
  "                              all (the default when no --driver is given)\n"
  "  --driver PATH[:ARGS]        a driver .so (include/heaptape_driver.h); repeatable\n"
  "  --touch page|all|none       first touch of new blocks: one byte per page (default),\n"
  "                              every byte, or nothing\n"
  "  --interval N                operations between samples (default: ops / 1000)\n"
  "  --allocstats FILE.json      the results and the sampled series as JSON\n"
  "  --plot FILE.svg             the allocators side by side\n";

#define MAX_DRIVERS 32
static const char *const builtin[] = {"glibc", "jemalloc", "mimalloc", "tcmalloc"};

/* Directory of the runner and drivers: next to the heaptape binary (the
** build tree), else ../lib/heaptape/ (where `make install` puts them). */
static void replay_bindir(char *buf, size_t len)
{
  ssize_t n = readlink("/proc/self/exe", buf, len - 1);
  if (n <= 0) { snprintf(buf, len, "."); return; }
  buf[n] = 0;
  char *s = strrchr(buf, '/');
  if (s) *s = 0;
  char cand[PATH_MAX + 64];
  snprintf(cand, sizeof(cand), "%s/heaptape-replay", buf);
  if (!access(cand, X_OK)) return;
  snprintf(cand, sizeof(cand), "%s/../lib/heaptape", buf);
  if ((size_t)snprintf(NULL, 0, "%s", cand) < len) snprintf(buf, len, "%s", cand);
}

/* Open path for writing, or report why not. */
static FILE *replay_create(const char *path)
{
  FILE *f = fopen(path, "w");
  if (!f) ht_cli_error("%s: cannot create (%s)", path, strerror(errno));
  return f;
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
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(replay_usage, stdout); goto out; }
    if (a[0] == '-' && a[1] && i + 1 >= argc) {
      ht_cli_error("replay: %s needs a value", a);
      rc = HT_EXIT_USAGE;
      goto usage;
    }
    if (!strcmp(a, "--allocator")) {
      char list[1024];
      snprintf(list, sizeof(list), "%s", argv[++i]);
      for (char *sv, *t = strtok_r(list, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
        size_t k, nb = HT_COUNTOF(builtin);
        int all = !strcmp(t, "all");
        for (k = 0; k < nb && !all && strcmp(t, builtin[k]); k++) {}
        if (!all && k == nb) {
          ht_cli_error("replay: unknown allocator '%s' (glibc, jemalloc, mimalloc, tcmalloc, all)", t);
          rc = HT_EXIT_USAGE;
          goto usage;
        }
        for (size_t j = all ? 0 : k; j < (all ? nb : k + 1) && nd < MAX_DRIVERS; j++) {
          char p[PATH_MAX + 64];
          snprintf(p, sizeof(p), "%s/driver_%s.so", bindir, builtin[j]);
          drv[nd++] = strdup(p);
        }
      }
    } else if (!strcmp(a, "--driver")) {
      if (nd < MAX_DRIVERS) drv[nd++] = strdup(argv[++i]);
    } else if (!strcmp(a, "--touch")) {
      touch = argv[++i];
      if (strcmp(touch, "page") && strcmp(touch, "all") && strcmp(touch, "none")) {
        ht_cli_error("replay: --touch takes page, all or none, not '%s'", touch);
        rc = HT_EXIT_USAGE;
        goto usage;
      }
    } else if (!strcmp(a, "--interval")) {
      char *e;
      interval = strtoull(argv[++i], &e, 10);
      if (*e || !interval) {
        ht_cli_error("replay: --interval takes a positive number, not '%s'", argv[i]);
        rc = HT_EXIT_USAGE;
        goto usage;
      }
    } else if (!strcmp(a, "--allocstats")) json = argv[++i];
    else if (!strcmp(a, "--plot")) plot = argv[++i];
    else if ((a[0] == '-' && a[1]) || path) {
      ht_cli_error(path ? "replay: one tape at a time; extra argument '%s'"
                        : "replay: unknown option '%s'", a);
      rc = HT_EXIT_USAGE;
      goto usage;
    } else path = a;
  }
  if (!path) {
    ht_cli_error("replay: no tape given");
    rc = HT_EXIT_USAGE;
    goto usage;
  }
  if (!nd)
    for (size_t j = 0; j < HT_COUNTOF(builtin); j++) {
      char p[PATH_MAX + 64];
      snprintf(p, sizeof(p), "%s/driver_%s.so", bindir, builtin[j]);
      drv[nd++] = strdup(p);
    }

  HtReader *r;
  char err[512];
  if (ht_cli_open_tape(path, &r)) {
    rc = HT_EXIT_FAIL;
    goto out;
  }
  if (ht_reader_header(r)->sample)
    ht_cli_error("warning: %s: sampled tape; only the sampled blocks are replayed", path);
  const char *tdir = getenv("TMPDIR");
  char tmp[PATH_MAX], opfile[PATH_MAX + 16], runner[PATH_MAX + 32];
  snprintf(tmp, sizeof(tmp), "%s/heaptape-replay.XXXXXX", tdir && *tdir ? tdir : "/tmp");
  if (!mkdtemp(tmp)) {
    ht_cli_error("%s: cannot create a temporary directory (%s)", tmp, strerror(errno));
    ht_reader_close(r);
    rc = HT_EXIT_FAIL;
    goto out;
  }
  snprintf(opfile, sizeof(opfile), "%s/ops", tmp);
  snprintf(runner, sizeof(runner), "%s/heaptape-replay", bindir);
  HtReplayPrep prep;
  int bad = ht_replay_prepare(r, opfile, &prep, err, sizeof(err));
  if (!bad) ht_cli_warn_damage(path, r);
  ht_reader_close(r);
  if (bad) {
    ht_cli_error("%s: %s", path, err);
    unlink(opfile);
    rmdir(tmp);
    rc = HT_EXIT_FAIL;
    goto out;
  }
  if (!interval) interval = prep.nops / 1000 ? prep.nops / 1000 : 1;
  HtReplayResult *res = calloc(nd, sizeof(*res));
  if (!res) { ht_cli_error("%s: out of memory", path); rc = HT_EXIT_FAIL; goto clean; }
  for (size_t i = 0; i < nd; i++) {
    if (isatty(2)) fprintf(stderr, "\rheaptape: replaying %zu/%zu ...", i + 1, nd);
    if (ht_replay_run(runner, opfile, drv[i], touch, interval, tmp, &res[i])) rc = HT_EXIT_FAIL;
  }
  if (isatty(2)) fputs("\r\033[K", stderr);
  ht_replay_text(stdout, path, &prep, res, nd);
  for (size_t i = 0; i < nd; i++)
    if (res[i].problem[0]) ht_cli_error("%s: %s: %s", path, drv[i], res[i].problem);
  FILE *f;
  if (json) {
    if ((f = replay_create(json))) {
      ht_replay_json(f, path, &prep, res, nd);
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
usage:
  fputs(replay_usage, stderr);
out:
  for (size_t i = 0; i < nd; i++) free(drv[i]);
  if (fflush(stdout)) rc = HT_EXIT_FAIL;
  return rc;
}

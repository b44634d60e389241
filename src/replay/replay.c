/* heaptape -- the replay engine: writes the operations file, runs one
** heaptape-replay process per driver and reads back its results. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay.h"
#include "opfile.h"
#include "../base/grow.h"
#include "../analyze/ops.h"
#include "../analyze/locks.h"
#include "../analyze/opsread.h"
#include "../output/svgplot.h"

/* -- The operations file -------------------------------------------------- */

/* Clear the realloc flag of record idx: its New never came. */
static int replay_unpend(FILE *f, uint64_t idx)
{
  uint8_t flags = 0;
  off_t off = (off_t)(sizeof(HtOpFileHead) + idx * sizeof(HtOpRec) +
                      offsetof(HtOpRec, flags));
  if (fflush(f)) return -1;
  return pwrite(fileno(f), &flags, 1, off) == 1 ? 0 : -1;
}

/* State of writing the operations file. */
typedef struct Prep {
  FILE *f;                   /* the file */
  HtOps o;                   /* operations stream */
  HtMap pend;                /* tid -> record index + 1 of a realloc Free awaiting its New */
  uint64_t nrecs;            /* records written */
  int bad;                   /* a write failed */
} Prep;

/* One op of the stream (or a Lock/Unlock of the model): its record. */
static void replay_emit(void *ctx, const HtOp *op)
{
  Prep *P = ctx;
  if (P->bad || !strchr("NFKU", op->op)) return;  /* accesses are not replayed */
  if (op->op == HT_OP_NEW || op->op == HT_OP_FREE) {
    uint64_t *pv = ht_map_get(&P->pend, op->tid);
    if (pv && *pv) {
      if (!(op->op == HT_OP_NEW && (op->flags & HT_OPF_REALLOC))) P->bad |= replay_unpend(P->f, *pv - 1);
      *pv = 0;
    }
    if (op->op == HT_OP_FREE && (op->flags & HT_OPF_REALLOC) &&
        ht_map_put(&P->pend, op->tid, P->nrecs + 1)) P->bad = 1;
  }
  HtOpRec rec = {.op = op->op, .flags = op->flags, .tid = op->tid, .handle = op->handle,
                 .size = op->size,
                 .aux = (op->flags & HT_OPF_ALIGN) ? op->align : op->old};
  P->bad |= fwrite(&rec, sizeof(rec), 1, P->f) != 1;
  P->nrecs++;
}

/* One resolved event: its record, if it is an op. */
static void replay_op(void *ctx, const HtRes *res)
{
  Prep *P = ctx;
  HtOp op;
  if (!P->bad && ht_ops_res(&P->o, res, &op)) replay_emit(P, &op);
}

/* The records of an operations log (text): its own K and U, or the model's. */
static int replay_text(Prep *P, HtOpsRead *rd, HtLocks *locks, char *err, size_t errlen)
{
  if (locks) return ht_locks_run_log(locks, rd, replay_emit, P, err, errlen);  /* the file's K/U give way */
  HtOp op;
  int rc = 0;  /* (nothing read when P is bad already) */
  while (!P->bad && (rc = ht_opsread_next(rd, &op, err, errlen)) > 0) replay_emit(P, &op);
  return rc < 0 ? -1 : 0;
}

/* Write the operations file of a tape or of an operations log. */
int ht_replay_prepare(HtReader *r, const char *opslog, HtLocks *locks, const char *opfile,
                      HtReplayPrep *p, char *err, size_t errlen)
{
  HtOpsRead rd = {0};
  if (opslog && ht_opsread_open(&rd, opslog, err, errlen)) return -1;
  Prep P = {.f = fopen(opfile, "w+")};
  FILE *f = P.f;
  if (!f) {
    snprintf(err, errlen, "%s: %s", opfile, strerror(errno));
    if (opslog) ht_opsread_close(&rd);
    return -1;
  }
  HtOps *o = &P.o;
  if (ht_ops_init(o)) { fclose(f); snprintf(err, errlen, "out of memory"); return -1; }
  if (ht_map_init(&P.pend, 16)) {
    ht_ops_free(o); fclose(f); snprintf(err, errlen, "out of memory"); return -1;
  }
  HtOpFileHead h = {.magic = HT_OPFILE_MAGIC};
  P.bad = fwrite(&h, sizeof(h), 1, f) != 1;
  int text_bad = 0;
  if (!P.bad && opslog) {
    text_bad = replay_text(&P, &rd, locks, err, errlen);
    o->nops = rd.nops;
    o->next_handle = rd.max_handle + 1;
    o->peak = rd.peak;
    o->peak_index = rd.peak_index;
    ht_opsread_close(&rd);
  } else if (!P.bad && locks) {
    if (ht_locks_run(locks, r, o, replay_emit, &P)) o->oom = 1;
  } else if (!P.bad) {
    HtResolve rs;
    ht_resolve_init(&rs);
    if (ht_resolve_run(&rs, r, replay_op, NULL, &P)) o->oom = 1;
    ht_resolve_free(&rs);
  }
  int bad = P.bad || text_bad;
  size_t it = 0;
  uint64_t k, v;
  while (!bad && ht_map_next(&P.pend, &it, &k, &v))
    if (v) bad |= replay_unpend(f, v - 1);
  h.nops = o->nops;
  h.nrecs = P.nrecs;
  h.nhandles = o->next_handle - 1;
  h.peak = o->peak;
  h.peak_index = o->peak_index;
  *p = (HtReplayPrep){.nops = h.nops, .nhandles = h.nhandles, .peak = h.peak,
                      .peak_index = h.peak_index, .unknown_frees = o->unknown_frees,
                      .locks = locks ? locks->locks : 0, .unlocks = locks ? locks->unlocks : 0,
                      .model = locks ? (int)locks->model : -1,
                      .global_pct = locks ? locks->global_pct : 0};
  if (!bad && (fflush(f) || pwrite(fileno(f), &h, sizeof(h), 0) != (ssize_t)sizeof(h))) bad = 1;
  if (o->oom || (locks && locks->oom)) snprintf(err, errlen, "out of memory");
  else if (bad && !text_bad) snprintf(err, errlen, "%s: write error (%s)", opfile, strerror(errno));
  bad |= locks && locks->oom;
  bad |= o->oom;
  bad |= fclose(f) != 0;
  ht_map_free(&P.pend);
  ht_ops_free(o);
  return bad ? -1 : 0;
}

/* -- Running a driver ------------------------------------------------------ */

/* Read the runner's "key value" result file into res. */
static int replay_read_result(const char *path, HtReplayResult *res)
{
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char key[64], val[128];
  static const char *const cls[] = {"malloc", "free", "realloc", "other"};
  while (fscanf(f, "%63s %127s", key, val) == 2) {
    uint64_t u = strtoull(val, NULL, 10);
    int64_t s = strtoll(val, NULL, 10);
    if (!strcmp(key, "name")) snprintf(res->name, sizeof(res->name), "%.63s", val);
    else if (!strcmp(key, "ops")) res->ops = u;
    else if (!strcmp(key, "fails")) res->fails = u;
    else if (!strcmp(key, "corrupt")) res->corrupt = u;
    else if (!strcmp(key, "oom_calls")) res->oom_calls = u;
    else if (!strcmp(key, "live_blocks")) res->live_blocks = u;
    else if (!strcmp(key, "live_peak")) res->live_peak = u;
    else if (!strcmp(key, "round_kills") && res->nkills < HT_REPLAY_MAX_ROUNDS_SHOWN)
      res->kills[res->nkills++] = u;
    else if (!strcmp(key, "peak_rss")) res->peak_rss = s;
    else if (!strcmp(key, "peak_mapped")) res->peak_mapped = s;
    else if (!strcmp(key, "held_at_peak")) res->held_at_peak = s;
    else if (!strcmp(key, "frag_mean")) res->frag_mean = strtod(val, NULL);
    else if (!strcmp(key, "ns_total")) res->ns_total = u;
    else if (!strcmp(key, "ns_max")) res->ns_max = u;
    else if (!strcmp(key, "wall_ns")) res->wall_ns = u;
    else if (!strcmp(key, "n_lock")) res->n_lock = u;
    else if (!strcmp(key, "ns_lock")) res->ns_lock = u;
    else if (!strcmp(key, "compactions")) res->compactions = u;
    else if (!strcmp(key, "moved")) res->moved = u;
    else for (int c = 0; c < 4; c++) {
      if (!strncmp(key, "n_", 2) && !strcmp(key + 2, cls[c])) res->n_by[c] = u;
      if (!strncmp(key, "ns_", 3) && !strcmp(key + 3, cls[c])) res->ns_by[c] = u;
    }
  }
  fclose(f);
  return 0;
}

/* Read the runner's series file into res->s. */
static int replay_read_series(const char *path, HtReplayResult *res)
{
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t cap = 0;
  HtReplaySample s;
  while (fscanf(f, "%" SCNu64 " %" SCNu64 " %" SCNd64 " %" SCNd64 " %" SCNu64 " %" SCNu64
                " %" SCNu64, &s.index, &s.used, &s.rss, &s.mapped, &s.a_in_use, &s.a_mapped,
                &s.op_ns) == 7) {
    if (ht_grow(&res->s, &cap, res->ns + 1, sizeof(*res->s))) { fclose(f); return -1; }
    res->s[res->ns++] = s;
  }
  fclose(f);
  return 0;
}

/* Run one driver over opfile in a child process. */
int ht_replay_run(const char *runner, const char *opfile, const char *driver,
                  const char *touch, uint64_t interval, const HtReplayKill *kill,
                  const char *tmp, HtReplayResult *res)
{
  memset(res, 0, sizeof(*res));
  const char *base = strrchr(driver, '/');
  snprintf(res->name, sizeof(res->name), "%s", base ? base + 1 : driver);
  static unsigned seq;
  char rpath[4096], spath[4096], ival[32], kp[16], kr[32], ks[32];
  snprintf(rpath, sizeof(rpath), "%s/result.%u", tmp, seq);
  snprintf(spath, sizeof(spath), "%s/series.%u", tmp, seq++);
  snprintf(ival, sizeof(ival), "%" PRIu64, interval);
  if (kill) {
    snprintf(kp, sizeof(kp), "%u", kill->pct);
    snprintf(kr, sizeof(kr), "%" PRIu64, kill->rounds);
    snprintf(ks, sizeof(ks), "%" PRIu64, kill->seed);
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) { snprintf(res->problem, sizeof(res->problem), "fork: %s", strerror(errno)); return -1; }
  if (pid == 0) {
    char *args[] = {(char *)runner, (char *)opfile, (char *)driver, rpath, spath,
                    (char *)touch, ival, kill ? kp : NULL, kr, ks, NULL};
    execv(runner, args);
    fprintf(stderr, "heaptape: %s: cannot run (%s)\n", runner, strerror(errno));
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  int rc = -1;
  if (WIFSIGNALED(st))
    snprintf(res->problem, sizeof(res->problem), "crashed (signal %d, %s)", WTERMSIG(st),
             strsignal(WTERMSIG(st)));
  else if (WEXITSTATUS(st) == 3)
    snprintf(res->problem, sizeof(res->problem), "driver could not be loaded or set up");
  else if (WEXITSTATUS(st) == 127)
    snprintf(res->problem, sizeof(res->problem), "replay runner %s missing", runner);
  else if (WEXITSTATUS(st) != 0)
    snprintf(res->problem, sizeof(res->problem), "replay runner failed (exit %d)",
             WEXITSTATUS(st));
  else if (replay_read_result(rpath, res) || replay_read_series(spath, res))
    snprintf(res->problem, sizeof(res->problem), "no results from the replay runner");
  else rc = 0;
  unlink(rpath);
  unlink(spath);
  return rc;
}

/* Release a result's series. */
void ht_replay_result_free(HtReplayResult *res)
{
  free(res->s);
  res->s = NULL;
  res->ns = 0;
}

/* -- Results ----------------------------------------------------------------- */

/* Fragmentation at the peak: held bytes beyond the live bytes, as % of live. */
static double replay_frag_peak(const HtReplayResult *r)
{
  if (!r->live_peak || r->held_at_peak < 0) return 0;
  return 100.0 * ((double)r->held_at_peak - (double)r->live_peak) / (double)r->live_peak;
}

/* Results as a table. */
void ht_replay_text(FILE *f, const char *tape, const HtReplayPrep *p,
                    const HtReplayKill *kill, const HtReplayResult *res, size_t n)
{
  char a[32], b[32], c[32], d[32];
  ht_svg_fmt(a, sizeof(a), (double)p->peak, HT_SVG_BYTES);
  fprintf(f, "heaptape replay of %s: %" PRIu64 " ops, %" PRIu64 " blocks, live peak %s at op %"
          PRIu64 "\n", tape, p->nops, p->nhandles, a, p->peak_index);
  if (p->model == HT_LOCKS_COARSE)
    fprintf(f, "locks: coarse model (blocks living >= %u%% of the ops locked for life), %" PRIu64
            " locks, %" PRIu64 " unlocks\n", p->global_pct, p->locks, p->unlocks);
  else if (p->model == HT_LOCKS_FINE)
    fprintf(f, "locks: fine model (life +1 own op, -0.5 others'), %" PRIu64 " locks, %" PRIu64
            " unlocks\n", p->locks, p->unlocks);
  const HtReplayResult *ok = NULL;
  for (size_t i = 0; i < n && !ok; i++) if (!res[i].problem[0]) ok = &res[i];
  if (kill && ok) {
    ht_svg_fmt(a, sizeof(a), (double)ok->live_peak, HT_SVG_BYTES);
    fprintf(f, "killpercent %u, %" PRIu64 " round%s, seed %" PRIu64 ": blocks freed per round",
            kill->pct, kill->rounds, kill->rounds == 1 ? "" : "s", kill->seed);
    for (size_t k = 0; k < ok->nkills; k++) fprintf(f, "%s%" PRIu64, k ? ", " : " ", ok->kills[k]);
    fprintf(f, "%s; live peak over all rounds %s\n",
            kill->rounds > ok->nkills ? " ..." : "", a);
  }
  fputc('\n', f);
  fprintf(f, "%-12s %11s %11s %11s %9s %9s %10s %8s %8s %6s\n", "allocator", "peak RSS",
          "peak mapped", "RSS@peak", "frag@peak", "frag mean", "alloc time", "ns/op",
          "max op", "fails");
  for (size_t i = 0; i < n; i++) {
    const HtReplayResult *r = &res[i];
    if (r->problem[0]) { fprintf(f, "%-12s %s\n", r->name, r->problem); continue; }
    ht_svg_fmt(a, sizeof(a), (double)r->peak_rss, HT_SVG_BYTES);
    ht_svg_fmt(b, sizeof(b), (double)r->peak_mapped, HT_SVG_BYTES);
    ht_svg_fmt(c, sizeof(c), (double)r->held_at_peak, HT_SVG_BYTES);
    ht_svg_fmt(d, sizeof(d), (double)r->ns_total, HT_SVG_NS);
    fprintf(f, "%-12s %11s %11s %11s %8.1f%% %8.1f%% %10s %8.1f %8.1f %6" PRIu64 "%s\n",
            r->name, a, b, c, replay_frag_peak(r), 100.0 * r->frag_mean, d,
            r->ops ? (double)r->ns_total / (double)r->ops : 0.0, (double)r->ns_max / 1000.0,
            r->fails, r->corrupt ? " CORRUPT" : "");
  }
  int handles = 0;
  for (size_t i = 0; i < n; i++) handles |= res[i].n_lock || res[i].compactions;
  if (handles) {  /* handle-based drivers: what locking cost and what compaction did */
    fprintf(f, "\n%-12s %12s %10s %12s %12s\n", "allocator", "lock calls", "lock time",
            "compactions", "bytes moved");
    for (size_t i = 0; i < n; i++) {
      const HtReplayResult *r = &res[i];
      if (r->problem[0] || !(r->n_lock || r->compactions)) continue;
      ht_svg_fmt(a, sizeof(a), (double)r->ns_lock, HT_SVG_NS);
      ht_svg_fmt(b, sizeof(b), (double)r->moved, HT_SVG_BYTES);
      fprintf(f, "%-12s %12" PRIu64 " %10s %12" PRIu64 " %12s\n", r->name, r->n_lock, a,
              r->compactions, b);
    }
  }
  fprintf(f, "\nRSS and mapped are above the runner's baseline; frag = RSS held beyond the\n"
             "live bytes (at the live peak, and the mean share over the run); max op in us.\n");
  for (size_t i = 0; i < n; i++)
    if (res[i].corrupt)
      fprintf(f, "%s: %" PRIu64 " blocks lost their contents, alignment or zeroing\n",
              res[i].name, res[i].corrupt);
}

/* Results and series as JSON. */
void ht_replay_json(FILE *f, const char *tape, const HtReplayPrep *p,
                    const HtReplayKill *kill, const HtReplayResult *res, size_t n)
{
  fprintf(f, "{\n  \"tape\": \"");
  for (const char *s = tape; *s; s++)
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s >= 0x20) fputc(*s, f);
  fprintf(f, "\",\n  \"ops\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"live_peak\": %" PRIu64
          ", \"live_peak_op\": %" PRIu64 ",\n", p->nops, p->nhandles, p->peak, p->peak_index);
  if (kill)
    fprintf(f, "  \"killpercent\": %u, \"rounds\": %" PRIu64 ", \"seed\": %" PRIu64 ",\n",
            kill->pct, kill->rounds, kill->seed);
  if (p->model >= 0)
    fprintf(f, "  \"locks\": {\"model\": \"%s\", \"global_pct\": %u, \"locks\": %" PRIu64
            ", \"unlocks\": %" PRIu64 "},\n", p->model == HT_LOCKS_COARSE ? "coarse" : "fine",
            p->global_pct, p->locks, p->unlocks);
  fprintf(f, "  \"allocators\": [");
  for (size_t i = 0; i < n; i++) {
    const HtReplayResult *r = &res[i];
    fprintf(f, "%s\n    {\"driver\": \"%s\", \"ok\": %s, \"problem\": \"%s\",\n", i ? "," : "",
            r->name, r->problem[0] ? "false" : "true", r->problem);
    fprintf(f, "     \"ops\": %" PRIu64 ", \"failures\": %" PRIu64 ", \"corrupt\": %" PRIu64
            ", \"oom_calls\": %" PRIu64 ",\n", r->ops, r->fails, r->corrupt, r->oom_calls);
    fprintf(f, "     \"peak_rss\": %" PRId64 ", \"peak_mapped\": %" PRId64
            ", \"rss_at_live_peak\": %" PRId64 ", \"frag_at_peak_pct\": %.3f"
            ", \"frag_mean_pct\": %.3f,\n", r->peak_rss, r->peak_mapped, r->held_at_peak,
            replay_frag_peak(r), 100.0 * r->frag_mean);
    fprintf(f, "     \"time_ns\": %" PRIu64 ", \"max_op_ns\": %" PRIu64 ", \"wall_ns\": %"
            PRIu64 ", \"ns_per_op\": %.2f,\n", r->ns_total, r->ns_max, r->wall_ns,
            r->ops ? (double)r->ns_total / (double)r->ops : 0.0);
    fprintf(f, "     \"calls\": {\"malloc\": %" PRIu64 ", \"free\": %" PRIu64 ", \"realloc\": %"
            PRIu64 ", \"other\": %" PRIu64 "},\n", r->n_by[0], r->n_by[1], r->n_by[2], r->n_by[3]);
    fprintf(f, "     \"call_ns\": {\"malloc\": %" PRIu64 ", \"free\": %" PRIu64 ", \"realloc\": %"
            PRIu64 ", \"other\": %" PRIu64 "},\n", r->ns_by[0], r->ns_by[1], r->ns_by[2],
            r->ns_by[3]);
    fprintf(f, "     \"lock_calls\": %" PRIu64 ", \"lock_ns\": %" PRIu64 ", \"compactions\": %"
            PRIu64 ", \"moved_bytes\": %" PRIu64 ",\n", r->n_lock, r->ns_lock, r->compactions,
            r->moved);
    if (kill) {
      fprintf(f, "     \"live_peak\": %" PRIu64 ", \"live_blocks\": %" PRIu64
              ", \"round_kills\": [", r->live_peak, r->live_blocks);
      for (size_t k = 0; k < r->nkills; k++) fprintf(f, "%s%" PRIu64, k ? ", " : "", r->kills[k]);
      fprintf(f, "],\n");
    }
    fprintf(f, "     \"alloc_stats\": [");
    int64_t maxmem = 0;
    for (size_t k = 0; k < r->ns; k++) {
      const HtReplaySample *s = &r->s[k];
      if (s->rss > maxmem) maxmem = s->rss;
      uint64_t fr = s->a_mapped > s->a_in_use && s->a_in_use ? s->a_mapped - s->a_in_use : 0;
      fprintf(f, "%s\n      {\"op_index\": %" PRIu64 ", \"used\": %" PRIu64 ", \"free\": %" PRIu64
              ", \"overhead\": %" PRId64 ", \"maxmem\": %" PRId64 ", \"rss\": %" PRId64
              ", \"mapped\": %" PRId64 ", \"alloc_in_use\": %" PRIu64 ", \"alloc_mapped\": %"
              PRIu64 ", \"op_time_ns\": %" PRIu64 "}", k ? "," : "", s->index, s->used, fr,
              s->rss - (int64_t)s->used, maxmem, s->rss, s->mapped, s->a_in_use, s->a_mapped,
              s->op_ns);
    }
    fprintf(f, "]}");
  }
  fprintf(f, "\n  ]\n}\n");
}

/* The allocators side by side as SVG. */
void ht_replay_svg(FILE *f, const char *tape, const HtReplayPrep *p,
                   const HtReplayResult *res, size_t n)
{
  (void)p;
  char title[512];
  snprintf(title, sizeof(title), "heaptape replay: %s", tape);
  ht_svg_open(f, 1000, 760, title);
  HtSvgLine *l = calloc(n + 1, sizeof(*l));
  double **xs = calloc(n + 1, sizeof(double *)), **ys = calloc(n + 1, sizeof(double *));
  size_t nl = 0;
  for (size_t i = 0; i <= n && l && xs && ys; i++) {
    const HtReplayResult *r = i < n ? &res[i] : NULL;
    if (r && r->problem[0]) continue;
    const HtReplayResult *src = r;
    for (size_t k = 0; !src && k < n; k++) if (!res[k].problem[0]) src = &res[k];
    if (!src || !src->ns) continue;
    xs[nl] = malloc(src->ns * sizeof(double));
    ys[nl] = malloc(src->ns * sizeof(double));
    if (!xs[nl] || !ys[nl]) { free(xs[nl]); free(ys[nl]); break; }
    for (size_t k = 0; k < src->ns; k++) {
      xs[nl][k] = (double)src->s[k].index;
      ys[nl][k] = r ? (double)src->s[k].rss : (double)src->s[k].used;
    }
    l[nl] = (HtSvgLine){.name = r ? r->name : "live bytes (tape)", .x = xs[nl], .y = ys[nl],
                        .n = src->ns};
    nl++;
  }
  HtSvgBox top = {.x = 10, .y = 30, .w = 980, .h = 400, .title = "resident memory held (RSS above baseline)",
                  .xlabel = "operation", .xfmt = HT_SVG_NUM, .yfmt = HT_SVG_BYTES};
  ht_svg_lines(f, &top, l, nl);
  const char **lab = calloc(n ? n : 1, sizeof(char *));
  double *v1 = calloc(n ? n : 1, sizeof(double)), *v2 = calloc(n ? n : 1, sizeof(double)),
         *v3 = calloc(n ? n : 1, sizeof(double));
  size_t nb = 0;
  for (size_t i = 0; i < n && lab && v1 && v2 && v3; i++) {
    if (res[i].problem[0]) continue;
    lab[nb] = res[i].name;
    v1[nb] = (double)res[i].peak_rss;
    v2[nb] = replay_frag_peak(&res[i]) > 0 ? replay_frag_peak(&res[i]) : 0;
    v3[nb] = res[i].ops ? (double)res[i].ns_total / (double)res[i].ops : 0;
    nb++;
  }
  HtSvgBox b1 = {.x = 10, .y = 450, .w = 326, .h = 300, .title = "peak RSS", .yfmt = HT_SVG_BYTES};
  HtSvgBox b2 = {.x = 336, .y = 450, .w = 326, .h = 300, .title = "fragmentation at the live peak",
                 .yfmt = HT_SVG_PCT};
  HtSvgBox b3 = {.x = 662, .y = 450, .w = 326, .h = 300, .title = "time per operation",
                 .yfmt = HT_SVG_NS};
  if (lab && v1 && v2 && v3) {
    ht_svg_bars(f, &b1, lab, v1, nb);
    ht_svg_bars(f, &b2, lab, v2, nb);
    ht_svg_bars(f, &b3, lab, v3, nb);
  }
  ht_svg_close(f);
  for (size_t i = 0; i < nl; i++) { free(xs[i]); free(ys[i]); }
  free(xs); free(ys); free(l); free(lab); free(v1); free(v2); free(v3);
}

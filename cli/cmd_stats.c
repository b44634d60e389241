/* heaptape -- `heaptape stats`: what is on a tape: events by kind, a size
** histogram, threads, duration, sampling, encoding cost, damage and loss. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "cmds.h"
#include "../include/heaptape.h"
#include "../src/format/reader.h"
#include "../src/analyze/access.h"
#include "../src/analyze/model.h"
#include "../src/analyze/agg.h"
#include "../src/base/escape.h"

static const char stats_usage[] =
  "usage: heaptape stats [--json] FILE\n"
  "  --json   the same figures as one JSON object (docs/REPORT.md)\n";

static const char *const stats_types[] = {
  "?", "alloc", "free", "thread", "mark", "module", "unload", "rss", "lost",
};
static const char *const stats_kinds[] = {
  "malloc", "calloc", "realloc", "aligned", "valloc", "new", "new[]",
  "new aligned", "new[] aligned", "sized", "aligned sized", "runtime",
};

/* A terminal progress line for long passes (silent when not a TTY). */
static void stats_progress(void *arg, uint64_t done, uint64_t total)
{
  struct timespec *t0 = arg, t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  if (!total || t.tv_sec - t0->tv_sec < 1) return;
  fprintf(stderr, "\rheaptape: reading: %3.0f%%",
          done >= total ? 100.0 : 100.0 * (double)done / (double)total);
  t0->tv_nsec = -1;  /* mark: a line is shown */
}

/* "2^k" bounds of a histogram bucket as text. */
static void stats_bound(char *buf, size_t len, uint64_t v)
{
  static const char *const unit[] = {"", "K", "M", "G", "T", "P", "E"};
  int u = 0;
  while (v >= 1024 && v % 1024 == 0 && u < 6) { v /= 1024; u++; }
  snprintf(buf, len, "%" PRIu64 "%s", v, unit[u]);
}

/* Whether a thread is heaptape's writer, not the program's: it writes RSS,
** MODULE and LOST records under its own tid, with no THREAD record and no
** allocation or free. */
static int stats_is_recorder(const HtThread *t)
{
  return !t->name[0] && !t->allocs && !t->frees;
}

/* Print the figures of an analysed tape. */
static void stats_print(const char *path, HtReader *r, const HtModel *m)
{
  const HtHeader *h = ht_reader_header(r);
  const HtReadStats *st = ht_reader_stats(r);
  printf("heaptape stats of %s\n\n", path);
  printf("  format version   %" PRIu32 "\n", h->version);
  size_t agglen;
  if (ht_reader_sealed(r))
    printf("  sealed           %s\n", ht_reader_agg(r, &agglen)
           ? "yes: report, stats, flamegraph and pprof read its aggregate section, no events"
           : "yes, without an aggregate section: every analysis reads the events");
  printf("  executable       %s (pid %" PRIu32 ")\n", h->exe && h->exe[0] ? h->exe : "(unknown)",
         h->pid);
  printf("  frontend         %s\n", h->frontend && h->frontend[0] ? h->frontend : "native");
  printf("  duration         %.3f s\n", (double)m->duration / 1e9);
  if (h->sample) printf("  sampling         one per %" PRIu64 " bytes on average\n", h->sample);
  else printf("  sampling         every allocation\n");
  HtAccessInfo ai;
  ht_access_info(r, &ai);
  if (ai.present) {  /* record --access (docs/ACCESS.md) */
    printf("  heap accesses    %" PRIu64 " in %" PRIu64 " packets (", ai.accesses, ai.packets);
    if (ai.sample > 1) printf("1 in %" PRIu64 " kept", ai.sample);
    else printf("every one");
    printf("; heaptape ops --access)\n");
  }
  uint64_t addrs, missing;
  if (!(h->flags & HT_F_SYMBOLIZED)) printf("  symbolised       no\n");
  else if (ht_reader_symbol_cover(r, &addrs, &missing) || !missing) printf("  symbolised       yes\n");
  else  /* finalised, but symbols were cut off (or lost with damaged packets) */
    printf("  symbolised       %s: the symbols of %" PRIu64 " of %" PRIu64 " addresses are "
           "missing (cut off or damaged; heaptape symbolize %s restores them)\n",
           missing == addrs ? "no" : "partly", missing, addrs, path);
  printf("  file             %" PRIu64 " bytes in %" PRIu64 " packets (%" PRIu64
         " of events)\n", st->file_bytes, st->packets, st->event_packets);
  printf("  events           %" PRIu64 " (%.1f tape bytes per event)\n", m->events,
         m->events ? (double)st->file_bytes / (double)m->events : 0.0);
  if (st->has_trailer) {
    printf("  closed           yes");
    if (st->trailer_status != UINT64_MAX) printf(", exit status %" PRIu64, st->trailer_status);
    printf("\n");
  } else {
    printf("  closed           no (no trailer)\n");
  }
  printf("  damaged          %" PRIu64 " packets, %" PRIu64 " bytes\n", st->damaged,
         st->damaged_bytes);
  printf("  truncated        %" PRIu64 " bytes\n", st->truncated_bytes);
  printf("  lost             %" PRIu64 " events\n", st->lost > m->lost ? st->lost : m->lost);
  if (st->foreign) printf("  other processes  %" PRIu64 " packets ignored\n", st->foreign);

  printf("\nEVENTS\n");
  for (size_t i = 1; i < HT_COUNTOF(stats_types); i++)
    if (m->by_type[i]) printf("  %-16s %" PRIu64 "\n", stats_types[i], m->by_type[i]);
  printf("\nALLOCATIONS BY KIND\n");
  for (size_t i = 0; i < HT_COUNTOF(stats_kinds); i++)
    if (m->by_kind[i]) printf("  %-16s %" PRIu64 "\n", stats_kinds[i], m->by_kind[i]);

  printf("\nSIZES\n");
  for (unsigned b = 0; b < HT_COUNTOF(m->hist); b++) {
    if (!m->hist[b]) continue;
    char lo[32], hi[32], range[80];
    if (b == 0) snprintf(range, sizeof(range), "0");
    else {
      stats_bound(lo, sizeof(lo), 1ull << (b - 1));
      stats_bound(hi, sizeof(hi), b == 64 ? UINT64_MAX : 1ull << b);
      snprintf(range, sizeof(range), "%s..<%s", lo, hi);
    }
    printf("  %-16s %" PRIu64 "\n", range, m->hist[b]);
  }

  printf("\nTHREADS\n");
  printf("  %-10s %-16s %10s %10s %12s %10s\n", "tid", "name", "events", "allocs",
         "bytes", "frees");
  for (uint32_t i = 0; i < m->nth; i++) {
    const HtThread *t = &m->th[i];
    if (stats_is_recorder(t)) continue;
    printf("  %-10" PRIu32 " %-16s %10" PRIu64 " %10" PRIu64 " %12" PRIu64 " %10" PRIu64 "\n",
           t->tid, t->name[0] ? t->name : "-", t->events, t->allocs, t->bytes, t->frees);
  }
  for (uint32_t i = 0; i < m->nth; i++)
    if (stats_is_recorder(&m->th[i]))
      printf("  (not listed: %" PRIu32 ", heaptape's writer thread, %" PRIu64
             " records of RSS, modules and loss)\n", m->th[i].tid, m->th[i].events);
}


/* Print the figures of an analysed tape as one JSON object. */
static void stats_json(const char *path, HtReader *r, const HtModel *m, const char *warning)
{
  const HtHeader *h = ht_reader_header(r);
  const HtReadStats *st = ht_reader_stats(r);
  uint64_t addrs = 0, missing = 0;
  int oom = ht_reader_symbol_cover(r, &addrs, &missing);
  int sym = (h->flags & HT_F_SYMBOLIZED) && (oom || !missing);
  printf("{\"tape\": ");
  ht_json_str(stdout, path, HT_JSON_SCRIPT);
  printf(", \"version\": %" PRIu32 ", \"executable\": ", h->version);
  ht_json_str(stdout, h->exe, HT_JSON_SCRIPT);
  printf(", \"pid\": %" PRIu32 ", \"frontend\": ", h->pid);
  ht_json_str(stdout, h->frontend && h->frontend[0] ? h->frontend : "native", HT_JSON_SCRIPT);
  printf(",\n \"duration_ns\": %" PRIu64 ", \"sampling_interval\": %" PRIu64
         ", \"symbolised\": %s, \"addresses\": %" PRIu64 ", \"symbols_missing\": %" PRIu64
         ",\n", m->duration, h->sample, sym ? "true" : "false", addrs, missing);
  printf(" \"file_bytes\": %" PRIu64 ", \"packets\": %" PRIu64 ", \"event_packets\": %" PRIu64
         ", \"events\": %" PRIu64 ", \"closed\": %s, \"exit_status\": ", st->file_bytes,
         st->packets, st->event_packets, m->events, st->has_trailer ? "true" : "false");
  if (st->has_trailer && st->trailer_status != UINT64_MAX) printf("%" PRIu64, st->trailer_status);
  else fputs("null", stdout);
  printf(",\n \"damaged_packets\": %" PRIu64 ", \"damaged_bytes\": %" PRIu64
         ", \"truncated_bytes\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"foreign_packets\": %"
         PRIu64 ",\n", st->damaged, st->damaged_bytes, st->truncated_bytes,
         st->lost > m->lost ? st->lost : m->lost, st->foreign);
  printf(" \"by_type\": {");
  const char *sep = "";
  for (size_t i = 1; i < HT_COUNTOF(stats_types); i++)
    if (m->by_type[i]) { printf("%s\"%s\": %" PRIu64, sep, stats_types[i], m->by_type[i]); sep = ", "; }
  printf("},\n \"by_kind\": {");
  sep = "";
  for (size_t i = 0; i < HT_COUNTOF(stats_kinds); i++)
    if (m->by_kind[i]) { printf("%s\"%s\": %" PRIu64, sep, stats_kinds[i], m->by_kind[i]); sep = ", "; }
  printf("},\n \"sizes\": [");
  sep = "";
  for (unsigned b = 0; b < HT_COUNTOF(m->hist); b++) {
    if (!m->hist[b]) continue;
    uint64_t lo = b ? 1ull << (b - 1) : 0, hi = b == 0 ? 1 : b == 64 ? UINT64_MAX : 1ull << b;
    printf("%s{\"lo\": %" PRIu64 ", \"hi\": %" PRIu64 ", \"count\": %" PRIu64 "}", sep,
           lo, hi, m->hist[b]);
    sep = ", ";
  }
  printf("],\n \"threads\": [");
  sep = "";
  for (uint32_t i = 0; i < m->nth; i++) {
    const HtThread *t = &m->th[i];
    if (stats_is_recorder(t)) continue;
    printf("%s\n  {\"tid\": %" PRIu32 ", \"name\": ", sep, t->tid);
    ht_json_str(stdout, t->name[0] ? t->name : NULL, HT_JSON_SCRIPT);
    printf(", \"events\": %" PRIu64 ", \"allocs\": %" PRIu64 ", \"bytes\": %" PRIu64
           ", \"frees\": %" PRIu64 "}", t->events, t->allocs, t->bytes, t->frees);
    sep = ",";
  }
  printf("],\n \"recorder_threads\": [");
  sep = "";
  for (uint32_t i = 0; i < m->nth; i++)
    if (stats_is_recorder(&m->th[i])) {
      printf("%s{\"tid\": %" PRIu32 ", \"events\": %" PRIu64 "}", sep, m->th[i].tid,
             m->th[i].events);
      sep = ", ";
    }
  printf("],\n \"warning\": ");
  ht_json_str(stdout, warning, HT_JSON_SCRIPT);
  printf("}\n");
}

/* `heaptape stats`: parse its arguments and run it; returns the exit status. */
int cmd_stats(int argc, char **argv)
{
  static const HtOpt opts[] = {{"--json", 0, 0, 1}, {NULL, 0, 0, 0}};
  const char *path = NULL;
  int json = 0, k;
  HtArgs a;
  ht_args_init(&a, argc, argv, "stats", stats_usage, opts);
  while ((k = ht_args_next(&a)) != HT_ARG_END) {
    if (k == HT_ARG_HELP) return HT_EXIT_OK;
    if (k == HT_ARG_BAD) return HT_EXIT_USAGE;
    if (k == 1) json = 1;
    else if (path) return ht_args_extra(&a, "tape", a.val);
    else path = a.val;
  }
  if (!path) return ht_args_missing(&a, "tape");
  HtReader *r;
  if (ht_cli_open_tape(path, &r)) return HT_EXIT_FAIL;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  HtModelOpts mo = {.at_ns = UINT64_MAX, .arg = &t0, .no_sites = 1,
                    .progress = isatty(2) ? stats_progress : NULL};
  HtModel m;
  if (ht_model_init(&m, r, &mo)) {
    ht_cli_error("%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    ht_reader_close(r);
    return HT_EXIT_FAIL;
  }
  ht_agg_model(&m);
  if (t0.tv_nsec == -1) fputs("\r\033[K", stderr);
  char warn[320];
  ht_cli_damage(r, warn, sizeof(warn));
  ht_cli_warn_damage(path, r);
  if (json) stats_json(path, r, &m, warn[0] ? warn : NULL);
  else stats_print(path, r, &m);
  int failed = fflush(stdout) != 0;
  ht_model_free(&m);
  ht_reader_close(r);
  return failed ? HT_EXIT_FAIL : HT_EXIT_OK;
}

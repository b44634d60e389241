/* heaptape -- the access report as text or JSON: per site counts, findings
** in blocks, access counts per byte offset of the top sites. */
#include <inttypes.h>

#include "accrep.h"
#include "../base/escape.h"

#define ACCREP_ROWS 32  /* text rows of a site's access counts at most */

/* Accesses per byte per second of lifetime (0 when no block lived). */
static double accrep_rate(const HtAccSite *s)
{
  return s->byte_secs > 0 ? (double)(s->reads + s->writes) / s->byte_secs : 0;
}

/* Share in per cent of x over n (0 when n is 0). */
static double accrep_pct(double x, double n)
{
  return n > 0 ? 100.0 * x / n : 0;
}

static const char *accrep_pl(uint64_t n)
{
  return n == 1 ? "" : "s";
}

/* A site's findings as text lines. */
static void accrep_findings(FILE *f, const HtAccSite *s)
{
  if (s->never) fprintf(f, "  never accessed: %" PRIu64 " block%s\n", s->never, accrep_pl(s->never));
  if (s->wonly)
    fprintf(f, "  written, never read: %" PRIu64 " block%s\n", s->wonly, accrep_pl(s->wonly));
  if (s->ronly)
    fprintf(f, "  read-only after initialisation: %" PRIu64 " block%s\n", s->ronly,
            accrep_pl(s->ronly));
  if (s->prefix)
    fprintf(f, "  only a prefix touched: %" PRIu64 " block%s (%.1f%% of their bytes)\n", s->prefix,
            accrep_pl(s->prefix), accrep_pct((double)s->prefix_touched, (double)s->prefix_bytes));
  if (s->early)
    fprintf(f, "  allocated too early: %" PRIu64 " block%s (idle %.0f%% of the lifetime before"
            " the first access)\n", s->early, accrep_pl(s->early),
            100.0 * s->early_idle / (double)s->early);
  if (s->late)
    fprintf(f, "  freed too late: %" PRIu64 " block%s (idle %.0f%% of the lifetime after the"
            " last access)\n", s->late, accrep_pl(s->late), 100.0 * s->late_idle / (double)s->late);
}

/* A site's access counts as text: runs of equal counts, or ACCREP_ROWS
** buckets (the highest count of each) when there are more runs. */
static void accrep_hist_text(FILE *f, const HtAccSite *s)
{
  uint64_t span = ht_accrep_span(s), runs = 0;
  for (uint64_t o = 0; o < span; o++)
    if (!o || s->hist[o] != s->hist[o - 1]) runs++;
  fprintf(f, "site %s (blocks up to %" PRIu64 " B)\n", s->name, s->max_size);
  if (runs <= ACCREP_ROWS) {
    for (uint64_t o = 0; o < span;) {
      uint64_t e = o;
      while (e + 1 < span && s->hist[e + 1] == s->hist[o]) e++;
      fprintf(f, "  bytes %" PRIu64 "-%" PRIu64 ": %" PRIu64 "\n", o, e, s->hist[o]);
      o = e + 1;
    }
  } else {
    uint64_t w = (span + ACCREP_ROWS - 1) / ACCREP_ROWS;
    for (uint64_t o = 0; o < span; o += w) {
      uint64_t e = o + w < span ? o + w : span, m = 0;
      for (uint64_t i = o; i < e; i++) if (s->hist[i] > m) m = s->hist[i];
      fprintf(f, "  bytes %" PRIu64 "-%" PRIu64 ": up to %" PRIu64 "\n", o, e - 1, m);
    }
  }
  if (s->max_size > HT_ACCREP_HIST)
    fprintf(f, "  bytes %d on: %" PRIu64 " byte accesses in all\n", HT_ACCREP_HIST, s->hist_beyond);
}

/* The report as text. */
void ht_accrep_text(FILE *f, const HtAccRep *a, const HtAccessInfo *ai)
{
  uint64_t blocks = 0;
  for (size_t i = 0; i < a->nsites; i++) blocks += a->sites[i].blocks;
  fprintf(f, "# heaptape access: %" PRIu64 " accesses", a->accesses);
  if (ai->sample > 1) fprintf(f, " (a 1-in-%" PRIu64 " sample)", ai->sample);
  fprintf(f, " to %" PRIu64 " blocks at %zu sites; a modify counts as a read and a write\n",
          blocks, a->nsites);
  for (size_t i = 0; i < a->nsites; i++) {
    const HtAccSite *s = &a->sites[i];
    fprintf(f, "\nsite %s\n", s->name);
    fprintf(f, "  blocks %" PRIu64 " bytes %" PRIu64 " reads %" PRIu64 " writes %" PRIu64
            " modifies %" PRIu64 " bytes-read %" PRIu64 " bytes-written %" PRIu64
            " accesses/byte/s %.4g\n", s->blocks, s->bytes, s->reads, s->writes, s->modifies,
            s->bread, s->bwritten, accrep_rate(s));
    accrep_findings(f, s);
  }
  if (!a->ntop) return;
  fprintf(f, "\naccess counts per byte offset (top %zu site%s by accesses; offsets 0-%d):\n",
          a->ntop, a->ntop == 1 ? "" : "s", HT_ACCREP_HIST - 1);
  for (size_t i = 0; i < a->ntop; i++) accrep_hist_text(f, &a->sites[i]);
}

/* One finding with a fraction as JSON. */
static void accrep_json_frac(FILE *f, const char *key, uint64_t blocks, const char *fkey,
                             double frac)
{
  fprintf(f, ",\"%s\":{\"blocks\":%" PRIu64 ",\"%s\":%.4f}", key, blocks, fkey, frac);
}

/* The report as JSON. */
void ht_accrep_json(FILE *f, const HtAccRep *a, const HtAccessInfo *ai, const char *tape)
{
  fprintf(f, "{\"tape\":");
  ht_json_str(f, tape, 0);
  fprintf(f, ",\"accesses\":%" PRIu64 ",\"sample\":%" PRIu64 ",\"modify_counts_as\":"
          "\"read and write\",\"sites\":[", a->accesses, ai->sample ? ai->sample : 1);
  for (size_t i = 0; i < a->nsites; i++) {
    const HtAccSite *s = &a->sites[i];
    fprintf(f, "%s\n{\"site\":", i ? "," : "");
    ht_json_str(f, s->name, 0);
    fprintf(f, ",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"reads\":%" PRIu64
            ",\"writes\":%" PRIu64 ",\"modifies\":%" PRIu64 ",\"bytes_read\":%" PRIu64
            ",\"bytes_written\":%" PRIu64 ",\"accesses_per_byte_second\":%.6g",
            s->blocks, s->bytes, s->reads, s->writes, s->modifies, s->bread, s->bwritten,
            accrep_rate(s));
    fprintf(f, ",\"findings\":{\"never_accessed\":%" PRIu64 ",\"written_never_read\":%" PRIu64
            ",\"read_only_after_init\":%" PRIu64, s->never, s->wonly, s->ronly);
    accrep_json_frac(f, "prefix_only", s->prefix, "touched_fraction",
                     s->prefix_bytes ? (double)s->prefix_touched / (double)s->prefix_bytes : 0);
    accrep_json_frac(f, "allocated_too_early", s->early, "idle_fraction",
                     s->early ? s->early_idle / (double)s->early : 0);
    accrep_json_frac(f, "freed_too_late", s->late, "idle_fraction",
                     s->late ? s->late_idle / (double)s->late : 0);
    fputc('}', f);
    if (s->hist) {
      uint64_t span = ht_accrep_span(s);
      fprintf(f, ",\"access_counts\":{\"beyond_%d\":%" PRIu64 ",\"per_offset\":[", HT_ACCREP_HIST,
              s->hist_beyond);
      for (uint64_t o = 0; o < span; o++) fprintf(f, "%s%" PRIu64, o ? "," : "", s->hist[o]);
      fprintf(f, "]}");
    }
    fputc('}', f);
  }
  fprintf(f, "]}\n");
}

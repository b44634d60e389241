/* heaptape -- `heaptape diff` rendered: the two summaries side by side and
** the sites ordered by their change, as text, JSON or an HTML page. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "report.h"
#include "svgplot.h"
#include "../base/escape.h"

/* -- Figures -------------------------------------------------------------- */

/* Bytes for people: exact below 10 KiB ("9000 B"), else "1.50 MiB". */
static const char *diff_bytes(char *buf, size_t len, uint64_t v)
{
  static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
  if (v < 10240) { snprintf(buf, len, "%" PRIu64 " B", v); return buf; }
  double x = (double)v / 1024;
  int u = 0;
  while (x >= 1024 && u < 3) { x /= 1024; u++; }
  snprintf(buf, len, "%.2f %s", x, unit[u]);
  return buf;
}

/* A signed change of bytes: "+1.50 MiB", "-9000 B", "0 B". */
static const char *diff_dbytes(char *buf, size_t len, int64_t v)
{
  char b[32];
  uint64_t a = v < 0 ? -(uint64_t)v : (uint64_t)v;
  snprintf(buf, len, "%s%s", v > 0 ? "+" : v < 0 ? "-" : "", diff_bytes(b, sizeof(b), a));
  return buf;
}

/* A signed change of a count: "+3", "-2", "0". */
static const char *diff_dcount(char *buf, size_t len, int64_t v)
{
  snprintf(buf, len, v > 0 ? "+%" PRId64 : "%" PRId64, v);
  return buf;
}

/* Which tapes a site is on, as a word. */
static const char *diff_side(int side)
{
  return side == HT_DIFF_BOTH ? "both" : side == HT_DIFF_BASE ? "base" : "new";
}

/* Sites to show. */
static uint32_t diff_shown(const HtDiff *d, const HtDiffOpts *o)
{
  return o->top && o->top < d->nsite ? o->top : d->nsite;
}

/* One row of the summaries: the base figure, the new one, the change. */
typedef struct SumRow {
  const char *label;         /* what it is */
  uint64_t a, b;             /* base, new */
  int bytes;                 /* a byte figure (else a count) */
} SumRow;

/* The rows of the two summaries. */
static size_t diff_summary_rows(const HtDiff *d, SumRow *r)
{
  const HtModel *a = d->base, *b = d->now;
  size_t n = 0;
  r[n++] = (SumRow){"allocation calls", a->allocs, b->allocs, 0};
  r[n++] = (SumRow){"bytes allocated", a->bytes, b->bytes, 1};
  r[n++] = (SumRow){"peak heap", a->peak, b->peak, 1};
  r[n++] = (SumRow){"blocks at the peak", a->peak_n, b->peak_n, 0};
  r[n++] = (SumRow){"leaked at exit", a->heap, b->heap, 1};
  r[n++] = (SumRow){"blocks leaked", a->heap_n, b->heap_n, 0};
  r[n++] = (SumRow){"temporary", a->temp, b->temp, 0};
  r[n++] = (SumRow){"sites", a->nloc, b->nloc, 0};
  return n;
}

/* A summary value as text. */
static const char *diff_value(char *buf, size_t len, uint64_t v, int bytes)
{
  if (bytes) return diff_bytes(buf, len, v);
  snprintf(buf, len, "%" PRIu64, v);
  return buf;
}

/* -- Text ----------------------------------------------------------------- */

/* The comparison as text. */
void ht_diff_text(FILE *f, const HtDiff *d, const HtDiffOpts *o)
{
  SumRow r[16];
  size_t nr = diff_summary_rows(d, r);
  char b1[32], b2[32], b3[32], b4[32];
  fprintf(f, "heaptape diff of %s (base) and %s (new)\n\n", o->base_path, o->new_path);
  fprintf(f, "SUMMARY                %-16s %-16s %s\n", "base", "new", "change");
  fprintf(f, "  %-20s %-16.3f %-16.3f %+.3f s\n", "duration (s)",
          (double)d->base->duration / 1e9, (double)d->now->duration / 1e9,
          ((double)d->now->duration - (double)d->base->duration) / 1e9);
  for (size_t i = 0; i < nr; i++) {
    int64_t c = (int64_t)(r[i].b - r[i].a);
    fprintf(f, "  %-20s %-16s %-16s %s\n", r[i].label,
            diff_value(b1, sizeof(b1), r[i].a, r[i].bytes),
            diff_value(b2, sizeof(b2), r[i].b, r[i].bytes),
            r[i].bytes ? diff_dbytes(b3, sizeof(b3), c) : diff_dcount(b3, sizeof(b3), c));
  }
  uint32_t shown = diff_shown(d, o);
  fprintf(f, "\nSITES: %" PRIu32 " (%" PRIu32 " on both, %" PRIu32 " only in base, %" PRIu32
          " only in new); top %" PRIu32 " by the absolute change in %s\n", d->nsite,
          d->nboth, d->nbase, d->nnew, shown, ht_diff_key_name(d->key));
  for (uint32_t i = 0; i < shown; i++) {
    const HtDiffSite *s = &d->site[i];
    fprintf(f, "  #%" PRIu32 "  %s allocated, %s calls, %s at the peak, %s leaked%s\n", i + 1,
            diff_dbytes(b1, sizeof(b1), s->d_bytes), diff_dcount(b2, sizeof(b2), s->d_allocs),
            diff_dbytes(b3, sizeof(b3), s->d_peak), diff_dbytes(b4, sizeof(b4), s->d_leaked),
            s->side == HT_DIFF_BASE ? "  [only in base]"
            : s->side == HT_DIFF_NEW ? "  [only in new]" : "");
    fprintf(f, "        %s\n", s->name);
  }
}

/* -- JSON ----------------------------------------------------------------- */

/* A model's summary as a JSON object. */
static void json_summary(FILE *f, const HtModel *m)
{
  fprintf(f, "{\"duration_ns\": %" PRIu64 ", \"allocs\": %" PRIu64 ", \"bytes\": %" PRIu64
          ", \"peak\": %" PRIu64 ", \"peak_blocks\": %" PRIu64 ", \"leaked\": %" PRIu64
          ", \"leaked_blocks\": %" PRIu64 ", \"temporary\": %" PRIu64 ", \"sites\": %" PRIu32
          "}", m->duration, m->allocs, m->bytes, m->peak, m->peak_n, m->heap, m->heap_n,
          m->temp, m->nloc);
}

/* A site's figures on one tape as a JSON object, or null. */
static void json_fig(FILE *f, const HtFig *x)
{
  if (!x) { fputs("null", f); return; }
  fprintf(f, "{\"allocs\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"peak\": %" PRIu64
          ", \"leaked\": %" PRIu64 ", \"leaked_blocks\": %" PRIu64 "}", x->allocs, x->bytes,
          x->peak, x->live, x->live_n);
}

/* The comparison as one JSON object. */
void ht_diff_json(FILE *f, const HtDiff *d, const HtDiffOpts *o)
{
  static const char *const keys[] = {"bytes", "calls", "peak", "leaked"};
  fprintf(f, "{\n  \"base\": ");
  ht_json_str(f, o->base_path, 0);
  fprintf(f, ",\n  \"new\": ");
  ht_json_str(f, o->new_path, 0);
  fprintf(f, ",\n  \"sort\": \"%s\",\n  \"summary\": {\"base\": ", keys[d->key]);
  json_summary(f, d->base);
  fprintf(f, ",\n    \"new\": ");
  json_summary(f, d->now);
  fprintf(f, ",\n    \"change\": {\"allocs\": %" PRId64 ", \"bytes\": %" PRId64
          ", \"peak\": %" PRId64 ", \"peak_blocks\": %" PRId64 ", \"leaked\": %" PRId64
          ", \"leaked_blocks\": %" PRId64 ", \"temporary\": %" PRId64 "}},\n",
          d->d_allocs, d->d_bytes, d->d_peak, d->d_peak_n, d->d_leaked, d->d_leaked_n,
          d->d_temp);
  fprintf(f, "  \"counts\": {\"sites\": %" PRIu32 ", \"both\": %" PRIu32 ", \"base_only\": %"
          PRIu32 ", \"new_only\": %" PRIu32 "},\n  \"sites\": [", d->nsite, d->nboth,
          d->nbase, d->nnew);
  uint32_t shown = diff_shown(d, o);
  for (uint32_t i = 0; i < shown; i++) {
    const HtDiffSite *s = &d->site[i];
    fputs(i ? ",\n    {\"location\": " : "\n    {\"location\": ", f);
    ht_json_str(f, s->name, 0);
    fprintf(f, ", \"side\": \"%s\", \"base\": ", diff_side(s->side));
    json_fig(f, s->base);
    fprintf(f, ", \"new\": ");
    json_fig(f, s->now);
    fprintf(f, ", \"change\": {\"allocs\": %" PRId64 ", \"bytes\": %" PRId64 ", \"peak\": %"
            PRId64 ", \"leaked\": %" PRId64 ", \"leaked_blocks\": %" PRId64 "}}",
            s->d_allocs, s->d_bytes, s->d_peak, s->d_leaked, s->d_leaked_n);
  }
  fprintf(f, "%s],\n  \"warnings\": [", shown ? "\n  " : "");
  ht_json_str(f, o->warning[0], 0);
  fprintf(f, ", ");
  ht_json_str(f, o->warning[1], 0);
  fprintf(f, "]\n}\n");
}

/* -- HTML ----------------------------------------------------------------- */


/* A change in a table cell, coloured by its sign. */
static void html_change(FILE *f, const char *text, int64_t v)
{
  fprintf(f, "<td class=\"%s\">", v > 0 ? "up" : v < 0 ? "down" : "");
  ht_xml_text(f, text);
  fputs("</td>", f);
}

/* The comparison as a self-contained HTML page. */
void ht_diff_html(FILE *f, const HtDiff *d, const HtDiffOpts *o)
{
  char b1[32], b2[32], b3[32];
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>heaptape diff</title>\n"
        "<style>body{font:14px sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #ddd}"
        "td.loc,th.loc{text-align:left;font-family:monospace}.up{color:#b00}"
        ".down{color:#070}.note{color:#666}</style></head><body>\n", f);
  fputs("<h1>heaptape diff</h1>\n<p>base: <code>", f);
  ht_xml_text(f, o->base_path);
  fputs("</code><br>new: <code>", f);
  ht_xml_text(f, o->new_path);
  fputs("</code></p>\n", f);
  for (int i = 0; i < 2; i++)
    if (o->warning[i]) {
      fprintf(f, "<p class=\"note\">warning (%s): ", i ? "new" : "base");
      ht_xml_text(f, o->warning[i]);
      fputs("</p>\n", f);
    }
  fputs("<h2>Summary</h2>\n<table><tr><th class=\"loc\"></th><th>base</th><th>new</th>"
        "<th>change</th></tr>\n", f);
  SumRow r[16];
  size_t nr = diff_summary_rows(d, r);
  for (size_t i = 0; i < nr; i++) {
    int64_t c = (int64_t)(r[i].b - r[i].a);
    fprintf(f, "<tr><td class=\"loc\">%s</td><td>%s</td><td>%s</td>", r[i].label,
            diff_value(b1, sizeof(b1), r[i].a, r[i].bytes),
            diff_value(b2, sizeof(b2), r[i].b, r[i].bytes));
    html_change(f, r[i].bytes ? diff_dbytes(b3, sizeof(b3), c) : diff_dcount(b3, sizeof(b3), c), c);
    fputs("</tr>\n", f);
  }
  uint32_t shown = diff_shown(d, o);
  fprintf(f, "</table>\n<h2>Sites</h2>\n<p>%" PRIu32 " sites (%" PRIu32 " on both, %" PRIu32
          " only in base, %" PRIu32 " only in new); %" PRIu32 " shown, by the absolute "
          "change in %s. A site is a location: function and file:line of the first frame "
          "outside the allocators.</p>\n", d->nsite, d->nboth, d->nbase, d->nnew, shown,
          ht_diff_key_name(d->key));
  fputs("<table><tr><th>#</th><th>bytes allocated</th><th>calls</th><th>at the peak</th>"
        "<th>leaked</th><th>on</th><th class=\"loc\">location</th></tr>\n", f);
  for (uint32_t i = 0; i < shown; i++) {
    const HtDiffSite *s = &d->site[i];
    fprintf(f, "<tr><td>%" PRIu32 "</td>", i + 1);
    html_change(f, diff_dbytes(b1, sizeof(b1), s->d_bytes), s->d_bytes);
    html_change(f, diff_dcount(b1, sizeof(b1), s->d_allocs), s->d_allocs);
    html_change(f, diff_dbytes(b1, sizeof(b1), s->d_peak), s->d_peak);
    html_change(f, diff_dbytes(b1, sizeof(b1), s->d_leaked), s->d_leaked);
    fprintf(f, "<td>%s</td><td class=\"loc\">", diff_side(s->side));
    ht_xml_text(f, s->name);
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n</body></html>\n", f);
}

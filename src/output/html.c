/* heaptape -- the HTML report: one offline page, the model's figures as
** embedded JSON (bounded by sites x buckets) drawn by inline script. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "../base/dec.h"
#include "../base/escape.h"
#include "../base/grow.h"

/* A JSON array of n unsigned numbers. */
static void html_u64s(FILE *f, const uint64_t *v, size_t n)
{
  char buf[4096];
  size_t at = 0;
  buf[at++] = '[';
  for (size_t i = 0; i < n; i++) {
    if (at > sizeof(buf) - HT_DEC_MAX - 2) { fwrite(buf, 1, at, f); at = 0; }
    if (i) buf[at++] = ',';
    at = (size_t)(ht_dec_u64(buf + at, v[i]) - buf);
  }
  buf[at++] = ']';
  fwrite(buf, 1, at, f);
}

/* [site,bytes,site,bytes,...] of entries [from, to). */
static void html_pairs(FILE *f, const uint32_t *site, const uint64_t *bytes, size_t from,
                       size_t to)
{
  char buf[4096];
  size_t at = 0;
  buf[at++] = '[';
  for (size_t i = from; i < to; i++) {
    if (at > sizeof(buf) - 2 * HT_DEC_MAX - 3) { fwrite(buf, 1, at, f); at = 0; }
    if (i > from) buf[at++] = ',';
    at = (size_t)(ht_dec_u64(buf + at, site[i]) - buf);
    buf[at++] = ',';
    at = (size_t)(ht_dec_u64(buf + at, bytes[i]) - buf);
  }
  buf[at++] = ']';
  fwrite(buf, 1, at, f);
}

/* Numbers and punctuation gathered in a buffer, numbers written by hand:
** the flame tree's 2 x 492k numbers of cc1plus through fprintf were a
** sixth of the page. */
typedef struct NumOut {
  FILE *f;
  size_t at;                 /* bytes in buf */
  char buf[8192];
} NumOut;

/* Room for a number and a few characters. */
static void num_room(NumOut *o)
{
  if (o->at > sizeof(o->buf) - HT_DEC_MAX - 8) {
    fwrite(o->buf, 1, o->at, o->f);
    o->at = 0;
  }
}

static void num_ch(NumOut *o, char c)
{
  num_room(o);
  o->buf[o->at++] = c;
}

static void num_u64(NumOut *o, uint64_t v)
{
  num_room(o);
  o->at = (size_t)(ht_dec_u64(o->buf + o->at, v) - o->buf);
}

static void num_flush(NumOut *o)
{
  fwrite(o->buf, 1, o->at, o->f);
  o->at = 0;
}

#define HTML_TOP 10     /* locations drawn apart in the stacked charts */
#define HTML_RSS 2000   /* RSS samples drawn at most (the largest of each bin) */

/* Sort context: the model and the figure (0 calls, 1 temporaries). */
static const HtModel *html_sort_m;
static int html_sort_k;

/* Locations by calls or temporaries, most first, then by index. */
static int html_loc_cmp(const void *a, const void *b)
{
  const HtLoc *x = &html_sort_m->loc[*(const uint32_t *)a], *y = &html_sort_m->loc[*(const uint32_t *)b];
  uint64_t u = html_sort_k ? x->f.temp : x->f.allocs, v = html_sort_k ? y->f.temp : y->f.allocs;
  if (u != v) return u < v ? 1 : -1;
  return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The RSS samples as [t, bytes, ...], at most HTML_RSS: the tape time cut
** into that many bins, each keeping its largest sample at its own time. */
static void html_rss(FILE *f, const HtSnaps *s, uint64_t dur)
{
  size_t n = s->nrss / 2;
  fputc('[', f);
  if (n <= HTML_RSS || !dur) {
    for (size_t i = 0; i < n; i++)
      fprintf(f, "%s%" PRIu64 ",%" PRIu64, i ? "," : "", s->rss[2 * i], s->rss[2 * i + 1]);
  } else {
    size_t best = SIZE_MAX, out = 0;
    uint64_t bin = 0;
    for (size_t i = 0; i <= n; i++) {
      uint64_t b = i < n ? (s->rss[2 * i] >= dur ? HTML_RSS - 1 : s->rss[2 * i] * HTML_RSS / dur) : UINT64_MAX;
      if (best != SIZE_MAX && b != bin) {
        fprintf(f, "%s%" PRIu64 ",%" PRIu64, out++ ? "," : "", s->rss[2 * best], s->rss[2 * best + 1]);
        best = SIZE_MAX;
      }
      if (i == n) break;
      bin = b;
      if (best == SIZE_MAX || s->rss[2 * i + 1] > s->rss[2 * best + 1]) best = i;
    }
  }
  fputc(']', f);
}

/* Calls (k = 0) or temporaries (k = 1) so far at every snapshot and at the
** end, for the HTML_TOP locations with the most and for all of them:
** {"locs": [...], "v": [[...] per location], "total": [...]}. */
static void html_cum(FILE *f, const HtModel *m, const HtSnaps *s, int k)
{
  uint32_t *ord = malloc((m->nloc ? m->nloc : 1) * sizeof(uint32_t));
  uint32_t *slot = malloc((m->nloc ? m->nloc : 1) * sizeof(uint32_t));
  uint64_t *run = calloc(HTML_TOP + 1, sizeof(uint64_t));
  if (!ord || !slot || !run) {
    free(ord); free(slot); free(run);
    fprintf(f, "null");
    return;
  }
  for (uint32_t i = 0; i < m->nloc; i++) { ord[i] = i; slot[i] = UINT32_MAX; }
  html_sort_m = m;
  html_sort_k = k;
  qsort(ord, m->nloc, sizeof(uint32_t), html_loc_cmp);
  uint32_t top = 0;
  while (top < m->nloc && top < HTML_TOP && (k ? m->loc[ord[top]].f.temp : m->loc[ord[top]].f.allocs))
    top++;
  fprintf(f, "{\"locs\":[");
  for (uint32_t i = 0; i < top; i++) {
    slot[ord[i]] = i;
    fprintf(f, "%s%" PRIu32, i ? "," : "", ord[i]);
  }
  fprintf(f, "],\"v\":[");
  for (uint32_t j = 0; j < top; j++) {
    memset(run, 0, (HTML_TOP + 1) * sizeof(uint64_t));
    fprintf(f, "%s[", j ? ",\n" : "");
    for (uint32_t t = 0; t < s->n; t++) {
      for (size_t e = s->dfirst[t]; e < s->dfirst[t + 1]; e++) {
        uint32_t loc = m->site[s->dsite[e]].loc;
        if (loc < m->nloc && slot[loc] == j) run[0] += s->dval[2 * e + k];
      }
      fprintf(f, "%s%" PRIu64, t ? "," : "", run[0]);
    }
    fprintf(f, "%s%" PRIu64 "]", s->n ? "," : "", k ? m->loc[ord[j]].f.temp : m->loc[ord[j]].f.allocs);
  }
  uint64_t end = 0;
  for (uint32_t i = 0; i < m->nsite; i++) end += k ? m->site[i].f.temp : m->site[i].f.allocs;
  fprintf(f, "],\"total\":[");
  for (uint32_t t = 0; t < s->n; t++) fprintf(f, "%" PRIu64 ",", k ? s->temp[t] : s->allocs[t]);
  fprintf(f, "%" PRIu64 "]}", end);
  free(ord); free(slot); free(run);
}

/* The access report's top sites (those with access counts per offset):
** {"sample": N, "accesses": N, "sites": [{"site", "blocks", "reads",
** "writes", "bread", "bwritten", "max", "counts": [per offset], "beyond"}]},
** or null. */
static void html_access(FILE *f, const HtAccRep *a, uint64_t sample)
{
  if (!a) { fputs("null", f); return; }
  fprintf(f, "{\"sample\":%" PRIu64 ",\"accesses\":%" PRIu64 ",\"sites\":[", sample, a->accesses);
  for (size_t i = 0; i < a->ntop && i < a->nsites; i++) {
    const HtAccSite *x = &a->sites[i];
    if (!x->hist) continue;
    fprintf(f, "%s{\"site\":", i ? ",\n" : "");
    ht_json_str(f, x->name, HT_JSON_SCRIPT);
    fprintf(f, ",\"blocks\":%" PRIu64 ",\"reads\":%" PRIu64 ",\"writes\":%" PRIu64
            ",\"bread\":%" PRIu64 ",\"bwritten\":%" PRIu64 ",\"max\":%" PRIu64
            ",\"beyond\":%" PRIu64 ",\"counts\":", x->blocks, x->reads, x->writes, x->bread,
            x->bwritten, x->max_size, x->hist_beyond);
    html_u64s(f, x->hist, (size_t)ht_accrep_span(x));
    fputc('}', f);
  }
  fputs("]}", f);
}

/* The data block: summary, timeline, frame tree, sites, snapshots, accesses. */
static void html_data(FILE *f, const HtModel *m, const HtFlame *fl, const HtSnaps *s,
                      const HtAccRep *acc, uint64_t acc_sample, const char *path)
{
  const HtHeader *h = ht_reader_header(m->r);
  fprintf(f, "{\"tape\":");
  ht_json_str(f, path, HT_JSON_SCRIPT);
  fprintf(f, ",\"program\":");
  ht_json_str(f, h->exe ? h->exe : "", HT_JSON_SCRIPT);
  fprintf(f, ",\"pid\":%" PRIu32 ",\"sampling\":%" PRIu64 ",\"start_ns\":%" PRIu64, h->pid,
          h->sample, h->start_ns);
  fprintf(f, ",\"summary\":{\"duration_ns\":%" PRIu64 ",\"allocs\":%" PRIu64
          ",\"bytes\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"peak\":%" PRIu64
          ",\"peak_blocks\":%" PRIu64 ",\"peak_ns\":%" PRIu64 ",\"leaked\":%" PRIu64
          ",\"leaked_blocks\":%" PRIu64 ",\"temporary\":%" PRIu64 ",\"rss_max\":%" PRIu64
          ",\"sites\":%" PRIu32 ",\"events\":%" PRIu64 "}",
          m->duration, m->allocs, m->bytes, m->frees, m->peak, m->peak_n, m->peak_ts,
          m->heap, m->heap_n, m->temp, m->rss_max, m->nsite, m->events);
  fprintf(f, ",\n\"timeline\":{\"res\":%" PRIu64 ",\"heap\":", m->tl.res);
  html_u64s(f, m->tl.heap, m->tl.n);
  fprintf(f, ",\"rss\":");
  html_u64s(f, m->tl.rss, m->tl.n);
  fprintf(f, "},\n\"names\":[");
  for (uint32_t i = 0; i < fl->names.n; i++) {
    if (i) fputc(',', f);
    ht_json_str(f, fl->names.str[i], HT_JSON_SCRIPT);
  }
  fprintf(f, "],\n\"np\":[");
  NumOut *o = malloc(sizeof(NumOut));
  for (uint32_t i = 0; i < fl->nnode && !o; i++)  /* (out of memory: the slow way) */
    fprintf(f, "%s%ld", i ? "," : "", i ? (long)fl->node[i].parent : -1L);
  if (o) {
    o->f = f;
    o->at = 0;
    for (uint32_t i = 0; i < fl->nnode; i++) {
      if (i) {
        num_ch(o, ',');
        num_u64(o, fl->node[i].parent);
      } else {
        num_ch(o, '-');
        num_ch(o, '1');
      }
    }
    num_flush(o);
  }
  fprintf(f, "],\n\"nn\":[");
  for (uint32_t i = 0; i < fl->nnode && !o; i++)
    fprintf(f, "%s%" PRIu32, i ? "," : "", fl->node[i].name);
  for (uint32_t i = 0; i < fl->nnode && o; i++) {
    if (i) num_ch(o, ',');
    num_u64(o, fl->node[i].name);
  }
  if (o) num_flush(o);
  fprintf(f, "],\n\"locs\":[");
  for (uint32_t i = 0; i < m->nloc; i++) {
    if (i) fputc(',', f);
    ht_json_str(f, m->loc[i].name, HT_JSON_SCRIPT);
  }
  /* Sites: [node, loc, allocs, bytes, peak, live, live_n, temp, frees]. */
  fprintf(f, "],\n\"sites\":[");
  for (uint32_t i = 0; i < m->nsite; i++) {
    const HtSite *x = &m->site[i];
    if (!o) {
      fprintf(f, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
              ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", i ? ",\n" : "", fl->site_node[i], x->loc,
              x->f.allocs, x->f.bytes, x->f.peak, x->f.live, x->f.live_n, x->f.temp, x->f.frees);
      continue;
    }
    const uint64_t v[] = {fl->site_node[i], x->loc, x->f.allocs, x->f.bytes, x->f.peak,
                          x->f.live, x->f.live_n, x->f.temp, x->f.frees};
    if (i) {
      num_ch(o, ',');
      num_ch(o, '\n');
    }
    for (size_t j = 0; j < HT_COUNTOF(v); j++) {
      num_ch(o, j ? ',' : '[');
      num_u64(o, v[j]);
    }
    num_ch(o, ']');
  }
  if (o) num_flush(o);
  free(o);
  fprintf(f, "],\n\"snap\":{\"step\":%" PRIu64 ",\"t\":", s->step);
  html_u64s(f, s->t, s->n);
  fprintf(f, ",\"heap\":");
  html_u64s(f, s->heap, s->n);
  fprintf(f, ",\"v\":[");
  for (uint32_t k = 0; k < s->n; k++) {
    fputs(k ? ",\n" : "", f);
    html_pairs(f, s->esite, s->ebytes, s->first[k], s->first[k + 1]);
  }
  fprintf(f, "]},\n\"hist\":");
  unsigned nh = HT_COUNTOF(m->hist);
  while (nh > 1 && !m->hist[nh - 1]) nh--;
  html_u64s(f, m->hist, nh);
  fprintf(f, ",\n\"rss\":");
  html_rss(f, s, m->duration);
  fprintf(f, ",\n\"cum\":{\"allocs\":");
  html_cum(f, m, s, 0);
  fprintf(f, ",\n\"temp\":");
  html_cum(f, m, s, 1);
  fprintf(f, "},\n\"access\":");
  html_access(f, acc, acc_sample);
  fprintf(f, "}");
}

/* The whole report as one HTML page. */
void ht_html_write(FILE *f, const HtModel *m, const HtFlame *fl, const HtSnaps *s,
                   const HtAccRep *acc, uint64_t acc_sample, const char *path)
{
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>heaptape: ", f);
  ht_xml_text(f, path);
  fputs("</title>\n<style>\n"
        "body{font:14px sans-serif;margin:16px 24px;color:#222;background:#fff}\n"
        "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 6px}\n"
        ".sum{color:#444;margin-bottom:8px}.sum b{color:#000}nav a{margin-right:14px}\n"
        "table{border-collapse:collapse;font:12px monospace}\n"
        "td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}\n"
        "td.l,th.l{text-align:left;max-width:560px;overflow:hidden;text-overflow:ellipsis}\n"
        "#leaks td.l{max-width:420px}\n"
        "th.sort{cursor:pointer;color:#06c}tr.can,#tree tr,#cc tr{cursor:pointer}tr:hover td{background:#f4f8ff}\n"
        "tr.sel td{background:#e4eeff}#cc table{margin:10px 0}.tog{color:#06c}\n"
        "svg{display:block}svg text.ax{font:11px sans-serif}#tl{cursor:crosshair}\n"
        "#sel{margin:6px 0;font:13px monospace}#errors{color:#b00}#match{font:12px monospace;margin-left:12px}\n"
        "select,input{font:13px sans-serif}.note{color:#555;font-size:13px}\n"
        "</style></head><body>\n"
        "<h1>heaptape report</h1><div class=\"sum\" id=\"summary\"></div>\n"
        "<nav><a href=\"#h-time\">over time</a><a href=\"#flame-h\">flame graph</a>"
        "<a href=\"#h-tree\">call trees</a><a href=\"#sites-h\">top locations</a>"
        "<a href=\"#h-sizes\">sizes</a><a href=\"#h-leaks\">leaks</a>", f);
  if (acc) fputs("<a href=\"#h-access\">accesses</a>", f);
  fputs("</nav>\n"
        "<div id=\"errors\"></div>\n"
        "<h2 id=\"h-time\">Heap over time</h2>\n"
        "<div class=\"note\">click a time to see what the heap held then (or open this page as report.html#t=SECONDS)</div>\n"
        "<div><svg id=\"tl\" height=\"220\"></svg></div>\n"
        "<div id=\"sel\">no time selected</div>\n"
        "<div><svg id=\"consumed\"></svg></div><div><svg id=\"callsch\"></svg></div>"
        "<div><svg id=\"tempch\"></svg></div>\n"
        "<h2 id=\"flame-h\">Flame graph</h2>\n"
        "<div>metric <select id=\"metric\"></select> search <input id=\"search\" size=\"30\" "
        "placeholder=\"regular expression\"><span id=\"match\"></span></div>\n"
        "<div><svg id=\"flame\" class=\"hf\"></svg></div>\n"
        "<h2 id=\"h-tree\">Call trees</h2>\n"
        "<div>view <select id=\"view\"><option value=\"bottomup\">bottom-up (allocating frames first)</option>"
        "<option value=\"topdown\">top-down (callers first)</option><option value=\"callers\">caller/callee"
        "</option></select> <span class=\"note\">click a row to expand it, a column heading to sort</span></div>\n"
        "<table id=\"tree\"></table><div id=\"cc\"></div>\n"
        "<h2 id=\"sites-h\">Top locations</h2><table id=\"sites\"></table>\n"
        "<h2 id=\"h-sizes\">Allocation sizes</h2><div><svg id=\"sizes\"></svg></div>\n"
        "<h2 id=\"h-leaks\">Leaks (live at the end)</h2><table id=\"leaks\"></table>\n", f);
  if (acc)
    fputs("<h2 id=\"h-access\">Heap accesses: counts per byte offset</h2>\n"
          "<div class=\"note\">the top sites by accesses (heaptape access): how many loads and "
          "stores touched each byte offset of their blocks (a modify counts once; an 8-byte "
          "load adds 1 to 8 offsets)</div>\n<div id=\"access\"></div>\n", f);
  fputs("<script id=\"ht-data\" type=\"application/json\">", f);
  html_data(f, m, fl, s, acc, acc_sample, path);
  fputs("</script>\n<script>\n", f);
  fputs(ht_flame_js, f);
  fputs(ht_html_js, f);
  fputs("</script>\n</body></html>\n", f);
}

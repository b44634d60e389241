/* heaptape -- the HTML report: one offline page, the model's figures as
** embedded JSON (bounded by sites x buckets) drawn by inline script. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"

/* The interval giving `buckets` snapshots over duration_ns (at step, 2 step,
** ... up to the end). Not rounded to a 1-2-5 value: rounding up gave as few
** as 40% of the buckets asked for. A tape shorter than buckets^2 ns (10 us
** for 100) may get fewer: the step is a whole number of ns. */
uint64_t ht_html_step(uint64_t duration_ns, unsigned buckets)
{
  if (!duration_ns || !buckets) return 0;
  uint64_t step = duration_ns / buckets;
  if (!step || duration_ns / step > buckets) step++;
  return step;
}

/* Make room for more elements of size sz in *v. */
static int html_grow(HtHtmlSnaps *s, void **v, size_t need, size_t *cap, size_t sz)
{
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void *nv = realloc(*v, c * sz);
  if (!nv) { s->oom = 1; return -1; }
  *v = nv;
  *cap = c;
  return 0;
}

/* HtSnapFn: record the live bytes of every site. */
void ht_html_snap(void *arg, const HtModel *m, uint64_t t_ns)
{
  HtHtmlSnaps *s = arg;
  if (s->oom) return;
  if (s->n + 2 > s->c) {
    uint32_t c = s->c ? s->c * 2 : 128;
    uint64_t *t = realloc(s->t, c * sizeof(uint64_t));
    if (t) s->t = t;
    uint64_t *hp = realloc(s->heap, c * sizeof(uint64_t));
    if (hp) s->heap = hp;
    size_t *fi = realloc(s->first, (c + 1) * sizeof(size_t));
    if (fi) s->first = fi;
    if (!t || !hp || !fi) { s->oom = 1; return; }
    s->c = c;
  }
  s->t[s->n] = t_ns;
  s->heap[s->n] = m->heap;
  s->first[s->n] = s->nent;
  for (uint32_t i = 0; i < m->nsite; i++) {
    if (!m->site[i].f.live) continue;
    if (html_grow(s, (void **)&s->ent, s->nent + 2, &s->cent, sizeof(uint64_t))) return;
    s->ent[s->nent++] = i;
    s->ent[s->nent++] = m->site[i].f.live;
  }
  s->n++;
  s->first[s->n] = s->nent;
}

/* Release the snapshots. */
void ht_html_snaps_free(HtHtmlSnaps *s)
{
  free(s->t); free(s->heap); free(s->ent); free(s->first);
  memset(s, 0, sizeof(*s));
}

/* A JSON array of n unsigned numbers. */
static void html_u64s(FILE *f, const uint64_t *v, size_t n)
{
  fputc('[', f);
  for (size_t i = 0; i < n; i++) fprintf(f, "%s%" PRIu64, i ? "," : "", v[i]);
  fputc(']', f);
}

/* The data block: summary, timeline, frame tree, sites, snapshots. */
static void html_data(FILE *f, const HtModel *m, const HtFlame *fl,
                      const HtHtmlSnaps *s, const char *path)
{
  const HtHeader *h = ht_reader_header(m->r);
  fprintf(f, "{\"tape\":");
  ht_flame_json_str(f, path);
  fprintf(f, ",\"program\":");
  ht_flame_json_str(f, h->exe ? h->exe : "");
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
  for (uint32_t i = 0; i < fl->nnames; i++) {
    if (i) fputc(',', f);
    ht_flame_json_str(f, fl->names[i]);
  }
  fprintf(f, "],\n\"np\":[");
  for (uint32_t i = 0; i < fl->nnode; i++)
    fprintf(f, "%s%ld", i ? "," : "", i ? (long)fl->node[i].parent : -1L);
  fprintf(f, "],\n\"nn\":[");
  for (uint32_t i = 0; i < fl->nnode; i++) fprintf(f, "%s%" PRIu32, i ? "," : "", fl->node[i].name);
  fprintf(f, "],\n\"locs\":[");
  for (uint32_t i = 0; i < m->nloc; i++) {
    if (i) fputc(',', f);
    ht_flame_json_str(f, m->loc[i].name);
  }
  /* Sites: [node, loc, allocs, bytes, peak, live, live_n, temp, frees]. */
  fprintf(f, "],\n\"sites\":[");
  for (uint32_t i = 0; i < m->nsite; i++) {
    const HtSite *x = &m->site[i];
    fprintf(f, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
            ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", i ? ",\n" : "", fl->site_node[i], x->loc,
            x->f.allocs, x->f.bytes, x->f.peak, x->f.live, x->f.live_n, x->f.temp, x->f.frees);
  }
  fprintf(f, "],\n\"snap\":{\"step\":%" PRIu64 ",\"t\":", s->step);
  html_u64s(f, s->t, s->n);
  fprintf(f, ",\"heap\":");
  html_u64s(f, s->heap, s->n);
  fprintf(f, ",\"v\":[");
  for (uint32_t k = 0; k < s->n; k++) {
    fputs(k ? ",\n" : "", f);
    html_u64s(f, s->ent + s->first[k], s->first[k + 1] - s->first[k]);
  }
  fprintf(f, "]}}");
}

/* The whole report as one HTML page. */
void ht_html_write(FILE *f, const HtModel *m, const HtFlame *fl,
                   const HtHtmlSnaps *s, const char *path)
{
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>heaptape: ", f);
  ht_flame_xml(f, path);
  fputs("</title>\n<style>\n"
        "body{font:14px sans-serif;margin:16px 24px;color:#222;background:#fff}\n"
        "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 6px}\n"
        ".sum{color:#444;margin-bottom:8px}.sum b{color:#000}\n"
        "table{border-collapse:collapse;font:12px monospace}\n"
        "td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:right}\n"
        "td.l,th.l{text-align:left;max-width:760px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}\n"
        "#tl{cursor:crosshair;border:1px solid #ddd;background:#fcfcfc}\n"
        "#sel{margin:6px 0;font:13px monospace}#errors{color:#b00}\n"
        "select,input{font:13px sans-serif}\n"
        "</style></head><body>\n"
        "<h1>heaptape report</h1><div class=\"sum\" id=\"summary\"></div>\n"
        "<div id=\"errors\"></div>\n"
        "<h2>Heap over time</h2>\n"
        "<div>click a time to see what the heap held then (or open this page as report.html#t=SECONDS)</div>\n"
        "<svg id=\"tl\" width=\"1220\" height=\"230\"></svg>\n"
        "<div id=\"sel\">no time selected</div>\n"
        "<h2>Flame graph</h2>\n"
        "<div>metric <select id=\"metric\"></select> search <input id=\"search\" size=\"30\" "
        "placeholder=\"regular expression\"></div>\n"
        "<svg id=\"flame\" class=\"hf\"></svg>\n"
        "<h2 id=\"sites-h\">Top sites</h2><table id=\"sites\"></table>\n"
        "<h2>Leaks (live at the end)</h2><table id=\"leaks\"></table>\n"
        "<script id=\"ht-data\" type=\"application/json\">", f);
  html_data(f, m, fl, s, path);
  fputs("</script>\n<script>\n", f);
  fputs(ht_flame_js, f);
  fputs(ht_html_js, f);
  fputs("</script>\n</body></html>\n", f);
}

/* heaptape -- the default report: summary, top sites by peak, calls and
** bytes, leaks, temporaries, the heap at a time; as text or as JSON. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "../analyze/callers.h"
#include "../analyze/frames.h"
#include "../base/escape.h"

/* Site orderings, one per list. */
typedef enum { BY_PEAK, BY_CALLS, BY_BYTES, BY_LEAK, BY_TEMP, BY_AT } SiteKey;

/* One list of the report. */
typedef struct SiteList {
  SiteKey key;               /* ordering */
  unsigned section;          /* HT_RS_* that enables it */
  const char *json;          /* JSON member name */
} SiteList;

static const SiteList report_lists[] = {
  {BY_PEAK, HT_RS_PEAK, "peak"},
  {BY_CALLS, HT_RS_CALLS, "calls"},
  {BY_BYTES, HT_RS_BYTES, "bytes"},
  {BY_LEAK, HT_RS_LEAKS, "leaks"},
  {BY_TEMP, HT_RS_TEMP, "temporary"},
  {BY_AT, HT_RS_AT, "at"},
};

/* -- Helpers -------------------------------------------------------------- */

/* Value of a site's figures under an ordering. */
static uint64_t report_key(const HtFig *f, SiteKey k)
{
  switch (k) {
  case BY_PEAK: return f->peak;
  case BY_CALLS: return f->allocs;
  case BY_BYTES: return f->bytes;
  case BY_LEAK: return f->live;
  case BY_TEMP: return f->temp;
  default: return f->at;
  }
}

/* The rows of the lists: locations (sites merged by their site key,
** ht_frames_site_name) or, with --by-stack, sites (one per stack). */
typedef struct Rows {
  const HtModel *m;          /* the model */
  int by_stack;              /* one row per site, not per location */
  uint32_t n;                /* rows */
  uint32_t *first;           /* merged: sites of location l are */
  uint32_t *order;           /* order[first[l] .. first[l + 1]) */
} Rows;

/* Group the sites by location (a counting sort); 0 or -1 on OOM. */
static int rows_init(Rows *w, const HtModel *m, int by_stack)
{
  memset(w, 0, sizeof(*w));
  w->m = m;
  w->by_stack = by_stack;
  w->n = by_stack ? m->nsite : m->nloc;
  if (by_stack) return 0;
  w->first = calloc((size_t)m->nloc + 1, sizeof(uint32_t));
  w->order = malloc((m->nsite ? m->nsite : 1) * sizeof(uint32_t));
  if (!w->first || !w->order) { free(w->first); free(w->order); return -1; }
  for (uint32_t i = 0; i < m->nsite; i++) w->first[m->site[i].loc + 1]++;
  for (uint32_t l = 0; l < m->nloc; l++) w->first[l + 1] += w->first[l];
  for (uint32_t i = 0; i < m->nsite; i++) {  /* stable: site order kept */
    uint32_t l = m->site[i].loc;
    w->order[w->first[l]++] = i;
  }
  for (uint32_t l = m->nloc; l > 0; l--) w->first[l] = w->first[l - 1];
  w->first[0] = 0;
  return 0;
}

/* Release what rows_init allocated. */
static void rows_free(Rows *w)
{
  free(w->first);
  free(w->order);
}

/* Figures of a row. */
static const HtFig *rows_fig(const Rows *w, uint32_t i)
{
  return w->by_stack ? &w->m->site[i].f : &w->m->loc[i].f;
}

/* Location name of a row. */
static const char *rows_name(const Rows *w, uint32_t i)
{
  return w->m->loc[w->by_stack ? w->m->site[i].loc : i].name;
}

/* Sort context for qsort_r. */
typedef struct SortCtx { const Rows *w; SiteKey k; } SortCtx;

/* Larger key first; ties by location name, then stack id. */
static int report_cmp(const void *a, const void *b, void *arg)
{
  const SortCtx *c = arg;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  uint64_t kx = report_key(rows_fig(c->w, x), c->k), ky = report_key(rows_fig(c->w, y), c->k);
  if (kx != ky) return kx > ky ? -1 : 1;
  int s = strcmp(rows_name(c->w, x), rows_name(c->w, y));
  if (s || !c->w->by_stack) return s;
  uint32_t sx = c->w->m->site[x].stack, sy = c->w->m->site[y].stack;
  return sx < sy ? -1 : sx > sy;
}

/* Rows with a non-zero key, sorted; returns how many (caller frees *out). */
static uint32_t report_sorted(const Rows *w, SiteKey k, uint32_t **out)
{
  uint32_t *v = malloc((w->n ? w->n : 1) * sizeof(uint32_t)), n = 0;
  *out = v;
  if (!v) return 0;
  for (uint32_t i = 0; i < w->n; i++)
    if (report_key(rows_fig(w, i), k)) v[n++] = i;
  SortCtx c = {w, k};
  qsort_r(v, n, sizeof(uint32_t), report_cmp, &c);
  return n;
}

/* A row's stack as sorted: its key, stack and site side by side (sorting
** site indexes went through the 200-byte sites for every comparison). */
typedef struct RowSite {
  uint64_t key;              /* the list's key of the site */
  uint32_t stack;            /* its stack */
  uint32_t site;             /* the site */
} RowSite;

/* A row's stacks: larger key first, ties by stack id. */
static int report_stack_cmp(const void *a, const void *b)
{
  const RowSite *x = a, *y = b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The sites (stacks) of a row with a non-zero key: returns how many, the
** first `max` of them (0: all) largest first into *out (caller frees), the
** sum of the others' keys into *rest. A row of cc1plus has 10^4 stacks and
** JSON lists 20: they are picked, not all sorted. */
static uint32_t report_row_sites(const Rows *w, uint32_t row, SiteKey k, uint32_t max,
                                 uint32_t **out, uint64_t *rest)
{
  uint32_t lo = w->by_stack ? 0 : w->first[row];
  uint32_t hi = w->by_stack ? 1 : w->first[row + 1];
  uint32_t *v = malloc((hi - lo ? hi - lo : 1) * sizeof(uint32_t)), n = 0, kept = 0;
  RowSite *rs = malloc((hi - lo ? hi - lo : 1) * sizeof(RowSite));
  *out = v;
  *rest = 0;
  if (!v || !rs) { free(rs); return 0; }
  uint64_t all = 0;
  for (uint32_t i = lo; i < hi; i++) {
    uint32_t si = w->by_stack ? row : w->order[i];
    const HtSite *s = &w->m->site[si];
    uint64_t key = report_key(&s->f, k);
    if (!key) continue;
    n++;
    all += key;
    RowSite x = {key, s->stack, si};
    if (!max) { rs[kept++] = x; continue; }
    /* rs[0..kept) holds the largest so far, in order: x goes in its place */
    if (kept == max && report_stack_cmp(&x, &rs[kept - 1]) >= 0) continue;
    uint32_t j = kept < max ? kept++ : kept - 1;
    for (; j > 0 && report_stack_cmp(&x, &rs[j - 1]) < 0; j--) rs[j] = rs[j - 1];
    rs[j] = x;
  }
  if (!max) qsort(rs, kept, sizeof(RowSite), report_stack_cmp);
  for (uint32_t i = 0; i < kept; i++) {
    v[i] = rs[i].site;
    all -= rs[i].key;
  }
  *rest = all;
  free(rs);
  return n;
}

/* Bytes for people: exact below 10 KiB ("9000 B"), else "1.50 MiB". */
static const char *report_bytes(char *buf, size_t len, uint64_t v)
{
  static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
  if (v < 10240) { snprintf(buf, len, "%" PRIu64 " B", v); return buf; }
  double d = (double)v / 1024;
  int u = 0;
  while (d >= 1024 && u < 3) { d /= 1024; u++; }
  snprintf(buf, len, "%.2f %s", d, unit[u]);
  return buf;
}

/* "block" or "blocks" (and the like) for a count. */
static const char *report_s(uint64_t n)
{
  return n == 1 ? "" : "s";
}

/* Percentage of part in whole (0 when whole is 0). */
static double report_pct(uint64_t part, uint64_t whole)
{
  return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Frames of a stack to show (ht_frames_levels): fills out[max] and returns
** how many levels the stack has after the drop. */
static size_t report_levels(const HtModel *m, uint32_t stack, HtFrameInfo *out,
                            size_t max)
{
  return ht_frames_levels(m->r, stack, m->o.wrappers, m->o.nwrappers, out, max);
}

/* The program line of the header: argv joined by spaces, else exe. */
static void report_program(const HtHeader *h, char *buf, size_t len)
{
  size_t n = 0;
  if (h->argv && h->argv_len) {
    for (size_t i = 0; i < h->argv_len && n + 1 < len; i++)
      buf[n++] = h->argv[i] ? h->argv[i] : ' ';
    while (n && buf[n - 1] == ' ') n--;
    buf[n] = 0;
  } else {
    snprintf(buf, len, "%s", h->exe && h->exe[0] ? h->exe : "(unknown)");
  }
}

/* -- Text ----------------------------------------------------------------- */

/* Rows with blocks live at the end. */
static uint32_t report_leak_rows(const Rows *w)
{
  uint32_t n = 0;
  for (uint32_t i = 0; i < w->n; i++) n += rows_fig(w, i)->live_n != 0;
  return n;
}

/* Print the summary block. */
static void text_summary(FILE *f, const HtModel *m, const HtReportOpts *o, const Rows *w)
{
  const HtHeader *h = ht_reader_header(m->r);
  char prog[512], b1[32], b2[32];
  report_program(h, prog, sizeof(prog));
  double secs = (double)m->duration / 1e9;
  fprintf(f, "heaptape report of %s\n\n", o->path ? o->path : "tape");
  fprintf(f, "SUMMARY\n");
  fprintf(f, "  program              %s (pid %" PRIu32 ", %s)\n", prog, h->pid,
          h->frontend && h->frontend[0] ? h->frontend : "native");
  if (h->sample)
    fprintf(f, "  recorded             a sample, one per %" PRIu64 " bytes on average\n",
            h->sample);
  else
    fprintf(f, "  recorded             every allocation\n");
  if (h->late_ns)                        /* heaptape attach: the process ran before */
    fprintf(f, "  started late         attached %.1f s after the process started; "
            "earlier blocks are not on the tape\n", (double)h->late_ns / 1e9);
  fprintf(f, "  duration             %.3f s\n", secs);
  fprintf(f, "  allocation calls     %" PRIu64 " (%.1f/s)\n", m->allocs,
          secs > 0 ? (double)m->allocs / secs : 0.0);
  if (m->reallocs)
    fprintf(f, "  reallocations        %" PRIu64 "\n", m->reallocs);
  fprintf(f, "  bytes allocated      %s\n", report_bytes(b1, sizeof(b1), m->bytes));
  fprintf(f, "  peak heap            %s in %" PRIu64 " block%s at %.3f s\n",
          report_bytes(b1, sizeof(b1), m->peak), m->peak_n, report_s(m->peak_n),
          (double)m->peak_ts / 1e9);
  uint32_t leak_sites = report_leak_rows(w);
  fprintf(f, "  leaked at exit       %s in %" PRIu64 " block%s from %" PRIu32 " site%s\n",
          report_bytes(b2, sizeof(b2), m->heap), m->heap_n, report_s(m->heap_n),
          leak_sites, report_s(leak_sites));
  fprintf(f, "  temporary            %" PRIu64 " allocations (%.1f%% of calls)\n",
          m->temp, report_pct(m->temp, m->allocs));
  if (m->unknown_frees && h->late_ns)
    fprintf(f, "  freed, allocated before recording  %" PRIu64 "\n", m->unknown_frees);
  else if (m->unknown_frees)
    fprintf(f, "  unknown frees        %" PRIu64 " (blocks allocated before recording)\n",
            m->unknown_frees);
  if (m->lost)
    fprintf(f, "  lost events          %" PRIu64 " (dropped by the recorder)\n", m->lost);
  if (m->oom)
    fprintf(f, "  incomplete           analysis ran out of memory\n");
}

/* One site's headline in a list. */
static void text_site_line(FILE *f, const HtModel *m, const HtFig *s, SiteKey k,
                           unsigned rank)
{
  char b1[32], b2[32];
  fprintf(f, "  #%u  ", rank);
  switch (k) {
  case BY_PEAK:
    fprintf(f, "%s at the peak (%.1f%%) in %" PRIu64 " block%s; %" PRIu64
            " call%s, %s allocated\n", report_bytes(b1, sizeof(b1), s->peak),
            report_pct(s->peak, m->peak), s->peak_n, report_s(s->peak_n), s->allocs,
            report_s(s->allocs), report_bytes(b2, sizeof(b2), s->bytes));
    break;
  case BY_CALLS:
    fprintf(f, "%" PRIu64 " call%s (%.1f%%); %s allocated, %s at the peak\n",
            s->allocs, report_s(s->allocs), report_pct(s->allocs, m->allocs),
            report_bytes(b1, sizeof(b1), s->bytes), report_bytes(b2, sizeof(b2), s->peak));
    break;
  case BY_BYTES:
    fprintf(f, "%s allocated (%.1f%%) in %" PRIu64 " call%s; %s at the peak\n",
            report_bytes(b1, sizeof(b1), s->bytes), report_pct(s->bytes, m->bytes),
            s->allocs, report_s(s->allocs), report_bytes(b2, sizeof(b2), s->peak));
    break;
  case BY_LEAK:
    fprintf(f, "%s leaked (%.1f%%) in %" PRIu64 " block%s; %" PRIu64 " call%s\n",
            report_bytes(b1, sizeof(b1), s->live), report_pct(s->live, m->heap),
            s->live_n, report_s(s->live_n), s->allocs, report_s(s->allocs));
    break;
  case BY_TEMP:
    fprintf(f, "%" PRIu64 " temporary (%.1f%% of its %" PRIu64 " calls)\n",
            s->temp, report_pct(s->temp, s->allocs), s->allocs);
    break;
  case BY_AT:
    fprintf(f, "%s (%.1f%%) in %" PRIu64 " block%s\n",
            report_bytes(b1, sizeof(b1), s->at), report_pct(s->at, m->at_heap), s->at_n,
            report_s(s->at_n));
    break;
  }
}

/* Levels from .. of lv (total levels, max of them in lv), one a line. */
static void text_levels_of(FILE *f, const HtFrameInfo *lv, size_t total, size_t max,
                           size_t from, const char *indent)
{
  size_t shown = total < max ? total : max;
  for (size_t i = from; i < shown; i++) {
    char name[1024];
    ht_frames_format(&lv[i], name, sizeof(name));
    fprintf(f, "%s%s%s\n", indent, name, lv[i].inlined ? " (inlined)" : "");
  }
  if (total > shown)
    fprintf(f, "%s... %zu more frame%s\n", indent, total - shown, report_s(total - shown));
}

/* A stack's levels from `from` on, up to depth of them, indented. */
static void text_levels(FILE *f, const HtModel *m, uint32_t stack, size_t from,
                        unsigned depth, const char *indent)
{
  HtFrameInfo lv[64];
  size_t max = depth < HT_COUNTOF(lv) ? depth : HT_COUNTOF(lv);
  size_t total = report_levels(m, stack, lv, max);
  if (total == 0) { fprintf(f, "%s(no stack)\n", indent); return; }
  text_levels_of(f, lv, total, max, from, indent);
}

/* Stacks of a merged row that print the same (they differ past the
** levels shown, or only in return addresses on the same lines). */
typedef struct Group {
  int64_t id;                /* the caller lines (HtCallers), -1 if unknown */
  uint64_t key;              /* sum of the list's key over its stacks */
  uint32_t n;                /* stacks */
  uint32_t bstack;           /* its first stack in the row's order (largest
                                key, then lowest id), and that stack's site: */
  uint32_t bsite;
  uint64_t bkey;             /* that stack's key */
} Group;

/* Larger key first (stable on the order of first appearance). */
static int report_group_cmp(const void *a, const void *b)
{
  const Group *x = a, *y = b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  if (x->bkey != y->bkey) return x->bkey > y->bkey ? -1 : 1;  /* first appearance */
  return x->bstack < y->bstack ? -1 : x->bstack > y->bstack;
}

/* The first `shown` groups of g[ng] in report_group_cmp's order, moved to
** its front (the rest left in any order). A row of cc1plus has 10^4 groups
** and shows 3: picking them costs a scan each, sorting all cost a tenth of
** the report. */
static void report_groups_top(Group *g, uint32_t ng, uint32_t shown)
{
  if (shown * 8 >= ng) { qsort(g, ng, sizeof(Group), report_group_cmp); return; }
  for (uint32_t i = 0; i < shown; i++) {
    uint32_t b = i;
    for (uint32_t j = i + 1; j < ng; j++)
      if (report_group_cmp(&g[j], &g[b]) < 0) b = j;
    Group t = g[i]; g[i] = g[b]; g[b] = t;
  }
}

/* A row's stacks: its one stack as it is; the stacks merged into a row
** under its location, with their callers and share of the list's key
** (stacks that print the same grouped), the first `paths` groups of them,
** largest first (0 = all). g has room for the row's stacks; slot[] holds 0
** for every caller id (c->nid), and does again on return. */
static void text_row(FILE *f, const Rows *w, HtCallers *c, Group *g, uint32_t *slot,
                     uint32_t row, SiteKey k, const HtReportOpts *o)
{
  const HtModel *m = w->m;
  /* The row's stacks in their own order, grouped as they come: a group's
  ** place among equal keys is that of its first stack in the row's order
  ** (the largest key, then the lowest id), so no sort of all the stacks
  ** (10^4 in a row of cc1plus, each row in several lists), and one walk
  ** over them (each a cache miss). */
  uint32_t lo = w->by_stack ? 0 : w->first[row], hi = w->by_stack ? 1 : w->first[row + 1];
  uint32_t n = 0, ng = 0;
  for (uint32_t i = lo; i < hi; i++) {
    uint32_t si = w->by_stack ? row : w->order[i];
    const HtSite *s = &m->site[si];
    uint64_t x = report_key(&s->f, k);
    if (!x) continue;
    n++;
    int64_t id = ht_callers_id(c, si);
    uint32_t j = id >= 0 && id < c->nid && slot[id] ? slot[id] - 1 : ng;
    if (j == ng) {           /* (out of memory: groups of their own) */
      g[ng++] = (Group){.id = id, .bkey = x, .bstack = s->stack, .bsite = si};
      if (id >= 0 && id < c->nid) slot[id] = ng;
    } else if (x > g[j].bkey || (x == g[j].bkey && s->stack < g[j].bstack)) {
      g[j].bkey = x;
      g[j].bstack = s->stack;
      g[j].bsite = si;
    }
    g[j].key += x;
    g[j].n++;
  }
  for (uint32_t i = 0; i < ng; i++)
    if (g[i].id >= 0 && g[i].id < c->nid) slot[g[i].id] = 0;
  if (n < 2) {               /* one stack: as it is */
    text_levels(f, m, n ? g[0].bstack : m->site[row].stack, 0, o->depth, "        ");
    return;
  }
  uint32_t shown = o->paths && o->paths < ng ? o->paths : ng;
  report_groups_top(g, ng, shown);
  uint64_t whole = report_key(rows_fig(w, row), k), rest = 0;
  fprintf(f, "        %s\n", rows_name(w, row));
  fprintf(f, "        from %" PRIu32 " stacks:\n", n);
  for (uint32_t i = 0; i < ng; i++) {
    if (i >= shown) { rest += g[i].key; continue; }
    fprintf(f, "        %5.1f%%  ", report_pct(g[i].key, whole));
    if (g[i].n > 1) fprintf(f, "(%" PRIu32 " stacks) ", g[i].n);
    char *text = g[i].id >= 0 ? ht_callers_text(c, g[i].bsite) : NULL;
    fputs(text ? text : "?\n", f);
    free(text);
  }
  if (shown < ng)
    fprintf(f, "        ... %" PRIu32 " more (%.1f%%)\n", ng - shown, report_pct(rest, whole));
}

/* The title of a list. */
static void text_title(FILE *f, const HtModel *m, SiteKey k, uint32_t n,
                       unsigned top, const HtReportOpts *o)
{
  char b[32];
  unsigned shown = n < top ? n : top;
  switch (k) {
  case BY_PEAK:
    fprintf(f, "PEAK: %s at %.3f s; top %u of %" PRIu32 " sites by bytes at the peak\n",
            report_bytes(b, sizeof(b), m->peak), (double)m->peak_ts / 1e9, shown, n);
    break;
  case BY_CALLS:
    fprintf(f, "CALLS: top %u of %" PRIu32 " sites by allocation calls\n", shown, n);
    break;
  case BY_BYTES:
    fprintf(f, "BYTES: top %u of %" PRIu32 " sites by bytes allocated\n", shown, n);
    break;
  case BY_LEAK:
    fprintf(f, "LEAKS: %s in %" PRIu64 " blocks; top %u of %" PRIu32 " sites\n",
            report_bytes(b, sizeof(b), m->heap), m->heap_n, shown, n);
    break;
  case BY_TEMP:
    fprintf(f, "TEMPORARY: %" PRIu64 " allocations; top %u of %" PRIu32 " sites\n",
            m->temp, shown, n);
    break;
  case BY_AT:
    fprintf(f, "HEAP AT %.3f s", (double)o->at_ns / 1e9);
    if (o->at_ns > m->duration)  /* nothing happens after the end */
      fprintf(f, " (after the tape's end at %.3f s: the heap at its end)",
              (double)m->duration / 1e9);
    fprintf(f, ": %s in %" PRIu64 " blocks; top %u of %" PRIu32 " sites\n",
            report_bytes(b, sizeof(b), m->at_heap), m->at_heap_n, shown, n);
    break;
  }
}

/* The default text report. */
void ht_report_text(FILE *f, const HtModel *m, const HtReportOpts *o)
{
  Rows w;
  HtCallers c;               /* each stack's caller lines, once for all lists */
  uint32_t *slot;            /* caller text id -> its group in a row + 1 */
  if (rows_init(&w, m, o->by_stack)) { fprintf(f, "out of memory\n"); return; }
  if (ht_callers_init(&c, m, o->depth)) {
    rows_free(&w);
    fprintf(f, "out of memory\n");
    return;
  }
  uint32_t most = 1;         /* stacks in the largest row */
  for (uint32_t l = 0; !o->by_stack && l < w.n; l++)
    if (w.first[l + 1] - w.first[l] > most) most = w.first[l + 1] - w.first[l];
  Group *g = malloc(most * sizeof(Group));
  if (!g || !(slot = calloc(c.nid ? c.nid : 1, sizeof(uint32_t)))) {
    free(g);
    ht_callers_free(&c);
    rows_free(&w);
    fprintf(f, "out of memory\n");
    return;
  }
  if (o->sections & HT_RS_SUMMARY) text_summary(f, m, o, &w);
  for (size_t l = 0; l < HT_COUNTOF(report_lists); l++) {
    SiteKey k = report_lists[l].key;
    if (!(o->sections & report_lists[l].section)) continue;
    uint32_t *v, n = report_sorted(&w, k, &v);
    fputc('\n', f);
    text_title(f, m, k, n, o->top, o);
    for (uint32_t i = 0; i < n && i < o->top; i++) {
      text_site_line(f, m, rows_fig(&w, v[i]), k, i + 1);
      text_row(f, &w, &c, g, slot, v[i], k, o);
    }
    free(v);
  }
  free(slot);
  free(g);
  ht_callers_free(&c);
  rows_free(&w);
}

/* -- JSON ----------------------------------------------------------------- */

/* The figures of a row or a stack as JSON members (no braces). */
static void json_fig(FILE *f, const HtFig *x)
{
  fprintf(f, "\"allocs\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"reallocs\": %" PRIu64
          ", \"frees\": %" PRIu64 ", \"temporary\": %" PRIu64 ", \"peak\": %" PRIu64
          ", \"peak_blocks\": %" PRIu64 ", \"leaked\": %" PRIu64 ", \"leaked_blocks\": %"
          PRIu64 ", \"at\": %" PRIu64 ", \"at_blocks\": %" PRIu64, x->allocs, x->bytes,
          x->reallocs, x->frees, x->temp, x->peak, x->peak_n, x->live, x->live_n, x->at,
          x->at_n);
}

/* A stack's frames as the members "stack": [...], "more_frames": N. */
static void json_frames(FILE *f, const HtModel *m, uint32_t stack, unsigned depth)
{
  fprintf(f, "\"stack\": [");
  HtFrameInfo lv[64];
  size_t max = depth < HT_COUNTOF(lv) ? depth : HT_COUNTOF(lv);
  size_t total = report_levels(m, stack, lv, max);
  size_t shown = total < max ? total : max;
  for (size_t i = 0; i < shown; i++) {
    char name[1024];
    ht_frames_format(&lv[i], name, sizeof(name));
    fprintf(f, "%s{\"name\": ", i ? ", " : "");
    ht_json_str(f, name, 0);
    if (lv[i].is_loc) fprintf(f, ", \"location_id\": %" PRIu64, lv[i].ip);
    else fprintf(f, ", \"addr\": \"0x%" PRIx64 "\"", lv[i].ip);
    fprintf(f, ", \"function\": ");
    ht_json_str(f, lv[i].func, 0);
    fprintf(f, ", \"file\": ");
    ht_json_str(f, lv[i].file, 0);
    fprintf(f, ", \"line\": %" PRIu64 ", \"module\": ", lv[i].line);
    ht_json_str(f, lv[i].module, 0);
    fprintf(f, ", \"inlined\": %s}", lv[i].inlined ? "true" : "false");
  }
  fprintf(f, "], \"more_frames\": %zu", total - shown);
}

/* A row as a JSON object: its figures, the frames of its largest stack,
** and every stack merged into it with its share of the list's key. */
static void json_site(FILE *f, const Rows *w, uint32_t row, SiteKey k, unsigned depth,
                      unsigned paths)
{
  const HtModel *m = w->m;
  uint64_t rest;
  uint32_t *v, n = report_row_sites(w, row, k, paths, &v, &rest);
  uint64_t whole = report_key(rows_fig(w, row), k);
  fprintf(f, "{\"location\": ");
  ht_json_str(f, rows_name(w, row), 0);
  fprintf(f, ", ");
  json_fig(f, rows_fig(w, row));
  fprintf(f, ", ");
  json_frames(f, m, n ? m->site[v[0]].stack : 0, depth);
  uint32_t shown = paths && paths < n ? paths : n;
  fprintf(f, ", \"stack_count\": %" PRIu32 ", \"more_stacks\": {\"count\": %" PRIu32
          ", \"share\": %.6f}", n, n - shown, whole ? (double)rest / (double)whole : 0.0);
  fprintf(f, ", \"stacks\": [");
  for (uint32_t i = 0; i < shown; i++) {
    const HtFig *x = &m->site[v[i]].f;
    fprintf(f, "%s{\"share\": %.6f, ", i ? ", " : "",
            whole ? (double)report_key(x, k) / (double)whole : 0.0);
    json_fig(f, x);
    fprintf(f, ", ");
    json_frames(f, m, m->site[v[i]].stack, depth);
    fputc('}', f);
  }
  fprintf(f, "]}");
  free(v);
}

/* The same content as one JSON object. */
void ht_report_json(FILE *f, const HtModel *m, const HtReportOpts *o)
{
  const HtHeader *h = ht_reader_header(m->r);
  char prog[512];
  report_program(h, prog, sizeof(prog));
  fprintf(f, "{\n  \"tape\": ");
  ht_json_str(f, o->path, 0);
  fprintf(f, ",\n  \"program\": ");
  ht_json_str(f, prog, 0);
  fprintf(f, ",\n  \"pid\": %" PRIu32 ",\n  \"frontend\": ", h->pid);
  ht_json_str(f, h->frontend && h->frontend[0] ? h->frontend : "native", 0);
  fprintf(f, ",\n  \"sampling_interval\": %" PRIu64 ",\n", h->sample);
  if (h->late_ns)                        /* heaptape attach */
    fprintf(f, "  \"attached_after_ns\": %" PRIu64 ",\n", h->late_ns);
  Rows w;
  if (rows_init(&w, m, o->by_stack)) { fprintf(f, "null\n"); return; }
  uint32_t leak_sites = 0, leak_locs = 0;
  for (uint32_t i = 0; i < m->nsite; i++) leak_sites += m->site[i].f.live_n != 0;
  for (uint32_t i = 0; i < m->nloc; i++) leak_locs += m->loc[i].f.live_n != 0;
  fprintf(f, "  \"summary\": {\"duration_ns\": %" PRIu64 ", \"allocs\": %" PRIu64
          ", \"reallocs\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"frees\": %" PRIu64
          ", \"peak\": %" PRIu64 ", \"peak_blocks\": %" PRIu64 ", \"peak_ns\": %" PRIu64
          ", \"leaked\": %" PRIu64 ", \"leaked_blocks\": %" PRIu64 ", \"leak_sites\": %"
          PRIu32 ", \"temporary\": %" PRIu64 ", \"unknown_frees\": %" PRIu64
          ", \"lost\": %" PRIu64 ", \"sites\": %" PRIu32 ", \"locations\": %" PRIu32
          ", \"leak_locations\": %" PRIu32 ", \"by_stack\": %s, \"incomplete\": %s},\n",
          m->duration, m->allocs, m->reallocs, m->bytes, m->frees, m->peak, m->peak_n,
          m->peak_ts, m->heap, m->heap_n, leak_sites, m->temp, m->unknown_frees,
          m->lost, m->nsite, m->nloc, leak_locs, o->by_stack ? "true" : "false",
          m->oom ? "true" : "false");
  if (o->sections & HT_RS_AT)
    fprintf(f, "  \"at_ns\": %" PRIu64 ", \"at_heap\": %" PRIu64 ", \"at_blocks\": %"
            PRIu64 ",\n", o->at_ns, m->at_heap, m->at_heap_n);
  for (size_t l = 0; l < HT_COUNTOF(report_lists); l++) {
    SiteKey k = report_lists[l].key;
    if (!(o->sections & report_lists[l].section)) continue;
    uint32_t *v, n = report_sorted(&w, k, &v);
    fprintf(f, "  \"%s\": [", report_lists[l].json);
    for (uint32_t i = 0; i < n && i < o->top; i++) {
      fputs(i ? ",\n    " : "\n    ", f);
      json_site(f, &w, v[i], k, o->depth, o->json_paths);
    }
    fprintf(f, "%s],\n", n ? "\n  " : "");
    free(v);
  }
  const HtTimeline *t = &m->tl;
  fprintf(f, "  \"timeline\": {\"resolution_ns\": %" PRIu64 ", \"heap\": [", t->res);
  for (uint32_t i = 0; i < t->n; i++) fprintf(f, "%s%" PRIu64, i ? ", " : "", t->heap[i]);
  fprintf(f, "], \"rss\": [");
  for (uint32_t i = 0; i < t->n; i++) fprintf(f, "%s%" PRIu64, i ? ", " : "", t->rss[i]);
  fprintf(f, "]},\n  \"warning\": ");
  ht_json_str(f, o->warning, 0);
  fprintf(f, "\n}\n");
  rows_free(&w);
}

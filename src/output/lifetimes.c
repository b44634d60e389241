/* heaptape -- object lifetime histograms from the operations stream: macro
** lifetime in % of the run's operations, and in time; never-freed apart. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/escape.h"
#include "../base/grow.h"
#include "lifetimes.h"
#include "../analyze/frames.h"
#include "svgplot.h"

/* Per-site figures of a stack, created if new; NULL on OOM. An array by
** stack id, not a hash map: the lookup was a fifth of a sealed tape's pass. */
static HtLifeSite *life_site(HtLife *l, uint32_t stack)
{
  if (stack < l->nsite_of && l->site_of[stack]) return &l->site[l->site_of[stack] - 1];
  if (stack >= l->nsite_of) {
    size_t cap = l->nsite_of;
    if (ht_grow(&l->site_of, &cap, (size_t)stack + 1, sizeof(uint32_t))) return NULL;
    memset(l->site_of + l->nsite_of, 0, (cap - l->nsite_of) * sizeof(uint32_t));
    l->nsite_of = cap;
  }
  if (ht_grow(&l->site, &l->csite, (size_t)l->nsite + 1, sizeof(HtLifeSite))) return NULL;
  l->site_of[stack] = l->nsite + 1;
  HtLifeSite *s = &l->site[l->nsite++];
  memset(s, 0, sizeof(*s));
  s->name = (char *)(uintptr_t)stack;  /* the stack until names are resolved */
  return s;
}

/* Time bucket of a lifetime in ns. */
static unsigned life_tbucket(uint64_t ns)
{
  unsigned b = ns ? 64 - (unsigned)__builtin_clzll(ns) : 0;
  return b < HT_LIFE_TBUCKETS ? b : HT_LIFE_TBUCKETS - 1;
}

/* The macro lifetime of a block living d operations, in %. */
static double life_pct(const HtLife *l, uint64_t d)
{
  return l->nops ? 100.0 * (double)d / (double)l->nops : 0;
}

/* Whether a lifetime of d operations is at least at threshold k: k < 0 at
** least the range's start and in bin -k or above, k = 1 past the range's
** end, k = 2 at least 1%. Each is monotone in d. */
static int life_at_least(const HtLife *l, uint64_t d, long k)
{
  double pct = life_pct(l, d);
  if (k == 1) return pct > l->o.hi;
  if (k == 2) return pct >= 1.0;
  if (pct < l->o.lo) return 0;
  if (k == 0) return 1;
  return l->o.hi > l->o.lo && (pct - l->o.lo) / (l->o.hi - l->o.lo) * l->o.bins >= (double)-k;
}

/* The fewest operations a lifetime at threshold k lasts (UINT64_MAX: none). */
static uint64_t life_first(const HtLife *l, long k)
{
  uint64_t lo = 0, hi = UINT64_MAX;  /* the answer is in [lo, hi] */
  if (!life_at_least(l, UINT64_MAX - 1, k)) return UINT64_MAX;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (life_at_least(l, mid, k)) hi = mid; else lo = mid + 1;
  }
  return lo;
}

/* The operation counts where the histogram's bins, the range and 1% start:
** a freed block is binned by comparing integers, with no division (two
** divisions a block were a third of the pass). The bins are those of
** (pct - lo) / (hi - lo) * bins, as the thresholds are found with it. */
static void life_thresholds(HtLife *l)
{
  for (unsigned b = 0; b < l->o.bins; b++) l->bin_d[b] = life_first(l, -(long)b);
  l->d_hi = life_first(l, 1);
  l->d_one = life_first(l, 2);
  l->guess = l->nops && l->o.hi > l->o.lo
    ? 100.0 / (double)l->nops / (l->o.hi - l->o.lo) * l->o.bins : 0;
}

/* The bin of an in-range lifetime of d operations. */
static unsigned life_bin(const HtLife *l, uint64_t d)
{
  double x = ((double)(d - l->bin_d[0])) * l->guess;
  unsigned b = x < (double)l->o.bins ? (unsigned)x : l->o.bins - 1;
  while (b + 1 < l->o.bins && d >= l->bin_d[b + 1]) b++;
  while (b > 0 && d < l->bin_d[b]) b--;
  return b;
}

/* Count one freed block. */
static void life_freed(HtLife *l, const HtRes *res)
{
  uint64_t d = res->op - res->blk.born_op;
  uint64_t ns = res->ev->ts - res->blk.born_ts;
  l->freed++;
  int in = d >= l->bin_d[0] && d < l->d_hi;
  if (in) {
    l->bin[life_bin(l, d)]++;
    if (ns < l->res_ns) l->below_res++; else l->tb[life_tbucket(ns)]++;
    l->in_range++;
  }
  if (!l->o.by_site) return;
  HtLifeSite *s = life_site(l, res->blk.stack);
  if (!s) { l->oom = 1; return; }
  s->freed++;
  s->in_range += in;
  s->sum_pct += life_pct(l, d);
  s->sum_ops += (double)(res->op - res->blk.born_op);
  s->sum_ns += (double)ns;
  s->short_n += d < l->d_one;
}

/* Order sites by name, then by blocks (descending). */
static int life_cmp_name(const void *a, const void *b)
{
  return strcmp(((const HtLifeSite *)a)->name, ((const HtLifeSite *)b)->name);
}

/* Order sites by blocks, descending, then name. */
static int life_cmp_blocks(const void *a, const void *b)
{
  const HtLifeSite *x = a, *y = b;
  if (x->blocks != y->blocks) return x->blocks < y->blocks ? 1 : -1;
  return strcmp(x->name, y->name);
}

/* Replace the sites' stacks by names and merge sites of one name. */
static void life_names(HtLife *l, const HtReader *r)
{
  char buf[1024];
  for (uint32_t i = 0; i < l->nsite; i++) {
    uint32_t stack = (uint32_t)(uintptr_t)l->site[i].name;
    ht_frames_site_name(r, stack, l->o.wrappers, l->o.nwrappers, buf, sizeof(buf), NULL);
    l->site[i].name = strdup(buf);
    if (!l->site[i].name) { l->site[i].name = strdup("?"); l->oom = 1; }
  }
  l->named = 1;
  qsort(l->site, l->nsite, sizeof(*l->site), life_cmp_name);
  uint32_t n = 0;
  for (uint32_t i = 0; i < l->nsite; i++) {
    HtLifeSite *s = &l->site[i];
    if (n && s->name && l->site[n - 1].name && !strcmp(l->site[n - 1].name, s->name)) {
      HtLifeSite *d = &l->site[n - 1];
      d->blocks += s->blocks; d->freed += s->freed; d->in_range += s->in_range;
      d->sum_pct += s->sum_pct; d->sum_ops += s->sum_ops; d->sum_ns += s->sum_ns;
      d->short_n += s->short_n;
      free(s->name);
    } else l->site[n++] = *s;
  }
  l->nsite = n;
  qsort(l->site, l->nsite, sizeof(*l->site), life_cmp_blocks);
}

/* The clock's resolution: full traces read a clock the writer thread
** publishes every tick (the header's resolution); sampled ones read it at each
** event (recorders wrote the tick there too). */
static uint64_t life_clock_res(const HtHeader *h)
{
  return h->sample || !h->clock_res ? 1 : h->clock_res;
}

/* Start empty for a tape of nops operations. */
int ht_life_init(HtLife *l, const HtLifeOpts *o, uint64_t nops, const HtHeader *h)
{
  memset(l, 0, sizeof(*l));
  l->o = *o;
  l->nops = nops;
  l->res_ns = life_clock_res(h);
  if (!l->o.bins) l->o.bins = 20;
  l->bin = calloc(l->o.bins, sizeof(uint64_t));
  l->bin_d = malloc(l->o.bins * sizeof(uint64_t));
  if (!l->bin || !l->bin_d) return -1;
  life_thresholds(l);
  return 0;
}

/* Count one resolved event. */
void ht_life_res(void *arg, const HtRes *res)
{
  HtLife *l = arg;
  if (res->ev->type == HT_EV_FREE && res->known) {
    l->never--;
    l->never_bytes -= res->blk.size;
    life_freed(l, res);
    return;
  }
  if (res->ev->type != HT_EV_ALLOC) return;
  if (res->dup) {  /* the tape lost its free: the block is gone, not freed */
    l->never--;
    l->never_bytes -= res->old.size;
  }
  l->never++;  /* until its free comes */
  l->never_bytes += res->blk.size;
  l->blocks++;
  if (l->o.by_site) {
    HtLifeSite *s = life_site(l, res->blk.stack);
    if (s) s->blocks++; else l->oom = 1;
  }
}

/* Site names, after the pass (the never-freed blocks are counted as it
** goes: no table of live blocks is asked). */
int ht_life_finish(HtLife *l, const HtResolve *rs, const HtReader *r)
{
  l->oom |= rs->oom;
  if (l->o.by_site) life_names(l, r);
  return l->oom ? -1 : 0;
}

/* Release what l owns. */
void ht_life_free(HtLife *l)
{
  if (l->named)
    for (uint32_t i = 0; i < l->nsite; i++) free(l->site[i].name);
  free(l->site);
  free(l->bin);
  free(l->bin_d);
  free(l->site_of);
  memset(l, 0, sizeof(*l));
}

/* A bar of width proportional to v / max. */
static void life_bar(FILE *f, uint64_t v, uint64_t max)
{
  int w = max ? (int)((40 * v + max - 1) / max) : 0;
  for (int i = 0; i < w; i++) fputc('#', f);
}

/* Lower bound of time bucket b in ns; no lifetime below the clock's
** resolution counts in a bucket (life_freed). */
static uint64_t life_tlow(const HtLife *l, unsigned b)
{
  uint64_t lo = b ? 1ull << (b - 1) : 0;
  return lo < l->res_ns && l->res_ns > 1 ? l->res_ns : lo;
}

/* A site's mean lifetime in time, or "< RES" below the clock's resolution. */
static void life_mean_time(char *buf, size_t len, const HtLife *l, const HtLifeSite *s)
{
  double mean = s->freed ? s->sum_ns / (double)s->freed : 0;
  char t[32];
  if (l->res_ns > 1 && mean < (double)l->res_ns) {
    ht_svg_fmt(t, sizeof(t), (double)l->res_ns, HT_SVG_NS);
    snprintf(buf, len, "< %s", t);
  } else ht_svg_fmt(buf, len, mean, HT_SVG_NS);
}

/* Histograms (and sites) as text. */
void ht_life_text(FILE *f, const char *tape, const HtLife *l, unsigned top)
{
  fprintf(f, "heaptape lifetimes of %s\n\n", tape);
  fprintf(f, "  operations       %" PRIu64 "\n  blocks           %" PRIu64 "\n", l->nops, l->blocks);
  fprintf(f, "  freed            %" PRIu64 "\n  never freed      %" PRIu64 " (%" PRIu64
          " bytes)\n", l->freed, l->never, l->never_bytes);
  fprintf(f, "  in range         %" PRIu64 " of the freed blocks live %g%%-%g%% of the run\n",
          l->in_range, l->o.lo, l->o.hi);
  char res[32];
  ht_svg_fmt(res, sizeof(res), (double)l->res_ns, HT_SVG_NS);
  if (l->res_ns > 1)
    fprintf(f, "  clock            %s resolution: shorter lifetimes read as < %s; the macro\n"
               "                   lifetime counts operations exactly\n", res, res);
  uint64_t max = 0;
  for (unsigned i = 0; i < l->o.bins; i++) if (l->bin[i] > max) max = l->bin[i];
  fprintf(f, "\nMACRO LIFETIME (%% of all operations between New and Free)\n");
  double w = (l->o.hi - l->o.lo) / l->o.bins;
  for (unsigned i = 0; i < l->o.bins; i++) {
    fprintf(f, "  %7.3f-%-8.3f %10" PRIu64 " ", l->o.lo + w * i, l->o.lo + w * (i + 1), l->bin[i]);
    life_bar(f, l->bin[i], max);
    fputc('\n', f);
  }
  fprintf(f, "\nLIFETIME IN TIME (freed blocks in range)\n");
  max = l->below_res;
  unsigned first = HT_LIFE_TBUCKETS, last = 0;
  for (unsigned b = 0; b < HT_LIFE_TBUCKETS; b++)
    if (l->tb[b]) { if (l->tb[b] > max) max = l->tb[b]; if (b < first) first = b; last = b; }
  if (l->below_res) {
    char lo[40];
    snprintf(lo, sizeof(lo), "< %s", res);
    fprintf(f, "  %-15s %10" PRIu64 " ", lo, l->below_res);
    life_bar(f, l->below_res, max);
    fputc('\n', f);
  }
  for (unsigned b = first; b <= last && first < HT_LIFE_TBUCKETS; b++) {
    char lo[32];
    ht_svg_fmt(lo, sizeof(lo), (double)life_tlow(l, b), HT_SVG_NS);
    fprintf(f, "  >= %-12s %10" PRIu64 " ", lo, l->tb[b]);
    life_bar(f, l->tb[b], max);
    fputc('\n', f);
  }
  if (!l->o.by_site) return;
  fprintf(f, "\nBY SITE (top %u by blocks)\n", top);
  fprintf(f, "  %10s %10s %10s %10s %12s %12s %8s  %s\n", "blocks", "freed", "never",
          "mean %", "mean ops", "mean time", "< 1%", "site");
  for (uint32_t i = 0; i < l->nsite && i < top; i++) {
    const HtLifeSite *s = &l->site[i];
    char t[40];
    life_mean_time(t, sizeof(t), l, s);
    fprintf(f, "  %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10.3f %12.1f %12s %8" PRIu64
            "  %s\n", s->blocks, s->freed, s->blocks - s->freed,
            s->freed ? s->sum_pct / (double)s->freed : 0.0,
            s->freed ? s->sum_ops / (double)s->freed : 0.0, t, s->short_n, s->name);
  }
}

/* The same figures as one JSON object. */
void ht_life_json(FILE *f, const char *tape, const HtLife *l, unsigned top, const char *warning)
{
  fputs("{\"tape\": ", f);
  ht_json_str(f, tape, HT_JSON_SCRIPT);
  fprintf(f, ", \"operations\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"freed\": %" PRIu64
          ", \"never_freed\": %" PRIu64 ", \"never_freed_bytes\": %" PRIu64 ",\n", l->nops,
          l->blocks, l->freed, l->never, l->never_bytes);
  fprintf(f, " \"range\": [%g, %g], \"in_range\": %" PRIu64 ", \"clock_resolution_ns\": %"
          PRIu64 ",\n \"macro\": [", l->o.lo, l->o.hi, l->in_range, l->res_ns);
  double w = (l->o.hi - l->o.lo) / l->o.bins;
  for (unsigned i = 0; i < l->o.bins; i++)
    fprintf(f, "%s{\"lo\": %.17g, \"hi\": %.17g, \"blocks\": %" PRIu64 "}", i ? ", " : "",
            l->o.lo + w * i, l->o.lo + w * (i + 1), l->bin[i]);
  fputs("],\n \"time\": [", f);
  const char *sep = "";
  if (l->below_res) {
    fprintf(f, "{\"lo_ns\": 0, \"hi_ns\": %" PRIu64 ", \"blocks\": %" PRIu64 "}", l->res_ns,
            l->below_res);
    sep = ", ";
  }
  for (unsigned b = 0; b < HT_LIFE_TBUCKETS; b++) {
    if (!l->tb[b]) continue;
    fprintf(f, "%s{\"lo_ns\": %" PRIu64 ", \"hi_ns\": %" PRIu64 ", \"blocks\": %" PRIu64 "}",
            sep, life_tlow(l, b), (uint64_t)1 << b, l->tb[b]);
    sep = ", ";
  }
  fputs("],\n \"sites\": ", f);
  if (!l->o.by_site) fputs("null", f);
  else {
    fputc('[', f);
    for (uint32_t i = 0; i < l->nsite && i < top; i++) {
      const HtLifeSite *s = &l->site[i];
      fprintf(f, "%s\n  {\"site\": ", i ? "," : "");
      ht_json_str(f, s->name, HT_JSON_SCRIPT);
      fprintf(f, ", \"blocks\": %" PRIu64 ", \"freed\": %" PRIu64 ", \"never\": %" PRIu64
              ", \"mean_pct\": %.17g, \"mean_ops\": %.17g, \"mean_ns\": %.17g, \"short\": %"
              PRIu64 "}", s->blocks, s->freed, s->blocks - s->freed,
              s->freed ? s->sum_pct / (double)s->freed : 0.0,
              s->freed ? s->sum_ops / (double)s->freed : 0.0,
              s->freed ? s->sum_ns / (double)s->freed : 0.0, s->short_n);
    }
    fputc(']', f);
  }
  fputs(",\n \"warning\": ", f);
  ht_json_str(f, warning, HT_JSON_SCRIPT);
  fputs("}\n", f);
}

/* Both histograms as an SVG picture. */
void ht_life_svg(FILE *f, const char *tape, const HtLife *l)
{
  char title[512];
  snprintf(title, sizeof(title), "heaptape lifetimes: %s (%" PRIu64 " blocks, %" PRIu64
           " never freed)", tape, l->blocks, l->never);
  ht_svg_open(f, 1000, 720, title);
  double *v = calloc(l->o.bins + HT_LIFE_TBUCKETS, sizeof(double));
  char (*lab)[32] = calloc(l->o.bins + HT_LIFE_TBUCKETS, 32);
  const char **lp = calloc(l->o.bins + HT_LIFE_TBUCKETS, sizeof(char *));
  if (v && lab && lp) {
    double w = (l->o.hi - l->o.lo) / l->o.bins;
    for (unsigned i = 0; i < l->o.bins; i++) {
      v[i] = (double)l->bin[i];
      snprintf(lab[i], 32, "%.3g", l->o.lo + w * i);
      lp[i] = lab[i];
    }
    char xl[160];
    snprintf(xl, sizeof(xl), "macro lifetime: %% of all operations (bins from %g%% to %g%%)",
             l->o.lo, l->o.hi);
    HtSvgBox b1 = {.x = 10, .y = 30, .w = 980, .h = 330, .title = "blocks by macro lifetime",
                   .xlabel = xl, .yfmt = HT_SVG_NUM};
    ht_svg_bars(f, &b1, lp, v, l->o.bins);
    unsigned first = HT_LIFE_TBUCKETS, last = 0, n = 0;
    for (unsigned b = 0; b < HT_LIFE_TBUCKETS; b++)
      if (l->tb[b]) { if (b < first) first = b; last = b; }
    if (l->below_res) {
      char res[24];
      ht_svg_fmt(res, sizeof(res), (double)l->res_ns, HT_SVG_NS);
      v[n] = (double)l->below_res;
      snprintf(lab[n], 32, "< %s", res);
      lp[n] = lab[n];
      n++;
    }
    for (unsigned b = first; b <= last && first < HT_LIFE_TBUCKETS; b++, n++) {
      v[n] = (double)l->tb[b];
      ht_svg_fmt(lab[n], 32, (double)life_tlow(l, b), HT_SVG_NS);
      lp[n] = lab[n];
    }
    HtSvgBox b2 = {.x = 10, .y = 380, .w = 980, .h = 330, .title = "blocks by lifetime in time",
                   .xlabel = "lifetime (lower bound of a power-of-two bucket)", .yfmt = HT_SVG_NUM};
    ht_svg_bars(f, &b2, lp, v, n);
  }
  free(v); free(lab); free(lp);
  ht_svg_close(f);
}

/* heaptape -- flame graphs: the frame tree of the model's sites, an
** interactive SVG with inline JS, collapsed stacks. Written for heaptape. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "../analyze/frames.h"
#include "../base/escape.h"
#include "../base/grow.h"
#include "../base/hash.h"

#define FL_W    1200   /* width of the frame area, px */
#define FL_PAD  10     /* left and right margin, px */
#define FL_ROW  17     /* height of a frame row, px */
#define FL_TOP  56     /* space above the frames (title, details, search) */
#define FL_MINW 0.4    /* narrower frames are not drawn (their parent holds them) */

static const char *const flame_metric[HT_FM_COUNT] = {
  "alloc", "inuse", "peak", "leaks", "temporary"
};

/* Name of a metric. */
const char *ht_flame_metric_name(HtFlameMetric k)
{
  return k < HT_FM_COUNT ? flame_metric[k] : "?";
}

/* Unit of a metric. */
const char *ht_flame_metric_unit(HtFlameMetric k)
{
  return k == HT_FM_TEMP ? "allocations" : "bytes";
}

/* Value of a site under a metric. */
uint64_t ht_flame_site_value(const HtSite *s, HtFlameMetric k)
{
  switch (k) {
  case HT_FM_ALLOC: return s->f.bytes;
  case HT_FM_INUSE: return s->f.at;
  case HT_FM_PEAK: return s->f.peak;
  case HT_FM_LEAKS: return s->f.live;
  case HT_FM_TEMP: return s->f.temp;
  default: return 0;
  }
}

/* -- The frame tree ------------------------------------------------------- */

/* Make room for one more element of size sz in *v (void ** as void *). */
static int flame_grow(HtFlame *fl, void *v, uint32_t used, size_t *cap, size_t sz)
{
  if (!ht_grow(v, cap, (size_t)used + 1, sz)) return 0;
  fl->oom = 1;
  return -1;
}

/* Index of a name, added if new; UINT32_MAX on OOM. */
static uint32_t flame_name(HtFlame *fl, const char *s)
{
  int64_t id = ht_strtab_intern(&fl->names, s, NULL);
  if (id < 0) { fl->oom = 1; return UINT32_MAX; }
  return (uint32_t)id;
}

/* Child of parent named name, added if new; UINT32_MAX on OOM. */
static uint32_t flame_child(HtFlame *fl, uint32_t parent, uint32_t name)
{
  uint64_t key = ((uint64_t)parent << 32) | name, *v = ht_map_get(&fl->child_of, key);
  if (v) return (uint32_t)*v;
  if (flame_grow(fl, &fl->node, fl->nnode, &fl->cnode, sizeof(HtFlameNode)))
    return UINT32_MAX;
  uint32_t id = fl->nnode++;
  HtFlameNode *n = &fl->node[id];
  memset(n, 0, sizeof(*n));
  n->name = name;
  n->parent = parent;
  n->depth = fl->node[parent].depth + 1;
  n->sib = fl->node[parent].child;
  fl->node[parent].child = id + 1;
  if (n->depth > fl->maxdepth) fl->maxdepth = n->depth;
  if (ht_map_put(&fl->child_of, key, id)) fl->oom = 1;
  return id;
}

/* Flame name of a level: the function where known, else the display name. */
static void flame_level_name(const HtFrameInfo *fi, char *buf, size_t len)
{
  if (!fi->is_loc && fi->known && fi->func) snprintf(buf, len, "%s", fi->func);
  else ht_frames_format(fi, buf, len);
}

/* Levels of a stack, innermost first, as the report shows them
** (ht_frames_levels); returns how many are in out[max]. */
static size_t flame_levels(const HtModel *m, uint32_t stack, HtFrameInfo *out, size_t max)
{
  size_t n = ht_frames_levels(m->r, stack, m->o.wrappers, m->o.nwrappers, out, max);
  return n < max ? n : max;
}

/* The frame tree of every site. */
int ht_flame_build(HtFlame *fl, const HtModel *m)
{
  memset(fl, 0, sizeof(*fl));
  if (ht_strtab_init(&fl->names, 1024) || ht_map_init(&fl->child_of, 1024)) {
    ht_flame_free(fl);
    return -1;
  }
  fl->site_node = calloc(m->nsite ? m->nsite : 1, sizeof(uint32_t));
  uint32_t root = flame_name(fl, "all");
  if (!fl->site_node || root || flame_grow(fl, &fl->node, 0, &fl->cnode,
                                           sizeof(HtFlameNode))) {
    ht_flame_free(fl);
    return -1;
  }
  memset(&fl->node[0], 0, sizeof(HtFlameNode));
  fl->nnode = 1;
  fl->nsite = m->nsite;
  static HtFrameInfo lv[4096];
  for (uint32_t s = 0; s < m->nsite && !fl->oom; s++) {
    size_t n = flame_levels(m, m->site[s].stack, lv, HT_COUNTOF(lv));
    uint32_t at = 0;
    if (n == 0) at = flame_child(fl, 0, flame_name(fl, "(no stack)"));
    for (size_t i = n; i-- > 0 && at != UINT32_MAX;) {
      char name[1024];
      flame_level_name(&lv[i], name, sizeof(name));
      uint32_t nm = flame_name(fl, name);
      at = nm == UINT32_MAX ? UINT32_MAX : flame_child(fl, at, nm);
    }
    if (at == UINT32_MAX) break;
    fl->site_node[s] = at;
  }
  if (fl->oom) { ht_flame_free(fl); return -1; }
  return 0;
}

/* Release what fl owns. */
void ht_flame_free(HtFlame *fl)
{
  ht_strtab_free(&fl->names);
  free(fl->node); free(fl->site_node);
  ht_map_free(&fl->child_of);
  memset(fl, 0, sizeof(*fl));
}

/* Node values under a metric. */
uint64_t ht_flame_values(HtFlame *fl, const HtModel *m, HtFlameMetric k)
{
  for (uint32_t i = 0; i < fl->nnode; i++) fl->node[i].v = 0;
  for (uint32_t s = 0; s < fl->nsite; s++) fl->node[fl->site_node[s]].v +=
    ht_flame_site_value(&m->site[s], k);
  /* Children always come after their parent: sum from the end. */
  for (uint32_t i = fl->nnode; i-- > 1;) fl->node[fl->node[i].parent].v += fl->node[i].v;
  return fl->node[0].v;
}

/* -- SVG ------------------------------------------------------------------ */

/* Sort context: the tree. */
static const HtFlame *flame_sort_fl;

/* Children by name. */
static int flame_cmp(const void *a, const void *b)
{
  const HtFlame *fl = flame_sort_fl;
  return strcmp(fl->names.str[fl->node[*(const uint32_t *)a].name],
                fl->names.str[fl->node[*(const uint32_t *)b].name]);
}

/* Fill colour of a frame name: warm hues from its hash, runtime frames green. */
static void flame_colour(const char *name, char *buf, size_t len)
{
  uint64_t h = ht_fnv1a(name);
  unsigned hue = (unsigned)(h % 50), sat = 70 + (unsigned)(h >> 8) % 25;
  unsigned lig = 55 + (unsigned)(h >> 16) % 12;
  if (name[0] == '@' || !strncmp(name, "TRACE", 5) || !strcmp(name, "INTERNAL"))
    hue = 90 + hue;
  snprintf(buf, len, "hsl(%u,%u%%,%u%%)", hue, sat, lig);
}

/* One node and, recursively, its children at x (fraction of the root). */
static void flame_svg_node(FILE *f, const HtFlame *fl, uint32_t id, double x, double total)
{
  const HtFlameNode *n = &fl->node[id];
  double w = total ? (double)n->v / total : 0;
  if (id && w * FL_W < FL_MINW) return;
  const char *name = fl->names.str[n->name];
  char col[48];
  if (id) flame_colour(name, col, sizeof(col));
  else snprintf(col, sizeof(col), "#c8c8c8");
  double px = FL_PAD + x * FL_W, pw = w * FL_W;
  unsigned y = FL_TOP + (fl->maxdepth - n->depth) * FL_ROW;
  fprintf(f, "<g class=\"f\" data-i=\"%" PRIu32 "\" data-p=\"%ld\" data-d=\"%" PRIu32
          "\" data-x=\"%.9f\" data-w=\"%.9f\" data-v=\"%" PRIu64 "\" data-n=\"",
          id, id ? (long)n->parent : -1L, n->depth, x, w, n->v);
  ht_xml_text(f, name);
  fprintf(f, "\"><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%u\" fill=\"%s\" rx=\"2\"/>"
          "<text x=\"%.2f\" y=\"%u\">", px, y, pw, FL_ROW - 1, col, px + 3, y + FL_ROW - 5);
  size_t fit = pw > 12 ? (size_t)((pw - 6) / 7) : 0, len = strlen(name);
  if (fit >= len) ht_xml_text(f, name);
  else if (fit >= 3) {
    char buf[1024];
    snprintf(buf, sizeof(buf), "%.*s..", (int)(fit - 2 < sizeof(buf) - 3 ? fit - 2 : sizeof(buf) - 3), name);
    ht_xml_text(f, buf);
  }
  fputs("</text></g>\n", f);
  uint32_t nk = 0;
  for (uint32_t c = n->child; c; c = fl->node[c - 1].sib) nk++;
  if (!nk) return;
  uint32_t *kids = malloc(nk * sizeof(uint32_t));
  if (!kids) return;
  nk = 0;
  for (uint32_t c = n->child; c; c = fl->node[c - 1].sib) kids[nk++] = c - 1;
  flame_sort_fl = fl;
  qsort(kids, nk, sizeof(uint32_t), flame_cmp);
  for (uint32_t i = 0; i < nk; i++) {
    flame_svg_node(f, fl, kids[i], x, total);
    x += total ? (double)fl->node[kids[i]].v / total : 0;
  }
  free(kids);
}

/* The interactive SVG of the current values. */
void ht_flame_svg(FILE *f, const HtFlame *fl, const char *title, HtFlameMetric k)
{
  unsigned width = FL_W + 2 * FL_PAD, height = FL_TOP + (fl->maxdepth + 1) * FL_ROW + 24;
  uint64_t total = fl->node[0].v;
  fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
          "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\""
          " viewBox=\"0 0 %u %u\" class=\"hf\" data-metric=\"%s\" data-unit=\"%s\""
          " data-total=\"%" PRIu64 "\" data-pad=\"%d\" data-width=\"%d\" onload=\"hfSetup(this)\">\n",
          width, height, width, height, ht_flame_metric_name(k), ht_flame_metric_unit(k),
          total, FL_PAD, FL_W);
  fputs("<style>text{font:12px monospace;fill:#000;pointer-events:none}"
        "g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:0.6}"
        ".hf-t{font:16px sans-serif}.hf-b{fill:#06c;cursor:pointer;font:13px sans-serif;pointer-events:all}"
        "</style>\n", f);
  fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fdfaf3\"/>\n"
          "<text class=\"hf-t\" x=\"%u\" y=\"22\" text-anchor=\"middle\" style=\"font:16px sans-serif\">",
          width / 2);
  ht_xml_text(f, title);
  fprintf(f, "</text>\n<text class=\"hf-b hf-rst\" x=\"%d\" y=\"22\" style=\"fill:#06c;pointer-events:all;cursor:pointer\">Reset zoom</text>\n"
          "<text class=\"hf-b hf-srch\" x=\"%d\" y=\"22\" text-anchor=\"end\" style=\"fill:#06c;pointer-events:all;cursor:pointer\">Search</text>\n"
          "<text class=\"hf-det\" x=\"%d\" y=\"44\"> </text>\n",
          FL_PAD, width - FL_PAD, FL_PAD);
  fprintf(f, "<text class=\"hf-match\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n",
          width - FL_PAD, height - 6);
  fprintf(f, "<g class=\"hf-frames\">\n");
  flame_svg_node(f, fl, 0, 0.0, (double)total);
  fprintf(f, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
          ht_flame_js);
}

/* -- Collapsed stacks ----------------------------------------------------- */

/* A name with the separators of the folded format replaced. */
static void flame_folded_name(FILE *f, const char *s)
{
  for (; *s; s++) fputc(*s == ';' ? ':' : *s == '\n' ? ' ' : *s, f);
}

/* Collapsed stacks, one line per site with a non-zero value. */
void ht_flame_folded(FILE *f, const HtFlame *fl, const HtModel *m, HtFlameMetric k)
{
  uint32_t path[8192];
  for (uint32_t s = 0; s < fl->nsite; s++) {
    uint64_t v = ht_flame_site_value(&m->site[s], k);
    if (!v) continue;
    uint32_t n = 0;
    for (uint32_t at = fl->site_node[s]; at && n < HT_COUNTOF(path); at = fl->node[at].parent)
      path[n++] = at;
    while (n-- > 0) {
      flame_folded_name(f, fl->names.str[fl->node[path[n]].name]);
      if (n) fputc(';', f);
    }
    fprintf(f, " %" PRIu64 "\n", v);
  }
}

/* heaptape -- flame graphs: the frame tree of the model's sites, an
** interactive SVG with inline JS, collapsed stacks. Written for heaptape. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "../analyze/frames.h"
#include "../base/dec.h"
#include "../base/escape.h"
#include "../base/grow.h"
#include "../base/hash.h"

#define FL_W    1200   /* width of the frame area, px */
#define FL_PAD  10     /* left and right margin, px */
#define FL_ROW  17     /* height of a frame row, px */
#define FL_TOP  56     /* space above the frames (title, details, search) */
#define FL_MINW 0.4    /* narrower frames are not drawn (their parent holds them) */
#define FL_DEEP 16     /* what is under a narrower box shows when zoomed in */

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

/* Children a node's list is searched among; a node with more has them in
** child_of. Most nodes of a tree have one child or none: their lookups
** look at a node just touched, where a map probe missed the cache (on
** cc1plus's 492k nodes the probes were a fifth of the flame graph). */
#define FLAME_LIST 8

/* Child of parent named name, added if new; UINT32_MAX on OOM. A parent's
** children are all in its list, and in child_of too once they are more
** than FLAME_LIST: a list walked that far says which (no count kept in the
** node: 24 bytes, not 32, for cc1plus's 492k). */
static uint32_t flame_child(HtFlame *fl, uint32_t parent, uint32_t name)
{
  uint64_t key = ((uint64_t)parent << 32) | name, *v;
  uint32_t nkid = 0;
  for (uint32_t c = fl->node[parent].child; c && nkid <= FLAME_LIST; c = fl->node[c - 1].sib) {
    if (fl->node[c - 1].name == name) return c - 1;
    nkid++;
  }
  if (nkid > FLAME_LIST && (v = ht_map_get(&fl->child_of, key))) return (uint32_t)*v;
  if (flame_grow(fl, &fl->node, fl->nnode, &fl->cnode, sizeof(HtFlameNode)))
    return UINT32_MAX;
  uint32_t id = fl->nnode++;
  HtFlameNode *n = &fl->node[id], *p = &fl->node[parent];
  memset(n, 0, sizeof(*n));
  n->name = name;
  n->parent = parent;
  n->sib = p->child;
  p->child = id + 1;
  if (nkid == FLAME_LIST) {  /* the list grew long: into the map */
    for (uint32_t c = p->child; c; c = fl->node[c - 1].sib)
      if (ht_map_put(&fl->child_of, (uint64_t)parent << 32 | fl->node[c - 1].name, c - 1))
        fl->oom = 1;
  } else if (nkid > FLAME_LIST && ht_map_put(&fl->child_of, key, id)) {
    fl->oom = 1;
  }
  return id;
}

/* Flame name of a level: the function where known, else the display name. */
static void flame_level_name(const HtFrameInfo *fi, char *buf, size_t len)
{
  if (!fi->is_loc && fi->known && fi->func) snprintf(buf, len, "%s", fi->func);
  else ht_frames_format(fi, buf, len);
}

/* Name id of a level, each level named once; UINT32_MAX on OOM. */
static uint32_t flame_level(HtFlame *fl, const HtFrameInfo *fi)
{
  uint64_t key, *v = NULL;
  int keyed = ht_frames_level_key(fi, &key);
  if (keyed && (v = ht_map_get(&fl->level_of, key))) return (uint32_t)*v;
  char name[1024];
  flame_level_name(fi, name, sizeof(name));
  uint32_t nm = flame_name(fl, name);
  if (nm != UINT32_MAX && keyed && ht_map_put(&fl->level_of, key, nm)) fl->oom = 1;
  return nm;
}

/* Levels of a stack, innermost first, as the report shows them
** (ht_frames_levels); returns how many are in out[max]. */
static size_t flame_levels(const HtModel *m, uint32_t stack, HtFrameInfo *out, size_t max)
{
  size_t n = ht_frames_levels(m->r, stack, m->o.wrappers, m->o.nwrappers, out, max);
  return n < max ? n : max;
}

/* Frames ht_reader_stack_frames gives of a stack (a deeper stack is cut
** there, so its levels are taken the long way). */
#define FLAME_FRAMES 256

/* The node of every level of stack node `node` and its callers (no level
** above a site's first kept one is plumbing), memo[node] = node + 1: each
** stack node's frame is named once, not once per site under it. */
static uint32_t flame_path(HtFlame *fl, const HtModel *m, uint32_t *memo, uint32_t node)
{
  uint32_t chain[FLAME_FRAMES];
  size_t k = 0;
  for (; node && !memo[node] && k < FLAME_FRAMES; node = ht_reader_stack_parent(m->r, node))
    chain[k++] = node;
  uint32_t at = node ? memo[node] - 1 : 0;
  while (k-- > 0 && at != UINT32_MAX) {
    HtFrameInfo fi[16];
    size_t n = ht_frames_info(m->r, ht_reader_stack_frame(m->r, chain[k]), fi, 16);
    for (size_t j = n; j-- > 0 && at != UINT32_MAX;) {
      uint32_t nm = flame_level(fl, &fi[j]);
      at = nm == UINT32_MAX ? UINT32_MAX : flame_child(fl, at, nm);
    }
    if (at != UINT32_MAX) memo[chain[k]] = at + 1;
  }
  return at;
}

/* The node of a site's stack through the memo: the plumbing levels at its
** inner end dropped as ht_frames_levels drops them; 0 when it must be
** taken the long way (no level kept, or too deep). */
static uint32_t flame_site_fast(HtFlame *fl, const HtModel *m, uint32_t *memo, uint32_t stack)
{
  uint32_t node;
  unsigned j;
  if (!memo || ht_reader_stack_depth(m->r, stack) > FLAME_FRAMES ||
      !ht_model_first_kept(m, stack, &node, &j))
    return 0;
  HtFrameInfo fi[16];
  size_t n = ht_frames_info(m->r, ht_reader_stack_frame(m->r, node), fi, 16);
  uint32_t at = flame_path(fl, m, memo, ht_reader_stack_parent(m->r, node));
  for (size_t i = n; i-- > j && at != UINT32_MAX;) {
    uint32_t nm = flame_level(fl, &fi[i]);
    at = nm == UINT32_MAX ? UINT32_MAX : flame_child(fl, at, nm);
  }
  return at;
}

/* The node of a site's stack, every level looked up. */
static uint32_t flame_site_slow(HtFlame *fl, const HtModel *m, uint32_t stack)
{
  static HtFrameInfo lv[FLAME_FRAMES * 16];
  size_t n = flame_levels(m, stack, lv, HT_COUNTOF(lv));
  uint32_t at = 0;
  if (n == 0) at = flame_child(fl, 0, flame_name(fl, "(no stack)"));
  for (size_t i = n; i-- > 0 && at != UINT32_MAX;) {
    uint32_t nm = flame_level(fl, &lv[i]);
    at = nm == UINT32_MAX ? UINT32_MAX : flame_child(fl, at, nm);
  }
  return at;
}

/* The frame tree of every site. */
int ht_flame_build(HtFlame *fl, const HtModel *m)
{
  memset(fl, 0, sizeof(*fl));
  if (ht_strtab_init(&fl->names, 1024) || ht_map_init(&fl->child_of, 1024) ||
      ht_map_init(&fl->level_of, 1024)) {
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
  /* The tree has about as many nodes as the tape has stack nodes (cc1plus:
  ** 492k for 559k): room for that made once, not zeroed (flame_child
  ** clears each node it makes: what is not used is never touched); a
  ** bigger tree still grows. */
  size_t guess = (size_t)ht_reader_stack_count(m->r) + 1;
  HtFlameNode *room = guess > fl->cnode && guess < UINT32_MAX
                    ? ht_huge_realloc(fl->node, fl->cnode * sizeof(HtFlameNode),
                                      guess * sizeof(HtFlameNode)) : fl->node;
  if (room && guess > fl->cnode && guess < UINT32_MAX) {
    fl->node = room;
    fl->cnode = guess;
  }
  if (!room) {
    ht_flame_free(fl);
    return -1;
  }
  /* stack node -> flame node + 1 (NULL when out of memory: the long way) */
  uint32_t *memo = calloc((size_t)ht_reader_stack_count(m->r) + 1, sizeof(uint32_t));
  for (uint32_t s = 0; s < m->nsite && !fl->oom; s++) {
    uint32_t at = flame_site_fast(fl, m, memo, m->site[s].stack);
    if (at == 0) at = flame_site_slow(fl, m, m->site[s].stack);
    if (at == UINT32_MAX) break;
    fl->site_node[s] = at;
  }
  free(memo);
  if (fl->oom) { ht_flame_free(fl); return -1; }
  ht_map_free(&fl->child_of);  /* only the build looks nodes up */
  ht_map_free(&fl->level_of);
  return 0;
}

/* Release what fl owns. */
void ht_flame_free(HtFlame *fl)
{
  ht_strtab_free(&fl->names);
  free(fl->node); free(fl->site_node);
  ht_map_free(&fl->child_of);
  ht_map_free(&fl->level_of);
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

/* A box of the picture: a frame, or a chain of frames each holding all of
** its parent's value (drawn as one box: no towers of single-child frames). */
typedef struct FlameBox {
  uint32_t first, last, len; /* outermost and innermost node of the chain, length */
  uint32_t row;              /* row from the top (the root is row 0) */
  double x, w;               /* fraction of the root */
  int shown;                 /* drawn before any zoom */
} FlameBox;

typedef struct FlameLayout {
  const HtFlame *fl;
  double total;
  FlameBox *box;
  size_t n, cap;             /* boxes, allocated */
  uint32_t rows;             /* rows shown */
  int oom;
} FlameLayout;

/* The only child wide enough to draw that holds all of id's value, or 0. */
static uint32_t flame_sole_child(const FlameLayout *L, uint32_t id)
{
  const HtFlame *fl = L->fl;
  uint32_t sole = 0, vis = 0;
  for (uint32_t c = fl->node[id].child; c; c = fl->node[c - 1].sib)
    if ((double)fl->node[c - 1].v / L->total * FL_W >= FL_MINW) { sole = c - 1; vis++; }
  return vis == 1 && (double)fl->node[sole].v >= 0.999 * (double)fl->node[id].v ? sole : 0;
}

/* Lay out node id (with its chain) at x and row, then its children; a box
** narrower than FL_DEEP hides what is under it until zoomed. */
static void flame_place(FlameLayout *L, uint32_t id, double x, uint32_t row, int shown)
{
  const HtFlame *fl = L->fl;
  double w = L->total ? (double)fl->node[id].v / L->total : 0;
  if (id && w * FL_W < FL_MINW) return;
  FlameBox b = {.first = id, .last = id, .len = 1, .row = row, .x = x, .w = w, .shown = shown};
  for (uint32_t c; id && (c = flame_sole_child(L, b.last)); b.len++) b.last = c;
  if (ht_grow(&L->box, &L->cap, L->n + 1, sizeof(*L->box))) { L->oom = 1; return; }
  L->box[L->n++] = b;
  if (shown && row + 1 > L->rows) L->rows = row + 1;
  uint32_t nk = 0;
  for (uint32_t c = fl->node[b.last].child; c; c = fl->node[c - 1].sib) nk++;
  if (!nk) return;
  uint32_t *kids = malloc(nk * sizeof(uint32_t));
  if (!kids) { L->oom = 1; return; }
  nk = 0;
  for (uint32_t c = fl->node[b.last].child; c; c = fl->node[c - 1].sib) kids[nk++] = c - 1;
  flame_sort_fl = fl;
  qsort(kids, nk, sizeof(uint32_t), flame_cmp);
  for (uint32_t i = 0; i < nk; i++) {
    flame_place(L, kids[i], x, row + 1, shown && (!id || w * FL_W >= FL_DEEP));
    x += L->total ? (double)fl->node[kids[i]].v / L->total : 0;
  }
  free(kids);
}

/* One box: data-i is its innermost node, data-p the box above it, data-c
** every name of a chain (searched), data-n its label. */
static void flame_svg_box(FILE *f, const HtFlame *fl, const FlameBox *b)
{
  const char *first = fl->names.str[fl->node[b->first].name], *last = fl->names.str[fl->node[b->last].name];
  char col[48], label[1200];
  if (b->first) flame_colour(last, col, sizeof(col));
  else snprintf(col, sizeof(col), "#c8c8c8");
  if (b->len > 1)
    snprintf(label, sizeof(label), "%.500s \u2026 %.500s [%" PRIu32 " frames]", first, last, b->len);
  else snprintf(label, sizeof(label), "%s", first);
  double px = FL_PAD + b->x * FL_W, pw = b->w * FL_W;
  unsigned y = FL_TOP + b->row * FL_ROW;
  fprintf(f, "<g class=\"f\"%s data-i=\"%" PRIu32 "\" data-p=\"%ld\" data-d=\"%" PRIu32
          "\" data-x=\"%.9f\" data-w=\"%.9f\" data-v=\"%" PRIu64 "\" data-n=\"",
          b->shown ? "" : " style=\"display:none\"", b->last,
          b->first ? (long)fl->node[b->first].parent : -1L, b->row, b->x, b->w,
          fl->node[b->first].v);
  ht_xml_text(f, label);
  if (b->len > 1) {
    fputs("\" data-c=\"", f);
    for (uint32_t n = b->last;; n = fl->node[n].parent) {
      ht_xml_text(f, fl->names.str[fl->node[n].name]);
      if (n == b->first) break;
      fputs("&#10;", f);
    }
  }
  fprintf(f, "\"><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%u\" fill=\"%s\" rx=\"2\"/>"
          "<text x=\"%.2f\" y=\"%u\">", px, y, pw, FL_ROW - 1, col, px + 3, y + FL_ROW - 5);
  size_t fit = pw > 12 ? (size_t)((pw - 6) / 7) : 0, len = strlen(label);
  if (fit >= len) ht_xml_text(f, label);
  else if (fit >= 3) {
    char buf[1024];
    snprintf(buf, sizeof(buf), "%.*s..", (int)(fit - 2 < sizeof(buf) - 3 ? fit - 2 : sizeof(buf) - 3), label);
    ht_xml_text(f, buf);
  }
  fputs("</text></g>\n", f);
}

/* The interactive SVG of the current values: the root on top, chains as one
** box, no deeper than FL_DEEP-wide boxes until a click zooms in (the script
** then fits the picture's height to what it shows). */
void ht_flame_svg(FILE *f, const HtFlame *fl, const char *title, HtFlameMetric k)
{
  uint64_t total = fl->node[0].v;
  FlameLayout L = {.fl = fl, .total = (double)total};
  flame_place(&L, 0, 0.0, 0, 1);
  unsigned width = FL_W + 2 * FL_PAD, height = FL_TOP + (L.rows ? L.rows : 1) * FL_ROW + 24;
  fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
          "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\""
          " viewBox=\"0 0 %u %u\" class=\"hf\" data-metric=\"%s\" data-unit=\"%s\""
          " data-total=\"%" PRIu64 "\" data-pad=\"%d\" data-width=\"%d\" data-top=\"%d\""
          " data-row=\"%d\" data-deep=\"%d\" onload=\"hfSetup(this)\">\n",
          width, height, width, height, ht_flame_metric_name(k), ht_flame_metric_unit(k),
          total, FL_PAD, FL_W, FL_TOP, FL_ROW, FL_DEEP);
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
          "<text class=\"hf-det\" x=\"%d\" y=\"44\">Hover a frame for its figures, click to zoom in.</text>\n",
          FL_PAD, width - FL_PAD, FL_PAD);
  fprintf(f, "<text class=\"hf-match\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n",
          width - FL_PAD, height - 6);
  fprintf(f, "<g class=\"hf-frames\">\n");
  for (size_t i = 0; i < L.n; i++) flame_svg_box(f, fl, &L.box[i]);
  free(L.box);
  fprintf(f, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
          ht_flame_js);
}

/* -- Collapsed stacks ----------------------------------------------------- */

/* A name with the separators of the folded format replaced. */
static void flame_folded_name(FILE *f, const char *s)
{
  for (size_t n; *s; s += n) {  /* runs without ';' or newline in one write */
    n = strcspn(s, ";\n");
    fwrite(s, 1, n, f);
    if (s[n]) { fputc(s[n] == ';' ? ':' : ' ', f); n++; }
  }
}

/* Output of the folded stacks gathered in a buffer (a line of cc1plus is
** 35 names; 94 MB in all were written name by name). */
typedef struct FoldOut {
  FILE *f;
  char buf[1 << 16];
  size_t n;                  /* bytes in buf */
} FoldOut;

static void fold_flush(FoldOut *o)
{
  if (o->n) fwrite(o->buf, 1, o->n, o->f);
  o->n = 0;
}

/* Append s[len] (a name without separators, or text). */
static void fold_put(FoldOut *o, const char *s, size_t len)
{
  if (o->n + len > sizeof(o->buf)) {
    fold_flush(o);
    if (len > sizeof(o->buf)) { fwrite(s, 1, len, o->f); return; }
  }
  memcpy(o->buf + o->n, s, len);
  o->n += len;
}

/* Collapsed stacks, one line per site with a non-zero value. */
void ht_flame_folded(FILE *f, const HtFlame *fl, const HtModel *m, HtFlameMetric k)
{
  uint32_t path[8192];
  /* Each name's length, bit 31 set when it holds a separator (replaced
  ** on the way out): measured once, not at every line. */
  uint32_t *len = malloc((fl->names.n ? fl->names.n : 1) * sizeof(uint32_t));
  FoldOut *o = malloc(sizeof(FoldOut));
  if (len && o) {
    for (size_t i = 0; i < fl->names.n; i++) {
      const char *s = fl->names.str[i];
      size_t l = strlen(s);
      len[i] = (uint32_t)(l < (1u << 31) ? l : (1u << 31) - 1) |
               (strpbrk(s, ";\n") || l >= (1u << 31) ? 1u << 31 : 0);
    }
    o->f = f;
    o->n = 0;
  }
  for (uint32_t s = 0; s < fl->nsite; s++) {
    uint64_t v = ht_flame_site_value(&m->site[s], k);
    if (!v) continue;
    uint32_t n = 0;
    for (uint32_t at = fl->site_node[s]; at && n < HT_COUNTOF(path); at = fl->node[at].parent)
      path[n++] = at;
    if (!len || !o) {  /* (out of memory: name by name) */
      while (n-- > 0) {
        flame_folded_name(f, fl->names.str[fl->node[path[n]].name]);
        if (n) fputc(';', f);
      }
      fprintf(f, " %" PRIu64 "\n", v);
      continue;
    }
    while (n-- > 0) {
      uint32_t nm = fl->node[path[n]].name;
      if (len[nm] >> 31) {
        fold_flush(o);
        flame_folded_name(f, fl->names.str[nm]);
      } else {
        fold_put(o, fl->names.str[nm], len[nm]);
      }
      if (n) fold_put(o, ";", 1);
    }
    char num[HT_DEC_MAX + 2];
    num[0] = ' ';
    char *e = ht_dec_u64(num + 1, v);
    *e++ = '\n';
    fold_put(o, num, (size_t)(e - num));
  }
  if (o && len) fold_flush(o);
  free(o);
  free(len);
}

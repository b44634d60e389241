/* heaptape -- flame graphs of an analysis model: the frame tree of every
** site, an interactive SVG (inline JS), collapsed stacks, and the JS the
** HTML report shares. Values per metric equal the report's figures. */
#ifndef HT_FLAME_H
#define HT_FLAME_H

#include <stdio.h>
#include "../analyze/model.h"
#include "../base/strtab.h"

/* What a flame graph measures. Totals: alloc = summary bytes, inuse = the
** heap at --at (the end without it), peak = summary peak, leaks = bytes
** live at the end, temporary = temporary allocations (a count). */
typedef enum { HT_FM_ALLOC, HT_FM_INUSE, HT_FM_PEAK, HT_FM_LEAKS, HT_FM_TEMP,
               HT_FM_COUNT } HtFlameMetric;

/* One node of the frame tree: a frame name under its caller. */
typedef struct HtFlameNode {
  uint32_t name;             /* index into names */
  uint32_t parent;           /* parent node (node 0 is the root, "all") */
  uint32_t child;            /* first child + 1, 0 if none */
  uint32_t sib;              /* next sibling + 1, 0 if none */
  uint64_t v;                /* value under the current metric (inclusive) */
} HtFlameNode;

typedef struct HtFlame {
  HtStrtab names;            /* frame names (names.str[id], names.n of them) */
  HtFlameNode *node;         /* nodes; [0] is the root */
  uint32_t nnode;            /* used */
  size_t cnode;              /* allocated */
  HtMap child_of;            /* (parent, name) -> node, for parents of more
                                than FLAME_LIST children (during the build) */
  HtMap level_of;            /* level (ht_frames_level_key) -> name */
  uint32_t *site_node;       /* per site: node of its innermost frame */
  uint32_t nsite;            /* sites */
  int oom;                   /* out of memory */
} HtFlame;

/* Name of a metric ("alloc", ...), and its unit ("bytes" or "allocations"). */
const char *ht_flame_metric_name(HtFlameMetric k) HT_HIDDEN;
const char *ht_flame_metric_unit(HtFlameMetric k) HT_HIDDEN;
/* Value of a site under a metric. */
uint64_t ht_flame_site_value(const HtSite *s, HtFlameMetric k) HT_HIDDEN;
/* The frame tree of every site of m (outermost frame under the root,
** allocation plumbing at the inner end dropped as in the report). 0 or -1. */
int ht_flame_build(HtFlame *fl, const HtModel *m) HT_HIDDEN;
void ht_flame_free(HtFlame *fl) HT_HIDDEN;
/* Node values (inclusive) under a metric; returns the root's value. */
uint64_t ht_flame_values(HtFlame *fl, const HtModel *m, HtFlameMetric k) HT_HIDDEN;
/* The interactive SVG of the current values. */
void ht_flame_svg(FILE *f, const HtFlame *fl, const char *title,
                  HtFlameMetric k) HT_HIDDEN;
/* Collapsed stacks ("outer;...;inner value" per site, non-zero only). */
void ht_flame_folded(FILE *f, const HtFlame *fl, const HtModel *m,
                     HtFlameMetric k) HT_HIDDEN;
/* The flame graph script (hfSetup; hfFmt, hfEl, hfColour, hfFit shared with the HTML report). */
extern const char ht_flame_js[] HT_HIDDEN;

#endif

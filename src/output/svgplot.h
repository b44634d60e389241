/* heaptape -- small SVG charts (line and bar charts with axes and legends)
** for lifetimes histograms and replay plots. */
#ifndef HT_SVGPLOT_H
#define HT_SVGPLOT_H

#include <stdio.h>
#include "../base/ht_def.h"

/* How axis values are printed. */
enum { HT_SVG_NUM = 0, HT_SVG_BYTES = 1, HT_SVG_NS = 2, HT_SVG_PCT = 3 };

/* One line of a line chart. */
typedef struct HtSvgLine {
  const char *name;          /* legend text */
  const double *x, *y;       /* points */
  size_t n;                  /* points */
} HtSvgLine;

/* A chart's place and labels. */
typedef struct HtSvgBox {
  double x, y, w, h;         /* outer box in the picture */
  const char *title;         /* title above the plot */
  const char *xlabel;        /* x axis label */
  int xfmt, yfmt;            /* HT_SVG_* of the axes */
} HtSvgBox;

/* Start a picture of w x h pixels with a title. */
void ht_svg_open(FILE *f, int w, int h, const char *title) HT_HIDDEN;
/* End the picture. */
void ht_svg_close(FILE *f) HT_HIDDEN;
/* Lines sharing axes, coloured from the palette, with a legend. */
void ht_svg_lines(FILE *f, const HtSvgBox *b, const HtSvgLine *l, size_t n) HT_HIDDEN;
/* Vertical bars v[n] labelled lab[n] (labels may be NULL). */
void ht_svg_bars(FILE *f, const HtSvgBox *b, const char *const *lab, const double *v,
                 size_t n) HT_HIDDEN;
/* Palette colour i as "#rrggbb". */
const char *ht_svg_color(size_t i) HT_HIDDEN;
/* Print v in the format fmt into buf. */
void ht_svg_fmt(char *buf, size_t len, double v, int fmt) HT_HIDDEN;

#endif

/* heaptape -- small SVG charts: axes with round ticks, lines, bars, legends.
** Plain SVG 1.1, no scripts, so any viewer and XML parser reads it. */
#include <math.h>
#include <string.h>

#include "svgplot.h"
#include "../base/escape.h"

static const char *const svg_palette[] = {
  "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
  "#17becf", "#bcbd22", "#7f7f7f",
};

/* Palette colour i. */
const char *ht_svg_color(size_t i)
{
  return svg_palette[i % HT_COUNTOF(svg_palette)];
}

/* Print v in the format fmt. */
void ht_svg_fmt(char *buf, size_t len, double v, int fmt)
{
  static const char *const bu[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  static const char *const tu[] = {"ns", "us", "ms", "s"};
  int u = 0;
  switch (fmt) {
  case HT_SVG_BYTES:
    while (fabs(v) >= 1024 && u < 4) { v /= 1024; u++; }
    snprintf(buf, len, "%.4g %s", v, bu[u]);
    break;
  case HT_SVG_NS:
    while (fabs(v) >= 1000 && u < 3) { v /= 1000; u++; }
    snprintf(buf, len, "%.4g %s", v, tu[u]);
    break;
  case HT_SVG_PCT: snprintf(buf, len, "%.4g%%", v); break;
  default: snprintf(buf, len, "%.6g", v); break;
  }
}

/* Start a picture. */
void ht_svg_open(FILE *f, int w, int h, const char *title)
{
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
             "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n"
             "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n", w, h, w, h);
  fprintf(f, "<text x=\"%d\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">", w / 2);
  ht_xml_text(f, title);
  fputs("</text>\n", f);
}

/* End the picture. */
void ht_svg_close(FILE *f)
{
  fputs("</svg>\n", f);
}

/* A round tick step for the range [0, hi] with about n ticks. */
static double svg_step(double hi, int n, int fmt)
{
  if (hi <= 0) return 1;
  double raw = hi / n, base = fmt == HT_SVG_BYTES ? 2 : 10;
  double p = pow(base, floor(log(raw) / log(base)));
  if (fmt == HT_SVG_BYTES) return raw <= p ? p : p * 2;
  return raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}

/* Frame, title, ticks and labels of a chart; the plot area into px..ph. */
static void svg_axes(FILE *f, const HtSvgBox *b, double xlo, double xhi, double ylo,
                     double yhi, double *px, double *py, double *pw, double *ph)
{
  *px = b->x + 70; *py = b->y + 24; *pw = b->w - 90; *ph = b->h - 64;
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">",
          b->x + b->w / 2, b->y + 14);
  ht_xml_text(f, b->title);
  fprintf(f, "</text>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
             "fill=\"none\" stroke=\"#888\"/>\n", *px, *py, *pw, *ph);
  char buf[64];
  double ys = svg_step(yhi - ylo, 5, b->yfmt);
  for (double v = ylo; v <= yhi + ys * 1e-9 && yhi > ylo; v += ys) {
    double y = *py + *ph - (v - ylo) / (yhi - ylo) * *ph;
    ht_svg_fmt(buf, sizeof(buf), v, b->yfmt);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
               "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
            *px, y, *px + *pw, y, *px - 4, y + 4, buf);
  }
  double xs = svg_step(xhi - xlo, 6, b->xfmt);
  double x0 = ceil(xlo / xs) * xs;
  for (double v = x0; v <= xhi + xs * 1e-9 && xhi > xlo; v += xs) {
    double x = *px + (v - xlo) / (xhi - xlo) * *pw;
    ht_svg_fmt(buf, sizeof(buf), v, b->xfmt);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x,
            *py + *ph + 14, buf);
  }
  if (b->xlabel) {
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", *px + *pw / 2,
            *py + *ph + 30);
    ht_xml_text(f, b->xlabel);
    fputs("</text>\n", f);
  }
}

/* Lines sharing axes, with a legend. */
void ht_svg_lines(FILE *f, const HtSvgBox *b, const HtSvgLine *l, size_t n)
{
  double xlo = INFINITY, xhi = -INFINITY, yhi = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < l[i].n; k++) {
      if (l[i].x[k] < xlo) xlo = l[i].x[k];
      if (l[i].x[k] > xhi) xhi = l[i].x[k];
      if (l[i].y[k] > yhi) yhi = l[i].y[k];
    }
  if (xlo > xhi) { xlo = 0; xhi = 1; }
  if (xhi == xlo) xhi = xlo + 1;
  if (yhi <= 0) yhi = 1;
  yhi = ceil(yhi / svg_step(yhi, 5, b->yfmt)) * svg_step(yhi, 5, b->yfmt);
  double px, py, pw, ph;
  svg_axes(f, b, xlo, xhi, 0, yhi, &px, &py, &pw, &ph);
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
            ht_svg_color(i));
    for (size_t k = 0; k < l[i].n; k++) {
      double y = l[i].y[k] < 0 ? 0 : l[i].y[k];
      fprintf(f, "%.1f,%.1f ", px + (l[i].x[k] - xlo) / (xhi - xlo) * pw,
              py + ph - y / yhi * ph);
    }
    fputs("\"/>\n", f);
    double ly = py + 12 + 14.0 * (double)i;
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>"
               "<text x=\"%.1f\" y=\"%.1f\">", px + 8, ly - 9, ht_svg_color(i), px + 22, ly);
    ht_xml_text(f, l[i].name);
    fputs("</text>\n", f);
  }
}

/* Vertical bars with labels under them. */
void ht_svg_bars(FILE *f, const HtSvgBox *b, const char *const *lab, const double *v, size_t n)
{
  double yhi = 0;
  for (size_t i = 0; i < n; i++) if (v[i] > yhi) yhi = v[i];
  if (yhi <= 0) yhi = 1;
  yhi = ceil(yhi / svg_step(yhi, 5, b->yfmt)) * svg_step(yhi, 5, b->yfmt);
  double px, py, pw, ph;
  HtSvgBox nb = *b;
  nb.xfmt = -1;
  svg_axes(f, &nb, 0, 0, 0, yhi, &px, &py, &pw, &ph);
  double bw = n ? pw / (double)n : pw;
  char buf[64];
  for (size_t i = 0; i < n; i++) {
    double h = v[i] / yhi * ph;
    ht_svg_fmt(buf, sizeof(buf), v[i], b->yfmt);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
               "<title>", px + bw * (double)i + bw * 0.1, py + ph - h, bw * 0.8, h,
            lab ? ht_svg_color(i) : ht_svg_color(0));
    if (lab) { ht_xml_text(f, lab[i]); fputs(": ", f); }
    fprintf(f, "%s</title></rect>\n", buf);
    if (lab && (n <= 12 || i % ((n + 11) / 12) == 0)) {
      fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
              px + bw * ((double)i + 0.5), py + ph + 14);
      ht_xml_text(f, lab[i]);
      fputs("</text>\n", f);
    }
  }
}

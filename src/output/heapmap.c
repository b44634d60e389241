/* heaptape -- heap maps: x is the operation number, y the address inside the
** used parts of the address space laid end to end; one colour per site. */
#include <errno.h>
#include <inttypes.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "heapmap.h"
#include "ops.h"

/*
** The address space of a process is sparse (brk heap, mmap'd chunks, thread
** arenas far apart), so the picture shows only granules (64 KiB) that some
** block touches, in address order, with a grey line where the addresses
** jump. Pass 1 finds the granules and the sites; pass 2 draws each block as
** a rectangle from its New to its Free (or the right edge if never freed).
*/

#define GRAN_SHIFT 16
#define BG 0x101010u         /* unused address space */
#define SEP 0x606060u        /* a jump in the addresses */

typedef struct Map {
  uint64_t *gran;            /* sorted granule numbers */
  size_t ngran;              /* granules */
  uint64_t nops;             /* operations */
  HtMap site_col;            /* stack -> colour */
  const HtReader *r;         /* tape (site names) */
} Map;

typedef struct Img {
  unsigned w, h;             /* pixels */
  uint32_t *px;              /* 0xRRGGBB, row-major */
} Img;

/* Order granules. */
static int map_cmp(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Position of an address in the laid-out space (bytes from the start). */
static uint64_t map_pos(const Map *m, uint64_t addr)
{
  uint64_t g = addr >> GRAN_SHIFT;
  size_t lo = 0, hi = m->ngran;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (m->gran[mid] < g) lo = mid + 1; else hi = mid;
  }
  if (lo == m->ngran) return (uint64_t)m->ngran << GRAN_SHIFT;
  if (m->gran[lo] != g) return (uint64_t)lo << GRAN_SHIFT;
  return ((uint64_t)lo << GRAN_SHIFT) | (addr & ((1u << GRAN_SHIFT) - 1));
}

/* A bright colour from a hash of a site's name. */
static uint32_t map_colour(const char *name)
{
  uint64_t h = 1469598103934665603ull;
  for (; *name; name++) h = (h ^ (unsigned char)*name) * 1099511628211ull;
  h = ht_hash64(h);
  double hue = (double)(h % 360), s = 0.65 + (double)((h >> 12) % 30) / 100.0, v = 0.95;
  double c = v * s, x = c * (1 - __builtin_fabs(__builtin_fmod(hue / 60.0, 2) - 1)), mm = v - c;
  double r = 0, g = 0, b = 0;
  int k = (int)(hue / 60);
  if (k == 0) { r = c; g = x; } else if (k == 1) { r = x; g = c; } else if (k == 2) { g = c; b = x; }
  else if (k == 3) { g = x; b = c; } else if (k == 4) { r = x; b = c; } else { r = c; b = x; }
  return ((uint32_t)((r + mm) * 255) << 16) | ((uint32_t)((g + mm) * 255) << 8) |
         (uint32_t)((b + mm) * 255);
}

/* Colour of a stack's site (cached). */
static uint32_t map_site(Map *m, uint32_t stack)
{
  uint64_t *v = ht_map_get(&m->site_col, stack);
  if (v) return (uint32_t)*v;
  char name[1024];
  uint32_t c = map_colour(ht_ops_site_name(m->r, stack, name, sizeof(name)));
  ht_map_put(&m->site_col, stack, c);
  return c;
}

/* Fill a rectangle (inclusive-exclusive, clipped). */
static void img_fill(Img *im, long x0, long x1, long y0, long y1, uint32_t c)
{
  if (x0 < 0) x0 = 0;
  if (y0 < 0) y0 = 0;
  if (x1 > (long)im->w) x1 = im->w;
  if (y1 > (long)im->h) y1 = im->h;
  for (long y = y0; y < y1; y++)
    for (long x = x0; x < x1; x++) im->px[(size_t)y * im->w + (size_t)x] = c;
}

/* Write an image as an 8-bit RGB PNG. */
static int img_png(const Img *im, const char *path, char *err, size_t errlen)
{
  FILE *f = fopen(path, "wb");
  if (!f) { snprintf(err, errlen, "%s: cannot create (%s)", path, strerror(errno)); return -1; }
  png_structp p = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = p ? png_create_info_struct(p) : NULL;
  png_bytep row = malloc((size_t)im->w * 3);
  if (!p || !info || !row || setjmp(png_jmpbuf(p))) {
    png_destroy_write_struct(&p, &info);
    free(row);
    fclose(f);
    snprintf(err, errlen, "%s: cannot write the PNG", path);
    return -1;
  }
  png_init_io(p, f);
  png_set_IHDR(p, info, im->w, im->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(p, info);
  for (unsigned y = 0; y < im->h; y++) {
    const uint32_t *s = im->px + (size_t)y * im->w;
    for (unsigned x = 0; x < im->w; x++) {
      row[3 * x] = (png_byte)(s[x] >> 16);
      row[3 * x + 1] = (png_byte)(s[x] >> 8);
      row[3 * x + 2] = (png_byte)s[x];
    }
    png_write_row(p, row);
  }
  png_write_end(p, NULL);
  png_destroy_write_struct(&p, &info);
  free(row);
  if (fclose(f)) { snprintf(err, errlen, "%s: write error", path); return -1; }
  return 0;
}

/* Draw one block on the time map. */
static void map_block(Map *m, Img *im, uint64_t born, uint64_t end, uint64_t addr,
                      uint64_t size, uint32_t stack)
{
  double span = (double)((uint64_t)m->ngran << GRAN_SHIFT);
  uint64_t a = map_pos(m, addr), b = map_pos(m, addr + (size ? size : 1) - 1) + 1;
  long x0 = (long)((double)born * im->w / (double)m->nops);
  long x1 = (long)((double)end * im->w / (double)m->nops);
  long y0 = (long)((double)a * im->h / span), y1 = (long)((double)b * im->h / span);
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  img_fill(im, x0, x1, y0, y1, map_site(m, stack));
}

/* One frame: the live blocks, the laid-out space wrapped row by row. */
static int map_frame(Map *m, const HtOps *ops, Img *fr, const char *dir, unsigned k,
                     char *err, size_t errlen)
{
  double span = (double)((uint64_t)m->ngran << GRAN_SHIFT);
  double per = span / ((double)fr->w * fr->h);  /* bytes per pixel */
  if (per < 1) per = 1;
  for (size_t i = 0; i < (size_t)fr->w * fr->h; i++) fr->px[i] = BG;
  size_t it = 0;
  HtOpBlock b;
  while (ht_ops_live_next(ops, &it, &b)) {
    uint32_t c = map_site(m, b.stack);
    size_t p0 = (size_t)((double)map_pos(m, b.addr) / per);
    size_t p1 = (size_t)((double)map_pos(m, b.addr + (b.size ? b.size : 1) - 1) / per) + 1;
    for (size_t p = p0; p < p1 && p < (size_t)fr->w * fr->h; p++) fr->px[p] = c;
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/frame_%05u.png", dir, k);
  return img_png(fr, path, err, errlen);
}

/* Draw the heap map of a tape. */
int ht_heapmap_run(HtReader *r, const char *png, const HtHeapmapOpts *o, char *err,
                   size_t errlen)
{
  Map m = {.r = r};
  HtMap g;
  HtOps ops;
  HtEvent ev;
  HtOp op;
  Img im = {.w = o->w, .h = o->h}, fr = {.w = o->fw, .h = o->fh};
  int rc = -1;
  snprintf(err, errlen, "out of memory");
  if (ht_map_init(&g, 1024)) return -1;
  if (ht_map_init(&m.site_col, 64) || ht_ops_init(&ops)) goto out0;
  while (ht_reader_next(r, &ev) > 0) {
    if (!ht_ops_event(&ops, &ev, &op) || op.op != HT_OP_NEW) continue;
    uint64_t last = (op.addr + (op.size ? op.size - 1 : 0)) >> GRAN_SHIFT;
    for (uint64_t k = op.addr >> GRAN_SHIFT; k <= last; k++)
      if (!ht_map_get(&g, k) && ht_map_put(&g, k, 1)) goto out1;
  }
  m.nops = ops.nops ? ops.nops : 1;
  ht_ops_free(&ops);
  m.gran = malloc((g.count ? g.count : 1) * sizeof(uint64_t));
  if (!m.gran) goto out0;
  size_t it = 0;
  uint64_t k, v;
  while (ht_map_next(&g, &it, &k, &v)) m.gran[m.ngran++] = k;
  qsort(m.gran, m.ngran, sizeof(uint64_t), map_cmp);
  if (!m.ngran) { snprintf(err, errlen, "no allocations on the tape"); goto out0; }

  im.px = png ? malloc((size_t)im.w * im.h * sizeof(uint32_t)) : NULL;
  fr.px = o->frames ? malloc((size_t)fr.w * fr.h * sizeof(uint32_t)) : NULL;
  if ((png && !im.px) || (o->frames && !fr.px)) goto out0;
  for (size_t i = 0; png && i < (size_t)im.w * im.h; i++) im.px[i] = BG;
  for (size_t i = 1; png && i < m.ngran; i++)  /* jumps in the address space */
    if (m.gran[i] != m.gran[i - 1] + 1) {
      long y = (long)((double)((uint64_t)i << GRAN_SHIFT) * im.h /
                      (double)((uint64_t)m.ngran << GRAN_SHIFT));
      img_fill(&im, 0, im.w, y, y + 1, SEP);
    }
  if (ht_reader_rewind(r) || ht_ops_init(&ops)) goto out0;
  unsigned nf = o->frames ? (o->nframes ? o->nframes : 1) : 0, fk = 0;
  while (ht_reader_next(r, &ev) > 0) {
    if (!ht_ops_event(&ops, &ev, &op)) continue;
    if (op.op == HT_OP_FREE && png) map_block(&m, &im, op.born, op.index, op.addr, op.size, op.stack);
    while (fk < nf && op.index + 1 >= (fk + 1) * m.nops / nf)
      if (map_frame(&m, &ops, &fr, o->frames, fk++, err, errlen)) goto out1;
  }
  it = 0;
  HtOpBlock b;
  while (png && ht_ops_live_next(&ops, &it, &b))
    map_block(&m, &im, b.born, m.nops, b.addr, b.size, b.stack);
  if (png && img_png(&im, png, err, errlen)) goto out1;
  if (o->legend) {
    it = 0;
    char name[1024];
    fprintf(o->legend, "heap map: %" PRIu64 " ops over %zu KiB of address space in %zu granules of 64 KiB\n",
            m.nops, m.ngran << (GRAN_SHIFT - 10), m.ngran);
    fprintf(o->legend, "site colours:\n");
    uint64_t seen[40];
    unsigned shown = 0;
    while (ht_map_next(&m.site_col, &it, &k, &v) && shown < HT_COUNTOF(seen)) {
      unsigned j = 0;
      while (j < shown && seen[j] != v) j++;
      if (j < shown) continue;
      seen[shown++] = v;
      fprintf(o->legend, "  #%06" PRIx64 "  %s\n", v, ht_ops_site_name(r, (uint32_t)k, name, sizeof(name)));
    }
  }
  rc = 0;
out1:
  ht_ops_free(&ops);
out0:
  free(im.px);
  free(fr.px);
  free(m.gran);
  ht_map_free(&m.site_col);
  ht_map_free(&g);
  return rc;
}

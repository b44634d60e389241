/* heaptape -- heap maps: x is the operation number, y the address inside the
** used parts of the address space laid end to end; one colour per site. */
#include <errno.h>
#include <inttypes.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "heapmap.h"
#include "apng.h"
#include "../analyze/frames.h"
#include "../analyze/maplayout.h"
#include "../analyze/ops.h"
#include "../base/grow.h"
#include "../base/hash.h"

/*
** The address space of a process is sparse (brk heap, mmap'd chunks, thread
** arenas far apart), so the picture shows only granules (64 KiB) that some
** block touches, in address order, with a grey line where the addresses
** jump. Pass 1 finds the granules and the sites; pass 2 draws each block as
** a rectangle from its New to its Free (or the right edge if never freed).
**
** On a sealed tape of version 8 a Free carries its block's birth and
** address, so the resolver keeps no table of live blocks (without frames):
** pass 1 notes which blocks end (a bit per allocation), and pass 2 draws a
** block that never does at its New, on a layer laid over the picture at the
** end: the same picture as drawing the blocks left at the end last, in
** allocation order.
**
** From version 11 the sealer gives the granules, the count of ops and the
** blocks never freed (maplayout.h): pass 1 is left out, and pass 2 sums
** the sites' bytes too.
*/

#define GRAN_SHIFT HT_GRAN_SHIFT  /* a granule: 64 KiB */
#define BG 0x101010u         /* unused address space */
#define SEP 0x606060u        /* a jump in the addresses */
#define PAPER 0xffffffu      /* around the plot */
#define INK 0x202020u        /* labels */
#define GRID 0x909090u       /* axes and ticks */
#define LK_NONE 0xffffffffu  /* no never-freed block on this pixel */
#define FW 7                 /* glyph cell width, px */
#define FH 13                /* glyph cell height, px */

/* 7x13 glyphs of ASCII 32..126, 4-bit coverage per pixel as hex digits,
** rendered from DejaVu Sans Mono at 11 px (Bitstream Vera licence). */
static const char *const font_glyph[95] = {
  "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  "00000000000000003d000003d000003d000003d000002c00000030000014000003d000000000000000000000000",
  "0000000000000003c2d0003c2d0002a1b0000000000000000000000000000000000000000000000000000000000", /* '"' */
  "0000000000000000582b000946704cfced701c0d000491c00ceddec00c194000c0d000000000000000000000000",
  "00000000000000000800003bdb400d280100d4800003bea2000085d002082e00acec40000800000040000000000",
  "000000000000002ba1000b147000b1480002aa16a100693004925ba0000c0660007bb1000000000000000000000",
  "0000000000000003dd8000a50000087000009e20006a3d066a407a847900bc009baad3000000000000000000000",
  "00000000000000002c000002c000002b00000000000000000000000000000000000000000000000000000000000",
  "000000000000000006700000d000005a000009700000b500000a60000078000002d000000a30000024000000000",
  "0000000000000000c10000068000001e000000d300000b400000c400000e100003c000009400000600000000000",
  "00000000000000000a000095a86000af400093a6600008000000000000000000000000000000000000000000000",
  "0000000000000000000000016000002c000002c0007eefee2002c000002c0000000000000000000000000000000",
  "00000000000000000000000000000000000000000000000000001000004f000006c00000b300000000000000000",
  "000000000000000000000000000000000000000000000000001dd90000000000000000000000000000000000000",
  "000000000000000000000000000000000000000000000000000000000039000006f000000000000000000000000",
  "0000000000000000007800000e100006900000d200005a00000c300004b00000c400003c0000000000000000000",
  "0000000000000003dea000d40a702e005c03d4e3d03d023d02f005c00d40b7003dea00000000000000000000000",
  "0000000000000007df300032d300000d300000d300000d300000d300000d30007efec0000000000000000000000",
  "000000000000001bee9001500b7000008800000d30000b70000a800009900002feee90000000000000000000000",
  "000000000000000ceea000200a700000b8000bfb000000a5000005b01200a902ceea10000000000000000000000",
  "000000000000000008f00003af0000c2f000860f002c00f006eddfd10000f000000f00000000000000000000000",
  "000000000000000eeee200e100000e100000edd8000101c7000006a01100b802dee900000000000000000000000",
  "0000000000000001bee300b800101e000003c9da104f407a02f003d00e306b003cdc20000000000000000000000",
  "000000000000003eeefb00000a600001e000006a00000d400003d000009700000f1000000000000000000000000",
  "0000000000000005ddc200f107a00f2088004eec000c208903d003e02f207b006ddc20000000000000000000000",
  "0000000000000006dd9002e109704c005b01e10ad005cc7d000005b00201d5009ee700000000000000000000000",
  "00000000000000000000000000000039000006f000000000000000000039000006f000000000000000000000000",
  "0000000000000000000000000000006f000003900000000000001000004f000006c00000b300000000000000000",
  "000000000000000000000000000000005b2039d9307e5000017da4000003ae10000000000000000000000000000",
  "000000000000000000000000000000000007eeeee200000007eeeee200000000000000000000000000000000000",
  "0000000000000000000000000000793000005bc61000019f2017cb506d710001000000000000000000000000000",
  "0000000000000006deb100400a800000b600009a00003c00000490000023000006b000000000000000000000000",
  "000000000000000000000019cb401c400b1861abb4c1950b5d0b1075c1840a57719aa40c60000008cc500000000",
  "00000000000000008f10000cc60001e4b000690f000b50b500fddea05b002f0a7000d4000000000000000000000",
  "000000000000001fddc301f006b01f007b01fdee201f005c01f000f11f004e01fedc40000000000000000000000",
  "0000000000000000aee800a900300f100003e000003e000000f100000a9003001aee80000000000000000000000",
  "000000000000004fdd6004d01c604d005c04d003e04d003e04d005c04d01c604fed600000000000000000000000",
  "000000000000000feeeb00f200000f200000feee900f200000f200000f200000feeed0000000000000000000000",
  "000000000000000ceeed00c500000c500000ceee800c500000c500000c500000c50000000000000000000000000",
  "0000000000000002bed600c600403e000006b000006b03ee03d001f00d602f002bed70000000000000000000000",
  "000000000000004d003e04d003e04d003e04feeee04d003e04d003e04d003e04d003e0000000000000000000000",
  "000000000000000defe70003d000003d000003d000003d000003d000003d0000defe70000000000000000000000",
  "0000000000000000eef200000f200000f200000f200000f200000f103203f004ded500000000000000000000000",
  "000000000000004d004d14d03d204d3d2004ee90004f4e3004d05d004d00b804d001f3000000000000000000000",
  "000000000000000d400000d400000d400000d400000d400000d400000d400000deeee1000000000000000000000",
  "000000000000008f107f28d60ce288b29d287a94d2875e0d287010d287000d287000d2000000000000000000000",
  "000000000000004f502e04eb02e04cc22e04c582e04c0d3e04c088e04c02ee04c00be0000000000000000000000",
  "0000000000000003dda000e309903e004d05c002f05c002f03e004d00e4099003dda00000000000000000000000",
  "000000000000000fedd400f205e00f200f10f206e00feec300f200000f200000f20000000000000000000000000",
  "0000000000000003dda000e40a903e004d05c002f05c002f03e004d00e3099003ded100001d4000001000000000",
  "000000000000003fdda103d00b803d007b03d00b503fef9003d02e503d005d03d000c5000000000000000000000",
  "0000000000000005ddd401e101203e000000bd94000037d7000003d014006b01bedb20000000000000000000000",
  "00000000000000aeefee5003d000003d000003d000003d000003d000003d000003d000000000000000000000000",
  "000000000000003e004d03e004d03e004d03e004d03e004d02e004c00e207a005ddb10000000000000000000000",
  "0000000000000088000e24d003d00e107900a60c4005a0f0001e4b0000cc600007f100000000000000000000000",
  "00000000000000e100088c300096a55f0b3779c2d159b66e02bb2bc00f80ea00d50b70000000000000000000000",
  "000000000000003d002e10980b6001e6c00006f20000ae60005c1e100e3079099000e3000000000000000000000",
  "000000000000008a001e20e3098005b2e0000cd500004e000003d000003d000003d000000000000000000000000",
  "000000000000000eeeef200007b00002e10000c500006b00001e10000b500002feeee4000000000000000000000",
  "00000000000000008d90000870000087000008700000870000087000008700000870000087000007c8000000000",
  "000000000000003c000000c4000004b000000c3000005a000000d20000069000000e10000078000000000000000",
  "0000000000000001cf200000d200000d200000d200000d200000d200000d200000d200000d20001bd1000000000",
  "00000000000000009f30006b3d103b003b000000000000000000000000000000000000000000000000000000000",
  "0000000000000000000000000000000000000000000000000000000000000000000000000000000000006666664",
  "000000002c1000003a0000000000000000000000000000000000000000000000000000000000000000000000000",
  "000000000000000000000000000009dca10010078005bcda02e105b03c00ab009ba9b0000000000000000000000",
  "000000000000000f000000f000000f9cc200f606a00f101e00f101e00f606a00f9dc20000000000000000000000",
  "0000000000000000000000000000009dd7009900200e200000e200000990020009dd70000000000000000000000",
  "000000000000000000690000069005dca901e10c904c007904b006901e00a9005cab90000000000000000000000",
  "000000000000000000000000000003ccc200d103c04ecccd04c000000e3003003cdd70000000000000000000000",
  "00000000000000000cc80004a0000bdec80005a000005a000005a000005a000005a000000000000000000000000",
  "000000000000000000000000000005dca901e10b904c007904c007901e10b9005dca90000096008cc9000000000",
  "000000000000000f000000f000000f7dd200f508800f005a00f005a00f005a00f005a0000000000000000000000",
  "00000000000000001e000000300007ce000001e000001e000001e000001e0000ccfca0000000000000000000000",
  "00000000000000000c300000200005cf300000c300000c300000c300000c300000c300000e2000dd90000000000",
  "000000000000000b400000b400000b40a800b4a8000bee0000b789000b40c500b402e2000000000000000000000",
  "000000000000001ce7000009700000970000097000009700000870000078000001cd70000000000000000000000",
  "00000000000000000000000000006cd9ca0693d0e0671c0d1671c0d1671c0d1671c0d1000000000000000000000",
  "00000000000000000000000000000f8ac200f407800f005a00f005a00f005a00f005a0000000000000000000000",
  "000000000000000000000000000004ddb100e208903d003d03d003d00e2089004ddb10000000000000000000000",
  "00000000000000000000000000000f9ab100f405a00f001e00f102e00f607a00f8dc200f000000f000000000000",
  "000000000000000000000000000004dcaa00e20ba03d006a03d006a00e20aa005dcaa000005a000005a00000000",
  "000000000000000000000000000001f7cd201f600001f000001f000001f000001f0000000000000000000000000",
  "000000000000000000000000000004ccc200c4000008c73000026e5002009700addb10000000000000000000000",
  "00000000000000005200000b40003cedc6000b400000b400000b400000a6000003dc60000000000000000000000",
  "00000000000000000000000000000f005a00f005a00f005a00f005a00d209a005da9a0000000000000000000000",
  "00000000000000000000000000004b001e00e107800960c3003c2d0000da700008f200000000000000000000000",
  "0000000000000000000000000000e100078a4030a4685e0e02b985c00ea2d900b80e50000000000000000000000",
  "00000000000000000000000000001d2079004c3d00008f20000be50007a1d203d004c0000000000000000000000",
  "00000000000000000000000000003c001e00d307900690d2000e4c00009e600003f00000790000dc10000000000",
  "000000000000000000000000000009cce900001d20000c40000a700006b00000edcc70000000000000000000000",
  "00000000000000000ac50001e000002d000004c0000af4000005b000002d000002d000001e0000007c500000000",
  "00000000000000002c000002c000002c000002c000002c000002c000002c000002c000002c000002c0000016000",
  "0000000000000009d5000004b000003c000002e000000ae50001e000003c000003c000005a00009b30000000000",
  "000000000000000000000000000000000002cd72625108d80000000000000000000000000000000000000000000",
};

typedef struct Img {
  unsigned w, h;             /* pixels */
  uint32_t *px;              /* 0xRRGGBB, row-major */
} Img;

/* What the map knows of one stack, found through an index by stack id: a
** hash lookup per event for its bytes and another for its colour were a
** tenth of the drawing thread's time. (Stack ids are the nodes of the
** tape's tree of stacks, a million on cc1plus's tape against 70,000 that
** allocate: the index holds 4 bytes a node, the slots are dense.) */
typedef struct MapSite {
  uint64_t bytes;            /* bytes allocated (the legend's order) */
  uint32_t col;              /* its site's colour, once named */
  uint8_t named;             /* col is set */
  uint8_t alloc;             /* it allocated: one of the legend's stacks */
} MapSite;

typedef struct Map {
  uint64_t *gran;            /* sorted granule numbers */
  size_t ngran;              /* granules */
  struct {                   /* map_pos's granules met lately, by their low bits */
    uint64_t g;              /* granule (UINT64_MAX: none) */
    size_t lo;               /* its place in gran */
  } pos[64];
  uint64_t lay_g;            /* pass 1's last granule noted (UINT64_MAX: none) */
  uint64_t lay_ops;          /* pass 1's ops (ALLOCs and known FREEs) */
  uint64_t nops;             /* operations */
  double xs, ys;             /* pixels of the plot per op, per byte laid out */
  uint32_t *slot_of;         /* stack id -> 1 + its slot in site (0: none) */
  size_t nslot_of;           /* ids it covers */
  MapSite *site;             /* the stacks met */
  size_t nsite, capsite;     /* of them, allocated */
  uint32_t *alloc;           /* the stacks that allocated (by bytes once ranked) */
  size_t nalloc, capalloc;   /* of them, allocated */
  int ranked;                /* alloc is in the legends' order */
  const HtReader *r;         /* tape (site names) */
  const HtHeapmapOpts *o;    /* options */
  const char *png;           /* the picture's path, or NULL */
  HtMap g;                   /* granules touched (pass 1) */
  uint64_t *ended;           /* without a table: blocks freed (or dropped),
                                a bit per allocation index */
  size_t nended;             /* words of it */
  Img lk;                    /* without a table: the never-freed blocks'
                                layer (LK_NONE where none) */
  HtLayout lay;              /* the sealer's layout (preset) */
  int preset;                /* pass 1 left out: gran, nops and lay from it */
  int deco;                  /* axes and legend around the plot */
  long px, py;               /* the plot's place in the picture */
  Img out, fr, im;           /* picture, frame, plot */
  unsigned nf, fk;           /* frames to write, written */
  HtApng *anim;              /* the animated PNG being written, or NULL */
  int failed;                /* an error is in err */
  char *err;                 /* where errors go */
  size_t errlen;             /* its size */
} Map;

/* Order granules. */
static int map_cmp(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The place in gran of granule g, or of the first one above it: 1 when g
** is there. */
static int map_gran(Map *m, uint64_t g, size_t *at)
{
  size_t lo = 0, hi = m->ngran;
  /* Blocks come near others lately drawn: a binary search a block was
  ** most of this. */
  unsigned c = (unsigned)g & 63;
  if (g == m->pos[c].g) lo = m->pos[c].lo;
  else {
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (m->gran[mid] < g) lo = mid + 1; else hi = mid;
    }
    m->pos[c].g = g;
    m->pos[c].lo = lo;
  }
  *at = lo;
  return lo < m->ngran && m->gran[lo] == g;
}

/* Position of an address in the laid-out space (bytes from the start). */
static uint64_t map_pos(Map *m, uint64_t addr)
{
  size_t lo;
  if (map_gran(m, addr >> GRAN_SHIFT, &lo))
    return ((uint64_t)lo << GRAN_SHIFT) | (addr & ((1u << GRAN_SHIFT) - 1));
  return (uint64_t)lo << GRAN_SHIFT;
}

/* A bright colour from a hash of a site's name. */
static uint32_t map_colour(const char *name)
{
  uint64_t h = ht_hash64(ht_fnv1a(name));
  double hue = (double)(h % 360), s = 0.65 + (double)((h >> 12) % 30) / 100.0, v = 0.95;
  double c = v * s, x = c * (1 - __builtin_fabs(__builtin_fmod(hue / 60.0, 2) - 1)), mm = v - c;
  double r = 0, g = 0, b = 0;
  int k = (int)(hue / 60);
  if (k == 0) { r = c; g = x; } else if (k == 1) { r = x; g = c; } else if (k == 2) { g = c; b = x; }
  else if (k == 3) { g = x; b = c; } else if (k == 4) { r = x; b = c; } else { r = c; b = x; }
  return ((uint32_t)((r + mm) * 255) << 16) | ((uint32_t)((g + mm) * 255) << 8) |
         (uint32_t)((b + mm) * 255);
}

/* A stack's slot, or NULL when out of memory. */
static MapSite *map_slot(Map *m, uint32_t stack)
{
  if (stack >= m->nslot_of) {
    if (!m->slot_of) {  /* sized for the tape's stacks; calloc's pages fault as used */
      size_t n = (size_t)ht_reader_stack_count(m->r) + 1;
      if (n <= stack) n = (size_t)stack + 1;
      if (!(m->slot_of = calloc(n, sizeof(uint32_t)))) return NULL;
      m->nslot_of = n;
    } else if (ht_grow(&m->slot_of, &m->nslot_of, (size_t)stack + 1, sizeof(uint32_t)))
      return NULL;  /* (a journal names more stacks as it goes) */
  }
  uint32_t k = m->slot_of[stack];
  if (!k) {
    if (m->nsite >= UINT32_MAX - 1 ||
        ht_grow(&m->site, &m->capsite, m->nsite + 1, sizeof(MapSite)))
      return NULL;
    k = m->slot_of[stack] = (uint32_t)++m->nsite;
  }
  return &m->site[k - 1];
}

/* The colour of a stack's site, named once (s may be NULL: out of memory). */
static uint32_t map_colour_of(Map *m, MapSite *s, uint32_t stack)
{
  if (s && s->named) return s->col;
  char name[1024];
  ht_frames_site_name(m->r, stack, m->o->wrappers, m->o->nwrappers, name, sizeof(name), NULL);
  uint32_t c = map_colour(name);
  if (s) { s->col = c; s->named = 1; }
  return c;
}

/* Colour of a stack's site. */
static uint32_t map_site(Map *m, uint32_t stack)
{
  return map_colour_of(m, map_slot(m, stack), stack);
}

/* An image's pixels (NULL when out of memory). A picture of a MiB or more
** is rounded up to whole huge pages and lies on them: on 4 KiB pages the
** default picture's three (7 MB) were 1,800 page faults, ~10 ms on a
** virtual machine, for at most 1 MiB more. */
static uint32_t *img_alloc(const Img *im)
{
  size_t n = (size_t)im->w * im->h * sizeof(uint32_t);
  if (n < HT_HUGE_PAGE / 2) return malloc(n ? n : 1);
  return ht_huge_alloc((n + HT_HUGE_PAGE - 1) & ~(HT_HUGE_PAGE - 1));
}

/* Fill a rectangle (inclusive-exclusive, clipped). */
static void img_fill(Img *im, long x0, long x1, long y0, long y1, uint32_t c)
{
  if (x0 < 0) x0 = 0;
  if (y0 < 0) y0 = 0;
  if (x1 > (long)im->w) x1 = im->w;
  if (y1 > (long)im->h) y1 = im->h;
  /* (The row in a local: stores through im->px made the loop reload im.) */
  uint32_t *px = im->px;
  size_t w = im->w;
  for (long y = y0; y < y1; y++) {
    uint32_t *row = px + (size_t)y * w;
    /* A long block's row: wmemset's wide stores (wchar_t is 32 bits here);
    ** one store a pixel was most of the drawing's time. */
    if (sizeof(wchar_t) == 4 && x1 - x0 >= 16) wmemset((wchar_t *)row + x0, (wchar_t)c, x1 - x0);
    else for (long x = x0; x < x1; x++) row[x] = c;
  }
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

/* Draw one block on the time map (the plot, or the layer of the blocks
** never freed: both of the plot's size). */
static void map_rect(Map *m, Img *im, uint64_t born, uint64_t end, uint64_t addr,
                     uint64_t size, uint32_t colour)
{
  uint64_t last = addr + (size ? size : 1) - 1;
  size_t lo;
  int hit = map_gran(m, addr >> GRAN_SHIFT, &lo);
  uint64_t a = (uint64_t)lo << GRAN_SHIFT | (hit ? addr & ((1u << GRAN_SHIFT) - 1) : 0);
  uint64_t b = hit && last >> GRAN_SHIFT == addr >> GRAN_SHIFT  /* most: one granule */
             ? a + (last - addr) + 1 : map_pos(m, last) + 1;
  /* scales made once (ht_heapmap_plan): four divisions a block were most
  ** of the drawing */
  long x0 = (long)((double)born * m->xs), x1 = (long)((double)end * m->xs);
  long y0 = (long)((double)a * m->ys), y1 = (long)((double)b * m->ys);
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  if (x1 == x0 + 1 && y1 == y0 + 1 && x0 >= 0 && y0 >= 0 && x0 < (long)im->w &&
      y0 < (long)im->h)  /* most blocks: one pixel */
    im->px[(size_t)y0 * im->w + (size_t)x0] = colour;
  else img_fill(im, x0, x1, y0, y1, colour);
}

/* Draw one block on the time map in its site's colour. */
static void map_block(Map *m, Img *im, uint64_t born, uint64_t end, uint64_t addr,
                      uint64_t size, uint32_t stack)
{
  map_rect(m, im, born, end, addr, size, map_site(m, stack));
}

/* Draw a block never freed (born at op number born) on the layer of those
** (pass 2, without a table). */
static void map_never(Map *m, uint64_t born, uint64_t addr, uint64_t size, uint32_t stack)
{
  map_rect(m, &m->lk, born, m->nops, addr, size, map_site(m, stack));
}

/* Order live blocks by handle (allocation order). */
static int map_handle_cmp(const void *a, const void *b)
{
  uint64_t x = ((const HtOpBlock *)a)->handle, y = ((const HtOpBlock *)b)->handle;
  return x < y ? -1 : x > y;
}

/* The blocks live now in allocation order, whatever order the resolver's
** table holds them in (blocks sharing a pixel: the newest is drawn last).
** *n gets how many; NULL when out of memory (caller frees). */
static HtOpBlock *map_live(const HtResolve *rs, size_t *n)
{
  HtOpBlock *v = malloc((rs->live.count ? rs->live.count : 1) * sizeof(*v));
  *n = 0;
  if (!v) return NULL;
  size_t it = 0;
  while (*n < rs->live.count && ht_ops_live_next(rs, &it, &v[*n])) ++*n;
  qsort(v, *n, sizeof(*v), map_handle_cmp);
  return v;
}

/* One frame: the live blocks, the laid-out space wrapped row by row; to
** dir/frame_NNNNN.png and/or appended to the animation. */
static int map_frame(Map *m, const HtResolve *rs, Img *fr, const char *dir, unsigned k,
                     char *err, size_t errlen)
{
  double span = (double)((uint64_t)m->ngran << GRAN_SHIFT);
  double per = span / ((double)fr->w * fr->h);  /* bytes per pixel */
  if (per < 1) per = 1;
  for (size_t i = 0; i < (size_t)fr->w * fr->h; i++) fr->px[i] = BG;
  size_t n;
  HtOpBlock *live = map_live(rs, &n);
  if (!live) { snprintf(err, errlen, "out of memory"); return -1; }
  for (size_t i = 0; i < n; i++) {
    const HtOpBlock *b = &live[i];
    uint32_t c = map_site(m, b->stack);
    size_t p0 = (size_t)((double)map_pos(m, b->addr) / per);
    size_t p1 = (size_t)((double)map_pos(m, b->addr + (b->size ? b->size : 1) - 1) / per) + 1;
    for (size_t p = p0; p < p1 && p < (size_t)fr->w * fr->h; p++) fr->px[p] = c;
  }
  free(live);
  if (m->anim && ht_apng_frame(m->anim, fr->px, err, errlen)) return -1;
  if (!dir) return 0;
  char path[4096];
  snprintf(path, sizeof(path), "%s/frame_%05u.png", dir, k);
  return img_png(fr, path, err, errlen);
}

/* One character at (x, y), its coverage blended over the pixels. */
static void img_char(Img *im, long x, long y, char ch, uint32_t c)
{
  if (ch < 32 || ch > 126) ch = '?';
  const char *g = font_glyph[ch - 32];
  for (long j = 0; j < FH; j++)
    for (long i = 0; i < FW; i++) {
      int a = g[j * FW + i];
      a = a <= '9' ? a - '0' : a - 'a' + 10;
      if (!a || x + i < 0 || y + j < 0 || x + i >= (long)im->w || y + j >= (long)im->h) continue;
      uint32_t *p = &im->px[(size_t)(y + j) * im->w + (size_t)(x + i)], o = 0;
      for (int sh = 0; sh < 24; sh += 8) {
        unsigned bg = (*p >> sh) & 255, fg = (c >> sh) & 255;
        o |= (uint32_t)((bg * (15 - a) + fg * a) / 15) << sh;
      }
      *p = o;
    }
}

/* Text at (x, y) (top left), cut to at most max characters; align 0 left,
** 1 centred, 2 right of x. */
static void img_text(Img *im, long x, long y, const char *s, size_t max, int align, uint32_t c)
{
  size_t n = strlen(s);
  if (n > max) n = max;
  if (align) x -= (long)(n * FW) / (align == 1 ? 2 : 1);
  for (size_t i = 0; i < n; i++) img_char(im, x + (long)i * FW, y, s[i], c);
}

/* A round step (1, 2 or 5 times a power of ten, in units of unit, never
** below one unit) giving at most n ticks over [0, hi]. */
static double map_step(double hi, unsigned n, double unit)
{
  double raw = hi / unit / (n ? n : 1), p = 1;
  if (raw <= 0) return unit;
  while (p * 10 <= raw) p *= 10;
  while (p > raw) p /= 10;
  double st = raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
  return st < 1 ? unit : st * unit;
}

/* A byte count for an axis: "0", "512 KiB", "1.5 MiB". */
static void map_bytes(char *buf, size_t len, double v)
{
  static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int k = 0;
  while (v >= 1024 && k < 4) { v /= 1024; k++; }
  snprintf(buf, len, "%.4g %s", v, u[k]);
}

/* Sort context: the map. */
static const Map *map_sort;

/* Stacks by bytes allocated, most first. */
static int map_stack_cmp(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  const Map *m = map_sort;
  uint64_t p = m->site[m->slot_of[x] - 1].bytes, q = m->site[m->slot_of[y] - 1].bytes;
  if (p != q) return p < q ? 1 : -1;
  return x < y ? -1 : x > y;
}

/* The stacks that allocated, by bytes allocated (most first): both legends'
** order. */
static void map_rank(Map *m)
{
  if (m->ranked) return;
  map_sort = m;
  qsort(m->alloc, m->nalloc, sizeof(uint32_t), map_stack_cmp);
  m->ranked = 1;
}

/* A site name with the folders of its file names left out (the legend's
** column is narrow); a runtime location keeps its '@'. */
static const char *map_unfolder(const char *s, char *buf, size_t len)
{
  size_t o = 0, tok = 0;
  for (; *s && o + 1 < len; s++) {
    if (*s == '/') { o = tok + (o > tok && buf[tok] == '@'); continue; }
    buf[o++] = *s;
    if (*s == ' ') tok = o;
  }
  buf[o] = 0;
  return buf;
}

/* The picture: title, the plot at (px, py), round ticks on both axes with
** their labels, and a legend of the sites with the most bytes. */
static void map_decorate(Map *m, Img *out, const Img *plot, long px, long py, const char *exe)
{
  for (size_t i = 0; i < (size_t)out->w * out->h; i++) out->px[i] = PAPER;
  for (unsigned y = 0; y < plot->h; y++)
    memcpy(out->px + (size_t)(py + y) * out->w + (size_t)px, plot->px + (size_t)y * plot->w,
           plot->w * sizeof(uint32_t));
  char buf[1200];
  double span = (double)((uint64_t)m->ngran << GRAN_SHIFT);
  snprintf(buf, sizeof(buf), "heap map of %s: %" PRIu64 " operations over %zu KiB of used address space",
           exe && *exe ? exe : "the tape", m->nops, m->ngran << (GRAN_SHIFT - 10));
  img_text(out, px, 5, buf, (out->w - (size_t)px) / FW, 0, INK);
  /* y: offset in the used address space laid end to end, lowest at the top */
  double unit = 1;
  while (span / unit >= 1024) unit *= 1024;
  double ys = map_step(span, plot->h / 40 ? plot->h / 40 : 1, unit);
  for (double v = 0; v <= span; v += ys) {
    long y = py + (long)(v / span * (plot->h - 1));
    img_fill(out, px - 5, px, y, y + 1, GRID);
    map_bytes(buf, sizeof(buf), v);
    img_text(out, px - 7, y - FH / 2, buf, 10, 2, INK);
  }
  /* x: operation number */
  double xs = map_step((double)m->nops, plot->w / 90 ? plot->w / 90 : 1, 1);
  for (double v = 0; v <= (double)m->nops; v += xs) {
    long x = px + (long)(v / (double)m->nops * (plot->w - 1));
    img_fill(out, x, x + 1, py + (long)plot->h, py + (long)plot->h + 5, GRID);
    snprintf(buf, sizeof(buf), "%.0f", v);
    img_text(out, x, py + (long)plot->h + 6, buf, 12, 1, INK);
  }
  img_text(out, px + (long)plot->w / 2, py + (long)plot->h + 6 + FH,
           "operation number; y: used address space (grey lines: gaps)",
           plot->w / FW, 1, INK);
  img_fill(out, px - 1, px, py, py + (long)plot->h, GRID);
  img_fill(out, px, px + (long)plot->w, py + (long)plot->h, py + (long)plot->h + 1, GRID);
  /* legend: stacks by bytes allocated */
  long lx = px + (long)plot->w + 12, ly = py;
  size_t cols = out->w > (unsigned)lx + 30 ? (out->w - (size_t)lx - 22) / FW : 0;
  if (cols < 8) return;
  map_rank(m);
  size_t n = m->nalloc;
  const uint32_t *st = m->alloc;
  img_text(out, lx, ly, "stacks by bytes allocated", cols + 2, 0, INK);
  ly += FH + 6;
  for (size_t i = 0; i < n && ly + 2 * FH < py + (long)plot->h; i++) {
    char name[1024], shown[1024], size[32];
    map_bytes(size, sizeof(size), (double)m->site[m->slot_of[st[i]] - 1].bytes);
    img_fill(out, lx, lx + 10, ly + 2, ly + 12, map_site(m, st[i]));
    snprintf(buf, sizeof(buf), "%s", size);
    img_text(out, lx + 14, ly, buf, cols, 0, INK);
    ht_frames_site_name(m->r, st[i], m->o->wrappers, m->o->nwrappers, name,
                        sizeof(name), NULL);
    img_text(out, lx + 14, ly + FH, map_unfolder(name, shown, sizeof(shown)), cols, 0, INK);
    ly += 2 * FH + 4;
  }
  if (n && ly + FH < py + (long)plot->h) {
    snprintf(buf, sizeof(buf), "%zu stacks in all", n);
    img_text(out, lx, ly, buf, cols + 2, 0, INK);
  }
}

/* -- The two passes ----------------------------------------------------- */

/* Start a heap map. */
HtHeapmap *ht_heapmap_new(const HtReader *r, const char *png, const HtHeapmapOpts *o,
                          char *err, size_t errlen)
{
  Map *m = calloc(1, sizeof(*m));
  snprintf(err, errlen, "out of memory");
  if (m) m->lay_g = UINT64_MAX;
  if (!m) return NULL;
  m->r = r;
  m->o = o;
  m->png = png;
  m->err = err;
  m->errlen = errlen;
  /* The plot inside the picture: axes on the left and below, a legend on
  ** the right; a picture too small for them is all plot. */
  m->deco = o->w >= 400 && o->h >= 200;
  unsigned lw = !m->deco ? 0 : o->w >= 800 ? (o->w / 4 < 320 ? o->w / 4 : 320) : 0;
  m->px = m->deco ? 80 : 0;
  m->py = m->deco ? 24 : 0;
  m->out = (Img){.w = o->w, .h = o->h};
  m->fr = (Img){.w = o->fw, .h = o->fh};
  m->im = (Img){.w = m->deco ? o->w - 80 - 10 - lw : o->w,
                .h = m->deco ? o->h - 24 - 40 : o->h};
  if (ht_map_init(&m->g, 1024)) {
    ht_heapmap_destroy(m);
    return NULL;
  }
  return m;
}

/* Release a heap map. */
void ht_heapmap_destroy(HtHeapmap *m)
{
  if (!m) return;
  free(m->im.px);
  free(m->out.px);
  free(m->fr.px);
  free(m->lk.px);
  free(m->ended);
  free(m->gran);
  ht_layout_free(&m->lay);
  if (m->anim) {  /* left open by an error: its message is already in err */
    char junk[256];
    ht_apng_close(m->anim, junk, sizeof(junk));
  }
  free(m->slot_of);
  free(m->site);
  free(m->alloc);
  ht_map_free(&m->g);
  free(m);
}

/* Note that the block of allocation index i ends before the tape does. */
static int map_ended(Map *m, uint64_t i)
{
  if (i / 64 >= m->nended) {
    size_t cap = m->nended, n = (size_t)(i / 64) + 1;
    if (ht_grow(&m->ended, &cap, n, sizeof(uint64_t))) return -1;
    memset(m->ended + m->nended, 0, (cap - m->nended) * sizeof(uint64_t));
    m->nended = cap;
  }
  m->ended[i / 64] |= 1ull << (i % 64);
  return 0;
}

/* Add an allocation's bytes to its stack's (the legend's order): 0, or -1
** when out of memory. */
static int map_site_bytes(Map *m, const HtEvent *ev)
{
  MapSite *s = map_slot(m, ev->stack);
  if (!s) return -1;
  if (!s->alloc) {
    if (ht_grow(&m->alloc, &m->capalloc, m->nalloc + 1, sizeof(uint32_t))) return -1;
    m->alloc[m->nalloc++] = ev->stack;
    s->alloc = 1;
  }
  s->bytes += ev->size;
  return 0;
}

/* Pass 1: the granules blocks touch and the bytes of each site. It needs
** no ops stream: an op is an ALLOC or a known FREE, a New's block is its
** ALLOC's. */
void ht_heapmap_layout(void *arg, const HtRes *res)
{
  Map *m = arg;
  const HtEvent *ev = res->ev;
  if (m->failed) return;
  if (res->rs->tableless && ((res->ev->type == HT_EV_FREE && res->known &&
                              map_ended(m, res->blk.index)) ||
                             (res->ev->type == HT_EV_ALLOC && res->dup &&
                              map_ended(m, res->old.index)))) {
    m->failed = 1;
    return;
  }
  m->lay_ops += ev->type == HT_EV_ALLOC || (ev->type == HT_EV_FREE && res->known);
  if (ev->type != HT_EV_ALLOC) return;
  if (map_site_bytes(m, ev)) { m->failed = 1; return; }
  uint64_t last = (ev->addr + (ev->size ? ev->size - 1 : 0)) >> GRAN_SHIFT;
  for (uint64_t k = ev->addr >> GRAN_SHIFT; k <= last; k++) {
    if (k == m->lay_g) continue;  /* most blocks lie in the granule of the one before */
    if (!ht_map_get(&m->g, k) && ht_map_put(&m->g, k, 1)) { m->failed = 1; return; }
    m->lay_g = k;
  }
}

int ht_heapmap_preset(HtHeapmap *m, HtReader *r)
{
  int rc = ht_layout_load(r, &m->lay);
  /* The tape's figures and snapshots were loaded for it (cc1plus: 7 MB);
  ** nothing else here reads them. */
  ht_reader_agg_release(r);
  if (rc < 0) return -1;  /* (err says out of memory) */
  if (!rc) return 0;
  m->preset = 1;
  m->gran = m->lay.gran;  /* taken over */
  m->ngran = m->lay.ngran;
  m->lay.gran = NULL;
  m->lay_ops = m->lay.nops;
  return 1;
}

/* Between the passes: lay the granules out and prepare the pictures. */
int ht_heapmap_plan(HtHeapmap *m)
{
  if (m->failed) return -1;
  m->nops = m->lay_ops ? m->lay_ops : 1;
  if (!m->preset) {
    m->gran = malloc((m->g.count ? m->g.count : 1) * sizeof(uint64_t));
    if (!m->gran) return -1;
    size_t it = 0;
    uint64_t k, v;
    while (ht_map_next(&m->g, &it, &k, &v)) m->gran[m->ngran++] = k;
    qsort(m->gran, m->ngran, sizeof(uint64_t), map_cmp);
  }
  for (size_t i = 0; i < HT_COUNTOF(m->pos); i++) m->pos[i].g = UINT64_MAX;
  if (!m->ngran) { snprintf(m->err, m->errlen, "no allocations on the tape"); return -1; }
  Img *im = &m->im;
  m->xs = (double)im->w / (double)m->nops;
  m->ys = (double)im->h / (double)((uint64_t)m->ngran << GRAN_SHIFT);
  const char *png = m->png;
  im->px = png ? img_alloc(im) : NULL;
  int frames = m->o->frames || m->o->animate;
  m->fr.px = frames ? img_alloc(&m->fr) : NULL;
  if ((png && !im->px) || (frames && !m->fr.px)) return -1;
  for (size_t i = 0; png && i < (size_t)im->w * im->h; i++) im->px[i] = BG;
  for (size_t i = 1; png && i < m->ngran; i++)  /* jumps in the address space */
    if (m->gran[i] != m->gran[i - 1] + 1) {
      long y = (long)((double)((uint64_t)i << GRAN_SHIFT) * im->h /
                      (double)((uint64_t)m->ngran << GRAN_SHIFT));
      img_fill(im, 0, im->w, y, y + 1, SEP);
    }
  m->nf = frames ? (m->o->nframes ? m->o->nframes : 1) : 0;
  if (m->o->animate &&
      !(m->anim = ht_apng_open(m->o->animate, m->fr.w, m->fr.h, m->nf,
                               m->o->frame_ms ? m->o->frame_ms : 100, m->err, m->errlen)))
    return -1;
  return 0;
}

/* Pass 2: each freed block drawn; the frames written as their moments pass.
** An op is an ALLOC or a known FREE, numbered as the resolver numbers them
** (HtOps's conversion of each, most of it for no use here, is left out). */
void ht_heapmap_draw(void *arg, const HtRes *res)
{
  Map *m = arg;
  const HtEvent *ev = res->ev;
  if (m->failed) return;
  if (ev->type == HT_EV_ALLOC) {
    if (m->preset && map_site_bytes(m, ev)) {
      snprintf(m->err, m->errlen, "out of memory");
      m->failed = 1;
      return;
    }
  } else if (ev->type != HT_EV_FREE || !res->known) return;
  const HtBlock *b = &res->blk;
  uint64_t index = res->op, i = b->index;
  if (ev->type == HT_EV_FREE && m->png)
    map_block(m, &m->im, b->born_op, index, b->addr, b->size, b->stack);
  if (ev->type == HT_EV_ALLOC && m->png && res->rs->tableless &&
      (m->preset ? ht_layout_never(&m->lay, i)
                 : !(i / 64 < m->nended && (m->ended[i / 64] >> (i % 64) & 1)))) {  /* never freed */
    if (!m->lk.px) {
      m->lk = (Img){.w = m->im.w, .h = m->im.h};
      if (!(m->lk.px = img_alloc(&m->lk))) {
        snprintf(m->err, m->errlen, "out of memory");
        m->failed = 1;
        return;
      }
      for (size_t k = 0; k < (size_t)m->lk.w * m->lk.h; k++) m->lk.px[k] = LK_NONE;
    }
    map_never(m, index, ev->addr, ev->size, ev->stack);
  }
  while (m->fk < m->nf && index + 1 >= (m->fk + 1) * m->nops / m->nf)
    if (map_frame(m, res->rs, &m->fr, m->o->frames, m->fk++, m->err, m->errlen)) {
      m->failed = 1;
      return;
    }
}

/* After pass 2: blocks never freed, the picture and the legend. */
int ht_heapmap_finish(HtHeapmap *m, const HtResolve *rs)
{
  if (m->failed) return -1;
  snprintf(m->err, m->errlen, "out of memory");
  size_t n;
  const char *png = m->png;
  if (rs->tableless) {  /* the never-freed blocks' layer over the rest */
    for (size_t i = 0; png && m->lk.px && i < (size_t)m->im.w * m->im.h; i++)
      if (m->lk.px[i] != LK_NONE) m->im.px[i] = m->lk.px[i];
  } else {
    HtOpBlock *live = png ? map_live(rs, &n) : NULL;
    if (png && !live) return -1;
    for (size_t i = 0; png && i < n; i++)
      map_block(m, &m->im, live[i].born, m->nops, live[i].addr, live[i].size, live[i].stack);
    free(live);
  }
  if (png && m->deco) {
    m->out.px = img_alloc(&m->out);
    if (!m->out.px) return -1;
    map_decorate(m, &m->out, &m->im, m->px, m->py, ht_reader_header(m->r)->exe);
  }
  if (png && img_png(m->deco ? &m->out : &m->im, png, m->err, m->errlen)) return -1;
  if (m->anim) {
    HtApng *a = m->anim;
    m->anim = NULL;
    if (ht_apng_close(a, m->err, m->errlen)) return -1;
  }
  FILE *legend = m->o->legend;
  if (legend) {  /* the sites of the most bytes, as the picture's legend */
    char name[1024];
    fprintf(legend, "heap map: %" PRIu64 " ops over %zu KiB of address space in %zu granules of 64 KiB\n",
            m->nops, m->ngran << (GRAN_SHIFT - 10), m->ngran);
    fprintf(legend, "site colours:\n");
    map_rank(m);
    uint32_t seen[40];
    unsigned shown = 0;
    for (size_t i = 0; i < m->nalloc && shown < HT_COUNTOF(seen); i++) {
      uint32_t c = map_site(m, m->alloc[i]);
      unsigned j = 0;
      while (j < shown && seen[j] != c) j++;
      if (j < shown) continue;
      seen[shown++] = c;
      ht_frames_site_name(m->r, m->alloc[i], m->o->wrappers, m->o->nwrappers, name,
                          sizeof(name), NULL);
      fprintf(legend, "  #%06" PRIx32 "  %s\n", c, name);
    }
  }
  return 0;
}

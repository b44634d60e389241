/* heaptape -- animated PNG (APNG) writer: signature, IHDR, acTL, then per
** frame an fcTL and its pixels (IDAT for the first frame, so a viewer
** without APNG shows it as a still picture; fdAT after), and IEND. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "apng.h"

#define CHUNK_MAX (1u << 20)  /* pixel data per IDAT/fdAT chunk */

struct Apng {
  FILE *f;                   /* the file */
  const char *path;          /* its name, for messages */
  unsigned w, h;             /* frame size */
  unsigned delay_ms;         /* time each frame shows */
  uint32_t seq;              /* next fcTL/fdAT sequence number */
  uint32_t frames;           /* frames written */
  long actl;                 /* file offset of the acTL chunk */
  unsigned char *raw, *z;    /* filtered rows, their deflated form */
  size_t rawlen, zcap;       /* their sizes */
  int bad;                   /* a write failed */
};

/* Store v big-endian at p. */
static void put32(unsigned char *p, uint32_t v)
{
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

/* One chunk: length, type, data, CRC of type and data. */
static void apng_chunk(HtApng *a, const char *type, const unsigned char *data, size_t len)
{
  unsigned char hd[8], crc[4];
  put32(hd, (uint32_t)len);
  memcpy(hd + 4, type, 4);
  uLong c = crc32(0L, (const Bytef *)type, 4);
  if (len) c = crc32(c, data, (uInt)len);
  put32(crc, (uint32_t)c);
  a->bad |= fwrite(hd, 8, 1, a->f) != 1;
  if (len) a->bad |= fwrite(data, len, 1, a->f) != 1;
  a->bad |= fwrite(crc, 4, 1, a->f) != 1;
}

/* The acTL body: frames, plays (0: loop forever). */
static void apng_actl(HtApng *a, uint32_t frames)
{
  unsigned char b[8];
  put32(b, frames);
  put32(b + 4, 0);
  apng_chunk(a, "acTL", b, sizeof(b));
}

/* Start an APNG of nframes frames of w x h. */
HtApng *ht_apng_open(const char *path, unsigned w, unsigned h, unsigned nframes,
                     unsigned delay_ms, char *err, size_t errlen)
{
  HtApng *a = calloc(1, sizeof(*a));
  if (!a) { snprintf(err, errlen, "out of memory"); return NULL; }
  a->path = path;
  a->w = w;
  a->h = h;
  a->delay_ms = delay_ms;
  a->rawlen = (size_t)h * (1 + (size_t)w * 3);
  a->zcap = compressBound((uLong)a->rawlen);
  a->raw = malloc(a->rawlen);
  a->z = malloc(a->zcap);
  if (!a->raw || !a->z) {
    free(a->raw); free(a->z); free(a);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  a->f = fopen(path, "wb");
  if (!a->f) {
    snprintf(err, errlen, "%s: cannot create (%s)", path, strerror(errno));
    free(a->raw); free(a->z); free(a);
    return NULL;
  }
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  a->bad |= fwrite(sig, 8, 1, a->f) != 1;
  unsigned char ihdr[13];
  put32(ihdr, w);
  put32(ihdr + 4, h);
  ihdr[8] = 8;   /* bits per sample */
  ihdr[9] = 2;   /* RGB */
  ihdr[10] = ihdr[11] = ihdr[12] = 0;  /* deflate, adaptive filters, no interlace */
  apng_chunk(a, "IHDR", ihdr, sizeof(ihdr));
  a->actl = ftell(a->f);
  apng_actl(a, nframes ? nframes : 1);
  return a;
}

/* Append one frame. */
int ht_apng_frame(HtApng *a, const uint32_t *px, char *err, size_t errlen)
{
  /* Rows with the Sub filter: the maps are runs of one colour, which then
  ** become runs of zeros. */
  size_t stride = 1 + (size_t)a->w * 3;
  for (unsigned y = 0; y < a->h; y++) {
    unsigned char *r = a->raw + (size_t)y * stride;
    const uint32_t *s = px + (size_t)y * a->w;
    r[0] = 1;
    unsigned char prev[3] = {0, 0, 0};
    for (unsigned x = 0; x < a->w; x++) {
      unsigned char c[3] = {(unsigned char)(s[x] >> 16), (unsigned char)(s[x] >> 8),
                            (unsigned char)s[x]};
      for (int k = 0; k < 3; k++) r[1 + 3 * x + k] = (unsigned char)(c[k] - prev[k]);
      memcpy(prev, c, 3);
    }
  }
  uLongf zlen = (uLongf)a->zcap;
  if (compress2(a->z, &zlen, a->raw, (uLong)a->rawlen, Z_DEFAULT_COMPRESSION) != Z_OK) {
    snprintf(err, errlen, "%s: cannot compress a frame", a->path);
    return -1;
  }
  unsigned char fc[26];
  put32(fc, a->seq++);
  put32(fc + 4, a->w);
  put32(fc + 8, a->h);
  put32(fc + 12, 0);                     /* x offset */
  put32(fc + 16, 0);                     /* y offset */
  fc[20] = (unsigned char)(a->delay_ms >> 8);  /* delay = delay_ms / 1000 s */
  fc[21] = (unsigned char)a->delay_ms;
  fc[22] = 1000 >> 8;
  fc[23] = 1000 & 255;
  fc[24] = 0;                            /* dispose: none (every frame is whole) */
  fc[25] = 0;                            /* blend: source */
  apng_chunk(a, "fcTL", fc, sizeof(fc));
  for (size_t off = 0; off < zlen; off += CHUNK_MAX) {
    size_t n = zlen - off < CHUNK_MAX ? zlen - off : CHUNK_MAX;
    if (!a->frames) { apng_chunk(a, "IDAT", a->z + off, n); continue; }
    unsigned char *b = malloc(n + 4);
    if (!b) { snprintf(err, errlen, "out of memory"); return -1; }
    put32(b, a->seq++);
    memcpy(b + 4, a->z + off, n);
    apng_chunk(a, "fdAT", b, n + 4);
    free(b);
  }
  a->frames++;
  if (a->bad) { snprintf(err, errlen, "%s: write error (%s)", a->path, strerror(errno)); return -1; }
  return 0;
}

/* End the file: IEND, and acTL rewritten with the frames written. */
int ht_apng_close(HtApng *a, char *err, size_t errlen)
{
  if (!a) return -1;
  int rc = 0;
  if (!a->frames && !a->bad) {
    snprintf(err, errlen, "%s: no frames", a->path);
    rc = -1;
  }
  apng_chunk(a, "IEND", NULL, 0);
  if (!a->bad && fseek(a->f, a->actl, SEEK_SET) == 0) apng_actl(a, a->frames);
  else a->bad = 1;
  if (fclose(a->f) || a->bad) {
    if (!rc) snprintf(err, errlen, "%s: write error", a->path);
    rc = -1;
  }
  free(a->raw);
  free(a->z);
  free(a);
  return rc;
}

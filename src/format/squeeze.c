/* heaptape -- compress a tape's raw packets in place: heaptape's Valgrind
** tool cannot link zstd, so `record --access` squeezes its tape before the
** tape is finalised (ACCESS runs shrink about 5x). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "../base/fdio.h"
#include "../base/varint.h"
#include "squeeze.h"

/* Write all of n bytes: 0, or -1 (errno). */
static int sq_write(int fd, const void *p, size_t n)
{
  return ht_fd_write(fd, p, n, -1) == n ? 0 : -1;
}

/* Compress every raw EVENTS and ACCESS packet of the tape at path (at zstd
** level); other packets, and any damage, are copied as they are. */
int ht_tape_squeeze(const char *path, int level, char *err, size_t errlen)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st)) {
    snprintf(err, errlen, "%s: cannot open (%s)", path, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  size_t size = (size_t)st.st_size;
  if (size < HT_HEADER_FIXED + 4) { close(fd); return 0; }  /* left to the reader */
  const uint8_t *d = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (d == MAP_FAILED) {
    snprintf(err, errlen, "%s: cannot map (%s)", path, strerror(errno));
    return -1;
  }
  char tmp[4096];
  snprintf(tmp, sizeof(tmp), "%s.squeeze", path);
  int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 0777);
  ZSTD_CCtx *zc = ZSTD_createCCtx();
  size_t zcap = ZSTD_compressBound(HT_PACKET_MAX);
  uint8_t *zbuf = malloc(zcap);
  int rc = -1;
  if (out < 0 || !zc || !zbuf) {
    snprintf(err, errlen, "%s: cannot write (%s)", tmp, out < 0 ? strerror(errno) : "out of memory");
    goto done;
  }
  size_t off = HT_HEADER_FIXED + (size_t)ht_ru32(d + 12) + 4;
  if (off > size) off = size;
  if (sq_write(out, d, off)) goto werr;
  while (off < size) {
    const uint8_t *h = d + off;
    size_t blen = size - off >= HT_PHEAD_SIZE ? ht_ru32(h + 8) : 0;
    if (size - off < HT_PHEAD_SIZE || memcmp(h, HT_PMAGIC, 4) || blen > HT_PACKET_MAX ||
        size - off - HT_PHEAD_SIZE < blen) {  /* damage or a cut end: the rest as it is */
      if (sq_write(out, h, size - off)) goto werr;
      break;
    }
    size_t n = HT_PHEAD_SIZE + blen;
    unsigned kind = h[4], flags = h[5];
    size_t z = 0;
    if ((kind == HT_P_EVENTS || kind == HT_P_ACCESS) && !flags && blen >= 64 &&
        ht_ru32(h + 12) == blen &&
        (uint32_t)crc32(crc32(0, h, HT_PHEAD_SIZE - 4), h + HT_PHEAD_SIZE, (uInt)blen) ==
          ht_ru32(h + HT_PHEAD_SIZE - 4))
      z = ZSTD_compressCCtx(zc, zbuf, zcap, h + HT_PHEAD_SIZE, blen, level);
    if (z && !ZSTD_isError(z) && z < blen) {
      uint8_t nh[HT_PHEAD_SIZE];
      memcpy(nh, h, HT_PHEAD_SIZE);
      nh[5] = HT_PF_ZSTD;
      ht_wu32(nh + 8, (uint32_t)z);
      uLong crc = crc32(crc32(0, nh, HT_PHEAD_SIZE - 4), zbuf, (uInt)z);
      ht_wu32(nh + HT_PHEAD_SIZE - 4, (uint32_t)crc);
      if (sq_write(out, nh, sizeof(nh)) || sq_write(out, zbuf, z)) goto werr;
    } else if (sq_write(out, h, n)) {
      goto werr;
    }
    off += n;
  }
  if (close(out)) { out = -1; goto werr; }
  out = -1;
  if (rename(tmp, path)) {
    snprintf(err, errlen, "%s: cannot replace (%s)", path, strerror(errno));
    unlink(tmp);
    goto done;
  }
  rc = 0;
  goto done;
werr:
  snprintf(err, errlen, "%s: write error (%s)", tmp, strerror(errno));
  unlink(tmp);
done:
  if (out >= 0) close(out);
  ZSTD_freeCCtx(zc);
  free(zbuf);
  munmap((void *)d, size);
  return rc;
}

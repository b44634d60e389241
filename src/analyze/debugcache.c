/* heaptape -- the debug-file cache (see debugcache.h for what and why). */
#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debugcache.h"
#include "../base/fdio.h"

#define DC_MAX_INPUT ((off_t)1 << 30)  /* larger debug files are left alone */

/* The cache directory (malloc'd), or NULL when it is off. */
static char *dc_dir(void)
{
  const char *e = getenv("HEAPTAPE_CACHE"), *base = NULL, *tail = "/debug";
  if (e) {
    if (!*e || !strcmp(e, "off")) return NULL;
    base = e;
  } else if ((e = getenv("XDG_CACHE_HOME")) && e[0] == '/') {
    base = e; tail = "/heaptape/debug";
  } else if ((e = getenv("HOME")) && e[0] == '/') {
    base = e; tail = "/.cache/heaptape/debug";
  } else {
    return NULL;
  }
  size_t n = strlen(base) + strlen(tail) + 1;
  char *d = malloc(n);
  if (d) snprintf(d, n, "%s%s", base, tail);
  return d;
}

/* Path of the copy of bid (tmp: a temporary name of this process). */
static char *dc_path(const char *dir, const uint8_t *bid, size_t len, int tmp)
{
  if (!len || len > 64) return NULL;
  char hex[2 * 64 + 1];
  for (size_t i = 0; i < len; i++) sprintf(hex + 2 * i, "%02x", bid[i]);
  size_t n = strlen(dir) + sizeof(hex) + 48;
  char *p = malloc(n);
  if (!p) return NULL;
  if (tmp) snprintf(p, n, "%s/.%s.%ld.tmp", dir, hex, (long)getpid());
  else snprintf(p, n, "%s/%s.debug", dir, hex);
  return p;
}

int ht_elf_has_build_id(int fd, const uint8_t *bid, size_t bid_len)
{
  elf_version(EV_CURRENT);
  Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
  const void *b = NULL;
  ssize_t n = e ? dwelf_elf_gnu_build_id(e, &b) : -1;
  int ok = n == (ssize_t)bid_len && !memcmp(b, bid, bid_len);
  if (e) elf_end(e);
  return ok;
}

int ht_debugcache_open(const uint8_t *bid, size_t bid_len, char **path)
{
  char *dir = dc_dir();
  char *p = dir ? dc_path(dir, bid, bid_len, 0) : NULL;
  free(dir);
  int fd = p ? open(p, O_RDONLY | O_CLOEXEC) : -1;
  if (fd >= 0 && !ht_elf_has_build_id(fd, bid, bid_len)) {  /* damaged: make it again */
    close(fd);
    unlink(p);
    fd = -1;
  }
  if (fd < 0) free(p);
  else *path = p;
  return fd;
}

/* Does the ELF file open as fd have SHF_COMPRESSED sections? */
static int dc_compressed(int fd)
{
  Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
  int any = 0;
  for (Elf_Scn *s = NULL; e && !any && (s = elf_nextscn(e, s));) {
    GElf_Shdr sh;
    any = gelf_getshdr(s, &sh) && (sh.sh_flags & SHF_COMPRESSED);
  }
  if (e) elf_end(e);
  return any;
}

/* mkdir -p; 0 when dir exists afterwards. */
static int dc_mkdirs(char *dir)
{
  for (char *s = dir + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    int bad = mkdir(dir, 0755) && errno != EEXIST;
    *s = '/';
    if (bad) return -1;
  }
  return mkdir(dir, 0755) && errno != EEXIST ? -1 : 0;
}

/* Copy all of src into dst (both open); 0 on success. */
static int dc_copy(int src, int dst)
{
  char buf[1 << 16];
  off_t at = 0;
  for (;;) {
    ssize_t r = pread(src, buf, sizeof(buf), at);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) return 0;
    if (ht_fd_write(dst, buf, (size_t)r, -1) != (size_t)r) return -1;
    at += r;
  }
}

/* Inflate every compressed section of the ELF file open read-write as fd. */
static int dc_inflate(int fd)
{
  Elf *e = elf_begin(fd, ELF_C_RDWR, NULL);
  if (!e) return -1;
  int bad = 0;
  for (Elf_Scn *s = NULL; !bad && (s = elf_nextscn(e, s));) {
    GElf_Shdr sh;
    if (gelf_getshdr(s, &sh) && (sh.sh_flags & SHF_COMPRESSED))
      bad = elf_compress(s, 0, 0) < 0;
  }
  if (!bad) bad = elf_update(e, ELF_C_WRITE) < 0;
  elf_end(e);
  return bad ? -1 : 0;
}

int ht_debugcache_store(const uint8_t *bid, size_t bid_len, int fd, char **path)
{
  struct stat st;
  elf_version(EV_CURRENT);
  if (fstat(fd, &st) || st.st_size > DC_MAX_INPUT || !dc_compressed(fd)) return -1;
  char *dir = dc_dir(), *tmp = NULL, *fin = NULL;
  int out = -1;
  if (dir && !dc_mkdirs(dir) && (tmp = dc_path(dir, bid, bid_len, 1)) &&
      (fin = dc_path(dir, bid, bid_len, 0))) {
    int t = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (t >= 0) {
      int ok = !dc_copy(fd, t) && !dc_inflate(t);
      if (close(t)) ok = 0;
      if (ok && !rename(tmp, fin)) out = open(fin, O_RDONLY | O_CLOEXEC);
      else unlink(tmp);
    }
  }
  free(dir);
  free(tmp);
  if (out < 0) free(fin);
  else *path = fin;
  return out;
}

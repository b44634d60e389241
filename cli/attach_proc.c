/* heaptape -- a running process seen from outside: /proc/PID, the dynamic
** symbols of its objects (libelf), its memory (process_vm_readv/writev). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "attach_proc.h"

/* -- /proc/PID ---------------------------------------------------------------- */

/* /proc/PID/<name> into b (NUL-terminated); its length, or -1. */
static ssize_t proc_file(pid_t pid, const char *name, char *b, size_t cap)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, name);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = 0, r;
  while ((size_t)n < cap - 1 && (r = read(fd, b + n, cap - 1 - (size_t)n)) > 0) n += r;
  close(fd);
  b[n] = 0;
  return n;
}

/* Field f (1-based, as proc(5) numbers them) of /proc/PID/stat, after the
** command name (which may hold spaces); NULL if unreadable. */
static const char *proc_stat_field(pid_t pid, int f, char *b, size_t cap)
{
  if (proc_file(pid, "stat", b, cap) <= 0) return NULL;
  char *p = strrchr(b, ')');
  for (int i = 2; p && i < f; i++) p = strchr(p + 1, ' ');
  return p ? p + 1 : NULL;
}

/* The state letter. */
char ht_proc_state(pid_t pid)
{
  char b[1024];
  const char *s = proc_stat_field(pid, 3, b, sizeof(b));
  return s ? *s : 0;
}

/* Nanoseconds since the process started. */
uint64_t ht_proc_age_ns(pid_t pid)
{
  char b[1024];
  const char *s = proc_stat_field(pid, 22, b, sizeof(b));
  struct timespec ts;
  if (!s || clock_gettime(CLOCK_BOOTTIME, &ts)) return 0;
  uint64_t start = strtoull(s, NULL, 10) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
  uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  return now > start ? now - start : 1;
}

/* The real uid of the process. */
long ht_proc_uid(pid_t pid)
{
  char b[4096];
  if (proc_file(pid, "status", b, sizeof(b)) <= 0) return -1;
  const char *u = strstr(b, "\nUid:");
  return u ? strtol(u + 5, NULL, 10) : -1;
}

/* Is /proc/PID/maps readable? */
int ht_proc_maps_errno(pid_t pid)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  char c;
  int e = read(fd, &c, 1) < 0 ? errno : 0;
  close(fd);
  return e;
}

/* Does the initial environment preload libheaptape.so? */
int ht_proc_preloaded(pid_t pid)
{
  static char b[1 << 20];
  ssize_t n = proc_file(pid, "environ", b, sizeof(b));
  for (ssize_t i = 0; i < n; i += (ssize_t)strlen(b + i) + 1)
    if (!strncmp(b + i, "LD_PRELOAD=", 11) && strstr(b + i, "libheaptape")) return 1;
  return 0;
}

/* -- Objects and symbols ---------------------------------------------------------- */

/* The object named base (a file name, or a whole path when it starts with
** '/'): the lowest mapping of that file, and its path. */
static int proc_mapping(pid_t pid, const char *base, uintptr_t *lo, uint64_t *off,
                        char *path, size_t cap)
{
  char mp[64], line[PATH_MAX + 256];
  snprintf(mp, sizeof(mp), "/proc/%ld/maps", (long)pid);
  FILE *f = fopen(mp, "re");
  if (!f) return -1;
  int found = -1;
  while (fgets(line, sizeof(line), f)) {
    unsigned long a, b, o;
    int pos = 0;
    if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &a, &b, &o, &pos) < 3 || !pos) continue;
    char *p = line + pos;
    p[strcspn(p, "\n")] = 0;
    const char *slash = strrchr(p, '/');
    if (p[0] != '/' || strcmp(base[0] == '/' ? p : slash + 1, base)) continue;
    if (found < 0 || a < *lo) { *lo = a; *off = o; snprintf(path, cap, "%s", p); found = 0; }
  }
  fclose(f);
  return found;
}

/* Open the process's file path as an ELF; fd and elf returned. */
static Elf *proc_elf(pid_t pid, const char *path, int *fd)
{
  char root[PATH_MAX + 64];
  snprintf(root, sizeof(root), "/proc/%ld/root%s", (long)pid, path);
  *fd = open(root, O_RDONLY | O_CLOEXEC);
  if (*fd < 0) *fd = open(path, O_RDONLY | O_CLOEXEC);
  if (*fd < 0) return NULL;
  elf_version(EV_CURRENT);
  Elf *e = elf_begin(*fd, ELF_C_READ, NULL);
  if (!e) { close(*fd); *fd = -1; }
  return e;
}

/* The first PT_LOAD's page-aligned vaddr and file offset. */
static int proc_first_load(Elf *e, uint64_t *vaddr, uint64_t *off)
{
  size_t n;
  if (elf_getphdrnum(e, &n)) return -1;
  for (size_t i = 0; i < n; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
      uint64_t al = ph.p_align > 1 ? ph.p_align : 1;
      *vaddr = ph.p_vaddr & ~(al - 1);
      *off = ph.p_offset & ~(al - 1);
      return 0;
    }
  }
  return -1;
}

/* The object named base: its load bias and path. */
int ht_proc_object(pid_t pid, const char *base, uintptr_t *bias, char *path, size_t cap)
{
  uintptr_t lo;
  uint64_t off, vaddr, foff;
  if (proc_mapping(pid, base, &lo, &off, path, cap)) return -1;
  int fd;
  Elf *e = proc_elf(pid, path, &fd);
  if (!e) return -1;
  int rc = proc_first_load(e, &vaddr, &foff);
  elf_end(e);
  close(fd);
  if (rc) return -1;
  *bias = lo - (uintptr_t)(off - foff) - (uintptr_t)vaddr;
  return 0;
}

/* The address of dynamic symbol sym of the object named base. */
int ht_proc_symbol(pid_t pid, const char *base, const char *sym, uintptr_t *addr)
{
  char path[PATH_MAX];
  uintptr_t bias;
  if (ht_proc_object(pid, base, &bias, path, sizeof(path))) return -1;
  int fd, rc = -1;
  Elf *e = proc_elf(pid, path, &fd);
  if (!e) return -1;
  for (Elf_Scn *s = NULL; rc && (s = elf_nextscn(e, s)); ) {
    GElf_Shdr sh;
    if (!gelf_getshdr(s, &sh) || sh.sh_type != SHT_DYNSYM) continue;
    Elf_Data *d = elf_getdata(s, NULL);
    size_t n = d && sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    for (size_t i = 0; i < n; i++) {
      GElf_Sym y;
      if (!gelf_getsym(d, (int)i, &y) || y.st_shndx == SHN_UNDEF || !y.st_value) continue;
      const char *nm = elf_strptr(e, sh.sh_link, y.st_name);
      if (nm && !strcmp(nm, sym)) { *addr = bias + (uintptr_t)y.st_value; rc = 0; break; }
    }
  }
  elf_end(e);
  close(fd);
  return rc;
}

/* -- Memory -------------------------------------------------------------------------- */

/* Read n bytes at a. */
int ht_proc_read(pid_t pid, uintptr_t a, void *buf, size_t n)
{
  struct iovec l = { buf, n }, r = { (void *)a, n };
  return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* Write n bytes at a. */
int ht_proc_write(pid_t pid, uintptr_t a, const void *buf, size_t n)
{
  struct iovec l = { (void *)buf, n }, r = { (void *)a, n };
  return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* The recorder's control block. */
int ht_proc_ctl(pid_t pid, uintptr_t *addr, HtAttachCtl *ctl)
{
  if (ht_proc_symbol(pid, "libheaptape.so", "heaptape_attach_ctl", addr)) return 0;
  if (ht_proc_read(pid, *addr, ctl, sizeof(*ctl))) return -1;
  if (memcmp(ctl->magic, HT_ATTACH_MAGIC, 8) || ctl->version != HT_ATTACH_VERSION) return 0;
  ctl->tape[sizeof(ctl->tape) - 1] = 0;
  ctl->why[sizeof(ctl->why) - 1] = 0;
  return 1;
}

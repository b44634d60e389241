/* heaptape -- the module map: every loaded object as a MODULE record, and
** loads/unloads noticed through dl_iterate_phdr's add/sub counters. */

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "maps.h"
#include "record.h"

#define MAPS_MAX 1024                  /* objects tracked */

typedef struct Module {
  uintptr_t base;        /* load bias */
  uint32_t gen;          /* scan that last saw it */
  char path[500];        /* path as loaded ("" for the executable) */
} Module;

static Module *maps_mods;              /* MAPS_MAX entries from the arena */
static uint32_t maps_n;                /* entries used */
static uint32_t maps_gen;              /* current scan */
static unsigned long long maps_adds, maps_subs; /* counters at the last scan */

typedef struct ScanCtx {
  HtStream *s;           /* where MODULE records go */
} ScanCtx;

/* Build id of an object from its PT_NOTE segments; returns its length. */
static size_t maps_build_id(struct dl_phdr_info *info, const uint8_t **bid)
{
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
    const uint8_t *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
      const uint8_t *name = p + sizeof(*nh);
      const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);
      if (desc + nh->n_descsz > end) break;
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
        *bid = desc;
        return nh->n_descsz;
      }
      p = desc + ((nh->n_descsz + 3) & ~3u);
    }
  }
  return 0;
}

/* dl_iterate_phdr callback: emit new objects, mark seen ones. */
static int maps_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
  ScanCtx *c = arg;
  (void)size;
  maps_adds = info->dlpi_adds;
  maps_subs = info->dlpi_subs;
  const char *path = info->dlpi_name ? info->dlpi_name : "";
  for (uint32_t i = 0; i < maps_n; i++)
    if (maps_mods[i].base == info->dlpi_addr && !strncmp(maps_mods[i].path, path, 499)) {
      maps_mods[i].gen = maps_gen;
      return 0;
    }
  char exe[512];
  const char *shown = path;
  if (!*path) {                        /* the executable */
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = 0;
    shown = exe;
  }
  HtSegment segs[64];
  size_t nseg = 0;
  for (int i = 0; i < info->dlpi_phnum && nseg < 64; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    segs[nseg].vaddr = ph->p_vaddr;
    segs[nseg].memsz = ph->p_memsz;
    segs[nseg].prot = ph->p_flags & 7;
    nseg++;
  }
  const uint8_t *bid = NULL;
  size_t blen = maps_build_id(info, &bid);
  ht_stream_module(c->s, ht_record_seq_shared(), 0, shown, info->dlpi_addr,
                   bid, blen, segs, nseg);
  if (maps_n < MAPS_MAX) {
    Module *m = &maps_mods[maps_n++];
    m->base = info->dlpi_addr;
    m->gen = maps_gen;
    strncpy(m->path, path, sizeof(m->path) - 1);
  }
  return 0;
}

/* Emit MODULE records for objects loaded or unloaded since the last scan. */
void ht_maps_scan(HtStream *s)
{
  if (!maps_mods && !(maps_mods = ht_arena_alloc(MAPS_MAX * sizeof(Module)))) return;
  ScanCtx c = { s };
  maps_gen++;
  dl_iterate_phdr(maps_visit, &c);
  for (uint32_t i = 0; i < maps_n; ) {
    if (maps_mods[i].gen == maps_gen) { i++; continue; }
    ht_stream_module(s, ht_record_seq_shared(), 1, maps_mods[i].path,
                     maps_mods[i].base, NULL, 0, NULL, 0);
    maps_mods[i] = maps_mods[--maps_n];
  }
}

/* First-object callback: read the add/sub counters only. */
static int maps_peek(struct dl_phdr_info *info, size_t size, void *arg)
{
  (void)size;
  unsigned long long *c = arg;
  c[0] = info->dlpi_adds;
  c[1] = info->dlpi_subs;
  return 1;
}

/* Did objects get loaded or unloaded since the last scan? */
int ht_maps_changed(void)
{
  unsigned long long c[2] = { 0, 0 };
  dl_iterate_phdr(maps_peek, c);
  return c[0] != maps_adds || c[1] != maps_subs;
}

/* Forget known objects (new tape). */
void ht_maps_reset(void)
{
  maps_n = 0;
}

typedef struct SelfCtx {
  uintptr_t addr;        /* address inside the object */
  uintptr_t lo, hi;      /* its executable segment */
} SelfCtx;

/* dl_iterate_phdr callback: find the executable segment holding addr. */
static int maps_self_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
  SelfCtx *c = arg;
  (void)size;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && c->addr >= lo && c->addr < hi) {
      c->lo = lo;
      c->hi = hi;
      return 1;
    }
  }
  return 0;
}

/* Text range of the object containing addr (heaptape's own frames). */
void ht_maps_self(const void *addr, uintptr_t *lo, uintptr_t *hi)
{
  SelfCtx c = { (uintptr_t)addr, 0, 0 };
  dl_iterate_phdr(maps_self_visit, &c);
  *lo = c.lo;
  *hi = c.hi;
}

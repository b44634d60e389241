/* heaptape -- hooks in a running process: the relocation slots (GOT/PLT) of
** the allocator's functions in every loaded object, pointed at preload.c's. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "got.h"

/*
** A process that is already running resolved malloc & co. long ago: its
** objects call them through their relocation slots, the GOT entries that
** JUMP_SLOT (PLT calls), GLOB_DAT (-fno-plt calls, &malloc) and
** R_X86_64_64 relocations filled in. Symbol interposition is over, so the
** slots themselves are rewritten to preload.c's functions, as heaptrack and
** memray do: for each object dl_iterate_phdr lists, its dynamic section
** gives the relocation tables (DT_JMPREL, DT_RELA) with their symbols. A
** slot is taken only when it holds glibc's own function (or, a PLT slot not
** yet bound, an address inside its own object): a program that brought its
** own malloc keeps it, and a pointer the program stored itself is left
** alone. Slots in RELRO pages are made writable for the one store. Every
** change is noted (slot, what it held) so that a detach puts it back,
** where the slot still holds the hook. Patching and restoring run inside
** dl_iterate_phdr's callback, which holds the loader's lock: an object
** cannot be unmapped under them. Hooks are never removed from memory: a
** thread may be inside one, or have copied a hooked slot, at detach.
*/

#define GOT_MAXFN 24                  /* names hooked */

typedef struct GotFn {
  const char *name;                   /* libc name */
  uintptr_t real;                     /* glibc's definition */
  uintptr_t alt;                      /* the executable's PLT entry standing for
                                      ** it (a non-PIE program that takes its
                                      ** address: every object binds to that), or 0 */
  uintptr_t hook;                     /* what slots get */
} GotFn;

typedef struct GotSlot {
  uintptr_t addr;                     /* the slot */
  uintptr_t orig;                     /* what it held before the hook */
} GotSlot;

typedef struct GotScan {
  int restore;                        /* 0 hook, 1 put back */
  uint32_t slots, objects;            /* slots holding a hook afterwards, objects */
} GotScan;

static GotFn got_fn[GOT_MAXFN];
static size_t got_nfn;
static GotSlot *got_slot;             /* changes made (arena memory) */
static size_t got_n, got_cap;
static pthread_mutex_t got_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static _Atomic int got_on;            /* hooked: dlopen hooks what it loads */
static void *(*got_real_dlopen)(const char *, int);
static int (*got_real_dlclose)(void *);

/* -- Hooks of the loader ------------------------------------------------------ */

static int got_scan(GotScan *sc);

/* dlopen: the real one, then the objects it loaded get their hooks. (The
** loader sees this library as the caller: a bare name is searched without
** the calling object's RUNPATH, see docs/INTERNALS.md.) */
static void *got_dlopen(const char *file, int mode)
{
  void *h = got_real_dlopen(file, mode);
  if (h && atomic_load(&got_on)) {
    int e = errno;
    GotScan sc = { 0, 0, 0 };
    ht_guard++;
    got_scan(&sc);
    ht_guard--;
    errno = e;
  }
  return h;
}

/* dlclose: nothing to undo (a slot is put back only in an object still
** loaded), but the hook keeps the slots of dlclose consistent with dlopen's. */
static int got_dlclose(void *h) { return got_real_dlclose(h); }

/* -- The slots ------------------------------------------------------------------ */

/* The noted change of slot a, or NULL. */
static GotSlot *got_find(uintptr_t a)
{
  for (size_t i = 0; i < got_n; i++)
    if (got_slot[i].addr == a) return &got_slot[i];
  return NULL;
}

/* Note that slot a held orig; -1 when no memory. */
static int got_note(uintptr_t a, uintptr_t orig)
{
  GotSlot *s = got_find(a);
  if (s) { s->orig = orig; return 0; }
  if (got_n == got_cap) {
    size_t cap = got_cap ? 2 * got_cap : 1024;
    GotSlot *n = ht_arena_alloc(cap * sizeof(*n));
    if (!n) return -1;
    if (got_n) memcpy(n, got_slot, got_n * sizeof(*n));
    if (got_slot) ht_arena_free(got_slot, got_cap * sizeof(*n));
    got_slot = n;
    got_cap = cap;
  }
  got_slot[got_n++] = (GotSlot){ a, orig };
  return 0;
}

/* Store v in slot a; ro: it lies in a RELRO page, made writable for it. */
static int got_store(uintptr_t a, uintptr_t v, int ro)
{
  uintptr_t pg = a & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
  size_t len = (size_t)sysconf(_SC_PAGESIZE);
  if (ro && mprotect((void *)pg, len, PROT_READ | PROT_WRITE)) return -1;
  atomic_store_explicit((_Atomic uintptr_t *)a, v, memory_order_release);
  if (ro) mprotect((void *)pg, len, PROT_READ);
  return 0;
}

/* The hooked function named name, or NULL. */
static const GotFn *got_named(const char *name)
{
  for (size_t i = 0; i < got_nfn; i++)
    if (name[0] == got_fn[i].name[0] && !strcmp(name, got_fn[i].name)) return &got_fn[i];
  return NULL;
}

/* Is v one of the hooks? */
static int got_is_hook(uintptr_t v)
{
  for (size_t i = 0; i < got_nfn; i++)
    if (got_fn[i].hook == v) return 1;
  return 0;
}

/* -- One object ------------------------------------------------------------------ */

typedef struct GotObj {
  uintptr_t base;                     /* load bias */
  uintptr_t lo, hi;                   /* its mapped range */
  uintptr_t ro_lo, ro_hi;             /* its RELRO pages (protected by the loader) */
  uintptr_t w_lo[4], w_hi[4];         /* writable PT_LOAD ranges */
  int nw;
  const ElfW(Sym) *sym;
  const char *str;
} GotObj;

/* Is slot a writable, or in the object's RELRO pages (*ro)? */
static int got_writable(const GotObj *o, uintptr_t a, int *ro)
{
  *ro = a >= o->ro_lo && a + sizeof(void *) <= o->ro_hi;
  if (*ro) return 1;
  for (int i = 0; i < o->nw; i++)
    if (a >= o->w_lo[i] && a + sizeof(void *) <= o->w_hi[i]) return 1;
  return 0;
}

/* Hook or restore the slots of n relocations at rel; 1 if one holds a hook after. */
static int got_relocs(GotScan *sc, const GotObj *o, const ElfW(Rela) *rel, size_t n)
{
  int any = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned type = (unsigned)ELF64_R_TYPE(rel[i].r_info);
    size_t si = ELF64_R_SYM(rel[i].r_info);
    if (!si || (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
                !(type == R_X86_64_64 && rel[i].r_addend == 0)))
      continue;
    const GotFn *f = got_named(o->str + o->sym[si].st_name);
    if (!f) continue;
    uintptr_t a = o->base + rel[i].r_offset;
    int ro;
    if (!got_writable(o, a, &ro)) continue;
    uintptr_t v = atomic_load_explicit((_Atomic uintptr_t *)a, memory_order_acquire);
    if (sc->restore) {
      if (!got_is_hook(v)) continue;
      GotSlot *s = got_find(a);
      got_store(a, s ? s->orig : f->real, ro);
      continue;
    }
    if (got_is_hook(v)) { sc->slots++; any = 1; continue; }
    int unbound = type == R_X86_64_JUMP_SLOT && v >= o->lo && v < o->hi;
    if (v != f->real && (!f->alt || v != f->alt) && !unbound)
      continue;                                 /* not glibc's: the program's choice */
    if (got_note(a, v) || got_store(a, f->hook, ro)) continue;
    sc->slots++;
    any = 1;
  }
  return any;
}

/* The dynamic section's pointer d: relocated by the loader, or not yet. */
static uintptr_t got_ptr(const GotObj *o, uintptr_t d)
{
  return d < o->base ? d + o->base : d;
}

/* dl_iterate_phdr callback: hook or restore one object. */
static int got_object(struct dl_phdr_info *info, size_t size, void *arg)
{
  (void)size;
  GotScan *sc = arg;
  GotObj o;
  memset(&o, 0, sizeof(o));
  o.base = info->dlpi_addr;
  o.lo = UINTPTR_MAX;
  const ElfW(Dyn) *dyn = NULL;
  uintptr_t self = (uintptr_t)got_object;
  uintptr_t pm = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = o.base + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (ph->p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)lo;
    if (ph->p_type == PT_GNU_RELRO) { o.ro_lo = lo & ~pm; o.ro_hi = hi & ~pm; }
    if (ph->p_type != PT_LOAD) continue;
    if (self >= lo && self < hi) return 0;       /* our own object */
    if (lo < o.lo) o.lo = lo;
    if (hi > o.hi) o.hi = hi;
    if ((ph->p_flags & PF_W) && o.nw < 4) { o.w_lo[o.nw] = lo; o.w_hi[o.nw++] = hi; }
  }
  if (!dyn) return 0;
  uintptr_t jmprel = 0, rela = 0;
  size_t pltsz = 0, relasz = 0;
  for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
    switch (d->d_tag) {
    case DT_SYMTAB: o.sym = (const ElfW(Sym) *)got_ptr(&o, d->d_un.d_ptr); break;
    case DT_STRTAB: o.str = (const char *)got_ptr(&o, d->d_un.d_ptr); break;
    case DT_JMPREL: jmprel = got_ptr(&o, d->d_un.d_ptr); break;
    case DT_PLTRELSZ: pltsz = d->d_un.d_val; break;
    case DT_RELA: rela = got_ptr(&o, d->d_un.d_ptr); break;
    case DT_RELASZ: relasz = d->d_un.d_val; break;
    }
  if (!o.sym || !o.str) return 0;
  int any = 0;
  if (jmprel) any |= got_relocs(sc, &o, (const ElfW(Rela) *)jmprel, pltsz / sizeof(ElfW(Rela)));
  if (rela) any |= got_relocs(sc, &o, (const ElfW(Rela) *)rela, relasz / sizeof(ElfW(Rela)));
  sc->objects += any;
  return 0;
}

/* Hook (or restore) every loaded object, under the lock. */
static int got_scan(GotScan *sc)
{
  pthread_mutex_lock(&got_lock);
  if (sc->restore || atomic_load(&got_on))   /* (a dlopen racing a detach) */
    dl_iterate_phdr(got_object, sc);
  pthread_mutex_unlock(&got_lock);
  return 0;
}

/* -- Hook and restore --------------------------------------------------------------- */

typedef struct GotExe { const char *name; uintptr_t addr; int found; } GotExe;

/* dl_iterate_phdr callback on the first object (the executable): is addr
** in its code and does it import name through a JUMP_SLOT? */
static int got_exe(struct dl_phdr_info *info, size_t size, void *arg)
{
  (void)size;
  GotExe *x = arg;
  const ElfW(Dyn) *dyn = NULL;
  int in = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)lo;
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && x->addr >= lo && x->addr < lo + ph->p_memsz)
      in = 1;
  }
  if (!in || !dyn) return 1;
  GotObj o;
  memset(&o, 0, sizeof(o));
  o.base = info->dlpi_addr;
  uintptr_t jmprel = 0;
  size_t n = 0;
  for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
    switch (d->d_tag) {
    case DT_SYMTAB: o.sym = (const ElfW(Sym) *)got_ptr(&o, d->d_un.d_ptr); break;
    case DT_STRTAB: o.str = (const char *)got_ptr(&o, d->d_un.d_ptr); break;
    case DT_JMPREL: jmprel = got_ptr(&o, d->d_un.d_ptr); break;
    case DT_PLTRELSZ: n = d->d_un.d_val / sizeof(ElfW(Rela)); break;
    }
  const ElfW(Rela) *rel = (const ElfW(Rela) *)jmprel;
  for (size_t i = 0; rel && o.sym && o.str && i < n; i++) {
    size_t si = ELF64_R_SYM(rel[i].r_info);
    if (si && !strcmp(o.str + o.sym[si].st_name, x->name)) { x->found = 1; break; }
  }
  return 1;
}

/* glibc's definitions of the hooked names, once: a name whose definition
** in the process is not glibc's (the program's own malloc) is not hooked. */
static int got_resolve(void)
{
  if (got_nfn) return 0;
  void *libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
  if (!libc) return -1;
  got_real_dlopen = (void *(*)(const char *, int))dlsym(libc, "dlopen");
  got_real_dlclose = (int (*)(void *))dlsym(libc, "dlclose");
  for (const HtHook *h = ht_preload_hooks; h->name && got_nfn < GOT_MAXFN - 2; h++) {
    void *real = dlsym(libc, h->name), *def = dlsym(RTLD_DEFAULT, h->name);
    GotExe x = { h->name, (uintptr_t)def, 0 };
    if (real && def != real) dl_iterate_phdr(got_exe, &x);  /* the program's PLT entry? */
    if (real && (def == real || x.found))
      got_fn[got_nfn++] = (GotFn){ h->name, (uintptr_t)real, def == real ? 0 : (uintptr_t)def,
                                   (uintptr_t)h->fn };
  }
  if (got_real_dlopen)
    got_fn[got_nfn++] = (GotFn){ "dlopen", (uintptr_t)got_real_dlopen, 0, (uintptr_t)got_dlopen };
  if (got_real_dlclose)
    got_fn[got_nfn++] = (GotFn){ "dlclose", (uintptr_t)got_real_dlclose, 0, (uintptr_t)got_dlclose };
  dlclose(libc);
  return got_nfn ? 0 : -1;
}

/* Hook every loaded object. */
int ht_got_hook(uint32_t *slots, uint32_t *objects)
{
  ht_guard++;
  int rc = got_resolve();
  GotScan sc = { 0, 0, 0 };
  if (!rc) {
    atomic_store(&got_on, 1);
    got_scan(&sc);
  }
  *slots = sc.slots;
  *objects = sc.objects;
  ht_guard--;
  return rc;
}

/* Put every hooked slot back. */
void ht_got_restore(void)
{
  if (!got_nfn) return;
  ht_guard++;
  int e = errno;
  atomic_store(&got_on, 0);
  GotScan sc = { 1, 0, 0 };
  got_scan(&sc);
  errno = e;
  ht_guard--;
}

/* heaptape -- finalisation: every native address of a tape symbolised once with
** elfutils' libdwfl (inline chains from DWARF scopes) and appended as DICT packets. */
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <dlfcn.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "symbolize.h"
#include "debugcache.h"
#include "resolve.h"
#include "../base/fdio.h"
#include "../base/grow.h"
#include "../base/map.h"
#include "../base/msg.h"
#include "../format/reader.h"
#include "../format/writer.h"
#include "../../include/heaptape.h"

/* libstdc++'s demangler, loaded the first time a C++ name needs it: linked,
** libstdc++ cost every command 0.4 ms of start-up (its relocations, 10% of
** `heaptape stats` of a small tape) and only the symboliser demangles. NULL
** when it cannot be loaded (the names then stay mangled). */
typedef char *DemangleFn(const char *mangled, char *out, size_t *len, int *status);
static DemangleFn *sym_cxa_demangle;
static pthread_once_t sym_demangle_once = PTHREAD_ONCE_INIT;

static void sym_demangle_load(void)
{
  void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
  void *f = h ? dlsym(h, "__cxa_demangle") : NULL;
  memcpy(&sym_cxa_demangle, &f, sizeof(f));  /* (ISO C: no cast to a function) */
}

/* Dictionary id of the strings this pass appends (see ht_dict_set_id). */
#define SYM_DICT_ID 1
/* Frames kept per inline chain. */
#define SYM_MAX_FRAMES 64

/*
** Which address is looked up: every native frame heaptape records is a
** return address (the unwinders start at the caller of the allocation
** function), so the call instruction is the byte before it. Lookups use
** ip - 1, which stays inside the call even when the call is the last
** instruction of a function or of an inlined range; the symbol is declared
** under the recorded ip, the key readers use.
*/

typedef struct SymModule {
  char *path;                /* file as recorded (or the tape's exe) */
  const char *name;          /* basename of path, for "<name>+0xoff" */
  uint64_t base;             /* load bias */
  uint64_t lo, hi;           /* address range covered by its segments */
  uint8_t bid[64];           /* recorded build id */
  size_t bid_len;            /* bytes of bid, 0 if none */
  int state;                 /* 0 not opened yet, 1 reported, -1 unusable */
  Dwfl *dwfl;                /* one session per module: no overlap conflicts */
  Dwfl_Module *mod;          /* the reported module */
  struct SymFunc *funcs;     /* function symbols sorted by address, or NULL */
  size_t nfuncs;             /* entries of funcs */
  int funcs_done;            /* funcs was built (possibly empty) */
} SymModule;

/* A function symbol of a module's symbol tables (libdwfl's addrinfo is a
** linear scan per call in elfutils 0.188; this table is sorted once). */
typedef struct SymFunc {
  uint64_t addr;             /* start address, load bias applied */
  uint64_t size;             /* bytes, 0 if unknown */
  const char *name;          /* owned by libelf, lives with the session */
  int rank;                  /* preference among aliases: global > weak > local */
} SymFunc;

struct HtSymbolizer {
  SymModule *mods;           /* modules in load order */
  size_t nmods, capmods;     /* used, allocated */
  size_t last;               /* index of the module of the previous lookup */
  unsigned flags;            /* HT_SYM_* */
  char *scratch[3 * SYM_MAX_FRAMES]; /* strings of the last lookup */
  size_t nscratch;           /* used entries of scratch */
};

/* -- Helpers -------------------------------------------------------------- */

/* Print one warning line unless quiet. */
static void sym_warn(const HtSymbolizer *s, const char *fmt, ...)
{
  if (s->flags & HT_SYM_QUIET) return;
  va_list ap;
  va_start(ap, fmt);
  ht_vmsg(fmt, ap);
  va_end(ap);
}

/* Keep a malloc'd string until the next lookup; returns it (or a constant). */
static const char *sym_keep(HtSymbolizer *s, char *str)
{
  if (!str) return "?";
  if (s->nscratch == HT_COUNTOF(s->scratch)) { free(str); return "?"; }
  s->scratch[s->nscratch++] = str;
  return str;
}

/* Demangle a C++ name into a kept string; other names are kept as they are. */
static const char *sym_demangle(HtSymbolizer *s, const char *name)
{
  if (name[0] == '_' && name[1] == 'Z') {
    int status = 0;
    pthread_once(&sym_demangle_once, sym_demangle_load);
    char *d = sym_cxa_demangle ? sym_cxa_demangle(name, NULL, NULL, &status) : NULL;
    if (d && status == 0) return sym_keep(s, d);
    free(d);
  }
  return name;  /* owned by libdw, lives as long as the module */
}

/* Monotonic seconds. */
static double sym_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* -- Modules -------------------------------------------------------------- */

/* libdwfl's default search without its last resort, debuginfod: the
** build-id tree under /usr/lib/debug, then the .gnu_debuglink name beside
** the file, in its .debug/ and under /usr/lib/debug/<its directory>. With
** DEBUGINFOD_URLS empty that last resort finds nothing, but asking costs
** loading libdebuginfod and ~35 libraries behind it (curl, gnutls, krb5):
** ~10 ms, half of finalising a small tape. */
static int sym_local_debuginfo(Dwfl_Module *mod, void **ud, const char *modname,
                               Dwarf_Addr base, const char *file, const char *link,
                               GElf_Word crc, char **name)
{
  int fd = dwfl_build_id_find_debuginfo(mod, ud, modname, base, file, link, crc, name);
  if (fd >= 0 || !link || !*link || !file || strchr(link, '/')) return fd;
  const unsigned char *bid;
  GElf_Addr va;
  int len = dwfl_module_build_id(mod, &bid, &va);
  const char *slash = strrchr(file, '/');
  int dn = slash ? (int)(slash - file) : 1;
  const char *dir = slash ? file : ".";
  static const char *const where[] = { "%.*s/%s", "%.*s/.debug/%s", "/usr/lib/debug%.*s/%s" };
  for (size_t i = 0; i < HT_COUNTOF(where); i++) {
    if (i == 2 && dir[0] != '/') break;
    char path[4096];
    if (snprintf(path, sizeof(path), where[i], dn, dir, link) >= (int)sizeof(path)) continue;
    if (!strcmp(path, file)) continue;          /* the file itself is no debug file */
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    if ((len <= 0 || ht_elf_has_build_id(fd, bid, (size_t)len)) && (*name = strdup(path)))
      return fd;                                /* a stale debug file is skipped */
    close(fd);
  }
  return -1;
}

/* The local search (or libdwfl's own, debuginfod included, when
** DEBUGINFOD_URLS names a server), behind the cache of uncompressed copies
** by build id (debugcache.h). */
static int sym_find_debuginfo(Dwfl_Module *mod, void **ud, const char *modname,
                              Dwarf_Addr base, const char *file, const char *link,
                              GElf_Word crc, char **name)
{
  const unsigned char *bid;
  GElf_Addr va;
  int len = dwfl_module_build_id(mod, &bid, &va);
  int fd = len > 0 ? ht_debugcache_open(bid, (size_t)len, name) : -1;
  if (fd >= 0) return fd;
  const char *urls = getenv("DEBUGINFOD_URLS");
  fd = (urls && *urls ? dwfl_standard_find_debuginfo : sym_local_debuginfo)
       (mod, ud, modname, base, file, link, crc, name);
  char *copy;
  int c = fd >= 0 && len > 0 ? ht_debugcache_store(bid, (size_t)len, fd, &copy) : -1;
  if (c < 0) return fd;
  close(fd);
  free(*name);
  *name = copy;
  return c;
}

static const Dwfl_Callbacks sym_callbacks = {
  .find_elf = dwfl_build_id_find_elf,           /* unused: files are reported by fd */
  .find_debuginfo = sym_find_debuginfo,
  .section_address = dwfl_offline_section_address,
  .debuginfo_path = NULL,
};

/* New symboliser. */
HtSymbolizer *ht_symbolizer_new(unsigned flags)
{
  HtSymbolizer *s = calloc(1, sizeof(*s));
  if (s) s->flags = flags;
  return s;
}

/* Free the scratch strings of the previous lookup. */
static void sym_scratch_free(HtSymbolizer *s)
{
  for (size_t i = 0; i < s->nscratch; i++) free(s->scratch[i]);
  s->nscratch = 0;
}

/* Free the symboliser and end every libdwfl session. */
void ht_symbolizer_destroy(HtSymbolizer *s)
{
  if (!s) return;
  for (size_t i = 0; i < s->nmods; i++) {
    if (s->mods[i].dwfl) dwfl_end(s->mods[i].dwfl);
    free(s->mods[i].funcs);
    free(s->mods[i].path);
  }
  sym_scratch_free(s);
  free(s->mods);
  free(s);
}

/* Whether a recorded path names no file (vdso, anonymous code). */
static int sym_no_file(const char *path)
{
  return !path[0] || path[0] == '[' || !strncmp(path, "linux-vdso", 10) ||
         !strncmp(path, "linux-gate", 10);
}

/* Open a module's file, check its build id and report it to a new session. */
static void sym_open(HtSymbolizer *s, SymModule *m)
{
  m->state = -1;
  if (sym_no_file(m->path)) return;
  int fd = open(m->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    sym_warn(s, "%s: cannot open (%s); its addresses stay unsymbolised",
             m->path, strerror(errno));
    return;
  }
  if (m->bid_len) {
    if (!ht_elf_has_build_id(fd, m->bid, m->bid_len)) {
      sym_warn(s, "%s: not the file that was recorded (build id differs); "
               "its addresses stay unsymbolised", m->path);
      close(fd);
      return;
    }
  }
  m->dwfl = dwfl_begin(&sym_callbacks);
  if (!m->dwfl) { close(fd); return; }
  dwfl_report_begin(m->dwfl);
  m->mod = dwfl_report_elf(m->dwfl, m->name, m->path, fd, m->base, true);
  dwfl_report_end(m->dwfl, NULL, NULL);
  if (!m->mod) {
    sym_warn(s, "%s: libdw cannot read it (%s); its addresses stay unsymbolised",
             m->path, dwfl_errmsg(-1));
    close(fd);
    return;
  }
  if (!m->hi) {                       /* no segments recorded: ask libdwfl */
    Dwarf_Addr lo, hi;
    dwfl_module_info(m->mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
    m->lo = lo; m->hi = hi;
  }
  m->state = 1;
}

/* Declare a module; it is opened on its first lookup. */
int ht_symbolizer_event(HtSymbolizer *s, const HtEvent *ev, const char *exe)
{
  char path[4097];
  size_t n = ev->len < sizeof(path) - 1 ? ev->len : sizeof(path) - 1;
  memcpy(path, ev->str, n);
  path[n] = 0;
  const char *p = !n && exe && *exe ? exe : path;  /* "" is the main program */
  return ht_symbolizer_module(s, p, ev->addr, ev->build_id, ev->build_id_len, ev->segs,
                              ev->nseg);
}

int ht_symbolizer_module(HtSymbolizer *s, const char *path, uint64_t base,
                         const uint8_t *build_id, size_t bid_len,
                         const HtSegment *segs, size_t nseg)
{
  if (ht_grow(&s->mods, &s->capmods, s->nmods + 1, sizeof(SymModule))) return -1;
  SymModule *m = &s->mods[s->nmods];
  memset(m, 0, sizeof(*m));
  m->path = strdup(path);
  if (!m->path) return -1;
  m->name = strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path;
  m->base = base;
  if (bid_len > sizeof(m->bid)) bid_len = sizeof(m->bid);
  if (build_id && bid_len) memcpy(m->bid, build_id, bid_len);
  m->bid_len = build_id ? bid_len : 0;
  m->lo = UINT64_MAX;
  for (size_t i = 0; i < nseg; i++) {
    if (!segs[i].memsz) continue;
    uint64_t a = base + segs[i].vaddr, b = a + segs[i].memsz;
    if (a < m->lo) m->lo = a;
    if (b > m->hi) m->hi = b;
  }
  if (!m->hi) m->lo = 0;
  s->nmods++;
  if (!m->hi) {                       /* range unknown until the file is read */
    sym_open(s, m);
    return m->state == 1 ? 0 : -1;
  }
  return 0;
}

/* The module whose range holds addr; later loads win over earlier ones. */
static SymModule *sym_find(HtSymbolizer *s, uint64_t addr)
{
  if (s->last < s->nmods) {
    SymModule *m = &s->mods[s->last];
    if (addr >= m->lo && addr < m->hi) return m;
  }
  for (size_t i = s->nmods; i-- > 0;) {
    SymModule *m = &s->mods[i];
    if (addr >= m->lo && addr < m->hi) { s->last = i; return m; }
  }
  return NULL;
}

/* -- Lookup --------------------------------------------------------------- */

/* Order SymFunc by address, then best alias first. */
static int sym_func_cmp(const void *a, const void *b)
{
  const SymFunc *x = a, *y = b;
  if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
  return y->rank - x->rank;
}

/* Build the sorted function table of a module once. */
static void sym_funcs_build(SymModule *m)
{
  m->funcs_done = 1;
  int n = dwfl_module_getsymtab(m->mod);
  if (n <= 0) return;
  m->funcs = malloc((size_t)n * sizeof(*m->funcs));
  if (!m->funcs) return;
  for (int i = 1; i < n; i++) {
    GElf_Sym sym;
    GElf_Addr addr;
    const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, NULL,
                                               NULL, NULL);
    int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
    if (!name || !*name || !addr || sym.st_shndx == SHN_UNDEF ||
        (type != STT_FUNC && type != STT_GNU_IFUNC)) continue;
    SymFunc *f = &m->funcs[m->nfuncs++];
    f->addr = addr;
    f->size = sym.st_size;
    f->name = name;
    f->rank = (bind == STB_GLOBAL ? 4 : bind == STB_WEAK ? 2 : 0) + (sym.st_size != 0);
  }
  qsort(m->funcs, m->nfuncs, sizeof(*m->funcs), sym_func_cmp);
}

/* Name of the function symbol covering addr, or NULL. */
static const char *sym_func_name(SymModule *m, uint64_t addr)
{
  if (!m->funcs_done) sym_funcs_build(m);
  size_t lo = 0, hi = m->nfuncs;
  while (lo < hi) {                   /* first entry with addr > a */
    size_t mid = (lo + hi) / 2;
    if (m->funcs[mid].addr <= addr) lo = mid + 1;
    else hi = mid;
  }
  if (!lo) return NULL;
  size_t i = lo - 1;
  uint64_t start = m->funcs[i].addr;
  while (i > 0 && m->funcs[i - 1].addr == start) i--;  /* best alias of that start */
  const SymFunc *f = &m->funcs[i];
  for (size_t j = i; j < lo; j++)     /* a sized alias decides the extent */
    if (m->funcs[j].size) { if (addr - start >= m->funcs[j].size) return NULL; break; }
  return f->name;
}

/* Name of a subprogram or inlined-subroutine DIE: linkage name demangled,
** else DW_AT_name (both through abstract origins and specifications). */
static const char *sym_die_name(HtSymbolizer *s, Dwarf_Die *die)
{
  Dwarf_Attribute a;
  const char *n = NULL;
  if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
      dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
    n = dwarf_formstring(&a);
  if (n) return sym_demangle(s, n);
  if (dwarf_attr_integrate(die, DW_AT_name, &a)) n = dwarf_formstring(&a);
  return n;
}

/* Absolute form of a DWARF file name: joined to the CU's compilation
** directory when that is absolute, "dir/../" collapsed; kept in scratch. */
static const char *sym_path(HtSymbolizer *s, const char *comp_dir, const char *f)
{
  if (!f || f[0] == '/' || !comp_dir || comp_dir[0] != '/') return f;
  size_t n = strlen(comp_dir) + strlen(f) + 2;
  char *b = malloc(n);
  if (!b) return f;
  snprintf(b, n, "%s/%s", comp_dir, f);
  char *w = b;                         /* collapse "/./" and "/seg/../" */
  for (char *r = b; *r;) {
    if (r[0] == '/' && r[1] == '.' && r[2] == '/') { r += 2; continue; }
    if (r[0] == '/' && r[1] == '.' && r[2] == '.' && (r[3] == '/' || !r[3]) &&
        w > b) {
      char *q = w;
      while (q > b && q[-1] != '/') q--;
      if (q > b && !(q[0] == '.' && q[1] == '.' && (q + 2 == w))) {
        w = q - 1;
        r += 3;
        continue;
      }
    }
    *w++ = *r++;
  }
  *w = 0;
  return sym_keep(s, b);
}

/* Compilation directory of a CU, or NULL. */
static const char *sym_comp_dir(Dwarf_Die *cu)
{
  Dwarf_Attribute a;
  return cu && dwarf_attr(cu, DW_AT_comp_dir, &a) ? dwarf_formstring(&a) : NULL;
}

/* Call site (file, line) of an inlined-subroutine DIE. */
static void sym_call_site(Dwarf_Die *cu, Dwarf_Die *die, const char **file,
                          uint32_t *line)
{
  Dwarf_Attribute a;
  Dwarf_Word v;
  *file = NULL;
  *line = 0;
  if (dwarf_attr(die, DW_AT_call_line, &a) && !dwarf_formudata(&a, &v))
    *line = (uint32_t)v;
  Dwarf_Files *files;
  size_t nfiles;
  if (dwarf_attr(die, DW_AT_call_file, &a) && !dwarf_formudata(&a, &v) &&
      !dwarf_getsrcfiles(cu, &files, &nfiles) && v < nfiles)
    *file = dwarf_filesrc(files, v, NULL, NULL);
}

/* Fallback name "<module>+0xoffset" (or "0x<ip>" outside every module). */
static size_t sym_unknown(HtSymbolizer *s, SymModule *m, uint64_t ip, HtSymOut *out)
{
  char *b = malloc(strlen(m ? m->name : "") + 24);
  if (b) {
    if (m) sprintf(b, "%s+0x%llx", m->name, (unsigned long long)(ip - m->base));
    else sprintf(b, "0x%llx", (unsigned long long)ip);
  }
  out[0].func = sym_keep(s, b);
  out[0].file = NULL;
  out[0].line = 0;
  return 1;
}

/* Symbolise a return address: inline chain innermost first. */
size_t ht_symbolizer_lookup(HtSymbolizer *s, uint64_t ip, HtSymOut *out, size_t max)
{
  sym_scratch_free(s);
  if (!max) return 0;
  if (max > SYM_MAX_FRAMES) max = SYM_MAX_FRAMES;
  uint64_t addr = ip ? ip - 1 : 0;
  SymModule *m = sym_find(s, addr);
  if (!m) return sym_unknown(s, NULL, ip, out);
  if (m->state == 0) sym_open(s, m);
  if (m->state != 1) return sym_unknown(s, m, ip, out);

  /* Symbol table name and the line table's file:line of addr. */
  const char *symname = sym_func_name(m, addr);
  const char *file = NULL;
  int lineno = 0;
  Dwfl_Line *ln = dwfl_module_getsrc(m->mod, addr);
  if (ln) {
    file = dwfl_lineinfo(ln, NULL, &lineno, NULL, NULL, NULL);
    file = sym_path(s, dwfl_line_comp_dir(ln), file);
  }

  /* Inline chain: dwarf_getscopes gives the innermost function-like scope;
  ** dwarf_getscopes_die then walks its concrete parents (the scopes of an
  ** inlined instance in the first list continue with its abstract origin's,
  ** not with its caller's). */
  size_t n = 0;
  Dwarf_Addr bias;
  Dwarf_Die *cu = dwfl_module_addrdie(m->mod, addr, &bias);
  Dwarf_Die *scopes = NULL, *chain = NULL;
  int ns = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0, nc = 0;
  for (int i = 0; i < ns; i++) {
    int tag = dwarf_tag(&scopes[i]);
    if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
      nc = dwarf_getscopes_die(&scopes[i], &chain);
      break;
    }
  }
  Dwarf_Die *prev = NULL;             /* the inlined subroutine just emitted */
  for (int i = 0; i < nc && n < max; i++) {
    int tag = dwarf_tag(&chain[i]);
    if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
    const char *fn = sym_die_name(s, &chain[i]);
    if (tag == DW_TAG_subprogram && symname && symname[0] == '_' &&
        symname[1] == 'Z' && (!fn || !strchr(fn, ':')))
      fn = sym_demangle(s, symname);  /* DWARF lacks the qualified C++ name */
    else if (!fn && symname)
      fn = sym_demangle(s, symname);
    out[n].func = fn ? fn : "?";
    if (!prev) {
      out[n].file = file;
      out[n].line = lineno > 0 ? (uint32_t)lineno : 0;
    } else {
      sym_call_site(cu, prev, &out[n].file, &out[n].line);
      out[n].file = sym_path(s, sym_comp_dir(cu), out[n].file);
    }
    n++;
    if (tag == DW_TAG_subprogram) break;
    prev = &chain[i];
  }
  free(chain);
  free(scopes);
  if (n) return n;
  if (!symname) {
    n = sym_unknown(s, m, ip, out);
    out[0].file = file;
    out[0].line = lineno > 0 ? (uint32_t)lineno : 0;
    return n;
  }
  out[0].func = sym_demangle(s, symname);
  out[0].file = file;
  out[0].line = lineno > 0 ? (uint32_t)lineno : 0;
  return 1;
}

/* -- The tape pass -------------------------------------------------------- */

/* Sink that appends to a file descriptor. */
static size_t sym_sink(const void *data, size_t len, void *arg)
{
  return ht_fd_write(*(int *)arg, data, len, -1);
}

/* Set the flags set in the header and raise its version to ver at least,
** fixing its checksum (best effort). */
static void sym_mark_header(int fd, unsigned set, unsigned ver)
{
  uint8_t fixed[HT_HEADER_FIXED];
  if (pread(fd, fixed, sizeof(fixed), 0) != (ssize_t)sizeof(fixed)) return;
  uint32_t len = (uint32_t)fixed[12] | (uint32_t)fixed[13] << 8 |
                 (uint32_t)fixed[14] << 16 | (uint32_t)fixed[15] << 24;
  unsigned v = fixed[8] | fixed[9] << 8, flags = fixed[10] | fixed[11] << 8;
  if (((flags & set) == set && v >= ver) || len > (1u << 20)) return;
  size_t total = HT_HEADER_FIXED + len + 4;
  uint8_t *h = malloc(total);
  if (!h) return;
  if (pread(fd, h, total, 0) == (ssize_t)total) {
    uint32_t crc = (uint32_t)crc32(0, h, (uInt)(total - 4));
    uint8_t *c = h + total - 4;
    uint32_t have = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 |
                    (uint32_t)c[3] << 24;
    if (crc == have) {                /* never "repair" a damaged header */
      flags |= set;
      if (v < ver) v = ver;
      h[8] = (uint8_t)v; h[9] = (uint8_t)(v >> 8);
      h[10] = (uint8_t)flags; h[11] = (uint8_t)(flags >> 8);
      ht_wu32(c, (uint32_t)crc32(0, h, (uInt)(total - 4)));
      if (pwrite(fd, h + 8, 4, 8) == 4) (void)!pwrite(fd, c, 4, (off_t)(total - 4));
    }
  }
  free(h);
}

/* A journal declaring Python or Ruby locations (a runtime attached to the
** preload recorder, whose header was written before) says version 6. */
static void sym_mark_rtlocs(const char *path)
{
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  sym_mark_header(fd, 0, HT_VERSION_RTLOC);
  close(fd);
}

/* Order addresses for qsort (locality: one module, one CU at a time). */
static int sym_cmp(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Count one resolved event; MODULE events go to the symboliser. */
void ht_symscan_event(void *ctx, const HtRes *res)
{
  HtSymScan *sc = ctx;
  HtSymSummary *sum = sc->sum;
  const HtEvent *ev = res->ev;
  sum->events++;
  switch (ev->type) {
  case HT_EV_ALLOC: {
    uint64_t w = res->blk.weight;
    if (res->dup) sc->cur -= res->old.weight; /* a lost free: the old block is gone */
    sum->allocated += w;
    sc->cur += w;
    if (sc->cur > sum->peak) sum->peak = sc->cur;
    break;
  }
  case HT_EV_FREE:
    if (res->known) sc->cur -= res->blk.weight;
    break;
  case HT_EV_MODULE: {
    sum->modules++;
    if (sc->sy && ht_symbolizer_event(sc->sy, ev, ht_reader_header(sc->r)->exe))
      sum->modules_skipped++;
    break;
  }
  default:
    break;
  }
}

/* Events, bytes and peak (one resolving pass). */
static void sym_scan(HtReader *r, HtSymbolizer *sy, HtSymSummary *sum)
{
  HtSymScan sc = {.r = r, .sy = sy, .sum = sum};
  HtResolve rs;
  ht_resolve_init(&rs);
  ht_resolve_lean(&rs, ht_reader_sealed(r));
  /* Out of memory, frees of blocks it could not keep go unseen: the count
  ** of live bytes only rises, and its peak is wrong. */
  if (ht_resolve_run(&rs, r, ht_symscan_event, NULL, &sc)) sum->peak_unknown = 1;
  ht_resolve_free(&rs);
}

/* Unique native addresses of the stack table lacking a symbol; sorted. */
static uint64_t *sym_collect(HtReader *r, size_t *count, int *had_symbols)
{
  HtMap seen;
  *count = 0;
  if (ht_map_init(&seen, 1024)) return NULL;
  uint32_t nstack = ht_reader_stack_count(r);
  for (uint32_t id = 1; id <= nstack; id++) {
    uint64_t v = ht_reader_stack_frame(r, id);
    if (HT_FRAME_IS_LOC(v)) continue;
    uint64_t ip = HT_FRAME_IP(v);
    if (ht_map_get(&seen, ip)) continue;
    const HtSymbol *old;
    if (ht_reader_symbol(r, ip, &old)) { *had_symbols = 1; ht_map_put(&seen, ip, 0); continue; }
    if (ht_map_put(&seen, ip, 1)) { ht_map_free(&seen); return NULL; }
  }
  uint64_t *ips = malloc((seen.count + 1) * sizeof(*ips)), k, v;
  if (ips) {
    size_t it = 0;
    while (ht_map_next(&seen, &it, &k, &v))
      if (v) ips[(*count)++] = k;
    qsort(ips, *count, sizeof(*ips), sym_cmp);
  }
  ht_map_free(&seen);
  return ips;
}

/* Symbolise ips into a dictionary. */
static int sym_build(HtSymbolizer *sy, const uint64_t *ips, size_t n, HtDict *d,
                     HtSymSummary *sum)
{
  HtSymOut out[SYM_MAX_FRAMES];
  HtSymFrame fr[SYM_MAX_FRAMES];
  for (size_t i = 0; i < n; i++) {
    size_t k = ht_symbolizer_lookup(sy, ips[i], out, SYM_MAX_FRAMES);
    SymModule *m = sym_find(sy, ips[i] ? ips[i] - 1 : 0);
    if (m && m->state == 1 && k && (k > 1 || out[0].file ||
        strncmp(out[0].func, m->name, strlen(m->name)) || out[0].func[strlen(m->name)] != '+'))
      sum->resolved++;
    if (k && out[0].line) sum->with_line++;
    for (size_t j = 0; j < k; j++) {
      int64_t f = ht_dict_str(d, out[j].func), fl = ht_dict_str(d, out[j].file);
      if (f < 0 || fl < 0) return HEAPTAPE_E_NOMEM;
      fr[j].func = (uint64_t)f;
      fr[j].file = (uint64_t)fl;
      fr[j].line = out[j].line;
    }
    if (ht_dict_sym(d, ips[i], fr, k)) return HEAPTAPE_E_NOMEM;
  }
  return 0;
}

/* Append the dictionary to the tape, cutting a partial last packet first. */
int ht_symbolize_append(const char *path, HtDict *d, uint32_t pid, uint64_t keep,
                      HtSymSummary *sum, char *err, size_t errlen)
{
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, errlen, "%s: cannot append symbols: %s", path, strerror(errno));
    return HEAPTAPE_E_IO;
  }
  struct stat st;
  if (!fstat(fd, &st) && (uint64_t)st.st_size > keep && ftruncate(fd, (off_t)keep)) {
    snprintf(err, errlen, "%s: cannot cut the partial last packet: %s", path,
             strerror(errno));
    close(fd);
    return HEAPTAPE_E_IO;
  }
  lseek(fd, 0, SEEK_END);
  HtWriter *w = ht_writer_new(sym_sink, &fd, 1);
  if (!w) { close(fd); snprintf(err, errlen, "%s: out of memory", path); return HEAPTAPE_E_NOMEM; }
  int rc = ht_dict_flush(d, w, pid);
  if (!rc) rc = ht_writer_error(w);
  sum->dict_bytes = ht_writer_bytes(w);
  ht_writer_destroy(w);
  if (!rc) sym_mark_header(fd, HT_F_SYMBOLIZED, 0);
  if (close(fd) && !rc) rc = HEAPTAPE_E_IO;
  if (rc) snprintf(err, errlen, "%s: cannot append symbols: %s", path,
                   rc == HEAPTAPE_E_IO ? strerror(errno) : heaptape_strerror(rc));
  return rc;
}

/* Symbolise a tape in place; see symbolize.h. */
int ht_symbolize_run(const char *path, unsigned flags, HtSymSummary *sump,
                     char *err, size_t errlen)
{
  HtSymSummary dummy, *sum = sump ? sump : &dummy;
  memset(sum, 0, sizeof(*sum));
  double t0 = sym_now();
  HtReader *r;
  int rc = ht_reader_open(&r, path, err, errlen);
  if (rc) return rc;
  HtSymbolizer *sy = (flags & HT_SYM_NOSYMBOLS) ? NULL : ht_symbolizer_new(flags);
  if (!sy && !(flags & HT_SYM_NOSYMBOLS)) {
    ht_reader_close(r);
    ht_symbolizer_destroy(sy);
    snprintf(err, errlen, "%s: out of memory", path);
    return HEAPTAPE_E_NOMEM;
  }
  sym_scan(r, sy, sum);
  const HtReadStats *st = ht_reader_stats(r);
  uint64_t keep = st->file_bytes - st->truncated_bytes;
  sum->truncated = !st->has_trailer || st->truncated_bytes;
  uint32_t pid = ht_reader_header(r)->pid;
  int rtlocs = !ht_reader_sealed(r) && ht_reader_header(r)->version < HT_VERSION_RTLOC &&
               ht_reader_rtlocs(r);
  if (!sy) {
    ht_reader_close(r);
    if (rtlocs) sym_mark_rtlocs(path);
    sum->seconds = sym_now() - t0;
    return 0;
  }

  HtDict *d;
  rc = ht_symbolize_dict(r, path, sy, sum, &d, err, errlen);
  ht_reader_close(r);                 /* unmapped before the file changes */
  ht_symbolizer_destroy(sy);
  if (!rc && d) rc = ht_symbolize_append(path, d, pid, keep, sum, err, errlen);
  ht_dict_destroy(d);
  if (!rc && rtlocs) sym_mark_rtlocs(path);
  sum->seconds = sym_now() - t0;
  return rc;
}

/* A journal read by r that declares Python or Ruby locations: version 6. */
void ht_symbolize_rtlocs(const HtReader *r, const char *path)
{
  if (!ht_reader_sealed(r) && ht_reader_header(r)->version < HT_VERSION_RTLOC &&
      ht_reader_rtlocs(r))
    sym_mark_rtlocs(path);
}

/* The symbols of r's stack table (r read to its end) as a dictionary. */
int ht_symbolize_dict(HtReader *r, const char *path, HtSymbolizer *sy, HtSymSummary *sum,
                      HtDict **out, char *err, size_t errlen)
{
  *out = NULL;
  int had = 0;
  size_t n = 0;
  uint64_t *ips = sym_collect(r, &n, &had);
  HtDict *d = ips ? ht_dict_new() : NULL;
  if (!d) {
    free(ips);
    snprintf(err, errlen, "%s: out of memory", path);
    return HEAPTAPE_E_NOMEM;
  }
  /* A second pass over a tape adds only what the first one lacked, under a
  ** dictionary id of its own so that string ids never collide. */
  ht_dict_set_id(d, had ? SYM_DICT_ID + 1 + (uint32_t)(time(NULL) & 0xffff) : SYM_DICT_ID);
  sum->addrs = n;
  double t1 = sym_now();
  int rc = sym_build(sy, ips, n, d, sum);
  sum->sym_seconds = sym_now() - t1;
  free(ips);
  if (rc) {
    snprintf(err, errlen, "%s: out of memory while symbolising", path);
    ht_dict_destroy(d);
    return rc;
  }
  if (n) *out = d;
  else ht_dict_destroy(d);
  return 0;
}

/* Symbolise a tape in place with default flags. */
int ht_symbolize_tape(const char *path, char *err, size_t errlen)
{
  return ht_symbolize_run(path, 0, NULL, err, errlen);
}

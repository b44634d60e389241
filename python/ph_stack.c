/* heaptape -- the Python module's stacks: the calling thread's interpreter
** frames read in place, (code, offset) -> location cache, native interleaving. */
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "ph.h"

/* The frame layout: internal, so checked against the version at start. */
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE

/* -- Names without allocating --------------------------------------------- */

/* UTF-8 of a str into buf (or its own bytes when it has them); never allocates. */
static const char *stack_utf8(PyObject *s, char *buf, size_t len)
{
  if (!s || !PyUnicode_Check(s)) return "?";
  if (PyUnicode_IS_COMPACT_ASCII(s)) return (const char *)(((PyASCIIObject *)s) + 1);
  if (PyUnicode_IS_COMPACT(s) && ((PyCompactUnicodeObject *)s)->utf8)
    return ((PyCompactUnicodeObject *)s)->utf8;
  int kind = PyUnicode_KIND(s);
  const void *data = PyUnicode_DATA(s);
  Py_ssize_t n = PyUnicode_GET_LENGTH(s);
  size_t o = 0;
  for (Py_ssize_t i = 0; i < n && o + 5 < len; i++) {
    Py_UCS4 c = PyUnicode_READ(kind, data, i);
    if (c < 0x80) buf[o++] = (char)c;
    else if (c < 0x800) { buf[o++] = (char)(0xc0 | c >> 6); buf[o++] = (char)(0x80 | (c & 0x3f)); }
    else if (c >= 0xd800 && c < 0xe000) buf[o++] = '?';   /* lone surrogate */
    else if (c < 0x10000) {
      buf[o++] = (char)(0xe0 | c >> 12); buf[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
      buf[o++] = (char)(0x80 | (c & 0x3f));
    } else {
      buf[o++] = (char)(0xf0 | c >> 18); buf[o++] = (char)(0x80 | ((c >> 12) & 0x3f));
      buf[o++] = (char)(0x80 | ((c >> 6) & 0x3f)); buf[o++] = (char)(0x80 | (c & 0x3f));
    }
  }
  buf[o] = 0;
  return buf;
}

/* -- Interned locations ------------------------------------------------------ */

/* FNV-1a of a string into h. */
static uint64_t stack_fnv(uint64_t h, const char *s)
{
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return (h ^ 0xff) * 0x100000001b3ull;
}

/* Copy s into the arena; NULL when full. */
static const char *stack_keep(const char *s)
{
  size_t n = strlen(s) + 1;
  if (ph.arena_used + n > PH_ARENA) return NULL;
  char *d = ph.arena + ph.arena_used;
  memcpy(d, s, n);
  ph.arena_used += n;
  return d;
}

/* Id of (file, name, line, first), declared on first sight; the slot + 1. */
static uint64_t stack_intern(const char *file, const char *name, uint32_t line, uint32_t first)
{
  uint64_t h = stack_fnv(stack_fnv(0xcbf29ce484222325ull, file), name);
  h = (h ^ line) * 0x100000001b3ull;
  h = (h ^ first) * 0x100000001b3ull;
  if (!h) h = 1;
  uint32_t mask = PH_LOCS - 1, i = (uint32_t)(h ^ h >> 32) & mask;
  for (uint32_t k = 0; k < PH_LOCS; k++, i = (i + 1) & mask) {
    PhLoc *l = &ph.loc[i];
    if (!l->hash) {
      if (ph.nloc + 1 >= PH_LOCS - PH_LOCS / 8) return ph.internal_id;   /* full */
      const char *f = stack_keep(file), *n = stack_keep(name);
      if (!f || !n) return ph.internal_id;
      l->hash = h; l->file = f; l->name = n; l->line = line; l->first = first;
      ph.nloc++;
      heaptape_loc_declare(i + 1, HEAPTAPE_LOC_PYTHON, n, f, line, first);
      return i + 1;
    }
    if (l->hash == h && l->line == line && l->first == first &&
        !strcmp(l->file, file) && !strcmp(l->name, name))
      return i + 1;
  }
  return ph.internal_id;
}

/* Fresh tables for a session. */
int ph_stack_tables(void)
{
  if (!ph.loc) {
    void *a = mmap(NULL, PH_LOCS * sizeof(PhLoc), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *b = mmap(NULL, PH_ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *c = mmap(NULL, sizeof(PhFrame) << PH_FC_BITS, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED || b == MAP_FAILED || c == MAP_FAILED) return -1;
    ph.loc = a; ph.arena = b; ph.fc = c;
  } else {
    memset(ph.loc, 0, PH_LOCS * sizeof(PhLoc));
  }
  ph.gen++;                               /* ids of the last session are gone */
  ph.nloc = 0;
  ph.arena_used = 0;
  /* slot 0 is never a hash slot's id + 1 collision: INTERNAL takes id 0 + PH_LOCS */
  ph.internal_id = PH_LOCS + 1;
  heaptape_loc_declare(ph.internal_id, HEAPTAPE_LOC_INTERNAL, NULL, NULL, 0, 0);
  return 0;
}

/* -- The frame walk ---------------------------------------------------------- */

/* Location id of an interpreter frame (cache, else line table and intern). */
static uint64_t stack_loc(_PyInterpreterFrame *f)
{
  PyCodeObject *code = f->f_code;
  intptr_t off = f->prev_instr - _PyCode_CODE(code);
  uint64_t k = ((uintptr_t)code >> 4) * 0x9e3779b97f4a7c15ull ^ (uint64_t)off * 0xff51afd7ed558ccdull;
  PhFrame *e = &ph.fc[(k >> 20) & ((1u << PH_FC_BITS) - 1)];
  if (e->gen == ph.gen && e->code == code && e->off == off) return e->id;
  /* the same line PyFrame_GetLineNumber gives (it reads the line table only) */
  int line = PyCode_Addr2Line(code, (int)off * (int)sizeof(_Py_CODEUNIT));
  char fb[1024], nb[512];
  const char *file = stack_utf8(code->co_filename, fb, sizeof(fb));
  const char *name = stack_utf8(code->co_qualname, nb, sizeof(nb));
  uint64_t id = stack_intern(file, name, line > 0 ? (uint32_t)line : 0,
                             (uint32_t)code->co_firstlineno);
  e->code = code; e->off = off; e->id = id; e->gen = ph.gen;
  return id;
}

/* Take the tables' lock (uncontended but for raw hooks of other threads). */
static void stack_lock(void)
{
  while (atomic_flag_test_and_set_explicit(&ph.lock, memory_order_acquire))
    __builtin_ia32_pause();
}

/* Release the tables' lock. */
static void stack_unlock(void) { atomic_flag_clear_explicit(&ph.lock, memory_order_release); }

/* A freed code object: its (code, offset) keys leave the cache. */
void ph_stack_forget(const void *p)
{
  (void)p;
  stack_lock();
  ph.gen++;
  stack_unlock();
}

/* The stack of the calling thread as frame values, outermost first. */
int ph_stack_where(PyThreadState *ts, uint64_t *out)
{
  _PyInterpreterFrame *fr[PH_MAXDEPTH];
  int np = 0, cap = ph.native ? PH_MAXDEPTH : ph.maxdepth;
  _PyInterpreterFrame *f = ts && ts->cframe ? ts->cframe->current_frame : NULL;
  for (; f && np < cap; f = f->previous) fr[np++] = f;
  uint64_t in[PH_MAXDEPTH + PH_MAXNATIVE];
  int n = 0;
  if (!ph.native) {
    stack_lock();
    for (int i = 0; i < np; i++)
      if (!_PyFrame_IsIncomplete(fr[i])) in[n++] = HEAPTAPE_FRAME_LOC(stack_loc(fr[i]));
    stack_unlock();
  } else {
    uintptr_t ips[PH_MAXNATIVE];
    int ni = heaptape_native_stack(ips, PH_MAXNATIVE), pi = 0;
    stack_lock();
    for (int j = 0; j < ni; j++) {
      uintptr_t ip = ips[j];
      if (ip >= ph.self_lo && ip < ph.self_hi) continue;     /* our hooks */
      if (ip > ph.eval_lo && ip <= ph.eval_hi && pi < np) {
        /* one C frame of the eval loop runs the Python frames down to an entry frame */
        for (int done = 0; pi < np && !done; pi++) {
          done = fr[pi]->is_entry;
          if (!_PyFrame_IsIncomplete(fr[pi])) in[n++] = HEAPTAPE_FRAME_LOC(stack_loc(fr[pi]));
        }
        continue;
      }
      in[n++] = HEAPTAPE_FRAME_NATIVE(ip);
    }
    for (; pi < np; pi++)                   /* beyond the native walk's depth */
      if (!_PyFrame_IsIncomplete(fr[pi])) in[n++] = HEAPTAPE_FRAME_LOC(stack_loc(fr[pi]));
    stack_unlock();
  }
  if (!n) in[n++] = HEAPTAPE_FRAME_LOC(ph.internal_id);
  if (n > ph.maxdepth && !ph.native) n = ph.maxdepth;
  for (int i = 0; i < n; i++) out[i] = in[n - 1 - i];
  return n;
}

/* -- Set-up -------------------------------------------------------------- */

/* dl_iterate_phdr callback: the executable segment holding arg's address. */
static int stack_self_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
  (void)size;
  uintptr_t a = (uintptr_t)arg;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    if (p->p_type != PT_LOAD || !(p->p_flags & PF_X)) continue;
    uintptr_t lo = info->dlpi_addr + p->p_vaddr, hi = lo + p->p_memsz;
    if (a >= lo && a < hi) { ph.self_lo = lo; ph.self_hi = hi; return 1; }
  }
  return 0;
}

/* The eval loop's code range and this module's; NULL or why not. */
const char *ph_stack_verify(void)
{
  if (PY_VERSION_HEX >> 16 != 0x030b || Py_Version >> 16 != 0x030b)
    return "this module reads CPython 3.11's frames";
  if (!ph.self_hi) dl_iterate_phdr(stack_self_cb, (void *)ph_stack_verify);
  if (!ph.eval_hi) {
    void *fn = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
    Dl_info di;
    const ElfW(Sym) *sym = NULL;
    if (fn && dladdr1(fn, &di, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size) {
      ph.eval_lo = (uintptr_t)fn;
      ph.eval_hi = (uintptr_t)fn + sym->st_size;
    }
  }
  return NULL;
}

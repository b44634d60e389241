/* heaptape -- the Lua module (Lua 5.4 and LuaJIT 2.1): an allocator wrapper
** that reports every VM allocation with its Lua stack, misc.memprof, dump. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>
/* The build defines LH_JIT for the LuaJIT flavour of this file. */

#include "../include/heaptape.h"
#include "../src/base/hash.h"  /* header-only: ht_fnv1a_fold */
#include "lheaptape.h"

#ifdef LH_JIT
/* Lua 5.2+ calls that LuaJIT 2.1 lacks. */
#define lua_absindex(L, i) ((i) > 0 || (i) <= LUA_REGISTRYINDEX ? (i) : lua_gettop(L) + (i) + 1)
#define lua_isinteger(L, i) (lua_tonumber(L, i) == (lua_Number)lua_tointeger(L, i))
#endif

#define LH_API __attribute__((visibility("default")))
#define LH_MAXDEPTH 64            /* Lua frames kept per event at most (innermost) */
#define LH_MAXTHREADS 32          /* nested coroutines followed per event */
#define LH_LOCS (1u << 16)        /* location intern slots */
#define LH_ARENA (8u << 20)       /* bytes for interned names */
#define LH_CCACHE 512             /* C function -> location cache entries */
#define LH_MAXTRACE 65536         /* trace start table entries (LuaJIT) */
#define LH_FC_BITS 13             /* frame cache: 2^13 entries, 2-way */
#define LH_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* -- VM object layouts ------------------------------------------------------
** Facts about the two supported builds that the public API does not expose.
** lh_verify() checks each of them against the running VM at start and the
** module refuses to record on a mismatch. See docs/LUA.md.
*/
#ifdef LH_JIT
#define LH_FRONTEND "luajit"
#define LJ_L_GLREF     16   /* lua_State: global_State (MRef, GC64) */
#define LJ_L_BASE      32   /* lua_State: base of the running frame (TValue *) */
#define LJ_L_STACK     56   /* lua_State: stack base (MRef) */
#define LJ_L_STACKSIZE 88   /* lua_State: stack slots (MSize) */
#define LJ_G_VMSTATE  184   /* global_State: int32 vmstate (~state or trace) */
#define LJ_G_MAINTH   192   /* global_State: main thread (GCRef) */
#define LJ_G_CURL     368   /* global_State: running coroutine (GCRef) */
#define LJ_FN_FFID     10   /* GCfunc: fast function id, 0 Lua, 1 C */
#define LJ_FN_PC       32   /* GCfuncL: bytecode of the prototype (MRef) */
#define LJ_FN_CF       40   /* GCfuncC: lua_CFunction */
#define LJ_GCT          9   /* GCHeader: gct, the object's type */
#define LJ_GCT_FUNC     8   /* gct of a function (~LJ_TFUNC) */
#define LJ_GCT_PROTO    7   /* gct of a prototype (~LJ_TPROTO) */
#define LJ_FRAME_TYPE   3   /* frame link: type bits */
#define LJ_FRAME_TYPEP  7   /* frame link: type and pcall bits */
#define LJ_FRAME_LUA    0   /* link is the return pc into the Lua caller */
#define LJ_FRAME_VARG   3   /* link of a vararg function's frame (delta) */
#define LJ_TAB_ASIZE   48   /* GCtab: array slots */
#define LJ_TAB_HMASK   52   /* GCtab: hash mask */
#define LJ_GCMASK  ((1ULL << 47) - 1)  /* GC64 pointer bits of a tagged slot */
#define LJ_VMST_C     (-2)  /* ~LJ_VMST_C: a C function runs */
#define LJ_VMST_INTERP (-1) /* ~LJ_VMST_INTERP */
#else
#define LH_FRONTEND "lua5.4"
#define L54_L_G        24   /* lua_State: l_G */
#define L54_L_CI       32   /* lua_State: ci (current CallInfo) */
#define L54_L_STKLAST  40   /* lua_State: stack_last */
#define L54_L_STACK    48   /* lua_State: stack */
#define L54_CI_FUNC     0   /* CallInfo: func (StkId) */
#define L54_CI_PREV    16   /* CallInfo: previous */
#define L54_CI_PC      32   /* CallInfo: u.l.savedpc */
#define L54_G_REG      64   /* global_State: l_registry.value_ */
#define L54_G_GCSTATE 101   /* global_State: gcstate */
#define L54_G_GCSTOPEM 103  /* global_State: gcstopem, 1 inside a GC step */
#define L54_TV_TAG      8   /* TValue: tt_ */
#define L54_VLCL       70   /* tag of a Lua closure (collectable) */
#define L54_VLCF       22   /* tag of a light C function */
#define L54_VCCL      102   /* tag of a C closure (collectable) */
#define L54_VTHREAD    72   /* tag of a thread (collectable) */
#define L54_VPROTO     10   /* tag of a prototype (Proto.tt) */
#define L54_LCL_P      24   /* LClosure: p (Proto *) */
#define L54_CCL_F      24   /* CClosure: f */
#define L54_CCL_UV     32   /* CClosure: upvalue[0] (TValue) */
#define L54_OP_TAILCALL 69  /* opcode of OP_TAILCALL */
#define L54_TAB_LSIZE  11   /* Table: lsizenode */
#define L54_TAB_ALIMIT 12   /* Table: alimit */
#endif

#define LH_RD(T, p, off) (*(T *)((const char *)(p) + (off)))

/* -- State ------------------------------------------------------------------ */

/* An interned runtime location. */
typedef struct LhLoc {
  uint64_t hash;           /* 0 = empty slot */
  uint64_t aux;            /* line defined, function address or trace */
  const char *file;        /* chunk name (arena), or NULL */
  uint32_t line;           /* current line */
  int kind;                /* HEAPTAPE_LOC_* */
} LhLoc;

/* A frame cache entry: the location of a bytecode position. */
typedef struct LhFrame {
  const void *pc;          /* saved/return pc, or line << 1 | 1 (LuaJIT) */
  const void *proto;       /* with a line: the prototype's bytecode; else NULL */
  uint64_t id;             /* interned location */
  uint64_t gen;            /* lh.gen when stored; any other value = empty */
} LhFrame;

/* The one profiled VM of the process. */
typedef struct LhProf {
  lua_State *L;            /* main thread of the profiled state */
  lua_Alloc orig;          /* the VM's allocator before ours */
  void *orig_ud;           /* its userdata */
  int installed;           /* our wrapper is the VM's allocator */
  int active;              /* a session runs (until stop or state close) */
  int own_tape;            /* we started the tape (vs. attached to a preload) */
  int busy;                /* inside the wrapper: no re-entry */
  void *vm_base;           /* load base of the object holding the VM */
  void *self_base;         /* load base of this module */
  const void *g;           /* global_State */
  lua_State *host_co;      /* coroutine a C host resumes (lheaptape_running) */
  LhLoc *loc;              /* LH_LOCS interned locations */
  uint32_t nloc;           /* used slots */
  char *arena;             /* LH_ARENA bytes of names */
  size_t arena_used;       /* bytes used */
  uint64_t internal_id;    /* id of INTERNAL */
  LhFrame *fc;             /* 2^LH_FC_BITS frame cache entries */
  uint64_t gen;            /* frame cache generation, bumped by prototype frees */
  int check;               /* HEAPTAPE_LUA_CHECK: verify walks against the debug API */
  int maxdepth;            /* frames kept per event: HEAPTAPE_FRAMES, else LH_MAXDEPTH */
  uint64_t mismatches;     /* walks that differed from the reference */
  struct { lua_CFunction f; uint64_t id; } ccache[LH_CCACHE]; /* 0 id: builtin */
#ifdef LH_JIT
  struct { const char *file; uint32_t line; uint64_t id; } *tstart; /* trace start
                              ** locations, and their interned ids once known */
  int jit_attached;        /* jit.attach callback installed */
#else
  lua_CFunction coresume;  /* coroutine.resume */
  lua_CFunction auxwrap;   /* the C function behind coroutine.wrap's closures */
#endif
  pthread_t timer;         /* auto-stop thread */
  int has_timer;           /* timer thread exists */
  int timer_quit;          /* asks the timer to leave */
  pthread_mutex_t tmu;     /* guards timer_quit */
  pthread_cond_t tcv;      /* wakes the timer */
  uint64_t events;         /* events reported this session */
} LhProf;

static LhProf lh = { .tmu = PTHREAD_MUTEX_INITIALIZER, .tcv = PTHREAD_COND_INITIALIZER };

/* -- Location interning ----------------------------------------------------- */

/* Copy s into the name arena; NULL when full. */
static const char *lh_arena_copy(const char *s)
{
  size_t n = strlen(s) + 1;
  if (lh.arena_used + n > LH_ARENA) return NULL;
  char *p = lh.arena + lh.arena_used;
  memcpy(p, s, n);
  lh.arena_used += n;
  return p;
}

/* Id of (kind, file, line, aux), declaring it on first use. name may be NULL. */
static uint64_t lh_intern(int kind, const char *file, uint32_t line, uint64_t aux,
                          const char *name)
{
  uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)kind;
  h = (h ^ line) * 0x100000001b3ULL;
  h = (h ^ aux) * 0x9e3779b97f4a7c15ULL;
  h = ht_fnv1a_fold(h, file);
  if (!h) h = 1;
  uint32_t i = (uint32_t)(h >> 20) & (LH_LOCS - 1);
  for (uint32_t probe = 0; probe < 64; probe++, i = (i + 1) & (LH_LOCS - 1)) {
    LhLoc *l = &lh.loc[i];
    if (l->hash == h && l->kind == kind && l->line == line && l->aux == aux &&
        (l->file == file || (l->file && file && !strcmp(l->file, file))))
      return i + 1;
    if (!l->hash) {
      if (lh.nloc >= LH_LOCS * 3 / 4) break;
      l->file = file ? lh_arena_copy(file) : NULL;
      if (file && !l->file) break;
      l->hash = h; l->kind = kind; l->line = line; l->aux = aux;
      lh.nloc++;
      heaptape_loc_declare(i + 1, kind, name, l->file, line, aux);
      return i + 1;
    }
  }
  return lh.internal_id;             /* table full: charge to INTERNAL */
}

/* Location of a C function: 0 for a builtin of the VM (charged to its caller). */
static uint64_t lh_cfunc(lua_CFunction f)
{
  uint32_t k = (uint32_t)(((uintptr_t)f >> 4) % LH_CCACHE);
  if (lh.ccache[k].f == f) return lh.ccache[k].id;
  Dl_info di;
  uint64_t id;
  if (!dladdr((void *)f, &di) || di.dli_fbase == lh.vm_base) {
    id = 0;
  } else if (di.dli_fbase == lh.self_base) {
    id = lh.internal_id;                /* the profiler's own calls */
  } else {
    char name[256];
    if (di.dli_sname) snprintf(name, sizeof(name), "%s", di.dli_sname);
    else {
      const char *base = di.dli_fname ? strrchr(di.dli_fname, '/') : NULL;
      snprintf(name, sizeof(name), "%s+0x%lx", base ? base + 1 : "?",
               (unsigned long)((uintptr_t)f - (uintptr_t)di.dli_fbase));
    }
    id = lh_intern(HEAPTAPE_LOC_CFUNC, NULL, 0, (uint64_t)(uintptr_t)f, name);
  }
  lh.ccache[k].f = f;
  lh.ccache[k].id = id;
  return id;
}

/* Location of the Lua frame described by ar (after lua_getinfo "Sl"). */
static uint64_t lh_lua(const lua_Debug *ar)
{
  return lh_intern(HEAPTAPE_LOC_LUA, ar->short_src,
                   ar->currentline > 0 ? (uint32_t)ar->currentline : 0,
                   ar->linedefined > 0 ? (uint64_t)ar->linedefined : 0, NULL);
}

/* -- Frame cache -------------------------------------------------------------
** A Lua frame is identified by its position in bytecode: the saved pc (Lua
** 5.4) or the return pc (LuaJIT) points into one prototype's code, so its
** location (chunk, line, line defined) is a function of that pointer. When
** LuaJIT gives no pc (the innermost frame, a frame below a C function) the
** key is (line, prototype's bytecode start) after lua_getinfo "l". Each key's
** location is computed once through lua_getinfo "Sl" and then read from this
** 2-way cache. A prototype's memory can be reused after
** it is collected: every free of a prototype (recognised by its type tag
** before the real free) bumps the generation, which empties the cache.
*/

/* Cache index of (pc, proto): cheap, as pcs are 4-byte aligned and spread. */
static inline uint32_t lh_fc_slot(const void *pc, const void *proto)
{
  uintptr_t h = (uintptr_t)pc ^ ((uintptr_t)proto >> 3);
  return (uint32_t)((h >> 2) ^ (h >> 14)) & ((1u << LH_FC_BITS) - 2);
}

/* Cached location of (pc, proto), or 0. */
static inline uint64_t lh_fc_get(const void *pc, const void *proto)
{
  LhFrame *e = &lh.fc[lh_fc_slot(pc, proto)];
  if (e[0].pc == pc && e[0].proto == proto && e[0].gen == lh.gen) return e[0].id;
  if (e[1].pc == pc && e[1].proto == proto && e[1].gen == lh.gen) return e[1].id;
  return 0;
}

/* Remember (pc, proto) -> id, replacing the older of the two ways. */
static void lh_fc_put(const void *pc, const void *proto, uint64_t id)
{
  LhFrame *e = &lh.fc[lh_fc_slot(pc, proto)];
  if (e[0].gen == lh.gen && e[0].pc != pc) { e[1] = e[0]; }
  e[0].pc = pc; e[0].proto = proto; e[0].gen = lh.gen; e[0].id = id;
}

/* -- Stack walks -------------------------------------------------------------
** A walk fills ids innermost first and returns how many. Builtins (C
** functions of the VM itself: fast functions, the standard library) are
** charged to their Lua caller; a builtin called in tail position is charged
** to the caller's caller, as LuaJIT's frame replacement does.
** The fast walks read the frames directly (layouts verified at start); the
** reference walks go through lua_getstack/lua_getinfo and are run beside the
** fast ones when HEAPTAPE_LUA_CHECK is set (docs/LUA.md).
*/

#ifdef LH_JIT
/* The frame below f, whose link word is link: a Lua frame's link is the
** return pc (the caller's base is in the CALL instruction before it), any
** other frame's link is its size with the type bits. */
static inline const uint64_t *lh_jit_prev(const uint64_t *f, uint64_t link)
{
  if ((link & LJ_FRAME_TYPE) == LJ_FRAME_LUA)
    return f - (2 + ((((const uint32_t *)(uintptr_t)link)[-1] >> 8) & 0xff));
  return (const uint64_t *)((const char *)f - (link & ~(uint64_t)LJ_FRAME_TYPEP));
}

/* Location of the Lua frame f of co (fn its function, nf the frame above it). */
static uint64_t lh_jit_lua(lua_State *co, const uint64_t *stack, const uint64_t *f,
                           const uint64_t *nf, const uint8_t *fn)
{
  const void *proto = NULL, *pc;
  uint64_t id;
  lua_Debug ar;
  ar.i_ci = (int)(((nf - f) << 16) + (f - stack));
  if (nf != f && (nf[0] & LJ_FRAME_TYPE) == LJ_FRAME_LUA) {
    pc = (const void *)(uintptr_t)nf[0];           /* return pc into fn */
  } else {                                        /* innermost, or below C */
    if (!lua_getinfo(co, "l", &ar)) return 0;
    pc = (const void *)(uintptr_t)((uint64_t)(uint32_t)ar.currentline << 1 | 1);
    proto = LH_RD(const void *, fn, LJ_FN_PC);
    if ((id = lh_fc_get(pc, proto))) return id;
  }
  if (!lua_getinfo(co, "Sl", &ar)) return 0;
  id = lh_lua(&ar);
  lh_fc_put(pc, proto, id);
  return id;
}

/* Walk co's frames (LuaJIT, frames synced: interpreter or C function). */
static int lh_walk_thread(lua_State *co, uint64_t *ids, int n)
{
  const uint64_t *stack = LH_RD(const uint64_t *, co, LJ_L_STACK);
  const uint64_t *f = LH_RD(const uint64_t *, co, LJ_L_BASE) - 1, *nf = f;
  int pseudo = 0;                       /* f is the lower copy of a vararg frame */
  while (f > stack + 1 && n < lh.maxdepth) {
    const uint8_t *fn = (const uint8_t *)(uintptr_t)(f[-1] & LJ_GCMASK);
    uint64_t link = f[0];
    if (!pseudo && fn != (const uint8_t *)co) {    /* not a dummy frame */
      uint64_t id;
      if (nf != f && (nf[0] & LJ_FRAME_TYPE) == LJ_FRAME_LUA &&  /* f is Lua */
          (id = lh_fc_get((const void *)(uintptr_t)nf[0], NULL))) {
        ids[n++] = id;
      } else if (fn[LJ_FN_FFID] == 0) {
        if (!(id = lh_jit_lua(co, stack, f, nf, fn))) break;
        ids[n++] = id;
      } else if (fn[LJ_FN_FFID] == 1) {
        if ((id = lh_cfunc(LH_RD(lua_CFunction, fn, LJ_FN_CF)))) ids[n++] = id;
      }
    }
    pseudo = (link & LJ_FRAME_TYPEP) == LJ_FRAME_VARG;
    nf = f;
    f = lh_jit_prev(f, link);
  }
  return n;
}

/* Reference walk of co through the debug API. */
static int lh_walk_ref(lua_State *co, uint64_t *ids, int n)
{
  lua_Debug ar;
  const uint64_t *stack = LH_RD(const uint64_t *, co, LJ_L_STACK);
  for (int level = 0; n < lh.maxdepth && lua_getstack(co, level, &ar); level++) {
    int idx = ar.i_ci & 0xffff;
    if (idx < 1) break;
    const uint8_t *fn = (const uint8_t *)(uintptr_t)(stack[idx - 1] & LJ_GCMASK);
    int ffid = fn[LJ_FN_FFID];
    if (ffid == 0) {
      if (!lua_getinfo(co, "Sl", &ar)) break;
      ids[n++] = lh_lua(&ar);
    } else if (ffid == 1) {
      uint64_t id = lh_cfunc(LH_RD(lua_CFunction, fn, LJ_FN_CF));
      if (id) ids[n++] = id;
    }
  }
  return n;
}

/* The running coroutine's stack, or the trace / INTERNAL location. */
static int lh_where(uint64_t *ids, int ref)
{
  int32_t vms = LH_RD(volatile int32_t, lh.g, LJ_G_VMSTATE);
  if (vms >= 0) {                       /* on trace vms */
    if (vms < LH_MAXTRACE && lh.tstart) {  /* interned once per trace, not per event */
      if (!lh.tstart[vms].id)
        lh.tstart[vms].id = lh_intern(HEAPTAPE_LOC_TRACE, lh.tstart[vms].file,
                                      lh.tstart[vms].line, (uint64_t)vms, NULL);
      ids[0] = lh.tstart[vms].id;
    } else {
      ids[0] = lh_intern(HEAPTAPE_LOC_TRACE, NULL, 0, (uint64_t)vms, NULL);
    }
    return 1;
  }
  if (vms != LJ_VMST_INTERP && vms != LJ_VMST_C) {  /* GC, exit, record, opt, asm */
    ids[0] = lh.internal_id;
    return 1;
  }
  lua_State *co = LH_RD(lua_State *, lh.g, LJ_G_CURL);
  int n = ref ? lh_walk_ref(co, ids, 0) : lh_walk_thread(co, ids, 0);
  if (!n) ids[n++] = lh.internal_id;
  return n;
}

/* Is the block at p, about to be freed, a function prototype? */
static inline int lh_is_proto(const void *p, size_t osize)
{
  return osize > LJ_GCT && LH_RD(uint8_t, p, LJ_GCT) == LJ_GCT_PROTO;
}
#else
/* The coroutine that the frame ci resumes, or NULL (Lua 5.4). */
static lua_State *lh_resumed(const void *ci)
{
  const uint8_t *func = LH_RD(const uint8_t *, ci, L54_CI_FUNC);
  int tag = func[L54_TV_TAG];
  const uint8_t *tv = NULL;
  if (tag == L54_VLCF && LH_RD(lua_CFunction, func, 0) == lh.coresume) {
    tv = func + 16;                     /* first argument */
  } else if (tag == L54_VCCL) {
    const uint8_t *cl = LH_RD(const uint8_t *, func, 0);
    if (LH_RD(lua_CFunction, cl, L54_CCL_F) == lh.auxwrap) tv = cl + L54_CCL_UV;
  }
  if (!tv || tv[L54_TV_TAG] != L54_VTHREAD) return NULL;
  lua_State *co = LH_RD(lua_State *, tv, 0);
  return lua_status(co) == LUA_OK ? co : NULL;
}

/* The running coroutine chain from the main thread: th[0] main, returns count.
** While a coroutine runs, the frame that resumed it is its resumer's
** innermost one; ref = 1 searches the resumer's whole chain instead. */
static int lh_threads(lua_State **th, int ref)
{
  int n = 0;
  lua_State *L = lh.host_co ? lh.host_co : lh.L;
  while (L && n < LH_MAXTHREADS) {
    th[n++] = L;
    lua_State *next = NULL;
    for (const void *ci = LH_RD(const void *, L, L54_L_CI);
         ci && LH_RD(const void *, ci, L54_CI_PREV) && !next;
         ci = ref ? LH_RD(const void *, ci, L54_CI_PREV) : NULL)
      next = lh_resumed(ci);
    if (next == L) break;
    L = next;
  }
  return n;
}

/* Walk co's frames (Lua 5.4) into ids from position n; ref: by lua_getinfo. */
static int lh_walk_thread(lua_State *co, uint64_t *ids, int n, int ref)
{
  lua_Debug ar;
  int builtin_top = n == 0, first_lua = 1;
  for (const void *ci = LH_RD(const void *, co, L54_L_CI);
       n < lh.maxdepth && ci && LH_RD(const void *, ci, L54_CI_PREV);
       ci = LH_RD(const void *, ci, L54_CI_PREV)) {
    const uint8_t *func = LH_RD(const uint8_t *, ci, L54_CI_FUNC);
    int tag = func[L54_TV_TAG];
    if (tag == L54_VLCL) {
      const uint32_t *pc = LH_RD(const uint32_t *, ci, L54_CI_PC);
      if (first_lua && builtin_top && n == 0) {
        first_lua = 0;
        if (pc && (pc[-1] & 0x7f) == L54_OP_TAILCALL) continue;  /* replaced frame */
      }
      first_lua = 0;
      uint64_t id = ref ? 0 : lh_fc_get(pc, NULL);
      if (!id) {
        ar.i_ci = (struct CallInfo *)ci;
        if (!lua_getinfo(co, "Sl", &ar)) break;
        id = lh_lua(&ar);
        if (!ref) lh_fc_put(pc, NULL, id);
      }
      ids[n++] = id;
    } else if (tag == L54_VLCF || tag == L54_VCCL) {
      lua_CFunction f = tag == L54_VLCF ? LH_RD(lua_CFunction, func, 0)
                      : LH_RD(lua_CFunction, LH_RD(const uint8_t *, func, 0), L54_CCL_F);
      uint64_t id = lh_cfunc(f);
      if (id) { ids[n++] = id; builtin_top = 0; }
    }
  }
  return n;
}

/* The running coroutine's stack (innermost first), or INTERNAL. */
static int lh_where(uint64_t *ids, int ref)
{
  if (LH_RD(uint8_t, lh.g, L54_G_GCSTOPEM)) { ids[0] = lh.internal_id; return 1; }
  lua_State *th[LH_MAXTHREADS];
  int nt = lh_threads(th, ref), n = 0;
  for (int i = nt - 1; i >= 0 && n < lh.maxdepth; i--) n = lh_walk_thread(th[i], ids, n, ref);
  if (!n) ids[n++] = lh.internal_id;
  return n;
}

/* Is the block at p, about to be freed, a function prototype? */
static inline int lh_is_proto(const void *p, size_t osize)
{
  return osize > L54_TV_TAG && LH_RD(uint8_t, p, L54_TV_TAG) == L54_VPROTO;
}
#endif

/* HEAPTAPE_LUA_CHECK: compare the fast walk with the reference walk. */
static void lh_check(const uint64_t *ids, int n)
{
  uint64_t ref[LH_MAXDEPTH];
  int m = lh_where(ref, 1);
  if (m == n && !memcmp(ids, ref, (size_t)n * sizeof(*ids))) return;
  lh.mismatches++;
  if (lh.mismatches > 10) return;
  char buf[2048];
  int k = snprintf(buf, sizeof(buf), "heaptape: lua walk mismatch at event %llu: fast",
                   (unsigned long long)lh.events);
  for (int i = 0; i < n && k < 1900; i++) k += snprintf(buf + k, sizeof(buf) - (size_t)k, " %llu", (unsigned long long)ids[i]);
  k += snprintf(buf + k, sizeof(buf) - (size_t)k, " | ref");
  for (int i = 0; i < m && k < 2000; i++) k += snprintf(buf + k, sizeof(buf) - (size_t)k, " %llu", (unsigned long long)ref[i]);
  if (k > (int)sizeof(buf) - 2) k = (int)sizeof(buf) - 2;
  buf[k++] = '\n';
  if (write(2, buf, (size_t)k) < 0) lh.mismatches++;
}

/* -- The allocator wrapper --------------------------------------------------- */

/* lua_Alloc: report the event with the stack looked up before the real call. */
static void *lh_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  (void)ud;
  if (lh.busy || !lh.active || !heaptape_is_running())
    return lh.orig(lh.orig_ud, ptr, osize, nsize);
  lh.busy = 1;
  void *q;
  if (nsize == 0) {
    if (ptr) {
      if (lh_is_proto(ptr, osize)) lh.gen++;   /* its frames leave the cache */
      heaptape_rt_free(ptr);             /* before the block is gone */
    }
    q = lh.orig(lh.orig_ud, ptr, osize, nsize);
  } else {
    uint64_t in[LH_MAXDEPTH], out[LH_MAXDEPTH];
    int n = lh_where(in, 0);
    if (LH_UNLIKELY(lh.check)) lh_check(in, n);
    for (int i = 0; i < n; i++) out[i] = in[n - 1 - i];
    q = lh.orig(lh.orig_ud, ptr, osize, nsize);
    if (q) {
      if (ptr) heaptape_rt_realloc(out, (size_t)n, ptr, q, nsize);
      else heaptape_rt_alloc(out, (size_t)n, q, nsize);
    }
  }
  lh.events++;
  lh.busy = 0;
  return q;
}

/* Tell the walker which coroutine a C host resumes (see lheaptape.h). */
LH_API void lheaptape_running(lua_State *co) { lh.host_co = co; }

/* -- Verification of the VM layout ------------------------------------------ */

#ifndef LH_JIT
/* A C function handed to coroutine.wrap to find its closure's C side. */
static int lh_verify_dummy(lua_State *L) { (void)L; return 0; }
#endif

#ifdef LH_JIT
/* The frame walk of lh_walk_thread against lua_getstack on L's current stack,
** and the prototype link of the Lua caller; NULL if they agree, else why. */
static const char *lh_verify_frames(lua_State *L, const uint64_t *stack)
{
  const uint64_t *f = LH_RD(const uint64_t *, L, LJ_L_BASE) - 1, *nf = f;
  int pseudo = 0, level = 0;
  lua_Debug ar;
  while (f > stack + 1 && level < 200) {
    uint64_t link = f[0];
    const uint8_t *fn = (const uint8_t *)(uintptr_t)(f[-1] & LJ_GCMASK);
    if (!pseudo && fn != (const uint8_t *)L) {
      if (!lua_getstack(L, level, &ar) || ar.i_ci != (int)(((nf - f) << 16) + (f - stack)))
        return "stack frames are not linked as in LuaJIT 2.1 (GC64)";
      if (level == 1 && fn[LJ_FN_FFID] == 0 && (nf[0] & LJ_FRAME_TYPE) == LJ_FRAME_LUA) {
        const char *bc = LH_RD(const char *, fn, LJ_FN_PC), *pc = (const char *)(uintptr_t)nf[0];
        if (!bc || pc <= bc || pc - bc > (1 << 26)) return "GCfuncL.pc is not at the known offset";
      }
      level++;
    }
    pseudo = (link & LJ_FRAME_TYPEP) == LJ_FRAME_VARG;
    nf = f;
    f = lh_jit_prev(f, link);
  }
  if (lua_getstack(L, level, &ar)) return "stack frames are not linked as in LuaJIT 2.1 (GC64)";
  return NULL;
}
#endif

/* Check the layout facts against the running VM; NULL if fine, else why. */
static const char *lh_verify(lua_State *L)
{
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
#ifdef LH_JIT
  lua_getglobal(L, "jit");
  lua_getfield(L, -1, "version");
  const char *v = lua_tostring(L, -1);
  int ok = v && !strncmp(v, "LuaJIT 2.1.", 11);
  lua_pop(L, 2);
  if (!ok) return "not LuaJIT 2.1";
  const void *g = LH_RD(const void *, L, LJ_L_GLREF);
  if (!g || (lua_Alloc)LH_RD(void *, g, 0) != f || LH_RD(void *, g, 8) != ud)
    return "global_State is not where LuaJIT 2.1 (GC64) keeps it";
  if (LH_RD(int32_t, g, LJ_G_VMSTATE) != LJ_VMST_C) return "vmstate is not at the known offset";
  if (LH_RD(lua_State *, g, LJ_G_CURL) != L) return "cur_L is not at the known offset";
  lua_Debug ar;
  if (!lua_getstack(L, 0, &ar)) return "no frame";
  int idx = ar.i_ci & 0xffff;
  const uint64_t *stack = LH_RD(const uint64_t *, L, LJ_L_STACK);
  lua_getinfo(L, "f", &ar);
  const void *fn = lua_topointer(L, -1);
  lua_CFunction cf = lua_tocfunction(L, -1);
  lua_pop(L, 1);
  if (idx < 1 || (const void *)(uintptr_t)(stack[idx - 1] & LJ_GCMASK) != fn)
    return "frame layout is not GC64";
  if (((const uint8_t *)fn)[LJ_FN_FFID] != 1 || LH_RD(lua_CFunction, fn, LJ_FN_CF) != cf)
    return "C function layout differs";
  if (((const uint8_t *)fn)[LJ_GCT] != LJ_GCT_FUNC) return "GC header layout differs";
  if (LH_RD(const uint64_t *, L, LJ_L_BASE) - 1 != stack + idx)
    return "lua_State.base is not at the known offset";
  const char *why = lh_verify_frames(L, stack);
  if (why) return why;
  lh.g = g;
  lua_State *m = LH_RD(lua_State *, g, LJ_G_MAINTH);
  if (!m) return "no main thread";
  lh.L = m;
#else
  if (lua_version(L) != 504) return "not Lua 5.4";
  const void *g = LH_RD(const void *, L, L54_L_G);
  if (!g || (lua_Alloc)LH_RD(void *, g, 0) != f || LH_RD(void *, g, 8) != ud)
    return "global_State is not where Lua 5.4 keeps it";
  if (LH_RD(const void *, g, L54_G_REG) != lua_topointer(L, LUA_REGISTRYINDEX))
    return "registry is not at the known offset";
  if (LH_RD(uint8_t, g, L54_G_GCSTATE) > 8 || LH_RD(uint8_t, g, L54_G_GCSTOPEM) != 0)
    return "GC state is not at the known offset";
  lua_Debug ar;
  if (!lua_getstack(L, 0, &ar) || (const void *)ar.i_ci != LH_RD(const void *, L, L54_L_CI))
    return "CallInfo is not at the known offset";
  const uint8_t *func = LH_RD(const uint8_t *, ar.i_ci, L54_CI_FUNC);
  lua_getinfo(L, "f", &ar);
  lua_CFunction cf = lua_tocfunction(L, -1);
  const void *fp = lua_topointer(L, -1);
  lua_pop(L, 1);
  int tag = func[L54_TV_TAG];
  if (!((tag == L54_VLCF && LH_RD(lua_CFunction, func, 0) == cf) ||
        (tag == L54_VCCL && LH_RD(const void *, func, 0) == fp &&
         LH_RD(lua_CFunction, fp, L54_CCL_F) == cf)))
    return "function values are not laid out as in Lua 5.4";
  if (luaL_loadstring(L, "return") == LUA_OK) {  /* a Lua closure and its Proto */
    const uint8_t *cl = lua_topointer(L, -1);
    const uint8_t *pr = LH_RD(const uint8_t *, cl, L54_LCL_P);
    lua_pop(L, 1);
    if (!pr || pr[L54_TV_TAG] != L54_VPROTO) return "LClosure.p is not at the known offset";
  } else lua_pop(L, 1);
  lh.g = g;
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lh.L = lua_tothread(L, -1);
  lua_pop(L, 1);
  /* coroutine.resume and the function behind coroutine.wrap */
  lua_getglobal(L, "coroutine");
  if (lua_istable(L, -1)) {
    lua_getfield(L, -1, "resume");
    lh.coresume = lua_tocfunction(L, -1);
    lua_getfield(L, -2, "wrap");
    lua_pushcfunction(L, lh_verify_dummy);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK) lh.auxwrap = lua_tocfunction(L, -1);
    lua_pop(L, 3);
  } else lua_pop(L, 1);
#endif
  Dl_info di;
  if (!dladdr((void *)lua_gettop, &di)) return "cannot locate the VM";
  lh.vm_base = di.dli_fbase;
  if (dladdr((void *)lh_alloc, &di)) lh.self_base = di.dli_fbase;
  return NULL;
}

/* -- Sessions ------------------------------------------------------------------ */

/* on_stop of a tape file: close it. */
static int lh_fd_close(void *arg) { return close((int)(intptr_t)arg) ? -1 : 0; }

/* Fresh intern tables for a session; 0 or -1 when out of memory. */
static int lh_tables(void)
{
  if (!lh.loc) {
    lh.loc = mmap(NULL, LH_LOCS * sizeof(LhLoc), PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    lh.arena = mmap(NULL, LH_ARENA, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (lh.loc == MAP_FAILED || lh.arena == MAP_FAILED) { lh.loc = NULL; return -1; }
  } else {
    memset(lh.loc, 0, LH_LOCS * sizeof(LhLoc));
  }
#ifdef LH_JIT
  if (!lh.tstart) {
    void *p = mmap(NULL, LH_MAXTRACE * sizeof(*lh.tstart), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    lh.tstart = p;
  } else memset(lh.tstart, 0, LH_MAXTRACE * sizeof(*lh.tstart));
#endif
  if (!lh.fc) {
    void *p = mmap(NULL, sizeof(LhFrame) << LH_FC_BITS, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    lh.fc = p;
  }
  lh.gen++;                             /* ids of the last session are gone */
  lh.nloc = 0;
  lh.arena_used = 0;
  memset(lh.ccache, 0, sizeof(lh.ccache));
  lh.internal_id = 0;
  lh.internal_id = lh_intern(HEAPTAPE_LOC_INTERNAL, NULL, 0, 0, NULL);
  return 0;
}

/* Auto-stop thread: stop the tape after the session's duration. */
static void *lh_timer(void *arg)
{
  struct timespec *at = arg, when = *at;
  free(at);
  pthread_mutex_lock(&lh.tmu);
  int rc = 0;
  while (!lh.timer_quit && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&lh.tcv, &lh.tmu, &when);
  if (!lh.timer_quit && lh.own_tape) heaptape_stop();
  pthread_mutex_unlock(&lh.tmu);
  return NULL;
}

/* Start the auto-stop timer for secs seconds; 0 if started. */
static int lh_timer_start(double secs)
{
  struct timespec *at = malloc(sizeof(*at));
  if (!at) return -1;
  clock_gettime(CLOCK_REALTIME, at);
  double whole = (double)(time_t)secs;
  at->tv_sec += (time_t)secs;
  at->tv_nsec += (long)((secs - whole) * 1e9);
  if (at->tv_nsec >= 1000000000L) { at->tv_sec++; at->tv_nsec -= 1000000000L; }
  lh.timer_quit = 0;
  if (pthread_create(&lh.timer, NULL, lh_timer, at)) { free(at); return -1; }
  lh.has_timer = 1;
  return 0;
}

/* Ask the timer to leave and wait for it. */
static void lh_timer_stop(void)
{
  if (!lh.has_timer) return;
  pthread_mutex_lock(&lh.tmu);
  lh.timer_quit = 1;
  pthread_cond_signal(&lh.tcv);
  pthread_mutex_unlock(&lh.tmu);
  pthread_join(lh.timer, NULL);
  lh.has_timer = 0;
}

#ifdef LH_JIT
/* jit.attach "trace" callback: remember where trace tr starts. */
static int lh_trace_cb(lua_State *L)
{
  const char *what = lua_tostring(L, 1);
  lua_Integer tr = lua_tointeger(L, 2);
  if (!what || strcmp(what, "start") || tr < 0 || tr >= LH_MAXTRACE || !lh.tstart) return 0;
  lua_pushvalue(L, lua_upvalueindex(1));   /* jit.util.funcinfo */
  lua_pushvalue(L, 3);
  lua_pushvalue(L, 4);
  lh.tstart[tr].id = 0;                   /* a new trace under that number */
  if (lua_pcall(L, 2, 1, 0) || !lua_istable(L, -1)) return 0;
  lua_getfield(L, -1, "source");
  lua_getfield(L, -2, "currentline");
  const char *src = lua_tostring(L, -2);
  if (src) {
    char buf[LUA_IDSIZE + 8];
    snprintf(buf, sizeof(buf), "%s", src[0] == '@' || src[0] == '=' ? src + 1 : src);
    lh.tstart[tr].file = lh_arena_copy(buf);
    lh.tstart[tr].line = (uint32_t)lua_tointeger(L, -1);
  }
  return 0;
}

/* Attach (on = 1) or detach the trace callback through jit.attach. */
static void lh_jit_attach(lua_State *L, int on)
{
  if (on == lh.jit_attached) return;
  int top = lua_gettop(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "jit.util");
  if (lua_pcall(L, 1, 1, 0) || !lua_istable(L, -1)) { lua_settop(L, top); return; }
  lua_getglobal(L, "jit");
  if (!lua_istable(L, -1)) { lua_settop(L, top); return; }
  lua_getfield(L, -1, "attach");
  lua_getfield(L, LUA_REGISTRYINDEX, "heaptape.tracecb");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_getfield(L, top + 1, "funcinfo");
    lua_pushcclosure(L, lh_trace_cb, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "heaptape.tracecb");
  }
  if (on) { lua_pushliteral(L, "trace"); lua_pcall(L, 2, 0, 0); }
  else lua_pcall(L, 1, 0, 0);
  lh.jit_attached = on;
  lua_settop(L, top);
}
#endif

/* Install our allocator on L's state. */
static void lh_install(lua_State *L)
{
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  if (f == lh_alloc) return;
  lh.orig = f;
  lh.orig_ud = ud;
  lua_setallocf(L, lh_alloc, &lh);
  lh.installed = 1;
}

/* End the session: timer, trace callback, tape, allocator. Returns the stop rc. */
static int lh_finish(lua_State *L, int closing)
{
  lh_timer_stop();
#ifdef LH_JIT
  if (!closing) lh_jit_attach(L, 0);
#endif
  int rc = HEAPTAPE_OK;
  lh.active = 0;
  if (lh.check) {
    char buf[160];
    int k = snprintf(buf, sizeof(buf), "heaptape: lua walk check: %llu events, %llu mismatches\n",
                     (unsigned long long)lh.events, (unsigned long long)lh.mismatches);
    if (write(2, buf, (size_t)k) < 0) lh.check = 0;
  }
  if (lh.own_tape) {
    rc = heaptape_stop();
    if (rc == HEAPTAPE_E_NOTRUNNING) rc = HEAPTAPE_OK;  /* the timer stopped it */
    lh.own_tape = 0;
  }
  void *ud;
  if (lh.installed && lua_getallocf(L, &ud) == lh_alloc) lua_setallocf(L, lh.orig, lh.orig_ud);
  lh.installed = 0;
  (void)closing;
  return rc;
}

/* Return nil, message, errno (the memprof failure convention). */
static int lh_fail(lua_State *L, const char *msg, int err)
{
  lua_pushnil(L);
  lua_pushstring(L, msg);
  lua_pushinteger(L, err);
  return 3;
}

/* Begin a session on L: into fname (own tape) or attached to a running one. */
static int lh_begin(lua_State *L, const char *fname, double secs, int attach)
{
  if (lh.active || (!attach && heaptape_is_running()))
    return lh_fail(L, "profiler is running already", EALREADY);
  const char *why = lh_verify(L);
  if (why) {
    char msg[256];
    snprintf(msg, sizeof(msg), "heaptape: unsupported VM build (%s); "
             "this module knows " LH_FRONTEND " from Debian 12", why);
    return lh_fail(L, msg, ENOTSUP);
  }
  if (lh_tables()) return lh_fail(L, "out of memory", ENOMEM);
  if (!attach) {
    int fd = open(fname, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      int e = errno;
      char msg[512];
      snprintf(msg, sizeof(msg), "%s: %s", fname, strerror(e));
      return lh_fail(L, msg, e);
    }
    struct heaptape_options o = HEAPTAPE_OPTIONS_INIT;
    o.writer = heaptape_fd_writer;
    o.on_stop = lh_fd_close;
    o.arg = (void *)(intptr_t)fd;
    o.unwind = HEAPTAPE_UNWIND_NONE;
    o.frontend = LH_FRONTEND;
    int rc = heaptape_start(&o);
    if (rc) {
      close(fd);
      return lh_fail(L, rc == HEAPTAPE_E_RUNNING ? "profiler is running already"
                        : heaptape_strerror(rc), rc == HEAPTAPE_E_RUNNING ? EALREADY : EIO);
    }
    lh.own_tape = 1;
    if (lh_tables()) { heaptape_stop(); lh.own_tape = 0; return lh_fail(L, "out of memory", ENOMEM); }
  } else {
    if (!heaptape_is_running()) return lh_fail(L, "no recording to attach to", EINVAL);
    lh.own_tape = 0;
  }
  lh.events = 0;
  lh.mismatches = 0;
  const char *chk = getenv("HEAPTAPE_LUA_CHECK"), *fr = getenv("HEAPTAPE_FRAMES");
  lh.check = chk && *chk && strcmp(chk, "0");
  long nfr = fr ? strtol(fr, NULL, 10) : 0;   /* `heaptape record --frames N` */
  lh.maxdepth = nfr >= 1 && nfr < LH_MAXDEPTH ? (int)nfr : LH_MAXDEPTH;
  lh.active = 1;
#ifdef LH_JIT
  lh_jit_attach(L, 1);
#endif
  lh_install(L);
  if (secs > 0 && lh.own_tape) lh_timer_start(secs);
  lua_pushboolean(L, 1);
  return 1;
}

/* -- Lua API --------------------------------------------------------------------- */

/* heaptape.start(fname [, seconds | {seconds = N}]) -> true | nil, msg, errno */
static int lh_start(lua_State *L)
{
  const char *fname = luaL_checkstring(L, 1);
  double secs = 0;
  if (lua_type(L, 2) == LUA_TNUMBER) secs = lua_tonumber(L, 2);
  else if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "seconds");
    secs = lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  return lh_begin(L, fname, secs, 0);
}

/* heaptape.stop() -> true | nil, msg, errno */
static int lh_stop(lua_State *L)
{
  if (!lh.active) return lh_fail(L, "profiler is not running", EINVAL);
  int was = heaptape_is_running() || !lh.own_tape;
  int rc = lh_finish(L, 0);
  if (!was) return lh_fail(L, "profiler is not running (its duration ran out)", EINVAL);
  if (rc) return lh_fail(L, heaptape_strerror(rc), EIO);
  lua_pushboolean(L, 1);
  return 1;
}

/* heaptape.is_running() -> boolean */
static int lh_is_running(lua_State *L)
{
  lua_pushboolean(L, lh.active && heaptape_is_running());
  return 1;
}

/* heaptape._record(): start for `heaptape record --lua`, then the user's LUA_INIT. */
static int lh_record(lua_State *L)
{
  if (!lh.active) {
    const char *out = getenv("HEAPTAPE_LUA_OUTPUT");
    int r = heaptape_is_running() ? lh_begin(L, NULL, 0, 1)
          : out ? lh_begin(L, out, 0, 0) : 0;
    if (r && lua_isnil(L, -r)) {
      fprintf(stderr, "heaptape: cannot record Lua: %s\n", lua_tostring(L, -r + 1));
    }
  }
  const char *init = NULL;
#ifndef LH_JIT
  init = getenv("HEAPTAPE_LUA_INIT_5_4");
#endif
  if (!init) init = getenv("HEAPTAPE_LUA_INIT");
  if (!init || !*init) return 0;
  int st = init[0] == '@' ? luaL_loadfile(L, init + 1)
         : luaL_loadbuffer(L, init, strlen(init), "=LUA_INIT");
  if (st) return lua_error(L);
  lua_call(L, 0, 0);
  return 0;
}

/* Whether L belongs to the profiled state. */
static int lh_same(lua_State *L)
{
#ifdef LH_JIT
  return LH_RD(const void *, L, LJ_L_GLREF) == lh.g;
#else
  return LH_RD(const void *, L, L54_L_G) == lh.g;
#endif
}

/* __gc of the registry sentinel: the state closes while recording. */
static int lh_sentinel_gc(lua_State *L)
{
  if (lh.active && lh.g && lh_same(L)) lh_finish(L, 1);
  return 0;
}

/* -- Universe dump ----------------------------------------------------------------
** A text file, one record a line, fields separated by tabs (docs/LUA.md):
**   HTLUADUMP 1 <vm>              header
**   O <type> <addr> <bytes> <metatable addr or 0> [<string preview>]
**   A <index> <type> <addr>       array part slot of the last O (a table)
**   H <ktype> <key> <vtype> <val> hash part entry of the last O
**   R <type> <addr>               other reference of the last O
**   E <objects>                   end
** Values that are not objects are written as their type and value
** (number 1.5, boolean true, lightuserdata 0x...).
*/

#define LH_P(p) ((unsigned long)(uintptr_t)(p))  /* pointer as written */

#ifdef LH_JIT
#define LH_UPVAL_SIZE 48   /* GCupval */
#else
#define LH_UPVAL_SIZE 40   /* UpVal */
#endif

/* Pointer set of the objects already queued. */
typedef struct LhSet {
  const void **slot;       /* open addressing, NULL = empty */
  size_t mask;             /* slots - 1 */
  size_t n;                /* used */
} LhSet;

/* Add p; 1 if it was new, 0 if present, -1 when out of memory. */
static int lh_set_add(LhSet *s, const void *p)
{
  if (s->n * 2 >= s->mask) {
    size_t nm = s->mask ? s->mask * 2 + 1 : 1023;
    const void **ns = calloc(nm + 1, sizeof(*ns));
    if (!ns) return -1;
    for (size_t i = 0; s->slot && i <= s->mask; i++) {
      if (!s->slot[i]) continue;
      size_t j = ((uintptr_t)s->slot[i] * 0x9e3779b97f4a7c15ULL >> 20) & nm;
      while (ns[j]) j = (j + 1) & nm;
      ns[j] = s->slot[i];
    }
    free(s->slot);
    s->slot = ns;
    s->mask = nm;
  }
  size_t j = ((uintptr_t)p * 0x9e3779b97f4a7c15ULL >> 20) & s->mask;
  while (s->slot[j]) { if (s->slot[j] == p) return 0; j = (j + 1) & s->mask; }
  s->slot[j] = p;
  s->n++;
  return 1;
}

/* A dump in progress. */
typedef struct LhDump {
  FILE *f;                 /* output */
  LhSet seen;              /* queued objects and upvalues */
  int q;                   /* stack index of the queue table */
  lua_Integer head, tail;  /* queue bounds (next to take, next free) */
  uint64_t objects;        /* O records written */
} LhDump;

/* The dump's name of Lua type t. */
static const char *lh_tname(int t)
{
  switch (t) {
  case LUA_TSTRING: return "LJ_TSTR";
  case LUA_TTABLE: return "LJ_TTAB";
  case LUA_TFUNCTION: return "LJ_TFUNC";
  case LUA_TTHREAD: return "LJ_TTHREAD";
  case LUA_TUSERDATA: return "LJ_TUDATA";
  case 10: return "LJ_TCDATA";
  case LUA_TNUMBER: return "number";
  case LUA_TBOOLEAN: return "boolean";
  case LUA_TLIGHTUSERDATA: return "lightuserdata";
  default: return "nil";
  }
}

/* Is the value at idx a garbage-collected object? */
static int lh_isobj(lua_State *L, int idx)
{
  int t = lua_type(L, idx);
  if (t == LUA_TFUNCTION) {
#ifndef LH_JIT
    if (lua_iscfunction(L, idx)) {      /* a light C function is no object */
      if (!lua_getupvalue(L, idx, 1)) return 0;
      lua_pop(L, 1);
    }
#endif
    return 1;
  }
  return t == LUA_TSTRING || t == LUA_TTABLE || t == LUA_TTHREAD ||
         t == LUA_TUSERDATA || t == 10;
}

/* Write value idx as "<type>\t<addr or value>" and queue it if it is an object. */
static void lh_dval(lua_State *L, LhDump *d, int idx)
{
  idx = lua_absindex(L, idx);
  int t = lua_type(L, idx);
  if (lh_isobj(L, idx)) {
    const void *p = lua_topointer(L, idx);
    fprintf(d->f, "%s\t0x%lx", lh_tname(t), LH_P(p));
    if (lh_set_add(&d->seen, p) == 1) {
      lua_pushvalue(L, idx);
      lua_rawseti(L, d->q, d->tail++);
    }
  } else if (t == LUA_TNUMBER) {
    fprintf(d->f, "number\t%.17g", lua_tonumber(L, idx));
  } else if (t == LUA_TBOOLEAN) {
    fprintf(d->f, "boolean\t%s", lua_toboolean(L, idx) ? "true" : "false");
  } else if (t == LUA_TLIGHTUSERDATA || t == LUA_TFUNCTION) {
    fprintf(d->f, "%s\t0x%lx", t == LUA_TFUNCTION ? "cfunction" : "lightuserdata",
            LH_P(lua_topointer(L, idx)));
  } else {
    fprintf(d->f, "nil\t0");
  }
}

/* Size in bytes of the object at idx, from the VM's layouts (docs/LUA.md). */
static size_t lh_dsize(lua_State *L, int idx)
{
  const void *p = lua_topointer(L, idx);
  switch (lua_type(L, idx)) {
  case LUA_TSTRING: { size_t n; lua_tolstring(L, idx, &n); return 24 + n + 1; }
#ifdef LH_JIT
  case LUA_TTABLE: {
    uint32_t asize = LH_RD(uint32_t, p, LJ_TAB_ASIZE), hmask = LH_RD(uint32_t, p, LJ_TAB_HMASK);
    return 64 + (size_t)asize * 8 + (hmask ? ((size_t)hmask + 1) * 24 : 0);
  }
  case LUA_TFUNCTION: {
    int n = 0;
    while (lua_getupvalue(L, idx, n + 1)) { lua_pop(L, 1); n++; }
    return lua_iscfunction(L, idx) ? 48 + 8 * (size_t)n : 40 + 8 * (size_t)n;
  }
  case LUA_TTHREAD: return 104 + (size_t)LH_RD(uint32_t, p, LJ_L_STACKSIZE) * 8;
  case LUA_TUSERDATA: return 40 + lua_objlen(L, idx);
  case 10: {                           /* cdata: header + ffi.sizeof */
    size_t n = 16;
    lua_getglobal(L, "require");
    lua_pushliteral(L, "ffi");
    if (!lua_pcall(L, 1, 1, 0)) {
      lua_getfield(L, -1, "sizeof");
      lua_pushvalue(L, idx);
      if (!lua_pcall(L, 1, 1, 0)) n += (size_t)lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return n;
  }
#else
  case LUA_TTABLE: {
    uint32_t alimit = LH_RD(uint32_t, p, L54_TAB_ALIMIT);
    int lsize = LH_RD(uint8_t, p, L54_TAB_LSIZE);
    int dummy = LH_RD(const void *, p, 32) == NULL;   /* lastfree */
    return 56 + (size_t)alimit * 16 + (dummy ? 0 : ((size_t)1 << lsize) * 24);
  }
  case LUA_TFUNCTION: {
    int n = 0;
    while (lua_getupvalue(L, idx, n + 1)) { lua_pop(L, 1); n++; }
    return lua_iscfunction(L, idx) ? 32 + 16 * (size_t)n : 32 + 8 * (size_t)n;
  }
  case LUA_TTHREAD: {
    const char *lo = LH_RD(const char *, p, L54_L_STACK), *hi = LH_RD(const char *, p, L54_L_STKLAST);
    return 200 + (size_t)(hi - lo) + 5 * 16;
  }
  case LUA_TUSERDATA: {
    int nuv = 0;
    while (lua_getiuservalue(L, idx, nuv + 1) != LUA_TNONE) { lua_pop(L, 1); nuv++; }
    lua_pop(L, 1);
    return (nuv ? 40 + 16 * (size_t)nuv : 32) + lua_rawlen(L, idx);
  }
#endif
  default: return 0;
  }
}

/* Number of array slots of table idx (the VM's array part). */
static lua_Integer lh_asize(lua_State *L, int idx)
{
  const void *p = lua_topointer(L, idx);
#ifdef LH_JIT
  return (lua_Integer)LH_RD(uint32_t, p, LJ_TAB_ASIZE) - 1;  /* slot 0 unused by Lua */
#else
  return (lua_Integer)LH_RD(uint32_t, p, L54_TAB_ALIMIT);
#endif
}

/* Write the links of the thread th (its frames' functions and locals). */
static void lh_dthread(lua_State *L, LhDump *d, lua_State *th)
{
  lua_Debug ar;
  for (int level = 0; lua_getstack(th, level, &ar); level++) {
    if (!lua_checkstack(L, 4) || (th != L && !lua_checkstack(th, 4))) break;
    if (lua_getinfo(th, "f", &ar)) {
      if (th != L) lua_xmove(th, L, 1);
      fputs("R\t", d->f); lh_dval(L, d, -1); fputc('\n', d->f);
      lua_pop(L, 1);
    }
    const char *name;
    for (int i = 1; (name = lua_getlocal(th, &ar, i)); i++) {
      if (th != L) lua_xmove(th, L, 1);
      if (lh_isobj(L, -1)) { fputs("R\t", d->f); lh_dval(L, d, -1); fputc('\n', d->f); }
      lua_pop(L, 1);
    }
  }
}

/* Write the O record and the links of the object on top of the stack. */
static void lh_dobj(lua_State *L, LhDump *d)
{
  int o = lua_gettop(L), t = lua_type(L, o);
  const void *mt = NULL;
  if (lua_getmetatable(L, o)) { mt = lua_topointer(L, -1); }
  fprintf(d->f, "O\t%s\t0x%lx\t%zu\t0x%lx", lh_tname(t), LH_P(lua_topointer(L, o)),
          lh_dsize(L, o), LH_P(mt));
  if (t == LUA_TSTRING) {
    size_t n;
    const char *s = lua_tolstring(L, o, &n);
    fputc('\t', d->f);
    for (size_t i = 0; i < n && i < 40; i++)
      fputc(s[i] >= 32 && s[i] < 127 && s[i] != '\\' ? s[i] : '.', d->f);
  }
  fputc('\n', d->f);
  d->objects++;
  if (mt) {                             /* queue the metatable */
    if (lh_set_add(&d->seen, mt) == 1) lua_rawseti(L, d->q, d->tail++);
    else lua_pop(L, 1);
  }
  if (!lua_checkstack(L, 8)) return;
  if (t == LUA_TTABLE) {
    lua_Integer asize = lh_asize(L, o);
    lua_pushnil(L);
    while (lua_next(L, o)) {
      int isint = lua_type(L, -2) == LUA_TNUMBER && lua_isinteger(L, -2);
      lua_Integer k = isint ? lua_tointeger(L, -2) : 0;
      if (isint && k >= 1 && k <= asize) {
        fprintf(d->f, "A\t%lld\t", (long long)k);
      } else {
        fputs("H\t", d->f); lh_dval(L, d, -2); fputc('\t', d->f);
      }
      lh_dval(L, d, -1);
      fputc('\n', d->f);
      lua_pop(L, 1);
    }
  } else if (t == LUA_TFUNCTION) {
    int lua_fn = !lua_iscfunction(L, o);
    for (int i = 1; lua_getupvalue(L, o, i); i++) {   /* the function's links */
      if (lua_fn) fprintf(d->f, "R\tLJ_TUPVAL\t0x%lx\n", LH_P(lua_upvalueid(L, o, i)));
      else if (lh_isobj(L, -1)) { fputs("R\t", d->f); lh_dval(L, d, -1); fputc('\n', d->f); }
      lua_pop(L, 1);
    }
    for (int i = 1; lua_fn && lua_getupvalue(L, o, i); i++) {  /* new upvalue objects */
      void *id = lua_upvalueid(L, o, i);
      if (lh_set_add(&d->seen, id) == 1) {
        fprintf(d->f, "O\tLJ_TUPVAL\t0x%lx\t%d\t0x0\n", LH_P(id), LH_UPVAL_SIZE);
        d->objects++;
        if (lh_isobj(L, -1)) { fputs("R\t", d->f); lh_dval(L, d, -1); fputc('\n', d->f); }
      }
      lua_pop(L, 1);
    }
#ifdef LH_JIT
    lua_getfenv(L, o);
    if (lua_istable(L, -1)) { fputs("R\t", d->f); lh_dval(L, d, -1); fputc('\n', d->f); }
    lua_pop(L, 1);
#endif
  } else if (t == LUA_TTHREAD) {
    lh_dthread(L, d, lua_tothread(L, o));
  } else if (t == LUA_TUSERDATA) {
#ifdef LH_JIT
    lua_getfenv(L, o);
    if (lh_isobj(L, -1)) { fputs("R\t", d->f); lh_dval(L, d, -1); fputc('\n', d->f); }
    lua_pop(L, 1);
#else
    for (int i = 1; lua_getiuservalue(L, o, i) != LUA_TNONE; i++) {
      if (lh_isobj(L, -1)) { fputs("R\t", d->f); lh_dval(L, d, -1); fputc('\n', d->f); }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
#endif
  }
  lua_settop(L, o);
}

/* heaptape.dump(fname) -> true | nil, msg, errno */
static int lh_dump(lua_State *L)
{
  const char *fname = luaL_checkstring(L, 1);
  FILE *f = fopen(fname, "w");
  if (!f) {
    int e = errno;
    char msg[512];
    snprintf(msg, sizeof(msg), "%s: %s", fname, strerror(e));
    return lh_fail(L, msg, e);
  }
  int running = lua_gc(L, LUA_GCISRUNNING, 0);
  lua_gc(L, LUA_GCSTOP, 0);             /* no collection while objects are walked */
  LhDump d = { .f = f, .head = 1, .tail = 1 };
  lua_settop(L, 1);
  lua_newtable(L);
  d.q = lua_gettop(L);
  lh_set_add(&d.seen, lua_topointer(L, d.q));   /* the queue is not the program's */
  fprintf(f, "HTLUADUMP\t1\t%s\n", LH_FRONTEND);
  /* roots: the registry (globals, loaded modules, main thread), this thread */
  lua_pushvalue(L, LUA_REGISTRYINDEX);
  lh_set_add(&d.seen, lua_topointer(L, -1));
  lua_rawseti(L, d.q, d.tail++);
  lua_pushthread(L);
  if (lh_set_add(&d.seen, lua_topointer(L, -1)) == 1) lua_rawseti(L, d.q, d.tail++);
  else lua_pop(L, 1);
  while (d.head < d.tail) {
    lua_rawgeti(L, d.q, d.head);
    lua_pushnil(L);
    lua_rawseti(L, d.q, d.head++);       /* the queue keeps no finished object */
    lh_dobj(L, &d);
    lua_settop(L, d.q);
  }
  fprintf(f, "E\t%llu\n", (unsigned long long)d.objects);
  free(d.seen.slot);
  lua_settop(L, 1);
  if (running) lua_gc(L, LUA_GCRESTART, 0);
  if (fclose(f)) return lh_fail(L, strerror(errno), errno);
  lua_pushboolean(L, 1);
  return 1;
}

/* -- Module ------------------------------------------------------------------------ */

static const luaL_Reg lh_funcs[] = {
  { "start", lh_start },
  { "stop", lh_stop },
  { "is_running", lh_is_running },
  { "dump", lh_dump },
  { "_record", lh_record },
  { NULL, NULL }
};

/* Set the functions of lh_funcs into the table on top. */
static void lh_setfuncs(lua_State *L)
{
  for (const luaL_Reg *r = lh_funcs; r->name; r++) {
    lua_pushcfunction(L, r->func);
    lua_setfield(L, -2, r->name);
  }
}

/* require "heaptape": the module table; installs misc.memprof where absent. */
LH_API int luaopen_heaptape(lua_State *L)
{
  lua_newtable(L);
  lh_setfuncs(L);
  lua_pushliteral(L, LH_FRONTEND);
  lua_setfield(L, -2, "vm");
  /* a sentinel whose __gc ends a session when the state closes */
  lua_newuserdata(L, 1);
  lua_newtable(L);
  lua_pushcfunction(L, lh_sentinel_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, "heaptape.sentinel");
  /* misc.memprof for scripts written for the LuaJIT profiler */
  lua_getglobal(L, "misc");
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setglobal(L, "misc");
  }
  lua_getfield(L, -1, "memprof");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lh_setfuncs(L);
    lua_setfield(L, -2, "memprof");
  } else lua_pop(L, 1);
  lua_pop(L, 1);
  return 1;
}

/* heaptape -- the Lua module's internal interface between its files.
** lheaptape.c (sessions, allocator wrapper, Lua API) and lh_dump.c (the
** universe dump) are common; one VM file implements the lh_vm_* calls below:
** lh_vm54.c for Lua 5.4, lh_vmjit.c for LuaJIT 2.1 (the Makefile picks it,
** as libbacktrace picks its variants by file). */
#ifndef LH_H
#define LH_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include <lua.h>
#include <lauxlib.h>

#include "../include/heaptape.h"

#if LUA_VERSION_NUM < 502
/* Lua 5.2+ calls that the Lua 5.1 API (LuaJIT) lacks. */
#define lua_absindex(L, i) ((i) > 0 || (i) <= LUA_REGISTRYINDEX ? (i) : lua_gettop(L) + (i) + 1)
#define lua_isinteger(L, i) (lua_tonumber(L, i) == (lua_Number)lua_tointeger(L, i))
#endif

#define LH_API __attribute__((visibility("default")))
#define LH_MAXDEPTH 64            /* Lua frames kept per event at most (innermost) */
#define LH_MAXTHREADS 32          /* nested coroutines followed per event */
#define LH_LOCS (1u << 16)        /* location intern slots */
#define LH_ARENA (8u << 20)       /* bytes for interned names */
#define LH_CCACHE 512             /* C function -> location cache entries */
#define LH_FC_BITS 13             /* frame cache: 2^13 entries, 2-way */
#define LH_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Read a T at byte offset off of p (the VM layouts of the VM files). */
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

/* The one profiled VM of the process (what the VM files keep is their own). */
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
  int maxdepth;            /* frames kept per event: the recording's, at most LH_MAXDEPTH */
  uint64_t mismatches;     /* walks that differed from the reference */
  struct { lua_CFunction f; uint64_t id; } ccache[LH_CCACHE]; /* 0 id: builtin */
  pthread_t timer;         /* auto-stop thread */
  int has_timer;           /* timer thread exists */
  int timer_quit;          /* asks the timer to leave */
  pthread_mutex_t tmu;     /* guards timer_quit */
  pthread_cond_t tcv;      /* wakes the timer */
  uint64_t events;         /* events reported this session */
} LhProf;

extern LhProf lh;

/* -- Locations (lheaptape.c) ---------------------------------------------- */

/* Copy s into the name arena; NULL when full. */
const char *lh_arena_copy(const char *s);
/* Id of (kind, file, line, aux), declaring it on first use; name may be NULL. */
uint64_t lh_intern(int kind, const char *file, uint32_t line, uint64_t aux,
                   const char *name);
/* Location of a C function not yet in the cache (see lh_cfunc). */
uint64_t lh_cfunc_miss(lua_CFunction f);
/* Return nil, message, errno (the memprof failure convention). */
int lh_fail(lua_State *L, const char *msg, int err);

/* Location of a C function: 0 for a builtin of the VM (charged to its caller). */
static inline uint64_t lh_cfunc(lua_CFunction f)
{
  uint32_t k = (uint32_t)(((uintptr_t)f >> 4) % LH_CCACHE);
  if (lh.ccache[k].f == f) return lh.ccache[k].id;
  return lh_cfunc_miss(f);
}

/* Location of the Lua frame described by ar (after lua_getinfo "Sl"). */
static inline uint64_t lh_lua(const lua_Debug *ar)
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
static inline void lh_fc_put(const void *pc, const void *proto, uint64_t id)
{
  LhFrame *e = &lh.fc[lh_fc_slot(pc, proto)];
  if (e[0].gen == lh.gen && e[0].pc != pc) { e[1] = e[0]; }
  e[0].pc = pc; e[0].proto = proto; e[0].gen = lh.gen; e[0].id = id;
}

/* -- The universe dump (lh_dump.c) ------------------------------------------ */

/* heaptape.dump(fname) -> true | nil, msg, errno */
int lh_dump(lua_State *L);

/* -- The VM interface (lh_vm54.c | lh_vmjit.c) ----------------------------- */

extern const char lh_vm_frontend[];  /* the tape's frontend name: "lua5.4", "luajit" */
extern const char *const lh_vm_init_var; /* LUA_INIT variable read before
                                    ** HEAPTAPE_LUA_INIT ("..._5_4"), or NULL */
extern const int lh_vm_upval_size;   /* bytes of an upvalue object (the dump) */

/* Check the layout facts against the running VM; NULL if they hold, else why.
** On success lh.g and lh.L are set. */
const char *lh_vm_verify(lua_State *L);
/* Per-session tables of the VM file; 0, or -1 when out of memory. */
int lh_vm_tables(void);
/* A session begins (on = 1) or ends (0) on L, which is still open. */
void lh_vm_session(lua_State *L, int on);
/* The running coroutine's stack, innermost first, at most lh.maxdepth ids
** (at least one: INTERNAL when there is no Lua frame); ref = 1 walks
** through the debug API (HEAPTAPE_LUA_CHECK's reference). */
int lh_vm_where(uint64_t *ids, int ref);
/* Whether the block at p, about to be freed, is a function prototype. */
int lh_vm_is_proto(const void *p, size_t osize);
/* Whether L belongs to the profiled state. */
int lh_vm_same(lua_State *L);

/* The universe dump's view of objects (docs/LUA.md). */
/* Whether the function at idx is a value, not an object (a light C function). */
int lh_vm_light_cfunction(lua_State *L, int idx);
/* Bytes of the object at idx, from the VM's layouts. */
size_t lh_vm_size(lua_State *L, int idx);
/* Array slots of the table at idx (the VM's array part). */
lua_Integer lh_vm_asize(lua_State *L, int idx);
/* Push the i-th (from 1) reference a function or userdata at idx holds
** beside its upvalues (LuaJIT: its environment; Lua 5.4: a userdata's user
** values); 0 with nothing pushed when there is none. */
int lh_vm_extra_ref(lua_State *L, int idx, int i);

#endif

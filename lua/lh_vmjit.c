/* heaptape -- the Lua module's LuaJIT 2.1 file: the VM's layouts (GC64), the
** stack walk over the frame links, traces and VM states, the layout check,
** the trace-start callback, the dump's sizes. Implements the lh_vm_*
** interface of lh.h; lh_vm54.c is Lua 5.4's. */
#include <string.h>
#include <sys/mman.h>

#include "lh.h"

#define LH_MAXTRACE 65536         /* trace start table entries */

/* -- VM object layouts ------------------------------------------------------
** Facts about the LuaJIT 2.1 (GC64) build that the public API does not
** expose. lh_vm_verify() checks each of them against the running VM at
** start and the module refuses to record on a mismatch. See docs/LUA.md.
*/
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

const char lh_vm_frontend[] = "luajit";
const char *const lh_vm_init_var = NULL;
const int lh_vm_upval_size = 48;   /* GCupval */

/* What this file keeps of the profiled VM. */
static struct {
  struct { const char *file; uint32_t line; uint64_t id; } *tstart; /* trace start
                              ** locations, and their interned ids once known */
  int jit_attached;        /* jit.attach callback installed */
} vm;

/* -- Stack walks -------------------------------------------------------------
** A walk fills ids innermost first and returns how many. Builtins (C
** functions of the VM itself: fast functions, the standard library) are
** charged to their Lua caller; a builtin called in tail position is charged
** to the caller's caller, as LuaJIT's frame replacement does.
** The fast walk reads the frames directly (layouts verified at start); the
** reference walk goes through lua_getstack/lua_getinfo and is run beside
** the fast one when HEAPTAPE_LUA_CHECK is set (docs/LUA.md).
*/

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
int lh_vm_where(uint64_t *ids, int ref)
{
  int32_t vms = LH_RD(volatile int32_t, lh.g, LJ_G_VMSTATE);
  if (vms >= 0) {                       /* on trace vms */
    if (vms < LH_MAXTRACE && vm.tstart) {  /* interned once per trace, not per event */
      if (!vm.tstart[vms].id)
        vm.tstart[vms].id = lh_intern(HEAPTAPE_LOC_TRACE, vm.tstart[vms].file,
                                      vm.tstart[vms].line, (uint64_t)vms, NULL);
      ids[0] = vm.tstart[vms].id;
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
int lh_vm_is_proto(const void *p, size_t osize)
{
  return osize > LJ_GCT && LH_RD(uint8_t, p, LJ_GCT) == LJ_GCT_PROTO;
}

/* Whether L belongs to the profiled state. */
int lh_vm_same(lua_State *L) { return LH_RD(const void *, L, LJ_L_GLREF) == lh.g; }

/* -- Sessions ---------------------------------------------------------------- */

/* The trace start table, empty for a new session; 0 or -1. */
int lh_vm_tables(void)
{
  if (!vm.tstart) {
    void *p = mmap(NULL, LH_MAXTRACE * sizeof(*vm.tstart), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    vm.tstart = p;
  } else memset(vm.tstart, 0, LH_MAXTRACE * sizeof(*vm.tstart));
  return 0;
}

/* jit.attach "trace" callback: remember where trace tr starts. */
static int lh_trace_cb(lua_State *L)
{
  const char *what = lua_tostring(L, 1);
  lua_Integer tr = lua_tointeger(L, 2);
  if (!what || strcmp(what, "start") || tr < 0 || tr >= LH_MAXTRACE || !vm.tstart) return 0;
  lua_pushvalue(L, lua_upvalueindex(1));   /* jit.util.funcinfo */
  lua_pushvalue(L, 3);
  lua_pushvalue(L, 4);
  vm.tstart[tr].id = 0;                   /* a new trace under that number */
  if (lua_pcall(L, 2, 1, 0) || !lua_istable(L, -1)) return 0;
  lua_getfield(L, -1, "source");
  lua_getfield(L, -2, "currentline");
  const char *src = lua_tostring(L, -2);
  if (src) {
    char buf[LUA_IDSIZE + 8];
    snprintf(buf, sizeof(buf), "%s", src[0] == '@' || src[0] == '=' ? src + 1 : src);
    vm.tstart[tr].file = lh_arena_copy(buf);
    vm.tstart[tr].line = (uint32_t)lua_tointeger(L, -1);
  }
  return 0;
}

/* Attach (on = 1) or detach the trace callback through jit.attach. */
void lh_vm_session(lua_State *L, int on)
{
  if (on == vm.jit_attached) return;
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
  vm.jit_attached = on;
  lua_settop(L, top);
}

/* -- Verification of the VM layout ------------------------------------------ */

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
/* Check the layout facts against the running VM; NULL if fine, else why. */
const char *lh_vm_verify(lua_State *L)
{
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
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
  return NULL;
}

/* -- The dump's view of objects ------------------------------------------------ */

/* Every LuaJIT function is an object. */
int lh_vm_light_cfunction(lua_State *L, int idx) { (void)L; (void)idx; return 0; }

/* Size in bytes of the object at idx, from the VM's layouts (docs/LUA.md). */
size_t lh_vm_size(lua_State *L, int idx)
{
  const void *p = lua_topointer(L, idx);
  switch (lua_type(L, idx)) {
  case LUA_TSTRING: { size_t n; lua_tolstring(L, idx, &n); return 24 + n + 1; }
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
  default: return 0;
  }
}

/* Number of array slots of table idx (the VM's array part). */
lua_Integer lh_vm_asize(lua_State *L, int idx)
{
  /* slot 0 is unused by Lua */
  return (lua_Integer)LH_RD(uint32_t, lua_topointer(L, idx), LJ_TAB_ASIZE) - 1;
}

/* Push the environment of the function or userdata at idx (i = 1 only). */
int lh_vm_extra_ref(lua_State *L, int idx, int i)
{
  int t = lua_type(L, idx);
  if (i != 1 || (t != LUA_TFUNCTION && t != LUA_TUSERDATA)) return 0;
  lua_getfenv(L, idx);
  return 1;
}

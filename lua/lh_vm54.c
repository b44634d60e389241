/* heaptape -- the Lua module's Lua 5.4 file: the VM's layouts, the stack walk
** over CallInfo chains and coroutines, the layout check, the dump's sizes.
** Implements the lh_vm_* interface of lh.h; lh_vmjit.c is LuaJIT's. */
#include <string.h>

#include "lh.h"

/* -- VM object layouts ------------------------------------------------------
** Facts about the Lua 5.4 build that the public API does not expose.
** lh_vm_verify() checks each of them against the running VM at start and
** the module refuses to record on a mismatch. See docs/LUA.md.
*/
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

const char lh_vm_frontend[] = "lua5.4";
const char *const lh_vm_init_var = "HEAPTAPE_LUA_INIT_5_4";
const int lh_vm_upval_size = 40;   /* UpVal */

/* What this file keeps of the profiled VM. */
static struct {
  lua_CFunction coresume;  /* coroutine.resume */
  lua_CFunction auxwrap;   /* the C function behind coroutine.wrap's closures */
} vm;

/* -- Stack walks -------------------------------------------------------------
** A walk fills ids innermost first and returns how many. Builtins (C
** functions of the VM itself: the standard library) are charged to their
** Lua caller; a builtin called in tail position is charged to the caller's
** caller. The fast walk reads the CallInfo chain directly (layouts verified
** at start); the reference walk goes through lua_getinfo and is run beside
** the fast one when HEAPTAPE_LUA_CHECK is set (docs/LUA.md).
*/

/* The coroutine that the frame ci resumes, or NULL (Lua 5.4). */
static lua_State *lh_resumed(const void *ci)
{
  const uint8_t *func = LH_RD(const uint8_t *, ci, L54_CI_FUNC);
  int tag = func[L54_TV_TAG];
  const uint8_t *tv = NULL;
  if (tag == L54_VLCF && LH_RD(lua_CFunction, func, 0) == vm.coresume) {
    tv = func + 16;                     /* first argument */
  } else if (tag == L54_VCCL) {
    const uint8_t *cl = LH_RD(const uint8_t *, func, 0);
    if (LH_RD(lua_CFunction, cl, L54_CCL_F) == vm.auxwrap) tv = cl + L54_CCL_UV;
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
int lh_vm_where(uint64_t *ids, int ref)
{
  if (LH_RD(uint8_t, lh.g, L54_G_GCSTOPEM)) { ids[0] = lh.internal_id; return 1; }
  lua_State *th[LH_MAXTHREADS];
  int nt = lh_threads(th, ref), n = 0;
  for (int i = nt - 1; i >= 0 && n < lh.maxdepth; i--) n = lh_walk_thread(th[i], ids, n, ref);
  if (!n) ids[n++] = lh.internal_id;
  return n;
}

/* Is the block at p, about to be freed, a function prototype? */
int lh_vm_is_proto(const void *p, size_t osize)
{
  return osize > L54_TV_TAG && LH_RD(uint8_t, p, L54_TV_TAG) == L54_VPROTO;
}

/* Whether L belongs to the profiled state. */
int lh_vm_same(lua_State *L) { return LH_RD(const void *, L, L54_L_G) == lh.g; }

/* -- Sessions ---------------------------------------------------------------- */

/* No per-session tables in Lua 5.4. */
int lh_vm_tables(void) { return 0; }

/* Nothing to attach in Lua 5.4. */
void lh_vm_session(lua_State *L, int on) { (void)L; (void)on; }

/* -- Verification of the VM layout ------------------------------------------ */

/* A C function handed to coroutine.wrap to find its closure's C side. */
static int lh_verify_dummy(lua_State *L) { (void)L; return 0; }

/* Check the layout facts against the running VM; NULL if fine, else why. */
const char *lh_vm_verify(lua_State *L)
{
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
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
    vm.coresume = lua_tocfunction(L, -1);
    lua_getfield(L, -2, "wrap");
    lua_pushcfunction(L, lh_verify_dummy);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK) vm.auxwrap = lua_tocfunction(L, -1);
    lua_pop(L, 3);
  } else lua_pop(L, 1);
  return NULL;
}

/* -- The dump's view of objects ------------------------------------------------ */

/* Whether the function at idx is a light C function (no upvalue, no object). */
int lh_vm_light_cfunction(lua_State *L, int idx)
{
  if (!lua_iscfunction(L, idx)) return 0;
  if (!lua_getupvalue(L, idx, 1)) return 1;
  lua_pop(L, 1);
  return 0;
}

/* Size in bytes of the object at idx, from the VM's layouts (docs/LUA.md). */
size_t lh_vm_size(lua_State *L, int idx)
{
  const void *p = lua_topointer(L, idx);
  switch (lua_type(L, idx)) {
  case LUA_TSTRING: { size_t n; lua_tolstring(L, idx, &n); return 24 + n + 1; }
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
  default: return 0;
  }
}

/* Number of array slots of table idx (the VM's array part). */
lua_Integer lh_vm_asize(lua_State *L, int idx)
{
  return (lua_Integer)LH_RD(uint32_t, lua_topointer(L, idx), L54_TAB_ALIMIT);
}

/* Push user value i of the userdata at idx; 0 (nothing pushed) past the last. */
int lh_vm_extra_ref(lua_State *L, int idx, int i)
{
  if (lua_type(L, idx) != LUA_TUSERDATA) return 0;
  if (lua_getiuservalue(L, idx, i) != LUA_TNONE) return 1;
  lua_pop(L, 1);
  return 0;
}

/* heaptape -- the Lua module's universe dump: every object reachable from
** the registry and the running thread, with its size and links, as text.
**
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
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lh.h"

#define LH_P(p) ((unsigned long)(uintptr_t)(p))  /* pointer as written */

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
    return !lh_vm_light_cfunction(L, idx);
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

/* Write the links of object o beside its upvalues (environment, user values). */
static void lh_dextra(lua_State *L, LhDump *d, int o)
{
  for (int i = 1; lh_vm_extra_ref(L, o, i); i++) {
    if (lh_isobj(L, -1)) { fputs("R\t", d->f); lh_dval(L, d, -1); fputc('\n', d->f); }
    lua_pop(L, 1);
  }
}

/* Write the O record and the links of the object on top of the stack. */
static void lh_dobj(lua_State *L, LhDump *d)
{
  int o = lua_gettop(L), t = lua_type(L, o);
  const void *mt = NULL;
  if (lua_getmetatable(L, o)) { mt = lua_topointer(L, -1); }
  fprintf(d->f, "O\t%s\t0x%lx\t%zu\t0x%lx", lh_tname(t), LH_P(lua_topointer(L, o)),
          lh_vm_size(L, o), LH_P(mt));
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
    lua_Integer asize = lh_vm_asize(L, o);
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
        fprintf(d->f, "O\tLJ_TUPVAL\t0x%lx\t%d\t0x0\n", LH_P(id), lh_vm_upval_size);
        d->objects++;
        if (lh_isobj(L, -1)) { fputs("R\t", d->f); lh_dval(L, d, -1); fputc('\n', d->f); }
      }
      lua_pop(L, 1);
    }
    lh_dextra(L, d, o);
  } else if (t == LUA_TTHREAD) {
    lh_dthread(L, d, lua_tothread(L, o));
  } else if (t == LUA_TUSERDATA) {
    lh_dextra(L, d, o);
  }
  lua_settop(L, o);
}

/* heaptape.dump(fname) -> true | nil, msg, errno */
int lh_dump(lua_State *L)
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
  fprintf(f, "HTLUADUMP\t1\t%s\n", lh_vm_frontend);
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

/* heaptape -- the Lua module (Lua 5.4 and LuaJIT 2.1): an allocator wrapper
** that reports every VM allocation with its Lua stack, misc.memprof, dump.
** What depends on the VM is in lh_vm54.c / lh_vmjit.c (see lh.h). */
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

#include "lh.h"
#include "lheaptape.h"
#include "../src/base/hash.h"  /* header-only: ht_fnv1a_fold */

LhProf lh = { .tmu = PTHREAD_MUTEX_INITIALIZER, .tcv = PTHREAD_COND_INITIALIZER };

/* -- Location interning ----------------------------------------------------- */

/* Copy s into the name arena; NULL when full. */
const char *lh_arena_copy(const char *s)
{
  size_t n = strlen(s) + 1;
  if (lh.arena_used + n > LH_ARENA) return NULL;
  char *p = lh.arena + lh.arena_used;
  memcpy(p, s, n);
  lh.arena_used += n;
  return p;
}

/* Id of (kind, file, line, aux), declaring it on first use. name may be NULL. */
uint64_t lh_intern(int kind, const char *file, uint32_t line, uint64_t aux,
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

/* Location of a C function not in the cache: 0 for a builtin of the VM. */
uint64_t lh_cfunc_miss(lua_CFunction f)
{
  uint32_t k = (uint32_t)(((uintptr_t)f >> 4) % LH_CCACHE);
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

/* HEAPTAPE_LUA_CHECK: compare the fast walk with the reference walk. */
static void lh_check(const uint64_t *ids, int n)
{
  uint64_t ref[LH_MAXDEPTH];
  int m = lh_vm_where(ref, 1);
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
      if (lh_vm_is_proto(ptr, osize)) lh.gen++;   /* its frames leave the cache */
      heaptape_rt_free(ptr);             /* before the block is gone */
    }
    q = lh.orig(lh.orig_ud, ptr, osize, nsize);
  } else {
    uint64_t in[LH_MAXDEPTH], out[LH_MAXDEPTH];
    int n = lh_vm_where(in, 0);
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

/* Check the layout facts against the running VM; NULL if fine, else why. */
static const char *lh_verify(lua_State *L)
{
  const char *why = lh_vm_verify(L);
  if (why) return why;
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
  return lh_vm_tables();
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
  if (!closing) lh_vm_session(L, 0);
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
  return rc;
}

/* Return nil, message, errno (the memprof failure convention). */
int lh_fail(lua_State *L, const char *msg, int err)
{
  lua_pushnil(L);
  lua_pushstring(L, msg);
  lua_pushinteger(L, err);
  return 3;
}

/* Begin a session on L: into fname (own tape) or attached to a running one. */
static int lh_begin(lua_State *L, const char *fname, double secs, int frames, int attach)
{
  if (lh.active || (!attach && heaptape_is_running()))
    return lh_fail(L, "profiler is running already", EALREADY);
  const char *why = lh_verify(L);
  if (why) {
    char msg[256];
    snprintf(msg, sizeof(msg), "heaptape: unsupported VM build (%s); "
             "this module knows %s from Debian 12", why, lh_vm_frontend);
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
    o.frames = frames;                  /* 0: the recorder's (HEAPTAPE_FRAMES) */
    o.frontend = lh_vm_frontend;
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
  const char *chk = getenv("HEAPTAPE_LUA_CHECK");
  lh.check = chk && *chk && strcmp(chk, "0");
  int nfr = heaptape_frames();          /* the recording's, e.g. record --frames N */
  lh.maxdepth = nfr >= 1 && nfr < LH_MAXDEPTH ? nfr : LH_MAXDEPTH;
  lh.active = 1;
  lh_vm_session(L, 1);
  lh_install(L);
  if (secs > 0 && lh.own_tape) lh_timer_start(secs);
  lua_pushboolean(L, 1);
  return 1;
}

/* -- Lua API --------------------------------------------------------------------- */

/* heaptape.start(fname [, seconds | {seconds = N, frames = N}])
**   -> true | nil, msg, errno */
static int lh_start(lua_State *L)
{
  const char *fname = luaL_checkstring(L, 1);
  double secs = 0;
  lua_Integer frames = 0;
  if (lua_type(L, 2) == LUA_TNUMBER) secs = lua_tonumber(L, 2);
  else if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "seconds");
    secs = lua_tonumber(L, -1);
    lua_getfield(L, 2, "frames");
    frames = lua_tointeger(L, -1);
    lua_pop(L, 2);
    if (frames < 0 || frames > 256) return lh_fail(L, "frames must be from 1 to 256", EINVAL);
  }
  return lh_begin(L, fname, secs, (int)frames, 0);
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
    int r = heaptape_is_running() ? lh_begin(L, NULL, 0, 0, 1)
          : out ? lh_begin(L, out, 0, 0, 0) : 0;
    if (r && lua_isnil(L, -r)) {
      fprintf(stderr, "heaptape: cannot record Lua: %s\n", lua_tostring(L, -r + 1));
    }
  }
  const char *init = lh_vm_init_var ? getenv(lh_vm_init_var) : NULL;
  if (!init) init = getenv("HEAPTAPE_LUA_INIT");
  if (!init || !*init) return 0;
  int st = init[0] == '@' ? luaL_loadfile(L, init + 1)
         : luaL_loadbuffer(L, init, strlen(init), "=LUA_INIT");
  if (st) return lua_error(L);
  lua_call(L, 0, 0);
  return 0;
}

/* __gc of the registry sentinel: the state closes while recording. */
static int lh_sentinel_gc(lua_State *L)
{
  if (lh.active && lh.g && lh_vm_same(L)) lh_finish(L, 1);
  return 0;
}

/* -- Module ------------------------------------------------------------------------ */

static const luaL_Reg lh_funcs[] = {
  { "start", lh_start },
  { "stop", lh_stop },
  { "is_running", lh_is_running },
  { "dump", lh_dump },       /* lh_dump.c */
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
  lua_pushstring(L, lh_vm_frontend);
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

/* heaptape -- the Lua module's C interface for hosts that embed Lua 5.4 or
** LuaJIT 2.1 and resume coroutines from C (see docs/LUA.md). */
#ifndef LHEAPTAPE_H
#define LHEAPTAPE_H

#include <lua.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The module's entry point for `require "heaptape"`. */
int luaopen_heaptape(lua_State *L);

/* Tell the profiler which coroutine the host is about to run with
** lua_resume(co, ...); pass NULL after lua_resume returns. Events are then
** charged to co's stack (and to the stacks of the coroutines co resumes in
** turn). Not needed for coroutine.resume / coroutine.wrap, which the module
** follows by itself. Call from the thread that runs the Lua state; cheap,
** never allocates. Find it with dlsym(module, "lheaptape_running"). */
void lheaptape_running(lua_State *co);

#ifdef __cplusplus
}
#endif
#endif

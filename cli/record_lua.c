/* heaptape -- `heaptape record --lua`: the environment that makes lua5.4 and
** luajit load the heaptape module and start it before the script runs. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "record_lua.h"

/* Set NAME to "<dir>/<sub>/?.so;" followed by the old path (or the default). */
static int rlua_cpath(const char *name, const char *fallback, const char *dir, const char *sub)
{
  const char *old = getenv(name);
  if (!old && fallback) old = getenv(fallback);
  char buf[8192];
  snprintf(buf, sizeof(buf), "%s/lua/%s/?.so;%s", dir, sub, old && *old ? old : ";");
  return setenv(name, buf, 1);
}

/* Remove libheaptape from LD_PRELOAD (Lua-only recording). */
int ht_record_unpreload(void)
{
  const char *pre = getenv("LD_PRELOAD");
  if (!pre) return 0;
  char out[8192] = "", tok[4096];
  size_t o = 0;
  for (const char *p = pre; *p; ) {
    size_t n = strcspn(p, ": ");
    if (n && n < sizeof(tok)) {
      memcpy(tok, p, n);
      tok[n] = 0;
      if (!strstr(tok, "libheaptape") && o + n + 2 < sizeof(out))
        o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s", o ? ":" : "", tok);
    }
    p += n;
    if (*p) p++;
  }
  return o ? setenv("LD_PRELOAD", out, 1) : unsetenv("LD_PRELOAD");
}

/* Child side of --lua: module path, LUA_INIT (keeping the user's), output. */
int ht_record_lua_env(const char *tape, int native)
{
  char dir[PATH_MAX];
  if (ht_cli_selfdir(dir, sizeof(dir))) return -1;
  int rc = 0;
  /* lua5.4 reads the _5_4 variables first, LuaJIT only the plain ones */
  rc |= rlua_cpath("LUA_CPATH_5_4", "LUA_CPATH", dir, "5.4");
  rc |= rlua_cpath("LUA_CPATH", NULL, dir, "jit");
  const char *init54 = getenv("LUA_INIT_5_4"), *init = getenv("LUA_INIT");
  if (init54) rc |= setenv("HEAPTAPE_LUA_INIT_5_4", init54, 1);
  if (init) rc |= setenv("HEAPTAPE_LUA_INIT", init, 1);
  const char *code = "require'heaptape'._record()";
  rc |= setenv("LUA_INIT_5_4", code, 1);
  rc |= setenv("LUA_INIT", code, 1);
  rc |= setenv("HEAPTAPE_LUA_OUTPUT", tape, 1);
  if (!native) rc |= ht_record_unpreload();
  return rc;
}

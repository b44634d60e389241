/* heaptape -- `heaptape record --lua` (cli/record_lua.c): the environment
** that makes lua5.4 and luajit start the heaptape module before the script. */
#ifndef HT_RECORD_LUA_H
#define HT_RECORD_LUA_H

/* In the child, before exec: module path, LUA_INIT (keeping the user's), the
** tape; native 0 also takes libheaptape out of LD_PRELOAD. 0 on success. */
int ht_record_lua_env(const char *tape, int native);

/* Remove libheaptape from LD_PRELOAD (runtime-only recording). 0 on success. */
int ht_record_unpreload(void);

#endif

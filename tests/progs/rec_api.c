/* heaptape tests -- the embedded API: dlopen libheaptape.so (argv[1]), record
** runtime events through a writer callback into argv[2], stop, check on_stop. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "../../include/heaptape.h"

static int stops;                          /* on_stop calls */

/* Writer callback: append to the FILE passed as arg. */
static size_t put(const void *d, size_t n, void *arg) { return fwrite(d, 1, n, arg); }
/* on_stop: close the FILE. */
static int done(void *arg) { stops++; return fclose(arg); }

int main(int argc, char **argv)
{
  if (argc < 3) return 2;
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
#define SYM(name) __typeof__(name) *p_##name = (__typeof__(name) *)dlsym(h, #name)
  SYM(heaptape_start); SYM(heaptape_stop); SYM(heaptape_is_running); SYM(heaptape_mark);
  SYM(heaptape_loc_declare); SYM(heaptape_rt_alloc); SYM(heaptape_rt_free);
  SYM(heaptape_rt_realloc); SYM(heaptape_thread_name); SYM(heaptape_pool_alloc);
  SYM(heaptape_pool_free);
  struct heaptape_options o = HEAPTAPE_OPTIONS_INIT;
  o.writer = put;
  o.on_stop = done;
  o.arg = fopen(argv[2], "wb");
  o.frontend = "lua5.4";
  int rc = p_heaptape_start(&o);
  int again = p_heaptape_start(&o);
  printf("start %d again %d running %d\n", rc, again == HEAPTAPE_E_RUNNING, p_heaptape_is_running());
  p_heaptape_thread_name("interpreter");
  p_heaptape_loc_declare(1, HEAPTAPE_LOC_LUA, "main", "script.lua", 10, 1);
  p_heaptape_loc_declare(2, HEAPTAPE_LOC_LUA, "helper", "script.lua", 20, 18);
  heaptape_loc_t st[2] = { 1, 2 };
  static char blocks[4][64];
  p_heaptape_rt_alloc(st, 2, blocks[0], 64);
  p_heaptape_rt_alloc(st, 1, blocks[1], 32);
  p_heaptape_mark("phase 2");
  p_heaptape_rt_realloc(st, 2, blocks[1], blocks[2], 48);
  p_heaptape_rt_free(blocks[0]);
  p_heaptape_pool_alloc(blocks[3], 16);
  p_heaptape_pool_free(blocks[3]);
  rc = p_heaptape_stop();
  printf("stop %d stops %d running %d again %d\n", rc, stops, p_heaptape_is_running(),
         p_heaptape_stop() == HEAPTAPE_E_NOTRUNNING);
  return 0;
}

/* heaptape -- the recorder's entry point in a running process: `heaptape
** attach` loads the library and calls heaptape_attach_entry; detach. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "got.h"
#include "tape.h"
#include "tapefile.h"
#include "../base/attachctl.h"
#include "../../include/heaptape.h"

/*
** The injector (cli/inject.c) makes the process's own thread call dlopen
** on this library and then heaptape_attach_entry(spec). The constructor
** has set the recorder up but started nothing (the library is not in
** LD_PRELOAD). The entry opens the tape, starts a session with native
** recording on, and hooks the relocation slots (got.c); it returns the
** control block, through which a later detach is asked for: the writer
** thread polls `stop` and, when it is set, removes the hooks, stops the
** session (the tape closed, with its trailer) and ends itself. The library
** stays loaded, inert: its hooks still work as plain forwards to glibc for
** a thread that was inside one or kept a pointer to one.
*/
HT_API HtAttachCtl heaptape_attach_ctl = { .magic = HT_ATTACH_MAGIC,
                                           .version = HT_ATTACH_VERSION };
static int attach_forked;             /* the fork handler is registered */

/* The value of key in spec ("key=value" lines) into out; 1 if present. */
static int attach_get(const char *spec, const char *key, char *out, size_t cap)
{
  size_t k = strlen(key);
  for (const char *l = spec; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (strncmp(l, key, k) || l[k] != '=') continue;
    const char *v = l + k + 1;
    size_t n = strcspn(v, "\n");
    if (n >= cap) n = cap - 1;
    memcpy(out, v, n);
    out[n] = 0;
    return 1;
  }
  return 0;
}

/* A number of spec, or def. */
static uint64_t attach_num(const char *spec, const char *key, uint64_t def)
{
  char b[32];
  return attach_get(spec, key, b, sizeof(b)) ? strtoull(b, NULL, 10) : def;
}

/* Fail the attach: state FAILED, error and why. */
static HtAttachCtl *attach_fail(int err, const char *why)
{
  HtAttachCtl *c = &heaptape_attach_ctl;
  c->error = err;
  size_t n = strnlen(why, sizeof(c->why) - 1);
  memcpy(c->why, why, n);
  c->why[n] = 0;
  atomic_store((_Atomic uint32_t *)&c->state, HT_AS_FAILED);
  return c;
}

/* Detach, on the writer thread (ht_tape_watch): tape closed, hooks back.
** In that order: once recording is off every hook is a plain forward, so
** no free goes unrecorded (through a slot already put back) while an
** allocation of the same block is still recorded through another. */
static void attach_detach(void)
{
  HtAttachCtl *c = &heaptape_attach_ctl;
  ht_tape_stop(UINT64_MAX, 0);
  ht_got_restore();
  c->slots = c->objects = 0;
  atomic_store((_Atomic uint32_t *)&c->stop, 0);
  atomic_store((_Atomic uint32_t *)&c->state, HT_AS_DONE);
}

/* Fork child: the parent's session is not its own (lifecycle.c stopped it
** there); its copies of the slots are put back too. */
static void attach_atfork_child(void)
{
  HtAttachCtl *c = &heaptape_attach_ctl;
  if (atomic_load((_Atomic uint32_t *)&c->state) != HT_AS_RECORDING) return;
  ht_got_restore();
  c->slots = c->objects = 0;
  atomic_store((_Atomic uint32_t *)&c->state, HT_AS_DONE);
}

/* The entry point: start recording onto the tape spec names. */
HT_API HtAttachCtl *heaptape_attach_entry(const char *spec)
{
  HtAttachCtl *c = &heaptape_attach_ctl;
  if (ht_tape_active()) {
    c->error = HEAPTAPE_E_RUNNING;  /* (state stays: the session that runs is another's) */
    return c;
  }
  ht_guard++;
  char path[sizeof(c->tape)], exe[4096];
  if (!attach_get(spec, "tape", path, sizeof(path)) || path[0] != '/') {
    ht_guard--;
    return attach_fail(HEAPTAPE_E_MISUSE, "no absolute tape path given");
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    ht_guard--;
    return attach_fail(HEAPTAPE_E_IO, strerror(errno));
  }
  ht_tapefile_adopt(fd, path);
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  exe[n > 0 ? n : 0] = 0;
  HtTapeInfo info = { 0 };
  info.exe = exe;
  info.sample = attach_num(spec, "sample", 0);
  info.unwind = (uint32_t)attach_num(spec, "unwind", HT_UNWIND_LIBUNWIND);
  info.frames = (uint32_t)attach_num(spec, "frames", HT_DEFAULT_FRAMES);
  info.late_ns = attach_num(spec, "late", 1);
  info.frontend = "native";
  if (!info.late_ns) info.late_ns = 1;   /* (0 would read as "from the start") */
  /* Native recording goes on only once every slot is hooked: a block
  ** allocated through a hooked slot must not be freed through one not yet
  ** hooked (the tape would see it live when its address comes back). */
  int rc = ht_tape_start(ht_tapefile_sink, NULL, ht_tapefile_close, &info, 0, HT_TAPE_ATTACH);
  if (rc) {
    ht_tapefile_close(NULL);
    ht_guard--;
    return attach_fail(rc, heaptape_strerror(rc));
  }
  uint32_t slots, objects;
  if (ht_got_hook(&slots, &objects)) {
    ht_tape_stop(UINT64_MAX, 0);
    ht_guard--;
    return attach_fail(HEAPTAPE_E_MISUSE, "glibc's allocator functions not found");
  }
  atomic_store(&ht_g.native, 1);
  if (!attach_forked) attach_forked = !pthread_atfork(NULL, NULL, attach_atfork_child);
  memcpy(c->tape, path, strlen(path) + 1);
  c->slots = slots;
  c->objects = objects;
  c->error = 0;
  c->why[0] = 0;
  c->attacher = (uint32_t)attach_num(spec, "attacher", 0);
  c->sessions++;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  c->start_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  atomic_store((_Atomic uint32_t *)&c->stop, 0);
  atomic_store((_Atomic uint32_t *)&c->state, HT_AS_RECORDING);
  ht_tape_watch((_Atomic uint32_t *)&c->stop, attach_detach);
  ht_guard--;
  return c;
}

/* heaptape -- public C API: recording control and runtime events.
**
** heaptape records heap events onto a "tape" (docs/FORMAT.md). A program gets
** one recorder per process. It is driven either by LD_PRELOAD of
** libheaptape.so (configured by HEAPTAPE_* environment variables, see
** `heaptape record --help`) or by the calls below, which language runtimes
** and programs that embed the profiler use.
**
** Error convention: functions return 0 (HEAPTAPE_OK) on success and a
** negative HEAPTAPE_E_* code on failure; heaptape_strerror() names it.
** Unless stated otherwise every function is thread-safe and none is
** async-signal-safe.
*/
#ifndef HEAPTAPE_H
#define HEAPTAPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HEAPTAPE_VERSION_MAJOR 0
#define HEAPTAPE_VERSION_MINOR 1
#define HEAPTAPE_FORMAT_VERSION 1   /* tape format written by this library */

/* Error codes; their values are pinned and never change. */
enum {
#define HTERRDEF(name, value, msg) HEAPTAPE_E_##name = value,
#include "../src/base/errmsg.h"
#undef HTERRDEF
  HEAPTAPE_OK = 0
};

/* A static, human-readable message for an error code. Never NULL.
** Async-signal-safe. */
const char *heaptape_strerror(int code);

/* -- Recording control (after LuaJIT's luaM_memprof_*) -------------------- */

/* Stack capture methods. */
enum {
  HEAPTAPE_UNWIND_DEFAULT = 0,   /* libunwind, or HEAPTAPE_UNWIND env var */
  HEAPTAPE_UNWIND_LIBUNWIND = 1, /* DWARF unwind tables, works on any binary */
  HEAPTAPE_UNWIND_FP = 2,        /* frame pointers, fastest; validated */
  HEAPTAPE_UNWIND_NONE = 3       /* no native stacks */
};

struct heaptape_options {
  /* Receives the tape, in order, in chunks of any size. Must return len on
  ** success; anything else is an I/O error that stops emission and is
  ** reported by heaptape_stop(). Called from a heaptape thread or from the
  ** thread calling heaptape_stop(), never concurrently with itself, never
  ** from inside an allocator call of the profiled program. Required. */
  size_t (*writer)(const void *data, size_t len, void *arg);
  /* Called once when recording ends (heaptape_stop() or process exit) after
  ** the last writer() call, so arg can be released. Returns 0 on success.
  ** Optional. Not called when heaptape_start() fails. */
  int (*on_stop)(void *arg);
  void *arg;                  /* passed to writer and on_stop; caller-owned */
  uint64_t sample_bytes;      /* mean Poisson sampling interval in bytes; 0 = record all */
  int unwind;                 /* HEAPTAPE_UNWIND_* */
  int frames;                 /* maximum native frames per stack; 0 = default (64) */
  int native;                 /* 1: also record the process's malloc/free (needs
                                 libheaptape.so to be the process allocator
                                 front, i.e. preloaded); 0: runtime events only */
  const char *frontend;       /* tape's frontend name ("lua5.4"), copied; NULL = "native" */
};

/* A ready-made writer for a file descriptor: set opt->writer to it and
** opt->arg to (void *)(intptr_t)fd. It writes everything at the
** descriptor's position, retrying on EINTR and short writes, and returns
** the bytes written (less than len after an error). The descriptor stays
** the caller's (close it in on_stop). Async-signal-safe. */
size_t heaptape_fd_writer(const void *data, size_t len, void *arg);

/* Start recording. The options are copied; opt->arg must stay valid until
** on_stop. Returns HEAPTAPE_OK, HEAPTAPE_E_MISUSE (no writer, bad values),
** HEAPTAPE_E_RUNNING, HEAPTAPE_E_NOMEM, or HEAPTAPE_E_IO (the header could
** not be written; on_stop is not called). */
int heaptape_start(const struct heaptape_options *opt);

/* Stop recording: flush every thread's buffer, write the dictionary (symbols
** of every native address and runtime location used) and the trailer, then
** call on_stop. Returns HEAPTAPE_OK, HEAPTAPE_E_NOTRUNNING, or HEAPTAPE_E_IO
** if writer() or on_stop() failed. */
int heaptape_stop(void);

/* 1 while recording, 0 otherwise. Async-signal-safe. */
int heaptape_is_running(void);

/* Put a labelled mark on the tape (label copied, truncated to 4096 bytes). */
int heaptape_mark(const char *label);

/* Name the calling thread on the tape. */
int heaptape_thread_name(const char *name);

/* -- Events of custom allocators ------------------------------------------ */

/* A pool or arena allocator reports blocks it hands out and takes back, with
** the caller's native stack. Call after the block is carved out (alloc) and
** before it is returned to the pool (free), so order stays exact. No-ops
** when not recording. */
int heaptape_pool_alloc(const void *ptr, size_t size);
int heaptape_pool_free(const void *ptr);

/* -- Events of language runtimes ------------------------------------------ */

/* A runtime location is an id the runtime chooses (e.g. a hash of chunk and
** line); declare each id once before or after first use, before stop. */
typedef uint64_t heaptape_loc_t;

enum {
  HEAPTAPE_LOC_INTERNAL = 0,   /* the runtime itself: GC, stack growth, JIT */
  HEAPTAPE_LOC_LUA = 1,        /* file = chunk, line = current line, aux = line defined */
  HEAPTAPE_LOC_CFUNC = 2,      /* name = symbol, aux = function address */
  HEAPTAPE_LOC_TRACE = 3,      /* aux = trace number, file/line = start */
  HEAPTAPE_LOC_OTHER = 4
};

/* Declare location id: name and file are copied (may be NULL). */
int heaptape_loc_declare(heaptape_loc_t id, int kind, const char *name,
                         const char *file, uint32_t line, uint64_t aux);

/* Runtime allocation of size bytes at ptr, with the runtime's stack
** (locs[0] outermost, depth entries; copied). ptr must not be live. */
int heaptape_rt_alloc(const heaptape_loc_t *locs, size_t depth,
                      const void *ptr, size_t size);
/* Runtime free of a live block. */
int heaptape_rt_free(const void *ptr);
/* Runtime reallocation: old block (may be NULL) replaced by new (may equal
** old). Reported after the runtime's allocator succeeded. */
int heaptape_rt_realloc(const heaptape_loc_t *locs, size_t depth,
                        const void *old_ptr, const void *new_ptr, size_t size);

#ifdef __cplusplus
}
#endif
#endif

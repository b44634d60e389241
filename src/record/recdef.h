/* heaptape -- what every file of the recorder shares: glibc's real allocator,
** the re-entrancy guard and logger, arena, clocks, signal masks, options. */
#ifndef HT_RECDEF_H
#define HT_RECDEF_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "../base/ht_def.h"
#include "../base/options.h"

/*
** The recorder's files, each calling only files named before it
** (src/README.md; tests/integration/record_layers.sh checks the order):
**   log.c arena.c clock.c sigmask.c options.c               primitives (here)
**   sampler.c bufpool.c unwind_fp.c unwind_libunwind.c      hot path's helpers
**   record.c                                                hot path
**   maps.c tapefile.c                                       module map, tape file
**   tape.c                                                  writer thread, start/stop
**   env.c                                                   start-up from the environment
**   lifecycle.c                                             set-up, fork, exec, exit
**   api.c preload.c                                         public API, libc names
**   got.c                                                   relocation hooks (attach)
**   attach.c                                                entry of `heaptape attach`
*/

/* -- glibc's real allocator (no dlsym, so no recursion) -------------------- */
extern void *__libc_malloc(size_t n);
extern void __libc_free(void *p);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);
extern void *__libc_stack_end;    /* ld.so: the initial stack pointer */

#define HT_TLS __thread __attribute__((tls_model("initial-exec")))
#define HT_BUFBODY (64u << 10)    /* per-thread packet body */

/* -- Re-entrancy guard and logger (log.c) ----------------------------------- */
extern HT_TLS int ht_guard HT_HIDDEN; /* >0 while inside the recorder */
/* Print "heaptape: <msg>" to stderr without allocating; capped. */
void ht_log(const char *fmt, ...) HT_HIDDEN __attribute__((format(printf, 1, 2)));

/* -- Arena (arena.c) --------------------------------------------------------- */
/* Zeroed memory straight from mmap, page-rounded; NULL on failure. */
void *ht_arena_alloc(size_t n) HT_HIDDEN;
void ht_arena_free(void *p, size_t n) HT_HIDDEN;

/* -- Clocks (clock.c) --------------------------------------------------------- */
/* Nanoseconds on clock clk. */
uint64_t ht_clock_ns(int clk) HT_HIDDEN;
/* A session starts now; direct: ht_clock_coarse reads the clock afresh. */
void ht_clock_start(int direct) HT_HIDDEN;
/* Publish the coarse clock (writer thread); returns it. */
uint64_t ht_clock_tick(void) HT_HIDDEN;
/* Nanoseconds since start on the coarse clock. */
uint64_t ht_clock_coarse(void) HT_HIDDEN;

/* -- Signal masks (sigmask.c) ------------------------------------------------ */
/* sigprocmask for code inside the recorder: glibc's internal signals keep
** their state (glibc's own restore would unblock them). */
int ht_sigmask(int how, const sigset_t *set, sigset_t *old) HT_HIDDEN;
/* Block every signal but glibc's internal ones; *saved gets the old mask. */
void ht_sigmask_block_all(uint64_t *saved) HT_HIDDEN;
void ht_sigmask_restore(uint64_t saved) HT_HIDDEN;

/* -- Options (options.c, over the table of src/base/options.h) ---------------- */
extern HtOptions ht_opt HT_HIDDEN;   /* HEAPTAPE_* as read at set-up */
/* The value of environment variable name, read from environ itself. */
const char *ht_getenv(const char *name) HT_HIDDEN;
/* Read every HEAPTAPE_* variable into ht_opt (no allocation). */
void ht_options_load(void) HT_HIDDEN;

#endif

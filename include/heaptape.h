/* heaptape -- public C API: recording control and runtime events.
**
** heaptape records heap events onto a "tape" (docs/FORMAT.md). A program gets
** one recorder per process. It is driven either by LD_PRELOAD of
** libheaptape.so (configured by HEAPTAPE_* environment variables, see
** `heaptape record --help`) or by the calls below, which language runtimes
** and programs that embed the profiler use.
**
** Error convention: functions return 0 (HEAPTAPE_OK) on success and a
** negative HEAPTAPE_E_* code (heaptape_errors.h) on failure;
** heaptape_strerror() names it. Each call below lists every value it
** returns. Unless stated otherwise every function is thread-safe and none
** is async-signal-safe.
**
** Not recording: the calls that report events (heaptape_pool_*,
** heaptape_rt_*) return HEAPTAPE_OK and do nothing, because allocators call
** them on every block without knowing whether a recording runs (and another
** thread may stop it at any moment). The calls that ask for something to
** appear on the tape (heaptape_mark, heaptape_thread_name,
** heaptape_loc_declare) return HEAPTAPE_E_NOTRUNNING, so that a program can
** tell that nothing was recorded. Arguments are checked first, recording or
** not: a bad argument is HEAPTAPE_E_MISUSE in both states.
**
** Building against it: `pkg-config --cflags --libs heaptape` (the header
** and libheaptape.so, as `make install` puts them).
*/
#ifndef HEAPTAPE_H
#define HEAPTAPE_H

#include <stddef.h>
#include <stdint.h>
#include "heaptape_errors.h"   /* HEAPTAPE_OK, HEAPTAPE_E_*: pinned values */

#ifdef __cplusplus
extern "C" {
#endif

#define HEAPTAPE_VERSION_MAJOR 0
#define HEAPTAPE_VERSION_MINOR 1
#define HEAPTAPE_FORMAT_VERSION 1   /* tape format written by this library (6 with
                                       Python or Ruby locations: loc_kinds) */

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

/* Options of heaptape_start(). Set size to sizeof(struct heaptape_options)
** (HEAPTAPE_OPTIONS_INIT does): fields added later go at the end, and the
** library reads only the first size bytes, taking 0 for the rest, so a
** program built against an older header keeps working. */
struct heaptape_options {
  size_t size;                /* sizeof(struct heaptape_options); required */
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
  uint64_t sample_bytes;      /* mean Poisson sampling interval in bytes; 0 = the
                                 environment's HEAPTAPE_SAMPLE, or record all */
  int unwind;                 /* HEAPTAPE_UNWIND_* */
  int frames;                 /* maximum frames per stack; 0 = the recorder's
                                 default (HEAPTAPE_FRAMES, else 64) */
  int native;                 /* 1: also record the process's malloc/free (needs
                                 libheaptape.so to be the process allocator
                                 front, i.e. preloaded); 0: runtime events only */
  const char *frontend;       /* tape's frontend name ("lua5.4"), copied; NULL = "native" */
  /* The location kinds the runtime will declare (heaptape_loc_declare), one
  ** bit each: 1u << HEAPTAPE_LOC_PYTHON, ...; 0 = none said. The header,
  ** written at start, says the format version the tape needs: 6 when
  ** PYTHON or RUBY is among them (docs/FORMAT.md), else 1. Bits past
  ** HEAPTAPE_LOC_RUBY are HEAPTAPE_E_MISUSE. */
  unsigned loc_kinds;
};

/* An initialiser that sets size and zeroes the rest (C99, C++20):
** struct heaptape_options o = HEAPTAPE_OPTIONS_INIT; */
#define HEAPTAPE_OPTIONS_INIT { .size = sizeof(struct heaptape_options) }
/* The size of the first version of the struct (up to frontend). */
#define HEAPTAPE_OPTIONS_SIZE_V1 \
  (offsetof(struct heaptape_options, frontend) + sizeof(const char *))

/* A ready-made writer for a file descriptor: set opt->writer to it and
** opt->arg to (void *)(intptr_t)fd. It writes everything at the
** descriptor's position, retrying on EINTR and short writes, and returns
** the bytes written (less than len after an error). The descriptor stays
** the caller's (close it in on_stop). Async-signal-safe. */
size_t heaptape_fd_writer(const void *data, size_t len, void *arg);

/* Start recording. The options are copied; opt->arg must stay valid until
** on_stop. Returns HEAPTAPE_OK; HEAPTAPE_E_MISUSE (opt NULL, size 0 or
** smaller than the first version of the struct, no writer, unwind or frames
** out of range, unknown loc_kinds); HEAPTAPE_E_RUNNING (a recording runs, embedded or
** preloaded); HEAPTAPE_E_NOMEM; or HEAPTAPE_E_IO (the header could not be
** written; on_stop is not called). */
int heaptape_start(const struct heaptape_options *opt);

/* Stop recording: flush every thread's buffer, write the dictionary (symbols
** of every native address and runtime location used) and the trailer, then
** call on_stop. Returns HEAPTAPE_OK, HEAPTAPE_E_NOTRUNNING, or HEAPTAPE_E_IO
** if writer() or on_stop() failed. */
int heaptape_stop(void);

/* 1 while recording, 0 otherwise. Async-signal-safe. */
int heaptape_is_running(void);

/* The maximum frames per stack of the running recording (its options'
** frames, else the recorder's default: HEAPTAPE_FRAMES, else 64); 0 when
** not recording. A runtime need not walk deeper. Async-signal-safe. */
int heaptape_frames(void);

/* The running recording's mean sampling interval in bytes (its options'
** sample_bytes, else HEAPTAPE_SAMPLE); 0 when every allocation is recorded
** or when not recording. Async-signal-safe. */
uint64_t heaptape_sample_bytes(void);

/* Put a labelled mark on the tape (label copied, truncated to 4096 bytes;
** NULL is the empty label). Returns HEAPTAPE_OK or HEAPTAPE_E_NOTRUNNING. */
int heaptape_mark(const char *label);

/* Name the calling thread on the tape (copied, truncated to 4096 bytes;
** NULL is the empty name). Returns HEAPTAPE_OK or HEAPTAPE_E_NOTRUNNING. */
int heaptape_thread_name(const char *name);

/* -- Events of custom allocators ------------------------------------------ */

/* A pool or arena allocator reports blocks it hands out and takes back, with
** the caller's native stack. Call after the block is carved out (alloc) and
** before it is returned to the pool (free), so order stays exact.
** heaptape_pool_alloc returns HEAPTAPE_E_MISUSE if ptr is NULL, else
** HEAPTAPE_OK; heaptape_pool_free always returns HEAPTAPE_OK (NULL is
** ignored, as by free). Both do nothing when not recording. */
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
  HEAPTAPE_LOC_OTHER = 4,
  HEAPTAPE_LOC_PYTHON = 5,     /* name = function qualname, file = filename,
                                  line = current line, aux = first line */
  HEAPTAPE_LOC_RUBY = 6        /* name = method label, file = path, line = current line */
};

/* Declare location id: name and file are copied (may be NULL). Returns
** HEAPTAPE_OK; HEAPTAPE_E_MISUSE (kind not a HEAPTAPE_LOC_*);
** HEAPTAPE_E_NOTRUNNING (declarations belong to a recording); or
** HEAPTAPE_E_NOMEM. */
int heaptape_loc_declare(heaptape_loc_t id, int kind, const char *name,
                         const char *file, uint32_t line, uint64_t aux);

/* Runtime allocation of size bytes at ptr, with the runtime's stack
** (locs[0] outermost, depth entries; copied; only the innermost frames
** are kept past the maximum depth). ptr must not be live. Returns
** HEAPTAPE_E_MISUSE if ptr is NULL or locs is NULL with depth > 0, else
** HEAPTAPE_OK; does nothing when not recording. */
int heaptape_rt_alloc(const heaptape_loc_t *locs, size_t depth,
                      const void *ptr, size_t size);
/* Runtime free of a live block (NULL is ignored). Returns HEAPTAPE_OK;
** does nothing when not recording. */
int heaptape_rt_free(const void *ptr);
/* Runtime reallocation: old block (may be NULL) replaced by new (may equal
** old; NULL means the block was freed). Reported after the runtime's
** allocator succeeded. Returns HEAPTAPE_E_MISUSE if new_ptr is set and locs
** is NULL with depth > 0, else HEAPTAPE_OK; does nothing when not
** recording. */
int heaptape_rt_realloc(const heaptape_loc_t *locs, size_t depth,
                        const void *old_ptr, const void *new_ptr, size_t size);

/* Sampling before the stack walk: 1 if a runtime allocation of size bytes
** made by the calling thread is to be recorded, 0 if not (not recording, or
** the sampler skips it: HEAPTAPE_SAMPLE / sample_bytes). Without sampling it
** is 1 while recording. A runtime that asks must report that allocation
** next on the same thread (heaptape_rt_alloc*, heaptape_rt_realloc*), which
** then records it without drawing again; it may skip reading its stack when
** the answer is 0. Async-signal-safe: no. */
int heaptape_rt_due(size_t size);

/* For a runtime that finds its own sample points (e.g. to turn its
** allocation hook off between them): one exponential gap in bytes with the
** recording's mean (HEAPTAPE_SAMPLE / sample_bytes), drawn from the calling
** thread's generator (HEAPTAPE_SEED); 0 when not recording or when every
** allocation is recorded. A sample point falls where the runtime's
** allocated bytes, counted down from a gap, reach zero or below; the next
** gap is added to what is left. Async-signal-safe: no. */
uint64_t heaptape_rt_gap(void);
/* The calling thread's next runtime allocation (heaptape_rt_alloc*,
** heaptape_rt_realloc*) is recorded as a sample point without a draw, as
** after heaptape_rt_due's 1. On a sampled recording it stands for weight
** bytes (docs/FORMAT.md, weights; 0 = implied by its size): a sampled
** block whose size changes keeps the probability it was drawn with,
** e.g. new_size / (1 - exp(-old_size / T)). Returns 1, or 0 when not
** recording. Async-signal-safe: no. */
int heaptape_rt_take(uint64_t weight);

/* -- Sampled frees without a call --------------------------------------- */

/* On a sampled recording most blocks a runtime frees were never recorded,
** and heaptape_rt_free turns them away after one look at a filter of the
** sampled live blocks. A runtime that reports every free from its
** allocator's hot path may take that look itself, inline, and call
** heaptape_rt_free only for the blocks the filter lets through.
**
** heaptape_rt_filter(HEAPTAPE_FILTER_LAYOUT): the filter of the running
** recording when it is sampled; NULL when not recording, when every
** allocation is recorded (then every free is to be reported), or when the
** library's filter is laid out otherwise than this header says (report
** every free then too). The filter stays mapped for the life of the
** process; ask again at each recording. Async-signal-safe. */
#define HEAPTAPE_FILTER_LAYOUT 1
/* The filter's byte for a block address (layout 1: 2^16 bytes). */
#define HEAPTAPE_FILTER_INDEX(ptr) \
  ((size_t)((uint64_t)(uintptr_t)(ptr) * 0xc2b2ae3d27d4eb4fULL >> 48))
const volatile unsigned char *heaptape_rt_filter(int layout);

/* 0 when ptr is certainly not a live block the recording sampled (its free
** needs no heaptape_rt_free); 1 when it may be. filter: from
** heaptape_rt_filter, not NULL. */
static inline int heaptape_rt_filter_maybe(const volatile unsigned char *filter,
                                           const void *ptr)
{
  return filter[HEAPTAPE_FILTER_INDEX(ptr)] != 0;
}

/* -- Mixed native and runtime stacks ------------------------------------- */

/* Frame values of heaptape_rt_alloc_frames: a native return address, or a
** declared runtime location id. */
#define HEAPTAPE_FRAME_NATIVE(ip) ((uint64_t)(uintptr_t)(ip) << 1)
#define HEAPTAPE_FRAME_LOC(id) ((uint64_t)(id) << 1 | 1)

/* The calling thread's native return addresses, innermost first, into
** ips[max], by the recording's unwinder (heaptape's own frames left out, at
** most the recording's frames). Returns how many; 0 when not recording, when
** the recording has no native stacks (HEAPTAPE_UNWIND_NONE), or when called
** from inside the recorder. Never allocates through the traced allocator. */
int heaptape_native_stack(uintptr_t *ips, int max);

/* heaptape_rt_alloc and heaptape_rt_realloc with a stack of frame values
** (HEAPTAPE_FRAME_*, frames[0] outermost): a runtime's locations
** interleaved with native frames. Same returns as those calls. */
int heaptape_rt_alloc_frames(const uint64_t *frames, size_t depth,
                             const void *ptr, size_t size);
int heaptape_rt_realloc_frames(const uint64_t *frames, size_t depth,
                               const void *old_ptr, const void *new_ptr, size_t size);

#ifdef __cplusplus
}
#endif
#endif

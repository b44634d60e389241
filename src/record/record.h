/* heaptape -- the in-process recorder: internal interface between its files.
** preload.c forwards libc names into ht_record_*; tape.c owns the output. */
#ifndef HT_RECORD_H
#define HT_RECORD_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "../format/writer.h"

/* -- glibc's real allocator (no dlsym, so no recursion) -------------------- */
extern void *__libc_malloc(size_t n);
extern void __libc_free(void *p);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

#define HT_TLS __thread __attribute__((tls_model("initial-exec")))
#define HT_MAXFRAMES 256          /* hard cap of HEAPTAPE_FRAMES */
#define HT_BUFBODY (64u << 10)    /* per-thread packet body */

/* -- Options (options.c) --------------------------------------------------- */
typedef struct HtOptions {
  char output[4096];     /* HEAPTAPE_OUTPUT, unexpanded */
  uint64_t sample;       /* HEAPTAPE_SAMPLE: mean bytes between samples, 0 = all */
  int unwind;            /* HT_UNWIND_* */
  int frames;            /* HEAPTAPE_FRAMES */
  int follow_fork;       /* HEAPTAPE_FOLLOW_FORK */
  int follow_exec;       /* HEAPTAPE_FOLLOW_EXEC */
  uint64_t seed;         /* HEAPTAPE_SEED */
  int zstd;              /* HEAPTAPE_ZSTD: packet compression level */
} HtOptions;

extern HtOptions ht_opt HT_HIDDEN;
/* The value of environment variable name, read from environ itself. */
const char *ht_getenv(const char *name) HT_HIDDEN;
/* Read every HEAPTAPE_* variable into ht_opt (no allocation). */
void ht_options_load(void) HT_HIDDEN;
/* Print "heaptape: <msg>" to stderr without allocating; capped. */
void ht_log(const char *fmt, ...) HT_HIDDEN __attribute__((format(printf, 1, 2)));

/* -- Arena (tape.c) --------------------------------------------------------- */
/* Zeroed memory straight from mmap, page-rounded; NULL on failure. */
void *ht_arena_alloc(size_t n) HT_HIDDEN;
void ht_arena_free(void *p, size_t n) HT_HIDDEN;

/* -- Buffers: a fixed reserved region, handed around by index --------------- */
typedef struct HtBuf {
  uint32_t next;         /* index + 1 of the next buffer in a stack, 0 = end */
  uint32_t self;         /* its own index + 1 in the pool */
  uint32_t nev;          /* seq-bearing records in the body */
  uint32_t len;          /* bytes of body used */
  uint32_t tid;          /* thread of the body */
  uint16_t gen0;         /* stack generation at body start */
  uint64_t seq0, seq1;   /* first event's and last written sequence number */
  uint64_t ts0;          /* timestamp at body start */
  uint8_t body[HT_BUFBODY]; /* packet body */
} HtBuf;

/* A free buffer, or NULL when none is left. */
HtBuf *ht_buf_get(void) HT_HIDDEN;
/* Seal s's body into its buffer and queue it for the writer thread. */
void ht_buf_queue(HtBuf *b, const struct HtStream *s) HT_HIDDEN;

/* -- Per-thread state (record.c) -------------------------------------------- */
typedef struct StackNode {
  uint64_t value;        /* frame value (ip << 1), 0 = empty slot */
  uint32_t parent;       /* parent node id */
  uint32_t id;           /* this node's id */
} StackNode;

/* One frame of the previous libunwind-mode walk (unwind_libunwind.c). */
typedef struct HtUnwFrame {
  uintptr_t ip;          /* ip in the frame (a return address but innermost) */
  uintptr_t sp;          /* rsp in the frame: the CFA of the frame inside it */
  uintptr_t rbp;         /* rbp in the frame (CFA rules may be rbp-based) */
  uintptr_t rbp_slot;    /* stack word rbp was restored from; 0 = a register */
} HtUnwFrame;

/* One return address's frame rule (unwind_libunwind.c). */
typedef struct HtUnwRule {
  uintptr_t ip;          /* return address (key), 0 = empty slot */
  int32_t cfa_off;       /* CFA = base register + cfa_off */
  int16_t rbp_off;       /* caller's rbp at CFA + rbp_off; RBP_KEEP = untouched */
  uint8_t kind;          /* RULE_* */
  uint8_t pad;           /* (unused) */
} HtUnwRule;

/* The previous walk (outermost first, so that a new walk rewrites only
** its inner end) and the thread's front to the table of frame rules. */
typedef struct HtUnwCache {
  uint32_t n;            /* frames of the previous walk, 0 = none */
  int trunc;             /* the previous walk stopped at its frame cap */
  HtUnwRule hot[64];     /* recently used rules, direct-mapped */
  HtUnwFrame fr[HT_MAXFRAMES + 8]; /* the previous walk, outermost first */
  HtUnwFrame in[HT_MAXFRAMES + 8]; /* scratch: this walk, innermost first */
} HtUnwCache;

typedef struct ThreadRec {
  _Atomic int state;     /* 0 idle, 1 owner appending (CAS protocol), 2 flusher
                         ** swapping, 3 closed */
  _Atomic int busy;      /* owner appending (fence protocol, ht_g.asym) */
  _Atomic int linger;    /* 1 after its thread's last key destructor */
  uint64_t linger_ns;    /* when it started lingering */
  struct ThreadRec *next;/* registry list (push-only) */
  HtStream st;           /* the encoder */
  HtBuf *buf;            /* buffer under st (NULL: none) */
  uint32_t tid;          /* kernel thread id */
  uint32_t pid;          /* process the record belongs to */
  int reset_pending;     /* stack tree must restart (after a drop) */
  uint64_t lost;         /* events dropped, not yet reported */
  StackNode *nodes;      /* stack tree hash table */
  uint32_t nodes_mask;   /* slots - 1 */
  int nodes_mapped;      /* nodes came from mmap (grown), not the arena */
  uint32_t next_id;      /* next stack id to define */
  uint32_t prev_n;       /* frames of the previous stack */
  uint64_t prev_val[HT_MAXFRAMES]; /* previous stack, outermost first */
  uint32_t prev_id[HT_MAXFRAMES];  /* its node ids */
  int64_t sample_left;   /* bytes until the next sample point */
  uint64_t rng;          /* PRNG state */
  uintptr_t stk_lo, stk_hi; /* stack bounds for frame-pointer checks */
  HtUnwCache unw;        /* previous libunwind walk (stack-prefix cache) */
  uint64_t seq_next, seq_end; /* sequence numbers reserved for this thread */
  uint32_t seq_mode;     /* ht_g.seq_mode they were reserved under */
} ThreadRec;

/* Register for membarrier and choose the owner protocol (each process). */
void ht_record_fences(void) HT_HIDDEN;
/* A sequence number for RSS, MODULE and LOST records (record.c). */
uint64_t ht_seq_shared(void) HT_HIDDEN;

/* Global recorder state shared by record.c and tape.c. */
typedef struct HtGlobal {
  _Atomic int setup;     /* 0 before the recorder's set-up (tape.c), 1 during, 2 after */
  _Atomic int running;   /* recording native/runtime events */
  _Atomic int native;    /* record the process's malloc/free */
  _Atomic uint64_t seq;  /* global sequence counter (next to hand out) */
  _Atomic uint32_t seq_mode; /* epoch << 1 | 1 once two threads record */
  _Atomic uint32_t claims;   /* threads that began recording this session */
  int asym;              /* owners enter without a locked instruction: the
                         ** flusher fences them with membarrier (record.c) */
  _Atomic(ThreadRec *) threads; /* registry of thread records */
  _Atomic uint64_t lost; /* events dropped overall */
  uint32_t pid;          /* recording process */
  uint64_t t0;           /* CLOCK_MONOTONIC at start, ns */
  uint64_t sample;       /* sampling interval in bytes, 0 = all */
  int unwind;            /* HT_UNWIND_* in use */
  int frames;            /* frames to capture */
  uintptr_t self_lo, self_hi; /* text range of libheaptape.so */
} HtGlobal;

extern HtGlobal ht_g HT_HIDDEN;

/* -- Hot path entry points used by preload.c -------------------------------- */
/* The checks that decide "nothing to record" are inline here, so that an
** interposer pays no call for them and unwinding sees one frame fewer. */
extern HT_TLS int ht_guard HT_HIDDEN;              /* >0 while inside the recorder */
extern HT_TLS struct ThreadRec *ht_tls_rec HT_HIDDEN; /* this thread's record */

/* Record an allocation just made (slow path; pre from ht_record_due). */
void ht_record_alloc(void *p, size_t n, unsigned kind, size_t align, int pre) HT_HIDDEN;
/* Record a free and make it (slow path, the block may be on the tape). */
void ht_record_free_slow(void *p, unsigned kind, size_t size) HT_HIDDEN;
void *ht_record_calloc(size_t n, size_t m) HT_HIDDEN;
void *ht_record_memalign(size_t align, size_t n, unsigned kind) HT_HIDDEN;
void *ht_record_valloc(size_t n, int page_round) HT_HIDDEN;
void *ht_record_realloc(void *p, size_t n) HT_HIDDEN;
/* Finalise from _exit: flush everything, write the trailer with status. */
void ht_record_exit(int status) HT_HIDDEN;
/* Remember the exit status (exit, quick_exit, return from main) for the trailer. */
void ht_record_status(int status) HT_HIDDEN;
/* pthread_exit is ending the calling thread (the main one: see tape.c). */
void ht_record_thread_exit(void) HT_HIDDEN;
/* Before an exec: flush everything and write the trailer; 1 if it did. */
int ht_record_exec(void) HT_HIDDEN;
/* The exec returned (failed): continue recording in a new tape. */
void ht_record_exec_failed(void) HT_HIDDEN;

/* Record an event that the caller already performed (pool and runtime API). */
int ht_record_event_alloc(const void *p, size_t n, unsigned kind,
                          const uint64_t *rt_vals, size_t depth) HT_HIDDEN;
int ht_record_event_free(const void *p, unsigned kind) HT_HIDDEN;
int ht_record_event_string(unsigned type, const char *s) HT_HIDDEN;

/* Enumerate thread records for the flusher (tape.c). */
void ht_record_thread_init(ThreadRec *t) HT_HIDDEN;
/* Take a partially filled buffer away from t; 1 if done, 0 if busy. */
int ht_record_steal(ThreadRec *t, int final) HT_HIDDEN;
/* Is t held by the calling thread, interrupted inside an append? */
int ht_record_held_here(ThreadRec *t) HT_HIDDEN;
/* Close t without its unfinished buffer (its events count as lost). */
void ht_record_abandon(ThreadRec *t) HT_HIDDEN;
/* Thread-exit key and stack size bound (constructor). */
void ht_record_setup(void) HT_HIDDEN;
/* Forget the registry (fork child). */
void ht_record_forget_threads(void) HT_HIDDEN;
/* Nanoseconds since start on the coarse clock. */
uint64_t ht_clock_coarse(void) HT_HIDDEN;
uint64_t ht_clock_ns(int clk) HT_HIDDEN;

/* -- Signal masks (sigmask.c) ------------------------------------------------ */
/* sigprocmask for code inside the recorder: glibc's internal signals keep
** their state (glibc's own restore would unblock them). */
int ht_sigmask(int how, const sigset_t *set, sigset_t *old) HT_HIDDEN;
/* Block every signal but glibc's internal ones; *saved gets the old mask. */
void ht_sigmask_block_all(uint64_t *saved) HT_HIDDEN;
void ht_sigmask_restore(uint64_t saved) HT_HIDDEN;

/* -- Sampler (sampler.c) ----------------------------------------------------- */
/* Exponential gap with mean t bytes, drawn from *rng. */
int64_t ht_sampler_gap(uint64_t *rng, uint64_t t) HT_HIDDEN;
/* Set of sampled live addresses. */
int ht_sampler_init(void) HT_HIDDEN;
int ht_sampler_add(uintptr_t a) HT_HIDDEN;
int ht_sampler_remove(uintptr_t a) HT_HIDDEN;
#define FILT_BITS 16     /* counting filter: 64 KiB of 8-bit counters */
extern _Atomic uint8_t *ht_sampler_filt HT_HIDDEN; /* counters by address hash */
/* Filter bucket of address a (other bits than the set's home slot). */
HT_INLINE uint32_t ht_sampler_bucket(uintptr_t a)
{
  return (uint32_t)(((uint64_t)a * 0xc2b2ae3d27d4eb4fULL) >> (64 - FILT_BITS));
}
/* 0 when a is certainly not a live sampled block (one byte load). */
HT_INLINE int ht_sampler_maybe(uintptr_t a)
{
  return atomic_load_explicit(&ht_sampler_filt[ht_sampler_bucket(a)],
                              memory_order_relaxed) != 0;
}
void ht_sampler_clear(void) HT_HIDDEN;

/* -- Unwinders (unwind_*.c) --------------------------------------------------- */
/* Fill ips innermost first; returns the number of frames. */
int ht_unwind_fp(uintptr_t *ips, int max, uintptr_t lo, uintptr_t hi) HT_HIDDEN;
int ht_unwind_cached(HtUnwCache *uc, uintptr_t *ips, int max, uintptr_t lo,
                     uintptr_t hi, int *in_fr) HT_HIDDEN;
void ht_unwind_init(void) HT_HIDDEN;

/* -- Module map (maps.c) ------------------------------------------------------ */
/* Emit MODULE records for every object loaded or unloaded since last call. */
void ht_maps_scan(HtStream *s) HT_HIDDEN;
/* Cheap check: did dl_iterate_phdr's add/sub counters move? */
int ht_maps_changed(void) HT_HIDDEN;
void ht_maps_reset(void) HT_HIDDEN;
/* Text range of the object containing addr. */
void ht_maps_self(const void *addr, uintptr_t *lo, uintptr_t *hi) HT_HIDDEN;

/* -- Tape control (tape.c) ---------------------------------------------------- */
/* Start with a sink (embedded API). */
int ht_tape_start(HtSink sink, void *arg, int (*on_stop)(void *),
                  const HtTapeInfo *info) HT_HIDDEN;
/* Stop: drain all threads, write dictionary and trailer; ending: the
** process ends or execs (maybe in a signal handler): free nothing. */
int ht_tape_stop(uint64_t status, int ending) HT_HIDDEN;
/* Declare a runtime location for the dictionary written at stop. */
int ht_tape_loc(uint64_t id, int kind, const char *name, const char *file,
                uint32_t line, uint64_t aux) HT_HIDDEN;
/* Fork hooks. */
void ht_tape_atfork_prepare(void) HT_HIDDEN;
void ht_tape_atfork_parent(void) HT_HIDDEN;
void ht_tape_atfork_child(void) HT_HIDDEN;

/* -- Inline fast paths of the interposers ------------------------------------- */

/* Recording native events right now, and not re-entering? */
HT_INLINE int ht_record_on(void)
{
  return HT_LIKELY(!ht_guard) &&
         atomic_load_explicit(&ht_g.native, memory_order_relaxed);
}

/* Set up and start now, ahead of the constructor; 1 if now recording (tape.c). */
int ht_record_early(void) HT_HIDDEN;

/* Recording, or just started: an allocation made before the recorder's
** constructor ran (another library's initialiser) starts it. Costs one load
** on the path that does not record. */
HT_INLINE int ht_record_active(void)
{
  if (HT_LIKELY(ht_record_on())) return 1;
  return HT_UNLIKELY(!atomic_load_explicit(&ht_g.setup, memory_order_relaxed)) &&
         ht_record_early();
}

/* Sampling pre-check of an n-byte block: 1 certainly not sampled (done),
** 2 a sample point fell in it, 0 not decided here (full trace, new thread). */
HT_INLINE int ht_record_due(uint64_t n)
{
  ThreadRec *t = ht_tls_rec;
  if (!ht_g.sample || HT_UNLIKELY(!t)) return 0;
  t->sample_left -= (int64_t)n;
  return HT_LIKELY(t->sample_left > 0) ? 1 : 2;
}

/* malloc and the operator new family. The sampling decision comes before
** the call, so an unsampled block is a tail call to glibc (a failed call
** still counts its bytes: a bias only on allocation failure). */
HT_INLINE void *ht_record_malloc(size_t n, unsigned kind)
{
  if (!ht_record_active()) return __libc_malloc(n);
  int pre = ht_record_due(n);
  if (HT_LIKELY(pre == 1)) return __libc_malloc(n);
  ht_guard++;
  void *p = __libc_malloc(n);
  if (p) ht_record_alloc(p, n, kind, 0, pre);
  ht_guard--;
  return p;
}

/* free, delete and their sized variants: an unsampled block costs one load. */
HT_INLINE void ht_record_free(void *p, unsigned kind, size_t size)
{
  if (!p) return;
  if (!ht_record_on() || (ht_g.sample && !ht_sampler_maybe((uintptr_t)p))) {
    __libc_free(p);
    return;
  }
  ht_record_free_slow(p, kind, size);
}

#endif

/* heaptape -- the recorder's hot path (record.c): per-thread records, the
** global state, events, and the inline checks every interposer makes first. */
#ifndef HT_RECORD_H
#define HT_RECORD_H

#include "recdef.h"
#include "bufpool.h"
#include "sampler.h"
#include "unwind.h"

/* -- Per-thread state ------------------------------------------------------- */
typedef struct StackNode {
  uint64_t value;        /* frame value (ip << 1), 0 = empty slot */
  uint32_t parent;       /* parent node id */
  uint32_t id;           /* this node's id */
} StackNode;

/* Who holds a thread record's stream (ThreadRec.state; record.c "Owner and
** flusher" tells the protocol). */
enum {
  HT_TS_IDLE = 0,        /* nobody: the owner may append, the flusher steal */
  HT_TS_OWNER = 1,       /* the owner is appending (CAS protocol) */
  HT_TS_FLUSHER = 2,     /* the flusher swaps its buffer, or it is being set up */
  HT_TS_CLOSED = 3       /* closed by a stop; revived by the owner on a restart */
};

typedef struct ThreadRec {
  _Atomic int state;     /* HT_TS_* */
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
  int rt_due;            /* the next runtime allocation is recorded without a
                            new draw: 1 heaptape_rt_due found a sample point,
                            2 the runtime's own (heaptape_rt_take) */
  uint64_t rt_weight;    /* heaptape_rt_take's weight for that allocation */
  uint64_t rng;          /* PRNG state */
  uintptr_t stk_lo, stk_hi; /* stack bounds for frame-pointer checks */
  HtUnwCache unw;        /* previous libunwind walk (stack-prefix cache) */
  uint64_t seq_next, seq_end; /* sequence numbers reserved for this thread */
  uint32_t seq_mode;     /* ht_g.seq_mode they were reserved under */
  uint64_t void_lo, void_n; /* numbers of a block left unused, to be said
                            (EXT VOID) before the thread's next record */
} ThreadRec;

/* Global recorder state: record.c reads it on every event, tape.c sets it
** at start and stop, lifecycle.c at set-up. */
typedef struct HtGlobal {
  _Atomic int setup;     /* 0 before the recorder's set-up (lifecycle.c), 1 during, 2 after */
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
  uint64_t sample;       /* sampling interval in bytes, 0 = all */
  int unwind;            /* HT_UNWIND_* in use */
  int frames;            /* frames to capture */
  uintptr_t self_lo, self_hi; /* text range of libheaptape.so */
} HtGlobal;

extern HtGlobal ht_g HT_HIDDEN;
extern HT_TLS ThreadRec *ht_tls_rec HT_HIDDEN; /* this thread's record */

/* -- Events of the interposers (slow paths; preload.c made the checks) ------ */
/* Record an allocation just made (pre from ht_record_due). */
void ht_record_alloc(void *p, size_t n, unsigned kind, size_t align, int pre) HT_HIDDEN;
/* Record a free and make it (the block may be on the tape). */
void ht_record_free_slow(void *p, unsigned kind, size_t size) HT_HIDDEN;
/* The real call, recorded: called only while recording. */
void *ht_record_calloc(size_t n, size_t m) HT_HIDDEN;
void *ht_record_memalign(size_t align, size_t n, unsigned kind) HT_HIDDEN;
void *ht_record_valloc(size_t n, int page_round) HT_HIDDEN;
void *ht_record_realloc(void *p, size_t n) HT_HIDDEN;

/* -- Events reported through the public API ---------------------------------- */
/* Record an event that the caller already performed (pool and runtime API). */
int ht_record_event_alloc(const void *p, size_t n, unsigned kind,
                          const uint64_t *rt_vals, size_t depth) HT_HIDDEN;
int ht_record_event_free(const void *p, unsigned kind) HT_HIDDEN;
/* The calling thread's native stack, innermost first, heaptape's frames left
** out (heaptape_native_stack); 0 when not recording or inside the recorder. */
int ht_record_native_stack(uintptr_t *ips, int max) HT_HIDDEN;
/* Whether a runtime allocation of n bytes is recorded (heaptape_rt_due). */
int ht_record_event_due(size_t n) HT_HIDDEN;
/* A gap of the recording's sampler / the next runtime allocation taken as a
** sample point (heaptape_rt_gap, heaptape_rt_take). */
uint64_t ht_record_event_gap(void) HT_HIDDEN;
int ht_record_event_take(uint64_t weight) HT_HIDDEN;
int ht_record_event_string(unsigned type, const char *s) HT_HIDDEN;

/* -- For the flusher and the session's owner (tape.c, lifecycle.c) ----------- */
/* A sequence number for RSS, MODULE and LOST records. */
uint64_t ht_record_seq_shared(void) HT_HIDDEN;
/* Take a partially filled buffer away from t; 1 if done, 0 if busy. */
int ht_record_steal(ThreadRec *t, int final) HT_HIDDEN;
/* Is t held by the calling thread, interrupted inside an append? */
int ht_record_held_here(ThreadRec *t) HT_HIDDEN;
/* Close t without its unfinished buffer (its events count as lost). */
void ht_record_abandon(ThreadRec *t) HT_HIDDEN;
/* Thread-exit key and stack size bound (set-up, once per process). */
void ht_record_setup(void) HT_HIDDEN;
/* Register for membarrier and choose the owner protocol (each process). */
void ht_record_fences(void) HT_HIDDEN;
/* Forget the registry (fork child). */
void ht_record_forget_threads(void) HT_HIDDEN;

/* -- Inline fast paths of the interposers ------------------------------------- */
/* The checks that decide "nothing to record" are inline, so that an
** interposer pays no call for them and unwinding sees one frame fewer. */

/* Recording native events right now, and not re-entering? */
HT_INLINE int ht_record_on(void)
{
  return HT_LIKELY(!ht_guard) &&
         atomic_load_explicit(&ht_g.native, memory_order_relaxed);
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

/* heaptape -- the Python module's internal interface between its files:
** pyheaptape.c (sessions, allocator hooks, the Python API) and ph_stack.c
** (frame walks, the location cache, native interleaving). CPython 3.11. */
#ifndef PH_H
#define PH_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdatomic.h>
#include <stdint.h>

#include "../include/heaptape.h"

#define PH_API __attribute__((visibility("default")))
#define PH_MAXDEPTH 128           /* Python frames kept per event at most */
#define PH_MAXNATIVE 128          /* native frames read per event (=native) */
#define PH_LOCS (1u << 16)        /* location intern slots */
#define PH_ARENA (8u << 20)       /* bytes for interned names */
#define PH_FC_BITS 14             /* frame cache: 2^14 entries, direct-mapped */
#define PH_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define PH_LIKELY(x) __builtin_expect(!!(x), 1)

/* An interned runtime location. */
typedef struct PhLoc {
  uint64_t hash;           /* 0 = empty slot */
  const char *file;        /* filename (arena) */
  const char *name;        /* qualname (arena) */
  uint32_t line;           /* current line */
  uint32_t first;          /* first line of the function */
} PhLoc;

/* A frame cache entry: the location of (code object, instruction offset). */
typedef struct PhFrame {
  const void *code;        /* PyCodeObject * */
  intptr_t off;            /* instruction offset in code units */
  uint64_t id;             /* interned location */
  uint64_t gen;            /* ph.gen when stored; any other value = empty */
} PhFrame;

/* The one profiled interpreter of the process. */
typedef struct PhProf {
  PyMemAllocatorEx orig[3]; /* raw, mem, obj allocators before ours */
  int installed;            /* our hooks are the interpreter's allocators */
  int split;                /* sampled over pymalloc: the mem and object
                               domains keep its free (pyheaptape.c) */
  destructor code_dealloc;  /* PyCode_Type's tp_dealloc before ours */
  atomic_int active;        /* a session runs */
  int own_tape;             /* we started the tape (vs. attached to a preload) */
  int native;               /* interleave native frames (--python=native) */
  int maxdepth;             /* frames kept per event */
  uint64_t sample;          /* the recording's sampling interval (0: every event) */
  const volatile unsigned char *filt; /* its sampled-address filter (NULL: not
                               sampled, every free is reported) */
  uint32_t session;         /* bumped per session: threads' countdowns restart */
  atomic_flag lock;         /* the caches and intern tables (raw hooks run
                               without the GIL) */
  uint64_t gen;             /* frame cache generation: bumped when a code
                               object is freed, and per session */
  PhFrame *fc;              /* frame cache (mmap) */
  PhLoc *loc;               /* intern table (mmap) */
  char *arena;              /* interned names (mmap) */
  size_t arena_used;        /* bytes used */
  uint32_t nloc;            /* locations interned */
  uint64_t internal_id;     /* the INTERNAL location (no Python frame) */
  uintptr_t eval_lo, eval_hi; /* _PyEval_EvalFrameDefault's code (=native) */
  uintptr_t self_lo, self_hi; /* this module's code (its frames are dropped) */
} PhProf;

extern PhProf ph;

/* ph_stack.c: fresh tables for a session (0, or -1 out of memory). */
int ph_stack_tables(void);
/* ph_stack.c: find _PyEval_EvalFrameDefault and this module's code; NULL or why not. */
const char *ph_stack_verify(void);
/* ph_stack.c: the stack of the calling thread as frame values, outermost
** first, into out[PH_MAXDEPTH + PH_MAXNATIVE]; tstate may be NULL. */
int ph_stack_where(PyThreadState *tstate, uint64_t *out);
/* ph_stack.c: a freed code object leaves the cache (from its tp_dealloc). */
void ph_stack_forget(const void *p);

#endif

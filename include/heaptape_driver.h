/* heaptape -- the allocator driver interface of `heaptape replay`.
** A driver is a shared object exporting heaptape_driver_get(); see docs/ALLOCATORS.md. */
#ifndef HEAPTAPE_DRIVER_H
#define HEAPTAPE_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
** How a driver is used.
**
** `heaptape replay --driver ./mydriver.so TAPE` starts one replay runner
** process per driver (fork + exec of heaptape-replay). The runner dlopens
** the driver, calls heaptape_driver_get() once, and replays every operation
** of the tape on ONE thread, in the tape's global order, through the table
** of functions below. Nothing else in that process allocates during the
** replay (the runner's own tables are mmap'd before it starts), so the
** process's RSS and mapped memory belong to the driver's allocator.
**
** Threads: every function is called from the runner's main thread only;
** drivers need no locking.
**
** Ownership: `state` is whatever init() stored; the runner passes it back
** unchanged and never looks inside. Blocks returned by malloc / calloc /
** realloc / aligned belong to the runner until it passes them to free or
** realloc. The runner writes into every block it gets (one byte per page,
** or every byte with --touch all), so a block must be writable memory --
** unless the driver has lock(), see below.
**
** Handles: every block of the tape has a handle, an integer unique over
** the whole run (addresses are reused, handles never are). Drivers may use
** it as a key; most ignore it.
**
** Failure: an allocation that returns NULL is retried once if oom() is set
** and returns nonzero; if it fails again it is counted as a failure and
** the block does not exist for the rest of the replay (its free is
** skipped, a realloc of it becomes an allocation). A failed realloc
** leaves the old block live, as realloc(3) does.
**
** Handle-based (moving) allocators: when lock() is set, the pointer a
** driver returns is an opaque handle; the runner calls lock(h) to get the
** block's address before touching it and unlock(h) right after. With
** `heaptape replay --locks MODEL` the runner also locks and unlocks blocks
** where the locking model says the program holds them (Lock/Unlock ops):
** locks nest (a block locked twice needs two unlocks before it may move),
** and a block is always unlocked before it is freed or reallocated. A
** driver without lock() never sees those ops.
*/

/* Version 2 added the compaction counters of heaptape_driver_stats; the
** runner takes drivers of version 1 and 2 (a version 1 driver fills the
** first three fields only). */
#define HEAPTAPE_DRIVER_VERSION 2

/* What a driver knows about its own heap; fields it cannot tell stay 0. */
typedef struct heaptape_driver_stats {
  uint64_t in_use;           /* bytes the program holds (allocator's view) */
  uint64_t mapped;           /* bytes the allocator has obtained from the OS */
  uint64_t highest;          /* highest address handed out (0 = unknown) */
  /* Version 2: moving allocators. */
  uint64_t compactions;      /* compaction passes so far */
  uint64_t moved;            /* bytes moved by them so far */
} heaptape_driver_stats;

typedef struct heaptape_driver {
  uint32_t version;          /* HEAPTAPE_DRIVER_VERSION */
  const char *name;          /* short name for reports: [a-z0-9_-]+ */
  const char *preload;       /* library the runner must be started with
                                (LD_PRELOAD), e.g. "libjemalloc.so.2"; or NULL */
  /* Set the allocator up; args is the text after ':' in --driver PATH:ARGS
  ** (or ""). Store any state in *state. Returns 0, or nonzero to give up. */
  int (*init)(void **state, const char *args);
  /* Tear the allocator down (may be NULL). */
  void (*destroy)(void *state);
  /* A block of size bytes (size may be 0), or NULL. */
  void *(*malloc)(void *state, size_t size, uint64_t handle);
  /* A zeroed block (may be NULL: the runner uses malloc + memset). */
  void *(*calloc)(void *state, size_t size, uint64_t handle);
  /* A block aligned to align (a power of two), or NULL. */
  void *(*aligned)(void *state, size_t align, size_t size, uint64_t handle);
  /* Resize: returns the new block (old is gone) or NULL (old stays).
  ** old_size is the size the block was allocated with. */
  void *(*realloc)(void *state, void *old, size_t old_size, size_t size,
                   uint64_t handle);
  /* Release a block allocated with size bytes. */
  void (*free)(void *state, void *p, size_t size, uint64_t handle);
  /* Out of memory for size bytes: try to make room (compact, purge).
  ** Returns nonzero if the allocation should be retried. May be NULL. */
  int (*oom)(void *state, size_t size);
  /* Handle-based allocators only (else NULL): pin a block and return its
  ** address / unpin it. */
  void *(*lock)(void *state, void *h);
  void (*unlock)(void *state, void *h);
  /* Fill *st with the allocator's own figures; returns 0, or nonzero if it
  ** has none. May be NULL. Called every sampling interval, so keep it cheap. */
  int (*stats)(void *state, heaptape_driver_stats *st);
} heaptape_driver;

/* The one symbol a driver exports: its function table (static storage). */
__attribute__((visibility("default")))
const heaptape_driver *heaptape_driver_get(void);

#ifdef __cplusplus
}
#endif

#endif

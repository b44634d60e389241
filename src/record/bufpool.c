/* heaptape -- the buffer pool: packet bodies mapped in chunks on demand,
** passed around by index on tagged lock-free stacks (free and full). */
#include <string.h>

#include "bufpool.h"

#define BUF_MAX 2048                   /* buffers at most (128 MiB) */
#define BUF_CHUNK 4                    /* buffers mapped together, when first needed */

static _Atomic(HtBuf *) buf_chunk[BUF_MAX / BUF_CHUNK]; /* mapped on demand */
static uint32_t buf_pid;               /* process the pool was set up for */
static _Atomic uint32_t buf_used;      /* buffers handed out of the chunks */
static _Atomic uint64_t buf_free;      /* free stack: tag << 32 | index + 1 */
static _Atomic uint64_t buf_full;      /* full stack, same encoding */

/* Buffer of index i (its chunk is mapped). */
HT_INLINE HtBuf *buf_at(uint32_t i)
{
  return atomic_load_explicit(&buf_chunk[i / BUF_CHUNK], memory_order_acquire) +
         i % BUF_CHUNK;
}

/* Index + 1 of a buffer. */
HT_INLINE uint32_t buf_ref(HtBuf *b) { return b->self; }

/* Map the chunk of buffer i unless it is; -1 when memory is refused. Only
** what a program's threads use is ever mapped (a single-threaded program:
** one chunk), so a tight RLIMIT_AS is not spent on buffers it never needs. */
static int buf_chunk_map(uint32_t i)
{
  _Atomic(HtBuf *) *c = &buf_chunk[i / BUF_CHUNK];
  if (HT_LIKELY(atomic_load_explicit(c, memory_order_acquire) != NULL)) return 0;
  HtBuf *p = ht_arena_alloc(BUF_CHUNK * sizeof(HtBuf)), *none = NULL;
  if (!p) return -1;
  for (uint32_t k = 0; k < BUF_CHUNK; k++) p[k].self = i / BUF_CHUNK * BUF_CHUNK + k + 1;
  if (!atomic_compare_exchange_strong(c, &none, p))
    ht_arena_free(p, BUF_CHUNK * sizeof(HtBuf));  /* another thread mapped it */
  return 0;
}

/* Push b on a tagged stack. */
static void buf_push(_Atomic uint64_t *head, HtBuf *b)
{
  uint64_t h = atomic_load(head), n;
  do {
    __atomic_store_n(&b->next, (uint32_t)h, __ATOMIC_RELAXED);
    n = ((h >> 32) + 1) << 32 | buf_ref(b);
  } while (!atomic_compare_exchange_weak(head, &h, n));
}

/* A free buffer, or NULL when none is left. */
HtBuf *ht_bufpool_get(void)
{
  uint64_t h = atomic_load(&buf_free);
  while ((uint32_t)h) {
    HtBuf *b = buf_at((uint32_t)h - 1);
    uint64_t n = ((h >> 32) + 1) << 32 | __atomic_load_n(&b->next, __ATOMIC_RELAXED);
    if (atomic_compare_exchange_weak(&buf_free, &h, n)) return b;
  }
  uint32_t i = atomic_fetch_add(&buf_used, 1);
  if (i < BUF_MAX) return buf_chunk_map(i) ? NULL : buf_at(i); /* (a refused i stays unused) */
  atomic_fetch_sub(&buf_used, 1);
  return NULL;
}

/* Seal s's body into b and queue it for writing; s NULL returns b unused. */
void ht_bufpool_queue(HtBuf *b, const HtStream *s)
{
  if (!s) { buf_push(&buf_free, b); return; }
  b->len = (uint32_t)(s->p - s->buf);
  b->nev = s->nev;
  b->tid = s->tid;
  b->seq0 = s->seq0;
  b->seq1 = s->seq_prev;
  b->gen0 = s->gen0;
  b->ts0 = s->ts0;
  buf_push(&buf_full, b);
}

/* Hand every queued buffer to fn, oldest first, and return them to the pool. */
void ht_bufpool_drain(void (*fn)(const HtBuf *b, uint32_t left, void *ctx), void *ctx)
{
  uint64_t h = atomic_exchange(&buf_full, 0);
  uint32_t r = (uint32_t)h, prev = 0, n = 0;
  while (r) {                           /* reverse the LIFO chain */
    HtBuf *b = buf_at(r - 1);
    uint32_t nx = b->next;
    b->next = prev;
    prev = r;
    r = nx;
    n++;
  }
  for (r = prev; r; ) {
    HtBuf *b = buf_at(r - 1);
    r = b->next;
    fn(b, --n, ctx);
    buf_push(&buf_free, b);
  }
}

/* In a new process (the first start, a fork child), forget every buffer: the
** parent's are not ours. A restart in the same process keeps the pool, so a
** buffer a thread still holds is never handed out twice. */
void ht_bufpool_reset(uint32_t pid)
{
  if (buf_pid == pid) return;
  buf_pid = pid;
  atomic_store(&buf_used, 0);
  atomic_store(&buf_free, 0);
  atomic_store(&buf_full, 0);
}

/* heaptape -- the recorder's hot path: per-thread records, stack tree, events.
** guard -> real allocator -> unwind -> append; no lock, no malloc, no syscall. */
#pragma GCC optimize("no-omit-frame-pointer")
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record.h"

HT_TLS ThreadRec *ht_tls_rec;        /* this thread's record */
#define tls_rec ht_tls_rec
static HT_TLS int tls_dead;          /* key destructors are done: never record */
HtGlobal ht_g;

static pthread_key_t rec_key;        /* runs rec_key_dtor at thread exit */
static _Atomic uint64_t rec_count;   /* thread records claimed (seeds PRNGs) */

#define REC_SLOTS (1u << 12)         /* initial stack tree hash slots per thread */
#define REC_SLOTS_MAX (1u << 21)     /* the tree grows to this, then restarts */
/* Room reserved once per event: VOID, RESET, STACK, TIME and two ALLOC/FREE. */
#define REC_NEED(n) (3 + 2 * HT_ULEB_MAX + \
                     1 + 1 + 2 * HT_ULEB_MAX + (size_t)(n) * HT_ULEB_MAX + \
                     1 + HT_ULEB_MAX + 2 * HT_REC_MAX)

/* -- Thread records ------------------------------------------------------- */

static int rec_revive(ThreadRec *t);

/*
** Owner and flusher. The owner appends to its thread's stream on every
** event; the writer thread (the flusher) takes partially filled buffers
** away every 100 ms and at stop. With the CAS protocol the owner CASes
** state IDLE -> OWNER around each event: a locked instruction per event.
** With the fence protocol (ht_g.asym, when the kernel has membarrier's
** private expedited command) the owner stores busy = 1 and reads state,
** with only a compiler barrier between; the flusher CASes state IDLE ->
** FLUSHER, runs membarrier (every thread of the process executes a full
** barrier), then reads busy. As in Dekker's algorithm one of the two sees
** the other's store: the flusher backs off if busy, the owner if state is
** not IDLE.
*/
static HT_NOINLINE int rec_enter_slow(ThreadRec *t);

/* Try to own t's stream. A closed stream revives on restart. */
HT_INLINE int rec_enter(ThreadRec *t)
{
  if (HT_LIKELY(ht_g.asym)) {
    atomic_store_explicit(&t->busy, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (HT_LIKELY(atomic_load_explicit(&t->state, memory_order_acquire) == HT_TS_IDLE)) return 1;
    return rec_enter_slow(t);
  }
  int exp = HT_TS_IDLE;
  while (!atomic_compare_exchange_weak_explicit(&t->state, &exp, HT_TS_OWNER,
                                                memory_order_acquire,
                                                memory_order_relaxed)) {
    if (exp == HT_TS_CLOSED) return rec_revive(t);
    exp = HT_TS_IDLE;
    __builtin_ia32_pause();
  }
  return 1;
}

/* Release t's stream to the flusher. */
HT_INLINE void rec_leave(ThreadRec *t)
{
  if (HT_LIKELY(ht_g.asym)) atomic_store_explicit(&t->busy, 0, memory_order_release);
  else atomic_store_explicit(&t->state, HT_TS_IDLE, memory_order_release);
}

/* Fence protocol, the flusher holds t or it is closed. */
static HT_NOINLINE int rec_enter_slow(ThreadRec *t)
{
  for (;;) {
    atomic_store_explicit(&t->busy, 0, memory_order_release);
    int st;
    while ((st = atomic_load_explicit(&t->state, memory_order_acquire)) == HT_TS_FLUSHER)
      __builtin_ia32_pause();
    if (st == HT_TS_CLOSED) return rec_revive(t);
    atomic_store_explicit(&t->busy, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&t->state, memory_order_acquire) == HT_TS_IDLE) return 1;
  }
}

/* membarrier(2) commands (linux/membarrier.h; expedited: kernel 4.14). */
#define REC_MB_QUERY 0
#define REC_MB_GLOBAL 1
#define REC_MB_PRIVATE_EXPEDITED (1 << 3)
#define REC_MB_REGISTER_PRIVATE_EXPEDITED (1 << 4)

static _Atomic int rec_mb_ok;         /* membarrier still allowed in this process */
static volatile uint8_t *rec_ipi_page; /* page whose protection change fences */

/* Choose the owner protocol for this process (constructor, fork child);
** HEAPTAPE_NO_MEMBARRIER=1 keeps the CAS protocol. */
void ht_record_fences(void)
{
  long cmds = ht_opt.no_membarrier ? -1 : syscall(SYS_membarrier, REC_MB_QUERY, 0, 0);
  ht_g.asym = cmds > 0 && (cmds & REC_MB_REGISTER_PRIVATE_EXPEDITED) &&
              syscall(SYS_membarrier, REC_MB_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  atomic_store(&rec_mb_ok, ht_g.asym);
  if (ht_g.asym && !rec_ipi_page) rec_ipi_page = ht_arena_alloc(4096);
}

/*
** A full barrier on every thread of the process; 0 on success. membarrier
** while the kernel allows it; a seccomp filter may refuse it at any moment
** (EPERM), and then a protection change of a page the process has touched
** does the same work: the TLB shootdown interrupts every CPU that runs one
** of its threads, and the interrupt serialises them (the fallback of .NET's
** FlushProcessWriteBuffers and of folly's asymmetric barrier). A CPU not
** running one of them passed a context switch, which serialises too.
*/
static int rec_fence_all(void)
{
  if (HT_LIKELY(atomic_load_explicit(&rec_mb_ok, memory_order_relaxed))) {
    int e = errno;
    long r = syscall(SYS_membarrier, REC_MB_PRIVATE_EXPEDITED, 0, 0);
    errno = e;
    if (!r) return 0;
    atomic_store(&rec_mb_ok, 0);        /* refused once: never asked again */
  }
  volatile uint8_t *pg = rec_ipi_page;
  if (!pg) return -1;
  pg[0] = 1;                            /* present and writable before the change */
  return mprotect((void *)pg, 4096, PROT_READ) ||
         mprotect((void *)pg, 4096, PROT_READ | PROT_WRITE) ? -1 : 0;
}

/* Flush hook of a thread's stream: hand the full body to the writer thread. */
static void rec_flush(HtStream *s, void *ctx)
{
  ThreadRec *t = ctx;
  HtBuf *nb = ht_bufpool_get();
  for (int i = 0; !nb && i < 2000 && atomic_load(&ht_g.running); i++) {
    struct timespec ts = { 0, 500000 };  /* writer behind: wait up to ~1 s */
    nanosleep(&ts, NULL);
    nb = ht_bufpool_get();
  }
  if (!nb) {                            /* drop the body, say so later */
    t->lost += s->nev;
    atomic_fetch_add(&ht_g.lost, s->nev);
    t->reset_pending = 1;
    ht_stream_reset(s);
    return;
  }
  ht_bufpool_queue(t->buf, s);
  t->buf = nb;
  s->buf = s->p = nb->body;
  s->end = nb->body + HT_BUFBODY;
  ht_stream_reset(s);
}

static uintptr_t rec_stack_size;      /* bound of a thread's stack size (setup) */

/*
** Bounds of the calling thread's stack, from what glibc keeps without a
** lock: a thread's descriptor (pthread_self) sits at the top of its stack
** block, above its TLS; the process's first stack ends at __libc_stack_end.
** Never pthread_getattr_np: it holds the thread's lock while it allocates,
** and an allocation inside it would wait for itself (Rust calls it at the
** start of every thread). lo only tells whether a walk starts on this stack:
** the walkers read nothing below their own frame (unwind_*.c).
*/
static void rec_stack_bounds(ThreadRec *t)
{
  uintptr_t fa = (uintptr_t)__builtin_frame_address(0);
  uintptr_t self = (uintptr_t)pthread_self();
  uintptr_t top = ((uintptr_t)__libc_stack_end + 4095) & ~(uintptr_t)4095;
  uintptr_t hi = 0;
  if (fa < self && self - fa < rec_stack_size) hi = self;
  else if (__libc_stack_end && fa < top && top - fa < rec_stack_size) hi = top;
  t->stk_hi = hi;
  t->stk_lo = hi > rec_stack_size ? hi - rec_stack_size : 0;
}

/* Give t a fresh stream for the calling thread. */
static void rec_thread_init(ThreadRec *t)
{
  t->seq_next = t->seq_end = 0;        /* numbers of another session are void */
  if (atomic_fetch_add(&ht_g.claims, 1))
    atomic_fetch_or(&ht_g.seq_mode, 1); /* a second thread: one number at a time */
  ht_stream_init(&t->st, t->buf->body, HT_BUFBODY, ht_g.pid, t->tid, rec_flush, t);
  t->st.ts_prev = t->st.ts0 = ht_clock_coarse();
  ht_stream_stack_reset(&t->st);       /* the kernel may reuse a dead tid */
  if (t->next_id > 1 || !t->next_id) memset(t->nodes, 0, ((size_t)t->nodes_mask + 1) * sizeof(StackNode));
  t->next_id = 1;
  t->prev_n = 0;
  t->reset_pending = 0;
  uint64_t k = atomic_fetch_add(&rec_count, 1) + 1;
  t->rng = ht_opt.seed * 0x9e3779b97f4a7c15ULL + k * 0xbf58476d1ce4e5b9ULL + 1;
  t->sample_left = ht_g.sample ? ht_sampler_gap(&t->rng, ht_g.sample) : 0;
  t->unw.n = 0;
  rec_stack_bounds(t);
}

/* Claim a record for the calling thread (first event of a thread). */
static HT_NOINLINE ThreadRec *rec_claim(void)
{
  if (tls_dead || !atomic_load(&ht_g.running)) return NULL;
  ThreadRec *t = NULL;
  for (ThreadRec *r = atomic_load(&ht_g.threads); r; r = r->next) {
    int one = 1;
    if (atomic_load(&r->linger) == 1 &&
        atomic_compare_exchange_strong(&r->linger, &one, 0)) { t = r; break; }
  }
  HtBuf *b = ht_bufpool_get();
  if (!b) {
    if (t) atomic_store(&t->linger, 1);
    return NULL;
  }
  if (!t) {
    t = ht_arena_alloc(sizeof(*t));
    StackNode *nodes = ht_arena_alloc(REC_SLOTS * sizeof(StackNode));
    if (!t || !nodes) return NULL;      /* (leaks a page; out of memory anyway) */
    t->nodes = nodes;
    t->nodes_mask = REC_SLOTS - 1;
    atomic_store(&t->state, HT_TS_FLUSHER); /* not flushable until initialised */
    ThreadRec *h = atomic_load(&ht_g.threads);
    do t->next = h; while (!atomic_compare_exchange_weak(&ht_g.threads, &h, t));
  } else {
    for (;;) {                           /* flusher may be looking at it */
      int exp = atomic_load(&t->state);
      if ((exp == HT_TS_IDLE || exp == HT_TS_CLOSED) &&
          atomic_compare_exchange_weak(&t->state, &exp, HT_TS_FLUSHER)) break;
      __builtin_ia32_pause();
    }
  }
  t->buf = b;
  t->tid = (uint32_t)syscall(SYS_gettid);
  t->pid = ht_g.pid;
  rec_thread_init(t);
  char name[17] = "";
  prctl(PR_GET_NAME, name, 0, 0, 0);
  ht_stream_string(&t->st, HT_R_THREAD, atomic_fetch_add(&ht_g.seq, 1), name,
                   strlen(name));
  atomic_store_explicit(&t->state, HT_TS_IDLE, memory_order_release);
  tls_rec = t;
  pthread_setspecific(rec_key, (void *)(uintptr_t)1);
  return t;
}

/* This thread's record, claimed on first use. */
HT_INLINE ThreadRec *rec_get(void)
{
  ThreadRec *t = tls_rec;
  if (HT_LIKELY(t != NULL)) return t;
  return rec_claim();
}

/* A stream closed by a previous stop, used again after a restart (owner). */
static HT_NOINLINE int rec_revive(ThreadRec *t)
{
  if (!atomic_load(&ht_g.running)) return 0;
  int exp = HT_TS_CLOSED;
  if (!atomic_compare_exchange_strong(&t->state, &exp, HT_TS_FLUSHER)) return rec_enter(t);
  HtBuf *b = ht_bufpool_get();
  if (!b) { atomic_store(&t->state, HT_TS_CLOSED); return 0; }
  t->buf = b;
  rec_thread_init(t);
  atomic_store_explicit(&t->state, HT_TS_IDLE, memory_order_release);
  return rec_enter(t);                 /* as any event does */
}

/* Thread exit: after other key destructors ran, flush and retire the record. */
static void rec_key_dtor(void *v)
{
  uintptr_t round = (uintptr_t)v;
  if (round < 3) {                     /* let other destructors run first */
    pthread_setspecific(rec_key, (void *)(round + 1));
    return;
  }
  ht_guard++;
  ThreadRec *t = tls_rec;
  tls_rec = NULL;
  tls_dead = 1;
  if (t && rec_enter(t)) {
    if (t->buf) {
      if (t->st.p != t->st.buf) ht_bufpool_queue(t->buf, &t->st);
      else ht_bufpool_queue(t->buf, NULL);  /* empty: back to the pool */
      t->buf = NULL;
    }
    t->st.buf = t->st.p = t->st.end = NULL;
    rec_leave(t);
    atomic_store(&t->linger, 1);
  }
  ht_guard--;
}

/* Take a partially filled buffer away from t (writer thread); final closes t. */
int ht_record_steal(ThreadRec *t, int final)
{
  int exp = HT_TS_IDLE;
  if (!atomic_compare_exchange_strong_explicit(&t->state, &exp, HT_TS_FLUSHER,
                                               memory_order_acquire,
                                               memory_order_relaxed))
    return exp == HT_TS_CLOSED;
  if (ht_g.asym && (rec_fence_all() ||
                    atomic_load_explicit(&t->busy, memory_order_acquire))) {
    atomic_store_explicit(&t->state, HT_TS_IDLE, memory_order_release);
    return 0;                           /* the owner is appending: later */
  }
  if (t->buf && t->st.p != t->st.buf) {
    HtBuf *nb = final ? NULL : ht_bufpool_get();
    if (nb || final) {
      ht_bufpool_queue(t->buf, &t->st);
      t->buf = nb;
      if (nb) {
        t->st.buf = t->st.p = nb->body;
        t->st.end = nb->body + HT_BUFBODY;
        ht_stream_reset(&t->st);
      }
    }
  }
  if (final && t->buf) {                /* empty: back to the pool */
    ht_bufpool_queue(t->buf, NULL);
    t->buf = NULL;
  }
  if (final) t->st.buf = t->st.p = t->st.end = NULL;
  atomic_store_explicit(&t->state, final ? HT_TS_CLOSED : HT_TS_IDLE, memory_order_release);
  return 1;
}

/* Is t's stream held by the calling thread, interrupted inside an append (a
** signal handler that ends the process while its thread was recording)? */
int ht_record_held_here(ThreadRec *t)
{
  if (t != tls_rec) return 0;
  return ht_g.asym ? atomic_load(&t->busy) == 1 : atomic_load(&t->state) == HT_TS_OWNER;
}

/* Close t without taking its buffer, whose last record may be half written:
** its events count as lost. The buffer stays with t, never reused. */
void ht_record_abandon(ThreadRec *t)
{
  atomic_fetch_add(&ht_g.lost, t->st.nev);
  atomic_store_explicit(&t->state, HT_TS_CLOSED, memory_order_release);
}

/* Forget every thread record (fork child): the parent's threads are gone. */
void ht_record_forget_threads(void)
{
  atomic_store(&ht_g.threads, NULL);
  tls_rec = NULL;
  tls_dead = 0;
}

/* -- Stack tree ----------------------------------------------------------- */

/* Slot of (parent, value) in t's table: the match or the empty slot to use. */
HT_INLINE StackNode *rec_slot(ThreadRec *t, uint32_t parent, uint64_t value)
{
  uint64_t h = (value ^ ((uint64_t)parent << 40) ^ parent) * 0x9e3779b97f4a7c15ULL;
  uint32_t i = (uint32_t)(h >> 40) & t->nodes_mask;
  for (;;) {
    StackNode *n = &t->nodes[i];
    if (!n->value || (n->value == value && n->parent == parent)) return n;
    i = (i + 1) & t->nodes_mask;
  }
}

/* Double t's stack tree table (rare: a few times in a thread's life, so the
** mmap is acceptable off the common path); 0, or -1 when it cannot grow. A
** program with many distinct stacks then keeps its ids instead of restarting
** the tree and defining every node again. */
static int rec_tree_grow(ThreadRec *t)
{
  size_t n = ((size_t)t->nodes_mask + 1) * 2;
  if (n > REC_SLOTS_MAX) return -1;
  StackNode *old = t->nodes, *nn = mmap(NULL, n * sizeof(StackNode),
      PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (nn == MAP_FAILED) return -1;
  size_t on = (size_t)t->nodes_mask + 1;
  t->nodes = nn;
  t->nodes_mask = (uint32_t)n - 1;
  for (size_t i = 0; i < on; i++)
    if (old[i].value) *rec_slot(t, old[i].parent, old[i].value) = old[i];
  if (t->nodes_mapped) munmap(old, on * sizeof(StackNode));
  t->nodes_mapped = 1; /* (an initial arena table is not returned) */
  return 0;
}

/* Map a stack (values outermost first) to its leaf id, defining new nodes. */
static uint32_t rec_stack(ThreadRec *t, const uint64_t *v, uint32_t n)
{
  uint32_t i = 0, parent = 0;
  uint32_t m = n < t->prev_n ? n : t->prev_n;
  while (i < m && t->prev_val[i] == v[i]) i++;
  if (i) parent = t->prev_id[i - 1];
  for (; i < n; i++) {                  /* known continuations */
    StackNode *s = rec_slot(t, parent, v[i]);
    if (!s->value) break;
    parent = t->prev_id[i] = s->id;
    t->prev_val[i] = v[i];
  }
  if (i < n) {                          /* the rest is new: one STACK record */
    if (t->next_id + (n - i) > (t->nodes_mask + 1) / 2 && rec_tree_grow(t)) {
      ht_stream_stack_reset(&t->st);
      memset(t->nodes, 0, ((size_t)t->nodes_mask + 1) * sizeof(StackNode));
      t->next_id = 1;
      i = 0;
      parent = 0;
    }
    ht_stream_stack_define(&t->st, t->next_id, parent, v + i, n - i);
    for (; i < n; i++) {
      StackNode *s = rec_slot(t, parent, v[i]);
      s->value = v[i];
      s->parent = parent;
      s->id = t->next_id++;
      parent = t->prev_id[i] = s->id;
      t->prev_val[i] = v[i];
    }
  }
  t->prev_n = n;
  return n ? t->prev_id[n - 1] : 0;
}

/* Capture the native stack, skipping heaptape's own frames; values outermost first. */
static uint32_t rec_capture(ThreadRec *t, uint64_t *v)
{
  uintptr_t ips[HT_MAXFRAMES + 8];
  int max = ht_g.frames + 8, n = 0, in_fr = 0, m = 0;
  if (ht_g.unwind == HT_UNWIND_LIBUNWIND)
    n = ht_unwind_cached(&t->unw, ips, max, t->stk_lo, t->stk_hi, &in_fr);
  else if (ht_g.unwind == HT_UNWIND_FP) n = ht_unwind_fp(ips, max, t->stk_lo, t->stk_hi);
  /* Drop heaptape's own frames: the interposer at the inner end, and the
  ** main() wrapper (which learns the exit status) near the outer end. */
  if (in_fr) {                          /* t->unw.fr: outermost first already */
    const HtUnwFrame *f = t->unw.fr;
    for (int j = 0; j < n; j++)
      if (f[j].ip < ht_g.self_lo || f[j].ip >= ht_g.self_hi) v[m++] = (uint64_t)f[j].ip << 1;
    if (m > ht_g.frames) {              /* keep the innermost frames */
      memmove(v, v + (m - ht_g.frames), (size_t)ht_g.frames * sizeof(*v));
      m = ht_g.frames;
    }
    return (uint32_t)m;
  }
  for (int j = 0; j < n; j++)
    if (ips[j] < ht_g.self_lo || ips[j] >= ht_g.self_hi) ips[m++] = ips[j];
  if (m > ht_g.frames) m = ht_g.frames;
  for (int j = 0; j < m; j++) v[j] = (uint64_t)ips[m - 1 - j] << 1;
  return (uint32_t)m;
}

/* -- Sequence numbers -------------------------------------------------------- */

/*
** Every event takes a global sequence number; readers merge the threads'
** streams by it. While a single thread records (the common case: one
** interpreter, one main loop) it reserves REC_SEQ_BLOCK numbers with one
** locked add and hands them out itself; the locked add per event was
** ~6-8% of a recorded Lua run. The first event of a second thread sets bit 0 of
** seq_mode before that thread takes any number, and from then on every
** thread takes one number per event. This keeps the order exact: if an
** event E2 of one thread causally follows an event E1 of another (a block
** freed by one and reused by the other, through the allocator's lock or
** the program's own synchronisation), the thread of E2 sees the mode bit
** (set before E1, which happens-before E2) and takes a number after E1's;
** numbers taken from a block reserved before E1 only go to events that
** happen before E1 or are concurrent with it. Records that belong to no
** thread's events (RSS, MODULE, LOST: ht_record_seq_shared) move the epoch in the
** upper bits of seq_mode after taking their number, so that a thread idle
** on a half-used block does not sort its next events before them. Numbers
** left in a block are never used (gaps are allowed in the format), and the
** thread says so in its stream before its next event (EXT VOID): one
** following the journal need not wait for another thread's packet to fill
** them (the writer takes its RSS number before it takes the threads'
** partial packets, so the VOID is mostly in the packet it takes). Always
** called with the guard raised, so a signal handler never takes the same
** number.
*/
#define REC_SEQ_BLOCK 256

static HT_NOINLINE uint64_t rec_seq_slow(ThreadRec *t)
{
  uint32_t mode = atomic_load(&ht_g.seq_mode);
  if (t->seq_next < t->seq_end) {       /* the epoch moved: the rest is void */
    t->void_lo = t->seq_next;
    t->void_n = t->seq_end - t->seq_next;
  }
  if (mode & 1) {
    t->seq_end = 0;
    return atomic_fetch_add_explicit(&ht_g.seq, 1, memory_order_relaxed);
  }
  uint64_t s = atomic_fetch_add_explicit(&ht_g.seq, REC_SEQ_BLOCK, memory_order_relaxed);
  t->seq_next = s + 1;
  t->seq_end = s + REC_SEQ_BLOCK;
  t->seq_mode = mode;
  return s;
}

/* A sequence number for a record of no thread's events (see above). */
uint64_t ht_record_seq_shared(void)
{
  uint64_t s = atomic_fetch_add(&ht_g.seq, 1);
  atomic_fetch_add(&ht_g.seq_mode, 2);  /* blocks reserved before s are void */
  return s;
}

/* The sequence number of t's next event. */
HT_INLINE uint64_t rec_seq(ThreadRec *t)
{
  if (HT_LIKELY(t->seq_next < t->seq_end) &&
      HT_LIKELY(t->seq_mode == atomic_load_explicit(&ht_g.seq_mode, memory_order_relaxed)))
    return t->seq_next++;
  return rec_seq_slow(t);
}

/* -- Events --------------------------------------------------------------- */

/* Prepare t's stream for one event with a stack of n frames (owner holds t). */
HT_INLINE void rec_prepare(ThreadRec *t, uint32_t n)
{
  ht_stream_need(&t->st, REC_NEED(n));
  if (HT_UNLIKELY(t->void_n)) {
    ht_stream_void(&t->st, t->void_lo, t->void_n);
    t->void_n = 0;
  }
  if (HT_UNLIKELY(t->reset_pending)) {
    t->reset_pending = 0;
    ht_stream_stack_reset(&t->st);
    memset(t->nodes, 0, ((size_t)t->nodes_mask + 1) * sizeof(StackNode));
    t->next_id = 1;
    t->prev_n = 0;
  }
  if (HT_UNLIKELY(t->lost)) {
    ht_stream_value(&t->st, HT_R_LOST, atomic_fetch_add(&ht_g.seq, 1), t->lost);
    t->lost = 0;
  }
  ht_stream_time(&t->st, ht_clock_coarse());
}

/* Sampling decision for a new block of n bytes at p; 1 = record it.
** pre 2: ht_record_due already subtracted n and found a sample point;
** pre 3: the runtime found the sample point itself (heaptape_rt_take). */
HT_INLINE int rec_sample(ThreadRec *t, const void *p, uint64_t n, int pre)
{
  if (HT_LIKELY(!ht_g.sample)) return 1;
  if (pre == 3) return ht_sampler_add((uintptr_t)p) == 0;
  if (pre != 2) t->sample_left -= (int64_t)n;
  if (HT_LIKELY(t->sample_left > 0)) return 0;
  while (t->sample_left <= 0) t->sample_left += ht_sampler_gap(&t->rng, ht_g.sample);
  return ht_sampler_add((uintptr_t)p) == 0;
}

/* Record an allocation already made; vals/depth give a runtime stack. */
HT_INLINE void rec_alloc(const void *p, uint64_t n, unsigned kind, uint64_t align,
                      const uint64_t *rt, uint32_t depth, int pre)
{
  ThreadRec *t = rec_get();
  if (HT_UNLIKELY(!t) || !rec_sample(t, p, n, pre)) return;
  uint64_t weight = 0;                /* implied by the size, but after rt_take */
  if (pre == 3 && ht_g.sample) { weight = t->rt_weight; t->rt_weight = 0; }
  uint64_t v[HT_MAXFRAMES];
  const uint64_t *fr = v;             /* a runtime's frames are used in place */
  uint32_t nf;
  if (rt) {
    nf = depth > HT_MAXFRAMES ? HT_MAXFRAMES : depth;
    fr = rt;
  } else {
    nf = rec_capture(t, v);
  }
  uint64_t seq = rec_seq(t);
  if (!rec_enter(t)) return;
  rec_prepare(t, nf);
  uint32_t leaf = rec_stack(t, fr, nf);
  ht_stream_alloc(&t->st, seq, kind, n, (uintptr_t)p, leaf, align, weight);
  rec_leave(t);
}

/* Take the sequence number of a free before the real call; 0 = not recorded. */
HT_INLINE uint64_t rec_free_seq(ThreadRec **tp, const void *p)
{
  ThreadRec *t = rec_get();
  if (HT_UNLIKELY(!t)) return 0;
  if (ht_g.sample && (!ht_sampler_maybe((uintptr_t)p) ||
                      !ht_sampler_remove((uintptr_t)p))) return 0;
  *tp = t;
  return rec_seq(t);
}

/* Write a FREE taken with rec_free_seq. */
HT_INLINE void rec_free_emit(ThreadRec *t, uint64_t seq, const void *p,
                             unsigned kind, uint64_t size)
{
  if (!rec_enter(t)) return;
  rec_prepare(t, 0);
  ht_stream_free(&t->st, seq, kind, (uintptr_t)p, size);
  rec_leave(t);
}

/* Slow path of malloc and operator new: unwind and append (one frame).
** Every recording path keeps errno as the real call left it. */
void ht_record_alloc(void *p, size_t n, unsigned kind, size_t align, int pre)
{
  int e = errno;
  rec_alloc(p, n, kind, align, NULL, 0, pre);
  errno = e;
}

/* calloc (preload.c checked that it is recorded, as for the three below). */
void *ht_record_calloc(size_t n, size_t m)
{
  ht_guard++;
  void *p = __libc_calloc(n, m);
  if (p) ht_record_alloc(p, (uint64_t)n * m, HT_K_CALLOC, 0, 0);
  ht_guard--;
  return p;
}

/* memalign, aligned_alloc, posix_memalign and aligned new. */
void *ht_record_memalign(size_t align, size_t n, unsigned kind)
{
  ht_guard++;
  void *p = __libc_memalign(align, n);
  if (p) ht_record_alloc(p, n, kind, align, 0);
  ht_guard--;
  return p;
}

/* valloc and pvalloc. */
void *ht_record_valloc(size_t n, int page_round)
{
  ht_guard++;
  void *p = page_round ? __libc_pvalloc(n) : __libc_valloc(n);
  if (p) ht_record_alloc(p, n, HT_K_VALLOC, 0, 0);
  ht_guard--;
  return p;
}

/* realloc: FREE(old) at seq1 taken before the call, ALLOC(new) at seq2 after. */
void *ht_record_realloc(void *p, size_t n)
{
  if (!p) {
    ht_guard++;
    void *q = __libc_malloc(n);
    if (q) ht_record_alloc(q, n, HT_K_REALLOC, 0, 0);
    ht_guard--;
    return q;
  }
  ht_guard++;
  int e = errno;
  ThreadRec *t = NULL;
  uint64_t seq1 = rec_free_seq(&t, p);
  errno = e;
  void *q = __libc_realloc(p, n);
  e = errno;
  if (q) {
    if (seq1) rec_free_emit(t, seq1, p, HT_K_REALLOC, 0);
    rec_alloc(q, n, HT_K_REALLOC, 0, NULL, 0, 0);
  } else if (n == 0) {                  /* realloc(p, 0) freed p */
    if (seq1) rec_free_emit(t, seq1, p, HT_K_REALLOC, 0);
  } else if (seq1 && ht_g.sample) {
    ht_sampler_add((uintptr_t)p);       /* failed: p stays live and sampled */
  }
  errno = e;
  ht_guard--;
  return q;
}

/* Slow path of free (ht_record_free in record.h did the cheap checks). */
void ht_record_free_slow(void *p, unsigned kind, size_t size)
{
  ht_guard++;
  int e = errno;
  ThreadRec *t = NULL;
  uint64_t seq = rec_free_seq(&t, p);
  if (seq) rec_free_emit(t, seq, p, kind, size);
  __libc_free(p);
  errno = e;
  ht_guard--;
}

/* -- Events reported through the public API -------------------------------- */

/* Allocation the caller made itself (pool or runtime). */
int ht_record_event_alloc(const void *p, size_t n, unsigned kind,
                          const uint64_t *rt_vals, size_t depth)
{
  if (!atomic_load(&ht_g.running) || ht_guard) return 0;
  ht_guard++;
  ThreadRec *t = tls_rec;
  int pre = 0;
  if (t && t->rt_due) { pre = t->rt_due == 2 ? 3 : 2; t->rt_due = 0; }  /* ht_record_event_due / _take */
  rec_alloc(p, n, kind, 0, rt_vals ? rt_vals : NULL, rt_vals ? (uint32_t)depth : 0, pre);
  ht_guard--;
  return 0;
}

/* Whether a runtime allocation of n bytes will be recorded: the sampler's
** draw made before the runtime reads its stack (a sample point is kept for
** the thread's next ht_record_event_alloc). */
int ht_record_event_due(size_t n)
{
  if (!atomic_load(&ht_g.running) || ht_guard) return 0;
  if (!ht_g.sample) return 1;
  ht_guard++;
  ThreadRec *t = rec_get();
  int due = 0;
  if (t) {
    t->sample_left -= (int64_t)n;
    due = t->sample_left <= 0;
    t->rt_due = due;
  }
  ht_guard--;
  return due;
}

/* One exponential gap in bytes (the recording's mean) from the calling
** thread's generator, for a runtime that finds its own sample points; 0
** when not recording or not sampling. */
uint64_t ht_record_event_gap(void)
{
  if (!atomic_load(&ht_g.running) || ht_guard || !ht_g.sample) return 0;
  ht_guard++;
  ThreadRec *t = rec_get();
  uint64_t g = t ? (uint64_t)ht_sampler_gap(&t->rng, ht_g.sample) : 0;
  ht_guard--;
  return g;
}

/* The calling thread's next runtime allocation is a sample point found by
** the runtime (no draw), standing for weight bytes (0: implied by its
** size); 1 when recording. */
int ht_record_event_take(uint64_t weight)
{
  if (!atomic_load(&ht_g.running) || ht_guard) return 0;
  ht_guard++;
  ThreadRec *t = rec_get();
  if (t) { t->rt_due = 2; t->rt_weight = weight; }
  ht_guard--;
  return t != NULL;
}

/* The calling thread's native stack for a runtime that mixes it with its own. */
int ht_record_native_stack(uintptr_t *ips, int max)
{
  if (!atomic_load(&ht_g.running) || ht_guard || ht_g.unwind == HT_UNWIND_NONE) return 0;
  ht_guard++;
  ThreadRec *t = rec_get();
  int n = 0;
  if (t) {
    uint64_t v[HT_MAXFRAMES];
    uint32_t m = rec_capture(t, v);     /* outermost first */
    for (uint32_t j = 0; j < m && n < max; j++) ips[n++] = (uintptr_t)(v[m - 1 - j] >> 1);
  }
  ht_guard--;
  return n;
}

/* Free the caller is about to make (pool or runtime). */
int ht_record_event_free(const void *p, unsigned kind)
{
  if (!atomic_load(&ht_g.running) || ht_guard || !p) return 0;
  ht_guard++;
  ThreadRec *t = NULL;
  uint64_t seq = rec_free_seq(&t, p);
  if (seq) rec_free_emit(t, seq, p, kind, 0);
  ht_guard--;
  return 0;
}

/* THREAD or MARK record from the calling thread. */
int ht_record_event_string(unsigned type, const char *s)
{
  if (!atomic_load(&ht_g.running) || ht_guard) return 0;
  ht_guard++;
  ThreadRec *t = rec_get();
  if (t) {
    uint64_t seq = rec_seq(t);            /* in order with the thread's events */
    if (rec_enter(t)) {
      size_t len = strnlen(s, 4096);
      ht_stream_need(&t->st, 2 * HT_ULEB_MAX + len + 16);
      ht_stream_time(&t->st, ht_clock_coarse());
      ht_stream_string(&t->st, type, seq, s, len);
      rec_leave(t);
    }
  }
  ht_guard--;
  return 0;
}

/* Create the thread-exit key and learn the stack size bound (constructor). */
void ht_record_setup(void)
{
  pthread_key_create(&rec_key, rec_key_dtor);
  struct rlimit rl;
  uint64_t sz = 8u << 20;               /* glibc's default thread stack */
  if (!getrlimit(RLIMIT_STACK, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > sz)
    sz = rl.rlim_cur;
  if (sz > (1u << 30)) sz = 1u << 30;
  rec_stack_size = (uintptr_t)sz;
}

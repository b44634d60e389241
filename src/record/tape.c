/* heaptape -- the recorder's output side: buffer pool, writer thread, start/stop.
** Threads hand full buffers over lock-free; one thread compresses and writes. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "record.h"
#include "../../include/heaptape.h"

#define TAPE_MAXBUF 2048               /* buffers at most (128 MiB) */
#define TAPE_CHUNK 4                   /* buffers mapped together, when first needed */
#define TAPE_FLUSH_NS 100000000ULL     /* periodic flush and RSS interval */
#define TAPE_TICK_NS 1000000L          /* writer thread wake-up (full trace) */
#define TAPE_WRITER_STACK (1u << 20)   /* writer thread stack (it may run exit) */
#define TAPE_STOP_WAIT_NS 500000000ULL /* the longest a stop waits for busy threads */
#define TAPE_FD_HEADROOM 64            /* the tape's descriptor: this far below the limit */

enum { TAPE_OFF = 0, TAPE_ENV = 1, TAPE_SINK = 2 };

typedef struct Tape {
  int mode;                  /* TAPE_OFF / TAPE_ENV / TAPE_SINK */
  int fd;                    /* output file (TAPE_ENV), high and close-on-exec */
  dev_t dev;                 /* its identity, checked before every write */
  ino_t ino;
  int seekable;              /* a regular file: written with pwrite at off */
  int lost_fd;               /* the program took the descriptor for good */
  uint64_t off;              /* bytes of the file written */
  char path[4096 + 64];      /* absolute path, to reopen it */
  uint64_t exec_off;         /* tape bytes before the trailer written for an exec */
  uint64_t exec_packets, exec_bytes; /* the writer's counts then */
  int exec_pending;          /* an exec is under way (trailer written, writer paused) */
  HtSink sink;               /* where bytes go */
  void *arg;                 /* sink and on_stop argument */
  int (*on_stop)(void *);    /* called once after the trailer */
  HtWriter *w;               /* packet writer */
  HtDict *dict;              /* runtime locations declared */
  pthread_mutex_t dict_lock; /* serialises dictionary updates */
  pthread_t thread;          /* the writer thread */
  int has_thread;            /* thread was created */
  _Atomic int quit;          /* ask the writer thread to finish */
  pthread_mutex_t quit_lock; /* with quit_cond: wakes the writer to finish */
  pthread_cond_t quit_cond;
  int direct_clock;          /* sampled: events read the clock themselves */
  _Atomic int active;        /* between start and stop */
  HtStream own;              /* writer thread's stream: RSS, MODULE */
  uint8_t *own_body;         /* its body */
  uint64_t events;           /* seq-bearing records sealed */
  uint64_t last_flush;       /* last periodic flush (ns since start) */
} Tape;

static Tape tape = { .fd = -1, .dict_lock = PTHREAD_MUTEX_INITIALIZER,
                     .quit_lock = PTHREAD_MUTEX_INITIALIZER,
                     .quit_cond = PTHREAD_COND_INITIALIZER };
static _Atomic uint64_t tape_now;      /* coarse clock: ns since start */
static _Atomic(HtBuf *) buf_chunk[TAPE_MAXBUF / TAPE_CHUNK]; /* mapped on demand */
static uint32_t buf_pid;               /* process the pool was set up for */
static _Atomic uint32_t buf_used;      /* buffers handed out of the chunks */
static _Atomic uint64_t buf_free;      /* free stack: tag << 32 | index + 1 */
static _Atomic uint64_t buf_full;      /* full stack, same encoding */


/* -- Arena and clock -------------------------------------------------------- */

/* Zeroed memory straight from mmap, page-rounded; NULL on failure. */
void *ht_arena_alloc(size_t n)
{
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Return arena memory. */
void ht_arena_free(void *p, size_t n)
{
  if (p) munmap(p, n);
}

/* Nanoseconds on clock clk. */
uint64_t ht_clock_ns(int clk)
{
  struct timespec ts;
  clock_gettime(clk, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Publish the coarse clock. */
static uint64_t tape_tick(void)
{
  uint64_t now = ht_clock_ns(CLOCK_MONOTONIC) - ht_g.t0;
  atomic_store_explicit(&tape_now, now, memory_order_relaxed);
  return now;
}

/* Nanoseconds since start: as last published by the writer thread (1 ms)
** when every call is traced; read afresh when sampling, whose events are too
** rare to pay for a writer thread waking up a thousand times a second. */
uint64_t ht_clock_coarse(void)
{
  if (tape.direct_clock) return tape_tick();
  return atomic_load_explicit(&tape_now, memory_order_relaxed);
}

/* -- Buffer pool ------------------------------------------------------------ */

/* Buffer of index i (its chunk is mapped). */
HT_INLINE HtBuf *buf_at(uint32_t i)
{
  return atomic_load_explicit(&buf_chunk[i / TAPE_CHUNK], memory_order_acquire) +
         i % TAPE_CHUNK;
}

/* Index + 1 of a buffer. */
HT_INLINE uint32_t buf_ref(HtBuf *b) { return b->self; }

/* Map the chunk of buffer i unless it is; -1 when memory is refused. Only
** what a program's threads use is ever mapped (a single-threaded program:
** one chunk), so a tight RLIMIT_AS is not spent on buffers it never needs. */
static int buf_chunk_map(uint32_t i)
{
  _Atomic(HtBuf *) *c = &buf_chunk[i / TAPE_CHUNK];
  if (HT_LIKELY(atomic_load_explicit(c, memory_order_acquire) != NULL)) return 0;
  HtBuf *p = ht_arena_alloc(TAPE_CHUNK * sizeof(HtBuf)), *none = NULL;
  if (!p) return -1;
  for (uint32_t k = 0; k < TAPE_CHUNK; k++) p[k].self = i / TAPE_CHUNK * TAPE_CHUNK + k + 1;
  if (!atomic_compare_exchange_strong(c, &none, p))
    ht_arena_free(p, TAPE_CHUNK * sizeof(HtBuf));  /* another thread mapped it */
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
HtBuf *ht_buf_get(void)
{
  uint64_t h = atomic_load(&buf_free);
  while ((uint32_t)h) {
    HtBuf *b = buf_at((uint32_t)h - 1);
    uint64_t n = ((h >> 32) + 1) << 32 | __atomic_load_n(&b->next, __ATOMIC_RELAXED);
    if (atomic_compare_exchange_weak(&buf_free, &h, n)) return b;
  }
  uint32_t i = atomic_fetch_add(&buf_used, 1);
  if (i < TAPE_MAXBUF) return buf_chunk_map(i) ? NULL : buf_at(i); /* (a refused i stays unused) */
  atomic_fetch_sub(&buf_used, 1);
  return NULL;
}

/* Seal s's body into b and queue it for writing; s NULL returns b unused. */
void ht_buf_queue(HtBuf *b, const HtStream *s)
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

/* Write every queued buffer, oldest first, and return them to the pool. */
static void tape_drain(void)
{
  uint64_t h = atomic_exchange(&buf_full, 0);
  uint32_t r = (uint32_t)h, prev = 0;
  while (r) {                           /* reverse the LIFO chain */
    HtBuf *b = buf_at(r - 1);
    uint32_t nx = b->next;
    b->next = prev;
    prev = r;
    r = nx;
  }
  for (r = prev; r; ) {
    HtBuf *b = buf_at(r - 1);
    r = b->next;
    if (b->len) {                      /* ht_writer_stream seals a stream view */
      HtStream v;
      memset(&v, 0, sizeof(v));
      v.buf = b->body;
      v.p = v.end = b->body + b->len;
      v.seq0 = b->seq0;
      v.seq_prev = b->seq1;
      v.ts0 = v.ts_prev = b->ts0;
      v.nev = b->nev;
      v.gen = v.gen0 = b->gen0;
      v.pid = ht_g.pid;
      v.tid = b->tid;
      ht_writer_stream(tape.w, &v);
      tape.events += b->nev;
    }
    buf_push(&buf_free, b);
  }
}

/* In a new process (the first start, a fork child), forget every buffer: the
** parent's are not ours. A restart in the same process keeps the pool, so a
** buffer a thread still holds is never handed out twice. */
static void tape_buffers(void)
{
  if (buf_pid == ht_g.pid) return;
  buf_pid = ht_g.pid;
  atomic_store(&buf_used, 0);
  atomic_store(&buf_free, 0);
  atomic_store(&buf_full, 0);
}

/* -- The writer thread ------------------------------------------------------ */

/* Flush hook of the writer thread's own stream: write it directly. */
static void tape_own_flush(HtStream *s, void *ctx)
{
  (void)ctx;
  tape.events += s->nev;
  ht_writer_stream(tape.w, s);
}

/* Bytes of /proc/self/<name> into b (NUL-terminated); 0 if unreadable. */
static size_t tape_proc(const char *name, char *b, size_t cap)
{
  char path[32] = "/proc/self/";
  memcpy(path + 11, name, strlen(name) + 1);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, b, cap - 1);
  close(fd);
  if (n <= 0) return 0;
  b[n] = 0;
  return (size_t)n;
}

/* Append an RSS record from /proc/self/statm. */
static void tape_rss(void)
{
  char b[128];
  if (!tape_proc("statm", b, sizeof(b))) return;
  char *p = b;
  while (*p && *p != ' ') p++;
  uint64_t pages = 0;
  for (p++; *p >= '0' && *p <= '9'; p++) pages = pages * 10 + (uint64_t)(*p - '0');
  ht_stream_time(&tape.own, ht_clock_coarse());
  ht_stream_value(&tape.own, HT_R_RSS, ht_seq_shared(),
                  pages * (uint64_t)sysconf(_SC_PAGESIZE));
}

/* Periodic work: take partial buffers of every thread, RSS, module changes. */
static void tape_periodic(void)
{
  for (ThreadRec *t = atomic_load(&ht_g.threads); t; t = t->next)
    for (int i = 0; i < 100 && !ht_record_steal(t, 0); i++) __builtin_ia32_pause();
  tape_rss();
  if (ht_maps_changed()) ht_maps_scan(&tape.own);
  tape_own_flush(&tape.own, NULL);
  tape_drain();
}

/* -- Process end ------------------------------------------------------------ */

/*
** When main calls pthread_exit, glibc ends the process (exit(0)) as its last
** thread ends; the writer thread counts as one, so it would keep the process
** alive for ever. Once the main thread has gone that way, the writer checks
** whether it is alone (the kernel counts the main thread while it is a
** zombie, hence 2) and then does what glibc's last thread would have done.
*/
static _Atomic int tape_main_gone;     /* the main thread called pthread_exit */

/* pthread_exit: from the process's first thread, watch for the last one. */
void ht_record_thread_exit(void)
{
  if (syscall(SYS_gettid) == getpid()) atomic_store(&tape_main_gone, 1);
}

/* Is the writer thread the last one left (beside the main thread's zombie)? */
static int tape_alone(void)
{
  char b[1024];
  if (!tape_proc("stat", b, sizeof(b))) return 0;
  char *p = strrchr(b, ')');           /* the command name may hold anything */
  for (int f = 2; p && f < 20; f++) p = strchr(p + 1, ' ');
  return p && strtol(p + 1, NULL, 10) == 2;
}

/* Body of the writer thread. */
static void *tape_thread(void *arg)
{
  (void)arg;
  ht_guard = 1;                         /* nothing this thread does is recorded */
  tape.own.tid = (uint32_t)syscall(SYS_gettid);
  tape.last_flush = tape_tick();
  long tick = tape.direct_clock ? (long)TAPE_FLUSH_NS : TAPE_TICK_NS;
  while (!atomic_load(&tape.quit)) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += tick;
    if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
    pthread_mutex_lock(&tape.quit_lock);
    while (!atomic_load(&tape.quit) &&
           pthread_cond_timedwait(&tape.quit_cond, &tape.quit_lock, &ts) != ETIMEDOUT) {}
    pthread_mutex_unlock(&tape.quit_lock);
    uint64_t now = tape_tick();
    tape_drain();
    if (now - tape.last_flush >= TAPE_FLUSH_NS) {
      tape.last_flush = now;
      tape_periodic();
    }
    if (atomic_load(&tape_main_gone) && !atomic_load(&tape.quit) && tape_alone()) {
      tape.has_thread = 0;              /* the stop in exit must not wait for us */
      ht_guard = 0;                     /* atexit handlers' events are the program's */
      ht_record_status(0);
      exit(0);
    }
  }
  return NULL;
}

/* -- Start and stop ----------------------------------------------------------- */

/*
** The tape's descriptor belongs to the program's process, and programs take
** descriptors away: daemons close every one, shells dup2 onto low numbers.
** So it is opened close-on-exec, moved near the top of the soft limit, and
** its identity (device, inode) is checked before every write: when the
** program closed it or put something else on its number, the tape is
** reopened by its absolute path if it is still the same file, and never is
** anything written to a descriptor the recorder does not own.
*/

/* fd moved to a high number out of the program's way (or fd if none is free). */
static int tape_fd_high(int fd)
{
  struct rlimit rl;
  rlim_t lim = 1024;
  if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < lim) lim = rl.rlim_cur;
  if (lim <= 2 * TAPE_FD_HEADROOM) return fd;
  int h = fcntl(fd, F_DUPFD_CLOEXEC, (int)(lim - TAPE_FD_HEADROOM));
  if (h < 0) return fd;
  close(fd);
  return h;
}

/* Does fd still name the tape file? */
static int tape_fd_is_tape(int fd)
{
  struct stat st;
  return fd >= 0 && !fstat(fd, &st) && st.st_dev == tape.dev && st.st_ino == tape.ino;
}

/* 1 when tape.fd is the tape, reopening it if the program took it; 0 if lost. */
static int tape_fd_owned(void)
{
  if (HT_LIKELY(tape_fd_is_tape(tape.fd))) return 1;
  if (tape.lost_fd) return 0;
  int fd = tape.seekable ? open(tape.path, O_WRONLY | O_CLOEXEC) : -1;
  if (tape_fd_is_tape(fd)) {
    tape.fd = tape_fd_high(fd);
    return 1;
  }
  if (fd >= 0) close(fd);
  tape.lost_fd = 1;
  tape.fd = -1;
  ht_log("tape %s: the program closed its descriptor and the file cannot be "
         "reopened; the rest of this recording is lost", tape.path);
  return 0;
}

/* Make the freshly opened fd, of the file at path, the tape's descriptor. */
static void tape_fd_adopt(int fd, const char *path)
{
  struct stat st;
  if (fstat(fd, &st)) memset(&st, 0, sizeof(st));
  tape.dev = st.st_dev;
  tape.ino = st.st_ino;
  tape.seekable = S_ISREG(st.st_mode);
  tape.fd = tape_fd_high(fd);
  tape.off = 0;
  tape.lost_fd = 0;
  size_t n = 0;                          /* absolute: the program may chdir */
  if (path[0] != '/' && getcwd(tape.path, sizeof(tape.path) - 4096 - 2)) {
    n = strlen(tape.path);
    tape.path[n++] = '/';
  }
  size_t m = strnlen(path, sizeof(tape.path) - n - 1);
  memcpy(tape.path + n, path, m);
  tape.path[n + m] = 0;
}

/* Sink that writes to the tape file. */
static size_t tape_fd_sink(const void *data, size_t len, void *arg)
{
  (void)arg;
  const uint8_t *p = data;
  size_t done = 0;
  if (!tape_fd_owned()) return 0;
  while (done < len) {
    ssize_t n = tape.seekable ? pwrite(tape.fd, p + done, len - done, (off_t)(tape.off + done))
                              : write(tape.fd, p + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += (size_t)n;
  }
  tape.off += done;
  return done;
}

/* on_stop of the file mode: close the tape if the descriptor is still ours. */
static int tape_fd_close(void *arg)
{
  (void)arg;
  int rc = tape_fd_is_tape(tape.fd) ? close(tape.fd) : 0;
  tape.fd = -1;
  return rc || tape.lost_fd ? HEAPTAPE_E_IO : 0;
}

/* Start the writer thread. */
static void tape_writer_start(void)
{
  atomic_store(&tape.quit, 0);
  pthread_condattr_t ca;                 /* the writer's deadlines are monotonic */
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&tape.quit_cond, &ca);
  pthread_condattr_destroy(&ca);
  pthread_attr_t ta;                     /* a small stack: no 8 MiB of address space */
  pthread_attr_init(&ta);
  pthread_attr_setstacksize(&ta, TAPE_WRITER_STACK);
  uint64_t mask;                         /* the writer takes no signal of the program's */
  ht_sigmask_block_all(&mask);
  tape.has_thread = !pthread_create(&tape.thread, &ta, tape_thread, NULL);
  ht_sigmask_restore(mask);
  pthread_attr_destroy(&ta);
}

/* Stop the writer thread for a while (an exec); tape_writer_start goes on. */
static void tape_writer_pause(void)
{
  if (!tape.has_thread || pthread_equal(pthread_self(), tape.thread)) return;
  pthread_mutex_lock(&tape.quit_lock);
  atomic_store(&tape.quit, 1);
  pthread_cond_signal(&tape.quit_cond);
  pthread_mutex_unlock(&tape.quit_lock);
  pthread_join(tape.thread, NULL);
  tape.has_thread = 0;
}

/* Start recording into sink (caller holds the guard). */
static int tape_begin(HtSink sink, void *arg, int (*on_stop)(void *),
                      HtTapeInfo *info, int native)
{
  int exp = 0;
  if (!atomic_compare_exchange_strong(&tape.active, &exp, 1)) return HEAPTAPE_E_RUNNING;
  ht_g.pid = (uint32_t)getpid();
  ht_g.t0 = ht_clock_ns(CLOCK_MONOTONIC);
  ht_g.sample = info->sample;
  ht_g.unwind = (int)info->unwind;
  ht_g.frames = (int)info->frames;
  /* Sequence numbers go on across sessions: an event numbered before a stop
  ** and written after a restart still sorts before the new session's. */
  uint64_t zero = 0;
  atomic_compare_exchange_strong(&ht_g.seq, &zero, 1);
  atomic_store(&ht_g.claims, 0);        /* a new session: blocks of the old are void */
  atomic_store(&ht_g.seq_mode, (atomic_load(&ht_g.seq_mode) | 1) + 1);
  atomic_store(&ht_g.lost, 0);
  atomic_store(&tape_now, 0);
  tape.events = 0;
  tape.sink = sink;
  tape.arg = arg;
  tape.on_stop = on_stop;
  atomic_store(&tape.quit, 0);
  tape.direct_clock = info->sample != 0;
  info->pid = ht_g.pid;
  info->start_ns = ht_clock_ns(CLOCK_REALTIME);
  info->clock = HT_CLOCK_MONOTONIC;
  info->clock_res = TAPE_TICK_NS;
  int rc = HEAPTAPE_E_NOMEM;
  tape_buffers();
  if (ht_g.sample && ht_sampler_init()) goto fail;
  ht_sampler_clear();
  if (!tape.own_body && !(tape.own_body = ht_arena_alloc(HT_BUFBODY))) goto fail;
  tape.w = ht_writer_new(sink, arg, ht_opt.zstd);
  tape.dict = ht_dict_new();
  if (!tape.w || !tape.dict) goto fail;
  if ((rc = ht_writer_header(tape.w, info))) goto fail;
  ht_stream_init(&tape.own, tape.own_body, HT_BUFBODY, ht_g.pid,
                 (uint32_t)syscall(SYS_gettid), tape_own_flush, NULL);
  ht_maps_reset();
  ht_maps_scan(&tape.own);
  atomic_store(&ht_g.running, 1);
  atomic_store(&ht_g.native, native);
  tape_writer_start();
  return 0;
fail:
  if (tape.w) ht_writer_destroy(tape.w);
  if (tape.dict) ht_dict_destroy(tape.dict);
  tape.w = NULL;
  tape.dict = NULL;
  atomic_store(&tape.active, 0);
  return rc;
}

/* Start with a caller's sink (embedded API). */
int ht_tape_start(HtSink sink, void *arg, int (*on_stop)(void *),
                  const HtTapeInfo *info)
{
  HtTapeInfo in = *info;
  ht_guard++;
  int rc = tape_begin(sink, arg, on_stop, &in, 1);
  if (!rc) tape.mode = TAPE_SINK;
  ht_guard--;
  return rc;
}

/* Close every thread's stream for the last time. The wait is bounded: an
** owner leaves its append within microseconds, unless it is the calling
** thread itself (a signal handler ending the process in the middle of an
** append) or stopped or descheduled for long; then its unfinished buffer
** is given up and its events counted as lost (all threads together wait
** at most TAPE_STOP_WAIT_NS). */
static void tape_close_streams(void)
{
  uint64_t end = ht_clock_ns(CLOCK_MONOTONIC) + TAPE_STOP_WAIT_NS;
  for (ThreadRec *t = atomic_load(&ht_g.threads); t; t = t->next)
    for (int i = 0; !ht_record_steal(t, 1); i++) {
      if (ht_record_held_here(t) || (i >= 64 && ht_clock_ns(CLOCK_MONOTONIC) > end)) {
        ht_record_abandon(t);
        break;
      }
      if (i < 64) { __builtin_ia32_pause(); continue; }
      struct timespec ts = { 0, 50000 };
      nanosleep(&ts, NULL);
    }
}

/* Lock m, waiting at most ~50 ms (it may be held by the very code a signal
** handler interrupted); 0 when locked. */
static int tape_lock_bounded(pthread_mutex_t *m)
{
  for (int i = 0; i < 1000; i++) {
    if (!pthread_mutex_trylock(m)) return 0;
    struct timespec ts = { 0, 50000 };
    nanosleep(&ts, NULL);
  }
  return -1;
}

/* Stop: close every thread's stream, drain, write dictionary and trailer.
** ending: the process is ending or exec'ing, maybe from a signal handler
** that interrupted malloc: nothing is freed (and so no malloc lock taken). */
int ht_tape_stop(uint64_t status, int ending)
{
  int exp = 1;
  if (!atomic_compare_exchange_strong(&tape.active, &exp, 0)) return HEAPTAPE_E_NOTRUNNING;
  ht_guard++;
  int e = errno;
  atomic_store(&ht_g.native, 0);
  atomic_store(&ht_g.running, 0);
  if (tape.has_thread && pthread_equal(pthread_self(), tape.thread))
    tape.has_thread = 0;                 /* the writer ends the process itself */
  tape_writer_pause();
  tape_tick();
  tape_close_streams();
  tape_drain();
  tape_rss();
  if (ht_maps_changed()) ht_maps_scan(&tape.own);
  uint64_t lost = atomic_load(&ht_g.lost);
  if (lost) ht_stream_value(&tape.own, HT_R_LOST, ht_seq_shared(), lost);
  tape_own_flush(&tape.own, NULL);
  if (!tape_lock_bounded(&tape.dict_lock)) {
    ht_dict_flush(tape.dict, tape.w, ht_g.pid);
    if (!ending) ht_dict_destroy(tape.dict);
    tape.dict = NULL;
    pthread_mutex_unlock(&tape.dict_lock);
  }
  HtTrailer tr = { tape.events, lost, tape_tick(), status };
  ht_writer_trailer(tape.w, &tr);
  int rc = ht_writer_error(tape.w);
  if (!ending) ht_writer_destroy(tape.w);
  tape.w = NULL;
  if (tape.on_stop && tape.on_stop(tape.arg) && !rc) rc = HEAPTAPE_E_IO;
  tape.mode = TAPE_OFF;
  errno = e;
  ht_guard--;
  return rc;
}

/* Declare a runtime location for the dictionary written at stop. */
int ht_tape_loc(uint64_t id, int kind, const char *name, const char *file,
                uint32_t line, uint64_t aux)
{
  int rc = HEAPTAPE_E_NOTRUNNING;
  ht_guard++;
  pthread_mutex_lock(&tape.dict_lock);
  if (tape.dict) {
    int64_t n = ht_dict_str(tape.dict, name), f = ht_dict_str(tape.dict, file);
    rc = (n < 0 || f < 0) ? HEAPTAPE_E_NOMEM
       : ht_dict_loc(tape.dict, id, (unsigned)kind, (uint64_t)n, (uint64_t)f, line, aux);
  }
  pthread_mutex_unlock(&tape.dict_lock);
  ht_guard--;
  return rc;
}

/* -- Environment mode ---------------------------------------------------------- */

/* Append decimal v at p; returns the end. */
static char *tape_utoa(char *p, uint64_t v)
{
  char t[24];
  int n = 0;
  do t[n++] = (char)('0' + v % 10); while ((v /= 10));
  while (n) *p++ = t[--n];
  return p;
}

/*
** Which tape a process writes. The process that heaptape (or LD_PRELOAD)
** started is the traced process, marked by _HEAPTAPE_PID: it records, and
** goes on recording through its own execs, each image onto a tape of its
** own (a shim that execs the real interpreter, `env X=1 prog`: the tape
** must cover the program meant). A forked child records with follow_fork
** and then is a traced process itself; a program exec'd by a child that is
** not recorded records only with follow_exec. Whatever is not recorded is
** told to `heaptape record` on the report descriptor, so that it can say so.
*/
enum { TAPE_FIRST, TAPE_CHILD, TAPE_AGAIN };   /* how a tape is named */

/* Expand the output template into out: %p = pid, %e = program name; a
** forked child's tape gets ".pid" and a new image's ".prog" if the template
** does not name them; dup > 0 appends "-dup". */
static void tape_path(char *out, size_t cap, const char *tmpl, const char *prog,
                      int how, unsigned dup)
{
  char *p = out, *end = out + cap - 64;
  int had_pid = 0, had_prog = 0;
  if (!*tmpl) tmpl = "heaptape.%e.%p.tape";
  for (; *tmpl && p < end; tmpl++) {
    if (tmpl[0] == '%' && tmpl[1] == 'p') { p = tape_utoa(p, ht_g.pid); tmpl++; had_pid = 1; }
    else if (tmpl[0] == '%' && tmpl[1] == 'e') {
      for (const char *q = prog; *q && p < end; ) *p++ = *q++;
      tmpl++;
      had_prog = 1;
    } else *p++ = *tmpl;
  }
  *p = 0;
  if (how == TAPE_CHILD && !had_pid) { *p++ = '.'; p = tape_utoa(p, ht_g.pid); }
  if (how == TAPE_AGAIN && !had_prog) {   /* before a ".tape" extension */
    size_t n = (size_t)(p - out), m = strnlen(prog, 200);
    char *ext = n >= 5 && !strcmp(p - 5, ".tape") ? p - 5 : p;
    memmove(ext + 1 + m, ext, (size_t)(p - ext));
    ext[0] = '.';
    memcpy(ext + 1, prog, m);
    p += 1 + m;
  }
  if (dup) { *p++ = '-'; p = tape_utoa(p, dup); }
  *p = 0;
}

/* Remove libheaptape.so from LD_PRELOAD in our own environment, in place. */
static void tape_unpreload(void)
{
  extern char **environ;
  for (char **e = environ; e && *e; e++) {
    if (strncmp(*e, "LD_PRELOAD=", 11)) continue;
    char *r = *e + 11, *w = r;
    while (*r) {
      char *tok = r;
      while (*r && *r != ' ' && *r != ':') r++;
      size_t n = (size_t)(r - tok);
      int ours = 0;
      for (size_t i = 0; i + 11 <= n; i++)
        if (!memcmp(tok + i, "libheaptape", 11)) ours = 1;
      if (n && !ours) {
        if (w != *e + 11) *w++ = ':';
        memmove(w, tok, n);
        w += n;
      }
      if (*r) r++;
    }
    *w = 0;
  }
}

/* -- The report descriptor ------------------------------------------------------ */
/* `heaptape record` passes HEAPTAPE_REPORT=fd:dev:ino, a file opened with
** O_APPEND; each process appends one line per tape it starts ("tape PID
** PROG<TAB>PATH") and one per process it does not record ("child PID
** PROG"). Written only while the descriptor is still that file. */

/* Append line (up to its NUL) to the report file, if there is one. */
static void tape_report(const char *line)
{
  const char *s = ht_getenv("HEAPTAPE_REPORT");
  if (!s || !*s) return;
  char *e;
  long fd = strtol(s, &e, 10);
  if (*e++ != ':') return;
  unsigned long long dev = strtoull(e, &e, 10);
  if (*e++ != ':') return;
  unsigned long long ino = strtoull(e, &e, 10);
  struct stat st;
  if (fd < 0 || fstat((int)fd, &st) || st.st_dev != dev || st.st_ino != ino) return;
  ssize_t w = write((int)fd, line, strlen(line));
  (void)w;
}

/* Report a process that is not recorded. */
static void tape_report_child(const char *prog)
{
  char line[256] = "child ", *p = tape_utoa(line + 6, (uint64_t)getpid());
  *p++ = ' ';
  size_t m = strnlen(prog, 200);
  memcpy(p, prog, m);
  p[m] = '\n';
  p[m + 1] = 0;
  tape_report(line);
}

/* Mark the calling process as traced: _HEAPTAPE_PID=<its pid>, which its
** exec'd images inherit. In place when `heaptape record` reserved the room
** (20 digits): no allocation, and a program that copies its environment
** before main (bash) copies the mark; else through libc's own setenv. */
static void tape_mark_traced(void)
{
  extern char **environ;
  char pid[24];
  *tape_utoa(pid, (uint64_t)getpid()) = 0;
  for (char **e = environ; e && *e; e++)
    if (!strncmp(*e, "_HEAPTAPE_PID=", 14) && strlen(*e + 14) >= 20) {
      memset(*e + 14, 0, strlen(*e + 14));
      memcpy(*e + 14, pid, strlen(pid));
      return;
    }
  int (*set)(const char *, const char *, int) =
      (int (*)(const char *, const char *, int))dlsym(RTLD_NEXT, "setenv");
  if (set) set("_HEAPTAPE_PID", pid, 1);
}

/* The name of this process's program. */
static const char *tape_prog(char *exe, size_t cap)
{
  ssize_t n = readlink("/proc/self/exe", exe, cap - 1);
  exe[n > 0 ? n : 0] = 0;
  const char *prog = strrchr(exe, '/');
  return prog ? prog + 1 : exe;
}

/* Start from the environment: the preloaded image (first, or exec'd, or
** after a failed exec: again), or a following fork child. */
static int tape_start_env(int how)
{
  ht_guard++;
  ht_options_load();
  char exe[4096], path[4096 + 320];
  const char *prog = tape_prog(exe, sizeof(exe));
  ht_g.pid = (uint32_t)getpid();
  tape_mark_traced();                   /* this process goes on recording through exec */
  int fd = -1;
  for (unsigned dup = 0; fd < 0 && dup < 100; dup++) {
    tape_path(path, sizeof(path), ht_opt.output, prog, how, dup);
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (how == TAPE_FIRST ? O_TRUNC : O_EXCL), 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    ht_log("cannot open tape %s: %s; not recording", path, strerror(errno));
    ht_guard--;
    return HEAPTAPE_E_IO;
  }
  tape_fd_adopt(fd, path);
  char line[4096 + 512] = "tape ", *p = tape_utoa(line + 5, ht_g.pid);
  *p++ = ' ';
  size_t m = strnlen(prog, 200), k = strnlen(tape.path, sizeof(tape.path));
  memcpy(p, prog, m); p += m;
  *p++ = '\t';
  memcpy(p, tape.path, k); p += k;
  *p++ = '\n';
  *p = 0;
  tape_report(line);
  static char argv[65536];
  int afd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  ssize_t alen = 0, r;
  while (afd >= 0 && alen < (ssize_t)sizeof(argv) &&
         (r = read(afd, argv + alen, sizeof(argv) - (size_t)alen)) > 0) alen += r;
  if (afd >= 0) close(afd);
  if (alen > 0 && argv[alen - 1] == 0) alen--;
  HtTapeInfo info = { 0 };
  info.exe = exe;
  info.argv = argv;
  info.argv_len = (size_t)alen;
  info.sample = ht_opt.sample;
  info.unwind = (uint32_t)ht_opt.unwind;
  info.frames = (uint32_t)ht_opt.frames;
  info.frontend = "native";
  int rc = tape_begin(tape_fd_sink, NULL, tape_fd_close, &info, 1);
  if (rc) { tape_fd_close(NULL); ht_log("cannot start recording: %s", heaptape_strerror(rc)); }
  else tape.mode = TAPE_ENV;
  ht_guard--;
  return rc;
}

/* The preloaded image starts: it is the traced process (first, or after
** its exec), or a program a child exec'd, recorded only with follow_exec. */
static void tape_start_image(void)
{
  ht_options_load();
  const char *t = ht_getenv("_HEAPTAPE_PID");
  if (!t || !strtoul(t, NULL, 10)) { tape_start_env(TAPE_FIRST); return; }
  if (strtoul(t, NULL, 10) == (unsigned long)getpid()) { tape_start_env(TAPE_AGAIN); return; }
  if (ht_opt.follow_exec) { tape_start_env(TAPE_CHILD); return; }
  char exe[4096];
  tape_report_child(tape_prog(exe, sizeof(exe)));
  tape_unpreload();                     /* nor its own children */
}

/* -- Fork and process lifetime ------------------------------------------------- */

/* Before fork: nothing of ours runs in the middle of the fork. */
void ht_tape_atfork_prepare(void) { ht_guard++; }

/* After fork, parent side. */
void ht_tape_atfork_parent(void) { ht_guard--; }

/* After fork, child side: stop, or start a fresh tape when following. */
void ht_tape_atfork_child(void)
{
  int was = atomic_load(&tape.active);
  int mode = tape.mode;
  atomic_store(&ht_g.native, 0);
  atomic_store(&ht_g.running, 0);
  atomic_store(&tape_main_gone, 0);     /* this process's first thread is alive */
  ht_record_forget_threads();
  if (was) {                            /* the parent's writer and thread are not ours */
    if (mode == TAPE_ENV && tape_fd_is_tape(tape.fd)) close(tape.fd);
    tape.w = NULL;
    tape.dict = NULL;
    tape.has_thread = 0;
    tape.mode = TAPE_OFF;
    tape.fd = -1;
    pthread_mutex_init(&tape.dict_lock, NULL);
    pthread_mutex_init(&tape.quit_lock, NULL);
    atomic_store(&tape.active, 0);
  }
  ht_guard--;
  if (was && mode == TAPE_ENV && ht_opt.follow_fork) {
    ht_record_fences();                 /* membarrier registration is per process */
    tape_start_env(TAPE_CHILD);
  } else if (was && mode == TAPE_ENV) {
    char exe[4096];
    tape_report_child(tape_prog(exe, sizeof(exe)));
    if (!ht_opt.follow_exec) tape_unpreload();  /* what it execs is not recorded */
  }
}

/* Finalise from _exit / _Exit: the exit status is known here. */
void ht_record_exit(int status)
{
  if (atomic_load(&tape.active) && (uint32_t)syscall(SYS_getpid) == ht_g.pid)
    ht_tape_stop((uint64_t)(status & 0xff), 1);
}

static _Atomic uint64_t tape_status = UINT64_MAX; /* exit status for the trailer */

/* Remember the exit status of exit(), quick_exit() or main's return. */
void ht_record_status(int status)
{
  atomic_store(&tape_status, (uint64_t)(status & 0xff));
}

/* at_quick_exit handler, registered before the program's, so it runs after
** them: glibc's quick_exit then calls its internal _exit, past the interposer. */
static void tape_quick_exit(void)
{
  if (atomic_load(&tape.active) && (uint32_t)getpid() == ht_g.pid)
    ht_tape_stop(atomic_load(&tape_status), 1);
}

/*
** exec: the image may be replaced, or the call may fail (a shell tries every
** directory of PATH in turn). So before it the tape is completed as at a
** stop, without stopping anything: the writer thread is paused, every
** thread's buffer taken (threads go on recording into fresh ones), and the
** trailer written (no status: the program goes on as another image). If
** the exec fails, the trailer is cut off again and the same tape goes on,
** with the events made meanwhile; if it succeeds, close-on-exec closes it.
** Not in a vfork child (its pid differs).
*/
int ht_record_exec(void)
{
  if (!atomic_load(&tape.active) || tape.mode != TAPE_ENV || tape.exec_pending ||
      (uint32_t)syscall(SYS_getpid) != ht_g.pid)
    return 0;
  ht_guard++;
  int e = errno;
  tape_writer_pause();
  uint64_t end = ht_clock_ns(CLOCK_MONOTONIC) + TAPE_STOP_WAIT_NS;
  for (ThreadRec *t = atomic_load(&ht_g.threads); t; t = t->next)
    for (int i = 0; !ht_record_steal(t, 0) && !ht_record_held_here(t); i++) {
      if (i >= 64 && ht_clock_ns(CLOCK_MONOTONIC) > end) break;  /* (its events may go) */
      __builtin_ia32_pause();
    }
  tape_drain();
  tape_rss();
  if (ht_maps_changed()) ht_maps_scan(&tape.own);
  tape_own_flush(&tape.own, NULL);
  tape.exec_off = tape.off;
  tape.exec_packets = ht_writer_packets(tape.w);
  tape.exec_bytes = ht_writer_bytes(tape.w);
  HtTrailer tr = { tape.events, atomic_load(&ht_g.lost), tape_tick(), UINT64_MAX };
  ht_writer_trailer(tape.w, &tr);
  tape.exec_pending = 1;
  errno = e;
  ht_guard--;
  return 1;
}

/* The exec failed and the image goes on: the same tape, its trailer cut off. */
void ht_record_exec_failed(void)
{
  if (!tape.exec_pending) return;
  ht_guard++;
  int e = errno;
  tape.exec_pending = 0;
  if (tape_fd_owned() && tape.seekable && !ftruncate(tape.fd, (off_t)tape.exec_off)) {
    tape.off = tape.exec_off;
    ht_writer_resume(tape.w, tape.exec_packets, tape.exec_bytes);
  }                                     /* (else the tape ends at that trailer) */
  tape_writer_start();
  errno = e;
  ht_guard--;
}

/* Is the library preloaded (as opposed to linked by a program or module)? */
static int tape_preloaded(void)
{
  const char *pre = ht_getenv("LD_PRELOAD");
  return pre && strstr(pre, "libheaptape") != NULL;
}

/*
** Set-up, once per process, from the constructor or from the first
** allocation if that comes first: libraries initialised before this one
** (libstdc++'s emergency pool, 72 KiB) allocate before its constructor
** runs. Not before libc has initialised itself (environ is set then): the
** dynamic loader's own early allocations stay unrecorded.
*/
static void tape_setup(void)
{
  int exp = 0;
  if (!atomic_compare_exchange_strong(&ht_g.setup, &exp, 1)) return;
  ht_guard++;
  ht_options_load();
  ht_record_setup();
  ht_record_fences();
  ht_unwind_init();
  ht_maps_self((const void *)tape_setup, &ht_g.self_lo, &ht_g.self_hi);
  pthread_atfork(ht_tape_atfork_prepare, ht_tape_atfork_parent, ht_tape_atfork_child);
  if (tape_preloaded()) {              /* (a library that may be unloaded registers nothing) */
    at_quick_exit(tape_quick_exit);
    tape_start_image();
  }
  atomic_store(&ht_g.setup, 2);
  ht_guard--;
}

/* Set up and start ahead of the constructor; 1 if now recording. */
int ht_record_early(void)
{
  extern char **environ;
  if (ht_guard || !environ) return 0;
  tape_setup();
  return ht_record_on();
}

/* Constructor: set up unless an earlier allocation did. */
__attribute__((constructor(101))) static void tape_ctor(void)
{
  tape_setup();
}

/* Destructor: runs after the program's static destructors; write the trailer. */
__attribute__((destructor(101))) static void tape_dtor(void)
{
  if (atomic_load(&tape.active) && (uint32_t)getpid() == ht_g.pid)
    ht_tape_stop(atomic_load(&tape_status), 1);
}

/* heaptape -- a recording session: start and stop, and the writer thread
** that seals the threads' buffers into the tape, compressed, in order. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "maps.h"
#include "tape.h"
#include "../base/fdio.h"
#include "../../include/heaptape.h"

#define TAPE_FLUSH_NS 100000000ULL     /* periodic flush and RSS interval */
#define TAPE_TICK_NS 1000000L          /* writer thread wake-up (full trace) */
#define TAPE_WRITER_STACK (1u << 20)   /* writer thread stack (it may run exit) */
#define TAPE_STOP_WAIT_NS 500000000ULL /* the longest a stop waits for busy threads */
#define TAPE_RAW_BACKLOG 64            /* buffers queued behind one: store it raw */
#define TAPE_RAW_STOPPING 8            /* the same while a stop or an exec waits */

typedef struct Tape {
  int mode;                  /* HT_TAPE_* */
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
  _Atomic int active;        /* between start and stop */
  HtStream own;              /* writer thread's stream: RSS, MODULE */
  uint8_t *own_body;         /* its body */
  uint64_t events;           /* seq-bearing records sealed */
  uint64_t last_flush;       /* last periodic flush (ns since start) */
  uint64_t exec_packets, exec_bytes; /* the writer's counts before an exec's trailer */
} Tape;

static Tape tape = { .dict_lock = PTHREAD_MUTEX_INITIALIZER,
                     .quit_lock = PTHREAD_MUTEX_INITIALIZER,
                     .quit_cond = PTHREAD_COND_INITIALIZER };
static _Atomic uint64_t tape_status = UINT64_MAX; /* exit status for the trailer */
static _Atomic uint32_t *_Atomic tape_watch_word; /* ht_tape_watch: polled by the writer */
static void (*tape_watch_fn)(void);  /* run by the writer when it is set */

/* -- The writer thread ------------------------------------------------------ */

/* Seal one queued buffer into the tape (ht_bufpool_drain); with a backlog
** behind it (the program allocates faster than zstd compresses, or a stop
** or an exec waits for the drain) it is stored uncompressed: a stop never
** waits seconds for compression, and the sealer compresses later. */
static void tape_write_buf(const HtBuf *b, uint32_t left, void *ctx)
{
  (void)ctx;
  if (!b->len) return;
  ht_writer_raw(tape.w, left >= (atomic_load(&tape.quit) ? TAPE_RAW_STOPPING : TAPE_RAW_BACKLOG));
  HtStream v;                           /* ht_writer_stream seals a stream view */
  memset(&v, 0, offsetof(HtStream, ab)); /* (not its 32 KiB of back-reference tables) */
  v.buf = (uint8_t *)b->body;
  v.p = v.end = (uint8_t *)b->body + b->len;
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

/* Write every queued buffer, oldest first, and return them to the pool. */
static void tape_drain(void)
{
  ht_bufpool_drain(tape_write_buf, NULL);
}

/* Flush hook of the writer thread's own stream: write it directly. */
static void tape_own_flush(HtStream *s, void *ctx)
{
  (void)ctx;
  tape.events += s->nev;
  ht_writer_stream(tape.w, s);
}

/* A /proc/self file the writer reads every period, kept open on a high
** descriptor and read again from its start: opened each time, it took the
** lowest free descriptor for a moment, and a program opening a file then
** (a daemon's pipe after closing every descriptor) got another number than
** it gets alone. */
typedef struct ProcFile {
  const char *name;          /* under /proc/self */
  int fd;                    /* -1: not open */
  int low;                   /* no room high up: opened each time instead */
  pid_t pid;                 /* the process it is of (a child inherits it) */
  dev_t dev;                 /* its identity: the program may close it */
  ino_t ino;
} ProcFile;

static ProcFile tape_statm = {.name = "statm", .fd = -1}, tape_stat = {.name = "stat", .fd = -1};

/* pf's path into path (32 bytes). */
static void proc_path(const ProcFile *pf, char *path)
{
  memcpy(path, "/proc/self/", 11);
  memcpy(path + 11, pf->name, strlen(pf->name) + 1);
}

/* Whether pf->fd is still pf's file. */
static int proc_is(const ProcFile *pf)
{
  struct stat st;
  return pf->fd >= 0 && !fstat(pf->fd, &st) && st.st_dev == pf->dev && st.st_ino == pf->ino;
}

/* Open pf (again): after a fork its descriptor is the parent's file, after
** a daemon closed every descriptor it is gone (then, once, the open takes a
** low number for a moment, as the tape's own reopening does). */
static void proc_open(ProcFile *pf)
{
  pid_t pid = getpid();
  if (pf->fd >= 0 && pf->pid == pid && proc_is(pf)) return;
  if (pf->fd >= 0 && proc_is(pf)) close(pf->fd);  /* the parent's, inherited: ours */
  pf->fd = -1;
  if (pf->low) return;
  char path[32];
  proc_path(pf, path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0) return;
  if (fstat(fd, &st)) { close(fd); return; }
  int h = ht_fd_high(fd);
  if (h == fd) {  /* a low number held for good would shift the program's */
    close(fd);
    pf->low = 1;
    return;
  }
  pf->fd = h;
  pf->pid = pid;
  pf->dev = st.st_dev;
  pf->ino = st.st_ino;
}

/* Close pf if its descriptor is still ours (a stop leaves none behind). */
static void proc_close(ProcFile *pf)
{
  if (pf->fd >= 0 && pf->pid == getpid() && proc_is(pf)) close(pf->fd);
  pf->fd = -1;
}

/* Bytes of /proc/self/<pf's name> into b (NUL-terminated); 0 if unreadable. */
static size_t tape_proc(ProcFile *pf, char *b, size_t cap)
{
  proc_open(pf);
  ssize_t n = -1;
  if (pf->fd >= 0) n = pread(pf->fd, b, cap - 1, 0);
  else if (pf->low) {  /* (a soft limit of 128 descriptors or fewer) */
    char path[32];
    proc_path(pf, path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) { n = read(fd, b, cap - 1); close(fd); }
  }
  if (n <= 0) return 0;
  b[n] = 0;
  return (size_t)n;
}

/* Append an RSS record from /proc/self/statm. */
static void tape_rss(void)
{
  char b[128];
  if (!tape_proc(&tape_statm, b, sizeof(b))) return;
  char *p = b;
  while (*p && *p != ' ') p++;
  uint64_t pages = 0;
  for (p++; *p >= '0' && *p <= '9'; p++) pages = pages * 10 + (uint64_t)(*p - '0');
  ht_stream_time(&tape.own, ht_clock_coarse());
  ht_stream_value(&tape.own, HT_R_RSS, ht_record_seq_shared(),
                  pages * (uint64_t)sysconf(_SC_PAGESIZE));
}

/* Periodic work: RSS, module changes, take partial buffers of every thread
** (after the records that void the threads' blocks of numbers: the
** threads' packets then say which numbers they will not use). */
static void tape_periodic(void)
{
  tape_rss();
  if (ht_maps_changed()) ht_maps_scan(&tape.own);
  for (ThreadRec *t = atomic_load(&ht_g.threads); t; t = t->next)
    for (int i = 0; i < 100 && !ht_record_steal(t, 0); i++) __builtin_ia32_pause();
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
void ht_tape_thread_exit(void)
{
  if (syscall(SYS_gettid) == getpid()) atomic_store(&tape_main_gone, 1);
}

/* Is the writer thread the last one left (beside the main thread's zombie)? */
static int tape_alone(void)
{
  char b[1024];
  if (!tape_proc(&tape_stat, b, sizeof(b))) return 0;
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
  tape_own_flush(&tape.own, NULL);      /* the modules: the threads' first
                                           events wait for their numbers */
  tape.last_flush = ht_clock_tick();
  long tick = ht_g.sample ? (long)TAPE_FLUSH_NS : TAPE_TICK_NS; /* (sampled: direct clock) */
  while (!atomic_load(&tape.quit)) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += tick;
    if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
    pthread_mutex_lock(&tape.quit_lock);
    while (!atomic_load(&tape.quit) &&
           pthread_cond_timedwait(&tape.quit_cond, &tape.quit_lock, &ts) != ETIMEDOUT) {}
    pthread_mutex_unlock(&tape.quit_lock);
    uint64_t now = ht_clock_tick();
    tape_drain();
    if (now - tape.last_flush >= TAPE_FLUSH_NS) {
      tape.last_flush = now;
      tape_periodic();
    }
    _Atomic uint32_t *w = atomic_load(&tape_watch_word);
    if (w && atomic_load(w) && !atomic_load(&tape.quit)) {
      tape_watch_fn();                  /* stops the session from this thread */
      pthread_detach(pthread_self());   /* nobody joins it: it ends here */
      return NULL;
    }
    if (atomic_load(&tape_main_gone) && !atomic_load(&tape.quit) && tape_alone()) {
      tape.has_thread = 0;              /* the stop in exit must not wait for us */
      ht_guard = 0;                     /* atexit handlers' events are the program's */
      ht_tape_status_set(0);
      exit(0);
    }
  }
  return NULL;
}

/* -- Start and stop ----------------------------------------------------------- */

/* Start the writer thread. */
static void tape_writer_start(void)
{
  /* Its /proc files now, while the program waits (ProcFile: in a child,
  ** after fork, they are the parent's until opened again). */
  proc_open(&tape_statm);
  proc_open(&tape_stat);
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
  ht_clock_start(info->sample != 0);    /* sampled: events read the clock */
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
  tape.events = 0;
  tape.sink = sink;
  tape.arg = arg;
  tape.on_stop = on_stop;
  atomic_store(&tape.quit, 0);
  info->pid = ht_g.pid;
  info->start_ns = ht_clock_ns(CLOCK_REALTIME);
  info->clock = HT_CLOCK_MONOTONIC;
  info->clock_res = TAPE_TICK_NS;
  int rc = HEAPTAPE_E_NOMEM;
  ht_bufpool_reset(ht_g.pid);
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

/* The process's arguments, NULs between them, as the kernel keeps them;
** its length (0 when unreadable). */
static size_t tape_cmdline(char *buf, size_t cap)
{
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  ssize_t n = 0, r;
  while (fd >= 0 && (size_t)n < cap && (r = read(fd, buf + n, cap - (size_t)n)) > 0) n += r;
  if (fd >= 0) close(fd);
  if (n > 0 && buf[n - 1] == 0) n--;
  return (size_t)n;
}

/* Start a session writing to sink, of the given mode. */
int ht_tape_start(HtSink sink, void *arg, int (*on_stop)(void *),
                  const HtTapeInfo *info, int native, int mode)
{
  HtTapeInfo in = *info;
  static char argv[65536];  /* (one recording at a time) */
  if (!in.argv) {           /* every tape names its command line: "lua5.4 script.lua" */
    in.argv_len = tape_cmdline(argv, sizeof(argv));
    in.argv = argv;
  }
  ht_guard++;
  int rc = tape_begin(sink, arg, on_stop, &in, native);
  if (!rc) tape.mode = mode;
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
  atomic_store(&tape_watch_word, NULL);
  if (tape.has_thread && pthread_equal(pthread_self(), tape.thread))
    tape.has_thread = 0;                 /* the writer ends the process itself */
  tape_writer_pause();
  ht_clock_tick();
  tape_close_streams();
  tape_drain();
  tape_rss();
  proc_close(&tape_statm);
  proc_close(&tape_stat);
  if (ht_maps_changed()) ht_maps_scan(&tape.own);
  uint64_t lost = atomic_load(&ht_g.lost);
  if (lost) ht_stream_value(&tape.own, HT_R_LOST, ht_record_seq_shared(), lost);
  tape_own_flush(&tape.own, NULL);
  if (!tape_lock_bounded(&tape.dict_lock)) {
    ht_dict_flush(tape.dict, tape.w, ht_g.pid);
    if (!ending) ht_dict_destroy(tape.dict);
    tape.dict = NULL;
    pthread_mutex_unlock(&tape.dict_lock);
  }
  HtTrailer tr = { tape.events, lost, ht_clock_tick(), status };
  ht_writer_trailer(tape.w, &tr);
  int rc = ht_writer_error(tape.w);
  if (!ending) ht_writer_destroy(tape.w);
  tape.w = NULL;
  if (tape.on_stop && tape.on_stop(tape.arg) && !rc) rc = HEAPTAPE_E_IO;
  tape.mode = HT_TAPE_OFF;
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

/* Have the writer thread watch word (see tape.h). */
void ht_tape_watch(_Atomic uint32_t *word, void (*fn)(void))
{
  tape_watch_fn = fn;
  atomic_store(&tape_watch_word, word);
}

/* 1 between start and stop. */
int ht_tape_active(void) { return atomic_load(&tape.active); }

/* HT_TAPE_* of the session. */
int ht_tape_mode(void) { return tape.mode; }

/* -- Exec ------------------------------------------------------------------- */
/* lifecycle.c "exec" tells why: the tape is completed before an exec as at
** a stop, without stopping anything, and goes on if the exec fails. */

/* Pause the writer thread, take every thread's buffer (threads go on
** recording into fresh ones) and write everything but the trailer. */
void ht_tape_exec_flush(void)
{
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
}

/* The trailer of a tape that an exec may end: no status. */
void ht_tape_exec_trailer(void)
{
  tape.exec_packets = ht_writer_packets(tape.w);
  tape.exec_bytes = ht_writer_bytes(tape.w);
  HtTrailer tr = { tape.events, atomic_load(&ht_g.lost), ht_clock_tick(), UINT64_MAX };
  ht_writer_trailer(tape.w, &tr);
}

/* The exec failed: the writer goes on (from before the trailer: rewind). */
void ht_tape_exec_resume(int rewind)
{
  if (rewind) ht_writer_resume(tape.w, tape.exec_packets, tape.exec_bytes);
  tape_writer_start();
}

/* -- Fork and exit ------------------------------------------------------------ */

/* Fork child: the parent's writer thread and threads are not ours. */
int ht_tape_forget(void)
{
  int was = atomic_load(&tape.active);
  int mode = tape.mode;
  atomic_store(&ht_g.native, 0);
  atomic_store(&ht_g.running, 0);
  atomic_store(&tape_main_gone, 0);     /* this process's first thread is alive */
  atomic_store(&tape_watch_word, NULL);
  ht_record_forget_threads();
  if (!was) return HT_TAPE_OFF;
  tape.w = NULL;
  tape.dict = NULL;
  tape.has_thread = 0;
  tape.mode = HT_TAPE_OFF;
  pthread_mutex_init(&tape.dict_lock, NULL);
  pthread_mutex_init(&tape.quit_lock, NULL);
  atomic_store(&tape.active, 0);
  return mode;
}

/* Remember the exit status of exit(), quick_exit() or main's return. */
void ht_tape_status_set(int status)
{
  atomic_store(&tape_status, (uint64_t)(status & 0xff));
}

/* The remembered exit status, UINT64_MAX when unknown. */
uint64_t ht_tape_status(void) { return atomic_load(&tape_status); }

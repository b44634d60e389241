/* heaptape -- the recorder's life in a process: set-up (from the constructor
** or the first allocation), fork, exec, exit and the other ways to end. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "env.h"
#include "lifecycle.h"
#include "maps.h"
#include "tape.h"
#include "tapefile.h"

/* -- Fork ----------------------------------------------------------------------- */

/* Before fork: nothing of ours runs in the middle of the fork. */
static void lifecycle_atfork_prepare(void) { ht_guard++; }

/* After fork, parent side. */
static void lifecycle_atfork_parent(void) { ht_guard--; }

/* After fork, child side: stop, or start a fresh tape when following. */
static void lifecycle_atfork_child(void)
{
  int mode = ht_tape_forget();          /* the parent's writer and thread are not ours */
  if (mode == HT_TAPE_ENV) ht_tapefile_forget();
  ht_guard--;
  if (mode == HT_TAPE_ENV && ht_opt.follow_fork) {
    ht_record_fences();                 /* membarrier registration is per process */
    ht_env_start(HT_ENV_CHILD);
  } else if (mode == HT_TAPE_ENV) {
    ht_env_report_child();
    if (!ht_opt.follow_exec) ht_env_unpreload();  /* what it execs is not recorded */
  }
}

/* -- Process end ---------------------------------------------------------------- */

/* Finalise from _exit / _Exit: the exit status is known here. */
void ht_lifecycle_exit(int status)
{
  if (ht_tape_active() && (uint32_t)syscall(SYS_getpid) == ht_g.pid)
    ht_tape_stop((uint64_t)(status & 0xff), 1);
}

/* Remember the exit status of exit(), quick_exit() or main's return. */
void ht_lifecycle_status(int status) { ht_tape_status_set(status); }

/* pthread_exit (tape.c "Process end": main may leave the writer alone). */
void ht_lifecycle_thread_exit(void) { ht_tape_thread_exit(); }

/* at_quick_exit handler, registered before the program's, so it runs after
** them: glibc's quick_exit then calls its internal _exit, past the interposer. */
static void lifecycle_quick_exit(void)
{
  if (ht_tape_active() && (uint32_t)getpid() == ht_g.pid)
    ht_tape_stop(ht_tape_status(), 1);
}

/* -- Exec ----------------------------------------------------------------------- */

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
static int lc_exec_pending;            /* an exec is under way (trailer written, writer paused) */
static uint64_t lc_exec_off;           /* tape bytes before that trailer */

/* Before an exec: complete the tape; 1 if it did. */
int ht_lifecycle_exec(void)
{
  if (!ht_tape_active() || ht_tape_mode() != HT_TAPE_ENV || lc_exec_pending ||
      (uint32_t)syscall(SYS_getpid) != ht_g.pid)
    return 0;
  ht_guard++;
  int e = errno;
  ht_tape_exec_flush();
  lc_exec_off = ht_tapefile_offset();
  ht_tape_exec_trailer();
  lc_exec_pending = 1;
  errno = e;
  ht_guard--;
  return 1;
}

/* The exec failed and the image goes on: the same tape, its trailer cut off
** (when the file cannot be cut, the tape ends at that trailer). */
void ht_lifecycle_exec_failed(void)
{
  if (!lc_exec_pending) return;
  ht_guard++;
  int e = errno;
  lc_exec_pending = 0;
  ht_tape_exec_resume(!ht_tapefile_truncate(lc_exec_off));
  errno = e;
  ht_guard--;
}

/* -- Set-up --------------------------------------------------------------------- */

/* Is the library preloaded (as opposed to linked by a program or module)? */
static int lifecycle_preloaded(void)
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
static void lifecycle_setup(void)
{
  int exp = 0;
  if (!atomic_compare_exchange_strong(&ht_g.setup, &exp, 1)) return;
  ht_guard++;
  ht_options_load();
  ht_record_setup();
  ht_record_fences();
  ht_unwind_init();
  ht_maps_self((const void *)lifecycle_setup, &ht_g.self_lo, &ht_g.self_hi);
  pthread_atfork(lifecycle_atfork_prepare, lifecycle_atfork_parent, lifecycle_atfork_child);
  if (lifecycle_preloaded()) {         /* (a library that may be unloaded registers nothing) */
    at_quick_exit(lifecycle_quick_exit);
    ht_env_start_image();
  }
  atomic_store(&ht_g.setup, 2);
  ht_guard--;
}

/* Set up and start ahead of the constructor; 1 if now recording. */
int ht_lifecycle_early(void)
{
  if (ht_guard || !environ) return 0;
  lifecycle_setup();
  return ht_record_on();
}

/* Constructor: set up unless an earlier allocation did. */
__attribute__((constructor(101))) static void lifecycle_ctor(void)
{
  lifecycle_setup();
}

/* Destructor: runs after the program's static destructors; write the trailer. */
__attribute__((destructor(101))) static void lifecycle_dtor(void)
{
  if (ht_tape_active() && (uint32_t)getpid() == ht_g.pid)
    ht_tape_stop(ht_tape_status(), 1);
}

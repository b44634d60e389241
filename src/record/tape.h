/* heaptape -- a recording session (tape.c): start and stop, the writer thread
** that seals the threads' buffers into the tape, the exec checkpoint. */
#ifndef HT_TAPE_H
#define HT_TAPE_H

#include "record.h"
#include "../format/writer.h"

/* How the running session was started (ht_tape_mode). */
enum { HT_TAPE_OFF = 0, HT_TAPE_ENV = 1, HT_TAPE_SINK = 2, HT_TAPE_ATTACH = 3 };

/* Start a session writing to sink (on_stop called once after the trailer);
** native: record the process's malloc/free from the start; mode: HT_TAPE_ENV
** or HT_TAPE_SINK. 0, or HEAPTAPE_E_RUNNING, _NOMEM, _IO. */
int ht_tape_start(HtSink sink, void *arg, int (*on_stop)(void *),
                  const HtTapeInfo *info, int native, int mode) HT_HIDDEN;
/* Stop: drain all threads, write dictionary and trailer; ending: the
** process ends or execs (maybe in a signal handler): free nothing. */
int ht_tape_stop(uint64_t status, int ending) HT_HIDDEN;
/* Declare a runtime location for the dictionary written at stop. */
int ht_tape_loc(uint64_t id, int kind, const char *name, const char *file,
                uint32_t line, uint64_t aux) HT_HIDDEN;
/* The writer thread polls *word every round; when it is non-zero the
** thread calls fn (which stops the session, from that thread) and ends,
** detached. For the session running now; a stop forgets it. */
void ht_tape_watch(_Atomic uint32_t *word, void (*fn)(void)) HT_HIDDEN;
/* 1 between start and stop. */
int ht_tape_active(void) HT_HIDDEN;
/* HT_TAPE_* of the session (HT_TAPE_OFF once stopped). */
int ht_tape_mode(void) HT_HIDDEN;

/* Before an exec: pause the writer thread, take every thread's buffer and
** write everything; the tape is complete but for its trailer. */
void ht_tape_exec_flush(void) HT_HIDDEN;
/* Then the trailer, without status (the program goes on as another image). */
void ht_tape_exec_trailer(void) HT_HIDDEN;
/* The exec failed: resume the writer thread; rewind: the tape was cut back
** to before the trailer, so the writer's counts go back there too. */
void ht_tape_exec_resume(int rewind) HT_HIDDEN;

/* Fork child: forget the parent's session (its writer thread and threads
** are not ours); returns the HT_TAPE_* mode it was in. */
int ht_tape_forget(void) HT_HIDDEN;
/* Remember the exit status (exit, quick_exit, return from main) for the trailer. */
void ht_tape_status_set(int status) HT_HIDDEN;
/* The remembered exit status, UINT64_MAX when unknown. */
uint64_t ht_tape_status(void) HT_HIDDEN;
/* pthread_exit is ending the calling thread (the main one: see "Process end"). */
void ht_tape_thread_exit(void) HT_HIDDEN;

#endif

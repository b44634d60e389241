/* heaptape -- the recorder's life in a process (lifecycle.c): set-up before
** or by the constructor, fork, exec, the ways a process ends. */
#ifndef HT_LIFECYCLE_H
#define HT_LIFECYCLE_H

#include "record.h"

/* Set up and start now, ahead of the constructor; 1 if now recording. */
int ht_lifecycle_early(void) HT_HIDDEN;

/* Recording, or just started: an allocation made before the recorder's
** constructor ran (another library's initialiser) starts it. Costs one load
** on the path that does not record. */
HT_INLINE int ht_lifecycle_active(void)
{
  if (HT_LIKELY(ht_record_on())) return 1;
  return HT_UNLIKELY(!atomic_load_explicit(&ht_g.setup, memory_order_relaxed)) &&
         ht_lifecycle_early();
}

/* Finalise from _exit: flush everything, write the trailer with status. */
void ht_lifecycle_exit(int status) HT_HIDDEN;
/* Remember the exit status (exit, quick_exit, return from main) for the trailer. */
void ht_lifecycle_status(int status) HT_HIDDEN;
/* pthread_exit is ending the calling thread. */
void ht_lifecycle_thread_exit(void) HT_HIDDEN;
/* Before an exec: flush everything and write the trailer; 1 if it did. */
int ht_lifecycle_exec(void) HT_HIDDEN;
/* The exec returned (failed): the same tape goes on. */
void ht_lifecycle_exec_failed(void) HT_HIDDEN;

#endif

/* heaptape -- signal masks changed by the recorder, exactly: the kernel call,
** with glibc's internal signals left as the thread has them. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recdef.h"

/*
** Why not glibc's sigprocmask: it never lets a caller block or unblock
** glibc's internal signals (SIGCANCEL, which is also SIGTIMER, and
** SIGSETXID), so a save-and-restore through it unblocks them in a thread
** that had them blocked. glibc's SIGEV_THREAD timer thread keeps SIGTIMER
** blocked and waits for it; once a save-and-restore inside the recorder
** (libunwind's locks) unblocked it, the next expiry killed the process.
** These calls keep the internal signals' state whatever the set says.
*/
#define SIGMASK_INTERNAL ((1ULL << (32 - 1)) | (1ULL << (33 - 1)))

/* The calling thread's mask as the kernel has it (first 64 signals). */
static int sigmask_get(uint64_t *cur)
{
  return (int)syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, cur, sizeof(*cur));
}

/* Set the calling thread's mask to m. */
static int sigmask_set(uint64_t m)
{
  return (int)syscall(SYS_rt_sigprocmask, SIG_SETMASK, &m, NULL, sizeof(m));
}

/* sigprocmask for code that runs inside the recorder; errno as sigprocmask. */
int ht_sigmask(int how, const sigset_t *set, sigset_t *old)
{
  uint64_t cur, s = 0, m;
  if (sigmask_get(&cur)) return -1;
  if (set) {
    memcpy(&s, set, sizeof(s));
    s &= ~SIGMASK_INTERNAL;
    if (how == SIG_BLOCK) m = cur | s;
    else if (how == SIG_UNBLOCK) m = cur & ~s;
    else if (how == SIG_SETMASK) m = s | (cur & SIGMASK_INTERNAL);
    else { errno = EINVAL; return -1; }
    if (m != cur && sigmask_set(m)) return -1;
  }
  if (old) {
    memset(old, 0, sizeof(*old));
    memcpy(old, &cur, sizeof(cur));
  }
  return 0;
}

/* Block every signal but glibc's internal ones; the previous mask in *saved. */
void ht_sigmask_block_all(uint64_t *saved)
{
  if (sigmask_get(saved)) { *saved = UINT64_MAX; return; }
  sigmask_set(~SIGMASK_INTERNAL | (*saved & SIGMASK_INTERNAL));
}

/* Put back a mask saved by ht_sigmask_block_all. */
void ht_sigmask_restore(uint64_t saved)
{
  if (saved != UINT64_MAX) sigmask_set(saved);
}

/* heaptape -- sealing the journal while the program runs: between checks
** of the child, the follower takes in what the recorder's writer flushed
** (at least every 100 ms), on the core the program leaves free. */
#include <errno.h>
#include <sys/wait.h>
#include <time.h>

#include "record_seal.h"

/* Wait for pid, sealing its journal meanwhile. */
pid_t ht_record_seal_wait(pid_t pid, int *status, HtSealFollow *sf)
{
  for (;;) {
    pid_t w = waitpid(pid, status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) return w;
    if (ht_sealfollow_poll(sf, 0)) continue;
    struct timespec ts = {0, 20000000};  /* nothing new: the next flush */
    nanosleep(&ts, NULL);
  }
}

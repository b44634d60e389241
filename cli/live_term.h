/* heaptape -- the live view's terminal session: curses on /dev/tty, keys,
** a refresh every second, and the terminal restored however it ends. */
#ifndef HT_LIVE_TERM_H
#define HT_LIVE_TERM_H

#include <sys/types.h>

#include "../src/analyze/follow.h"

/* Run the view over f until the user quits (q) or a signal asks to
** (SIGINT, SIGTERM, SIGHUP). child (> 0) is the program recorded: its end
** is shown (*reaped set to 1); if it is heaptape's child its exit status is
** stored in *status and signals sent to heaptape by kill go on to it, else
** (another process: `live --pid`, an attached one) its end is noticed when
** it is gone or a zombie. title names what is watched. Returns 0, or -1 after one line on stderr when no
** terminal could be set up (nothing was drawn). */
int ht_live_term_run(HtFollow *f, pid_t child, int *status, int *reaped,
                     const char *title);

#endif

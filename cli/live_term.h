/* heaptape -- the live view's terminal session: curses on /dev/tty, keys,
** a refresh every second, and the terminal restored however it ends. */
#ifndef HT_LIVE_TERM_H
#define HT_LIVE_TERM_H

#include <sys/types.h>

#include "../src/analyze/follow.h"

/* Run the view over f until the user quits (q) or a signal asks to
** (SIGINT, SIGTERM, SIGHUP). child (> 0) is the program recorded: its end
** is shown and its exit status stored in *status (*reaped set to 1). title
** names what is watched. Returns 0, or -1 after one line on stderr when no
** terminal could be set up (nothing was drawn). */
int ht_live_term_run(HtFollow *f, pid_t child, int *status, int *reaped,
                     const char *title);

#endif

/* heaptape -- start-up from the environment (env.c): the tape each process
** of a `heaptape record` or LD_PRELOAD run writes, and what it reports. */
#ifndef HT_ENV_H
#define HT_ENV_H

#include "recdef.h"

/* How a process's tape is named (env.c "Which tape a process writes"). */
enum {
  HT_ENV_FIRST,          /* the traced process: the template as it is */
  HT_ENV_CHILD,          /* a forked (or exec'd, followed) child: ".pid" added */
  HT_ENV_AGAIN           /* the traced process after an exec: ".prog" added */
};

/* Open the tape and start recording into it; 0 or HEAPTAPE_E_*. */
int ht_env_start(int how) HT_HIDDEN;
/* The preloaded image starts: record it, or report it as not recorded. */
void ht_env_start_image(void) HT_HIDDEN;
/* Report the calling process as not recorded ("child PID PROG"). */
void ht_env_report_child(void) HT_HIDDEN;
/* Remove libheaptape.so from LD_PRELOAD in our own environment, in place. */
void ht_env_unpreload(void) HT_HIDDEN;

#endif

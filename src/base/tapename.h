/* heaptape -- a tape's name from its template, built one way for the recorder
** (each process names its tape) and `heaptape record` (which names the first). */
#ifndef HT_TAPENAME_H
#define HT_TAPENAME_H

#include <stddef.h>
#include "ht_def.h"

/* The template when none is given: %e the program's name, %p its pid. */
#define HT_TAPENAME_DEFAULT "heaptape.%e.%p.tape"

/* Expand tmpl (NULL or "": the default) into out: %p becomes pid, %e prog,
** anything else stays. Stops short of cap - 64, leaving room for suffixes.
** Sets *had_pid and *had_prog (either may be NULL) when tmpl names them.
** Returns the length written; no allocation. */
size_t ht_tapename(char *out, size_t cap, const char *tmpl, const char *prog,
                   const char *pid, int *had_pid, int *had_prog) HT_HIDDEN;

#endif

/* heaptape -- error codes and their messages, one X-macro table.
** Values are pinned: append new codes, never renumber (they are ABI). */

/* HTERRDEF(name, value, message) */
HTERRDEF(OK,        0,  "success")
HTERRDEF(MISUSE,    -1, "invalid argument or call out of order")
HTERRDEF(RUNNING,   -2, "profiler is already running")
HTERRDEF(NOMEM,     -3, "out of memory")
HTERRDEF(IO,        -4, "I/O error")
HTERRDEF(NOTRUNNING,-5, "profiler is not running")
HTERRDEF(NOTTAPE,   -6, "not a heaptape tape")
HTERRDEF(VERSION,   -7, "tape format version is newer than this heaptape")
HTERRDEF(CORRUPT,   -8, "tape is corrupt")
HTERRDEF(TRUNCATED, -9, "tape is truncated")
HTERRDEF(UNSUPPORTED,-10, "not supported")
HTERRDEF(NOENT,     -11, "no such file")

/* heaptape -- the message of every error code, one X-macro table.
** The codes and their pinned values live in include/heaptape_errors.h;
** err.c checks that this table names each of them once. */

/* HTERRDEF(name, message): HEAPTAPE_E_<name> */
HTERRDEF(OK,          "success")
HTERRDEF(MISUSE,      "invalid argument or call out of order")
HTERRDEF(RUNNING,     "profiler is already running")
HTERRDEF(NOMEM,       "out of memory")
HTERRDEF(IO,          "I/O error")
HTERRDEF(NOTRUNNING,  "profiler is not running")
HTERRDEF(NOTTAPE,     "not a heaptape tape")
HTERRDEF(VERSION,     "tape format version is newer than this heaptape")
HTERRDEF(CORRUPT,     "tape is corrupt")
HTERRDEF(TRUNCATED,   "tape is truncated")
HTERRDEF(UNSUPPORTED, "not supported")
HTERRDEF(NOENT,       "no such file")

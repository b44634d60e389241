/* heaptape -- the public error codes, in a header of their own so that
** programs (and heaptape's own files) can name them without the rest of the
** API, as zstd's zstd_errors.h does.
**
** Every heaptape call that can fail returns 0 (HEAPTAPE_OK) or one of these
** negative codes; heaptape_strerror() in heaptape.h names them. The values
** are pinned: new codes are appended, none is ever renumbered (they are ABI).
*/
#ifndef HEAPTAPE_ERRORS_H
#define HEAPTAPE_ERRORS_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
  HEAPTAPE_OK = 0,
  HEAPTAPE_E_OK = 0,             /* the same, for tables indexed by name */
  HEAPTAPE_E_MISUSE = -1,        /* invalid argument or call out of order */
  HEAPTAPE_E_RUNNING = -2,       /* a recording is already running */
  HEAPTAPE_E_NOMEM = -3,         /* out of memory */
  HEAPTAPE_E_IO = -4,            /* the writer or on_stop failed */
  HEAPTAPE_E_NOTRUNNING = -5,    /* no recording is running */
  HEAPTAPE_E_NOTTAPE = -6,       /* not a heaptape tape */
  HEAPTAPE_E_VERSION = -7,       /* tape format newer than this heaptape */
  HEAPTAPE_E_CORRUPT = -8,       /* tape is corrupt */
  HEAPTAPE_E_TRUNCATED = -9,     /* tape is truncated */
  HEAPTAPE_E_UNSUPPORTED = -10,  /* not supported */
  HEAPTAPE_E_NOENT = -11         /* no such file */
  /* a new code goes here, with its message in src/base/errmsg.h */
};

#ifdef __cplusplus
}
#endif
#endif

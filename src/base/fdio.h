/* heaptape -- writing everything to a descriptor, the one loop for it. */
#ifndef HT_FDIO_H
#define HT_FDIO_H

#include <stdint.h>
#include "ht_def.h"

/* Write the len bytes at data to fd, at offset off (pwrite) or, if off < 0,
** at its position (write); retries on EINTR and short writes. Returns the
** bytes written: len, or less after an error (errno says which).
** Async-signal-safe. */
size_t ht_fd_write(int fd, const void *data, size_t len, int64_t off) HT_HIDDEN;

#endif

/* heaptape -- writing everything to a descriptor, and reading n bytes at
** an offset: the one loop for each. */
#ifndef HT_FDIO_H
#define HT_FDIO_H

#include <stdint.h>
#include "ht_def.h"

/* Write the len bytes at data to fd, at offset off (pwrite) or, if off < 0,
** at its position (write); retries on EINTR and short writes. Returns the
** bytes written: len, or less after an error (errno says which).
** Async-signal-safe. */
size_t ht_fd_write(int fd, const void *data, size_t len, int64_t off) HT_HIDDEN;

/* fd moved near the top of the soft limit of descriptors, close-on-exec,
** out of the program's way (fd itself when there is no room). */
int ht_fd_high(int fd) HT_HIDDEN;

/* Read exactly n bytes of fd at off into buf (pread; retries on EINTR and
** short reads). 0, or -1 when fewer were there or an error came. */
int ht_fd_pread(int fd, void *buf, size_t n, int64_t off) HT_HIDDEN;

#endif

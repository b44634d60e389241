/* heaptape -- writing everything to a descriptor, and the public writer
** callback built on it (heaptape_fd_writer). No allocation, no stdio. */
#include <errno.h>
#include <unistd.h>
#include "fdio.h"
#include "../../include/heaptape.h"

/* Write all of data to fd (at off if off >= 0); returns the bytes written. */
size_t ht_fd_write(int fd, const void *data, size_t len, int64_t off)
{
  const char *p = data;
  size_t done = 0;
  while (done < len) {
    ssize_t n = off < 0 ? write(fd, p + done, len - done)
                        : pwrite(fd, p + done, len - done, (off_t)off + (off_t)done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += (size_t)n;
  }
  return done;
}

/* heaptape_options.writer for a descriptor passed as (void *)(intptr_t)fd. */
HT_API size_t heaptape_fd_writer(const void *data, size_t len, void *arg)
{
  return ht_fd_write((int)(intptr_t)arg, data, len, -1);
}

/* heaptape -- writing everything to a descriptor, reading n bytes at an
** offset, and the public writer callback built on the first
** (heaptape_fd_writer). No allocation, no stdio. */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#include "fdio.h"
#include "../../include/heaptape.h"

#define FD_HEADROOM 64                 /* a high descriptor: this far below the limit */

int ht_fd_high(int fd)
{
  struct rlimit rl;
  rlim_t lim = 1024;
  if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < lim) lim = rl.rlim_cur;
  if (lim <= 2 * FD_HEADROOM) return fd;
  int h = fcntl(fd, F_DUPFD_CLOEXEC, (int)(lim - FD_HEADROOM));
  if (h < 0) return fd;
  close(fd);
  return h;
}

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

/* Read all n bytes at off, or fail. */
int ht_fd_pread(int fd, void *buf, size_t n, int64_t off)
{
  char *p = buf;
  size_t done = 0;
  while (done < n) {
    ssize_t r = pread(fd, p + done, n - done, (off_t)off + (off_t)done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    done += (size_t)r;
  }
  return 0;
}

/* heaptape_options.writer for a descriptor passed as (void *)(intptr_t)fd. */
HT_API size_t heaptape_fd_writer(const void *data, size_t len, void *arg)
{
  return ht_fd_write((int)(intptr_t)arg, data, len, -1);
}

/* heaptape -- the tape file: opened close-on-exec, moved out of the program's
** way, its identity checked before every write and reopened if taken away. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tapefile.h"
#include "../base/fdio.h"
#include "../../include/heaptape.h"

/*
** The tape's descriptor belongs to the program's process, and programs take
** descriptors away: daemons close every one, shells dup2 onto low numbers.
** So it is opened close-on-exec, moved near the top of the soft limit, and
** its identity (device, inode) is checked before every write: when the
** program closed it or put something else on its number, the tape is
** reopened by its absolute path if it is still the same file, and never is
** anything written to a descriptor the recorder does not own.
*/
typedef struct TapeFile {
  int fd;                    /* output file, high and close-on-exec; -1 = none */
  dev_t dev;                 /* its identity, checked before every write */
  ino_t ino;
  int seekable;              /* a regular file: written with pwrite at off */
  int lost;                  /* the program took the descriptor for good */
  uint64_t off;              /* bytes of the file written */
  char path[4096 + 64];      /* absolute path, to reopen it */
} TapeFile;

static TapeFile tf = { .fd = -1 };

/* Does fd still name the tape file? */
static int tapefile_is_tape(int fd)
{
  struct stat st;
  return fd >= 0 && !fstat(fd, &st) && st.st_dev == tf.dev && st.st_ino == tf.ino;
}

/* 1 when tf.fd is the tape, reopening it if the program took it; 0 if lost. */
static int tapefile_owned(void)
{
  if (HT_LIKELY(tapefile_is_tape(tf.fd))) return 1;
  if (tf.lost) return 0;
  int fd = tf.seekable ? open(tf.path, O_WRONLY | O_CLOEXEC) : -1;
  if (tapefile_is_tape(fd)) {
    tf.fd = ht_fd_high(fd);
    return 1;
  }
  if (fd >= 0) close(fd);
  tf.lost = 1;
  tf.fd = -1;
  ht_log("tape %s: the program closed its descriptor and the file cannot be "
         "reopened; the rest of this recording is lost", tf.path);
  return 0;
}

/* Make the freshly opened fd, of the file at path, the tape's descriptor. */
void ht_tapefile_adopt(int fd, const char *path)
{
  struct stat st;
  if (fstat(fd, &st)) memset(&st, 0, sizeof(st));
  tf.dev = st.st_dev;
  tf.ino = st.st_ino;
  tf.seekable = S_ISREG(st.st_mode);
  tf.fd = ht_fd_high(fd);
  tf.off = 0;
  tf.lost = 0;
  size_t n = 0;                          /* absolute: the program may chdir */
  if (path[0] != '/' && getcwd(tf.path, sizeof(tf.path) - 4096 - 2)) {
    n = strlen(tf.path);
    tf.path[n++] = '/';
  }
  size_t m = strnlen(path, sizeof(tf.path) - n - 1);
  memcpy(tf.path + n, path, m);
  tf.path[n + m] = 0;
}

/* Sink that writes to the tape file. */
size_t ht_tapefile_sink(const void *data, size_t len, void *arg)
{
  (void)arg;
  if (!tapefile_owned()) return 0;
  size_t done = ht_fd_write(tf.fd, data, len, tf.seekable ? (int64_t)tf.off : -1);
  tf.off += done;
  return done;
}

/* on_stop of the file mode: close the tape if the descriptor is still ours. */
int ht_tapefile_close(void *arg)
{
  (void)arg;
  int rc = tapefile_is_tape(tf.fd) ? close(tf.fd) : 0;
  tf.fd = -1;
  return rc || tf.lost ? HEAPTAPE_E_IO : 0;
}

/* The tape's absolute path. */
const char *ht_tapefile_path(void) { return tf.path; }

/* Bytes of the tape written so far. */
uint64_t ht_tapefile_offset(void) { return tf.off; }

/* Cut the tape back to off bytes (what an exec that failed had added). */
int ht_tapefile_truncate(uint64_t off)
{
  if (!tapefile_owned() || !tf.seekable || ftruncate(tf.fd, (off_t)off)) return -1;
  tf.off = off;
  return 0;
}

/* Fork child: the parent's descriptor is not ours to write. */
void ht_tapefile_forget(void)
{
  if (tapefile_is_tape(tf.fd)) close(tf.fd);
  tf.fd = -1;
}

/* heaptape -- writing an output file whole or not at all (outfile.h). */
#include <errno.h>
#include <stdio_ext.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

FILE *ht_outfile_open(HtOutFile *o, const char *path, const char *mode)
{
  struct stat st;
  o->tmp[0] = 0;
  if (!stat(path, &st) && !S_ISREG(st.st_mode)) o->f = fopen(path, mode);
  else {
    snprintf(o->tmp, sizeof(o->tmp), "%s.tmp%ld", path, (long)getpid());
    o->f = fopen(o->tmp, mode);
  }
  /* one thread writes it: no lock per call (see main) */
  if (o->f) __fsetlocking(o->f, FSETLOCKING_BYCALLER);
  return o->f;
}

int ht_outfile_close(HtOutFile *o, const char *path, int bad)
{
  int e = errno;
  bad |= ferror(o->f);
  if (fclose(o->f) != 0) { bad = 1; e = errno; }
  o->f = NULL;
  if (!bad && o->tmp[0] && rename(o->tmp, path)) { bad = 1; e = errno; }
  if (bad && o->tmp[0]) unlink(o->tmp);
  errno = e;
  return bad ? -1 : 0;
}

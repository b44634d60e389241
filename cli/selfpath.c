/* heaptape -- where the running heaptape binary is, and what it ships
** beside it: the build tree keeps libheaptape.so, the runner and the
** modules next to the binary, `make install` puts them in ../lib/heaptape/. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"

/* Directory of the running heaptape binary into buf (no trailing slash). */
int ht_cli_selfdir(char *buf, size_t len)
{
  ssize_t n = readlink("/proc/self/exe", buf, len - 1);
  if (n <= 0) return -1;
  buf[n] = 0;
  char *slash = strrchr(buf, '/');
  if (!slash) return -1;
  *slash = 0;
  return 0;
}

/* The first of the binary's directory + subs[i] that holds a readable file. */
int ht_cli_beside(const char *const *subs, size_t n, const char *file, char *out, size_t len)
{
  char dir[PATH_MAX];
  if (ht_cli_selfdir(dir, sizeof(dir))) return -1;
  for (size_t i = 0; i < n; i++) {
    char f[PATH_MAX + 128];
    snprintf(f, sizeof(f), "%s%s/%s", dir, subs[i], file);
    if (!access(f, R_OK)) return snprintf(out, len, "%s%s", dir, subs[i]) >= (int)len ? -1 : 0;
  }
  return -1;
}

/* libheaptape.so next to the binary or in ../lib/heaptape/, resolved. */
char *ht_cli_find_lib(void)
{
  static const char *const subs[] = {"", "/../lib/heaptape"};
  char dir[PATH_MAX], cand[PATH_MAX + 32], real[PATH_MAX];
  if (ht_cli_beside(subs, 2, "libheaptape.so", dir, sizeof(dir))) return NULL;
  snprintf(cand, sizeof(cand), "%s/libheaptape.so", dir);
  return realpath(cand, real) ? strdup(real) : NULL;
}

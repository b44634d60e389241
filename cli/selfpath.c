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

/* libheaptape.so next to the binary or in ../lib/heaptape/, resolved. */
char *ht_cli_find_lib(void)
{
  char dir[PATH_MAX];
  if (ht_cli_selfdir(dir, sizeof(dir))) return NULL;
  static const char *const rel[] = {"/libheaptape.so", "/../lib/heaptape/libheaptape.so"};
  for (size_t i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
    char cand[PATH_MAX + 64], real[PATH_MAX];
    snprintf(cand, sizeof(cand), "%s%s", dir, rel[i]);
    if (!access(cand, R_OK) && realpath(cand, real)) return strdup(real);
  }
  return NULL;
}

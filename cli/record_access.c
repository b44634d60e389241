/* heaptape -- `heaptape record --access`: find valgrind and heaptape's tool,
** and start the program under them (docs/ACCESS.md). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmds.h"
#include "record_access.h"

#define RA_TOOL "heaptape-amd64-linux"

/* valgrind's path on PATH into out; 0 if found. */
static int ra_valgrind(char *out, size_t len)
{
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  for (const char *p = path;; p++) {
    const char *q = strchr(p, ':');
    int dlen = q ? (int)(q - p) : (int)strlen(p);
    snprintf(out, len, "%.*s%svalgrind", dlen, p, dlen ? "/" : "./");
    struct stat st;
    if (!stat(out, &st) && S_ISREG(st.st_mode) && !access(out, X_OK)) return 0;
    if (!q) return -1;
    p = q;
  }
}

int ht_record_access_check(char *vg, size_t vglen, char *dir, size_t dirlen)
{
  if (ra_valgrind(vg, vglen)) {
    ht_cli_error("record --access: valgrind not found on PATH (Debian: apt-get install valgrind)");
    return -1;
  }
  static const char *const subs[] = { "/valgrind", "/../lib/heaptape/valgrind" };
  if (ht_cli_beside(subs, 2, RA_TOOL, dir, dirlen)) {
    ht_cli_error("record --access: heaptape's Valgrind tool (valgrind/" RA_TOOL ") is not "
                 "beside the heaptape command (built only where pkg-config knows valgrind)");
    return -1;
  }
  return 0;
}

void ht_record_access_exec(const char *vg, const char *dir, const char *tape,
                           uint64_t sample, char **pargv)
{
  size_t n = 0;
  while (pargv[n]) n++;
  char **argv = calloc(n + 10, sizeof(char *));
  char tapearg[PATH_MAX + 16], samplearg[48], pidarg[48];
  if (!argv) { errno = ENOMEM; return; }
  snprintf(tapearg, sizeof(tapearg), "--tape=%s", tape);
  snprintf(samplearg, sizeof(samplearg), "--access-sample=%" PRIu64, sample);
  snprintf(pidarg, sizeof(pidarg), "--tape-pid=%ld", (long)getpid());
  size_t k = 0;
  argv[k++] = (char *)"valgrind";
  argv[k++] = (char *)"--tool=heaptape";
  argv[k++] = (char *)"-q";
  argv[k++] = (char *)"--trace-children=yes";  /* a wrapper's exec (this pid) */
  argv[k++] = pidarg;
  argv[k++] = tapearg;
  argv[k++] = samplearg;
  for (size_t i = 0; i < n; i++) argv[k++] = pargv[i];
  argv[k] = NULL;
  if (setenv("VALGRIND_LIB", dir, 1)) return;
  execv(vg, argv);
}

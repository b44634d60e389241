/* heaptape -- `heaptape record --python`: the environment that makes python3
** import the heaptape module and start it before the script (docs/PYTHON.md). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "record_lua.h"
#include "record_python.h"

/* The directory holding sitecustomize.py: build/python beside the command,
** else the installed ../lib/heaptape/python. 0 if found. */
static int rpy_dir(char *out, size_t len)
{
  char dir[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
  if (n <= 0) return -1;
  dir[n] = 0;
  char *slash = strrchr(dir, '/');
  if (!slash) return -1;
  *slash = 0;
  static const char *const subs[] = { "/python", "/../lib/heaptape/python" };
  for (size_t i = 0; i < sizeof(subs) / sizeof(*subs); i++) {
    char f[PATH_MAX + 64];
    snprintf(f, sizeof(f), "%s%s/sitecustomize.py", dir, subs[i]);
    if (!access(f, R_OK)) {
      return snprintf(out, len, "%s%s", dir, subs[i]) >= (int)len ? -1 : 0;
    }
  }
  return -1;
}

/* Child side of --python: start-up path, the user's PYTHONPATH kept, output. */
int ht_record_python_env(const char *tape, int native)
{
  char dir[PATH_MAX + 64];
  if (rpy_dir(dir, sizeof(dir))) return -1;
  const char *old = getenv("PYTHONPATH");
  char buf[8192];
  snprintf(buf, sizeof(buf), "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
  int rc = 0;
  if (old) rc |= setenv("HEAPTAPE_PYTHONPATH", old, 1);   /* absent: PYTHONPATH was unset */
  else rc |= unsetenv("HEAPTAPE_PYTHONPATH");
  rc |= setenv("PYTHONPATH", buf, 1);
  rc |= setenv("HEAPTAPE_PYTHON_OUTPUT", tape, 1);
  rc |= setenv("HEAPTAPE_PYTHON_NATIVE", native ? "1" : "0", 1);
  if (!native) rc |= ht_record_unpreload();
  return rc;
}

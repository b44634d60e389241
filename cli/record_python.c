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
  static const char *const subs[] = { "/python", "/../lib/heaptape/python" };
  return ht_cli_beside(subs, 2, "sitecustomize.py", out, len);
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

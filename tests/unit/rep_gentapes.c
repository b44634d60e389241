/* heaptape -- writes the report tests' golden tapes into a directory.
** `make B=... tapes` runs it on tests/data; the output is deterministic. */
#include <stdio.h>

#include "rep_tapes.h"

/* Write n bytes of p to dir/name; 0 or -1. */
static int gen_write(const char *dir, const char *name, const uint8_t *p, size_t n)
{
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) { perror(path); return -1; }
  int bad = fwrite(p, 1, n, f) != n;
  bad |= fclose(f) != 0;
  if (bad) perror(path);
  return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : "tests/data";
  static Tape t;
  int rc = 0;
  tape_basic(&t);
  rc |= gen_write(dir, "rep_basic.tape", t.p, t.n);
  /* The same tape cut 20 bytes into its trailer packet. */
  rc |= gen_write(dir, "rep_trunc.tape", t.p, t.n - 40);
  free(t.p);
  tape_lua(&t);
  rc |= gen_write(dir, "rep_lua.tape", t.p, t.n);
  free(t.p);
  tape_sampled(&t);
  rc |= gen_write(dir, "rep_sampled.tape", t.p, t.n);
  free(t.p);
  return rc ? 1 : 0;
}

/* heaptape -- `heaptape record --ruby`: the environment that makes ruby
** require the heaptape extension and start it before the script (docs/RUBY.md). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "record_lua.h"
#include "record_ruby.h"

/* The directory holding heaptape_record.rb: build/ruby beside the command,
** else the installed ../lib/site_ruby. 0 if found. */
static int rrb_dir(char *out, size_t len)
{
  static const char *const subs[] = { "/ruby", "/../lib/site_ruby" };
  return ht_cli_beside(subs, 2, "heaptape_record.rb", out, len);
}

/* Prepend `first` to variable name (separated by sep), keeping the old value
** in HEAPTAPE_<name> (absent when it was unset). */
static int rrb_prepend(const char *name, const char *first, const char *sep)
{
  const char *old = getenv(name);
  char keep[64], buf[8192];
  snprintf(keep, sizeof(keep), "HEAPTAPE_%s", name);
  int rc = old ? setenv(keep, old, 1) : unsetenv(keep);
  snprintf(buf, sizeof(buf), "%s%s%s", first, old && *old ? sep : "", old && *old ? old : "");
  return rc | setenv(name, buf, 1);
}

/* Child side of --ruby: load path, RUBYOPT, output. */
int ht_record_ruby_env(const char *tape, int native, uint64_t snap_ns)
{
  char dir[PATH_MAX + 64];
  if (rrb_dir(dir, sizeof(dir))) return -1;
  int rc = rrb_prepend("RUBYLIB", dir, ":");
  rc |= rrb_prepend("RUBYOPT", "-rheaptape_record", " ");
  rc |= setenv("HEAPTAPE_RUBY_OUTPUT", tape, 1);
  if (snap_ns) {                 /* sizes current at each snapshot */
    char sec[32];
    snprintf(sec, sizeof(sec), "%.3f", (double)snap_ns / 1e9);
    rc |= setenv("HEAPTAPE_RUBY_SNAP", sec, 1);
  }
  if (!native) rc |= ht_record_unpreload();
  return rc;
}

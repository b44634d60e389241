/* heaptape -- reading a subcommand's arguments from its option table, with
** one message per kind of mistake (see args.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cmds.h"
#include "../src/base/msg.h"
#include "../src/base/parse.h"

/* Start a scan of argv after the subcommand word. */
void ht_args_init(HtArgs *a, int argc, char **argv, const char *cmd, const char *usage,
                  const HtOpt *opts)
{
  *a = (HtArgs){.argc = argc, .argv = argv, .cmd = cmd, .usage = usage, .opts = opts, .i = 1};
}

/* A usage error: the message, then the usage. */
int ht_args_bad(const HtArgs *a, const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  ht_msg("%s: %s", a->cmd, msg);
  if (a->usage) fputs(a->usage, stderr);
  return HT_EXIT_USAGE;
}

/* "no tape given". */
int ht_args_missing(const HtArgs *a, const char *what)
{
  return ht_args_bad(a, "no %s given", what);
}

/* "one tape at a time; extra argument 'X'". */
int ht_args_extra(const HtArgs *a, const char *what, const char *arg)
{
  return ht_args_bad(a, "one %s at a time; extra argument '%s'", what, arg);
}

/* The option of the table named by arg (its first n characters). */
static const HtOpt *args_find(const HtArgs *a, const char *arg, size_t n)
{
  for (const HtOpt *o = a->opts; o && o->name; o++) {
    if (arg[1] != '-' && n == 2 && o->shortc && arg[1] == o->shortc) return o;
    if (arg[1] == '-' && strlen(o->name) == n && !strncmp(o->name, arg, n)) return o;
  }
  return NULL;
}

/* The next option or operand. */
int ht_args_next(HtArgs *a)
{
  if (a->i >= a->argc) return HT_ARG_END;
  const char *arg = a->argv[a->i++];
  a->opt = NULL;
  a->val = arg;
  if (a->operands || arg[0] != '-' || !arg[1]) return HT_ARG_OPERAND;
  if (!strcmp(arg, "--")) {
    a->operands = 1;
    return ht_args_next(a);
  }
  if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
    if (a->usage) fputs(a->usage, stdout);
    return HT_ARG_HELP;
  }
  const char *eq = arg[1] == '-' ? strchr(arg, '=') : NULL;
  size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
  const HtOpt *o = args_find(a, arg, n);
  if (!o) {
    ht_args_bad(a, "unknown option '%.*s'", (int)n, arg);
    return HT_ARG_BAD;
  }
  a->opt = o->name;
  a->val = NULL;
  if (!o->value) {
    if (eq) { ht_args_bad(a, "option '%s' takes no value", o->name); return HT_ARG_BAD; }
    return o->id;
  }
  if (eq) a->val = eq + 1;
  else if (o->value == 2) a->val = NULL;            /* optional, absent */
  else if (a->i < a->argc) a->val = a->argv[a->i++];
  else { ht_args_bad(a, "option '%s' needs a value", o->name); return HT_ARG_BAD; }
  return o->id;
}

/* The current value as a whole number in [min, max]. */
int ht_args_uint(HtArgs *a, uint64_t min, uint64_t max, uint64_t *out)
{
  uint64_t v;
  if (!ht_parse_uint(a->val, &v) && v >= min && v <= max) { *out = v; return 0; }
  ht_args_bad(a, "%s takes a whole number from %llu to %llu, not '%s'", a->opt,
              (unsigned long long)min, (unsigned long long)max, a->val);
  return -1;
}

/* The current value as seconds. */
int ht_args_seconds(HtArgs *a, uint64_t *ns)
{
  if (!ht_parse_seconds(a->val, ns)) return 0;
  ht_args_bad(a, "%s takes seconds (a number from 0 to 1e9), not '%s'", a->opt, a->val);
  return -1;
}

/* The current value as an output file name. */
int ht_args_output(HtArgs *a, const char **out)
{
  if (*a->val) { *out = a->val; return 0; }
  ht_args_bad(a, "%s takes a file name, not ''", a->opt);
  return -1;
}

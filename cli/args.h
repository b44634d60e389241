/* heaptape -- the one way every subcommand reads its arguments: a table of
** options, --name=value or --name value or -x value, "--" ending options,
** and the same message for the same mistake in every command:
**   CMD: unknown option 'X'            CMD: option 'X' needs a value
**   CMD: option 'X' takes no value     CMD: X takes <what>, not 'V'
** each followed by the command's usage on stderr (exit status 2). */
#ifndef HT_ARGS_H
#define HT_ARGS_H

#include <stdint.h>

/* One option of a subcommand; a table ends with a NULL name. */
typedef struct HtOpt {
  const char *name;          /* long form, "--top" */
  char shortc;               /* short form ('o' for -o), or 0 */
  int value;                 /* 0 none, 1 a value (=V or next argument),
                                2 an optional value (only as --name=V) */
  int id;                    /* what ht_args_next returns for it (> 0) */
} HtOpt;

/* An argument scan over argv[1..argc-1]. */
typedef struct HtArgs {
  int argc;                  /* from main */
  char **argv;               /* argv[0] is the subcommand */
  const char *cmd;           /* subcommand name for messages ("report") */
  const char *usage;         /* its usage text */
  const HtOpt *opts;         /* its options */
  int i;                     /* next argument */
  int operands;              /* after "--": operands only */
  const char *opt;           /* the option just returned, as its long name */
  const char *val;           /* its value, or the operand */
} HtArgs;

/* What ht_args_next returns besides an option id. */
enum { HT_ARG_END = 0, HT_ARG_OPERAND = -1, HT_ARG_HELP = -2, HT_ARG_BAD = -3 };

/* Start a scan. */
void ht_args_init(HtArgs *a, int argc, char **argv, const char *cmd, const char *usage,
                  const HtOpt *opts);
/* The next option's id (its value in a->val), HT_ARG_OPERAND (in a->val),
** HT_ARG_HELP (-h, --help: print the usage on stdout and exit 0),
** HT_ARG_END, or HT_ARG_BAD after printing the message and the usage. */
int ht_args_next(HtArgs *a);

/* The value of the current option as a whole number in [min, max]; 0, or -1
** after the message "CMD: OPT takes a whole number from MIN to MAX, not 'V'". */
int ht_args_uint(HtArgs *a, uint64_t min, uint64_t max, uint64_t *out);
/* The value as seconds (>= 0, a fraction allowed) into ns; 0 or -1 likewise. */
int ht_args_seconds(HtArgs *a, uint64_t *ns);
/* The value as an output file name into *out (not empty); 0, or -1 after
** "CMD: OPT takes a file name, not ''". */
int ht_args_output(HtArgs *a, const char **out);
/* A usage error about the current scan: "CMD: <message>", then the usage on
** stderr. Returns HT_EXIT_USAGE. */
int ht_args_bad(const HtArgs *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The usual operand errors: "CMD: no tape given", "CMD: one tape at a time;
** extra argument 'X'" (what names the operand: "tape", "dump"). */
int ht_args_missing(const HtArgs *a, const char *what);
int ht_args_extra(const HtArgs *a, const char *what, const char *arg);

#endif

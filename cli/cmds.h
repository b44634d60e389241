/* heaptape -- the subcommands of the `heaptape` command.
** Each lives in its own cli/cmd_<name>.c and returns the process exit status. */
#ifndef HT_CMDS_H
#define HT_CMDS_H

/* Exit statuses: 0 success, 1 the job failed, 2 bad usage. */
enum { HT_EXIT_OK = 0, HT_EXIT_FAIL = 1, HT_EXIT_USAGE = 2 };

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_lifetimes(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_heapmap(int argc, char **argv);
int cmd_pprof(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_html(int argc, char **argv);

/* Print "heaptape: <fmt>" and a newline to stderr. */
void ht_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

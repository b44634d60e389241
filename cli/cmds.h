/* heaptape -- the subcommands of the `heaptape` command.
** Each lives in its own cli/cmd_<name>.c and returns the process exit status. */
#ifndef HT_CMDS_H
#define HT_CMDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Exit statuses: 0 success, 1 the job failed, 2 bad usage. */
enum { HT_EXIT_OK = 0, HT_EXIT_FAIL = 1, HT_EXIT_USAGE = 2 };

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_lifetimes(int argc, char **argv);
int cmd_access(int argc, char **argv);
int cmd_locks(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_heapmap(int argc, char **argv);
int cmd_pprof(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_html(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_seal(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_live(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);

/* Shared by attach and detach (cli/cmd_attach.c): ask the recorder in pid
** (control block at ctl_addr) to detach and wait; 0 detached, 1 the process
** ended or exec'd, -1 it did not within 10 s. */
int ht_attach_stop(pid_t pid, uintptr_t ctl_addr);
/* Symbolise the tape and print the summary line; 0 or -1. */
int ht_attach_finish(const char *tape, int no_symbols);

struct HtReader;
/* Open a tape; on failure print "heaptape: <path>: <problem>", return -1. */
int ht_cli_open_tape(const char *path, struct HtReader **r);
struct HtAccessInfo;
/* The tape's access figures into *ai; with need, a tape without accesses
** is an error: "heaptape: <path>: no accesses ...", r closed, -1. */
int ht_cli_access_info(const char *path, struct HtReader *r, struct HtAccessInfo *ai,
                       int need);
/* The damage of a tape as one line (what, where, how much), "" if none. */
void ht_cli_damage(const struct HtReader *r, char *buf, size_t len);
/* Print "heaptape: warning: <path>: <damage>" if the tape is damaged. */
void ht_cli_warn_damage(const char *path, const struct HtReader *r);
/* With HEAPTAPE_READ_LOG set: "heaptape: <path>: N events read of M". */
void ht_cli_read_log(const char *path, const struct HtReader *r);

/* cli/selfpath.c: the directory of the running heaptape binary into buf
** (0 or -1); the first of that directory + subs[i] holding file, into out
** (0 or -1); libheaptape.so beside it or in ../lib/heaptape/ (resolved,
** malloc'd), or NULL. */
int ht_cli_selfdir(char *buf, size_t len);
int ht_cli_beside(const char *const *subs, size_t n, const char *file, char *out, size_t len);
char *ht_cli_find_lib(void);

/* Print "heaptape: <fmt>" and a newline to stderr. */
void ht_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

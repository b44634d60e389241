/* heaptape -- `heaptape detach PID`: end a recording `heaptape attach` started
** (through that command when it still runs, else directly). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "args.h"
#include "attach_proc.h"
#include "cmds.h"

static const char detach_usage[] =
  "usage: heaptape detach PID\n"
  "End the recording `heaptape attach` started in process PID: the hooks are\n"
  "removed, the tape closed and symbolised, and the process runs on as\n"
  "before. When that heaptape attach still runs it is told to finish (as by\n"
  "Ctrl-C) and this waits for it; otherwise this does the finishing itself.\n";

/* `heaptape detach PID`. */
int cmd_detach(int argc, char **argv)
{
  HtArgs a;
  ht_args_init(&a, argc, argv, "detach", detach_usage, NULL);
  const char *pidarg = NULL;
  int k;
  while ((k = ht_args_next(&a)) != HT_ARG_END) {
    if (k == HT_ARG_HELP) return HT_EXIT_OK;
    if (k == HT_ARG_BAD) return HT_EXIT_USAGE;
    if (pidarg) return ht_args_extra(&a, "process", a.val);
    pidarg = a.val;
  }
  if (!pidarg) return ht_args_missing(&a, "process");
  char *end;
  long pid = strtol(pidarg, &end, 10);
  if (*end || pid <= 0 || pid > INT32_MAX)
    return ht_args_bad(&a, "PID takes a process id, not '%s'", pidarg);
  if (!ht_proc_state((pid_t)pid)) { ht_cli_error("detach: no such process: %ld", pid); return HT_EXIT_FAIL; }
  uintptr_t ca;
  HtAttachCtl c;
  int r = ht_proc_ctl((pid_t)pid, &ca, &c);
  if (r < 0) {
    ht_cli_error("detach: cannot read process %ld: %s", pid, strerror(errno));
    return HT_EXIT_FAIL;
  }
  if (r == 0 || c.state != HT_AS_RECORDING) {
    ht_cli_error("detach: process %ld is not being recorded by heaptape attach", pid);
    return HT_EXIT_FAIL;
  }
  pid_t att = (pid_t)c.attacher;
  int pfd = att > 0 ? (int)syscall(SYS_pidfd_open, att, 0) : -1;
  char comm[64] = "";
  if (pfd >= 0) {                       /* that heaptape attach still runs: it finishes */
    char p[64];
    snprintf(p, sizeof(p), "/proc/%ld/comm", (long)att);
    FILE *f = fopen(p, "re");
    if (f) { if (!fgets(comm, sizeof(comm), f)) comm[0] = 0; fclose(f); }
  }
  if (pfd >= 0 && !strncmp(comm, "heaptape", 8) && !kill(att, SIGTERM)) {
    struct pollfd p = { pfd, POLLIN, 0 };
    int done = poll(&p, 1, 120000) > 0;
    close(pfd);
    if (!done) { ht_cli_error("detach: heaptape attach (pid %ld) did not finish in 2 min", (long)att); return HT_EXIT_FAIL; }
    fprintf(stderr, "heaptape: detached from process %ld (tape %s, finished by heaptape attach, pid %ld)\n",
            pid, c.tape, (long)att);
    return HT_EXIT_OK;
  }
  if (pfd >= 0) close(pfd);
  int s = ht_attach_stop((pid_t)pid, ca);
  if (s < 0) { ht_cli_error("detach: process %ld did not detach within 10 s", pid); return HT_EXIT_FAIL; }
  fprintf(stderr, "heaptape: detached from process %ld\n", pid);
  return ht_attach_finish(c.tape, 0) ? HT_EXIT_FAIL : HT_EXIT_OK;
}

/* heaptape -- `heaptape record --live`: the record parent runs the live view
** over the tape as it is written, on /dev/tty; the program's own output
** that would go to that terminal goes to a file named when it ends. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "live_term.h"
#include "record_live.h"
#include "record_seal.h"

/* The program's output file: PROG.PID.out. */
void ht_record_live_outname(char *buf, size_t len, const char *prog, pid_t pid)
{
  const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
  snprintf(buf, len, "%s.%d.out", base, (int)pid);
}

/* Point fd at path (opened with flags) when it is a terminal. */
static int live_redirect(int fd, const char *path, int flags)
{
  if (!isatty(fd)) return 0;
  int n = open(path, flags | O_CLOEXEC, 0644);
  if (n < 0) return -1;
  int rc = dup2(n, fd) < 0 ? -1 : 0;  /* (dup2 clears close-on-exec) */
  close(n);
  return rc;
}

/* Child side: terminal streams away from the view's terminal. */
int ht_record_live_stdio(const char *out)
{
  if (live_redirect(0, "/dev/null", O_RDONLY)) return -1;
  int fl = O_WRONLY | O_CREAT | O_APPEND;
  if (isatty(1) || isatty(2)) {  /* one file for both, emptied once */
    int n = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (n < 0) return -1;
    close(n);
  }
  if (live_redirect(1, out, fl) || live_redirect(2, out, fl)) return -1;
  return 0;
}

/* Wait for pid with the view open, then without it. */
pid_t ht_record_live_wait(pid_t pid, int *status, const char *tape, const char *title,
                          HtSealFollow *sf)
{
  HtFollow f;
  int reaped = 0, shown = 0;
  if (tape && !ht_follow_init(&f, tape, (uint32_t)pid)) {
    if (sf) ht_follow_feed(&f, sf);  /* one pass: the sealer's */
    shown = !ht_live_term_run(&f, pid, status, &reaped, title);
    ht_follow_free(&f);
  }
  if (reaped) return pid;
  if (shown) ht_cli_error("the view is closed; %s (pid %d) runs on and is recorded until it "
               "ends (Ctrl-C stops it)", title, (int)pid);
  if (sf) return ht_record_seal_wait(pid, status, sf);
  pid_t w;
  while ((w = waitpid(pid, status, 0)) < 0 && errno == EINTR) {}
  return w;
}

/* heaptape -- `heaptape record --live`: the live view over the tape of the
** program being recorded, run by the record parent while it waits. */
#ifndef HT_RECORD_LIVE_H
#define HT_RECORD_LIVE_H

#include <sys/types.h>
#include "../src/analyze/sealfollow.h"

/* Child side, before exec: the program's standard streams that are the
** terminal the view draws on go elsewhere (stdin from /dev/null, stdout and
** stderr to the file out). Returns 0, or -1 with errno. */
int ht_record_live_stdio(const char *out);
/* The output file's name for the program of pid: PROG.PID.out in the
** current directory, into buf[len]. */
void ht_record_live_outname(char *buf, size_t len, const char *prog, pid_t pid);
/* Wait for pid like waitpid(pid, status, 0) while the view follows tape;
** after the view is closed, the program runs on and is waited for. With sf
** (not NULL), the view's figures come from sf's sealing pass, which goes on
** after the view is closed. Returns waitpid's result. */
pid_t ht_record_live_wait(pid_t pid, int *status, const char *tape, const char *title,
                          HtSealFollow *sf);

#endif

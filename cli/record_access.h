/* heaptape -- `heaptape record --access`: the program under heaptape's
** Valgrind tool (src/vgtool/), which writes the tape with its accesses. */
#ifndef HT_RECORD_ACCESS_H
#define HT_RECORD_ACCESS_H

#include <stddef.h>
#include <stdint.h>

/* Before the fork: valgrind on PATH and the tool beside the command, into
** vg[vglen] and dir[dirlen]; 0, or -1 after a one-line message. */
int ht_record_access_check(char *vg, size_t vglen, char *dir, size_t dirlen);
/* In the child: run PROG under the tool, writing tape (absolute), keeping 1
** access in sample; returns only on failure (errno set). */
void ht_record_access_exec(const char *vg, const char *dir, const char *tape,
                           uint64_t sample, char **pargv);

#endif

/* heaptape -- `heaptape record --pprof-every SECONDS`: pprof snapshots of a
** running program's tape, written by the record parent while it waits. */
#ifndef HT_RECORD_PPROF_H
#define HT_RECORD_PPROF_H

#include <stdint.h>
#include <sys/types.h>
#include "../src/analyze/sealfollow.h"

/* Wait for pid like waitpid(pid, status, 0); meanwhile, every every_ns,
** re-read the tape and write TAPE.NNNN.pb.gz (inuse now, allocations since
** the previous snapshot). With sf (the tape sealed while it runs), the
** snapshots are of the sealing pass's model: no second reader, resolver or
** model (their own only if the sealer gives up). Returns waitpid's result. */
pid_t ht_record_pprof_wait(pid_t pid, int *status, const char *tape, uint64_t every_ns,
                           HtSealFollow *sf);

#endif

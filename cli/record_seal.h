/* heaptape -- `heaptape record`'s sealing while the program runs: the
** record parent, idle otherwise, seals the journal as it is written. */
#ifndef HT_RECORD_SEAL_H
#define HT_RECORD_SEAL_H

#include <sys/types.h>
#include "../src/analyze/sealfollow.h"

/* Wait for pid like waitpid(pid, status, 0); meanwhile seal its journal
** through sf (set up by the caller). Returns waitpid's result. */
pid_t ht_record_seal_wait(pid_t pid, int *status, HtSealFollow *sf);

#endif

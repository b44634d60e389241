/* heaptape -- uncompressed copies of separate debug files, kept per user and
** keyed by build id, so that symbolising never inflates the same DWARF twice. */
#ifndef HT_DEBUGCACHE_H
#define HT_DEBUGCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "../base/ht_def.h"

/*
** Debian's -dbg and -dbgsym packages ship DWARF compressed (SHF_COMPRESSED),
** and libdw inflates every debug section of a file when it opens it: for
** libc6-dbg that is ~50 ms, paid by every finalisation whose stacks touch
** libc (all of them: __libc_start_call_main is at the bottom of each), and
** most of `heaptape record`'s fixed cost on a short run. A build id names
** one exact binary, so its debug information never changes: the first
** finalisation writes an uncompressed copy, later ones open it.
**
** The directory is $HEAPTAPE_CACHE/debug ("off" or empty: no cache), else
** $XDG_CACHE_HOME/heaptape/debug, else $HOME/.cache/heaptape/debug; files
** are <build id in hex>.debug, written under a temporary name and renamed,
** so concurrent runs never see half a file. Deleting them is always safe.
** Nothing here is required: every failure means libdw inflates as before.
*/

/* Is the ELF file open as fd one with build id bid? */
int ht_elf_has_build_id(int fd, const uint8_t *bid, size_t bid_len) HT_HIDDEN;

/* An open descriptor of the cached copy for build id bid, its path in
** *path (malloc'd); -1 when there is none or the cache is off. */
int ht_debugcache_open(const uint8_t *bid, size_t bid_len, char **path) HT_HIDDEN;

/* Given the debug file open as fd for build id bid: when it has compressed
** sections, write the uncompressed copy and return it open (path in *path,
** malloc'd; fd stays the caller's); -1 when nothing was cached. */
int ht_debugcache_store(const uint8_t *bid, size_t bid_len, int fd, char **path) HT_HIDDEN;

#endif

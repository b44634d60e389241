/* heaptape -- the tape file of a recording started from the environment
** (tapefile.c): a descriptor the program cannot take away unnoticed. */
#ifndef HT_TAPEFILE_H
#define HT_TAPEFILE_H

#include "recdef.h"

/* Make the freshly opened fd, of the file at path, the tape's descriptor. */
void ht_tapefile_adopt(int fd, const char *path) HT_HIDDEN;
/* HtSink writing to the tape file (arg unused). */
size_t ht_tapefile_sink(const void *data, size_t len, void *arg) HT_HIDDEN;
/* on_stop: close the tape if the descriptor is still ours; 0 or HEAPTAPE_E_IO. */
int ht_tapefile_close(void *arg) HT_HIDDEN;
/* The tape's absolute path. */
const char *ht_tapefile_path(void) HT_HIDDEN;
/* Bytes of the tape written so far. */
uint64_t ht_tapefile_offset(void) HT_HIDDEN;
/* Cut the tape back to off bytes; 0 when done (a regular file still ours). */
int ht_tapefile_truncate(uint64_t off) HT_HIDDEN;
/* Fork child: close the parent's tape descriptor (the parent writes it). */
void ht_tapefile_forget(void) HT_HIDDEN;

#endif

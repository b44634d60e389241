/* heaptape -- the buffer pool (bufpool.c): packet bodies in a fixed reserved
** region, handed between recording threads and the writer lock-free. */
#ifndef HT_BUFPOOL_H
#define HT_BUFPOOL_H

#include "recdef.h"
#include "../format/stream.h"

typedef struct HtBuf {
  uint32_t next;         /* index + 1 of the next buffer in a stack, 0 = end */
  uint32_t self;         /* its own index + 1 in the pool */
  uint32_t nev;          /* seq-bearing records in the body */
  uint32_t len;          /* bytes of body used */
  uint32_t tid;          /* thread of the body */
  uint16_t gen0;         /* stack generation at body start */
  uint64_t seq0, seq1;   /* first event's and last written sequence number */
  uint64_t ts0;          /* timestamp at body start */
  uint8_t body[HT_BUFBODY]; /* packet body */
} HtBuf;

/* A free buffer, or NULL when none is left. */
HtBuf *ht_bufpool_get(void) HT_HIDDEN;
/* Seal s's body into b and queue it for the writer; s NULL returns b unused. */
void ht_bufpool_queue(HtBuf *b, const HtStream *s) HT_HIDDEN;
/* Hand every queued buffer to fn, oldest first, with the number queued
** after it in this drain, then back to the pool. */
void ht_bufpool_drain(void (*fn)(const HtBuf *b, uint32_t left, void *ctx), void *ctx) HT_HIDDEN;
/* In process pid for the first time (first start, fork child): forget
** every buffer, the parent's are not ours. Nothing in the same process. */
void ht_bufpool_reset(uint32_t pid) HT_HIDDEN;

#endif

/* heaptape -- option values parsed once, the same way everywhere: byte
** sizes, counts, yes/no, seconds. No allocation, no locale but strtod's. */
#ifndef HT_PARSE_H
#define HT_PARSE_H

#include <stdint.h>
#include "ht_def.h"

/* A byte count: digits, then optionally K, M or G (powers of 1024, either
** case), an "i" and a "B" ("512K", "1KiB", "64MB"). 0, or -1 if malformed
** or too large. */
int ht_parse_size(const char *s, uint64_t *out) HT_HIDDEN;
/* A decimal count: digits only. 0, or -1 if malformed or too large. */
int ht_parse_uint(const char *s, uint64_t *out) HT_HIDDEN;
/* yes/no: 1, yes, on, true or 0, no, off, false (either case). 0 or -1. */
int ht_parse_bool(const char *s, int *out) HT_HIDDEN;
/* Seconds, a decimal fraction allowed ("0.25"), at most 1e9, into
** nanoseconds. 0, or -1 if malformed, negative or too large. */
int ht_parse_seconds(const char *s, uint64_t *ns) HT_HIDDEN;

#endif

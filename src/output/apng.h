/* heaptape -- animated PNG (APNG) writer: frames of one size appended one by
** one to a single file any browser plays (the heap map's --animate). */
#ifndef HT_APNG_H
#define HT_APNG_H

#include <stddef.h>
#include <stdint.h>
#include "../base/ht_def.h"

typedef struct Apng HtApng;

/*
**   a = ht_apng_open(path, w, h, nframes, delay_ms, err, len);
**   ht_apng_frame(a, px, err, len) per frame (w*h pixels 0xRRGGBB);
**   ht_apng_close(a, err, len);  (also on errors: it frees a)
** nframes is the count announced in acTL; close fixes it up to the frames
** actually written. Functions returning int give 0, or -1 with one line in
** err naming the file.
*/
HtApng *ht_apng_open(const char *path, unsigned w, unsigned h, unsigned nframes,
                     unsigned delay_ms, char *err, size_t errlen) HT_HIDDEN;
int ht_apng_frame(HtApng *a, const uint32_t *px, char *err, size_t errlen) HT_HIDDEN;
int ht_apng_close(HtApng *a, char *err, size_t errlen) HT_HIDDEN;

#endif

/* heaptape -- the access report (`heaptape access`) as text or JSON. */
#ifndef HT_OUT_ACCREP_H
#define HT_OUT_ACCREP_H

#include <stdio.h>
#include "../analyze/accrep.h"

/* The report as text: a head line, then per site (by accesses) its counts
** and findings, then the access counts per offset of the top sites. */
void ht_accrep_text(FILE *f, const HtAccRep *a, const HtAccessInfo *ai) HT_HIDDEN;
/* The same as one JSON object (docs/ACCESS.md). */
void ht_accrep_json(FILE *f, const HtAccRep *a, const HtAccessInfo *ai, const char *tape) HT_HIDDEN;

#endif

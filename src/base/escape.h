/* heaptape -- escaping strings for JSON and XML outputs, one function each.
** Tools only (stdio): not part of libheaptape.so. */
#ifndef HT_ESCAPE_H
#define HT_ESCAPE_H

#include <stdio.h>
#include "ht_def.h"

enum {
  HT_JSON_SCRIPT = 1         /* also escape < > & so the literal can sit in a <script> */
};

/* s as a JSON string literal, quotes included; NULL prints null.
** flags: HT_JSON_*. */
void ht_json_str(FILE *f, const char *s, unsigned flags) HT_HIDDEN;
/* s as XML text, safe inside attributes; control characters other than tab
** dropped; NULL prints nothing. */
void ht_xml_text(FILE *f, const char *s) HT_HIDDEN;

#endif

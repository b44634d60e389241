/* heaptape -- escaping strings for JSON and XML.
** Every JSON string and XML text of the outputs goes through here. */
#include "escape.h"

/* s as a JSON string literal (NULL: null). */
void ht_json_str(FILE *f, const char *s, unsigned flags)
{
  if (!s) { fputs("null", f); return; }
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p < 0x20 || ((flags & HT_JSON_SCRIPT) && (*p == '<' || *p == '>' || *p == '&')))
      fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

/* s as XML text, safe inside attributes. */
void ht_xml_text(FILE *f, const char *s)
{
  for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
    switch (*p) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    default: if (*p >= 0x20 || *p == '\t') fputc(*p, f); break;
    }
  }
}

/* heaptape -- message lines of the tools (CLI errors, analysis warnings).
** One function formats them, so every line starts "heaptape: ". */
#include <stdio.h>
#include "msg.h"

/* Print "heaptape: <fmt>\n" on stderr from a va_list. */
void ht_vmsg(const char *fmt, va_list ap)
{
  fputs("heaptape: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

/* Print "heaptape: <fmt>\n" on stderr. */
void ht_msg(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  ht_vmsg(fmt, ap);
  va_end(ap);
}

/* heaptape -- the recorder's re-entrancy guard, and a logger that is safe
** inside malloc: stack buffer, no allocation, capped. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "recdef.h"

HT_TLS int ht_guard;                   /* >0 while inside the recorder */

static int log_count;                  /* messages printed (capped) */

/* Print "heaptape: <msg>" to stderr without allocating; at most 32 lines. */
void ht_log(const char *fmt, ...)
{
  if (log_count >= 32) return;
  log_count++;
  char buf[512];
  ht_guard++;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + 10, sizeof(buf) - 11, fmt, ap);
  va_end(ap);
  ht_guard--;
  if (n < 0) return;
  if ((size_t)n > sizeof(buf) - 12) n = (int)sizeof(buf) - 12;
  memcpy(buf, "heaptape: ", 10);
  buf[10 + n] = '\n';
  ssize_t w = write(2, buf, (size_t)n + 11);
  (void)w;
}

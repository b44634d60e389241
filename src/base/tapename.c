/* heaptape -- a tape's name from its template (%p pid, %e program), for the
** recorder inside the profiled process and for `heaptape record`. */
#include "tapename.h"

/* Expand tmpl into out; cap must be above 64. */
size_t ht_tapename(char *out, size_t cap, const char *tmpl, const char *prog,
                   const char *pid, int *had_pid, int *had_prog)
{
  char *p = out, *end = out + cap - 64;
  int hp = 0, he = 0;
  if (!tmpl || !*tmpl) tmpl = HT_TAPENAME_DEFAULT;
  for (; *tmpl && p < end; tmpl++) {
    if (tmpl[0] == '%' && tmpl[1] == 'p') {
      for (const char *q = pid; *q && p < end; ) *p++ = *q++;
      tmpl++;
      hp = 1;
    } else if (tmpl[0] == '%' && tmpl[1] == 'e') {
      for (const char *q = prog; *q && p < end; ) *p++ = *q++;
      tmpl++;
      he = 1;
    } else *p++ = *tmpl;
  }
  *p = 0;
  if (had_pid) *had_pid = hp;
  if (had_prog) *had_prog = he;
  return (size_t)(p - out);
}

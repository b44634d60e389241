/* heaptape -- option values parsed once: sizes with K/M/G suffixes, counts,
** yes/no, seconds. Used inside the recorder too, so nothing allocates. */
#include <stdlib.h>

#include "parse.h"

/* Lower-case ASCII letter c (no locale). */
static char parse_lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c; }

/* Digits at *p into *v, advancing *p; -1 if none or on overflow. */
static int parse_digits(const char **p, uint64_t *v)
{
  const char *s = *p;
  uint64_t x = 0;
  if (*s < '0' || *s > '9') return -1;
  for (; *s >= '0' && *s <= '9'; s++) {
    uint64_t d = (uint64_t)(*s - '0');
    if (x > (UINT64_MAX - d) / 10) return -1;
    x = x * 10 + d;
  }
  *p = s;
  *v = x;
  return 0;
}

/* A byte count with an optional K/M/G[i][B] suffix. */
int ht_parse_size(const char *s, uint64_t *out)
{
  uint64_t v;
  if (!s || parse_digits(&s, &v)) return -1;
  unsigned shift = 0;
  switch (parse_lower(*s)) {
  case 'k': shift = 10; break;
  case 'm': shift = 20; break;
  case 'g': shift = 30; break;
  }
  if (shift) {
    s++;
    if (parse_lower(*s) == 'i') s++;
    if (parse_lower(*s) == 'b') s++;
  }
  if (*s || (shift && v > (UINT64_MAX >> shift))) return -1;
  *out = v << shift;
  return 0;
}

/* A decimal count, digits only. */
int ht_parse_uint(const char *s, uint64_t *out)
{
  uint64_t v;
  if (!s || parse_digits(&s, &v) || *s) return -1;
  *out = v;
  return 0;
}

/* Case-insensitive equality of s with the lower-case word w. */
static int parse_is(const char *s, const char *w)
{
  for (; *s && *w; s++, w++)
    if (parse_lower(*s) != *w) return 0;
  return *s == *w;
}

/* yes/no in the usual spellings. */
int ht_parse_bool(const char *s, int *out)
{
  if (!s) return -1;
  if (parse_is(s, "1") || parse_is(s, "yes") || parse_is(s, "on") || parse_is(s, "true"))
    *out = 1;
  else if (parse_is(s, "0") || parse_is(s, "no") || parse_is(s, "off") || parse_is(s, "false"))
    *out = 0;
  else
    return -1;
  return 0;
}

/* Seconds into nanoseconds (rounded to the nearest). */
int ht_parse_seconds(const char *s, uint64_t *ns)
{
  char *end;
  if (!s) return -1;
  double v = strtod(s, &end);
  if (end == s || *end || !(v >= 0) || v > 1e9) return -1;
  *ns = (uint64_t)(v * 1e9 + 0.5);
  return 0;
}

/* heaptape -- the options table as data, and the one parser of its values:
** shared by the recorder (inside the profiled process) and `heaptape record`. */
#include <string.h>

#include "options.h"
#include "parse.h"

const HtOptDef ht_options[HT_OPTION__COUNT] = {
#define HT_OPT_ROW(field, NAME, flag, type, def, lo, hi, arg, choices, help) \
  { "HEAPTAPE_" #NAME, flag, HT_OPT_##type, def, lo, hi, arg, choices, help, \
    offsetof(HtOptions, field) },
  HT_OPTIONS(HT_OPT_ROW)
#undef HT_OPT_ROW
};

/* Value of the choice named s in "name=value|...": 0, or -1 if none is. */
static int option_choice(const char *choices, const char *s, uint64_t *v)
{
  size_t n = strlen(s);
  for (const char *c = choices; c && *c; ) {
    const char *eq = strchr(c, '='), *bar = strchr(c, '|');
    if (!eq) return -1;
    if ((size_t)(eq - c) == n && !strncmp(c, s, n)) {
      uint64_t x = 0;
      for (const char *p = eq + 1; *p >= '0' && *p <= '9'; p++) x = x * 10 + (uint64_t)(*p - '0');
      *v = x;
      return 0;
    }
    c = bar ? bar + 1 : NULL;
  }
  return -1;
}

/* Parse s as option d's value. */
int ht_option_parse(const HtOptDef *d, const char *s, uint64_t *v)
{
  int b = 0, rc = -1;
  switch (d->type) {
  case HT_OPT_SIZE: rc = ht_parse_size(s, v); break;
  case HT_OPT_UINT: rc = ht_parse_uint(s, v); break;
  case HT_OPT_BOOL: rc = ht_parse_bool(s, &b); *v = (uint64_t)b; break;
  case HT_OPT_CHOICE: return option_choice(d->choices, s, v);
  }
  return rc || *v < d->lo || *v > d->hi ? -1 : 0;
}

/* Store a value into its member of o. */
void ht_option_store(const HtOptDef *d, HtOptions *o, uint64_t v, const char *s)
{
  char *f = (char *)o + d->off;
  switch (d->type) {
  case HT_OPT_STR: {
    size_t n = s ? strlen(s) : 0;
    if (n >= HT_OPT_STRMAX) n = HT_OPT_STRMAX - 1;
    memcpy(f, s ? s : "", n);
    f[n] = 0;
    break;
  }
  case HT_OPT_SIZE: case HT_OPT_UINT: memcpy(f, &v, sizeof(v)); break;
  default: { int i = (int)v; memcpy(f, &i, sizeof(i)); break; }
  }
}

/* Every option at its default. */
void ht_options_defaults(HtOptions *o)
{
  for (int i = 0; i < HT_OPTION__COUNT; i++)
    ht_option_store(&ht_options[i], o, ht_options[i].def, NULL);
}

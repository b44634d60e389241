/* heaptape -- the recorder's options: HEAPTAPE_* read from environ through the
** one table (src/base/options.h), without allocating; bad values warn once. */
#include <string.h>
#include <unistd.h>                    /* environ */

#include "recdef.h"
#include "../format/format.h"

_Static_assert(HT_UNWIND_NONE == 0 && HT_UNWIND_LIBUNWIND == 1 && HT_UNWIND_FP == 2,
               "the unwind choices of src/base/options.h are HT_UNWIND_* values");

/* The defaults until the environment is read (set-up). */
#define OPT_INIT_STR(f, def) .f = "",
#define OPT_INIT_NUM(f, def) .f = def,
#define OPT_INIT_SIZE OPT_INIT_NUM
#define OPT_INIT_UINT OPT_INIT_NUM
#define OPT_INIT_BOOL OPT_INIT_NUM
#define OPT_INIT_CHOICE OPT_INIT_NUM
#define OPT_INIT(field, NAME, flag, type, def, ...) OPT_INIT_##type(field, def)
HtOptions ht_opt = { HT_OPTIONS(OPT_INIT) };

/* getenv that reads environ itself: a program may define its own getenv
** (bash does, answering from tables it has not built before main). */
const char *ht_getenv(const char *name)
{
  size_t n = strlen(name);
  for (char **e = environ; e && *e; e++)
    if (!strncmp(*e, name, n) && (*e)[n] == '=') return *e + n + 1;
  return NULL;
}

/* Read every HEAPTAPE_* variable into ht_opt; warn once and keep defaults. */
void ht_options_load(void)
{
  static uint32_t warned;               /* one warning per option */
  for (int i = 0; i < HT_OPTION__COUNT; i++) {
    const HtOptDef *d = &ht_options[i];
    const char *s = ht_getenv(d->env);
    uint64_t v = d->def;
    if (d->type != HT_OPT_STR && s && *s && ht_option_parse(d, s, &v)) {
      v = d->def;
      if (!(warned & (1u << i))) {
        warned |= 1u << i;
        ht_log("bad value %s=\"%.64s\" ignored (%.200s)", d->env, s, d->help);
      }
    }
    ht_option_store(d, &ht_opt, v, s);
  }
}

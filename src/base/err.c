/* heaptape -- error messages and the internal assert hook.
** The message table is generated from errmsg.h. */
#include <stdio.h>
#include <stdlib.h>
#include "ht_def.h"
#include "../../include/heaptape.h"

/* Every code has a message and the codes are dense from 0 down: a code
** added to heaptape_errors.h without a message here fails the build. */
enum {
#define HTERRDEF(name, msg) ERR_COUNT_##name,
#include "errmsg.h"
#undef HTERRDEF
  ERR_COUNT
};
_Static_assert(ERR_COUNT == 1 - HEAPTAPE_E_NOENT, "errmsg.h misses a code of heaptape_errors.h");

/* A static message for an error code. */
HT_API const char *heaptape_strerror(int code)
{
  switch (code) {
#define HTERRDEF(name, msg) case HEAPTAPE_E_##name: return msg;
#include "errmsg.h"
#undef HTERRDEF
  default: return "unknown error";
  }
}

/* Report a failed assertion and abort (debug builds only). */
void ht_assert_fail(const char *expr, const char *file, int line)
{
  fprintf(stderr, "heaptape: assertion failed: %s (%s:%d)\n", expr, file, line);
  abort();
}

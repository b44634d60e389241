/* heaptape -- error messages and the internal assert hook.
** The message table is generated from errmsg.h. */
#include <stdio.h>
#include <stdlib.h>
#include "ht_def.h"
#include "../../include/heaptape.h"

/* A static message for an error code. */
HT_API const char *heaptape_strerror(int code)
{
  switch (code) {
#define HTERRDEF(name, value, msg) case value: return msg;
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
